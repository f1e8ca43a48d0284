"""A torch-free forward pass of a checkpoint's net, so that ``bgnet hint`` starts fast.

Importing torch costs over a second on a small CPU, more than the whole 0-ply
hint. The first time a checkpoint is used it is read the safe way
(``torch.load(..., weights_only=True)`` through ``bgnet.model``); its weights are
then cached as a plain ``.npz`` named by the checkpoint file's SHA-256 under the
user's cache folder (``$BGNET_CACHE``, else ``$XDG_CACHE_HOME/bgnet``, else
``~/.cache/bgnet``). Later runs read that file with numpy alone
(``allow_pickle=False``). A damaged cache file is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from bgnet.encoding import FEATURE_VERSIONS, encode, num_features

ProbsFn = Callable[[np.ndarray], np.ndarray]


def cache_dir() -> Path:
    """Folder for cached weights."""
    if os.environ.get("BGNET_CACHE"):
        return Path(os.environ["BGNET_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bgnet"


class NumpyNet:
    """The evaluator's forward pass in numpy: hidden layers, then five consistent sigmoid outputs."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, feature_version: int = 1) -> None:
        if activation not in ("relu", "sigmoid", "tanh"):
            raise ValueError(f"activation {activation!r} is not relu, sigmoid or tanh")
        self.layers = [(np.ascontiguousarray(w.T, np.float32), b.astype(np.float32)) for w, b in layers]
        self.activation = activation
        self.feature_version = feature_version

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(N, features) float32 -> (N, 5) probabilities for the side on roll."""
        h = x
        for w, b in self.layers[:-1]:
            h = h @ w + b
            if self.activation == "relu":
                np.maximum(h, 0.0, out=h)
            elif self.activation == "tanh":
                np.tanh(h, out=h)
            else:
                h = _sigmoid(h)
        w, b = self.layers[-1]
        s = _sigmoid(h @ w + b)
        out = np.empty_like(s)
        out[:, 0] = s[:, 0]
        out[:, 1] = s[:, 0] * s[:, 1]
        out[:, 2] = out[:, 1] * s[:, 2]
        out[:, 3] = (1.0 - s[:, 0]) * s[:, 3]
        out[:, 4] = out[:, 3] * s[:, 4]
        return out

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        if len(boards) == 0:
            return np.zeros((0, 5), np.float32)
        return self(encode(boards, version=self.feature_version))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -60.0, 60.0)))).astype(np.float32)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _from_cache(file: Path) -> NumpyNet | None:
    try:
        with np.load(file, allow_pickle=False) as data:
            version = int(data["feature_version"])
            if version not in FEATURE_VERSIONS or int(data["num_features"]) != num_features(version):
                return None
            n = int(data["n_layers"])
            layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
            return NumpyNet(layers, str(data["activation"]), version)
    except (OSError, KeyError, ValueError):
        return None


def _write_cache(file: Path, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, feature_version: int = 1) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=file.name + ".", suffix=".tmp", dir=file.parent)
        with os.fdopen(fd, "wb") as fh:
            arrays = {f"w{i}": w for i, (w, _) in enumerate(layers)} | {f"b{i}": b for i, (_, b) in enumerate(layers)}
            np.savez(fh, n_layers=len(layers), activation=np.array(activation), feature_version=feature_version,
                     num_features=num_features(feature_version), **arrays)  # type: ignore[arg-type]  # numpy>=2.1 stub matches **arrays against allow_pickle: bool
        os.replace(tmp, file)
    except OSError:
        pass  # an unwritable cache only costs speed


def load_numpy_net(path: str | os.PathLike[str]) -> NumpyNet:
    """The net of a checkpoint, from the weight cache when it holds this exact file, else through torch."""
    path = Path(path)
    if not path.is_file():
        from bgnet.model import CheckpointError

        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    file = cache_dir() / f"{_digest(path)}.npz"
    net = _from_cache(file) if file.is_file() else None
    if net is not None:
        return net
    from bgnet.model import load_net

    torch_net = load_net(path)
    linears = [m for m in torch_net.body if hasattr(m, "weight")] + [torch_net.head]
    layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())  # type: ignore[operator]  # torch types Module attributes as Tensor | Module
              for m in linears]
    _write_cache(file, layers, torch_net.config.activation, torch_net.config.feature_version)
    return NumpyNet(layers, torch_net.config.activation, torch_net.config.feature_version)
