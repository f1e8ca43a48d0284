"""The torch net as an ``Evaluator`` during training: one forward pass, no gradients, features where they are cheapest."""

from __future__ import annotations

import numpy as np
import torch

from bgnet.encoding import encode
from bgnet.model import BgNet


class TorchEvaluator:
    """``probs_of_boards`` of a training net (``bgnet.protocols.Evaluator``); also callable as a plain ProbsFn.

    Features are computed on the device with ``on_device`` (``bgnet.encoding_torch``,
    version-1 features), else on the host with ``threads`` numba threads.
    """

    def __init__(self, net: BgNet, device: torch.device, threads: int = 1, on_device: bool = False) -> None:
        self.net = net
        self.device = device
        self.threads = threads
        self.on_device = on_device

    @torch.inference_mode()
    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        if self.on_device:
            from bgnet.encoding_torch import encode_torch

            x = encode_torch(torch.from_numpy(np.ascontiguousarray(boards, np.int8)).to(self.device, non_blocking=True))
        else:
            x = torch.from_numpy(encode(boards, self.threads, self.net.config.feature_version)).to(
                self.device, non_blocking=True)
        out: np.ndarray = self.net(x).float().cpu().numpy()
        return out

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.probs_of_boards(boards)


def make_probs_fn(net: BgNet, device: torch.device, threads: int = 1, on_device: bool = False) -> TorchEvaluator:
    """Boards -> probabilities with one forward pass (no gradients); features on the device when ``on_device``."""
    return TorchEvaluator(net, device, threads, on_device)
