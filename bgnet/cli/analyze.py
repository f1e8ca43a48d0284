"""``bgnet analyze FILE``: rate every decision of a ``.mat`` / ``.sgf`` match, as text, JSON or a one-file HTML report.

A record cut off in the middle of a game (or a game quit in ``bgnet play``) is analysed
as far as it goes, with exit 0: every move in it was replayed and proved legal, so
what is rated is valid. The report says which games are unfinished (a warning line
in the text, ``unfinished_games`` in the JSON, a note in the HTML), and the results
count finished games only. A file that cannot be read or replayed exits 2.

Stdlib-only at import (``bgnet.cli.main`` imports it for every command); the analysis loads in ``run_analyze``.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import sys
from typing import TYPE_CHECKING

from bgnet.cli.parser import add_prune_argument
from bgnet.core.atomic import atomic_write

if TYPE_CHECKING:
    from bgnet.app.analysis import Decision, MatchAnalysis
    from bgnet.core.position import Position


def add_analyze_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet analyze``."""
    parser.add_argument("file", metavar="FILE", help="a match file: .mat (Jellyfish / GNU Backgammon text) or .sgf")
    parser.add_argument("--ply", type=int, default=2, metavar="N", help="search depth of the analysis (default 2)")
    parser.add_argument("--model", metavar="SPEC", default=None,
                        help="the net: default (the released net) or a checkpoint file (default: default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_prune_argument(parser)
    parser.add_argument("--html", metavar="OUT.html", default=None, help="also write a self-contained HTML report")
    parser.add_argument("--lenient", action="store_true",
                        help="skip games that cannot be replayed (with a warning) instead of stopping")


def run_analyze(args: argparse.Namespace) -> int:
    """Read and replay the file, analyse it, print the summary (or JSON), write the HTML report if asked."""
    from bgnet.app.analysis import analyse_match
    from bgnet.app.answers import load_probs_fn
    from bgnet.app.requests import check_ply
    from bgnet.cli.parser import CliError
    from bgnet.io.formats import read_match

    check_ply(args.ply)
    match = read_match(args.file, lenient=args.lenient)
    for problem in match.problems:
        print(f"bgnet: warning: skipped: {problem}", file=sys.stderr)
    if not match.games:
        raise CliError(f"{args.file}: no game could be replayed")
    fn = load_probs_fn(args.model, prune=not args.no_prune)  # the net of bgnet hint and bgnet serve, exact in pure bear-offs
    analysis = analyse_match(fn, match, args.ply)
    if args.html:
        write_html(analysis, args.html)
    if args.json:
        print(json.dumps(analysis.to_dict()))
    else:
        print(analysis.format())
        if args.html:
            print(f"\nHTML report written to {args.html}")
    return 0


# -- HTML report ----------------------------------------------------------------------


def board_svg(pos: Position, width: int = 300) -> str:
    """An SVG drawing of ``pos`` from the side on roll (X, dark checkers, home board bottom right)."""
    w, h = 15 * 26, 15 * 22  # viewBox units: 13 columns of 30 incl. bar, plus a tray
    col = 26.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{width}" role="img">',
             f'<rect width="{w}" height="{h}" fill="#e8d7b0"/>']
    bar_x = 6 * col
    parts.append(f'<rect x="{bar_x:.0f}" y="0" width="{col:.0f}" height="{h}" fill="#8b5a2b"/>')
    b = pos.board

    def x_of(point: int) -> float:
        """Left edge of the column of X's ``point`` (1..24)."""
        idx = 12 - point if point <= 12 else point - 13  # 0..11 from the left
        return idx * col + (col if idx >= 6 else 0.0)

    for p in range(1, 25):
        x = x_of(p)
        top = p > 12
        y0, y1 = (0.0, h * 0.42) if top else (float(h), h * 0.58)
        fill = "#a0522d" if p % 2 else "#f5f0e1"
        parts.append(f'<polygon points="{x:.1f},{y0:.1f} {x + col:.1f},{y0:.1f} {x + col / 2:.1f},{y1:.1f}" '
                     f'fill="{fill}" stroke="#5a3a1a" stroke-width="0.5"/>')
        label_y = 10 if top else h - 3
        parts.append(f'<text x="{x + col / 2:.1f}" y="{label_y}" font-size="7" text-anchor="middle" '
                     f'fill="#333">{p}</text>')
        n = b[p]
        if n:
            parts += _stack(x + col / 2, top, abs(n), n > 0, h)
    for count, mine in ((b[25], True), (-b[0], False)):
        if count:
            parts += _stack(bar_x + col / 2, not mine, count, mine, h, start=h * 0.25)
    off_me, off_opp = pos.off, pos.opp_off
    parts.append(f'<text x="{w - 4}" y="{h - 14}" font-size="9" text-anchor="end">X off {off_me}</text>')
    parts.append(f'<text x="{w - 4}" y="22" font-size="9" text-anchor="end">O off {off_opp}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _stack(cx: float, top: bool, count: int, mine: bool, h: int, start: float | None = None) -> list[str]:
    """Circles for ``count`` checkers on one point (5 drawn, then a count)."""
    r = 12.0
    out = []
    fill, text = ("#222", "#fff") if mine else ("#fafafa", "#000")
    for k in range(min(count, 5)):
        base = (start if start is not None else 14.0)
        cy = base + r + 2 * r * k if top else h - base - r - 2 * r * k
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r - 0.5}" fill="{fill}" stroke="#555"/>')
        if k == min(count, 5) - 1 and count > 5:
            out.append(f'<text x="{cx:.1f}" y="{cy + 4:.1f}" font-size="11" text-anchor="middle" '
                       f'fill="{text}">{count}</text>')
    return out


def equity_chart_png(analysis: MatchAnalysis) -> str | None:
    """A data URI of a PNG chart of player 0's equity through each game, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 2.8), dpi=90)
    x0 = 0
    for k, curve in enumerate(analysis.equity_curves, start=1):
        xs = list(range(x0, x0 + len(curve)))
        ax.plot(xs, curve, lw=1.2, label=f"game {k}" if len(analysis.equity_curves) <= 8 else None)
        x0 += len(curve)
        ax.axvline(x0 - 0.5, color="#ccc", lw=0.6)
    ax.axhline(0, color="#888", lw=0.6)
    ax.set_ylabel(f"equity of {analysis.players[0].name}")
    ax.set_xlabel("play")
    ax.set_ylim(-3.2, 3.2)
    if len(analysis.equity_curves) <= 8:
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def format_html(analysis: MatchAnalysis) -> str:
    """The whole report as one HTML document (inline CSS, SVG boards, the chart as a data URI)."""
    from bgnet.app.analysis import count_of, format_result
    from bgnet.core.movegen import roll_text
    from bgnet.core.position import Position

    esc = html.escape
    m = analysis.match
    money = m.match_length == 0
    a, b = analysis.players
    title = f"{esc(a.name)} vs {esc(b.name)}: " + (f"{m.match_length}-point match" if m.match_length else "money session")
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>", f"<title>{title}</title>",
           "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}.very.bad{background:#f99}"
           ".bad{background:#fc9}.doubtful{background:#ffc}.num{text-align:right}.played{font-weight:bold}"
           ".warning{background:#fee;border:1px solid #c66;padding:4px}</style></head><body>",
           f"<h1>{title}</h1>", f"<p>Analysis by bgnet of {count_of(len(m.games), 'game')} at {analysis.ply} ply.</p>"]
    if analysis.unfinished_games:
        out.append(f"<p class='warning'>{esc(analysis.warning())}</p>")
    out += ["<h2>Summary</h2><table>", f"<tr><th></th><th>{esc(a.name)}</th><th>{esc(b.name)}</th></tr>"]
    rows = [("Unforced moves", a.unforced_moves, b.unforced_moves),
            ("Close or actual cube decisions", a.close_cube_decisions, b.close_cube_decisions),
            ("Checker error rate (mEMG)", f"{a.checker_error_rate_memg:.1f}", f"{b.checker_error_rate_memg:.1f}"),
            ("Cube error rate (mEMG)", f"{a.cube_error_rate_memg:.1f}", f"{b.cube_error_rate_memg:.1f}"),
            ("Overall error rate (mEMG)", f"{a.overall_error_rate_memg:.1f}", f"{b.overall_error_rate_memg:.1f}"),
            ("PR", f"{a.pr:.1f}", f"{b.pr:.1f}"),
            ("Doubtful / bad / very bad", f"{a.marks['doubtful']} / {a.marks['bad']} / {a.marks['very bad']}",
             f"{b.marks['doubtful']} / {b.marks['bad']} / {b.marks['very bad']}"),
            ("Luck rate (mEMG)", f"{a.luck_rate_memg:+.1f}", f"{b.luck_rate_memg:+.1f}"),
            ("Actual result", format_result(a.result, money), format_result(b.result, money)),
            ("Luck adjusted result", format_result(analysis.luck_adjusted[0], money),
             format_result(analysis.luck_adjusted[1], money))]
    out += [f"<tr><td>{label}</td><td class='num'>{x}</td><td class='num'>{y}</td></tr>" for label, x, y in rows]
    out.append("</table>")
    chart = equity_chart_png(analysis)
    if chart:
        out.append(f"<h2>Equity through the match</h2><img alt='equity chart' src='{chart}'>")
    for rec in m.games:
        out.append(f"<h2>Game {rec.number}</h2><p>Score {rec.score[0]}-{rec.score[1]}"
                   + (" (Crawford game)" if rec.crawford else "")
                   + (f"; {esc(m.players[rec.winner])} wins {count_of(rec.points, 'point')}"
                      + (" by resignation" if rec.resigned else "")
                      if rec.winner is not None else "; unfinished: the record ends before a result") + "</p>")
        out.append("<table><tr><th>move</th><th>player</th><th>dice</th><th>played</th><th>best</th>"
                   "<th>loss</th><th>mark</th></tr>")
        marked = []
        for d in analysis.decisions:
            if d.game != rec.number or (d.kind != "move" and not d.unforced):
                continue  # cube decisions far from doubling are counted but not listed
            cls = f" class='{d.mark}'" if d.mark else ""
            dice = roll_text(d.dice, sep="") if d.dice else ""
            out.append(f"<tr{cls}><td>{d.move_number}</td><td>{esc(m.players[d.player])}</td><td>{dice}</td>"
                       f"<td>{esc(d.played or '(no play)')}</td><td>{esc(d.best or '(no play)')}</td>"
                       f"<td class='num'>{d.loss:.3f}</td><td>{d.mark}</td></tr>")
            if d.mark:
                marked.append(d)
        out.append("</table>")
        for d in marked:
            dice = f" rolls {roll_text(d.dice, sep='')}" if d.dice else ""
            out.append(f"<h3>Move {d.move_number}: {esc(m.players[d.player])}{dice} ({d.mark}, -{d.loss:.3f})</h3>"
                       f"<div style='display:flex;gap:16px'>{board_svg(Position.from_position_id(d.position_id))}"
                       f"<div><p>Played: <b>{esc(d.played or '(no play)')}</b><br>Best: <b>{esc(d.best)}</b></p>"
                       f"{alternatives_table(d)}<p><code>{d.position_id}</code></p></div></div>")
    out.append("</body></html>")
    return "\n".join(out)


def alternatives_table(d: Decision) -> str:
    """The options of a decision as gnubg lists them: rank, ply, equity and its difference from the best; the played
    one starred (and shown where it falls even below the first few)."""
    esc = html.escape
    best = d.alternatives[0].equity if d.alternatives else 0.0
    rows = ["<table class='alternatives'><tr><th>#</th><th>option</th><th>ply</th><th>equity</th><th>diff</th></tr>"]
    for alt in d.alternatives:
        cls = " class='played'" if alt.played else ""
        diff = f"{alt.equity - best:+.3f}" if alt.rank > 1 else ""
        rows.append(f"<tr{cls}><td class='num'>{'*' if alt.played else ''}{alt.rank}</td>"
                    f"<td>{esc(alt.choice or '(no play)')}{' (played)' if alt.played else ''}</td>"
                    f"<td class='num'>{alt.ply}</td><td class='num'>{alt.equity:+.3f}</td>"
                    f"<td class='num'>{diff}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def write_html(analysis: MatchAnalysis, path: str | os.PathLike[str]) -> None:
    """Write the HTML report through a temporary file renamed into place."""
    with atomic_write(path, "w", encoding="utf-8", permissions=0o644) as f:
        f.write(format_html(analysis))
