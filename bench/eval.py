"""Evaluation speed: games per second of a 0-ply neural agent against pubeval, cubeless and cubeful.

Plays the way ``bgnet eval`` does (paired deals, chunked, one torch thread per
process, numpy's BLAS on one thread): the vectorised engine for cubeless money, the
game-loop engine with ``--cubeful``. Prints wall-clock and process (CPU) time: on a
shared machine the CPU figure is the steadier one.

    python bench/eval.py                    # a line of text
    python bench/eval.py --json             # one JSON object
    python bench/eval.py --games 4000 --cubeful --model checkpoints/bgnet.pt
    python bench/eval.py --decisions        # microseconds per bgnet.cube.decision.cube_decision call
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    """Time one duel after a short warm-up and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(ROOT / "checkpoints" / "bgnet.pt"), help="checkpoint of the neural agent")
    p.add_argument("--opponent", default="pubeval")
    p.add_argument("--games", type=int, default=4000, help="games to time (paired: games/2 deals)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cubeful", action="store_true", help="cubeful money through the game-loop engine")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--decisions", action="store_true",
                   help="time cube_decision alone: 1,200 calls over six money and match states (process time)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    if args.decisions:
        return time_decisions(args.seed, args.json)
    if args.games < 2 or args.workers < 1:
        p.error("--games must be at least 2 and --workers at least 1")

    import numpy as np
    import torch

    from bgnet.sim.backends import single_blas_thread
    from bgnet.play.game import Rules
    from bgnet.sim.runner import DuelSpec, engine, run_duel

    torch.set_num_threads(1)
    single_blas_thread()  # as ``bgnet eval`` runs: BLAS threads only fight the game loop for the cores
    rules = Rules() if args.cubeful else None
    run_duel(DuelSpec(args.model, args.opponent, 20, args.seed + 1, rules), progress=False)  # JIT caches, weights
    spec = DuelSpec(args.model, args.opponent, args.games // 2, args.seed, rules)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_duel(spec, workers=args.workers, progress=False)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {
        "games": res.games, "seconds": round(elapsed, 3), "games_per_s": round(res.games / elapsed, 1),
        "cpu_seconds": round(cpu, 3), "games_per_cpu_s": round(res.games / cpu, 1),
        "engine": engine(spec), "cubeful": args.cubeful, "workers": args.workers,
        "agent_a": args.model, "agent_b": args.opponent, "ppg": round(res.ppg, 4), "ci95": round(res.ci95, 4),
        "python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
        "torch_threads": torch.get_num_threads(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['games']} games ({out['engine']}, {'cubeful' if args.cubeful else 'cubeless'} money, "
              f"{args.workers} worker(s)) in {out['seconds']} s: {out['games_per_s']} games/s "
              f"({out['cpu_seconds']} s CPU in this process: {out['games_per_cpu_s']} games/s); "
              f"A {res.ppg:+.3f} +- {res.ci95:.3f} ppg")
    return 0


def time_decisions(seed: int, as_json: bool) -> int:
    """Microseconds per cube_decision call over seeded random probabilities and six states."""
    import numpy as np

    from bgnet.cube.decision import cube_decision
    from bgnet.cube.match import MatchState
    from bgnet.core.position import Position

    rng = np.random.default_rng(seed)
    states = [MatchState(), MatchState(cube_value=2, cube_owner="me"), MatchState(jacoby=True, beavers=True),
              MatchState(5, 0, 0), MatchState(5, 3, 1), MatchState(7, 2, 4, 2, "me")]
    rows = []
    for _ in range(200):
        p = float(rng.uniform(0.3, 0.95))
        wg, lg = p * float(rng.uniform(0, 0.4)), (1 - p) * float(rng.uniform(0, 0.3))
        rows.append([p, wg, 0.05 * wg, lg, 0.05 * lg])
    pos = Position.start()
    for s in states:
        cube_decision(rows[0], s, pos)
    t0 = time.process_time()
    for probs in rows:
        for s in states:
            cube_decision(probs, s, pos)
    us = 1e6 * (time.process_time() - t0) / (len(rows) * len(states))
    print(json.dumps({"cube_decision_us": round(us, 1)}) if as_json else f"cube_decision: {us:.1f} us a call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
