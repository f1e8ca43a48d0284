"""``python -m bgnet.trainer.distill OUT.pt LABELS.npz [MORE.npz ...] [--hidden 384,128] [--epochs E] [--lr LR]
[--minibatch M] [--features V] [--holdout N] [--seed S] [--threads T] [--group K --rank-weight W] [--start CKPT]``:
fit a narrower net, fresh or a release shrunk, to search labels (``bgnet.trainer.distill``)."""

from __future__ import annotations

import sys
from typing import Sequence

from bgnet.cli.parser import EXIT_USAGE, Parser
from bgnet.core.errors import BgnetError

PROG = "python -m bgnet.trainer.distill"


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and write the student; bad input is one sentence on stderr and exit status 2."""
    from bgnet.trainer.distill import DistillConfig, distill
    from bgnet.trainer.round_config import parse_widths

    parser = Parser(prog=PROG, description="Fit a narrower net, fresh or a release shrunk (--start), to a release's "
                                           "search labels.")
    parser.add_argument("out", metavar="OUT.pt", help="the checkpoint to write")
    parser.add_argument("labels", metavar="LABELS.npz", nargs="+",
                        help="label files: boards with targets, or probs (float, or uint16 steps of 1/65535)")
    parser.add_argument("--hidden", default=",".join(map(str, DistillConfig.hidden)),
                        help="hidden widths, e.g. 384,128")
    parser.add_argument("--epochs", type=int, default=DistillConfig.epochs)
    parser.add_argument("--lr", type=float, default=DistillConfig.lr)
    parser.add_argument("--minibatch", type=int, default=DistillConfig.minibatch)
    parser.add_argument("--features", type=int, default=DistillConfig.features,
                        help="feature version of the student's inputs (1 is the cheapest to encode)")
    parser.add_argument("--holdout", type=int, default=DistillConfig.holdout, help="labels kept out to measure the fit")
    parser.add_argument("--seed", type=int, default=DistillConfig.seed)
    parser.add_argument("--threads", type=int, default=DistillConfig.threads)
    parser.add_argument("--group", type=int, default=DistillConfig.group,
                        help="labels in consecutive groups of this many siblings (rounds candidates --grouped)")
    parser.add_argument("--rank-weight", type=float, default=DistillConfig.rank_weight,
                        help="weight of the sibling-ranking term (with --group 2 or more)")
    parser.add_argument("--start", default="", metavar="CKPT",
                        help="start from this checkpoint (a release) shrunk to --hidden: each layer's most varying "
                             "units kept (default: fresh weights)")
    args = parser.parse_args(argv)
    try:
        cfg = DistillConfig(hidden=parse_widths(args.hidden), epochs=args.epochs, lr=args.lr, minibatch=args.minibatch,
                            features=args.features, holdout=args.holdout, seed=args.seed, threads=args.threads,
                            group=args.group, rank_weight=args.rank_weight, start=args.start)
        held = distill(args.labels, args.out, cfg, log=True)
    except (BgnetError, OSError) as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.out} (held-out squared error {held:.6f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
