"""Move-generation speed: the batched kernel, ``legal_moves`` and, when installed, ``gnubg_nn.moves``.

The positions are a fixed, seeded sample of a few hundred random-move self-play
games (every stage of the game, not only the opening), each with all 21 rolls.

    python bench/movegen.py            # a table
    python bench/movegen.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time

import numpy as np

from bgnet import Position, generate_afterstates, legal_moves

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


def selfplay_boards(seed: int, games: int, every: int) -> np.ndarray:
    """Boards (side on roll's view) met in ``games`` seeded random-move games, one ply in ``every`` kept."""
    rng = np.random.default_rng(seed)
    boards = np.tile(np.array(Position.start().board, np.int8), (games, 1))
    kept: list[np.ndarray] = []
    ply = 0
    while len(boards):
        if ply % every == 0:
            kept.append(boards.copy())
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        after, off = generate_afterstates(boards, dice)
        pick = off[:-1] + (rng.random(len(boards)) * np.diff(off)).astype(np.int64)
        boards = np.ascontiguousarray(-after[pick][:, ::-1])
        alive = (boards[:, 1:] > 0).any(axis=1) & (boards[:, :25] < 0).any(axis=1)
        boards = np.ascontiguousarray(boards[alive])
        ply += 1
    return np.concatenate(kept)


def with_all_rolls(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each board repeated once per roll, and the matching dice."""
    dice = np.array(ROLLS, np.int8)
    return np.repeat(boards, len(ROLLS), axis=0), np.tile(dice, (len(boards), 1))


def bench_batched(boards: np.ndarray, dice: np.ndarray, repeats: int) -> tuple[float, int]:
    """Median afterstates per second of ``generate_afterstates`` on the whole batch, and the count."""
    after, _ = generate_afterstates(boards, dice)  # compile / load the cache
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        after, _ = generate_afterstates(boards, dice)
        times.append(time.perf_counter() - t0)
    return len(after) / statistics.median(times), len(after)


def bench_legal_moves(positions: list[Position], repeats: int) -> tuple[float, float, float]:
    """``legal_moves`` over every position x roll: (median us per call, mean us, afterstates per second)."""
    legal_moves(positions[0], (3, 1))
    calls: list[float] = []
    total_n, total_t = 0, 0.0
    clock = time.perf_counter_ns
    for _ in range(repeats):
        for pos in positions:
            for roll in ROLLS:
                t0 = clock()
                moves = legal_moves(pos, roll)
                dt = clock() - t0
                calls.append(dt / 1000)
                total_t += dt / 1e9
                total_n += len(moves)
    return statistics.median(calls), statistics.fmean(calls), total_n / total_t


def bench_gnubg(boards: np.ndarray, repeats: int) -> tuple[float, int] | None:
    """Median afterstates per second of ``gnubg_nn.moves`` over the same boards x rolls, or None."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    pairs = [[list(a) for a in Position(b.tolist()).boards()] for b in boards]
    moves = gnubg_nn.moves
    times = []
    count = 0
    for _ in range(repeats):
        count = 0
        t0 = time.perf_counter()
        for gb in pairs:
            for d1, d2 in ROLLS:
                count += len(moves(gb, d1, d2))
        times.append(time.perf_counter() - t0)
    return count / statistics.median(times), count


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table or (``--json``) one object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1, help="seed of the self-play games")
    ap.add_argument("--games", type=int, default=200, help="self-play games to sample positions from")
    ap.add_argument("--every", type=int, default=4, help="keep one ply in this many")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats (the median is reported)")
    ap.add_argument("--contact", type=int, default=300, help="contact positions timed with legal_moves")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)

    boards = selfplay_boards(args.seed, args.games, args.every)
    batch_boards, batch_dice = with_all_rolls(boards)
    per_s, n_after = bench_batched(batch_boards, batch_dice, args.repeats)
    positions = [Position(b.tolist()) for b in boards]
    contact = [p for p in positions if not p.is_race()][:: max(1, len(positions) // args.contact)][: args.contact]
    gc.collect()
    gc.freeze()  # the benchmark's own objects should not make the collector slower during the timing
    lm_median, lm_mean, lm_per_s = bench_legal_moves(contact, 1)
    gnubg = bench_gnubg(boards, args.repeats)
    result: dict[str, object] = {
        "positions": len(boards),
        "position_rolls": len(batch_boards),
        "afterstates": n_after,
        "afterstates_per_s": round(per_s),
        "legal_moves_positions": len(contact),
        "legal_moves_us_median": round(lm_median, 2),
        "legal_moves_us_mean": round(lm_mean, 2),
        "legal_moves_afterstates_per_s": round(lm_per_s),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if gnubg is not None:
        result["gnubg_afterstates_per_s"] = round(gnubg[0])
        result["gnubg_afterstates"] = gnubg[1]
        result["ratio_batched_to_gnubg"] = round(per_s / gnubg[0], 2)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{len(boards)} self-play positions x 21 rolls = {len(batch_boards)} (position, roll) pairs")
    print(f"batched generate_afterstates: {per_s / 1e6:8.2f} M afterstates/s ({n_after} afterstates)")
    print(f"legal_moves on {len(contact)} contact positions x 21 rolls: median {lm_median:.1f} us, "
          f"mean {lm_mean:.1f} us per call, {lm_per_s / 1e6:.2f} M afterstates/s")
    if gnubg is None:
        print("gnubg_nn.moves: not installed (pip install gnubg-nn)")
    else:
        print(f"gnubg_nn.moves:               {gnubg[0] / 1e6:8.2f} M afterstates/s ({gnubg[1]} afterstates)")
        print(f"ratio batched / gnubg:        {per_s / gnubg[0]:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
