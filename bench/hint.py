"""``bgnet hint`` latency for a typical contact position at 0, 1 and 2 plies, warm and cold.

Warm: ``bgnet.play.hint.move_hint`` in this process with the net already loaded and
the kernels compiled (median of repeats), on the evaluator ``bgnet hint`` and ``bgnet serve`` use
(``--engine agent``: ``bgnet.play.agents.NeuralAgent``'s, the numba forward pass with the bear-off
database) or on the torch net (``--engine torch``: ``bgnet.nets.model.NetEvaluator``, what training uses). Cold: the wall time of a fresh
``python -m bgnet hint POSITION DICE --ply N`` process (imports, model load,
kernels from numba's cache, the search, printing), median of a few runs.
One torch thread throughout.

    python bench/hint.py            # a table
    python bench/hint.py --json     # one JSON object with warm_ms and cold_ms keyed by ply
    python bench/hint.py --plies 0 --model M --engine torch   # the warm hint through torch instead
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent  # noqa: E402
from bgnet.play.hint import move_hint  # noqa: E402
from bgnet.nets.model import NetEvaluator  # noqa: E402
from bgnet.core.position import Position  # noqa: E402

# A middle game with contact for both sides (X on roll): X has split his back checkers' partner
# blots on the 5 and 3 points; O holds his 24 and 23 split and has 15 checkers in play.
#   X: 24:2 13:4 8:3 6:4 5:1 3:1      O: 24:1 23:1 13:5 8:3 6:5
POSITION = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})
DICE = "42"
PLIES = (0, 1, 2)


ENGINES = ("agent", "torch")


def warm_ms(ply: int, repeats: int, model: Path = DEFAULT_CHECKPOINT, engine: str = "agent",
            prune: bool = True) -> tuple[float, int]:
    """Median milliseconds of one in-process move hint at ``ply`` on ``engine`` (see the module docstring), and
    how many plays were searched to it."""
    fn = (NeuralAgent(model, ply, prune).evaluator if engine == "agent"
          else NetEvaluator.from_checkpoint(model).probs_of_boards)
    hint = move_hint(fn, POSITION, DICE, ply=ply)  # warm-up: kernels and torch
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        move_hint(fn, POSITION, DICE, ply=ply)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times), sum(m.ply == ply for m in hint.moves)


def cold_ms(ply: int, repeats: int, model: Path = DEFAULT_CHECKPOINT, prune: bool = True) -> float:
    """Median wall milliseconds of a fresh ``bgnet hint`` process at ``ply``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "bgnet", "hint", POSITION.position_id(), DICE, "--ply", str(ply), "--model", str(model)]
    cmd += [] if prune else ["--no-prune"]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT, env=env)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--warm-repeats", type=int, default=9, help="in-process repeats per ply (median)")
    parser.add_argument("--cold-repeats", type=int, default=3, help="fresh processes per ply (median)")
    parser.add_argument("--model", type=Path, default=DEFAULT_CHECKPOINT, help="checkpoint (default: the shipped net)")
    parser.add_argument("--plies", default="0,1,2", help="plies to measure, comma-separated")
    parser.add_argument("--engine", choices=ENGINES, default="agent",
                        help="the warm hint's evaluator: bgnet hint's (agent) or the torch net's")
    parser.add_argument("--no-prune", action="store_true", help="searches value every reply (bgnet hint --no-prune)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warm, searched = {}, {}
    plies = tuple(int(p) for p in args.plies.split(","))
    for ply in plies:
        warm[str(ply)], searched[str(ply)] = warm_ms(ply, args.warm_repeats, args.model, args.engine, not args.no_prune)
    cold = {str(ply): cold_ms(ply, args.cold_repeats, args.model, not args.no_prune) for ply in plies}
    out = {
        "position_id": POSITION.position_id(),
        "dice": DICE,
        "warm_ms": warm,
        "cold_ms": cold,
        "plays_searched_to_full_ply": searched,
        "model": str(args.model),
        "engine": args.engine,
        "pruned": not args.no_prune,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"bgnet hint {POSITION.position_id()} {DICE} --ply N  (warm on the {args.engine} evaluator, one torch thread)")
    print(f"{'ply':>3}  {'warm ms':>9}  {'cold ms':>9}  plays at full ply")
    for ply in plies:
        k = str(ply)
        print(f"{ply:>3}  {warm[k]:9.1f}  {cold[k]:9.0f}  {searched[k]}")


if __name__ == "__main__":
    main()
