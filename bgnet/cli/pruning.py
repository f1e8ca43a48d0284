"""``python -m bgnet.trainer.pruning_fit CHECKPOINT OUT.npz [--positions N] [--hidden H ...] [--epochs E] [--seed S]``:
fit a release's pruning net (``bgnet.trainer.pruning_fit``) and write it beside the release."""

from __future__ import annotations

import sys
from typing import Sequence

from bgnet.cli.parser import EXIT_USAGE, Parser
from bgnet.core.errors import BgnetError

PROG = "python -m bgnet.trainer.pruning_fit"


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and write the pruning net; bad input is one sentence on stderr and exit status 2."""
    from bgnet.trainer.pruning_fit import PruningFitConfig, fit_to_checkpoint

    parser = Parser(prog=PROG, description="Fit a release's pruning net to its 0-ply values (bgnet.nets.pruning).")
    parser.add_argument("checkpoint", help="the release the pruning net serves (its 0-ply values are the targets)")
    parser.add_argument("out", help="the .npz file to write (stamped with the checkpoint's SHA-256)")
    parser.add_argument("--positions", type=int, default=PruningFitConfig.positions,
                        help="self-play positions, each giving every play of one random roll")
    parser.add_argument("--hidden", type=int, nargs="+", default=list(PruningFitConfig.hidden))
    parser.add_argument("--epochs", type=int, default=PruningFitConfig.epochs)
    parser.add_argument("--seed", type=int, default=PruningFitConfig.seed)
    args = parser.parse_args(argv)
    try:
        cfg = PruningFitConfig(positions=args.positions, hidden=tuple(args.hidden), epochs=args.epochs,
                               seed=args.seed)
        out = fit_to_checkpoint(args.checkpoint, args.out, cfg, log=True)
    except (BgnetError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
