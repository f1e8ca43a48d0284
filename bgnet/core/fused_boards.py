"""What the fused Triton kernels check before they run (``bgnet.features.v2_fused``, ``bgnet.nets.bearoff_fused``):
Triton is installed, the boards are on a device it runs on, and they are boards."""

from __future__ import annotations

from typing import TypeVar

import torch

from bgnet.core.errors import BgnetError

__all__ = ["boards_for_kernel"]

K = TypeVar("K")


def boards_for_kernel(boards: torch.Tensor, kernel: K | None, error: type[BgnetError], what: str,
                      instead: str) -> tuple[K, torch.Tensor]:
    """``kernel`` (None when Triton is not installed) and ``boards`` as contiguous int8 (N, 26) for it, or ``error``
    in one sentence saying why ``what`` cannot run and that ``instead`` can."""
    if kernel is None:
        raise error(f"{what} needs Triton, which torch's CUDA builds install: use {instead} here")
    if boards.device.type != "cuda" and type(kernel).__name__ != "InterpretedFunction":
        raise error(f"{what} runs on a CUDA GPU (or in Triton's interpreter, TRITON_INTERPRET=1 before Triton is "
                    f"imported), not on {boards.device.type}: use {instead} there")
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise error(f"boards must be (N, 26), not {tuple(boards.shape)}")
    return kernel, boards.to(torch.int8).contiguous()
