"""Feature set 2 (``bgnet.features.v2``) computed with torch ops, on whatever device the boards are on.

Set 1's inputs come from its torch twin (``bgnet.features.encoding_torch``); the 2 x 16
expert inputs are computed here for a whole batch at once, one function per family,
by the rules of v2's numba kernels: escapes are looked up in v2's own table (moved to
the device once), shots are decided per blot and roll, then reduced over the blots.
Each input is an integer ratio (a count over a constant, or, for the variance, the
pip loss and the squares, a ratio of two integers) divided once in float32: that
rounds the exact ratio, and so does the numba kernel, whose few float64 operations err
far less than such a ratio (small denominators) lies from a float32 rounding boundary.
So the features are equal, bit for bit, and no float64 is needed.

On a GPU a self-play step encodes about a million afterstates and each op is a pass over
memory, so the ops work on the narrowest exact types: counts in int16, bit masks in int32,
escape counts in int8, and each escape count is one shift and one lookup (``_wide_escapes``).
"""

from __future__ import annotations

import numpy as np
import torch

from bgnet.core.game_torch import high_bit_torch, points_to_bits_torch
from bgnet.features import v2
from bgnet.features.encoding_torch import _sides, _swap_halves, encode_sides
from bgnet.features.v2 import EXPERT_PER_SIDE, WIDTH

__all__ = ["encode_v2_torch"]

_PAIRS = [(a, d) for a in range(1, 7) for d in range(a + 1, 7)]
"""The 15 non-double rolls (dice a < d); the 6 doubles come first in a roll axis of 21, as in v2's roll masks."""


def _wide_escapes() -> np.ndarray:
    """(2**24,) int8: v2's escape count for every 24 bits of held points ahead of a checker (bit r - 1: the point
    r pips ahead held), so that a key is the held bits shifted, with no masks. v2's table keeps only the bits that
    decide it (r = 1..12, then 15, 16, 18, 20 and 24 as its bits 12..16): each of the 4,096 values of the wide
    key's bits 12..23 picks one 4,096-entry block of v2's table."""
    assert v2._FAR == (15, 16, 18, 20, 24)
    high = np.arange(1 << 12)  # the wide key's bits 12..23: r = 13..24
    block = ((high >> 2) & 3) | (((high >> 5) & 1) << 2) | (((high >> 7) & 1) << 3) | (((high >> 11) & 1) << 4)
    return v2._ESCAPES.reshape(32, 1 << 12)[block].reshape(-1)


def _constants(device: torch.device) -> dict[str, torch.Tensor]:
    """Shift amounts, weights and the wide escape table on ``device``, made on first use there."""
    consts = _CONSTANTS.get(device)
    if consts is None:
        i32, i16 = torch.int32, torch.int16
        consts = {
            "escapes": torch.from_numpy(_wide_escapes()),
            # r pips ahead of a mover's point p = 1..25 is the blocker's point 25 - p + r: shifting the held bits
            # down by 26 - p puts it at bit r - 1; column 0 (no point) shifts them all out: key 0, 36 escapes
            "shift": torch.tensor([26] + [26 - p for p in range(1, 26)], dtype=i32),
            "die": torch.arange(1, 7, dtype=i32),
            "die_a": torch.tensor([a for a, _ in _PAIRS], dtype=i32),
            "die_d": torch.tensor([d for _, d in _PAIRS], dtype=i32),
            "roll_weight": torch.tensor([1] * 6 + [2] * len(_PAIRS), dtype=i32),  # rolls of 36 each stands for
            "point": torch.arange(26, dtype=i16),
            # the expert inputs' denominators, in _expert_side's order (the variance's, column 11, varies by row)
            "denominators": torch.tensor([36, 36, 36 * 12, 36, 36, 36 * 36, 100, 25, 24, 12, 15 * 36, 1, 100, 20,
                                          100, 36]),
            "variance_column": torch.arange(EXPERT_PER_SIDE) == 11,
        }
        consts = {k: v.to(device) for k, v in consts.items()}
        _CONSTANTS[device] = consts
    return consts


_CONSTANTS: dict[torch.device, dict[str, torch.Tensor]] = {}


def _ratio(num: torch.Tensor, den: torch.Tensor | int) -> torch.Tensor:
    """num / den in float32 for integers below 2**24: one correctly rounded division of the exact ratio.

    The divisor is a tensor on the device: CUDA divides by a Python number as a product with
    its float32 reciprocal, which is an ulp off for many ratios (n / 100 among them).
    """
    divisor = den.float() if isinstance(den, torch.Tensor) else torch.full((), float(den), device=num.device)
    return num.float() / divisor


def _escape_rows(held: torch.Tensor, k: dict[str, torch.Tensor]) -> torch.Tensor:
    """(N, 26) int8: escapes (of 36) of a mover's checker on each of its points p = 1..25 against the blocker's
    held-point bits ``held`` (N,) int32, its own numbering; column 0 is 36 (no checker, nothing blocks it). v2's
    ``_escapes_bits``: the held bits ahead of the point, shifted down, index the wide table."""
    return k["escapes"][held.unsqueeze(1) >> k["shift"]]


def _shots(c: torch.Tensor, o: torch.Tensor, k: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """(p1, p2, pip loss) of v2's ``_shots``: O's rolls hitting one / two of S's blots and the pips S loses.

    For each of the 21 rolls, a mask of the blots it hits, bit t for S's blot on O's point t
    (S's 25 - t): O's checkers D pips above the blots are O's occupied bits shifted down D.
    """
    ob = points_to_bits_torch(o[:, 1:26] > 0).unsqueeze(1)  # O's checkers on its points 1..24, bar 25
    sb = points_to_bits_torch((c[:, 1:25] >= 2).flip(1)).unsqueeze(1)  # S's points, on O's numbering
    blots = points_to_bits_torch((c[:, 1:25] == 1).flip(1)).unsqueeze(1)
    # Doubles: the first O checker on t + j * d (j <= 4) with no S point on the steps before it.
    d = k["die"]
    within = [ob >> d]  # within[K - 1]: blots a double d hits in K steps or fewer
    open_path = ~(sb >> d)
    for j in range(2, 5):
        within.append(within[-1] | ((ob >> (j * d)) & open_path))
        open_path = open_path & ~(sb >> (j * d))
    within = [w & blots for w in within]  # (N, 6) each
    # Non-doubles: either die directly, or both through a point S does not hold.
    a, b = k["die_a"], k["die_d"]
    first = (ob >> a) & blots
    second = (ob >> b) & blots
    both = (ob >> (a + b)) & ~((sb >> a) & (sb >> b)) & blots
    hits = torch.cat([within[3], first | second | both], dim=1)  # (N, 21)
    weight = k["roll_weight"]
    p1 = torch.where(hits != 0, weight, 0).sum(1)
    loss = (high_bit_torch(hits) * weight).sum(1)  # a roll costs the pips of the farthest-back blot it hits: the largest t

    def one(x: torch.Tensor) -> torch.Tensor:
        return x != 0

    def two(x: torch.Tensor) -> torch.Tensor:
        return (x & (x - 1)) != 0

    same_single = one(first) & ~two(first) & one(second) & ~two(second) & one(first & second)
    two_dice = one(first) & one(second) & ~same_single
    two_steps = two(within[0]) | (one(within[0]) & two(within[2])) | two(within[1])
    p2 = torch.where(torch.cat([two_steps, two_dice], dim=1), weight, 0).sum(1)
    return p1, p2, loss


def _expert_side(c: torch.Tensor, o: torch.Tensor, esc_c: torch.Tensor, esc_o: torch.Tensor,
                 k: dict[str, torch.Tensor]) -> torch.Tensor:
    """S's 16 expert inputs (N, 16) as v2's ``_expert_side_rows``: S = counts ``c``, O = ``o`` (N, 26), with the
    escape rows of a checker against S's points (``esc_c``) and O's (``esc_o``)."""
    point = k["point"]
    p1, p2, loss = _shots(c, o, k)
    rear = (point * (c > 0)).amax(1)  # 25 = bar, 0 = none
    rear_o = (point * (o > 0)).amax(1)
    contained = 36 - esc_c[:, 15:25].amin(1).long()
    behind = (point - (25 - rear_o).unsqueeze(1)).clamp(min=0)
    break_contact = (c * behind)[:, 1:].sum(1) * (rear_o > 0)
    held = c[:, 1:25] >= 2  # (N, 24): points 1..24
    back = (point[1:25] * held).amax(1)
    forward = torch.where(held[:, 12:], point[13:25], 25).amin(1)  # lowest held of 13..24; 25: none
    mobility = (c[:, 1:] * esc_o[:, 1:]).sum(1)
    n = c[:, 1:].sum(1)
    s = (c * point)[:, 1:].sum(1)
    q = (c * point * point)[:, 1:].sum(1)
    timing = (c[:, 7:] * (point[7:] - 6)).sum(1) + ((c[:, 2:7] - 2).clamp(min=0) * (point[2:7] - 1)).sum(1)
    backbone = torch.stack([(held[:, :24 - j] & held[:, j:]).sum(1) for j in range(1, 7)]).sum(0)  # pairs j apart
    pts = c[:, 1:25]
    free_pips = 25 * c[:, 25] + (point[1:25] * ((pts == 1).to(pts.dtype) + (pts - 2).clamp(min=0))).sum(1)
    closed = (o[:, 1:7] >= 2).sum(1)
    nums = [p1, p2, loss, esc_o.gather(1, rear.long().unsqueeze(1)).squeeze(1), contained, contained * contained,
            break_contact, rear, back, 25 - forward, mobility, n * q - s * s, timing, backbone, free_pips,
            closed * closed]
    # variance = (n * sum p^2 - (sum p)^2) / n^2: the one denominator that varies by row
    dens = torch.where(k["variance_column"], 100 * (n * n).clamp(min=1).unsqueeze(1), k["denominators"])
    return _ratio(torch.stack(nums, dim=1), dens)  # stacked as int64 (type promotion)


def encode_v2_torch(boards: torch.Tensor) -> torch.Tensor:
    """Set-2 features (N, WIDTH) float32 for int8 boards (N, 26), each seen from its side on roll, on their device.

    Both sides' expert inputs come from one pass over 2N rows (the side on roll's counts, then the other's), so
    that each op is one kernel for the whole batch."""
    k = _constants(boards.device)
    sides = _sides(boards)
    n = len(boards)
    # own numbering: points 1..24, bar 25 (column 0 unused); rows 0..N-1 are S's, N..2N-1 O's
    counts = torch.cat([sides.new_zeros(2 * n, 1), sides], dim=1)  # int16
    esc = _escape_rows(points_to_bits_torch(counts[:, 1:25] >= 2), k)  # a checker of the other side against each row's points
    expert = _expert_side(counts, _swap_halves(counts), esc, _swap_halves(esc), k)
    out = torch.empty((n, WIDTH), dtype=torch.float32, device=boards.device)
    set1 = encode_sides(boards, sides, out).shape[1]
    assert set1 + 2 * EXPERT_PER_SIDE == WIDTH
    out[:, set1:].unflatten(1, (2, EXPERT_PER_SIDE)).transpose(0, 1).copy_(expert.view(2, n, EXPERT_PER_SIDE))
    return out
