"""The bear-off database's device lookups in one Triton kernel: ``DeviceBearoff.probs``, bit for bit, in one pass.

``DeviceBearoff.probs`` values every row with whole-batch torch ops (so that nothing waits for the host): each
row gathers three 32-column float64 distributions and sums them, though few rows of a self-play step are pure
bear-offs, which made it the largest share of a device step's bytes once the features were fused
(docs/BENCHMARKS.md, "Feature set 2 in one Triton kernel"). Here a program reads 32 boards, classifies and ranks
them, and reads the tables for its pure bear-offs only: a row that is not one costs its 26 bytes in and 41 out.
The race sums are the numba kernel's float64 products and additions in its order, with fused multiply-adds
turned off (``enable_fp_fusion=False``), so the chances are the same bits (tested on CUDA, and on the CPU in
Triton's interpreter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from bgnet.core.errors import BgnetError
from bgnet.core.fused_boards import boards_for_kernel
from bgnet.nets.bearoff_tables import FULL_START, MAX_ROLLS, N_TWO_SIDED, TWO_SIDED_CHECKERS

if TYPE_CHECKING:  # DeviceBearoff(kernels="fused") imports this module
    from bgnet.nets.bearoff_torch import DeviceBearoff

__all__ = ["FusedBearoffError", "bearoff_probs_fused"]

try:
    import triton
    import triton.language as tl
except ImportError:  # torch's CPU builds come without Triton: bearoff_probs_fused then raises FusedBearoffError
    triton = None

BLOCK = 32
"""Boards a program looks up."""
COMPILE_OPTIONS: dict[str, bool] = {"enable_fp_fusion": False}
"""The kernel's compiler options: no fused multiply-adds, which would round the race sums' terms differently."""


class FusedBearoffError(BgnetError):
    """The fused lookup cannot run here: Triton is not installed, or the boards are on a CPU outside its
    interpreter."""


if triton is not None:
    from bgnet.core.fused_boards import board_tile, tile_column

    @triton.jit
    def _rank(c, p, binom_ptr):
        """``bearoff_tables.rank`` of each row of the home counts ``c`` (B, 32), column q - 1 = point q (at most 15
        checkers; other rows give any index): positions with fewer checkers first, then more on point 1, ..."""
        s = tl.sum(tl.where(p < 6, c, 0), axis=1)
        r = tl.load(binom_ptr + (tl.minimum(tl.maximum(s, 0), 26) + 5) * 32 + 6)
        for q in tl.static_range(5):
            s -= tile_column(c, p, q)
            m = s - 1  # the checkers beyond point q + 1, less one
            k = 5 - q
            r += tl.where(m >= 0, tl.load(binom_ptr + tl.minimum(tl.maximum(m + k, 0), 31) * 32 + k), 0)
        return r

    @triton.jit
    def _lookup_kernel(boards_ptr, mask_ptr, probs_ptr, binom_ptr, rolls_ptr, done_ptr, first_before_ptr,
                       first_by_ptr, win_ptr, n_rows, FULL: tl.constexpr, TWO: tl.constexpr,
                       TWO_CHECKERS: tl.constexpr, ROLLS: tl.constexpr, BLOCK: tl.constexpr):
        rows, ok, p, board, b = board_tile(boards_ptr, n_rows, BLOCK)
        home = (p >= 1) & (p <= 6)
        theirs_home = (p >= 19) & (p <= 24)
        outside = (p == 0) | (p == 25) | ((p >= 7) & (p <= 18))  # the bars and points 7..18 must be empty
        wrong = (outside & (b != 0)) | (home & (b < 0)) | (theirs_home & (b > 0))
        pure = (tl.sum(tl.where(wrong, 1, 0), axis=1) == 0) & (tl.sum(tl.where(b != 0, 1, 0), axis=1) > 0)
        mine = tl.where(p < 6, tl.load(board + p + 1, mask=ok[:, None] & (p < 6), other=0).to(tl.int32), 0)
        theirs = tl.where(p < 6, -tl.load(board + 24 - p, mask=ok[:, None] & (p < 6), other=0).to(tl.int32), 0)
        n_mine = tl.sum(mine, axis=1)
        n_theirs = tl.sum(theirs, axis=1)
        covered = pure & (n_mine <= 15) & (n_theirs <= 15) & ok
        two_sided = covered & (n_mine <= TWO_CHECKERS) & (n_theirs <= TWO_CHECKERS)
        race = covered & ~two_sided
        x = tl.where(covered, _rank(mine, p, binom_ptr), 0)
        y = tl.where(covered, _rank(theirs, p, binom_ptr), 0)
        two = tl.load(win_ptr + tl.minimum(x, TWO - 1) * TWO + tl.minimum(y, TWO - 1), mask=two_sided, other=0.0)
        fx = tl.maximum(x - FULL, 0)
        fy = tl.maximum(y - FULL, 0)
        win_sum = tl.zeros([BLOCK], tl.float64)
        gammon_sum = tl.zeros([BLOCK], tl.float64)
        lost_sum = tl.zeros([BLOCK], tl.float64)
        for k in range(ROLLS):  # the numba kernel's order: each term a product, then added
            dx = tl.load(rolls_ptr + x * ROLLS + k, mask=race, other=0.0)
            dy = tl.load(rolls_ptr + y * ROLLS + k, mask=race, other=0.0)
            win_sum = win_sum + dx * tl.load(done_ptr + y * ROLLS + k, mask=race, other=0.0)
            gammon_sum = gammon_sum + dx * tl.load(first_before_ptr + fy * ROLLS + k, mask=race, other=0.0)
            lost_sum = lost_sum + dy * tl.load(first_by_ptr + fx * ROLLS + k, mask=race, other=0.0)
        win = tl.minimum(tl.maximum(win_sum, 0.0), 1.0)
        gammon = tl.where(y >= FULL, tl.minimum(tl.maximum(gammon_sum, 0.0), win), 0.0)
        lost = tl.where(x >= FULL, tl.minimum(tl.maximum(lost_sum, 0.0), 1.0 - win), 0.0)
        zero = tl.zeros([BLOCK], tl.float64)
        out = probs_ptr + rows * 5
        tl.store(out, tl.where(two_sided, two, tl.where(race, win, zero)), mask=ok)
        tl.store(out + 1, tl.where(race, gammon, zero), mask=ok)
        tl.store(out + 2, zero, mask=ok)
        tl.store(out + 3, tl.where(race, lost, zero), mask=ok)
        tl.store(out + 4, zero, mask=ok)
        tl.store(mask_ptr + rows, covered.to(tl.int8), mask=ok)


def bearoff_probs_fused(tables: DeviceBearoff, boards: torch.Tensor,
                        block: int = BLOCK) -> tuple[torch.Tensor, torch.Tensor]:
    """``tables.probs(boards)`` of the torch ops, from one kernel: the mask (M,) of pure bear-offs and their exact
    chances (M, 5) float64 (zeros elsewhere), the same bits; programs of ``block`` boards (a power of two)."""
    kernel, boards = boards_for_kernel(boards, _lookup_kernel if triton is not None else None, FusedBearoffError,
                                       "the fused bear-off lookup", "DeviceBearoff's torch lookups")
    if tables.rolls.shape[1] != MAX_ROLLS or tables.binom.shape != (32, 32):
        raise FusedBearoffError(f"the bear-off tables must have {MAX_ROLLS} rolls a row, not {tables.rolls.shape[1]}")
    n = len(boards)
    mask = torch.empty(n, dtype=torch.int8, device=boards.device)
    probs = torch.empty((n, 5), dtype=torch.float64, device=boards.device)
    if n:
        kernel[(triton.cdiv(n, block),)](
            boards, mask, probs, tables.binom, tables.rolls, tables.not_done_before, tables.not_first_before,
            tables.not_first_by, tables.win, n, FULL=FULL_START, TWO=N_TWO_SIDED, TWO_CHECKERS=TWO_SIDED_CHECKERS,
            ROLLS=MAX_ROLLS, BLOCK=block, **COMPILE_OPTIONS)
    return mask.bool(), probs
