"""What a label of the rounds costs and how close the cheap ones are to the full 2-ply search.

On candidate positions of the kind the rounds label (the afterstates of self-play positions' four best 0-ply
plays, ``bgnet.trainer.round_positions.candidate_positions``), times on one core, per position, the net's 1-ply search,
its 2-ply search with the last level pruned to pubeval's best K plays of each roll
(``bgnet.trainer.labels.evaluate_pruned``, ``--label ply2 --label-top K``), and the full 2-ply search, and prints
each one's equity RMS and mean difference from the full 2-ply values of the same positions.

    python bench/labels.py [--model checkpoints/bgnet.pt] [--positions 100] [--tops 6,10] [--seed 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bgnet.nets.model import net_from_checkpoint, read_checkpoint  # noqa: E402
from bgnet.core.probs import equities  # noqa: E402
from bgnet.trainer.labels import evaluate_pruned  # noqa: E402
from bgnet.play.search import evaluate_boards  # noqa: E402
from bgnet.trainer.inference import probs_fn_of  # noqa: E402
from bgnet.trainer.round_positions import candidate_positions, collect_positions  # noqa: E402

BATCH = 20
"""Positions searched together (the rounds' 2-ply labelling uses batches of about 100)."""


def timed(label: Callable[[np.ndarray], np.ndarray], boards: np.ndarray) -> tuple[np.ndarray, float]:
    """(equities (N,), ms per position) of ``label`` over ``boards`` in batches, after a warm-up batch."""
    label(boards[:4])
    t = time.perf_counter()
    probs = np.concatenate([label(boards[s:s + BATCH]) for s in range(0, len(boards), BATCH)])
    return equities(probs.astype(np.float32)), (time.perf_counter() - t) * 1000 / len(boards)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "checkpoints" / "bgnet.pt"))
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--tops", default="6,10", help="the K of the pruned 2-ply rows, comma-separated")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    fn = probs_fn_of(net_from_checkpoint(read_checkpoint(args.model), f"checkpoint {args.model!r}"))
    boards = collect_positions(fn, args.positions, args.seed)
    cands = candidate_positions(fn, boards, 4, args.positions, args.seed + 1, grouped=True)
    full, full_ms = timed(lambda b: evaluate_boards(fn, b, 2), cands)
    rows = [("1-ply", *timed(lambda b: evaluate_boards(fn, b, 1), cands))]
    for k in (int(t) for t in args.tops.split(",")):
        def pruned(b: np.ndarray, k: int = k) -> np.ndarray:
            return evaluate_pruned(fn, b, 2, k)
        rows.append((f"2-ply, last level pubeval's best {k}", *timed(pruned, cands)))
    print(f"{len(cands)} candidate positions, {args.model}, one torch thread")
    print(f"{'label':<36} {'ms a position':>14} {'RMS from 2-ply':>15} {'mean diff':>10}")
    for name, eq, ms in rows:
        print(f"{name:<36} {ms:>14.1f} {np.sqrt(np.mean((eq - full) ** 2)):>15.4f} {np.mean(eq - full):>+10.4f}")
    print(f"{'2-ply (every play)':<36} {full_ms:>14.1f} {0:>15.4f} {0:>+10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
