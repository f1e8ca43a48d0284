"""GNU Backgammon's SGF (game trees of ``;W[...]``/``;B[...]`` nodes): read and write.

``_SGF_CUBE`` lists each cube action once with its SGF value, for the reader and the
writer. Seat 0 is gnubg's player 0, White; points are letters ``a``..``x`` from
White's side, ``y`` the bar and ``z`` off. Reading replays every game (``bgnet.io.replay``).
"""

from __future__ import annotations

import re

from bgnet.io.record import Action, ActionKind, GameRecord, MatchFileError, MatchRecord, next_mat_cell
from bgnet.io.replay import replay_match



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
        raise MatchFileError(f"{ch!r} is not a point letter a..x, y (bar) or z (off)")
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


def sniff_sgf(text: str) -> bool:
    """Whether ``text`` looks like an SGF collection: it starts with ``(;``."""
    return text.lstrip().startswith("(;")


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
        cell = -1  # moves are numbered as the lines of a .mat: "1)" holds the first roll, one line per turn pair
        for node in nodes[1:]:
            for name, values in node:
                if name not in _SGF_COLOUR:
                    continue
                player = _SGF_COLOUR.index(name)
                value = values[0].strip()
                low = value.lower()
                if low.startswith("resign"):
                    continue  # the result (RE) says who won and how much
                cell = next_mat_cell(cell, player)
                ni = cell // 2 + 1
                if low in _SGF_KIND:
                    actions.append(Action(player, _SGF_KIND[low], number=ni))  # type: ignore[arg-type]
                    continue
                m = re.fullmatch(r"([1-6])([1-6])([a-z]*)", value)
                if m is None or len(m.group(3)) % 2:
                    raise MatchFileError(f"{where}, move {ni}: cannot read {name}[{value}] as a roll and a play")
                letters = m.group(3)
                try:
                    steps = tuple((_sgf_point(letters[k], player), _sgf_point(letters[k + 1], player))
                                  for k in range(0, len(letters), 2))
                except MatchFileError as err:
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
    """``text`` as an SGF property value (backslash and ``]`` escaped)."""
    return text.replace("\\", "\\\\").replace("]", "\\]")
