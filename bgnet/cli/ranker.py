"""``python -m bgnet.trainer.ranker [--model CKPT] [--out F] [--games N] [--window W] [--seed S]``: fit the play ranker.

The ranker (``bgnet.nets.ranker``) is fitted to a net's equities of its own self-play
plays (``bgnet.trainer.ranker.fit_to_net``), written to ``--out`` and printed with its
held-out agreement: how often its top play is the net's best play of the roll.
"""

from __future__ import annotations

import sys
import time
from typing import Sequence

from bgnet.cli.parser import EXIT_USAGE, Parser
from bgnet.core.errors import BgnetError

PROG = "python -m bgnet.trainer.ranker"


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, write and report the ranker; bad input is one sentence on stderr and exit status 2."""
    from bgnet.nets import ranker as rk

    parser = Parser(prog=PROG, description="Fit ``bgnet.nets.ranker``'s play ranker to a net.")
    parser.add_argument("--model", default=None, help="checkpoint whose net is fitted (default: the released net)")
    parser.add_argument("--out", default=str(rk.MODEL_FILE), help="model file to write (default: the shipped one)")
    parser.add_argument("--games", type=int, default=300, help="self-play games whose positions are fitted")
    parser.add_argument("--window", type=int, default=4, help="pubeval's best N plays of a roll are re-ranked")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if args.games < 1 or args.window < 1:
        print(f"{PROG}: error: --games and --window must be positive", file=sys.stderr)
        return EXIT_USAGE
    from bgnet.trainer.ranker import fit_to_net

    t0 = time.perf_counter()
    try:
        fitted = fit_to_net(args.model, args.games, args.window, args.seed)
        rk.save(fitted.ranker, args.out)
    except (BgnetError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"fitted on {fitted.train_positions} positions of {args.games} games (seed {args.seed}) in "
          f"{time.perf_counter() - t0:.0f} s; wrote {args.out}")
    names = ("pubeval's top play", f"the ranker's top of pubeval's best {args.window}")
    for name, (hit, loss) in zip(names, fitted.agreement()):
        print(f"  {name}: the net's best play in {100 * hit:.1f}% of {len(fitted.held_out)} held-out positions' "
              f"rolls, mean loss {loss:.4f} equity")
    return 0


if __name__ == "__main__":
    sys.exit(main())
