"""``python -m bgnet.trainer.labels label IN.npz OUT.npz [--trials N] [--ply N] [--truncate PLIES] [--seed S]
[--model PATH] [--prune] [--backend local|ray] [--ray-address ADDRESS] [--workers N]``: label positions for training.

IN.npz holds an array ``boards`` (N, 26) int8; OUT.npz gets the boards, their
chances for each board's side on roll and standard errors (``bgnet.trainer.labels``),
from rollouts (``--trials``) or n-ply evaluations (``--ply``). Bad input is one
sentence on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Sequence

from bgnet.cli.parser import EXIT_USAGE, Parser, add_backend_arguments, add_precision_argument, note_precision
from bgnet.core.errors import BgnetError

if TYPE_CHECKING:
    import numpy as np

    from bgnet.core.protocols import ProbsFn
    from bgnet.nets.pruning import PrunedEvaluator

PROG = "python -m bgnet.trainer.labels"


def build_parser(prog: str = PROG) -> Parser:
    """The parser of the labelling command (one subcommand, ``label``)."""
    parser = Parser(prog=prog, description="Label positions for supervised training with rollouts or n-ply "
                                           "evaluations.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    lab = sub.add_parser("label", help="IN.npz (an array 'boards' (N, 26) int8) -> OUT.npz (boards, probs, stderr)")
    lab.add_argument("inp", metavar="IN.npz")
    lab.add_argument("out", metavar="OUT.npz")
    lab.add_argument("--trials", type=int, default=0, help="trials per position (0: evaluate at --ply instead)")
    lab.add_argument("--ply", type=int, default=0, help="checker play in the trials, or the evaluation depth")
    lab.add_argument("--truncate", type=int, default=None, help="truncate trials after this many plies")
    lab.add_argument("--seed", type=int, default=0)
    lab.add_argument("--model", default=None, help="checkpoint (default: the shipped net)")
    lab.add_argument("--prune", action="store_true",
                     help="n-ply searches value each roll's best replies by the checkpoint's pruning net, as "
                          "bgnet hint searches (--ply 1 or more, no --trials)")
    add_precision_argument(lab)
    add_backend_arguments(lab, workers_flag=True, help_for={
        "backend": "where the groups of positions run: this process or a Ray cluster (same targets)",
        "ray_address": "Ray cluster to attach to (default: a local Ray instance)",
        "workers": "groups labelled at once: local processes, or Ray tasks in flight with --backend ray (default "
                   "1 locally, every CPU of the cluster on Ray; the same targets either way)"})
    return parser


def _read_boards(path: str) -> np.ndarray:
    """The array ``boards`` (N, 26) of an .npz file (``RolloutError`` when it is not one, or has none)."""
    import numpy as np

    from bgnet.sim.rollout_settings import RolloutError

    try:
        with np.load(path, allow_pickle=False) as data:
            boards = np.asarray(data["boards"]) if "boards" in data else None
    except ValueError as err:  # not an .npz file
        raise RolloutError(f"cannot read {path} as .npz: {err}") from err
    if boards is None:
        raise RolloutError(f"{path} has no array named 'boards'")
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise RolloutError(f"'boards' in {path} must be (N, 26), got {boards.shape}")
    return boards


def _pruned(checkpoint: str | os.PathLike[str], fn: ProbsFn, ply: int, trials: int) -> PrunedEvaluator:
    """The checkpoint's net with its shipped pruning net, for --prune (``RolloutError`` when it cannot apply)."""
    from bgnet.nets.pruning import PrunedEvaluator, load_pruning_net
    from bgnet.sim.rollout_settings import RolloutError

    if trials > 0 or ply < 1:
        raise RolloutError("--prune applies to n-ply labels: give --ply 1 or more and no --trials")
    pruning = load_pruning_net(checkpoint)
    if pruning is None:
        raise RolloutError(f"no pruning net ships for {checkpoint}: --prune works with the released net only")
    return PrunedEvaluator(fn, pruning)


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Label IN.npz into OUT.npz and say how many targets were written; returns the exit status."""
    args = build_parser(prog).parse_args(argv)
    note_precision(prog, args.precision)
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.pruning import load_exact_evaluator
    from bgnet.sim.backends import make_backend, single_blas_thread
    from bgnet.sim.rollout_settings import RolloutSettings
    from bgnet.trainer.labels import label_positions, save_targets

    try:
        boards = _read_boards(args.inp)
        checkpoint = args.model or default_checkpoint()
        # the checkpoint's nets by kind when it has several, and the exact bear-off database, as rounds label
        fn = load_exact_evaluator(checkpoint, args.precision).probs_of_boards
        if args.prune:
            fn = _pruned(checkpoint, fn, args.ply, args.trials)
        settings = RolloutSettings(trials=max(1, args.trials), ply=min(args.ply, 1) if args.trials > 0 else 0,
                                   truncate=args.truncate)
        single_blas_thread()  # one BLAS thread, as on Ray's workers: --backend local and ray give the same bits
        backend = (make_backend(args.backend, args.workers, args.ray_address)
                   if args.backend == "ray" or args.ray_address or args.workers is not None else None)
        b, p, se = label_positions(fn, boards, trials=args.trials, ply=args.ply, seed=args.seed, settings=settings,
                                   backend=backend)
        save_targets(args.out, b, p, se, trials=args.trials, ply=args.ply, seed=args.seed,
                     truncate=args.truncate, model=args.model or "default", prune=args.prune,
                     precision=args.precision)
    except (BgnetError, OSError) as err:
        print(f"{prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {len(b)} targets to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
