"""Equal time: bgnet and GNU Backgammon at 0, 1 and 2 plies, ms per move decision and ppg against gnubg 0-ply.

Each engine plays paired cubeless money games against ``gnubg@0`` (the gnubg-nn
package) through ``bgnet.sim.runner.run_duel``, seeded, one process, one torch and
one BLAS thread. bgnet is ``MODEL@ply`` (the vectorised engine: its scorer ranks
the plays of every live game in one call); gnubg is ``gnubg-filtered@ply`` (gnubg's
own search with its move filters, one ``best_move`` call per decision, through
the game loop), or with ``--gnubg-every-play`` ``gnubg@ply`` (every play at ``ply``).

ms/move is the wall time spent inside the engine's own choice calls (its scorer's
``score_plays`` or its ``choose_move``) divided by its move decisions (every turn it
played, forced ones included); the gnubg 0-ply opponent's time is not counted.
bgnet's figure is a duel's throughput (the plays of up to 512 live games ranked in
one call), not the latency of one position; gnubg's is one position at a time.
The gnubg 0-ply row is the control (about 0 ppg). With ``--luck`` each row also gives the luck-adjusted points
per game (``bgnet eval --luck``: each roll's luck after the opening, judged by the release's student, taken off;
the same expectation, an interval about three times narrower), on either engine.

    python bench/equal_time.py                                  # a markdown table
    python bench/equal_time.py --games 400 --games-2ply 100 --json
    python bench/equal_time.py --plies 0,1 --model checkpoints/bgnet.pt
    python bench/equal_time.py --games 2000 --games-2ply 400 --luck
    python bench/equal_time.py --plies 0,1 --precision bfloat16     # a row of bgnet in bfloat16 beside each
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OPPONENT = "gnubg@0"
"""Every engine's opponent: GNU Backgammon's 0-ply play."""


@dataclass
class Clock:
    """Wall time spent inside one agent's choice calls and the move decisions they made."""

    seconds: float = 0.0
    decisions: int = 0


class TimedScorer:
    """A ``BatchScorer`` that times its inner scorer; one decision per game it ranks plays for."""

    def __init__(self, inner: Any, clock: Clock) -> None:
        self.inner = inner
        self.clock = clock

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        t0 = time.perf_counter()
        values = self.inner.score_plays(before, after, offsets)
        self.clock.seconds += time.perf_counter() - t0
        self.clock.decisions += len(offsets) - 1
        return values


def instrument(agent: Any) -> Clock:
    """Time ``agent``'s choice calls (the instance's ``batch_scorer`` and ``choose_move``) from now on."""
    clock = Clock()
    make_scorer: Callable[[], Any] = agent.batch_scorer
    choose: Callable[..., Any] = agent.choose_move

    def batch_scorer() -> Any:
        inner = make_scorer()
        return None if inner is None else TimedScorer(inner, clock)

    def choose_move(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        move = choose(*args, **kwargs)
        clock.seconds += time.perf_counter() - t0
        clock.decisions += 1
        return move

    agent.batch_scorer = batch_scorer
    agent.choose_move = choose_move
    return clock


def play_row(engine_name: str, ply: int, spec_text: str, games: int, seed: int, luck: bool = False
             ) -> dict[str, Any]:
    """One row: ``spec_text`` against ``OPPONENT`` over ``games`` paired games, timed (and luck-adjusted with
    ``luck``)."""
    from bgnet.sim.runner import DuelSpec, agent, engine, run_duel

    run_duel(DuelSpec(spec_text, OPPONENT, 2, seed + 1, luck=luck), progress=False)  # load nets, JIT caches
    spec = DuelSpec(spec_text, OPPONENT, games // 2, seed, luck=luck)
    clock = instrument(agent(spec.agent_a, spec.agent_seed(0)))
    t0 = time.perf_counter()
    res = run_duel(spec, progress=False)
    elapsed = time.perf_counter() - t0
    return {
        "engine": engine_name, "ply": ply, "agent": spec_text, "games": res.games,
        "ms_per_move": round(1e3 * clock.seconds / max(clock.decisions, 1), 3), "decisions": clock.decisions,
        "choice_seconds": round(clock.seconds, 2), "duel_seconds": round(elapsed, 2), "duel_engine": engine(spec),
        "ppg": round(res.ppg, 4), "ci95": round(res.ci95, 4), "win_rate": round(res.win_rate, 4),
        "adjusted_ppg": None if res.adjusted_ppg is None else round(res.adjusted_ppg, 4),
        "adjusted_ci95": None if res.adjusted_ci95 is None else round(res.adjusted_ci95, 4),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a markdown table (with luck-adjusted columns when the rows have them)."""
    lucky = any(r.get("adjusted_ppg") is not None for r in rows)
    head = "| engine | ply | ms/move | ppg vs gnubg 0-ply | ± ci95 |" + (" luck-adjusted | ± ci95 |" if lucky else "")
    lines = [head + " games |", "|---|---:|---:|---:|---:|" + ("---:|---:|" if lucky else "") + "---:|"]
    for r in rows:
        adjusted = "" if not lucky else (" — | — |" if r.get("adjusted_ppg") is None
                                         else f" {r['adjusted_ppg']:+.3f} | {r['adjusted_ci95']:.3f} |")
        lines.append(f"| {r['engine']} | {r['ply']} | {r['ms_per_move']:.3f} | {r['ppg']:+.3f} | {r['ci95']:.3f} |"
                     f"{adjusted} {r['games']:,} |")
    return "\n".join(lines)


def parse_plies(text: str) -> list[int]:
    """``"0,1,2"`` as [0, 1, 2]; argparse error for anything else."""
    try:
        plies = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--plies takes comma-separated plies, got {text!r}") from None
    if not plies or any(p < 0 or p > 2 for p in plies):
        raise argparse.ArgumentTypeError(f"--plies takes plies from 0 to 2, got {text!r}")
    return plies


def main() -> int:
    """Play every row and print the table (or one JSON object)."""
    from bgnet.nets.bf16net import PRECISIONS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="default", help="bgnet checkpoint (default: the released net)")
    p.add_argument("--games", type=int, default=400, help="paired games per row at 0 and 1 ply")
    p.add_argument("--games-2ply", type=int, default=100, help="paired games per row at 2 ply")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--plies", type=parse_plies, default=[0, 1, 2], help="comma-separated, from 0 to 2")
    p.add_argument("--gnubg-every-play", action="store_true",
                   help="gnubg ranks every play at the ply (gnubg@ply) instead of its own filtered search")
    p.add_argument("--luck", action="store_true",
                   help="also give each row's luck-adjusted points per game (bgnet eval --luck)")
    p.add_argument("--precision", choices=PRECISIONS, default="float32",
                   help="bfloat16: also a row of bgnet with its net in bfloat16 (bf16:MODEL) at each ply")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    if args.games < 2 or args.games_2ply < 2:
        p.error("--games and --games-2ply must be at least 2")
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        print("equal_time: needs the gnubg-nn package (pip install 'bgnet[ref]')", file=sys.stderr)
        return 2

    import torch

    from bgnet.sim.backends import single_blas_thread

    torch.set_num_threads(1)
    single_blas_thread()
    gnubg = "gnubg" if args.gnubg_every_play else "gnubg-filtered"
    rows = []
    for ply in args.plies:
        games = args.games_2ply if ply >= 2 else args.games
        engines = [("bgnet", f"{args.model}@{ply}")]
        if args.precision != "float32":
            engines.append(("bgnet bf16", f"bf16:{args.model}@{ply}"))
        for name, spec in (*engines, ("gnubg", f"{gnubg}@{ply}")):
            rows.append(play_row(name, ply, spec, games, args.seed, args.luck))
            if not args.json:
                print(f"  {name} {ply}-ply: {rows[-1]['duel_seconds']} s", file=sys.stderr, flush=True)
    out = {"opponent": OPPONENT, "seed": args.seed, "model": args.model, "gnubg_agent": gnubg,
           "timing": "wall time inside the engine's choice calls / its move decisions (forced turns included)",
           "rows": rows, "python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
           "machine": platform.machine()}
    if args.json:
        print(json.dumps(out))
    else:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
