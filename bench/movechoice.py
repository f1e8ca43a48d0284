"""Move-choice error on the project's own rolled-out positions (like GNU Backgammon's benchmark sets).

``build`` samples positions from seeded self-play of the shipped net, rolls dice,
keeps those with a real choice, and rolls out the plays the net's 2-ply search
keeps (at most ``--candidates``, within 0.12 of the best) with bgnet's own
rollouts; the file (bench/data/movechoice.json by default) grows position by
position and a rerun continues it. ``score`` replays every position with an agent
and reports its mean error: the rolled-out equity of the best candidate minus that
of the agent's play, in millipoints (mEMG) per move, by kind of position
(contact, crashed, race). A play outside the rolled-out candidates gets the
largest error of its position's candidates (a lower bound) and is counted.

    python bench/movechoice.py build --positions 300 --seed 1            # resumable
    python bench/movechoice.py score --agent checkpoints/bgnet.pt --ply 0
    python bench/movechoice.py score --agent gnubg --ply 0               # a reference (needs gnubg-nn)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "data" / "movechoice.json"
KIND_NAMES = ("contact", "crashed", "race")


def _write(path: Path, payload: dict[str, Any]) -> None:
    """Write JSON to a temp file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(payload, fh, indent=1)
    os.replace(tmp, path)


def sample(n: int, seed: int) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """``n`` (board, dice) pairs from self-play of the shipped net with a few random plays (5%)."""
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.core.resources import default_checkpoint
    from bgnet.trainer.round_positions import collect_positions

    fn = load_numpy_net(default_checkpoint()).probs_of_boards
    boards = collect_positions(fn, 4 * n, seed)
    rng = np.random.default_rng(seed)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    return [(b, (int(d[0]), int(d[1]))) for b, d in zip(boards, dice)]


def build(args: argparse.Namespace) -> int:
    """Roll out candidate plays of sampled positions until the file holds ``--positions`` of them."""
    from bgnet import load_agent
    from bgnet.features.encoding import position_kinds
    from bgnet.core.movegen import legal_moves
    from bgnet.core.position import Position
    from bgnet.sim.rollout import rollout
    from bgnet.play.search import rank_moves

    settings = {"trials": args.trials, "truncate": args.truncate, "ply": 0, "luck_vr": True,
                "candidates": args.candidates, "window": args.window, "seed": args.seed}
    data: dict[str, Any] = json.loads(args.data.read_text()) if args.data.exists() else {"settings": settings,
                                                                                         "positions": []}
    if data["settings"] != settings:
        print(f"{args.data} was built with other settings ({data['settings']}); use another --data", file=sys.stderr)
        return 2
    agent = load_agent("default", ply=0)
    done = {(p["position_id"], tuple(p["dice"])) for p in data["positions"]}
    t0 = time.perf_counter()
    for i, (board, dice) in enumerate(sample(args.positions, args.seed)):
        if len(data["positions"]) >= args.positions:
            break
        pos = Position(board)
        key = (pos.position_id(), dice)
        if key in done:
            continue
        if len({m.after.board for m in legal_moves(pos, dice)}) < 2:
            continue  # no choice to make
        ranked = rank_moves(agent.evaluator, pos, dice, ply=2)
        best = ranked[0].equity
        plays = [str(r.move) for r in ranked if best - r.equity <= args.window][:args.candidates]
        if len(plays) < 2:
            plays = [str(r.move) for r in ranked[:2]]
        res = rollout(agent, pos, dice, plays=plays, trials=args.trials, truncate=args.truncate,
                      seed=args.seed * 100_003 + i)
        kind = KIND_NAMES[int(position_kinds(board[None, :])[0])]
        data["positions"].append({
            "position_id": pos.position_id(), "dice": list(dice), "kind": kind,
            "candidates": [{"play": c.label, "equity": round(c.equity, 5), "stderr": round(c.equity_stderr, 5)}
                           for c in res.candidates]})
        done.add(key)
        _write(args.data, data)
        print(f"{len(data['positions'])}/{args.positions} {kind:<8} {pos.position_id()} {dice[0]}{dice[1]}: "
              f"{len(plays)} plays, {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def score(args: argparse.Namespace) -> int:
    """Mean move-choice error of an agent over the file's positions, by kind."""
    from bgnet import load_agent
    from bgnet.core.movegen import legal_moves
    from bgnet.core.position import Position

    data = json.loads(args.data.read_text())
    agent = load_agent(args.agent, ply=args.ply)
    per_kind: dict[str, list[float]] = {k: [] for k in KIND_NAMES}
    outside = 0
    t0 = time.perf_counter()
    for rec in data["positions"]:
        pos = Position.from_position_id(rec["position_id"])
        dice = tuple(rec["dice"])
        by_text = {str(m): m.after.board for m in legal_moves(pos, dice)}
        equity = {by_text[c["play"]]: c["equity"] for c in rec["candidates"]}
        best = max(equity.values())
        chosen = agent.choose_move(pos, dice).after.board
        if chosen in equity:
            err = best - equity[chosen]
        else:
            outside += 1
            err = best - min(equity.values())
        per_kind[rec["kind"]].append(err)
    seconds = time.perf_counter() - t0
    everything = [e for v in per_kind.values() for e in v]
    out = {"agent": args.agent, "ply": args.ply, "positions": len(everything), "outside_candidates": outside,
           "seconds": round(seconds, 1), "settings": data["settings"],
           "mEMG_per_move": round(1000 * float(np.mean(everything)), 2) if everything else None,
           "best_play_pct": round(100 * float(np.mean([e <= 0 for e in everything])), 1) if everything else None,
           "kinds": {k: {"positions": len(v), "mEMG_per_move": round(1000 * float(np.mean(v)), 2) if v else None}
                     for k, v in per_kind.items()}}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.agent} at {args.ply}-ply over {out['positions']} rolled-out positions: "
              f"{out['mEMG_per_move']} mEMG per move, best play {out['best_play_pct']}%, "
              f"{outside} plays outside the candidates ({seconds:.1f} s)")
        for k, v in out["kinds"].items():
            print(f"  {k:<8} {v['positions']:>5} positions  {v['mEMG_per_move']} mEMG per move")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Build or score the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="roll out candidate plays of sampled positions (resumable)")
    b.add_argument("--positions", type=int, default=300)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--trials", type=int, default=648)
    b.add_argument("--truncate", type=int, default=11)
    b.add_argument("--candidates", type=int, default=5)
    b.add_argument("--window", type=float, default=0.12, help="plays within this much of the 2-ply best")
    b.add_argument("--data", type=Path, default=DATA)
    s = sub.add_parser("score", help="an agent's move-choice error over the file")
    s.add_argument("--agent", default="default", help="default, a checkpoint path, pubeval or gnubg")
    s.add_argument("--ply", type=int, default=0)
    s.add_argument("--data", type=Path, default=DATA)
    s.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from bgnet.core.errors import BgnetError

    try:
        return build(args) if args.command == "build" else score(args)
    except (BgnetError, OSError, json.JSONDecodeError) as exc:  # a bad agent, settings or data file: one sentence
        print(f"movechoice: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
