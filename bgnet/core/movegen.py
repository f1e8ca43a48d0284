"""Legal moves: the typed API over the numba kernels in ``_movegen_kernels``.

``legal_moves(pos, dice)`` gives every distinct legal play (distinct by
afterstate) as ``Move`` objects; ``generate_afterstates(boards, dice)`` gives the
afterstates of a whole batch in one flat array for the trainer.

Every entry point is re-entrant: the kernels release the GIL, so each thread
gets its own hash table and output buffers (``threading.local``), made on its
first call. movegen sits below ``bgnet.core.position`` (whose ``legal_moves`` method
calls it): afterstates are built by the class of the position passed in.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Sequence

import numpy as np

from bgnet.core import _movegen_kernels as _k
from bgnet.core.errors import BgnetError, InvalidDiceError  # InvalidDiceError is re-exported: raised here
from bgnet.core.notation import Move

if TYPE_CHECKING:
    from bgnet.core.position import Position

class _ThreadBuffers(threading.local):
    """Kernel buffers of one thread (hash table, outputs), made on the thread's first call: the kernels
    release the GIL, so threads must never share them."""

    def __init__(self) -> None:
        self.scratch: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = _k.new_scratch()
        self.single: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] = (
            _k.new_single_buffers())


_LOCAL = _ThreadBuffers()

def parse_dice(dice: Sequence[int] | str) -> tuple[int, int]:
    """Dice as a pair of ints from ``(3, 1)``, ``"31"`` or ``"3-1"``; a clear error otherwise."""
    if isinstance(dice, str):
        text = dice.strip().replace("-", "").replace(",", "").replace(" ", "")
        if len(text) != 2 or not text.isdigit():
            raise InvalidDiceError(f"dice {dice!r} should be two digits from 1 to 6, like 31 or 3-1")
        values = [int(c) for c in text]
    else:
        try:
            values = [int(d) for d in dice]
        except (TypeError, ValueError):
            raise InvalidDiceError(f"dice {dice!r} should be two numbers from 1 to 6") from None
        if len(values) != 2:
            raise InvalidDiceError(f"dice {dice!r} should be two numbers from 1 to 6, got {len(values)}")
    if not all(1 <= v <= 6 for v in values):
        raise InvalidDiceError(f"dice {dice!r} should be two numbers from 1 to 6")
    return values[0], values[1]


def high_first(dice: Sequence[int]) -> tuple[int, int]:
    """A roll with the higher die first, the order GNU Backgammon and XG print it in: ``(6, 5)``, not ``(5, 6)``."""
    d1, d2 = int(dice[0]), int(dice[1])
    return (d1, d2) if d1 >= d2 else (d2, d1)


def roll_text(dice: Sequence[int], sep: str = "-") -> str:
    """A roll as every output prints it, the higher die first: ``6-5`` (``65`` with ``sep=""``)."""
    d1, d2 = high_first(dice)
    return f"{d1}{sep}{d2}"


def generate_afterstates(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Afterstates of every legal play for B boards (B, 26) int8 and dice (B, 2).

    Returns ``(after, offsets)``: ``after`` is (N, 26) int8, seen from each mover,
    and the plays of board ``i`` are ``after[offsets[i]:offsets[i + 1]]``.
    """
    after, _steps, _n, offsets = generate_plays(boards, dice)
    return after, offsets


def generate_plays(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Like ``generate_afterstates`` but also the steps: ``(after, steps (N, 8), nsteps (N,), offsets)``."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int8)
    if boards.ndim != 2 or boards.shape[1] != 26 or dice.shape != (boards.shape[0], 2):
        raise BgnetError(f"boards must be (B, 26) and dice (B, 2), got {boards.shape} and {dice.shape}")
    return _k.gen_batch(boards, dice, *_scratch())


def _scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """This thread's hash-table scratch (made on first use)."""
    return _LOCAL.scratch


def _single() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """This thread's output buffers for one position (made on first use)."""
    return _LOCAL.single


def swap_sides_batch(boards: np.ndarray) -> np.ndarray:
    """Boards (N, 26) int8 turned round, so that the other side of each is on roll."""
    out: np.ndarray = _k.swap_sides_batch(np.ascontiguousarray(boards, dtype=np.int8))
    return out


def legal_moves(pos: "Position", dice: Sequence[int] | str) -> list[Move]:
    """Every distinct legal play of ``dice`` in ``pos``; a single empty move when none exists."""
    d1, d2 = parse_dice(dice)
    local = _LOCAL
    out_b, out_s, out_n, out_d, b, steps = local.single
    n = _k.gen_single(np.array(pos.board, dtype=np.int8), d1, d2, out_b, out_s, out_n, out_d, b, steps, *local.scratch)
    after = type(pos)._trusted_rows(out_b[:n].tolist())
    return Move._from_kernel(after, out_s[:n].tolist(), out_n[:n].tolist(), out_d[:n].tolist())


def afterstate_boards(moves: Sequence[Move]) -> np.ndarray:
    """The (N, 26) int8 afterstates of plays from ``legal_moves``, which always sets ``after``."""
    boards = []
    for m in moves:
        assert m.after is not None, "a play from legal_moves always carries its afterstate"
        boards.append(m.after.board)
    return np.array(boards, np.int8)


def generate_plays_parallel(boards: np.ndarray, dice: np.ndarray, threads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``generate_plays`` spread over ``threads`` Python threads (worth it on many-core machines).

    ``gen_batch`` releases the GIL (``nogil=True``), so each thread runs it on a
    contiguous slice of the boards with its own hash-table scratch; the slices'
    outputs are joined in order, so the result equals ``generate_plays``.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int8)
    n = len(boards)
    if threads <= 1 or n < 2:
        return generate_plays(boards, dice)
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, n, min(threads, n) + 1).astype(np.int64)
    slices = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    with ThreadPoolExecutor(len(slices)) as pool:
        parts = list(pool.map(lambda ab: _k.gen_batch(boards[ab[0]:ab[1]], dice[ab[0]:ab[1]], *_k.new_scratch()), slices))
    starts = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
    offsets = np.concatenate([p[3][:-1] + s for p, s in zip(parts, starts)] + [[starts[-1] + len(parts[-1][0])]])
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), offsets.astype(np.int64))
