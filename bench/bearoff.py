"""Bear-off databases: build time, load time, lookup time, memory, the one-sided race's gap from best
play, and agreement with GNU Backgammon's bear-off databases (when gnubg-nn is installed).

Everything runs against a private temporary cache folder. ``python -m bgnet.nets.bearoff build`` is also
timed in a fresh subprocess, which counts the import and numba's start-up (kernels from numba's
on-disk cache), and its peak memory is the whole process's; and once more with an empty numba
cache, as on a fresh install, where numba compiles every kernel first.

    python bench/bearoff.py            # a table
    python bench/bearoff.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def rss_mib() -> float:
    """Peak resident memory of this process so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def random_boards(rng: np.random.Generator, n: int, lo: int, hi: int, table: np.ndarray) -> np.ndarray:
    """Pure bear-off boards with both sides' one-sided indices drawn from [lo, hi)."""
    out = np.zeros((n, 26), np.int8)
    ids = rng.integers(lo, hi, (n, 2))
    out[:, 1:7] = table[ids[:, 0]]
    out[:, 19:25] = -table[ids[:, 1], ::-1]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    res: dict[str, object] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BGNET_CACHE"] = tmp
        # The command a user runs, in a fresh process (import, numba start-up, build, write).
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "bgnet.nets.bearoff", "build"], capture_output=True, text=True,
                              check=True)
        res["build_command_s"] = round(time.perf_counter() - t, 2)
        res["build_command_says"] = proc.stdout.strip()
        res["build_command_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
        # The very first build of an install: numba compiles every kernel (an empty numba cache folder).
        with tempfile.TemporaryDirectory() as numba_dir:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "bgnet.nets.bearoff", "build", "--path", str(Path(tmp) / "cold.npz")],
                           capture_output=True, text=True, check=True, env={**os.environ, "NUMBA_CACHE_DIR": numba_dir})
            res["first_build_command_with_compilation_s"] = round(time.perf_counter() - t, 2)
        from bgnet.nets import bearoff as bo

        t = time.perf_counter()
        db = bo.build()
        res["build_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        bo.save(db)
        res["save_s"] = round(time.perf_counter() - t, 2)
        res["file_mib"] = round(bo.cache_path().stat().st_size / 2**20, 1)
        bo._reset_for_tests()
        t = time.perf_counter()
        db = bo.database()  # load and verify the checksum
        res["load_s"] = round(time.perf_counter() - t, 2)
        res["tables_mib"] = round(db.nbytes / 2**20, 1)
        table = bo.positions_table()
        rng = np.random.default_rng(args.seed)
        big = random_boards(rng, 100_000, 1, bo.N_POSITIONS, table)
        small = random_boards(rng, 100_000, 1, bo.N_TWO_SIDED, table)
        db.exact_probs(big[:10])
        for name, boards in (("race", big), ("two_sided", small)):
            t = time.perf_counter()
            for _ in range(5):
                db.exact_probs(boards)
            res[f"batched_us_per_board_{name}"] = round((time.perf_counter() - t) / 5 / len(boards) * 1e6, 3)
        one = big[:1]
        t = time.perf_counter()
        for _ in range(2000):
            bo.exact_probs(one)
        res["single_call_us"] = round((time.perf_counter() - t) / 2000 * 1e6, 1)
        res["this_process_peak_rss_mib"] = round(rss_mib(), 1)
        # The one-sided race against best play, on every pair of the two-sided table.
        y = np.arange(1, bo.N_TWO_SIDED)
        below = np.cumsum(db.rolls[y], 1) - db.rolls[y]  # P(the other side needs fewer than k rolls)
        gap = np.concatenate([np.abs((db.rolls[x] * (1 - below)).sum(1) - db.win[x, y])
                              for x in range(1, bo.N_TWO_SIDED)])
        res["race_vs_exact_win_max"] = round(float(gap.max()), 5)
        res["race_vs_exact_win_mean"] = round(float(gap.mean()), 6)
        try:
            import gnubg_nn
        except ImportError:
            res["gnubg"] = "gnubg-nn not installed"
        else:
            from bgnet import Position

            ids = rng.integers(1, bo.N_POSITIONS, 2000)
            gm = []
            for i in ids:
                p = np.array(gnubg_nn.bearoff_probabilities(int(i)))
                gm.append(abs(float((np.arange(1, len(p) + 1) * p).sum()) - float(db.mean_rolls(int(i)))))
            res["gnubg_one_sided_mean_rolls_max_diff"] = round(max(gm), 6)
            boards = np.concatenate([random_boards(rng, 500, 1, bo.N_TWO_SIDED, table),
                                     random_boards(rng, 500, 1, bo.N_POSITIONS, table)])
            theirs = np.array([gnubg_nn.probabilities([list(s) for s in Position(b).boards()], 0) for b in boards])
            diff = np.abs(db.exact_probs(boards)[1] - theirs)
            res["gnubg_0ply_two_sided_max_diff"] = round(float(diff[:500].max()), 6)
            res["gnubg_0ply_race_max_diff"] = round(float(diff[500:].max()), 6)
        res["cache_dir"] = str(Path(tmp))
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:40s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
