"""Move-generation speed of the torch generator next to the numba one, on the same positions in one run.

The positions are a fixed, seeded sample of random-move self-play games (every
stage of the game), each with all 21 rolls; both generators get the whole batch
in one call, and the torch one runs on the CPU and, when there is one, the GPU.

    python bench/movegen_torch.py                  # a table
    python bench/movegen_torch.py --threads 1      # torch on one CPU thread
    python bench/movegen_torch.py --json           # one JSON object
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from typing import Callable

import numpy as np
import torch

from bgnet import generate_afterstates, generate_afterstates_torch

from movegen import ROLLS, selfplay_boards  # bench/movegen.py: the same seeded positions


def timed(run: Callable[[], int], repeats: int) -> tuple[float, int]:
    """Median seconds of ``run()`` after one warm-up call, and the afterstates it returned."""
    n = run()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="self-play games the positions come from")
    parser.add_argument("--every", type=int, default=3, help="keep one ply in this many")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    boards = selfplay_boards(7, args.games, args.every)
    boards = np.repeat(boards, len(ROLLS), axis=0)
    dice = np.tile(np.array(ROLLS, np.int8), (len(boards) // len(ROLLS), 1))
    rows: dict[str, dict[str, float]] = {}

    def numba_run() -> int:
        return len(generate_afterstates(boards, dice)[0])

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    runs: dict[str, Callable[[], int]] = {"numba (cpu)": numba_run}
    for device in devices:
        tb, td = torch.from_numpy(boards).to(device), torch.from_numpy(dice).to(device)

        def torch_run(tb: torch.Tensor = tb, td: torch.Tensor = td, device: str = device) -> int:
            after, _ = generate_afterstates_torch(tb, td)
            if device == "cuda":
                torch.cuda.synchronize()
            return len(after)

        runs[f"torch ({device})"] = torch_run
    counts = set()
    for name, run in runs.items():
        seconds, n = timed(run, args.repeats)
        counts.add(n)
        rows[name] = {"positions_per_s": len(boards) / seconds, "afterstates_per_s": n / seconds, "seconds": seconds}
    assert len(counts) == 1, f"the generators disagree on the number of afterstates: {counts}"

    info = {"positions": len(boards), "afterstates": counts.pop(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "machine": platform.processor() or platform.machine(), "results": rows}
    if args.json:
        print(json.dumps(info, indent=2))
        return
    print(f"{info['positions']} positions x rolls, {info['afterstates']} afterstates, "
          f"torch {info['torch']} on {info['torch_threads']} CPU thread(s)")
    print(f"{'generator':<14} {'positions/s':>12} {'afterstates/s':>14} {'seconds':>9}")
    for name, row in rows.items():
        print(f"{name:<14} {row['positions_per_s']:>12,.0f} {row['afterstates_per_s']:>14,.0f} {row['seconds']:>9.3f}")


if __name__ == "__main__":
    main()
