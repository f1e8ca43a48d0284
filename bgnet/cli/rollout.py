"""``bgnet rollout POSITION [DICE]``: roll out the plays of a roll, or without dice the cube decision.

Light at import (``bgnet.cli.main`` imports it for every command): the net and the
rollout load in ``run_rollout``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from bgnet.app.requests import DEFAULT_ROLLOUT_TRIALS
from bgnet.cli.parser import (EXIT_INTERRUPTED, PROG, CliError, add_backend_arguments, add_cube_rule_arguments,
                              add_precision_argument, cube_rule_choices, note_precision)
from bgnet.cube.match import DECISION_SKIPS


def add_rollout_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet rollout``."""
    parser.add_argument("position", metavar="POSITION",
                        help="a gnubg Position ID (optionally PositionID:MatchID) or an XGID")
    parser.add_argument("dice", metavar="DICE", nargs="?", default=None,
                        help="the roll, e.g. 31; without it (and no dice in the ID) the cube decision is rolled out")
    parser.add_argument("--plays", nargs="+", metavar="PLAY", default=None,
                        help='the plays to roll out, e.g. --plays "8/5 6/5" "24/23 13/10" (default: those the '
                             "hint's move filter keeps)")
    parser.add_argument("--trials", type=int, default=DEFAULT_ROLLOUT_TRIALS, metavar="N",
                        help=f"trials per play (default {DEFAULT_ROLLOUT_TRIALS}; any number: memory stays flat, and "
                             "Ctrl-C prints the result of the trials done so far, marked partial)")
    parser.add_argument("--truncate", type=int, default=None, metavar="PLIES",
                        help="stop each trial after PLIES plies and score it with the net (default: play to the end)")
    parser.add_argument("--ply", type=int, default=0, metavar="N",
                        help="checker play in the trials: 0 or 1 (default 0)")
    parser.add_argument("--cubeful", action="store_true",
                        help="also roll out cubefully: the cube is played in every trial, the opponent on "
                             "roll first with the cube as given (always on without dice)")
    parser.add_argument("--match", metavar="MATCHID", default=None,
                        help="gnubg Match ID with the score and cube (default: money, cube centred)")
    add_cube_rule_arguments(parser, skip=DECISION_SKIPS)
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="dice seed (default 0); same seed, same numbers")
    parser.add_argument("--luck", action=argparse.BooleanOptionalAction, default=True,
                        help="luck-based variance reduction (default on)")
    parser.add_argument("--quasi-random", action=argparse.BooleanOptionalAction, default=True,
                        help="stratified (quasi-random) dice (default on)")
    parser.add_argument("--bearoff", action=argparse.BooleanOptionalAction, default=True,
                        help="stop trials at the bear-off database with its exact chances (default on)")
    parser.add_argument("--prune", type=int, default=0, metavar="N",
                        help="checker play: the net judges only pubeval's best N plays (default 0: every play)")
    parser.add_argument("--no-prune", dest="prune_net", action="store_false",
                        help="value every play with the net (slower); by default the released net's pruning net "
                             "picks the 8 plays of each roll that the net values")
    parser.add_argument("--chunk-size", type=int, default=324, metavar="N",
                        help="most trials per chunk (default 324; the first chunks are smaller, so that Ctrl-C "
                             "soon has trials to show; the figures do not depend on it)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="threads running chunks of trials (default: one a core; the result is the same for any "
                             "number); with --backend ray, Ray tasks in flight")
    add_backend_arguments(parser, help_for={
        "backend": "where the chunks of trials run: this machine or a Ray cluster (same result)",
        "ray_address": "Ray cluster to attach to (default: a local Ray instance)"})
    parser.add_argument("--model", metavar="SPEC", default=None,
                        help="the net: default (the released net) or a checkpoint file (default: default)")
    add_precision_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run_rollout(args: argparse.Namespace) -> int:
    """Roll out and print the result (text in GNU Backgammon's style, or JSON, ``docs/JSON.md``).

    Ctrl-C stops within about a second and prints the result of the trials done, marked partial, with exit
    status 130 (128 + SIGINT); before any trial has finished it prints one line and gives 130 too.
    """
    if args.chunk_size < 1:
        raise CliError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    if args.workers is None:
        args.workers = 1 if args.backend == "ray" or args.ray_address else max(1, os.cpu_count() or 1)
    if args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    from bgnet.app.answers import rollout_request_parts
    from bgnet.app.requests import RolloutRequest
    from bgnet.play.agents import NeuralAgent, checkpoint_path

    request = RolloutRequest(position=args.position, dice=args.dice, match=args.match, rules=cube_rule_choices(args),
                             plays=None if args.plays is None else tuple(args.plays), trials=args.trials,
                             truncate=args.truncate, ply=args.ply, cubeful=args.cubeful, seed=args.seed)
    pos, dice, state = rollout_request_parts(request)
    from bgnet.sim.rollout import RolloutSettings, rollout, thread_map

    settings = RolloutSettings(trials=args.trials, ply=args.ply, truncate=args.truncate, bearoff=args.bearoff,
                               quasi_random=args.quasi_random, luck_vr=args.luck, prune=args.prune,
                               chunk_size=args.chunk_size)
    note_precision(f"{PROG} rollout", args.precision)
    # the hint's evaluator: bear-off database, and the pruning net if one ships (and --no-prune is not given)
    probs_fn = NeuralAgent(checkpoint_path(args.model), 0, prune=args.prune_net, precision=args.precision).evaluator
    from bgnet.sim.backends import make_backend, single_blas_thread

    single_blas_thread()  # one BLAS thread, as on Ray's workers: --backend local and ray give the same bits
    backend = (make_backend(args.backend, args.workers if args.workers > 1 else None, args.ray_address)
               if args.backend == "ray" or args.ray_address else None)
    try:
        result = rollout(probs_fn, pos, dice, plays=args.plays, settings=settings, seed=args.seed,
                         cubeful=args.cubeful, state=state,
                         map_fn=thread_map(args.workers) if args.workers > 1 and backend is None else None,
                         backend=backend, progress=not args.no_progress and not args.json and sys.stderr.isatty())
    except KeyboardInterrupt:
        print("bgnet: error: the rollout was interrupted before its first trials finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        extra = {} if args.precision == "float32" else {"precision": args.precision}  # as /api/rollout by default
        print(json.dumps({**result.to_dict(), **extra}))
    else:
        print(pos)
        print()
        print(result.format())
        if args.precision != "float32":
            print(f"The net valued in {args.precision} (--precision)")
    return EXIT_INTERRUPTED if result.interrupted else 0
