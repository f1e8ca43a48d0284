"""Feature set 2 in one Triton kernel: each board read once (26 bytes), its 246 inputs written once.

``bgnet.features.v2_torch`` computes the same inputs with a few hundred whole-batch torch ops, each a pass over
memory on a GPU: half of a device self-play step's bytes (docs/BENCHMARKS.md, "Feature set 2 in one Triton
kernel"). Here a program holds ``BLOCK`` boards as (BLOCK, 32) tiles, one column a point, and
every input is a sum, maximum or minimum along the points of a tile, or a bit operation on a side's points held
as one int32. The integers are the torch twin's and every ratio is one correctly rounded float32 division
(``div_rn``), so the features are equal bit for bit (tested on CUDA, and on the CPU in Triton's interpreter:
``TRITON_INTERPRET=1`` before Triton is imported). Triton ships with torch's CUDA builds; on a CPU without it
``encode_v2_fused`` says so in a sentence.
"""

from __future__ import annotations

import torch

from bgnet.core.errors import BgnetError
from bgnet.core.fused_boards import boards_for_kernel
from bgnet.features import encoding_torch, v1, v2, v2_torch

__all__ = ["FusedFeaturesError", "encode_v2_fused"]

try:
    import triton
    import triton.language as tl
except ImportError:  # torch's CPU builds come without Triton: encode_v2_fused then raises FusedFeaturesError
    triton = None

BLOCK = 32
"""Boards a program encodes."""


class FusedFeaturesError(BgnetError):
    """The fused encoder cannot run here: Triton is not installed, or the boards are on a CPU outside its
    interpreter."""


if triton is not None:
    from bgnet.core.fused_boards import board_tile, tile_column

    @triton.jit
    def _bits(flag, p):
        """(B,) int32: bit p set where the tile ``flag`` (B, 32) is true in column p."""
        return tl.sum(tl.where(flag, 1 << p, 0), axis=1)

    @triton.jit
    def _high_bit(x):
        """Index of the highest set bit of each ``x`` (0 for 0), from its float32 exponent (``high_bit_torch``)."""
        return tl.maximum((x.to(tl.float32).to(tl.int32, bitcast=True) >> 23) - 127, 0)

    @triton.jit
    def _put(dst, num, den, ok):
        """Store num / den, exact integers, at ``dst`` as one correctly rounded float32 division (rows ``ok``)."""
        tl.store(dst, tl.div_rn(num.to(tl.float32), den), mask=ok)

    @triton.jit
    def _set1_side(out_row, ok, c, bar, rear, r_other, p, runs_ptr, raw: tl.constexpr, structure: tl.constexpr):
        """A side's 98 raw inputs (from column ``raw``) and 7 structure inputs (from ``structure``) of set 1: counts
        ``c`` by its own point (bar 25; ``bar`` its column, ``rear`` its rearmost point), ``r_other`` the other
        side's counts on its points."""
        pts = (p >= 1) & (p <= 24)
        cf = c.to(tl.float32)
        dst = out_row[:, None] + raw + 4 * (p - 1)
        m = ok[:, None] & pts
        tl.store(dst, (c == 1).to(tl.float32), mask=m)
        tl.store(dst + 1, (c == 2).to(tl.float32), mask=m)
        tl.store(dst + 2, (c >= 3).to(tl.float32), mask=m)
        tl.store(dst + 3, tl.maximum((cf - 3.0) * 0.5, 0.0), mask=m)
        on_points = tl.sum(tl.where(pts, c, 0), axis=1)
        tl.store(out_row + raw + 96, bar.to(tl.float32) * 0.5, mask=ok)
        _put(out_row + raw + 97, 15 - on_points - bar, 15.0, ok)
        made = (c >= 2) & pts
        home = tl.sum(tl.where(made & (p <= 6), 1, 0), axis=1)
        low = tl.sum(tl.where(made & (p <= 12), 1 << tl.maximum(p - 1, 0), 0), axis=1)
        high = tl.sum(tl.where(made & (p >= 13), 1 << tl.maximum(p - 13, 0), 0), axis=1)
        low_longest = tl.load(runs_ptr + 3 * low).to(tl.int32)
        low_end = tl.load(runs_ptr + 3 * low + 1).to(tl.int32)
        high_longest = tl.load(runs_ptr + 3 * high).to(tl.int32)
        high_start = tl.load(runs_ptr + 3 * high + 2).to(tl.int32)
        prime = tl.maximum(tl.maximum(low_longest, high_longest), low_end + high_start)
        blots = tl.sum(tl.where((c == 1) & pts, 1, 0), axis=1)
        back = bar + tl.sum(tl.where((p >= 19) & (p <= 24), c, 0), axis=1)
        outfield = tl.sum(tl.where((p >= 7) & (p <= 12), c, 0), axis=1)
        stripped = tl.sum(tl.where((c >= 4) & pts, 1, 0), axis=1)
        ahead = pts & (p >= rear[:, None] - 6) & (p <= rear[:, None] - 1)
        blocked = tl.sum(tl.where(ahead & (r_other >= 2), 1, 0), axis=1)
        s = out_row + structure
        _put(s, home, 6.0, ok)
        _put(s + 1, prime, 6.0, ok)
        _put(s + 2, blots, 5.0, ok)
        _put(s + 3, back, 5.0, ok)
        _put(s + 4, outfield, 5.0, ok)
        _put(s + 5, stripped, 6.0, ok)
        _put(s + 6, blocked, 6.0, ok)

    @triton.jit
    def _shots(c, o, r, p):
        """(p1, p2, pip loss) of v2's ``_shots`` for side S (counts ``c``, ``r`` = c reversed: r[t] = c[25 - t]) and
        O (counts ``o``); ``v2_torch._shots`` says how, roll by roll: bit t of a mask is S's blot on O's point t."""
        pts = (p >= 1) & (p <= 24)
        ob = _bits((o > 0) & (p >= 1) & (p <= 25), p)
        sb = _bits((r >= 2) & pts, p)
        blots = _bits((r == 1) & pts, p)
        p1 = tl.zeros_like(ob)
        p2 = tl.zeros_like(ob)
        loss = tl.zeros_like(ob)
        for d in tl.static_range(1, 7):
            w1 = ob >> d
            open_path = ~(sb >> d)
            w2 = w1 | ((ob >> (2 * d)) & open_path)
            open_path = open_path & ~(sb >> (2 * d))
            w3 = w2 | ((ob >> (3 * d)) & open_path)
            open_path = open_path & ~(sb >> (3 * d))
            w4 = (w3 | ((ob >> (4 * d)) & open_path)) & blots
            w1 = w1 & blots
            w2 = w2 & blots
            w3 = w3 & blots
            p1 += (w4 != 0).to(tl.int32)
            loss += _high_bit(w4)
            two_steps = ((w1 & (w1 - 1)) != 0) | ((w1 != 0) & ((w3 & (w3 - 1)) != 0)) | ((w2 & (w2 - 1)) != 0)
            p2 += two_steps.to(tl.int32)
        for a in tl.static_range(1, 7):
            for d in tl.static_range(a + 1, 7):
                first = (ob >> a) & blots
                second = (ob >> d) & blots
                both = (ob >> (a + d)) & ~((sb >> a) & (sb >> d)) & blots
                hits = first | second | both
                p1 += 2 * (hits != 0).to(tl.int32)
                loss += 2 * _high_bit(hits)
                one_first = first != 0
                one_second = second != 0
                same_single = (one_first & ((first & (first - 1)) == 0) & one_second
                               & ((second & (second - 1)) == 0) & ((first & second) != 0))
                p2 += 2 * (one_first & one_second & ~same_single).to(tl.int32)
        return p1, p2, loss

    @triton.jit
    def _escapes(esc_ptr, held, p):
        """(B, 32) escapes (of 36) of a checker on each of its points p = 1..25 against the blocker's held bits
        ``held`` (its own numbering); 36 in column 0 and past 25 (``v2_torch._escape_rows``)."""
        key = tl.where((p >= 1) & (p <= 25), held[:, None] >> tl.minimum(tl.maximum(26 - p, 1), 26), 0)
        return tl.load(esc_ptr + key).to(tl.int32)

    @triton.jit
    def _expert_side(out_row, ok, c, o, r, bar, rear, rear_o, held_c, esc_c, esc_o, p, base: tl.constexpr):
        """S's 16 expert inputs from column ``base``: v2_torch's ``_expert_side``, the same integers over the same
        denominators (``bar`` S's checkers on the bar, ``rear`` and ``rear_o`` each side's rearmost point)."""
        pts = (p >= 1) & (p <= 24)
        on = (p >= 1) & (p <= 25)
        p1, p2, loss = _shots(c, o, r, p)
        back_escapes = tl.sum(tl.where(p == rear[:, None], esc_o, 0), axis=1)
        contained = 36 - tl.min(tl.where((p >= 15) & (p <= 24), esc_c, 127), axis=1)
        behind = tl.maximum(p - (25 - rear_o[:, None]), 0)
        break_contact = tl.sum(tl.where(on, c * behind, 0), axis=1) * (rear_o > 0).to(tl.int32)
        held = (c >= 2) & pts
        back = tl.max(tl.where(held, p, 0), axis=1)
        forward = tl.min(tl.where(held & (p >= 13), p, 25), axis=1)
        mobility = tl.sum(tl.where(on, c * esc_o, 0), axis=1)
        n = tl.sum(tl.where(on, c, 0), axis=1)
        s = tl.sum(tl.where(on, c * p, 0), axis=1)
        q = tl.sum(tl.where(on, c * p * p, 0), axis=1)
        timing = (tl.sum(tl.where((p >= 7) & on, c * (p - 6), 0), axis=1)
                  + tl.sum(tl.where((p >= 2) & (p <= 6), tl.maximum(c - 2, 0) * (p - 1), 0), axis=1))
        backbone = tl.zeros_like(n)
        for j in tl.static_range(1, 7):
            pairs = held_c & (held_c >> j)
            backbone += tl.sum((pairs[:, None] >> p) & 1, axis=1)
        free = tl.where(c == 1, 1, 0) + tl.maximum(c - 2, 0)
        free_pips = 25 * bar + tl.sum(tl.where(pts, p * free, 0), axis=1)
        closed = tl.sum(tl.where((p >= 1) & (p <= 6) & (o >= 2), 1, 0), axis=1)
        dst = out_row + base
        _put(dst, p1, 36.0, ok)
        _put(dst + 1, p2, 36.0, ok)
        _put(dst + 2, loss, 432.0, ok)
        _put(dst + 3, back_escapes, 36.0, ok)
        _put(dst + 4, contained, 36.0, ok)
        _put(dst + 5, contained * contained, 1296.0, ok)
        _put(dst + 6, break_contact, 100.0, ok)
        _put(dst + 7, rear, 25.0, ok)
        _put(dst + 8, back, 24.0, ok)
        _put(dst + 9, 25 - forward, 12.0, ok)
        _put(dst + 10, mobility, 540.0, ok)
        _put(dst + 11, n * q - s * s, (100 * tl.maximum(n * n, 1)).to(tl.float32), ok)
        _put(dst + 12, timing, 100.0, ok)
        _put(dst + 13, backbone, 20.0, ok)
        _put(dst + 14, free_pips, 100.0, ok)
        _put(dst + 15, closed * closed, 36.0, ok)

    @triton.jit
    def _encode_kernel(boards_ptr, out_ptr, esc_ptr, runs_ptr, n_rows, WIDTH: tl.constexpr,
                       SET1: tl.constexpr, EXPERT: tl.constexpr, BLOCK: tl.constexpr):
        rows, ok, p, board, fwd = board_tile(boards_ptr, n_rows, BLOCK)  # fwd: b[p]
        rev = tl.load(board + tl.maximum(25 - p, 0), mask=ok[:, None] & (p <= 25), other=0).to(tl.int32)  # b[25 - p]
        pieces = (p >= 1) & (p <= 25)
        c_s = tl.where(pieces, tl.maximum(fwd, 0), 0)  # S's counts on its points 1..24, bar 25
        c_o = tl.where(pieces, tl.maximum(-rev, 0), 0)  # O's, in O's numbering
        pts = (p >= 1) & (p <= 24)
        r_s = tl.where(pts, tl.maximum(rev, 0), 0)  # S's counts on O's point t (S's 25 - t)
        r_o = tl.where(pts, tl.maximum(-fwd, 0), 0)  # O's counts on S's point t
        bar_s = tile_column(c_s, p, 25)
        bar_o = tile_column(c_o, p, 25)
        rear_s = tl.max(tl.where(c_s > 0, p, 0), axis=1)  # each side's rearmost checker, bar 25 (0 when none)
        rear_o = tl.max(tl.where(c_o > 0, p, 0), axis=1)
        out_row = out_ptr + rows * WIDTH
        _set1_side(out_row, ok, c_s, bar_s, rear_s, r_o, p, runs_ptr, 0, 2 * 98 + 4)
        _set1_side(out_row, ok, c_o, bar_o, rear_o, r_s, p, runs_ptr, 98, 2 * 98 + 4 + 7)
        mine = tl.max(tl.where((fwd > 0) & (p <= 25), p, 0), axis=1)
        his = tl.min(tl.where((fwd < 0) & (p <= 25), p, 25), axis=1)
        tl.store(out_row + 196, (mine < his).to(tl.float32), mask=ok)
        pips_s = tl.sum(c_s * p, axis=1)
        pips_o = tl.sum(c_o * p, axis=1)
        _put(out_row + 197, pips_s, 100.0, ok)
        _put(out_row + 198, pips_o, 100.0, ok)
        _put(out_row + 199, pips_o - pips_s, 50.0, ok)
        held_s = _bits((c_s >= 2) & pts, p)
        held_o = _bits((c_o >= 2) & pts, p)
        esc_vs_s = _escapes(esc_ptr, held_s, p)  # an O checker on O's points against S's
        esc_vs_o = _escapes(esc_ptr, held_o, p)  # an S checker on S's points against O's
        _expert_side(out_row, ok, c_s, c_o, r_s, bar_s, rear_s, rear_o, held_s, esc_vs_s, esc_vs_o, p, SET1)
        _expert_side(out_row, ok, c_o, c_s, r_o, bar_o, rear_o, rear_s, held_o, esc_vs_o, esc_vs_s, p, SET1 + EXPERT)


def encode_v2_fused(boards: torch.Tensor, block: int = BLOCK) -> torch.Tensor:
    """Set-2 features (N, 246) float32 of int8 boards (N, 26), each seen from its side on roll, on their device:
    ``encode_v2_torch``'s, bit for bit, from one kernel of programs of ``block`` boards (a power of two)."""
    kernel, boards = boards_for_kernel(boards, _encode_kernel if triton is not None else None, FusedFeaturesError,
                                       "the fused encoder", "encode_v2_torch")
    n = len(boards)
    out = torch.empty((n, v2.WIDTH), dtype=torch.float32, device=boards.device)
    if n == 0:
        return out
    escapes = v2_torch._constants(boards.device)["escapes"]
    runs = encoding_torch._constants(boards.device)["runs"]
    kernel[(triton.cdiv(n, block),)](boards, out, escapes, runs, n, WIDTH=v2.WIDTH, SET1=v1.WIDTH,
                                      EXPERT=v2.EXPERT_PER_SIDE, BLOCK=block)
    return out
