"""The registry of input feature sets: each version's width, numba row kernel and torch encoder, and batch encoding.

A net's ``ModelConfig.feature_version`` names its set here; the model, the fast
evaluator's fused kernel, the trainer's config checks and its choice of encoder all
read ``FEATURE_SETS`` instead of branching on version numbers. To add a set, write
one module (``bgnet.features.v2`` is the pattern: a ``WIDTH`` and a plain ``encode_row``
kernel) and register it below: its ``FeatureSet`` and its branch
of ``encode_row``, the numba side of the registry, through which the batch encoders
here and ``bgnet.nets._net_kernels.net_probs`` call the set's kernel.

Numba's on-disk cache of a kernel in another module does not see a set registered or
edited here; ``bgnet.nets.fastnet`` checks its fused kernel against the plain encoder
once per process for that reason.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numba import njit, prange

from bgnet.core.device_kernels import check_kernels
from bgnet.core.errors import BgnetError
from bgnet.features import v1, v2
from bgnet.features.common import SCRATCH_SHAPE

if TYPE_CHECKING:
    import torch

__all__ = ["FEATURE_SETS", "FEATURE_VERSION", "FEATURE_VERSIONS", "EncodeOutputError", "FeatureSet",
           "FeatureVersionError", "encode", "encode_row", "feature_set", "num_features"]


class FeatureVersionError(BgnetError):
    """A feature version this bgnet does not compute."""


class EncodeOutputError(BgnetError):
    """An ``out`` array the encoder cannot fill: not float32, rows not the boards', too narrow, or wider and not
    C-contiguous."""


@dataclass(frozen=True)
class FeatureSet:
    """One input encoding: how a board (seen from its side on roll) becomes the ``width`` numbers a net reads."""

    version: int
    """The number checkpoints record (``ModelConfig.feature_version``)."""
    width: int
    """Inputs per board."""
    encode_row: Any
    """Its numba row kernel ``(board (26,) int8, row (width,) float32, scratch SCRATCH_SHAPE int64) -> None``."""
    torch_encoder: str | None = None
    """``"module:function"`` of the torch twin (int8 boards tensor -> float32 features), None when numba only."""
    fused_encoder: str | None = None
    """``"module:function"`` of the same encoder as one Triton kernel (the same bits; a CUDA GPU), None when none."""

    @property
    def has_torch_encoder(self) -> bool:
        """Whether boards can be encoded with torch ops on their own device (a GPU's self-play)."""
        return self.torch_encoder is not None

    def encode(self, boards: np.ndarray, threads: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        """Features (N, width) float32 for boards (N, 26) int8, each seen from its side on roll.

        ``threads`` > 1 spreads large batches over numba threads (for many-core GPU hosts). ``out``, when given,
        receives them and is returned: (N, width) float32, or a C-contiguous (N, more) array whose first ``width``
        columns they fill, the rest left as they are (a zero-padded input of a net, written without a copy).
        """
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if boards.ndim == 1:
            boards = boards.reshape(1, -1)
        if out is None:
            out = np.empty((boards.shape[0], self.width), np.float32)
        elif (out.dtype != np.float32 or out.ndim != 2 or out.shape[0] != boards.shape[0] or out.shape[1] < self.width
              or (out.shape[1] > self.width and not out.flags.c_contiguous)):
            raise EncodeOutputError(f"out must be ({boards.shape[0]}, {self.width}) float32, or C-contiguous and "
                                    f"wider, not {out.shape} {out.dtype}")
        if threads > 1 and boards.shape[0] >= 4096:
            import numba

            # numba.config sets NUMBA_NUM_THREADS via globals(), which mypy cannot see
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
            _encode_rows_parallel(boards, self.version, out)
        else:
            _encode_rows(boards, self.version, out)
        return out

    def torch_encode_fn(self, kernels: str = "torch") -> Callable[["torch.Tensor"], "torch.Tensor"]:
        """The torch twin (imports torch), or with ``kernels`` "fused" its Triton kernel where this set has one
        (``bgnet.core.device_kernels.DEVICE_KERNELS``); FeatureVersionError when this set has no torch twin."""
        if self.torch_encoder is None:
            raise FeatureVersionError(f"feature version {self.version} has no torch encoder: encode it with numba")
        path = self.torch_encoder
        if check_kernels(kernels) == "fused" and self.fused_encoder is not None:
            path = self.fused_encoder
        module, name = path.split(":")
        fn: Callable[[torch.Tensor], torch.Tensor] = getattr(importlib.import_module(module), name)
        return fn


FEATURE_SETS: dict[int, FeatureSet] = {
    fs.version: fs for fs in (
        FeatureSet(version=1, width=v1.WIDTH, encode_row=v1.encode_row,
                   torch_encoder="bgnet.features.encoding_torch:encode_torch"),
        FeatureSet(version=2, width=v2.WIDTH, encode_row=v2.encode_row,
                   torch_encoder="bgnet.features.v2_torch:encode_v2_torch",
                   fused_encoder="bgnet.features.v2_fused:encode_v2_fused"),
    )
}
"""Every feature set this bgnet computes, by version: the one place a new set is registered."""
FEATURE_VERSIONS = tuple(sorted(FEATURE_SETS))
"""The versions of ``FEATURE_SETS``, oldest first."""
FEATURE_VERSION = FEATURE_VERSIONS[-1]
"""The newest feature version (the one new nets should use)."""


@njit(cache=True, nogil=True, inline="always")
def encode_row(version, b, out, scratch):
    """The row kernel of feature set ``version`` on board ``b`` into ``out``: ``FEATURE_SETS`` for numba, which calls
    a kernel only by name (a new set adds its branch; tests check every registered version has one)."""
    if version == 1:
        v1.encode_row(b, out, scratch)
    elif version == 2:
        v2.encode_row(b, out, scratch)


_CHUNK = 256
"""Boards per task of the threaded encoder."""


@njit(cache=True, nogil=True)
def _encode_rows(boards, version, out):
    """Set ``version``'s rows of boards (N, 26) into ``out`` (N, width), one scratch array for all."""
    scratch = np.empty(SCRATCH_SHAPE, np.int64)
    for i in range(boards.shape[0]):
        encode_row(version, boards[i], out[i], scratch)


@njit(cache=True, nogil=True, parallel=True)
def _encode_rows_parallel(boards, version, out):
    """``_encode_rows`` over numba's threads, ``_CHUNK`` boards and a scratch array at a time."""
    n = boards.shape[0]
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        scratch = np.empty(SCRATCH_SHAPE, np.int64)
        for i in range(c * _CHUNK, min(c * _CHUNK + _CHUNK, n)):
            encode_row(version, boards[i], out[i], scratch)


def feature_set(version: int) -> FeatureSet:
    """The registered set of ``version``; FeatureVersionError for a version this bgnet does not compute."""
    fs = FEATURE_SETS.get(version)
    if fs is None:
        raise FeatureVersionError(f"feature version {version} is not one of {FEATURE_VERSIONS}")
    return fs


def num_features(version: int) -> int:
    """Input width of feature ``version``; FeatureVersionError for a version this bgnet does not compute."""
    return feature_set(version).width


def encode(boards: np.ndarray, threads: int = 1, version: int = 1, out: np.ndarray | None = None) -> np.ndarray:
    """Features (N, num_features(version)) float32 for boards (N, 26) int8, each seen from its side on roll.

    ``threads`` > 1 spreads large batches over numba threads (for many-core GPU hosts); ``out`` receives them
    when given (``FeatureSet.encode``).
    """
    return feature_set(version).encode(boards, threads, out)
