"""What the fused Triton kernels share (``bgnet.features.v2_fused``, ``bgnet.nets.bearoff_fused``): the checks before
they run (Triton is installed, the boards are on a device it runs on, and they are boards) and, inside them, a
program's boards as one tile."""

from __future__ import annotations

from typing import TypeVar

import torch

from bgnet.core.errors import BgnetError

try:
    import triton
    import triton.language as tl
except ImportError:  # torch's CPU builds come without Triton: the kernels' callers then refuse in one sentence
    triton = None

__all__ = ["boards_for_kernel"] + (["board_tile", "tile_column"] if triton is not None else [])

K = TypeVar("K")


def boards_for_kernel(boards: torch.Tensor, kernel: K | None, error: type[BgnetError], what: str,
                      instead: str) -> tuple[K, torch.Tensor]:
    """``kernel`` (None when Triton is not installed) and ``boards`` as contiguous int8 (N, 26) for it, or ``error``
    in one sentence saying why ``what`` cannot run and that ``instead`` can. A kernel decorated while Triton's
    interpreter was on (its type says so) runs on CPU tensors too."""
    if kernel is None:
        raise error(f"{what} needs Triton, which torch's CUDA builds install: use {instead} here")
    if boards.device.type != "cuda" and type(kernel).__name__ != "InterpretedFunction":
        raise error(f"{what} runs on a CUDA GPU (or in Triton's interpreter, TRITON_INTERPRET=1 before Triton is "
                    f"imported), not on {boards.device.type}: use {instead} there")
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise error(f"boards must be (N, 26), not {tuple(boards.shape)}")
    return kernel, boards.to(torch.int8).contiguous()


if triton is not None:
    @triton.jit
    def board_tile(boards_ptr, n_rows, BLOCK: tl.constexpr):
        """Program ``program_id(0)``'s ``BLOCK`` boards of the int8 (n_rows, 26) ``boards_ptr``: their row numbers
        (BLOCK,) int64, which rows exist, the point index (1, 32), each row's address, and the boards as a
        (BLOCK, 32) int32 tile, one column a point (0 past point 25 and in rows past the end)."""
        rows = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        ok = rows < n_rows
        p = tl.arange(0, 32)[None, :]
        board = boards_ptr + rows[:, None] * 26
        tile = tl.load(board + p, mask=ok[:, None] & (p <= 25), other=0).to(tl.int32)
        return rows, ok, p, board, tile

    @triton.jit
    def tile_column(x, p, k: tl.constexpr):
        """(B,) column ``k`` of the (B, 32) tile ``x`` (``p`` its point index)."""
        return tl.sum(tl.where(p == k, x, 0), axis=1)
