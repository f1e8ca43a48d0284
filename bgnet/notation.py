"""Move values and move text in GNU Backgammon's style (``24/18 13/11*``, ``bar/22``, ``8/5(2)``).

Text that needs no board (``Move.from_str``, ``format_steps``) lives here apart
from text that does: hit marks come from the position (``parse_move``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from bgnet.position import Position

Step = tuple[int, int]


class InvalidMoveError(ValueError):
    """Move text that cannot be read."""


class IllegalMoveError(ValueError):
    """A well-formed move that is not legal in the position with the dice."""


class AmbiguousMoveError(ValueError):
    """Move text that matches more than one legal play."""


def _point_name(p: int) -> str:
    return "bar" if p == 25 else "off" if p == 0 else str(p)


def format_steps(steps: Sequence[Step], hits: int = 0) -> str:
    """gnubg's "pretty" text for one-die ``steps`` (from, to); ``hits`` is a bit mask of hit points.

    Steps are sorted by source then destination (highest first), chained where one
    ends where another starts (the middle point kept only when a blot was hit
    there), identical chains collapsed to ``(n)``, and ``*`` put after the first
    landing on each hit point.
    """
    order = sorted(steps, key=lambda s: (-s[0], -s[1]))
    used = [False] * len(order)
    chains: list[list[int]] = []
    for i, (a, b) in enumerate(order):
        if used[i]:
            continue
        used[i] = True
        chain = [a, b]
        while chain[-1] != 0:
            nxt = next((j for j in range(len(order)) if not used[j] and order[j][0] == chain[-1]), None)
            if nxt is None:
                break
            used[nxt] = True
            chain.append(order[nxt][1])
        chains.append(chain)
    marked = 0
    texts: list[str] = []
    for chain in chains:
        parts = [_point_name(chain[0])]
        for k, p in enumerate(chain[1:], start=1):
            is_hit = 0 < p < 25 and bool(hits >> p & 1) and not (marked >> p & 1)
            if is_hit:
                marked |= 1 << p
            last = k == len(chain) - 1
            if last or is_hit:
                parts.append(_point_name(p) + ("*" if is_hit else ""))
        texts.append("/".join(parts))
    out: list[str] = []
    i = 0
    while i < len(texts):
        j = i
        while j + 1 < len(texts) and texts[j + 1] == texts[i]:
            j += 1
        n = j - i + 1
        out.append(texts[i] + (f"({n})" if n > 1 else ""))
        i = j + 1
    return " ".join(out)


_TOKEN = re.compile(r"\s*(?:(bar|b|off|o)(?![a-z])|(\d+)|(/)|\((\d+)\)|([*,]))\s*", re.IGNORECASE)


def parse_pairs(text: str) -> tuple[Step, ...]:
    """Read move text into (from, to) pairs as written (a pair may cover several pips).

    Accepts ``bar``/``b`` = 25, ``off``/``o`` = 0, chains ``a/b/c``, bare numbers
    paired in order, ``(n)`` repeats the chain before it n times in all, and
    ignores ``*`` and ``,``.
    """
    text = text.strip()
    groups: list[list[int]] = []  # each a chain of points
    repeats: list[int] = []
    last = ""  # kind of the previous token: "", "point", "slash", "repeat"
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            bad = text[pos:].strip()[:1]
            raise InvalidMoveError(f"move {text.strip()!r} has an unexpected character {bad!r}")
        pos = m.end()
        word, num, slash, rep, _ignored = m.groups()
        if word is not None or num is not None:
            value = (25 if word.lower() in ("bar", "b") else 0) if word is not None else int(num)
            if value > 25:
                raise InvalidMoveError(f"move {text.strip()!r} names point {value}; points run from 0 (off) to 25 (bar)")
            if last == "slash":
                groups[-1].append(value)
            else:
                groups.append([value])
                repeats.append(1)
            last = "point"
        elif slash is not None:
            if last != "point":
                raise InvalidMoveError(f"move {text.strip()!r} has a '/' with no point before it")
            last = "slash"
        elif rep is not None:
            if last != "point" or len(groups[-1]) < 2:
                raise InvalidMoveError(f"move {text.strip()!r} has a repeat count with no move before it")
            times = int(rep)
            if not 1 <= times <= 4:
                raise InvalidMoveError(f"move {text.strip()!r} repeats a move {times} times; 1 to 4 are possible")
            repeats[-1] = times
            last = "repeat"
    if last == "slash":
        raise InvalidMoveError(f"move {text.strip()!r} ends with '/'")
    pairs: list[Step] = []
    loose: list[int] = []
    for group, times in zip(groups, repeats):
        if len(group) == 1:
            loose.append(group[0])
            if len(loose) == 2:
                pairs.append((loose[0], loose[1]))
                loose = []
        else:
            pairs.extend(list(zip(group[:-1], group[1:])) * times)
    if loose:
        raise InvalidMoveError(f"move {text.strip()!r} has an odd number of points")
    for a, b in pairs:
        if a == 0:
            raise InvalidMoveError(f"move {text.strip()!r} moves a checker from off the board")
        if b == 25:
            raise InvalidMoveError(f"move {text.strip()!r} moves a checker onto the bar")
        if b >= a:
            raise InvalidMoveError(f"move {text.strip()!r} moves backwards ({_point_name(a)}/{_point_name(b)})")
    if len(pairs) > 4:
        raise InvalidMoveError(f"move {text.strip()!r} has {len(pairs)} parts; a play has at most four")
    return tuple(pairs)


@dataclass(frozen=True, eq=False)
class Move:
    """A play: its one-die steps (from, to) in the mover's numbering (25 = bar, 0 = off).

    Moves from ``legal_moves`` also carry ``after`` (the afterstate, still seen from
    the mover) and ``hits`` (bit mask of points where a blot was hit). Two moves are
    equal when their afterstates are (or, without afterstates, their sorted steps).
    """

    steps: tuple[Step, ...]
    after: "Position | None" = None
    hits: int = 0

    @classmethod
    def from_str(cls, text: str) -> "Move":
        """A move from text as written (pairs may cover several pips; no board needed)."""
        return cls(parse_pairs(text))

    @cached_property
    def text(self) -> str:
        """gnubg-style notation, e.g. ``13/7*/5``; empty for no play."""
        return format_steps(self.steps, self.hits)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Move.from_str({self.text!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        if self.after is not None and other.after is not None:
            return self.after == other.after
        return sorted(self.steps) == sorted(other.steps)

    def __hash__(self) -> int:
        return hash(self.after) if self.after is not None else hash(tuple(sorted(self.steps)))

    @property
    def is_empty(self) -> bool:
        """True for the empty play (nothing could be moved)."""
        return not self.steps


def apply_pairs(pos: "Position", pairs: Sequence[Step]) -> "Position | None":
    """The position after jumping each checker straight along ``pairs`` (hits on landing), or None if impossible."""
    from bgnet.position import Position

    b = list(pos.board)
    for a, t in pairs:
        if b[a] <= 0:
            return None
        b[a] -= 1
        if t >= 1:
            if b[t] < -1:
                return None
            if b[t] == -1:
                b[t] = 0
                b[0] -= 1
            b[t] += 1
    return Position(b)


def parse_move(pos: "Position", text: str, dice: Sequence[int]) -> Move:
    """Resolve ``text`` to the legal play of ``dice`` in ``pos`` with the same afterstate."""
    from bgnet.movegen import legal_moves

    moves = legal_moves(pos, dice)
    if not text.strip():
        if moves[0].is_empty:
            return moves[0]
        raise IllegalMoveError("an empty move is only legal when no checker can be played")
    pairs = parse_pairs(text)
    after = apply_pairs(pos, pairs)
    matches = [m for m in moves if after is not None and m.after == after]
    if not matches:
        # A shortened chain (13/5 for 13/9*/5) is accepted when exactly one play writes the same way.
        wanted = sorted(pairs)
        matches = [m for m in moves if sorted(parse_pairs(m.text)) == wanted]
        if len(matches) > 1:
            raise AmbiguousMoveError(
                f"{text!r} matches {len(matches)} plays: " + ", ".join(m.text for m in matches))
    if not matches:
        raise IllegalMoveError(f"{text.strip()!r} is not a legal play of {dice[0]}-{dice[1]} in this position")
    return matches[0]
