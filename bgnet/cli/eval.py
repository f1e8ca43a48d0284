"""``bgnet eval`` (``python -m eval`` in the repository): pit bots against each other with paired dice and honest
error bars.

    bgnet eval A B [--games N] [--seed S] [--money | --match LENGTH] [--cubeful] [--luck] [--workers K]
                   [--json FILE] [--backend local|ray] [--ray-address ADDRESS]
    bgnet eval tournament A B C ... [--games N] [...]
    bgnet eval curve RUN_DIR --opponent pubeval [--games N] [--png FILE]

Agents: the specs of ``bgnet.play.agents.load_agent``: ``default`` (the released net),
``random``, ``pubeval``, a checkpoint path, each with an optional ``@ply``
(``default@1``), ``gnubg[@ply]`` (needs gnubg-nn), ``noprune:SPEC`` (a net's searches value every reply),
``bf16:SPEC`` (a net valued in bfloat16: the same play, cheaper in batches). Games come in pairs (each deal
played twice, sides swapped), so ``--games`` must be even. ``--luck`` (cubeless money) adds the
luck-adjusted points per game (``bgnet.sim.duel_luck``): the same expectation, an interval about three times
narrower between players of like strength.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from bgnet.cli.parser import (EXIT_USAGE, CliError, Parser, add_backend_arguments, add_cube_rule_arguments,
                              cube_rule_choices, note_precision, run_command)
from bgnet.cube.match import DEFAULT_MONEY_RULES
from bgnet.play.game import Rules
from bgnet.sim.duel import DuelResult

PROG = "bgnet eval"
"""The command's name in its messages (``python -m eval`` in the repository passes its own)."""
INTERVAL_MIN_PAIRS = 30
"""Fewer paired deals than this whose results all agree give no interval (a zero spread from a handful of pairs
says nothing), nor does a single pair."""


class EvalUsageError(CliError):
    """Options of ``bgnet eval`` that contradict each other."""


def _int_at_least(text: str, low: int, what: str, too_small: str) -> int:
    """``text`` as an int of at least ``low``, or an argparse error naming ``what``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}{text!r} is not a whole number") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{what}{text!r} {too_small}")
    return value


def _positive(text: str) -> int:
    """An int of at least 1 (for --workers, --match)."""
    return _int_at_least(text, 1, "", "must be at least 1")


def _even_games(text: str) -> int:
    """A positive even int (--games: every deal is played twice, with the sides swapped)."""
    games = _int_at_least(text, 2, "", "must be at least 2")
    if games % 2:
        raise argparse.ArgumentTypeError(f"{text!r} is odd, but games come in pairs (each deal is played twice, "
                                         f"sides swapped): ask for {games - 1} or {games + 1}")
    return games


def _seed(text: str) -> int:
    """A non-negative int seed."""
    return _int_at_least(text, 0, "seed ", "must not be negative")


def _common(p: argparse.ArgumentParser, games: int) -> None:
    """Options shared by every subcommand: games, seed, rules, workers, JSON."""
    p.add_argument("--games", type=_even_games, default=games,
                   help=f"games per duel (matches with --match), an even number played as games/2 paired deals "
                        f"(default {games})")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the dice (default 0)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--money", action="store_true", help="money play (the default)")
    mode.add_argument("--match", type=_positive, metavar="LENGTH", help="play matches to LENGTH points (with the cube)")
    p.add_argument("--cubeful", action="store_true",
                   help="money play with the doubling cube (default: cubeless, where no cube rule applies)")
    add_cube_rule_arguments(p)
    p.add_argument("--workers", type=_positive, default=None,
                   help="worker processes, or Ray tasks in flight (default 1; with --backend ray every CPU of the "
                        "cluster); results do not depend on it")
    add_backend_arguments(p, help_for={
        "backend": "where the deals are played: this machine or a Ray cluster (results do not depend on it)",
        "ray_address": "Ray cluster to attach to (default: a local Ray instance)"})
    p.set_defaults(ray_backend=None)
    p.add_argument("--json", metavar="FILE",
                   help="also write the report as JSON to FILE ('-': to stdout, instead of the text)")
    p.add_argument("--luck", action="store_true",
                   help="also give the luck-adjusted points per game: each roll's luck after the opening (judged by "
                        "the released net) taken off; the same expectation, a much narrower interval (cubeless "
                        "money only)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _rules(args: argparse.Namespace) -> Rules | None:
    """The Rules the options ask for (the money defaults of every command, then the rule flags); None for cubeless
    money. EvalUsageError for contradictory options."""
    choices = cube_rule_choices(args)
    if not args.match and not args.cubeful:
        if choices:
            raise EvalUsageError(f"--{next(iter(choices)).replace('_', '-')} needs the cube: --cubeful or --match")
        return None
    money = not args.match
    return Rules(match_length=args.match or 0, cube_rules=DEFAULT_MONEY_RULES.choose(choices, money))


def _mode(rules: Rules | None) -> str:
    """Short description of the contest, with the cube rules it used."""
    from bgnet.cube.decision import rules_text
    from bgnet.cube.match import MatchState

    if rules is None:
        return "cubeless money"
    text = rules_text(MatchState(rules.match_length, rules=rules.cube_rules))
    return ("cubeful " + text) if rules.is_money else text.replace("-point match,", "-point matches,", 1)


def _duel(a: str, b: str, args: argparse.Namespace, rules: Rules | None) -> tuple[DuelResult, dict[str, Any]]:
    """Run one duel and build its JSON report."""
    from bgnet.sim.runner import DuelSpec, engine, rules_dict, run_duel

    spec = DuelSpec(a, b, args.games // 2, args.seed, rules, luck=args.luck)
    if args.backend == "local" and args.ray_address:
        raise EvalUsageError("--ray-address needs --backend ray")
    from bgnet.sim.backends import single_blas_thread

    single_blas_thread()  # one BLAS thread, as on Ray's workers: --backend local and ray give the same bits
    if args.backend == "ray" and args.ray_backend is None:  # one Ray connection for every duel of the command
        from bgnet.sim.backends import RayBackend

        args.ray_backend = RayBackend(address=args.ray_address, num_workers=args.workers)
    workers = (args.workers or 1) if args.ray_backend is None else args.ray_backend.workers
    t0 = time.perf_counter()
    res = run_duel(spec, workers=workers, progress=not args.quiet, backend=args.ray_backend)
    elapsed = time.perf_counter() - t0
    report: dict[str, Any] = {"agent_a": a, "agent_b": b, "seed": args.seed, "mode": _mode(rules),
                              "cubeful": rules is not None and rules.cubeful,
                              "match_length": 0 if rules is None else rules.match_length,
                              "rules": rules_dict(rules), "engine": engine(spec), "backend": args.backend,
                              "workers": workers,
                              "elapsed_s": round(elapsed, 3), "games_per_s": round(res.games / max(elapsed, 1e-9), 1)}
    report.update(res.summary())
    return res, report


def _interval(half_width: float | None, pairs: int, unit: str = "") -> str:
    """`` +- 0.123`` and ``unit``, or `` (too few games for an interval)`` when the pairs cannot give one."""
    too_few = pairs < INTERVAL_MIN_PAIRS and round(half_width or 0.0, 3) == 0
    if half_width is None or not math.isfinite(half_width) or too_few:
        return " (too few games for an interval)"
    return f" +- {half_width:.3f}{unit}"


def _format(res: DuelResult, a: str, b: str, mode: str, seed: int) -> str:
    """The human-readable duel report."""
    n = res.pairs
    lines = [f"{a} vs {b}: {res.games} games from {n} paired deal{'' if n == 1 else 's'}, {mode}, seed {seed}",
             f"  points per game for {a}: {res.ppg:+.3f}{_interval(res.ci95, n, ' (95%)')}",
             *([] if res.adjusted_ppg is None else
               [f"  luck-adjusted:   {res.adjusted_ppg:+.3f}{_interval(res.adjusted_ci95, n, ' (95%)')}"]),
             f"  win rate:        {res.win_rate:.3f}{_interval(res.win_rate_ci95, n)}",
             f"  gammon rate:     {res.gammon_rate:.3f}{_interval(res.gammon_rate_ci95, n)}"
             f"  (won {res.gammon_win_rate:.3f}, lost {res.gammon_loss_rate:.3f})",
             f"  backgammon rate: {res.backgammon_rate:.3f}{_interval(res.backgammon_rate_ci95, n)}"]
    if res.match_win_rate is not None:
        lines.append(f"  match win rate:  {res.match_win_rate:.3f}{_interval(res.match_win_rate_ci95, n)} "
                     f"({res.matches} matches)")
    return "\n".join(lines)


def _write_json(target: str | None, report: dict[str, Any]) -> None:
    """Write the JSON report to a file or stdout."""
    if not target:
        return
    text = json.dumps(report, indent=2)
    if target == "-":
        print(text)
    else:
        try:
            Path(target).write_text(text + "\n")
        except OSError as err:
            raise CliError(f"cannot write the report to {target}: {err.strerror or err}") from None


def cmd_duel(argv: Sequence[str], prog: str = PROG) -> int:
    """``bgnet eval A B ...``."""
    p = Parser(prog=prog, description="Pit agent A against agent B with paired dice.")
    p.add_argument("agent_a", metavar="A")
    p.add_argument("agent_b", metavar="B")
    _common(p, 1000)
    p.add_argument("--save-games", metavar="DIR", default=None,
                   help="also write every deal's games as .mat files into DIR (two per deal, one per seating)")
    args = p.parse_args(argv)
    from bgnet.play.agents import BF16_PREFIX

    if any(spec.lower().startswith(BF16_PREFIX) for spec in (args.agent_a, args.agent_b)):
        note_precision(prog, "bfloat16")
    rules = _rules(args)
    res, report = _duel(args.agent_a, args.agent_b, args, rules)
    if args.json != "-":
        print(_format(res, args.agent_a, args.agent_b, report["mode"], args.seed))
    if args.save_games:
        _save_games(args, rules, res)
    _write_json(args.json, report)
    return 0


def _save_games(args: argparse.Namespace, rules: Rules | None, res: DuelResult) -> None:
    """Write the duel's games as .mat files (``bgnet.sim.recorded_games``), checked against the duel's results."""
    from bgnet.sim.duel import summarise_outcomes
    from bgnet.sim.recorded_games import save_duel_games
    from bgnet.sim.runner import DuelSpec

    spec = DuelSpec(args.agent_a, args.agent_b, args.games // 2, args.seed, rules)
    try:
        saved = save_duel_games(spec, args.save_games)
    except OSError as err:
        raise CliError(f"cannot write the games to {args.save_games}: {err.strerror or err}") from None
    again = summarise_outcomes(saved)
    if again.points != res.points:
        raise AssertionError("the games written do not replay the duel's results; please report this")
    if args.json != "-":
        print(f"  wrote {2 * spec.pairs} match files to {args.save_games}")


def cmd_tournament(argv: Sequence[str], prog: str = PROG) -> int:
    """``bgnet eval tournament A B C ...``: every pair once, a table and ratings."""
    from bgnet.sim.tournament import elo_ratings, least_squares_ratings

    p = Parser(prog=f"{prog} tournament", description="Round robin among agents, with ratings.")
    p.add_argument("agents", nargs="+", metavar="AGENT")
    _common(p, 400)
    args = p.parse_args(argv)
    if len(args.agents) < 2:
        p.error("a tournament needs at least two agents")
    if len(set(args.agents)) != len(args.agents):
        p.error("each agent may appear only once in a tournament")
    rules = _rules(args)
    names = list(args.agents)
    n = len(names)
    results: list[dict[str, Any]] = []
    ppg = [[0.0] * n for _ in range(n)]
    pairs: list[tuple[int, int, float, float]] = []
    for i in range(n):
        for j in range(i + 1, n):
            res, report = _duel(names[i], names[j], args, rules)
            results.append(report)
            value = res.ppg if res.adjusted_ppg is None else res.adjusted_ppg  # luck-adjusted with --luck
            ppg[i][j], ppg[j][i] = value, -value
            pairs.append((i, j, value, float(res.games)))
    ppg_rating = least_squares_ratings(n, pairs)
    elo = elo_ratings(n, [(names.index(r["agent_a"]), names.index(r["agent_b"]), r["win_rate"], r["games"])
                          for r in results])
    order = sorted(range(n), key=lambda k: -ppg_rating[k])
    report = {"agents": names, "seed": args.seed, "mode": _mode(rules), "games_per_duel": results[0]["games"],
              "results": results,
              "ratings": [{"agent": names[k], "ppg_rating": ppg_rating[k], "elo": elo[k]} for k in order]}
    if args.json != "-":
        width = max(8, *(len(x) for x in names))
        print(f"Round robin, {_mode(rules)}, {results[0]['games']} games per pair, seed {args.seed}")
        print(f"{'luck-adjusted ' if args.luck else ''}points per game of the row agent against the column agent:")
        print(" " * (width + 2) + "".join(f"{k + 1:>9}" for k in range(n)))
        for i in range(n):
            cells = "".join(f"{'-':>9}" if i == j else f"{ppg[i][j]:>+9.3f}" for j in range(n))
            print(f"{i + 1:>2} {names[i]:<{width}}{cells}")
        print("ratings (least-squares ppg, Elo-like from win rates):")
        for rank, k in enumerate(order, 1):
            print(f"{rank:>2}. {names[k]:<{width}} {ppg_rating[k]:+.3f} ppg  {elo[k]:7.1f}")
    _write_json(args.json, report)
    return 0


def cmd_curve(argv: Sequence[str], prog: str = PROG) -> int:
    """``bgnet eval curve RUN_DIR --opponent pubeval``: every checkpoint of a run against one opponent."""
    from bgnet.sim.curve import CurvePoint, run_checkpoints, tag_for, write_png, write_tensorboard

    p = Parser(prog=f"{prog} curve", description="Learning curve of a training run against one opponent.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--opponent", default="pubeval", help="fixed opponent (default pubeval)")
    p.add_argument("--png", metavar="FILE", help="where to draw the curve (default RUN_DIR/curve.png)")
    _common(p, 1000)
    args = p.parse_args(argv)
    rules = _rules(args)
    checkpoints = run_checkpoints(args.run_dir)
    points: list[CurvePoint] = []
    for games, path in checkpoints:
        res, _report = _duel(str(path), args.opponent, args, rules)
        points.append(CurvePoint(games, str(path), res))
        if args.json != "-":
            print(f"{games:>12} games: {res.ppg:+.3f}{_interval(res.ci95, res.pairs)} ppg, "
                  f"win rate {res.win_rate:.3f}  ({path.name})")
    write_tensorboard(args.run_dir, args.opponent, points)
    png = Path(args.png) if args.png else Path(args.run_dir) / "curve.png"
    drawn = write_png(png, args.opponent, points)
    if args.json != "-":
        print(f"TensorBoard: tag {tag_for(args.opponent)} under {args.run_dir}")
        print(f"PNG: {png}" if drawn else "PNG skipped: matplotlib is not installed (pip install 'bgnet[plot]')")
    elif not drawn:
        sys.stderr.write("PNG skipped: matplotlib is not installed (pip install 'bgnet[plot]')\n")
    _write_json(args.json, {"run_dir": str(args.run_dir), "opponent": args.opponent, "seed": args.seed,
                            "mode": _mode(rules), "png": str(png) if drawn else None,
                            "points": [{**pt.result.summary(), "games_trained": pt.games, "checkpoint": pt.checkpoint}
                                       for pt in points]})
    return 0


COMMANDS = {"tournament": cmd_tournament, "curve": cmd_curve}


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Dispatch to a subcommand; bad input becomes one sentence ``bgnet eval: error: ...`` on stderr and exit code 2
    (``prog`` names the command in messages)."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(args[0]) if args else None
    try:
        return run_command(prog, lambda: command(args[1:], prog) if command else cmd_duel(args, prog))
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
