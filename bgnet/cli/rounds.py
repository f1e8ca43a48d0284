"""``python -m bgnet.trainer.rounds``: the command line of the rounds pipeline (``bgnet.trainer.rounds``) and its tools.

    python -m bgnet.trainer.rounds --init runs/v2/last.pt --out runs/rounds [--rounds 4] [--positions 20000]
        [--label ply1|ply2|rollout [--label-top K]] [--epochs 3] [--lr 1e-4] [--duel-pairs 2000] [--seed 1]
        [--candidates K [--rank-weight W]] [--hidden 512,256] [--schedule constant|cosine] [--label-chunk N]
        [--workers N] [--fit-window W] [--device cpu|cuda [--device-kernels torch|fused]]
        [--precision float32|bfloat16]
    python -m bgnet.trainer.rounds widen checkpoints/bgnet.pt runs/v2_init.pt   # a v1 net on features v2
    python -m bgnet.trainer.rounds duel CKPT gnubg@0 --games 4000 --seed 301 [--no-bearoff]  # nets by kind + bear-off
    python -m bgnet.trainer.rounds average OUT.pt CKPT CKPT ...   # the mean of one run's checkpoints' weights
    python -m bgnet.trainer.rounds committee OUT.pt CKPT CKPT ... # one wider net: the committee of several nets
    python -m bgnet.trainer.rounds refit RUN OUT.pt --start CKPT --round R [--fit-window W] [--hidden 768,384]
        [--with-labels OTHER/labels_001.npz ...]   # round R's fit again: another start, window, width or more
        # labels, with the run's other settings and round R's fit seed
    python -m bgnet.trainer.rounds candidates CKPT OUT.npz --positions N [--candidates 4] [--seed 1] [--grouped]
        # the positions a round labels, as a file for python -m bgnet.trainer.labels label (bgnet.trainer.distill)

Running the same command again continues after the last finished round (``--rounds`` may be raised to add
rounds; the other settings must stay the same, except ``--workers``, ``--fit-window``, ``--device``,
``--device-kernels`` and ``--precision``); labels of
a round are saved (``labels_NNN.npz``) before fitting, so an interrupted round does not label twice, and with
``--label-chunk N`` they are saved in parts as they are made (long rollout labelling). ``--device cuda`` computes
the search labels (ply1, ply2, with any ``--label-top``) on the GPU (``--device-kernels fused``: their features and
bear-off lookups from Triton kernels, the same labels); ``--precision bfloat16`` computes them on the CPU
with the net in bfloat16 (``bgnet.nets.bf16net``: on CPUs with AMX 1.6-2 times the labels a second). Bad input is one
sentence on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from bgnet.cli.parser import EXIT_USAGE, Parser, note_precision
from bgnet.core.errors import BgnetError
from bgnet.trainer.round_config import RoundsError

if TYPE_CHECKING:  # annotations only: torch and the nets load inside the commands
    from bgnet.nets.model import BgNet

PROG = "python -m bgnet.trainer.rounds"
ERROR_PREFIX = "bgnet.trainer.rounds"
"""How an error line starts: ``bgnet.trainer.rounds[ COMMAND]: error: ...``."""


def _error(command: str, exc: Exception) -> int:
    """One sentence on stderr for a refused request; the usage exit status."""
    print(f"{ERROR_PREFIX}{' ' + command if command else ''}: error: {exc}", file=sys.stderr)
    return EXIT_USAGE


def widen_main(argv: Sequence[str]) -> int:
    """``widen SRC DST [--feature-version 2]``: SRC's net on a later feature version, the same function
    (bgnet.nets.model.widen)."""
    ap = Parser(prog=f"{PROG} widen", description=widen_main.__doc__)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--feature-version", type=int, default=2)
    ap.add_argument("--hidden", type=int, nargs="+", help="also widen the hidden layers to these widths (Net2Net)")
    ap.add_argument("--seed", type=int, default=0, help="which units the new hidden units copy")
    args = ap.parse_args(argv)
    from bgnet.nets.model import net_from_checkpoint, read_checkpoint, save_checkpoint, widen, widen_hidden

    try:
        net = widen(net_from_checkpoint(read_checkpoint(args.src), f"checkpoint {args.src!r}"), args.feature_version)
        if args.hidden:
            net = widen_hidden(net, args.hidden, seed=args.seed)
    except BgnetError as exc:  # bad input; anything else is a bug and shows its traceback
        return _error("widen", exc)
    save_checkpoint(args.dst, net, widened_from=str(args.src))
    print(f"{args.dst}: {args.src} on features version {args.feature_version} ({net.config.num_features} inputs), "
          f"hidden {list(net.config.hidden)}")
    return 0


def _combine_main(argv: Sequence[str], command: str, doc: str, combine: Callable[[list[BgNet]], BgNet],
                  what: str, key: str) -> int:
    """``COMMAND DST CKPT CKPT ...``: write the net ``combine`` makes of the checkpoints' nets."""
    from bgnet.nets.model import net_from_checkpoint, read_checkpoint, save_checkpoint

    ap = Parser(prog=f"{PROG} {command}", description=doc)
    ap.add_argument("dst")
    ap.add_argument("checkpoints", nargs="+")
    args = ap.parse_args(argv)
    try:
        nets = [net_from_checkpoint(read_checkpoint(p), f"checkpoint {p!r}") for p in args.checkpoints]
        net = combine(nets)
    except BgnetError as exc:  # bad input; anything else is a bug and shows its traceback
        return _error(command, exc)
    save_checkpoint(args.dst, net, **{key: [str(p) for p in args.checkpoints]})
    print(f"{args.dst}: {what} of {len(nets)} nets, hidden {list(net.config.hidden)}")
    return 0


def average_main(argv: Sequence[str]) -> int:
    """``average DST CKPT CKPT ...``: a net whose weights are the mean of the checkpoints'
    (bgnet.nets.model.average_nets)."""
    from bgnet.nets.model import average_nets

    return _combine_main(argv, "average", average_main.__doc__ or "", average_nets, "the mean", "averaged_from")


def committee_main(argv: Sequence[str]) -> int:
    """``committee DST CKPT CKPT ...``: one wider net computing the checkpoints' committee
    (bgnet.nets.model.committee_net)."""
    from bgnet.nets.model import committee_net

    return _combine_main(argv, "committee", committee_main.__doc__ or "", committee_net, "the committee",
                         "committee_of")


def refit_main(argv: Sequence[str]) -> int:
    """``refit RUN DST --start CKPT --round R [--fit-window W] [--hidden WIDTHS] [--with-labels NPZ ...]``:
    round R of run RUN fitted again (``bgnet.trainer.refit.refit``), written to DST."""
    ap = Parser(prog=f"{PROG} refit", description=refit_main.__doc__)
    ap.add_argument("run", help="folder of a rounds run, with its labels_NNN.npz")
    ap.add_argument("dst")
    ap.add_argument("--start", required=True, help="checkpoint of the net to fit")
    ap.add_argument("--round", type=int, required=True, help="the round whose labels (and fit seed) to use")
    ap.add_argument("--fit-window", type=int, help="labels of this many rounds up to --round (default: the run's)")
    ap.add_argument("--hidden", help="widths to widen the net to first, e.g. 768,384 (default: the run's)")
    ap.add_argument("--with-labels", nargs="+", default=[], metavar="NPZ",
                    help="other runs' labels files to fit as well (before the window's)")
    args = ap.parse_args(argv)
    from bgnet.nets.model import save_checkpoint
    from bgnet.trainer.refit import refit

    t0 = time.perf_counter()
    try:
        net, mse, n = refit(args.run, args.start, args.round, args.fit_window, args.hidden, tuple(args.with_labels))
    except BgnetError as exc:  # bad input; anything else is a bug and shows its traceback
        return _error("refit", exc)
    save_checkpoint(args.dst, net, rounds_source=str(args.start), round=args.round, refit_of=str(args.run),
                    with_labels=list(args.with_labels))
    print(f"{args.dst}: {args.start} fitted to {n} labels of {args.run} (round {args.round}), hidden "
          f"{list(net.config.hidden)}, fit mse {mse:.5f} in {time.perf_counter() - t0:.0f} s")
    return 0


def duel_main(argv: Sequence[str]) -> int:
    """``duel CKPT OPPONENT [--games N] [--seed S] [--no-bearoff]``: a NetSet checkpoint in a paired duel.

    The checkpoint plays as agent ``netset:CKPT`` (``netset-no-bearoff:CKPT``), on the deals and dice of
    ``python -m eval netset:CKPT OPPONENT --games N --seed S``."""
    ap = Parser(prog=f"{PROG} duel", description=duel_main.__doc__)
    ap.add_argument("checkpoint")
    ap.add_argument("opponent")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-bearoff", action="store_true", help="the nets alone, without the bear-off database")
    args = ap.parse_args(argv)
    from bgnet.sim.runner import DuelSpec, run_duel

    agent = f"{'netset-no-bearoff' if args.no_bearoff else 'netset'}:{args.checkpoint}"
    try:
        res = run_duel(DuelSpec(agent, args.opponent, args.games // 2, args.seed), progress=False)
    except BgnetError as exc:  # bad input; anything else is a bug and shows its traceback
        return _error("duel", exc)
    what = "nets only" if args.no_bearoff else "nets + bear-off database"
    print(f"{args.checkpoint} ({what}) vs {args.opponent}: {res.games} games, seed {args.seed}: "
          f"{res.ppg:+.3f} +- {res.ci95:.3f} ppg (95%), win rate {res.win_rate:.3f}")
    return 0


def candidates_main(argv: Sequence[str]) -> int:
    """``candidates CKPT OUT.npz --positions N [--candidates K] [--seed S] [--grouped]``: positions of CKPT's
    self-play, each giving the afterstates of its K best 0-ply plays for a random roll, turned round (the positions
    a round labels); OUT.npz holds them as ``boards``, the input of ``python -m bgnet.trainer.labels label``."""
    ap = Parser(prog=f"{PROG} candidates", description=candidates_main.__doc__)
    ap.add_argument("checkpoint")
    ap.add_argument("out", metavar="OUT.npz")
    ap.add_argument("--positions", type=int, required=True, help="self-play positions (about K candidates each)")
    ap.add_argument("--candidates", type=int, default=4, help="best plays kept a position")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grouped", action="store_true",
                    help="whole groups of K siblings, best first (positions with fewer live plays left out)")
    args = ap.parse_args(argv)
    import numpy as np

    from bgnet.core.atomic import atomic_write
    from bgnet.nets.pruning import load_exact_evaluator
    from bgnet.trainer.round_positions import candidate_positions, collect_positions

    try:
        if args.positions < 1 or args.candidates < 1:
            raise RoundsError("--positions and --candidates must be at least 1")
        fn = load_exact_evaluator(args.checkpoint).probs_of_boards
        positions = collect_positions(fn, args.positions, args.seed, batch_games=512)
        boards = candidate_positions(fn, positions, args.candidates, args.candidates * args.positions, args.seed + 1,
                                     grouped=args.grouped)
        with atomic_write(args.out, parents=True) as fh:
            np.savez(fh, boards=boards)
    except (BgnetError, OSError) as exc:
        return _error("candidates", exc)
    print(f"wrote {len(boards)} candidates of {len(positions)} positions to {args.out}")
    return 0


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "widen": widen_main, "duel": duel_main, "average": average_main, "committee": committee_main,
    "refit": refit_main, "candidates": candidates_main,
}
"""The tools beside the rounds run itself, by their first argument."""


def _config_values(argv: Sequence[str], known: set[str]) -> dict[str, Any]:
    """The settings of ``--config FILE`` in ``argv`` (a TOML of RoundsConfig fields, ``init`` and ``out``, with
    ``base`` chains as train configs have), or {} without one; unknown keys are refused in one sentence."""
    from bgnet.trainer.config import read_config_file

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    path = pre.parse_known_args(argv)[0].config
    if path is None:
        return {}
    values = read_config_file(path)
    unknown = sorted(set(values) - known)
    if unknown:
        raise RoundsError(f"config file {path!r} has unknown settings: {', '.join(unknown)}")
    return values


def rounds_main(argv: Sequence[str]) -> int:
    """``[--config FILE] --init CKPT --out DIR [--SETTING VALUE ...]``: run or continue the rounds
    (``bgnet.trainer.rounds.run_rounds``); flags override the config file's settings."""
    from bgnet.trainer import rounds
    from bgnet.trainer.round_config import RoundsConfig

    defaults = asdict(RoundsConfig())
    try:
        from_file = _config_values(argv, {*defaults, "init", "out"})
    except BgnetError as exc:
        return _error("", exc)
    ap = Parser(prog=PROG, description=(rounds.__doc__ or "").splitlines()[0])
    ap.add_argument("--config", help="TOML file of these settings (configs/release/*.toml); flags override it")
    ap.add_argument("--init", required="init" not in from_file,
                    help="checkpoint of the starting net (a TD run's last.pt or a release)")
    ap.add_argument("--out", required="out" not in from_file, help="folder of the run (continued when it exists)")
    for name, value in defaults.items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    ap.set_defaults(**from_file)
    args = ap.parse_args(argv)
    try:
        cfg = RoundsConfig(**{k: type(defaults[k])(getattr(args, k)) for k in defaults})
        note_precision(PROG, cfg.precision)
        state = rounds.run_rounds(args.init, args.out, cfg)
    except BgnetError as exc:  # bad input; anything else is a bug and shows its traceback
        return _error("", exc)
    kept = sum(1 for r in state.done if r["kept"])
    print(f"{len(state.done)} rounds done, {kept} kept; current net {Path(args.out) / 'current.pt'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: see the module docstring."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(args[0]) if args else None
    return command(args[1:]) if command else rounds_main(args)


if __name__ == "__main__":
    sys.exit(main())
