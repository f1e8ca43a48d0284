"""Legal afterstates with batched torch ops: the twin of ``movegen.generate_afterstates`` for any device.

``generate_afterstates_torch(boards, dice)`` takes (B, 26) boards seen from the
mover and (B, 2) dice, and returns ``(after (N, 26) int8, offsets (B + 1,) int64)``
on the device of its inputs: the afterstates of game ``i`` (still seen from the
mover, not turned round) are ``after[offsets[i]:offsets[i + 1]]``, one per distinct
board, and a game with no legal play has its own board as the one afterstate, as
in the numba generator. Within a game the afterstates come sorted by their 26
slots as signed numbers, slot 0 first (lexicographic order), so the result is
deterministic; numba lists the same sets in another order.

Design (one code path for the CPU and CUDA, no Python loop over games or plays):

* Breadth-first over partial plays. Level ``k`` holds every distinct partial play
  of ``k`` steps as a row (board, game, dice used). One level at a time, a mask
  (row and die left, 25 source points) marks every legal next step, and
  ``nonzero`` turns it into the rows of level ``k + 1``; each board's sources and
  open points are int32 bit masks, so a (row, die) pair's legal sources are the open
  points shifted up by the die, or'ed with its bear-offs, and'ed with the sources.
  Only the loop over the (at most four) levels is in Python, and Python reads no tensor's value (``nonzero``
  still waits for its count on a GPU: rows are selected by index lists made once per
  selection, at most 10 a call, never by boolean masks, which wait once per tensor indexed).
* Rows are merged when they agree on (game, dice used, board): their futures are
  the same, so each level stays as small as the number of distinct boards (a
  double would otherwise grow to 15**4 orderings per game).
* Each row also carries a key of three int64 words, five bits per slot plus the
  game and the dice used, whose lexicographic order is that of (game, dice used,
  board). A step updates the key by the few slots it changes. Three stable 1-D
  sorts (radix sorts on the CPU and the GPU, where ``torch.unique(dim=0)``
  compares whole rows) order the rows, and equal neighbours are dropped; the
  final merge leaves each game's afterstates together, in order.
* The deepest level any row of a game reaches is how many dice it must use; its
  afterstates are that level's rows of the game, and with one die of a non-double
  only those of the larger die when it has any.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bgnet.core.distinct_torch import lexsort_torch
from bgnet.core.errors import InvalidDiceError, InvalidPositionError
from bgnet.core.game_torch import bits_to_points_torch, high_bit_torch, points_to_bits_torch

__all__ = ["generate_afterstates_torch"]

_BAR = 25
# Packed keys: three int64 words, five bits per slot (count + 15, so 0..30) most significant first:
# word 0 holds slots 0..5, word 1 slots 6..17, word 2 slots 18..25; word 0 also holds the dice used
# (bits 30..31) and the game (bits 32..62). Their lexicographic order is (game, used, slot 0, ..., slot 25).
_WORD_SLOTS = ((0, 6), (6, 18), (18, 26))
_WORD = torch.tensor([w for w, (lo, hi) in enumerate(_WORD_SLOTS) for _ in range(lo, hi)])  # the word of each slot
_PLACE = torch.tensor([32 ** (hi - 1 - s) for lo, hi in _WORD_SLOTS for s in range(lo, hi)], dtype=torch.int64)
_USED = 1 << 30
_GAME = 1 << 32
_ON_DEVICE: dict[torch.device, dict[str, torch.Tensor]] = {}


def _constants(dev: torch.device) -> dict[str, torch.Tensor]:
    """``_WORD`` and ``_PLACE`` on ``dev``, copied there once (a copy to a GPU waits for it)."""
    consts = _ON_DEVICE.get(dev)
    if consts is None:
        consts = _ON_DEVICE[dev] = {"word": _WORD.to(dev), "place": _PLACE.to(dev)}
    return consts


def _as_tensor(x: Any) -> torch.Tensor:
    """``x`` itself when it is a tensor, else a CPU tensor of it (a numpy array of any strides, a list)."""
    return x if isinstance(x, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(x))


def _check(boards: torch.Tensor, dice: torch.Tensor, values: bool = True) -> None:
    """Raise ``InvalidPositionError`` or ``InvalidDiceError`` for inputs the generator cannot read (their shapes and
    dtypes; with ``values``, their numbers too)."""
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise InvalidPositionError(f"boards must be (B, 26), got {tuple(boards.shape)}")
    if dice.shape != (boards.shape[0], 2):
        raise InvalidDiceError(f"dice must be (B, 2) for {boards.shape[0]} boards, got {tuple(dice.shape)}")
    if boards.shape[0] >= 1 << 31:
        raise InvalidPositionError(f"at most 2**31 - 1 boards in one call, got {boards.shape[0]}")
    if boards.device != dice.device:
        raise InvalidDiceError(f"dice are on {dice.device} but the boards on {boards.device}")
    if boards.is_floating_point() or boards.is_complex() or boards.dtype == torch.bool:
        raise InvalidPositionError(f"boards must hold integers, got {boards.dtype}")
    if dice.is_floating_point() or dice.is_complex() or dice.dtype == torch.bool:
        raise InvalidDiceError(f"dice must hold integers, got {dice.dtype}")
    if boards.shape[0] == 0 or not values:
        return
    b = boards.to(torch.int64)
    d = dice.to(torch.int64)
    # Up to 15 checkers a side keeps every slot in -15..15 after any play, as the keys need.
    bad_dice, bad_board = torch.stack([
        ((d < 1) | (d > 6)).any(),
        (b.clamp(min=0).sum(1) > 15).any() | (b.clamp(max=0).sum(1) < -15).any()
        | (b[:, 0] > 0).any() | (b[:, _BAR] < 0).any(),
    ]).tolist()  # one transfer for both checks
    if bad_dice:
        raise InvalidDiceError("dice must be numbers from 1 to 6")
    if bad_board:
        raise InvalidPositionError("a board holds at most 15 checkers a side, the opponent's bar (slot 0) <= 0 "
                                   "and the mover's bar (slot 25) >= 0")


def _pack(boards: torch.Tensor) -> torch.Tensor:
    """Keys (3, M) of boards (M, 26), for game 0 with no dice used."""
    values = (boards.to(torch.int64) + 15) * _constants(boards.device)["place"]
    return torch.stack([values[:, lo:hi].sum(1) for lo, hi in _WORD_SLOTS])


def _distinct(boards: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of ``boards`` (M, 26) and ``keys`` (3, M) with distinct keys, in the keys' order."""
    perm = lexsort_torch(keys.unbind(0))
    ordered = keys.index_select(1, perm)
    first = torch.ones(len(perm), dtype=torch.bool, device=keys.device)
    first[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(0)
    kept = _rows_of(first)
    return boards.index_select(0, perm.index_select(0, kept)), ordered.index_select(1, kept)


def _rows_of(mask: torch.Tensor) -> torch.Tensor:
    """The indices (K,) of ``mask``'s set rows, in order: one wait for the count on a GPU, where indexing several
    tensors by the mask itself would wait once per tensor."""
    return mask.nonzero().squeeze(1)


def _legal_steps(b: torch.Tensor, dv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every legal step of boards ``b`` (M, 26) with the dice ``dv`` (M, 2) left (0 = none):
    ``(row, die index, source point)``, the bar being point 25.

    Each board's sources and open points are bit masks (int32, bit p for point p), so a
    (row, die) pair's legal sources are a few integer ops: the open points shifted up by
    the die, or'ed with its bear-offs; one ``nonzero`` over the pairs' bits (one wait for
    its count on a GPU) lists them, in (row, option, point) order.
    """
    dev = b.device
    mine_bits = points_to_bits_torch(b[:, 1:] > 0)  # points 1..24 and the bar
    top = high_bit_torch(mine_bits)  # the highest point with a checker of mine (25 = bar, 0 = none)
    # "A checker on the bar must enter before any other checker moves."
    src = torch.where(b[:, _BAR] > 0, 1 << _BAR, mine_bits)
    open_bits = points_to_bits_torch(b[:, 1:25] >= -1)  # points 1..24
    # Row r's option o is pair 2r + o; a pair with no die left (0) has no step.
    rows = torch.arange(dv.numel(), device=dev) // 2
    v = dv.reshape(-1).to(torch.int32)
    top_r = top.index_select(0, rows)
    # From point p to p - v: land unless two or more opposing checkers close the point (bit p of the open points
    # shifted up by v; points p <= v get no bit); bear off (p <= v) only with all fifteen home (top <= 6, which
    # also rules out the bar), with the exact number or, from the highest occupied point, a larger one.
    bear = torch.where(top_r <= 6, (1 << v) | torch.where(top_r < v, 1 << top_r, 0), 0)
    legal = src.index_select(0, rows) & ((open_bits.index_select(0, rows) << v) | bear)
    legal = torch.where(v > 0, legal, 0)
    k, p = bits_to_points_torch(legal).nonzero(as_tuple=True)
    return k // 2, k % 2, p + 1


def _play(b: torch.Tensor, keys: torch.Tensor, rows: torch.Tensor, src: torch.Tensor,
          die: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Boards ``b[rows]`` and their keys after one checker moves from ``src`` by ``die`` (legal), hitting a
    lone opposing checker; the keys are updated by the slots that change, not packed again."""
    dev = b.device
    nb = b.index_select(0, rows)
    nk = keys.index_select(1, rows)
    t = src - die
    on = t >= 1  # not a bear-off
    tt = t.clamp(min=0).unsqueeze(1)
    s = src.unsqueeze(1)
    nb.scatter_(1, s, nb.gather(1, s) - 1)
    cur = nb.gather(1, tt).squeeze(1)
    hit = on & (cur == -1)
    gain = torch.where(on, torch.where(hit, 2, 1), 0).to(torch.int8)  # -1 -> 1 when hitting
    nb.scatter_(1, tt, (cur + gain).unsqueeze(1))
    nb[:, 0] -= hit.to(torch.int8)  # the hit checker goes to the opponent's bar
    # The keys change in the words of the source and the landing point, and in slot 0 on a hit.
    word, place = _constants(dev)["word"], _constants(dev)["place"]
    words = torch.arange(len(_WORD_SLOTS), device=dev).unsqueeze(1)
    tt = tt.squeeze(1)
    nk -= (word.index_select(0, src) == words) * place.index_select(0, src)
    nk += (word.index_select(0, tt) == words) * (gain.to(torch.int64) * place.index_select(0, tt))
    nk[0] -= hit.to(torch.int64) * place[0]
    return nb, nk


def generate_afterstates_torch(boards: torch.Tensor | np.ndarray, dice: torch.Tensor | np.ndarray,
                               check: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Afterstates of every legal play for B boards (B, 26) and dice (B, 2), with torch ops on their device.

    Returns ``(after, offsets)``: ``after`` is (N, 26) int8, each row seen from the mover of
    its board (not turned round), and the plays of board ``i`` are
    ``after[offsets[i]:offsets[i + 1]]`` (``offsets`` int64), one per distinct afterstate,
    sorted by slots 0..25; a board with no legal play gives itself. The same sets as
    ``bgnet.core.movegen.generate_afterstates``. Raises ``InvalidPositionError`` or
    ``InvalidDiceError`` for bad shapes or dtypes, more than 15 checkers a side, a bar of
    the wrong sign, dice outside 1..6, or boards and dice on different devices. Numpy arrays
    are taken as CPU tensors. ``check=False`` skips the checks of the values (their one transfer to
    the host) for boards and dice known to be valid, such as a self-play's own.
    """
    boards, dice = _as_tensor(boards), _as_tensor(dice)
    _check(boards, dice, values=check)
    dev = boards.device
    n_games = boards.shape[0]
    if n_games == 0:
        return torch.zeros((0, 26), dtype=torch.int8, device=dev), torch.zeros(1, dtype=torch.int64, device=dev)
    boards = boards.to(torch.int8)
    d = dice.to(torch.int64)
    hi, lo = d.amax(1), d.amin(1)
    double = hi == lo

    # Level 0: the boards themselves. The dice used (in each row's key) have bit 0 once the
    # larger die (or, for a double, any die) is played and bit 1 once the smaller one is.
    b = boards
    keys = _pack(boards)
    keys[0] += torch.arange(n_games, device=dev) * _GAME
    levels = [(b, keys)]
    depth = torch.zeros(n_games, dtype=torch.int64, device=dev)  # most steps any play of the game makes
    for k in range(4):
        game, used = keys[0] // _GAME, (keys[0] // _USED) % 4
        if k == 2:  # only doubles play a third and fourth step (the third level's rows are all doubles' already)
            keep = _rows_of(double.index_select(0, game))
            b, keys = b.index_select(0, keep), keys.index_select(1, keep)
            game, used = game.index_select(0, keep), used.index_select(0, keep)
        if len(b) == 0:
            break
        dbl = double.index_select(0, game)
        # The dice each row may still play: option 0 the larger die, option 1 the smaller
        # (never for a double, whose four steps all go through option 0).
        dv = torch.stack([
            torch.where(dbl | ((used & 1) == 0), hi.index_select(0, game), 0),
            torch.where(~dbl & ((used & 2) == 0), lo.index_select(0, game), 0),
        ], dim=1)
        rows, opt, src = _legal_steps(b, dv)
        if len(rows) == 0:
            break
        b, keys = _play(b, keys, rows, src, dv.view(-1).index_select(0, rows * 2 + opt))
        was = used.index_select(0, rows)
        keys[0] += ((was | (opt + 1)) - was) * _USED  # set bit opt of the dice used
        if k > 0:  # one step from one board never repeats a board (another die is another row)
            b, keys = _distinct(b, keys)
        depth.index_fill_(0, keys[0] // _GAME, k + 1)
        levels.append((b, keys))

    # "Both dice must be used when possible" (all four of a double): each game keeps the
    # plays of its deepest level.
    # All levels' rows together, then one mask of the rows each game keeps (one wait for its count).
    all_boards = torch.cat([lb for lb, _ in levels])
    all_keys = torch.cat([lk for _, lk in levels], dim=1)
    level = torch.cat([torch.full((lb.shape[0],), k, device=dev) for k, (lb, _) in enumerate(levels)])
    game, used = all_keys[0] // _GAME, (all_keys[0] // _USED) % 4
    keep = depth.index_select(0, game) == level
    # "If either number can be played but not both, the larger one must be played": in a game whose plays use one
    # die, the plays of the smaller die go when the larger has any.
    larger = torch.zeros(n_games, dtype=torch.int64, device=dev).index_add_(0, game, (keep & (used == 1)).long())
    keep &= ~((level == 1) & (used == 2) & (larger.index_select(0, game) > 0))
    rows = _rows_of(keep)
    flat_keys = all_keys.index_select(1, rows)
    flat_keys[0] -= (flat_keys[0] // _USED) % 4 * _USED  # the same board from either die is one play
    out, out_keys = _distinct(all_boards.index_select(0, rows), flat_keys)
    out_game = out_keys[0] // _GAME
    offsets = torch.searchsorted(out_game, torch.arange(n_games + 1, device=dev))  # the rows come sorted by game
    return out, offsets
