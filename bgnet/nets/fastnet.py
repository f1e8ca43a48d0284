"""A torch-free forward pass of a checkpoint's net, so that ``bgnet hint`` starts fast.

Importing torch costs over a second on a small CPU, more than the whole 0-ply
hint. The first time a checkpoint is used it is read the safe way
(``torch.load(..., weights_only=True)`` through ``bgnet.nets.model``); its weights are
then cached as a plain ``.npz`` named by the checkpoint file's SHA-256 under the
user's cache folder (``bgnet.core.resources.cache_dir``: ``$BGNET_CACHE``, else
``$XDG_CACHE_HOME/bgnet``, else ``~/.cache/bgnet``). Later runs read that file with numpy alone
(``allow_pickle=False``). A damaged cache file is ignored and rewritten. The released net's weights also
ship in that form (``checkpoints/bgnet.npz``, ``export_weights``), stamped with the checkpoint's digest, so
that even the first run after an install reads them without importing torch.

Boards are valued by a fused numba kernel (``bgnet.nets._net_kernels.net_probs``: the
features folded into the first layer, zero inputs and idle ReLU units skipped),
one board at a time, so a board's chances do not depend on its batch.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Mapping, Protocol

import numpy as np

from bgnet.core.atomic import atomic_write
from bgnet.core.errors import BgnetError
from bgnet.core.resources import cache_dir, shipped_weights
from bgnet.features.kinds import KINDS, rows_by_scorer
from bgnet.features.registry import FEATURE_SETS, encode, num_features
from bgnet.nets import _net_kernels

__all__ = ["CACHE_FORMAT", "IDENTITY", "KERNEL_LAYERS", "KindNet", "NumpyNet", "NumpyNetError", "NumpyNetSet",
           "chances_of_outputs", "export_weights", "file_digest", "load_evaluator", "load_numpy_net"]


class NumpyNetError(BgnetError):
    """A torch-free net that cannot be built as asked (an unknown activation, nets by kind without a contact net)."""


IDENTITY = np.zeros((0, 0), np.float32)
"""The weights of an identity layer (bias ``np.zeros(0)``): a ReLU net shallower than the release is given these
after its last hidden layer, so that the fused kernel compiled for the release's depth serves it, at no cost."""
KERNEL_LAYERS = 3
"""Layers of the released net (two hidden, one out). ``NumpyNet`` hands the fused kernel a shallower ReLU net with
identity layers (``IDENTITY``, which the kernel skips) before its output layer: the same function (its last hidden
units are ReLU outputs, never negative; a net without a hidden layer is left as it is), and numba compiles one
kernel for every such net (the pruning net, a quick training run's one-hidden-layer net, the release) instead of
one per depth."""


class NumpyNet:
    """The evaluator's forward pass in numpy: hidden layers, then five consistent sigmoid outputs."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, feature_version: int = 1) -> None:
        if activation not in ("relu", "sigmoid", "tanh"):
            raise NumpyNetError(f"activation {activation!r} is not relu, sigmoid or tanh")
        if any(w.shape[0] == 0 for w, _b in layers) and activation != "relu":
            raise NumpyNetError("an identity layer (IDENTITY) is the same function only after a ReLU")
        self.layers = [(np.ascontiguousarray(w.T, np.float32), b.astype(np.float32)) for w, b in layers]
        self.activation = activation
        self.feature_version = feature_version
        kernel_layers = self.layers
        if activation == "relu" and 2 <= len(kernel_layers) < KERNEL_LAYERS:  # after a hidden layer: release depth
            identity = (IDENTITY, np.zeros(0, np.float32))
            kernel_layers = kernel_layers[:-1] + [identity] * (KERNEL_LAYERS - len(kernel_layers)) + kernel_layers[-1:]
        self._weights = tuple(w for w, _b in kernel_layers)  # tuples: what the numba kernel takes
        self._biases = tuple(b for _w, b in kernel_layers)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(N, features) float32 -> (N, 5) probabilities for the side on roll."""
        h = x
        for w, b in self.layers[:-1]:
            if w.shape[0] == 0:  # IDENTITY: the ReLU'd units pass on
                continue
            h = h @ w + b
            if self.activation == "relu":
                np.maximum(h, 0.0, out=h)
            elif self.activation == "tanh":
                np.tanh(h, out=h)
            else:
                h = _sigmoid(h)
        w, b = self.layers[-1]
        return chances_of_outputs(_sigmoid(h @ w + b))

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll (the fused kernel)."""
        arr = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
        if len(arr) == 0:
            return np.zeros((0, 5), np.float32)
        return self._fused_probs(arr)

    def _fused_probs(self, boards: np.ndarray) -> np.ndarray:
        """The chances of contiguous int8 boards (N, 26) through the fused kernel, unchecked."""
        out = np.empty((len(boards), 5), np.float32)
        _net_kernels.net_probs(boards, self.feature_version, self._weights, self._biases,
                               _net_kernels.ACTS[self.activation], out)
        return out

    def dense_probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """The same chances through numpy's dense products on the encoded boards (the fused kernel's reference)."""
        if len(boards) == 0:
            return np.zeros((0, 5), np.float32)
        return self(encode(boards, version=self.feature_version))


def chances_of_outputs(s: np.ndarray) -> np.ndarray:
    """The five outputs after their sigmoids (N, 5) -> the five chances, each conditional output times the ones it
    refines (the numpy twin of ``BgNet._chances``; the fused kernel writes the same products)."""
    out = np.empty_like(s)
    out[:, 0] = s[:, 0]
    out[:, 1] = s[:, 0] * s[:, 1]
    out[:, 2] = out[:, 1] * s[:, 2]
    out[:, 3] = (1.0 - s[:, 0]) * s[:, 3]
    out[:, 4] = out[:, 3] * s[:, 4]
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -60.0, 60.0)))).astype(np.float32)


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file (a checkpoint), hex; read once per process while its size and time stay the same (a
    command loads the release's weights and its pruning net, both stamped with this digest)."""
    st = os.stat(path)
    return _digest_of(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _digest_of(path: str, _size: int, _mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


CACHE_FORMAT = 2
"""Version of the weight cache's layout (2: nets by kind); other files are ignored and rewritten."""

Layers = list[tuple[np.ndarray, np.ndarray]]


class KindNet(Protocol):
    """What ``NumpyNetSet`` holds for a kind: a net of boards (a ``NumpyNet``, or its bfloat16 twin
    ``bgnet.nets.bf16net.Bf16Net``) and the feature set it reads."""

    feature_version: int

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        ...


class NumpyNetSet:
    """Nets by kind of position (``bgnet.features.kinds.KINDS``) without torch: each board scored by the net of its
    kind.

    The torch-free twin of ``bgnet.nets.model.NetSet`` (without its bear-off step: the
    agents put the database in front of every evaluator). A kind without a net of
    its own is scored by the contact net.
    """

    def __init__(self, nets: Mapping[str, KindNet]) -> None:
        if "contact" not in nets or set(nets) - set(KINDS):
            raise NumpyNetError(f"a NumpyNetSet needs a contact net and only kinds from {KINDS} (got {sorted(nets)})")
        self.nets = dict(nets)
        self.by_code = [self.nets.get(k, self.nets["contact"]) for k in KINDS]
        self.feature_version = self.nets["contact"].feature_version

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each from the net of its kind."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
        out = np.zeros((len(boards), 5), np.float32)
        for net, rows in rows_by_scorer(boards, self.by_code):
            out[rows] = net.probs_of_boards(boards[rows])
        return out

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        """The same as ``probs_of_boards``."""
        return self.probs_of_boards(boards)


def _from_cache(file: Path, digest: str | None = None) -> dict[str, NumpyNet] | None:
    """The nets in a weight file, or None when it is damaged, of another format, or (given ``digest``) made from
    another checkpoint file."""
    try:
        with np.load(file, allow_pickle=False) as data:
            if int(data["format"]) != CACHE_FORMAT:
                return None
            if digest is not None and ("checkpoint_sha256" not in data or str(data["checkpoint_sha256"]) != digest):
                return None
            nets = {}
            for kind in [str(k) for k in data["kinds"]]:
                version = int(data[f"{kind}_feature_version"])
                if version not in FEATURE_SETS or int(data[f"{kind}_num_features"]) != num_features(version):
                    return None
                n = int(data[f"{kind}_n_layers"])
                layers = [(data[f"{kind}_w{i}"], data[f"{kind}_b{i}"]) for i in range(n)]
                nets[kind] = NumpyNet(layers, str(data[f"{kind}_activation"]), version)
            return nets if "contact" in nets else None
    except (OSError, KeyError, ValueError):
        return None


def _write_cache(file: Path, nets: dict[str, tuple[Layers, str, int]], digest: str | None = None) -> None:
    try:
        arrays: dict[str, np.ndarray] = {"format": np.array(CACHE_FORMAT), "kinds": np.array(list(nets))}
        if digest is not None:
            arrays["checkpoint_sha256"] = np.array(digest)
        for kind, (layers, activation, version) in nets.items():
            arrays |= {f"{kind}_w{i}": w for i, (w, _) in enumerate(layers)}
            arrays |= {f"{kind}_b{i}": b for i, (_, b) in enumerate(layers)}
            arrays |= {f"{kind}_n_layers": np.array(len(layers)), f"{kind}_activation": np.array(activation),
                       f"{kind}_feature_version": np.array(version), f"{kind}_num_features": np.array(num_features(version))}
        with atomic_write(file, parents=True) as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy>=2.1 stub matches **arrays against allow_pickle: bool
    except OSError:
        pass  # an unwritable cache only costs speed


def _torch_layers(path: Path) -> dict[str, tuple[Layers, str, int]]:
    """Each net of a checkpoint (one, or several by kind) as numpy layers, read the safe way through torch."""
    from bgnet.nets.model import load_netset

    out = {}
    for kind, torch_net in load_netset(path).nets.items():
        out[kind] = (torch_net.numpy_layers(), torch_net.config.activation, torch_net.config.feature_version)
    return out


def _numpy_nets(path: str | os.PathLike[str]) -> dict[str, NumpyNet]:
    """The nets of a checkpoint by kind, from the weight cache when it holds this exact file, else through torch."""
    path = Path(path)
    if not path.is_file():
        from bgnet.nets.model import CheckpointError

        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    digest = file_digest(path)
    file = cache_dir() / f"{digest}.npz"
    nets = _from_cache(file) if file.is_file() else None
    if nets is not None:
        return nets
    for shipped in shipped_weights():  # the released net's weights ship as numpy too: no torch on a first run
        if shipped.is_file():
            nets = _from_cache(shipped, digest)
            if nets is not None:
                return nets
    layers = _torch_layers(path)
    _write_cache(file, layers)
    return {kind: NumpyNet(ls, act, version) for kind, (ls, act, version) in layers.items()}


def export_weights(checkpoint: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write a checkpoint's weights as the numpy file that ships beside a release (``checkpoints/bgnet.npz``),
    stamped with the checkpoint's SHA-256 so that it is used for that exact file only. Run it for each release."""
    path, target = Path(checkpoint), Path(out)
    digest = file_digest(path)
    _write_cache(target, _torch_layers(path), digest)
    if _from_cache(target, digest) is None:
        raise NumpyNetError(f"could not write the weights of {str(path)!r} to {str(target)!r}")
    return target


def load_numpy_net(path: str | os.PathLike[str]) -> NumpyNet:
    """The (contact) net of a checkpoint, from the weight cache when it holds this exact file, else through torch."""
    return _numpy_nets(path)["contact"]


def load_evaluator(path: str | os.PathLike[str]) -> NumpyNet | NumpyNetSet:
    """A checkpoint's boards -> probabilities evaluator: its net, or its nets by kind when it has several."""
    nets = _numpy_nets(path)
    return nets["contact"] if len(nets) == 1 else NumpyNetSet(nets)
