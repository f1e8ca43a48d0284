"""Whole-process seconds of a few ``bgnet`` commands, through the ``bgnet`` program and through bare ``main``.

The program (``bgnet.cli.main.program``, what the ``bgnet`` script and ``python -m bgnet`` run) keeps
the garbage collector off the objects the imports make; bare ``main`` (``python -c "...main()"``)
is the same command with the collector left as Python starts it, the reference. Each command is run
``--rounds`` times, the two entries alternated so that the machine's drift hits both; medians.

    python bench/startup.py                 # moves, a 0-ply hint and the README's 1,296-trial rollout
    python bench/startup.py --rounds 7 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "moves": ["moves", "4HPwATDgc/ABMA", "31"],
    "hint at 0-ply": ["hint", "4HPwATDgc/ABMA", "31", "--ply", "0"],
    "rollout of 1,296 trials": ["rollout", "4HPwATDgc/ABMA", "31", "--trials", "1296", "--plays", "8/5 6/5",
                                "--seed", "1"],
}
"""What a user types after ``bgnet``, by name."""

ENTRIES = {
    "program": [sys.executable, "-m", "bgnet"],
    "bare main": [sys.executable, "-c", "import sys; from bgnet.cli.main import main; sys.exit(main())"],
}
"""The two ways in: the ``bgnet`` program, and ``main`` with the collector as Python starts it."""


def seconds(argv: list[str]) -> float:
    """Wall seconds of one process running ``argv`` (its output discarded; a failure stops the bench)."""
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t0


def measure(rounds: int) -> dict[str, dict[str, list[float]]]:
    """Seconds of every command through every entry, ``rounds`` times each, alternated; one unmeasured run first
    (numba's cache and the page cache)."""
    for entry in ENTRIES.values():
        seconds(entry + COMMANDS["moves"])
    times: dict[str, dict[str, list[float]]] = {name: {e: [] for e in ENTRIES} for name in COMMANDS}
    for _ in range(rounds):
        for name, command in COMMANDS.items():
            for entry, argv in ENTRIES.items():
                times[name][entry].append(seconds(argv + command))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command through each entry (default 5)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = parser.parse_args()
    times = measure(args.rounds)
    if args.json:
        print(json.dumps({"rounds": args.rounds, "seconds": times}))
        return
    print(f"whole-process seconds, medians of {args.rounds} alternated runs (cpus: {os.cpu_count()})")
    print(f"{'command':<26} {'program':>8} {'bare main':>10} {'ratio':>6}")
    for name, by_entry in times.items():
        prog, bare = statistics.median(by_entry["program"]), statistics.median(by_entry["bare main"])
        print(f"{name:<26} {prog:8.2f} {bare:10.2f} {prog / bare:6.2f}")


if __name__ == "__main__":
    main()
