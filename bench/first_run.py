"""The first ``bgnet hint`` after an install: wall and CPU seconds with empty caches, then the runs after it.

Each repeat gives ``bgnet hint 4HPwATDgc/ABMA 31`` a fresh numba cache (``NUMBA_CACHE_DIR``) and a fresh bgnet
cache (``BGNET_CACHE``: no weight cache, no bear-off database), as after ``pip install`` in a new venv, and runs
it three times: cold, second, third. (A second process compiling the net's kernels while the command compiled
the move generator was tried: 16.5 s against 13.9 s on the two-core VM, so it went.)

    python bench/first_run.py [--repeats 3] [--json]
    python bench/first_run.py --kernels [-- rollout 4HPwATDgc/ABMA 31]   # where one cold command's compile goes

``--kernels`` runs one cold command (default the hint) in this process with fresh caches and prints each kernel
numba compiles, longest first, with the seconds it took (a callee's time is inside its caller's) and what called it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMAND = [sys.executable, "-m", "bgnet.cli.main", "hint", "4HPwATDgc/ABMA", "31"]


def timed_run(env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(COMMAND, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_install() -> list[tuple[float, float]]:
    """Three runs on fresh caches: cold, second, third."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(tmp, "numba"), "BGNET_CACHE": os.path.join(tmp, "bg")}
        return [timed_run(env) for _ in range(3)]


def kernel_compiles(command: list[str], shown: int = 30) -> int:
    """Run the bgnet ``command`` once with empty caches in this process, print its kernels' compile times and return
    its exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(tmp, "numba")
        os.environ["BGNET_CACHE"] = os.path.join(tmp, "bg")
        from numba.core import event

        open_compiles: list[tuple[str, float]] = []
        done: list[tuple[float, int, str, str]] = []

        class Recorder(event.Listener):  # type: ignore[misc]
            def on_start(self, compile_event: event.Event) -> None:
                func = compile_event.data["dispatcher"].py_func
                open_compiles.append((f"{func.__module__}.{func.__qualname__}", time.perf_counter()))

            def on_end(self, compile_event: event.Event) -> None:
                name, t0 = open_compiles.pop()
                caller = open_compiles[-1][0] if open_compiles else ""
                done.append((time.perf_counter() - t0, len(open_compiles), name, caller))

        event.register("numba:compile", Recorder())
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from bgnet.cli.main import main as bgnet_main

        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # the command's own output is not the point here
            try:
                status = bgnet_main(command)
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else 1
        total = time.perf_counter() - t0
    print(f"bgnet {' '.join(command)}: {total:.1f} s in all, "
          f"{sum(d for d, depth, _n, _c in done if depth == 0):.1f} s compiling")
    for seconds, depth, name, caller in sorted(done, reverse=True)[:shown]:
        print(f"  {seconds:6.2f} s  {name}" + (f"  (inside {caller}, depth {depth})" if caller else ""))
    return status  # the command's own exit status: a bad command says why on stderr and fails here too


def main() -> int:
    """Time the repeats and print medians (or, with ``--kernels``, one cold command's compiles)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--kernels", action="store_true", help="print where one cold command's compile time goes")
    p.add_argument("command", nargs="*", help="with --kernels: the bgnet command (default: hint 4HPwATDgc/ABMA 31)")
    args = p.parse_args()
    if args.kernels:
        return kernel_compiles(args.command or COMMAND[3:])
    runs: dict[str, list[list[tuple[float, float]]]] = {"hint": [one_install() for _ in range(args.repeats)]}
    out = {"cpus": os.cpu_count(), "repeats": args.repeats}
    for name, rs in runs.items():
        for i, label in enumerate(("cold", "second", "third")):
            out[f"{name}_{label}_wall_s"] = round(statistics.median(r[i][0] for r in rs), 2)
            out[f"{name}_{label}_cpu_s"] = round(statistics.median(r[i][1] for r in rs), 2)
        out[f"{name}_cold_wall_all"] = [round(r[0][0], 2) for r in rs]
    if args.json:
        print(json.dumps(out))
    else:
        for name in runs:
            print(f"{name:15s} cold {out[f'{name}_cold_wall_s']:6.2f} s wall ({out[f'{name}_cold_cpu_s']:.2f} s CPU; "
                  f"all {out[f'{name}_cold_wall_all']}), second {out[f'{name}_second_wall_s']:.2f} s, "
                  f"third {out[f'{name}_third_wall_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
