"""``python -m bgnet.nets.bearoff build|info``: build bgnet's bear-off databases into the cache file, or check it."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Sequence

from bgnet.nets.bearoff import N_POSITIONS, N_TWO_SIDED, VERSION, BearoffError, build, cache_path, load, save


def add_bearoff_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``python -m bgnet.nets.bearoff`` / ``bgnet bearoff``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="build the databases and write the cache file")
    b.add_argument("--path", default=None, help="file to write (default: the user cache file)")
    sub.add_parser("info", help="where the cache file is and whether it is valid")


def run_bearoff(args: argparse.Namespace) -> int:
    """Build or inspect the bear-off databases."""
    if args.action == "build":
        path = Path(args.path) if args.path else cache_path()
        t0 = time.perf_counter()
        db = build()
        t1 = time.perf_counter()
        save(db, path)
        t2 = time.perf_counter()
        print(f"built the bear-off databases in {t1 - t0:.1f} s ({N_POSITIONS} one-sided positions, "
              f"{N_TWO_SIDED} x {N_TWO_SIDED} two-sided), {db.nbytes / 2**20:.1f} MiB; "
              f"wrote {path} in {t2 - t1:.1f} s")
        return 0
    path = cache_path()
    try:
        db = load(path)
    except BearoffError as exc:
        print(f"{exc}; 'python -m bgnet.nets.bearoff build' makes it")
        return 1
    print(f"{path}: version {VERSION}, {db.nbytes / 2**20:.1f} MiB, checksum ok")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bgnet.nets.bearoff build|info``."""
    parser = argparse.ArgumentParser(prog="python -m bgnet.nets.bearoff", description="bgnet's bear-off databases")
    add_bearoff_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_bearoff(args)
    except (BearoffError, OSError) as exc:
        print(f"bgnet: error: {exc}", file=sys.stderr)
        return 2
