"""Move generation is re-entrant: many threads at once give exactly the single-threaded results.

The kernels release the GIL, so before the buffers became per-thread two threads
calling ``legal_moves`` or ``generate_plays`` together wrote into one hash table
and dropped or duplicated plays.
"""

from __future__ import annotations

import threading

import numpy as np

from bgnet import Position, legal_moves
from bgnet.core.movegen import generate_plays, swap_sides_batch

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
THREADS = 8


def _positions(n_games: int, seed: int) -> list[Position]:
    """Positions met in seeded random-move games (every stage of the game)."""
    rng = np.random.default_rng(seed)
    out: list[Position] = []
    for _ in range(n_games):
        pos = Position.start()
        for _ply in range(200):
            out.append(pos)
            moves = legal_moves(pos, tuple(int(d) for d in rng.integers(1, 7, 2)))
            after = moves[int(rng.integers(len(moves)))].after
            assert after is not None
            if after.outcome() is not None:
                break
            pos = after.swap_sides()
    return out


def _single_key(pos: Position, roll: tuple[int, int]) -> list[tuple[tuple[int, ...], tuple[tuple[int, int], ...], int]]:
    return [(m.after.board if m.after else (), m.steps, m.hits) for m in legal_moves(pos, roll)]


def _run_threads(work: "list[object]", fn: "object") -> list[object]:
    """Run ``fn(i)`` for every item index in THREADS threads started together; results by index."""
    results: list[object] = [None] * len(work)
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            barrier.wait()
            for i in range(k, len(work), THREADS):
                results[i] = fn(i)  # type: ignore[operator]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_legal_moves_from_many_threads_equal_single_threaded() -> None:
    positions = _positions(12, seed=3)
    work = [(p, r) for p in positions for r in ROLLS][::3]
    expected = [_single_key(p, r) for p, r in work]
    for _round in range(2):
        got = _run_threads(work, lambda i: _single_key(*work[i]))  # type: ignore[misc]
        assert got == expected


def test_generate_plays_from_many_threads_equal_single_threaded() -> None:
    positions = _positions(12, seed=5)
    boards = np.array([p.board for p in positions], np.int8)
    rng = np.random.default_rng(7)
    chunks = []
    for lo in range(0, len(boards), 40):
        b = boards[lo:lo + 40]
        chunks.append((b, rng.integers(1, 7, size=(len(b), 2)).astype(np.int8)))
    expected = [generate_plays(b, d) for b, d in chunks]
    got = _run_threads(chunks, lambda i: generate_plays(*chunks[i]))  # type: ignore[misc]
    for want, have in zip(expected, got):
        for w, h in zip(want, have):  # type: ignore[call-overload]
            assert np.array_equal(w, h)
    turned = _run_threads(chunks, lambda i: swap_sides_batch(chunks[i][0]))  # type: ignore[misc]
    for (b, _d), t in zip(chunks, turned):
        assert np.array_equal(t, -b[:, ::-1])
