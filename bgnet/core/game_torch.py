"""Batched play with torch ops on any device: the twins of ``bgnet.core._game_kernels`` (game ends, exact
end-of-game chances, segment argmax), of ``swap_sides_batch`` and of ``bgnet.core.probs.flip_probs``.

Each is a few whole-batch ops with shapes fixed by their inputs: nothing reads a tensor's value
back to Python, so a GPU self-play step that uses them never waits for the host.
"""

from __future__ import annotations

import torch

__all__ = ["bits_to_points_torch", "flip_probs_torch", "high_bit_torch", "points_to_bits_torch", "race_torch", "segment_argmax_torch", "segment_ids", "swap_sides_torch",
           "terminal_codes_torch", "terminal_probs_torch"]


def swap_sides_torch(boards: torch.Tensor) -> torch.Tensor:
    """Boards (M, 26) turned round, so that the other side of each is on roll."""
    return -boards.flip(1)


_POINT_BITS: dict[torch.device, torch.Tensor] = {}
"""Per device: (25,) int32, bit p of point p = 1..25 (the bar)."""


def _point_bits(device: torch.device) -> torch.Tensor:
    if device not in _POINT_BITS:
        _POINT_BITS[device] = (1 << torch.arange(1, 26, dtype=torch.int32)).to(device)
    return _POINT_BITS[device]


def points_to_bits_torch(mask: torch.Tensor) -> torch.Tensor:
    """(N,) int32 with bit i + 1 set where ``mask`` (N, m) is True at column i (m <= 25): points 1..m as one mask."""
    return torch.where(mask, _point_bits(mask.device)[:mask.shape[1]], 0).sum(1, dtype=torch.int32)


def bits_to_points_torch(bits: torch.Tensor, m: int = 25) -> torch.Tensor:
    """(N, m) bool, column i True where bit i + 1 of ``bits`` (N,) int32 is set: ``points_to_bits_torch`` undone."""
    return (bits.unsqueeze(1) & _point_bits(bits.device)[:m]) != 0


def high_bit_torch(x: torch.Tensor) -> torch.Tensor:
    """Index (int32) of the highest set bit of each int32 ``x`` >= 0, 0 for x == 0: the exponent field of x as a
    float32, one op instead of a loop over the bits. Right wherever float32's rounding of x leaves its highest bit
    alone: every x below 2**24 and every even x below 2**26 but 2**26 - 2 (bits 1..25 all set; a mask of points
    1..25 holding at most 15 checkers never is)."""
    return ((x.float().view(torch.int32) >> 23) - 127).clamp(min=0)


def race_torch(boards: torch.Tensor) -> torch.Tensor:
    """(M,) bool: contact is over on each board (M, 26), ``bgnet.core.race``'s rule: my rearmost checker (my bar
    included; 0 when none) is ahead of his rearmost (his bar included; 25 when none), in my numbering."""
    point = torch.arange(26, dtype=torch.int8, device=boards.device)  # int8: a byte a point, not eight
    return torch.where(boards > 0, point, 0).amax(1) < torch.where(boards < 0, point, 25).amin(1)


_FLIP: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
"""Per device and dtype: the columns' new order, each column's sign and offset (``1 - win``, the rest as they are)."""


def flip_probs_torch(probs: torch.Tensor) -> torch.Tensor:
    """Chances (M, 5) seen by the other side, win and loss swapped (``flip_row``). Two ops: the columns reordered,
    then ``offset + sign * column``, whose ``1 - win`` is the correctly rounded difference, the same bits as
    ``flip_row``'s from float64."""
    key = (probs.device, probs.dtype)
    if key not in _FLIP:
        _FLIP[key] = (torch.tensor([0, 3, 4, 1, 2], device=probs.device),
                      torch.tensor([-1, 1, 1, 1, 1], dtype=probs.dtype, device=probs.device),
                      torch.tensor([1, 0, 0, 0, 0], dtype=probs.dtype, device=probs.device))
    order, sign, offset = _FLIP[key]
    return torch.addcmul(offset, probs.index_select(1, order), sign)


def terminal_codes_torch(boards: torch.Tensor) -> torch.Tensor:
    """``terminal_codes`` for boards (M, 26) seen from the side on roll: (M,) int8, 0 while play goes on,
    +1/+2/+3 when the side on roll has borne off all 15 (single, gammon, backgammon), -1/-2/-3 when the
    opponent has."""
    b = boards.to(torch.int16)
    mine = b.clamp(min=0).sum(1)
    theirs = (-b).clamp(min=0).sum(1)
    # A backgammon: the loser still has a checker on the bar or in the winner's home board.
    they_stuck = (b[:, 0] < 0) | (b[:, 1:7] < 0).any(1)
    i_stuck = (b[:, 25] > 0) | (b[:, 19:25] > 0).any(1)
    won = torch.where(theirs < 15, 1, torch.where(they_stuck, 3, 2))
    lost = torch.where(mine < 15, -1, torch.where(i_stuck, -3, -2))
    return torch.where(mine == 0, won, torch.where(theirs == 0, lost, 0)).to(torch.int8)


def terminal_probs_torch(codes: torch.Tensor) -> torch.Tensor:
    """Exact chances (M, 5) float32 of the games ``codes`` ended (zeros where play goes on), as ``apply_terminal``."""
    k = codes.to(torch.int64).abs().unsqueeze(1)
    levels = torch.arange(1, 4, device=codes.device)
    won = (codes > 0).unsqueeze(1) & (k >= levels)  # win, gammon, backgammon
    lost = (codes < 0).unsqueeze(1) & (k >= levels[1:])  # gammon, backgammon lost
    return torch.cat([won, lost], dim=1).float()


def segment_ids(offsets: torch.Tensor, rows: int) -> torch.Tensor:
    """(rows,) int64: the segment ``i`` of each row, where segment ``i`` is ``offsets[i]:offsets[i + 1]``."""
    return torch.searchsorted(offsets[1:], torch.arange(rows, device=offsets.device), right=True)


def segment_argmax_torch(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """``segment_argmax``: the index (into ``values``) of the largest value of each non-empty segment
    ``offsets[i]:offsets[i + 1]``, the first of equal ones."""
    n, m = len(offsets) - 1, len(values)
    seg = segment_ids(offsets, m)
    best = torch.full((n,), -torch.inf, dtype=values.dtype, device=values.device)
    best = best.scatter_reduce(0, seg, values, "amax")
    rows = torch.arange(m, device=values.device)
    at_best = torch.where(values == best.index_select(0, seg), rows, m)
    return torch.full((n,), m, dtype=rows.dtype, device=values.device).scatter_reduce(0, seg, at_best, "amin")
