"""A rollout's result as text in the style of GNU Backgammon's rollout output (``bgnet rollout``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bgnet.core.movegen import roll_text
from bgnet.cube.decision import rules_text
from bgnet.cube.match import MatchState
from bgnet.nets import ranker as _ranker
from bgnet.sim.rollout_settings import RolloutSettings

if TYPE_CHECKING:
    from bgnet.sim.rollout_result import CandidateResult, RolloutResult


def _compared(r: CandidateResult) -> float:
    """The equity a candidate is ranked by: cubeful when present, else cubeless."""
    return r.cubeful_equity if r.cubeful_equity is not None else r.equity


def _candidate_lines(result: RolloutResult) -> list[str]:
    """Each candidate's chances, equities, standard errors and 95% interval, numbered, with its loss to the best."""
    lines = []
    best = result.best
    for i, r in enumerate(result.candidates, 1):
        p = r.probs
        se = r.probs_stderr
        eq = f"CL {r.equity:+.3f}"
        eq_se = f"CL {r.equity_stderr:6.3f}"
        if r.cubeful_equity is not None and r.cubeful_stderr is not None:
            eq += f" CF {r.cubeful_equity:+.3f}"
            eq_se += f" CF {r.cubeful_stderr:6.3f}"
        diff = "" if r is best or result.cube is not None else f" ({_compared(r) - _compared(best):+.3f})"
        lines.append(f"{i}. {r.label}:{diff}")
        lines.append(f"  {p.win:.3f} {p.win_gammon:.3f} {p.win_backgammon:.3f} - "
                     f"{p.lose:.3f} {p.lose_gammon:.3f} {p.lose_backgammon:.3f} {eq}")
        lines.append(f" [{se[0]:.3f} {se[1]:.3f} {se[2]:.3f} - {se[0]:.3f} {se[3]:.3f} {se[4]:.3f} {eq_se}]")
        lo, hi = r.equity_interval
        lines.append(f"  95% interval (cubeless) {lo:+.3f} .. {hi:+.3f}")
    return lines


def _cube_lines(result: RolloutResult) -> list[str]:
    """The rolled-out cubeful equities of no double, double/take and double/pass, with each one's loss."""
    if result.cube is None or result.cube.get("method") != "cubeful trials":
        return []
    nd, dt, dp = (result.cube["equity_no_double"], result.cube["equity_double_take"],
                  result.cube["equity_double_pass"])
    beaver = result.cube.get("response") == "beaver"  # the taker beavers: the double is worth twice the take
    take = ("Double, beaver", 2.0 * dt) if beaver and dt is not None else ("Double, take", dt)
    opts = [("No double", nd)] + ([] if dt is None else [take, ("Double, pass", dp)])
    top = nd if dt is None else max(nd, min(take[1], dp))
    lines = ["", "Cubeful equities:"]
    for i, (name, eq) in enumerate(opts, 1):
        diff = "" if abs(eq - top) < 5e-7 else f" ({eq - top:+.3f})"
        lines.append(f"{i}. {name:<16}{eq:+.3f}{diff}")
    return lines


def _play_line(s: RolloutSettings) -> str:
    """How the trials chose their plays, scored the truncation and judged the luck."""
    play = f"Play: {s.ply}-ply cubeless" + (f", pruned to pubeval's best {s.prune}" if s.prune else "") + (
        ", the plays the pruning net keeps valued by the net" if s.pruned_play and s.ply == 0 else "")
    if s.truncate is not None:
        play += f"; a truncated game is scored by the {s.truncate_eval_ply}-ply net"
    if s.luck_vr:
        plays = "play" if s.luck_candidates == 1 else f"{s.luck_candidates} plays"
        ranked = (f"pubeval's best {plays}" if s.luck_ranker == "pubeval"
                  else f"the fitted ranker's best {plays} among pubeval's top {_ranker.default().window}")
        unit = "pubeval points" if s.luck_ranker == "pubeval" else "ranker points"
        play += ("; each roll's luck is judged against the play made" if s.luck_candidates == 0
                 else f"; each roll's luck is judged against {ranked}"
                 + ("" if s.luck_margin is None else f" within {s.luck_margin:g} {unit}")
                 + {"pruning": ", valued by the pruning net",
                    "student": ", valued by the net's student (a narrower net that plays like it)"}.get(s.luck_net, ""))
    return play


def format_result(result: RolloutResult) -> str:
    """Text in the style of GNU Backgammon's rollout output: the candidates, the cube, then how it was rolled out;
    a rollout stopped early says so under its first line, with the trials it did."""
    s = result.settings
    where = "money game" if result.state is None or result.state.is_money else str(result.state)
    head = f"Position ID {result.position_id}"
    head += f", dice {roll_text(result.dice)}" if result.dice else ", cube decision"
    lines = [f"{head}, {where}", f"Rules assumed: {rules_text(result.state or MatchState())}", ""]
    if result.interrupted:
        lines[1:1] = [f"Partial rollout: stopped after {result.trials_done:,} of {s.trials:,} trials"]
    lines += _candidate_lines(result)
    lines += _cube_lines(result)
    lines.append("")
    cubeful_trials = any(r.cubeful_equity is not None for r in result.candidates) and (
        result.cube is None or result.cube.get("method") == "cubeful trials")
    lines.append(s.describe().replace("cubeless rollout", "cubeful rollout") if cubeful_trials else s.describe())
    lines.append(f"{result.trials_done} games{' (stopped early)' if result.interrupted else ''}, "
                 f"dice from seed {result.seed} (the same on any number of workers)")
    lines.append(_play_line(s))
    if cubeful_trials:
        lines.append("Cube: played in every trial by bgnet.cube.decision on the net's 0-ply chances before each roll"
                     + ("; cubeful results less each roll's luck times the cube" if s.luck_vr else ""))
    if result.cube is not None:
        lines.append(f"Proper cube action: {result.cube['proper_cube_action']}"
                     + (f" (Janowski on the rolled-out chances: {result.cube['janowski_action']})"
                        if result.cube.get("janowski_action") else ""))
    return "\n".join(lines)
