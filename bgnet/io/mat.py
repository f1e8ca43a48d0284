"""The ``.mat`` text format (Jellyfish, GNU Backgammon and the online sites' variants): read and write.

``_MAT_CELLS`` lists each cell kind once, with the spellings read (the first one is
written), so reader and writer are driven by one table. Reading replays every game
(``bgnet.io.replay``); writing replays too, for the hit marks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from bgnet.core.notation import Step, parse_pairs
from bgnet.io.record import Action, ActionKind, GameRecord, MatchFileError, MatchRecord, mat_move_numbers
from bgnet.io.replay import replay_all, replay_match


# -- the cell table -------------------------------------------------------------------

# (kind, spellings read, text written). A "{cube}" field is the new cube value.
_MAT_CELLS: tuple[tuple[ActionKind, tuple[str, ...], str], ...] = (
    ("double", ("doubles", "redoubles", "double"), "Doubles => {cube}"),
    ("beaver", ("beavers", "beaver"), "Beavers => {cube}"),
    ("raccoon", ("raccoons", "raccoon"), "Raccoons => {cube}"),
    ("take", ("takes", "accepts", "take"), "Takes"),
    ("drop", ("drops", "passes", "rejects", "refuses", "drop", "pass"), "Drops"),
)
_WORD_KIND = {w: kind for kind, words, _ in _MAT_CELLS for w in words}
_WRITE = {kind: text for kind, _, text in _MAT_CELLS}
_CELL_START = re.compile(r"(?<![\w/])(?:([1-6])([1-6])\s*:|(" + "|".join(sorted(_WORD_KIND, key=len, reverse=True))
                         + r")\b)", re.IGNORECASE)
_CUBE_VALUE = re.compile(r"=>\s*(\d+)")
_NO_PLAY = re.compile(r"^(?:-+|\(?no (?:legal )?(?:play|move)\)?|cannot move|can't move|\?+)$", re.IGNORECASE)
_MATCH_LINE = re.compile(r"^\s*(\d+)\s*point\s+match", re.IGNORECASE)
_MONEY_LINE = re.compile(r"^\s*(?:money|unlimited)\s+(?:game|session)", re.IGNORECASE)
_GAME_LINE = re.compile(r"^\s*Game\s+(\d+)\s*$", re.IGNORECASE)
_SCORE_PAIR = re.compile(r"^\s*(.*?)\s*:\s*(\d+)\s+(.*?)\s*:\s*(\d+)\s*(?:\(.*\))?\s*$")
_MOVE_LINE = re.compile(r"^\s*(\d+)\)(.*)$")
_WINS_LINE = re.compile(r"^(\s*)Wins\s+(\d+)\s+points?", re.IGNORECASE)
_HEADER = re.compile(r"^\s*;\s*\[\s*([\w ]+?)\s+\"(.*)\"\s*\]\s*$")
_RATING = re.compile(r"\s*\(\s*[\d.]+\s*\)\s*$")
_RIGHT_COLUMN = 20
"""A lone cell starting this many characters or more after ``N)`` is the right player's."""
_LEFT_WIDTH = 28
"""Width of the left column written after ``NNN) ``, as gnubg writes it."""


def _cell(text: str, player: int, number: int, where: str) -> Action:
    """One cell of a move line as an Action."""
    m = _CELL_START.match(text)
    if m is None:  # cannot happen: cells are cut at _CELL_START matches
        raise MatchFileError(f"{where}: cannot read {text.strip()!r}")
    if m.group(1) is not None:
        dice = (int(m.group(1)), int(m.group(2)))
        rest = text[m.end():].strip()
        if not rest or _NO_PLAY.match(rest):
            return Action(player, "move", dice, (), number=number)
        try:
            steps = parse_pairs(rest.replace("*", " ").replace("Bar", "bar").replace("Off", "off"))
        except ValueError as err:
            raise MatchFileError(f"{where}: the play {rest!r} cannot be read ({err})") from None
        return Action(player, "move", dice, steps, number=number)
    kind = _WORD_KIND[m.group(3).lower()]
    value = _CUBE_VALUE.search(text)
    return Action(player, kind, cube=int(value.group(1)) if value else 0, number=number)


def _cells(body: str, number: int, where: str) -> list[tuple[int, Action]]:
    """The (player, action) cells of the text after ``N)`` (one or two)."""
    starts = [m.start() for m in _CELL_START.finditer(body)]
    if not starts:
        if body.strip():
            raise MatchFileError(f"{where}: cannot read {body.strip()!r} as a roll or a cube action")
        return []
    lead = body[:starts[0]].strip()
    if lead:
        raise MatchFileError(f"{where}: cannot read {lead!r} as a roll or a cube action")
    texts = [body[a:b] for a, b in zip(starts, starts[1:] + [len(body)])]
    if len(texts) > 2:
        raise MatchFileError(f"{where}: the line holds {len(texts)} actions; a move line has one per player")
    if len(texts) == 2:
        return [(0, _cell(texts[0], 0, number, where)), (1, _cell(texts[1], 1, number, where))]
    player = 1 if starts[0] >= _RIGHT_COLUMN else 0
    return [(player, _cell(texts[0], player, number, where))]


def _player_name(text: str) -> str:
    """A name from a score line, without a trailing rating like ``(1650.2)``."""
    return _RATING.sub("", text).strip()


def sniff_mat(text: str) -> bool:
    """Whether ``text`` looks like a ``.mat`` file: an ``N point match`` (or money session) line, no SGF ``(;``."""
    if text.lstrip().startswith("("):
        return False
    return any(_MATCH_LINE.match(line) or _MONEY_LINE.match(line) for line in text.splitlines())


# -- reading .mat ---------------------------------------------------------------------


@dataclass
class _RawGame:
    """A game being read: its lines turned into cells, before replay."""

    number: int
    line: int
    score: tuple[int, int] | None = None
    actions: list[Action] = field(default_factory=list)
    winner: int | None = None
    points: int = 0


def parse_mat(text: str, *, lenient: bool = False, source: str = "the .mat file") -> MatchRecord:
    """Read and replay a ``.mat`` match (Jellyfish / GNU Backgammon / online-site variants)."""
    headers: list[tuple[str, str]] = []
    length: int | None = None
    names: tuple[str, str] | None = None
    raw: list[_RawGame] = []
    cur: _RawGame | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}, line {lineno}" + (f" (game {cur.number})" if cur else "")
        if line.lstrip().startswith(";"):
            h = _HEADER.match(line)
            if h:
                headers.append((h.group(1), h.group(2)))
            continue
        if cur is None and length is None:
            m = _MATCH_LINE.match(line)
            if m:
                length = int(m.group(1))
                continue
            if _MONEY_LINE.match(line):
                length = 0
                continue
        m = _GAME_LINE.match(line)
        if m:
            cur = _RawGame(int(m.group(1)), lineno)
            raw.append(cur)
            continue
        if cur is None:
            continue  # free text before the first game (site banners, comments)
        m = _MOVE_LINE.match(line)
        if m:
            number = int(m.group(1))
            for _player, action in _cells(m.group(2), number, f"{where}, move {number}"):
                cur.actions.append(action)
            continue
        m = _WINS_LINE.match(line)
        if m:
            cur.winner = 1 if len(m.group(1)) >= _RIGHT_COLUMN else 0
            cur.points = int(m.group(2))
            continue
        m = _SCORE_PAIR.match(line)
        if m and cur.score is None and not cur.actions:
            n0, n1 = _player_name(m.group(1)), _player_name(m.group(3))
            if names is None:
                names = (n0, n1)
            elif (n0, n1) == (names[1], names[0]) and n0 != n1:
                raise MatchFileError(f"{where}: the players swap columns ({n0} is now on the left)")
            cur.score = (int(m.group(2)), int(m.group(4)))
            continue
        raise MatchFileError(f"{where}: cannot read {line.strip()!r}")
    if length is None:
        raise MatchFileError(f"{source}: no 'N point match' line, so the match length is unknown")
    if not raw:
        raise MatchFileError(f"{source}: no game found (no 'Game 1' line)")
    on = {k.lower().rstrip("s"): v.lower() in ("on", "yes", "true", "1") for k, v in headers}
    money = length == 0
    any_beaver = any(a.kind == "beaver" for r in raw for a in r.actions)
    match = MatchRecord(players=names or ("Player 0", "Player 1"), match_length=length, games=(),
                        jacoby=money and on.get("jacoby", False),
                        beavers=money and (on.get("beaver", False) or any_beaver),
                        headers=tuple((k, v) for k, v in headers if k.lower().rstrip("s") not in ("jacoby", "beaver")))
    games = [GameRecord(r.number, r.score if r.score is not None else (-1, -1), tuple(r.actions), r.winner, r.points)
             for r in raw]
    return replay_match(replace(match, games=tuple(games)), lenient=lenient, source=source)


# -- writing .mat ---------------------------------------------------------------------


def _mat_cell(action: Action, hits: int = 0) -> str:
    """The text of one cell."""
    if action.kind == "move":
        assert action.dice is not None
        d1, d2 = max(action.dice), min(action.dice)
        return f"{d1}{d2}: " + " ".join(_step_texts(action.steps, hits))
    return " " + _WRITE[action.kind].format(cube=action.cube)


def _step_texts(steps: Sequence[Step], hits: int) -> list[str]:
    """One ``a/b`` per die in numbers (bar 25, off 0), ``*`` on the first landing on each hit point."""
    marked = 0
    out = []
    for a, b in steps:
        hit = 0 < b < 25 and bool(hits >> b & 1) and not (marked >> b & 1)
        marked |= (1 << b) if hit else 0
        out.append(f"{a}/{b}" + ("*" if hit else ""))
    return out


def format_mat(match: MatchRecord) -> str:
    """The match as ``.mat`` text in GNU Backgammon's layout (moves replayed for hit marks)."""
    rules = [("Jacoby", "On" if match.jacoby else "Off"), ("Beavers", "On" if match.beavers else "Off")]
    lines = [f'; [{k} "{v}"]' for k, v in match.headers + (tuple(rules) if not match.match_length else ())]
    lines += ["", f" {match.match_length} point match", ""]
    replayed = {r.record.number: r for r in replay_all(match, lenient=True, source="the match")[1]}
    for record in match.games:
        hits = {id(s.action): s.move.hits for s in replayed[record.number].steps if s.move is not None} \
            if record.number in replayed else {}
        lines.append(f" Game {record.number}")
        left = f"{match.players[0]} : {record.score[0]}"
        lines.append(f" {left:<30} {match.players[1]} : {record.score[1]}")
        numbers = mat_move_numbers(record.actions)
        rows = [["", ""] for _ in range(numbers[-1] if numbers else 0)]
        for a, n in zip(record.actions, numbers):
            rows[n - 1][a.player] = _mat_cell(a, hits.get(id(a), 0))
        for n, (left, right) in enumerate(rows, start=1):
            lines.append(f"{n:3d}) {left:<{_LEFT_WIDTH}} {right}".rstrip())
        if record.winner is not None:
            pad = 6 if record.winner == 0 else 6 + _LEFT_WIDTH + 1
            word = "point" if record.points == 1 else "points"
            over = match.match_length and record.score[record.winner] + record.points >= match.match_length
            lines.append(" " * pad + f"Wins {record.points} {word}" + (" and the match" if over else ""))
        lines.append("")
    return "\n".join(lines) + "\n"
