"""What a position costs each shipped net and each feature encoding, one thread (issue 34's cost column).

Boards are the afterstates of seeded random games (every play of one random roll of the positions after a few
random plies, turned round for the side on roll), so sibling plays sit side by side as in a search. Each figure
is the median of several timed passes over all of them, in microseconds a board:

* ``encode vN``: ``bgnet.features.registry.encode(boards, version=N)``, the dense encoding (features only);
* ``release``, ``pruning``, ``student``: ``probs_of_boards`` of ``checkpoints/bgnet.npz`` and the companion nets
  that ship beside it (the fused kernel: encoding and layers);
* ``release bf16``: the release in bfloat16 (``bgnet.nets.bf16net.Bf16Net``, oneDNN's products, AMX where the
  CPU has it), all boards in one call; ``release/32`` and ``release bf16/32``: the same in calls of 32 boards
  (about one decision's plays), where the bfloat16 net pays for a whole block of 256.

    python bench/net_cost.py              # a table
    python bench/net_cost.py --json       # one JSON object
    python bench/net_cost.py --boards 20000 --repeats 9
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # (the kernels run on one thread)
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgnet.core.movegen import generate_plays, swap_sides_batch  # noqa: E402
from bgnet.core.position import Position  # noqa: E402
from bgnet.features.registry import encode  # noqa: E402
from bgnet.nets.fastnet import NumpyNet, load_numpy_net  # noqa: E402
from bgnet.nets.pruning import load_pruning_net, load_student_net  # noqa: E402
from bgnet.play.agents import checkpoint_path  # noqa: E402


def sample_boards(n: int, seed: int, plies: int = 6) -> np.ndarray:
    """``n`` boards (n, 26) int8: every play of a random roll after ``plies`` random plays from the opening, game by
    game (each game gives at least one play, so ``n`` games give enough)."""
    rng = np.random.default_rng(seed)
    games = max(1, n)
    boards = np.repeat(np.array(Position.start().board, np.int8)[None, :], games, axis=0)
    after = boards
    for _ in range(plies):
        dice = rng.integers(1, 7, (len(boards), 2)).astype(np.int8)
        after, _s, _n, offsets = generate_plays(boards, dice)
        pick = offsets[:-1] + (rng.random(len(boards)) * np.diff(offsets)).astype(np.int64)
        boards = swap_sides_batch(after[pick])
    return np.ascontiguousarray(swap_sides_batch(after)[:n])


def micros_per_board(fn: Callable[[np.ndarray], object], boards: np.ndarray, repeats: int) -> float:
    """Median over ``repeats`` timed passes of ``fn(boards)``, in microseconds a board (one warm-up pass first)."""
    fn(boards[:64])
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(boards)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / len(boards) * 1e6


def in_calls_of(fn: Callable[[np.ndarray], object], size: int, boards: np.ndarray) -> None:
    """``fn`` on ``boards`` ``size`` at a time."""
    for i in range(0, len(boards), size):
        fn(boards[i:i + size])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", type=int, default=40000, help="boards to time (default 40000)")
    ap.add_argument("--repeats", type=int, default=7, help="timed passes, the median is printed (default 7)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args(argv)
    boards = sample_boards(args.boards, args.seed)
    release_path = checkpoint_path("default")
    nets: dict[str, NumpyNet | None] = {"release": load_numpy_net(release_path),
                                        "pruning": load_pruning_net(release_path),
                                        "student": load_student_net(release_path)}
    figures: dict[str, float] = {}
    for version in (1, 2):
        figures[f"encode v{version}"] = micros_per_board(functools.partial(encode, version=version), boards,
                                                         args.repeats)
    for name, net in nets.items():
        if net is not None:
            figures[name] = micros_per_board(net.probs_of_boards, boards, args.repeats)
    from bgnet.nets.bf16net import Bf16Net, cpu_model, has_amx

    release = nets["release"]
    assert release is not None
    bf16 = Bf16Net(release)
    figures["release bf16"] = micros_per_board(bf16.probs_of_boards, boards, args.repeats)
    for name, fn in (("release/32", release.probs_of_boards), ("release bf16/32", bf16.probs_of_boards)):
        figures[name] = micros_per_board(functools.partial(in_calls_of, fn, 32), boards[:4096], args.repeats)
    if args.json:
        print(json.dumps({"boards": len(boards), "repeats": args.repeats, "us_per_board": figures, "amx": has_amx(),
                          "cpu": cpu_model(), "python": platform.python_version()}))
        return 0
    print(f"{len(boards)} boards, median of {args.repeats} passes, one thread; {cpu_model()}, AMX tiles: {has_amx()}")
    for name, us in figures.items():
        print(f"  {name:<16} {us:7.3f} us a board")
    return 0


if __name__ == "__main__":
    sys.exit(main())
