"""The bear-off database's lookups with torch ops on any device: the twin of ``BearoffDatabase.lookup``.

``DeviceBearoff(device)`` copies the one-sided and two-sided tables of ``bgnet.nets.bearoff``
to the device once; ``probs(boards)`` then classifies boards, ranks both sides' home points
with the binomial table (``bearoff_tables.rank``) and reads their exact chances, all as
whole-batch ops with fixed shapes (every row is computed, rows that are not pure bear-offs
are zeroed), so a GPU self-play step never waits for the host. The race sums are the numba
kernel's float64 operations in its order (running sums made on the host once, then one product
and one addition per column), so the values are equal bit for bit on every device; a reduction
in another order differs in the last float64 bit, and sometimes in float32 after rounding.
With ``kernels="fused"`` the lookups come from one Triton kernel instead (``bgnet.nets.bearoff_fused``, the same
bits).
"""

from __future__ import annotations

import numpy as np
import torch

from bgnet.core.device_kernels import check_kernels
from bgnet.nets.bearoff import BearoffDatabase, database
from bgnet.nets.bearoff_tables import BINOM, FULL_START, N_TWO_SIDED, TWO_SIDED_CHECKERS

__all__ = ["DeviceBearoff", "pure_bearoffs_torch"]

def _home_counts(boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Checkers (M, 6) int64 of the side on roll on its points 1..6 and of the opponent on its own 1..6."""
    b = boards.to(torch.int64)
    return b[:, 1:7], -b[:, 19:25].flip(1)


def pure_bearoffs_torch(boards: torch.Tensor) -> torch.Tensor:
    """Mask (M,) of pure bear-offs (``bgnet.nets.bearoff.is_bearoff``): every checker in play home, none on a bar,
    the board not empty."""
    b = boards
    return ((b[:, 0] == 0) & (b[:, 25] == 0) & (b[:, 7:19] == 0).all(1) & (b[:, 1:7] >= 0).all(1)
            & (b[:, 19:25] <= 0).all(1) & (b != 0).any(1))


def _covered(boards: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(mask (M,) of the boards the database answers: pure bear-offs of at most 15 checkers a side; both sides' home
    counts (M, 6) and checkers (M,), as ``_home_counts`` and their sums)."""
    mine, theirs = _home_counts(boards)
    n_mine, n_theirs = mine.sum(1), theirs.sum(1)
    return pure_bearoffs_torch(boards) & (n_mine <= 15) & (n_theirs <= 15), mine, theirs, n_mine, n_theirs


def _beyond(counts: torch.Tensor) -> torch.Tensor:
    """(M, 5): the checkers beyond each of the points 1..5 of ``counts`` (M, 6), by four additions of columns (a
    ``cumsum`` along rows is a scan kernel that took 7 ms a call on an H100 at a self-play step's 1.3 M rows)."""
    running = [counts[:, 5]]
    for p in (4, 3, 2, 1):
        running.append(running[-1] + counts[:, p])
    return torch.stack(running[::-1], dim=1)


def _rank(counts: torch.Tensor, binom: torch.Tensor) -> torch.Tensor:
    """``bearoff_tables.rank`` of each row of ``counts`` (M, 6) (at most 15 checkers; other rows give any index)."""
    total = counts.sum(1)
    m = _beyond(counts) - 1
    cols = torch.arange(5, 0, -1, device=counts.device)  # positions with more checkers on point p + 1 come first
    terms = torch.where(m >= 0, binom[(m + cols).clamp(0, 31), cols], 0)
    return binom[(total + 5).clamp(0, 31), 6] + terms.sum(1)


def _one_minus_running(rows: np.ndarray, inclusive: bool) -> np.ndarray:
    """``1 - s[k]`` (M, K) float64, ``s[k]`` each row's columns summed one by one from the first, up to column k
    (``inclusive``) or before it: the factors of the numba lookup's race sums, rounded as there."""
    out = np.empty_like(rows)
    running = np.zeros(len(rows))
    for k in range(rows.shape[1]):
        if inclusive:
            running = running + rows[:, k]
        out[:, k] = 1.0 - running
        if not inclusive:
            running = running + rows[:, k]
    return out


def _sum_columns(terms: torch.Tensor) -> torch.Tensor:
    """``terms`` (..., K) summed over the last axis one column at a time from 0.0, in the numba kernel's order."""
    total = torch.zeros(terms.shape[:-1], dtype=terms.dtype, device=terms.device)
    for k in range(terms.shape[-1]):
        total = total + terms[..., k]
    return total


class DeviceBearoff:
    """The tables of a ``BearoffDatabase`` on one torch device, with batched lookups that stay there."""

    def __init__(self, device: torch.device | str = "cpu", db: BearoffDatabase | None = None,
                 kernels: str = "torch") -> None:
        db = database() if db is None else db
        self.device = torch.device(device)
        self.kernels = check_kernels(kernels)
        """How ``probs`` runs (``bgnet.core.device_kernels.DEVICE_KERNELS``): torch ops, or "fused", one Triton kernel
        (``bgnet.nets.bearoff_fused``, the same bits)."""
        self.binom = torch.from_numpy(BINOM).to(self.device)
        self.rolls = torch.from_numpy(db.rolls.copy()).to(self.device)
        self.first_off = torch.from_numpy(db.first_off.copy()).to(self.device)
        self.win = torch.from_numpy(db.win.copy()).to(self.device)
        # 1 - the running sums of each distribution: the other side done before roll k, first checker off by k.
        self.not_done_before = torch.from_numpy(_one_minus_running(db.rolls, False)).to(self.device)
        self.not_first_before = torch.from_numpy(_one_minus_running(db.first_off, False)).to(self.device)
        self.not_first_by = torch.from_numpy(_one_minus_running(db.first_off, True)).to(self.device)

    def classify(self, boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Codes (M,) int8 (0 not a pure bear-off, 1 one-sided race, 2 in the two-sided table) and the one-sided
        indices (M,) of the side on roll and of the opponent (0 where the code is 0)."""
        pure, mine, theirs, n_mine, n_theirs = _covered(boards)
        two_sided = (n_mine <= TWO_SIDED_CHECKERS) & (n_theirs <= TWO_SIDED_CHECKERS)
        code = torch.where(pure, torch.where(two_sided, 2, 1), 0).to(torch.int8)
        x = torch.where(pure, _rank(mine, self.binom), 0)
        y = torch.where(pure, _rank(theirs, self.binom), 0)
        return code, x, y

    def is_bearoff(self, boards: torch.Tensor) -> torch.Tensor:
        """Mask (M,) of pure bear-offs among boards (M, 26): those ``classify`` gives a code, without their ranks."""
        return _covered(boards)[0]

    def probs(self, boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask (M,) of pure bear-offs and their exact chances (M, 5) float64 for each side on roll (zeros elsewhere),
        as ``BearoffDatabase.exact_probs``."""
        if self.kernels == "fused":
            from bgnet.nets.bearoff_fused import bearoff_probs_fused  # Triton's import only where it is asked for

            return bearoff_probs_fused(self, boards)
        code, x, y = self.classify(boards)
        race = self._race(x, y)
        two = torch.zeros_like(race)
        two[:, 0] = self.win[x.clamp(max=N_TWO_SIDED - 1), y.clamp(max=N_TWO_SIDED - 1)]
        c = code.unsqueeze(1)
        return code != 0, torch.where(c == 2, two, torch.where(c == 1, race, 0.0))

    def _race(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Chances (M, 5) float64 of the race between one-sided positions ``x`` (on roll) and ``y``: the side on roll
        needing k rolls wins when the other needs k or more; gammons from the first-checker distributions."""
        dx, dy = self.rolls[x], self.rolls[y]
        fy, fx = (y - FULL_START).clamp(min=0), (x - FULL_START).clamp(min=0)
        terms = torch.stack([dx * self.not_done_before[y], dx * self.not_first_before[fy], dy * self.not_first_by[fx]],
                            dim=1)
        sums = _sum_columns(terms)  # (M, 3): win, gammon, gammon lost, each rounded as the numba kernel's
        win = sums[:, 0].clamp(0.0, 1.0)
        gammon = sums[:, 1].clamp(min=0.0).minimum(win)
        gammon_lost = sums[:, 2].clamp(min=0.0).minimum(1.0 - win)
        zero = torch.zeros_like(win)
        return torch.stack([win, torch.where(y >= FULL_START, gammon, zero), zero,
                            torch.where(x >= FULL_START, gammon_lost, zero), zero], dim=1)
