"""Match files: the ``.mat`` text format and GNU Backgammon's ``.sgf``, read, replayed and written.

A match is held as plain values (``MatchRecord`` > ``GameRecord`` > ``Action``),
seats 0 and 1 being the left and right columns of a ``.mat`` file (gnubg's
player 0 and 1, White and Black in its ``.sgf``). Every action is one cell of a
``.mat`` move line: a roll and its play, a double, a take, a drop, a beaver.
``_MAT_CELLS`` and ``_SGF_CUBE`` list each cell kind once, with the spellings
read (the first one is written), so reader and writer are driven by one table.

Reading replays every game through ``bgnet.play.game``: each play must be one of
``legal_moves``, each cube action allowed by the rules, each score line equal to
the points won so far. A problem raises ``MatchFileError``, one sentence naming
the game and move, which carries what was read before it (``partial``); with
``lenient=True`` a bad game is skipped, its sentence kept in ``problems``.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal, Sequence

from bgnet.play import game as g
from bgnet.core.errors import BgnetError
from bgnet.core.movegen import legal_moves
from bgnet.core.notation import Move, Step, apply_pairs, format_steps, parse_move, parse_pairs
from bgnet.core.position import Position

ActionKind = Literal["move", "double", "take", "drop", "beaver", "raccoon"]


class MatchFileError(BgnetError):
    """A match file that cannot be read or replayed; ``partial`` holds what was read before the problem."""

    def __init__(self, message: str, partial: "MatchRecord | None" = None) -> None:
        super().__init__(message)
        self.partial = partial


# -- values ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One decision of one player: a roll and its play, or a cube action."""

    player: int
    """Seat 0 (left column, gnubg's player 0) or 1."""
    kind: ActionKind
    dice: tuple[int, int] | None = None
    """The roll of a "move" (None for cube actions)."""
    steps: tuple[Step, ...] = ()
    """The play of a "move" as written: (from, to) in the mover's numbering, 25 = bar, 0 = off."""
    cube: int = 0
    """The cube value a double, beaver or raccoon turns it to (0 when the file does not say)."""
    number: int = 0
    """The move number of the line in the file (the ``N)`` of a ``.mat``), for messages."""

    @property
    def text(self) -> str:
        """The play in gnubg's notation, e.g. ``24/18 13/11*`` (without hit marks: they need the board)."""
        return format_steps(self.steps)


@dataclass(frozen=True)
class GameRecord:
    """One game as written: the score before it, its actions, and who won how much."""

    number: int
    """1-based game number."""
    score: tuple[int, int]
    """Points of seats 0 and 1 before this game."""
    actions: tuple[Action, ...]
    winner: int | None = None
    """Seat that won, or None for a game left unfinished."""
    points: int = 0
    """Points the winner scored (cube included)."""
    resigned: bool = False
    """True when the game ended by a resignation (known after replay)."""
    crawford: bool = False
    """True for the Crawford game (known after replay)."""


@dataclass(frozen=True)
class MatchRecord:
    """A whole match or money session: players, length, rules and games."""

    players: tuple[str, str]
    match_length: int
    """Points to win; 0 for money play."""
    games: tuple[GameRecord, ...]
    crawford_rule: bool = True
    """Match play: the Crawford rule applies."""
    jacoby: bool = False
    """Money play: the Jacoby rule applies."""
    beavers: bool = False
    """Money play: beavers are allowed."""
    headers: tuple[tuple[str, str], ...] = ()
    """``; [Key "value"]`` lines of a ``.mat`` (event, date, site, ...)."""
    problems: tuple[str, ...] = ()
    """Sentences for games skipped when read leniently."""

    @property
    def rules(self) -> g.Rules:
        """The rules of ``bgnet.play.game`` for these games."""
        return g.Rules(match_length=self.match_length, jacoby=self.jacoby, beavers=self.beavers,
                       raccoons=self.beavers)


@dataclass(frozen=True)
class ReplayStep:
    """One action with the game just before it: a move's state is its roll phase (or the opening's move phase)."""

    action: Action
    before: g.Game
    move: Move | None = None
    """The legal play a "move" action resolved to."""


@dataclass(frozen=True)
class ReplayedGame:
    """A game replayed through ``bgnet.play.game``: every step and the final state."""

    record: GameRecord
    steps: tuple[ReplayStep, ...]
    final: g.Game


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


# -- replay ---------------------------------------------------------------------------


def _resolve(pos: Position, dice: tuple[int, int], steps: tuple[Step, ...]) -> Move | None:
    """The legal play whose afterstate the written one-die steps reach (each landing hits), or None.

    Steps are tried in the order written, then in any other order (files differ in
    how they sort them); a written chain that jumps several pips (``13/7``) falls
    back to ``parse_move``'s reading.
    """
    moves = legal_moves(pos, dice)
    if not steps:
        return moves[0] if moves[0].is_empty else None
    by_after = {m.after: m for m in moves}
    for perm in dict.fromkeys(itertools.permutations(steps)):
        after = apply_pairs(pos, perm)
        if after is not None and after in by_after:
            return by_after[after]
    try:
        return parse_move(pos, format_steps(steps), dice)
    except ValueError:
        return None


def _who(match: MatchRecord, player: int) -> str:
    return match.players[player]


def replay_game(match: MatchRecord, record: GameRecord, crawford: bool, post_crawford: bool,
                source: str = "the file") -> ReplayedGame:
    """Replay one game through the rules; a MatchFileError names the game and move of the first problem."""
    where = f"{source}, game {record.number}"
    rules = match.rules
    steps: list[ReplayStep] = []
    actions = record.actions
    moves = [a for a in actions if a.kind == "move"]
    if not actions:
        raise MatchFileError(f"{where}: the game has no moves")
    if actions[0].kind != "move":
        raise MatchFileError(f"{where}, move {actions[0].number}: the game must start with the opening roll, "
                             f"not a {actions[0].kind}")
    first = actions[0]
    assert first.dice is not None and moves
    if first.dice[0] == first.dice[1]:
        raise MatchFileError(f"{where}, move {first.number}: the opening roll {first.dice[0]}{first.dice[1]} "
                             "cannot be a double")
    try:
        game = g.new_game(rules, first.player, first.dice, record.score, crawford=crawford,
                          post_crawford=post_crawford)
    except g.GameRuleError as err:
        raise MatchFileError(f"{where}: {err}") from None
    for i, action in enumerate(actions):
        at = f"{where}, move {action.number}"
        name = _who(match, action.player)
        if game.is_over:
            raise MatchFileError(f"{at}: {name}'s {action.kind} comes after the game has ended")
        try:
            if action.kind == "move":
                if game.phase == "beavered":
                    game = g.raccoon(game, False)
                if game.phase == "doubled":
                    raise MatchFileError(f"{at}: {name} rolls while a double waits for an answer")
                if game.turn != action.player:
                    raise MatchFileError(f"{at}: {name} rolls, but it is {_who(match, game.turn)}'s turn")
                before = game
                if i > 0:
                    assert action.dice is not None
                    game = g.roll(game, action.dice)
                elif action.player != game.turn:  # pragma: no cover - new_game takes first.player
                    raise MatchFileError(f"{at}: the opening player is wrong")
                assert game.dice is not None
                move = _resolve(game.position, game.dice, action.steps)
                if move is None:
                    shown = " ".join(f"{a}/{b}" for a, b in action.steps) or "no play"
                    raise MatchFileError(f"{at}: {name}'s {game.dice[0]}{game.dice[1]}: {shown} is not a legal play "
                                         f"in this position")
                steps.append(ReplayStep(action, before, move))
                game = g.play(game, move)
            elif action.kind == "double":
                if game.phase == "beavered":
                    game = g.raccoon(game, False)
                if game.turn != action.player:
                    raise MatchFileError(f"{at}: {name} doubles, but it is {_who(match, game.turn)}'s turn")
                if game.phase != "roll" or not g.may_double(game):
                    raise MatchFileError(f"{at}: {name} may not double here (no cube access, the Crawford game, "
                                         "or a double already pending)")
                if action.cube and action.cube != 2 * game.cube:
                    raise MatchFileError(f"{at}: {name} doubles to {action.cube}, but the cube is at {game.cube}")
                steps.append(ReplayStep(action, game))
                game = g.double(game)
            elif action.kind in ("take", "drop", "beaver"):
                if game.phase != "doubled" or action.player != game.opponent:
                    raise MatchFileError(f"{at}: {name} answers a double that was not offered to him")
                if action.kind == "beaver" and not rules.beavers:
                    raise MatchFileError(f"{at}: {name} beavers, but beavers are not allowed in this "
                                         f"{'match' if match.match_length else 'session'}")
                steps.append(ReplayStep(action, game))
                game = g.respond(game, {"take": "take", "drop": "pass", "beaver": "beaver"}[action.kind])
            else:  # raccoon
                if game.phase != "beavered" or action.player != game.turn:
                    raise MatchFileError(f"{at}: {name} raccoons without a beaver to answer")
                steps.append(ReplayStep(action, game))
                game = g.raccoon(game, True)
        except g.GameRuleError as err:
            raise MatchFileError(f"{at}: {err}") from None
    if game.phase == "beavered":
        game = g.raccoon(game, False)
    resigned = False
    end = f"{where}, the end"
    if game.is_over:
        assert game.result is not None
        if record.winner is not None and (record.winner, record.points) != (game.result.winner, game.result.points):
            raise MatchFileError(f"{end}: the file says {_who(match, record.winner)} wins {record.points} points, "
                                 f"but the play gives {_who(match, game.result.winner)} {game.result.points}")
        winner, points = game.result.winner, game.result.points
    elif record.winner is not None:
        if record.points not in (game.cube, 2 * game.cube, 3 * game.cube):
            raise MatchFileError(f"{end}: {_who(match, record.winner)} wins {record.points} points by resignation, "
                                 f"but with the cube at {game.cube} a resignation is worth {game.cube}, "
                                 f"{2 * game.cube} or {3 * game.cube}")
        winner, points, resigned = record.winner, record.points, True
    else:
        winner, points = None, 0
    done = replace(record, winner=winner, points=points, resigned=resigned, crawford=crawford)
    return ReplayedGame(done, tuple(steps), game)


def replay_match(match: MatchRecord, *, lenient: bool = False, source: str = "the file") -> MatchRecord:
    """Check every game of ``match`` by replay and fill in results and Crawford flags (see ``replay_game``)."""
    return _replay(match, lenient, source)[0]


def replay_games(match: MatchRecord, source: str = "the match") -> list[ReplayedGame]:
    """Every game of a (read) match replayed, with the state before each action, for analysis."""
    return _replay(match, False, source)[1]


def _replay(match: MatchRecord, lenient: bool, source: str) -> tuple[MatchRecord, list[ReplayedGame]]:
    n = match.match_length
    done: list[GameRecord] = []
    replayed: list[ReplayedGame] = []
    problems = list(match.problems)
    score = (0, 0)
    crawford_played = False
    skipped_before = bool(match.games) and match.games[0].number != 1  # a match read leniently may miss games
    previous = match.games[0].number - 1 if match.games else 0
    for record in match.games:
        where = f"{source}, game {record.number}"
        skipped_before = skipped_before or record.number != previous + 1
        previous = record.number
        try:
            written = record.score
            if written == (-1, -1):
                written = score
            if written != score and not skipped_before:
                raise MatchFileError(f"{where}: the score line says {written[0]}-{written[1]}, but the games before "
                                     f"give {score[0]}-{score[1]}")
            if n and max(written) >= n:
                raise MatchFileError(f"{where}: a score of {written[0]}-{written[1]} has already ended the "
                                     f"{n}-point match")
            state = g.Match(match.rules, written, crawford_played, len(done))
            crawford = match.crawford_rule and state.next_is_crawford
            post = crawford_played or (n > 0 and not match.crawford_rule)
            game = replay_game(match, replace(record, score=written), crawford, post, source)
        except MatchFileError as err:
            if not lenient:
                partial = replace(match, games=tuple(done), problems=tuple(problems))
                raise MatchFileError(str(err), partial) from None
            problems.append(str(err))
            skipped_before = True
            continue
        skipped_before = False
        done.append(game.record)
        replayed.append(game)
        crawford_played = crawford_played or crawford
        if game.record.winner is not None:
            s = list(written)
            s[game.record.winner] += game.record.points
            score = (s[0], s[1])
        else:
            score = written
    return replace(match, games=tuple(done), problems=tuple(problems)), replayed


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
    replayed = {r.record.number: r for r in _replay(match, True, "the match")[1]}
    for record in match.games:
        hits = {id(s.action): s.move.hits for s in replayed[record.number].steps if s.move is not None} \
            if record.number in replayed else {}
        lines.append(f" Game {record.number}")
        left = f"{match.players[0]} : {record.score[0]}"
        lines.append(f" {left:<30} {match.players[1]} : {record.score[1]}")
        cells: list[str] = []
        actions = list(record.actions)
        if actions and actions[0].player == 1:
            cells.append("")
        for a in actions:
            if len(cells) % 2 != a.player:  # after a raccoon the same player acts again
                cells.append("")
            cells.append(_mat_cell(a, hits.get(id(a), 0)))
        for k in range(0, len(cells), 2):
            pair = cells[k:k + 2]
            right = pair[1] if len(pair) > 1 else ""
            lines.append(f"{k // 2 + 1:3d}) {pair[0]:<{_LEFT_WIDTH}} {right}".rstrip())
        if record.winner is not None:
            pad = 6 if record.winner == 0 else 6 + _LEFT_WIDTH + 1
            word = "point" if record.points == 1 else "points"
            over = match.match_length and record.score[record.winner] + record.points >= match.match_length
            lines.append(" " * pad + f"Wins {record.points} {word}" + (" and the match" if over else ""))
        lines.append("")
    return "\n".join(lines) + "\n"


# -- SGF ------------------------------------------------------------------------------

# (kind, the SGF move value) for cube actions; read case-insensitively.
_SGF_CUBE: tuple[tuple[ActionKind, str], ...] = (
    ("double", "double"), ("take", "take"), ("drop", "drop"), ("beaver", "beaver"), ("raccoon", "raccoon"),
)
_SGF_KIND = {v: k for k, v in _SGF_CUBE} | {"pass": "drop", "redouble": "double"}
_SGF_WRITE = {k: v for k, v in _SGF_CUBE}
_SGF_COLOUR = ("W", "B")
"""Seat 0 is gnubg's player 0, White in its SGF; seat 1 is Black."""


def _sgf_point(ch: str, player: int) -> int:
    """A point letter of a move by ``player`` in the mover's numbering (25 bar, 0 off)."""
    if ch == "y":
        return 25
    if ch == "z":
        return 0
    i = ord(ch) - ord("a")
    if not 0 <= i < 24:
        raise ValueError(f"{ch!r} is not a point letter a..x, y (bar) or z (off)")
    return i + 1 if player == 0 else 24 - i


def _sgf_letter(point: int, player: int) -> str:
    """The SGF letter of a point of ``player``'s numbering."""
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + (point - 1 if player == 0 else 24 - point))


def _sgf_trees(text: str, source: str) -> list[list[list[tuple[str, list[str]]]]]:
    """The game trees of an SGF collection: each a list of nodes, each a list of (property, values)."""
    trees: list[list[list[tuple[str, list[str]]]]] = []
    i, n = 0, len(text)
    depth = 0
    nodes: list[list[tuple[str, list[str]]]] = []
    while i < n:
        ch = text[i]
        if ch == "(":
            depth += 1
            if depth == 1:
                nodes = []
            i += 1
        elif ch == ")":
            if depth == 0:
                raise MatchFileError(f"{source}: a ')' at character {i} closes no game")
            depth -= 1
            if depth == 0:
                trees.append(nodes)
            i += 1
        elif ch == ";":
            if depth == 0:
                raise MatchFileError(f"{source}: a node at character {i} lies outside any game '(...)'")
            nodes.append([])
            i += 1
        elif ch.isalpha() and ch.isupper():
            j = i
            while j < n and text[j].isalpha():
                j += 1
            name = text[i:j]
            values = []
            while True:
                while j < n and text[j].isspace():
                    j += 1
                if j >= n or text[j] != "[":
                    break
                k, buf = j + 1, []
                while k < n and text[k] != "]":
                    if text[k] == "\\" and k + 1 < n:
                        k += 1
                    buf.append(text[k])
                    k += 1
                if k >= n:
                    raise MatchFileError(f"{source}: the value of {name} at character {j} has no closing ']'")
                values.append("".join(buf))
                j = k + 1
            if not values:
                raise MatchFileError(f"{source}: the property {name} at character {i} has no value")
            if not nodes:
                raise MatchFileError(f"{source}: the property {name} at character {i} comes before any node ';'")
            nodes[-1].append((name, values))
            i = j
        elif ch.isspace():
            i += 1
        else:
            raise MatchFileError(f"{source}: unexpected character {ch!r} at character {i}")
    if depth:
        raise MatchFileError(f"{source}: the file ends inside a game (a '(' is not closed)")
    return trees


def parse_sgf(text: str, *, lenient: bool = False, source: str = "the .sgf file") -> MatchRecord:
    """Read and replay GNU Backgammon's SGF (moves, dice, cube actions, match length, rules, players)."""
    trees = _sgf_trees(text, source)
    if not trees:
        raise MatchFileError(f"{source}: no game found (no '(;' ... ')')")
    players = ["White", "Black"]
    length = 0
    crawford_rule, jacoby, beavers = False, False, False
    games: list[GameRecord] = []
    for gi, nodes in enumerate(trees, start=1):
        where = f"{source}, game {gi}"
        if not nodes:
            raise MatchFileError(f"{where}: the game has no nodes")
        root = dict((k, v) for k, v in nodes[0])
        if root.get("GM", ["6"])[0] != "6":
            raise MatchFileError(f"{where}: GM[{root['GM'][0]}] is not backgammon (GM[6])")
        if any(k in root for k in ("AB", "AW", "AE")):
            raise MatchFileError(f"{where}: setup positions (AB/AW/AE) are not supported; only games from the start")
        info = {}
        for item in root.get("MI", []):
            key, _, value = item.partition(":")
            info[key.strip()] = value.strip()
        try:
            length = int(info.get("length", length))
            score = (int(info.get("ws", 0)), int(info.get("bs", 0)))
        except ValueError:
            raise MatchFileError(f"{where}: the match information MI{root['MI']} is not numbers") from None
        players = [root.get("PW", [players[0]])[0], root.get("PB", [players[1]])[0]]
        rules = " ".join(root.get("RU", [])).lower()
        crawford_rule = "crawford" in rules
        jacoby, beavers = "jacoby" in rules, "beaver" in rules
        winner, points = None, 0
        if "RE" in root:
            m = re.match(r"^\s*([WB])\+(\d+)", root["RE"][0])
            if m:
                winner, points = _SGF_COLOUR.index(m.group(1)), int(m.group(2))
        actions: list[Action] = []
        for ni, node in enumerate(nodes[1:], start=1):
            for name, values in node:
                if name not in _SGF_COLOUR:
                    continue
                player = _SGF_COLOUR.index(name)
                value = values[0].strip()
                low = value.lower()
                if low in _SGF_KIND:
                    actions.append(Action(player, _SGF_KIND[low], number=ni))  # type: ignore[arg-type]
                    continue
                if low.startswith("resign"):
                    continue  # the result (RE) says who won and how much
                m = re.fullmatch(r"([1-6])([1-6])([a-z]*)", value)
                if m is None or len(m.group(3)) % 2:
                    raise MatchFileError(f"{where}, move {ni}: cannot read {name}[{value}] as a roll and a play")
                letters = m.group(3)
                try:
                    steps = tuple((_sgf_point(letters[k], player), _sgf_point(letters[k + 1], player))
                                  for k in range(0, len(letters), 2))
                except ValueError as err:
                    raise MatchFileError(f"{where}, move {ni}: {name}[{value}]: {err}") from None
                actions.append(Action(player, "move", (int(m.group(1)), int(m.group(2))), steps, number=ni))
        games.append(GameRecord(gi, score, tuple(actions), winner, points))
    match = MatchRecord(players=(players[0], players[1]), match_length=length, games=tuple(games),
                        crawford_rule=crawford_rule or not length, jacoby=jacoby and not length,
                        beavers=beavers and not length)
    return replay_match(match, lenient=lenient, source=source)


def format_sgf(match: MatchRecord) -> str:
    """The match as an SGF collection GNU Backgammon loads (one game tree per game)."""
    out = []
    rules = []
    if match.match_length and match.crawford_rule:
        rules.append("Crawford")
    if not match.match_length:
        rules += [r for r, on in (("Jacoby", match.jacoby), ("Beavers", match.beavers)) if on]
    for record in match.games:
        head = (f"(;FF[4]GM[6]CA[UTF-8]AP[bgnet]MI[length:{match.match_length}][game:{record.number - 1}]"
                f"[ws:{record.score[0]}][bs:{record.score[1]}]PW[{_sgf_escape(match.players[0])}]"
                f"PB[{_sgf_escape(match.players[1])}]")
        ru = list(rules)
        if record.crawford:
            ru = ["Crawford:CrawfordGame"]
        if ru:
            head += f"RU[{':'.join(ru)}]"
        if record.winner is not None:
            head += f"RE[{_SGF_COLOUR[record.winner]}+{record.points}{'R' if record.resigned else ''}]"
        body = [head]
        for a in record.actions:
            colour = _SGF_COLOUR[a.player]
            if a.kind == "move":
                assert a.dice is not None
                letters = "".join(_sgf_letter(p, a.player) for step in a.steps for p in step)
                body.append(f";{colour}[{max(a.dice)}{min(a.dice)}{letters}]")
            else:
                body.append(f";{colour}[{_SGF_WRITE[a.kind]}]")
        out.append("\n".join(body) + ")")
    return "\n".join(out) + "\n"


def _sgf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


# -- files ----------------------------------------------------------------------------


def read_match(path: str | os.PathLike[str], *, lenient: bool = False) -> MatchRecord:
    """Read a ``.mat`` or ``.sgf`` file (by its content: SGF starts with ``(;``)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatchFileError(f"cannot read {p}: {err.strerror or err}") from None
    if text.lstrip().startswith("(;") or p.suffix.lower() == ".sgf":
        return parse_sgf(text, lenient=lenient, source=p.name)
    return parse_mat(text, lenient=lenient, source=p.name)


def write_match(match: MatchRecord, path: str | os.PathLike[str]) -> None:
    """Write ``.sgf`` (by the suffix) or ``.mat`` text, through a temporary file renamed into place."""
    p = Path(path)
    text = format_sgf(match) if p.suffix.lower() == ".sgf" else format_mat(match)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# -- recording our own games ----------------------------------------------------------


def action_between(before: g.Game, after: g.Game, number: int = 0) -> list[Action]:
    """The actions that turn the game ``before`` into ``after`` (consecutive states of ``bgnet.play.game``).

    A roll alone records nothing (the dice go with the play); a double answered in
    the same step gives both the double and the answer.
    """
    seat = before.turn
    if before.phase == "move":
        assert before.dice is not None
        target = after.position if after.is_over else after.position.swap_sides()
        for m in legal_moves(before.position, before.dice):
            if m.after == target:
                d1, d2 = before.dice
                return [Action(seat, "move", (max(d1, d2), min(d1, d2)), m.steps, number=number)]
        raise MatchFileError("the recorded play is not a legal play of the dice")
    out: list[Action] = []
    if before.phase == "beavered":
        return [Action(seat, "raccoon", cube=after.cube, number=number)] if after.cube == 2 * before.cube else []
    if before.phase == "roll" and after.phase != "move":
        out.append(Action(seat, "double", cube=2 * before.cube, number=number))
        before = replace(before, phase="doubled")
    if before.phase == "doubled" and after.phase != "doubled":
        if after.is_over:
            out.append(Action(1 - seat, "drop", number=number))
        elif after.cube == 4 * before.cube or (after.cube == 8 * before.cube):
            out.append(Action(1 - seat, "beaver", cube=4 * before.cube, number=number))
            if after.cube == 8 * before.cube:
                out.append(Action(seat, "raccoon", cube=8 * before.cube, number=number))
        else:
            out.append(Action(1 - seat, "take", number=number))
    return out


@dataclass
class MatchRecorder:
    """Builds a MatchRecord from the states a game loop passes through (``observe`` each new state)."""

    players: tuple[str, str]
    rules: g.Rules
    games: list[GameRecord] = field(default_factory=list)
    _actions: list[Action] = field(default_factory=list)
    _last: g.Game | None = None

    def start(self, game: g.Game) -> None:
        """A new game begins in state ``game`` (its opening roll in the move phase)."""
        self._actions = []
        self._last = game

    def observe(self, game: g.Game) -> None:
        """The game has moved on to ``game``; records what happened in between (and the end of the game)."""
        if self._last is None:
            self.start(game)
            return
        if game != self._last:
            self._actions += action_between(self._last, game)
        self._last = game
        if game.is_over:
            assert game.result is not None
            self.games.append(GameRecord(len(self.games) + 1, game.score, tuple(self._actions),
                                         game.result.winner, game.result.points, crawford=game.crawford))
            self._last = None

    def record(self) -> MatchRecord:
        """The match so far (a game in progress is included, unfinished)."""
        games = list(self.games)
        if self._last is not None and self._actions:
            games.append(GameRecord(len(games) + 1, self._last.score, tuple(self._actions)))
        return MatchRecord(players=self.players, match_length=self.rules.match_length, games=tuple(games),
                           jacoby=self.rules.jacoby, beavers=self.rules.beavers)


def play_and_record(players: Sequence[g.Player], rules: g.Rules, dice: Callable[[], tuple[int, int]],
                    names: tuple[str, str] = ("Player 0", "Player 1"), games: int = 1) -> MatchRecord:
    """Play ``games`` games (or a match to its end) between ``players`` with ``dice()`` and return them recorded.

    The same rules as ``bgnet.play.game.play_game`` (the opening roll is re-rolled until the dice
    differ; the higher die moves first); meant for writing duels and self-play as match files.
    """
    rec = MatchRecorder(names, rules)
    match = g.Match(rules)
    for _ in range(games):
        if match.is_over:
            break
        a, b = dice()
        while a == b:
            a, b = dice()
        game = match.start(0 if a > b else 1, (max(a, b), min(a, b)))
        rec.start(game)
        while not game.is_over:
            me = players[game.turn]
            if game.phase == "move":
                assert game.dice is not None
                game = g.play(game, me.choose_move(game.position, game.dice, game.match_state()))
            elif game.phase == "roll":
                if g.may_double(game) and me.offers_double(game.position, game.match_state()):
                    game = g.double(game)
                else:
                    game = g.roll(game, dice())
            elif game.phase == "doubled":
                answer = players[game.opponent].cube_response(game.position, game.match_state())
                game = g.respond(game, "take" if answer == "beaver" and not rules.beavers else answer)
            else:
                game = g.raccoon(game, g.wants_raccoon(me, game.position, g.pre_beaver_state(game)))
            rec.observe(game)
        match = match.record(game)
    return rec.record()
