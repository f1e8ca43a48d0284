"""Pruned search: what the released net's pruning net saves and costs, against the full search in the same run.

Positions come from seeded self-play of the released net, each with a random roll.
For each ply, every position's plays are ranked by ``rank_moves`` with the full
search (every reply valued by the net) and with the pruning net keeping each roll's
best ``keep`` replies. Printed: both times (one thread, wall), how often both name the
same best play, and the equity the pruned choice gives up by the full search's own
values (mean and worst). ``--recall`` also counts, over one roll's plays of more
self-play positions, how often the net's 0-ply best play is among the pruning net's
best ``keep``.

    python bench/pruning.py                               # 1 ply on 300 positions, 2 ply on 60
    python bench/pruning.py --keep 3,5,8 --positions-1ply 300 --positions-2ply 60 --recall 20000 --json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bgnet.core.position import Position  # noqa: E402
from bgnet.nets.pruning import DEFAULT_KEEP, PrunedEvaluator, load_pruning_net  # noqa: E402
from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent  # noqa: E402
from bgnet.play.search import rank_moves  # noqa: E402
from bgnet.trainer.round_positions import collect_positions  # noqa: E402


def search_rows(full: Any, pruning: Any, ply: int, n: int, keeps: list[int], seed: int) -> list[dict[str, Any]]:
    """One row per keep: time and agreement of the pruned ``ply`` search against the full one on ``n`` positions."""
    boards = collect_positions(full, n, seed)
    rng = np.random.default_rng(seed)
    dice = [tuple(int(x) for x in rng.integers(1, 7, 2)) for _ in range(n)]
    positions = [Position.from_array(b) for b in boards]
    t0 = time.perf_counter()
    ref = [rank_moves(full, p, d, ply=ply) for p, d in zip(positions, dice)]
    full_s = time.perf_counter() - t0
    rows = []
    for keep in keeps:
        ev = PrunedEvaluator(full, pruning, keep)
        t0 = time.perf_counter()
        got = [rank_moves(ev, p, d, ply=ply) for p, d in zip(positions, dice)]
        pruned_s = time.perf_counter() - t0
        loss, same, shift = [], 0, []
        for r, g in zip(ref, got):
            by_move = {str(m.move): m.equity for m in r}
            chosen = by_move[str(g[0].move)]
            loss.append(r[0].equity - chosen)
            shift.append(g[0].equity - chosen)
            same += str(g[0].move) == str(r[0].move)
        rows.append({"ply": ply, "keep": keep, "positions": n, "full_seconds": round(full_s, 2),
                     "pruned_seconds": round(pruned_s, 2), "speedup": round(full_s / pruned_s, 2),
                     "same_best": same, "mean_loss": round(float(np.mean(loss)), 5),
                     "max_loss": round(float(np.max(loss)), 4),
                     "mean_abs_equity_shift": round(float(np.mean(np.abs(shift))), 4)})
    if ply > 1:  # the yardstick: the full search one ply shallower, judged the same way
        t0 = time.perf_counter()
        got = [rank_moves(full, p, d, ply=ply - 1) for p, d in zip(positions, dice)]
        shallow_s = time.perf_counter() - t0
        loss = [r[0].equity - {str(m.move): m.equity for m in r}[str(g[0].move)] for r, g in zip(ref, got)]
        rows.append({"ply": ply, "keep": None, "shallower": ply - 1, "positions": n, "full_seconds": round(full_s, 2),
                     "pruned_seconds": round(shallow_s, 2), "speedup": round(full_s / shallow_s, 2),
                     "same_best": sum(str(g[0].move) == str(r[0].move) for r, g in zip(ref, got)),
                     "mean_loss": round(float(np.mean(loss)), 5), "max_loss": round(float(np.max(loss)), 4),
                     "mean_abs_equity_shift": None})
    return rows


def recall_rows(full: Any, pruning: Any, n: int, keeps: list[int], seed: int) -> list[dict[str, Any]]:
    """How often the net's 0-ply best play of a roll is among the pruning net's best ``keep`` (rolls with a choice),
    the equity lost when it is not, and the share of plays the net still values."""
    from bgnet.core.probs import equities
    from bgnet.trainer.pruning_fit import pruning_rows

    cand, offsets, probs = pruning_rows(full, n, seed)
    big = -equities(probs.astype(np.float64))
    small = -equities(pruning.probs_of_boards(cand).astype(np.float64))
    rows = []
    for keep in keeps:
        miss, loss, choices, kept = 0, 0.0, 0, 0
        for a, b in zip(offsets[:-1], offsets[1:]):
            top = np.argsort(-small[a:b], kind="stable")[:keep]
            kept += len(top)
            if b - a > 1:
                choices += 1
                best, got = big[a:b].max(), big[a:b][top].max()
                miss += got < best
                loss += best - got
        rows.append({"keep": keep, "rolls": choices, "best_kept": round(1.0 - miss / choices, 4),
                     "mean_loss": round(loss / choices, 5), "plays_valued": round(kept / len(cand), 3)})
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keep", default=str(DEFAULT_KEEP), help="comma-separated keeps to try (default: the default)")
    p.add_argument("--positions-1ply", type=int, default=300)
    p.add_argument("--positions-2ply", type=int, default=60)
    p.add_argument("--recall", type=int, default=0, help="self-play positions for the recall rows (0: skip)")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    keeps = [int(k) for k in args.keep.split(",")]
    full = NeuralAgent(DEFAULT_CHECKPOINT, 0, prune=False).probs_fn
    pruning = load_pruning_net(DEFAULT_CHECKPOINT)
    if pruning is None:
        print("pruning: the released net ships no pruning net (checkpoints/pruning.npz)", file=sys.stderr)
        return 2
    rank_moves(PrunedEvaluator(full, pruning), Position.start(), (3, 1), ply=1)  # warm-up: kernels from cache
    out: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count(), "seed": args.seed,
                           "search": [], "recall": []}
    for ply, n in ((1, args.positions_1ply), (2, args.positions_2ply)):
        if n > 0:
            out["search"] += search_rows(full, pruning, ply, n, keeps, args.seed)
    if args.recall:
        out["recall"] = recall_rows(full, pruning, args.recall, keeps, args.seed + 1)
    if args.json:
        print(json.dumps(out))
        return 0
    for r in out["search"]:
        if r["keep"] is None:
            print(f"  yardstick: the full {r['shallower']}-ply search's choice, {r['pruned_seconds']} s; same best "
                  f"play {r['same_best']}/{r['positions']}; equity given up by the full {r['ply']}-ply values mean "
                  f"{r['mean_loss']:.5f}, worst {r['max_loss']:.4f}")
            continue
        print(f"{r['ply']} ply, keep {r['keep']}, {r['positions']} positions: full {r['full_seconds']} s, pruned "
              f"{r['pruned_seconds']} s ({r['speedup']}x); same best play {r['same_best']}/{r['positions']}; "
              f"equity given up (full search's values) mean {r['mean_loss']:.5f}, worst {r['max_loss']:.4f}")
    for r in out["recall"]:
        print(f"recall, keep {r['keep']}: the net's best play kept in {100 * r['best_kept']:.1f}% of "
              f"{r['rolls']} rolls, {r['mean_loss']:.5f} lost a roll, {100 * r['plays_valued']:.0f}% of plays valued")
    return 0


if __name__ == "__main__":
    sys.exit(main())
