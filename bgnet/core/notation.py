"""Move values and move text in GNU Backgammon's style (``24/18 13/11*``, ``bar/22``, ``8/5(2)``).

Text that needs no board (``Move.from_str``, ``format_steps``) lives here apart
from text that does: hit marks come from the position (``parse_move``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from bgnet.core.errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError  # re-exported: raised here

if TYPE_CHECKING:
    from bgnet.core.position import Position

Step = tuple[int, int]
"""One checker's step (from, to) in the mover's numbering: 25 = the bar, 0 = borne off."""

__all__ = ["AmbiguousMoveError", "IllegalMoveError", "InvalidMoveError", "Move", "Step", "apply_pairs",
           "format_move", "format_steps", "hits_of", "parse_move", "parse_pairs", "resolve_move"]


def _point_name(p: int) -> str:
    return "bar" if p == 25 else "off" if p == 0 else str(p)


def format_steps(steps: Sequence[Step], hits: int = 0, *, full: bool = False) -> str:
    """gnubg's "pretty" text for one-die ``steps`` (from, to); ``hits`` is a bit mask of hit points.

    Steps are sorted by source then destination (highest first), chained where one
    ends where another starts (the middle point kept only when a blot was hit
    there, or always with ``full``, which ``Move.__repr__`` uses so that the text
    reads back to the same steps), identical chains collapsed to ``(n)``, and ``*``
    put after the first landing on each hit point.
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
            if last or is_hit or full:
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
    ignores ``,``; a ``*`` marks a hit on the point before it (see ``parse_text``).
    """
    return parse_text(text)[0]


def parse_text(text: str) -> tuple[tuple[Step, ...], int]:
    """Move text as ``(pairs, marks)``: the pairs of ``parse_pairs`` and a bit mask of the points marked ``*``."""
    text = text.strip()
    marks = 0
    prev_point: int | None = None
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
        word, num, slash, rep, other = m.groups()
        if other == "*":
            if prev_point is not None and 1 <= prev_point <= 24:
                marks |= 1 << prev_point
            elif prev_point is not None:
                raise InvalidMoveError(f"move {text!r} marks a hit on {_point_name(prev_point)}, which is no point")
            continue
        if other is not None:  # a comma
            continue
        prev_point = None
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
            prev_point = value
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
    return tuple(pairs), marks


@dataclass(frozen=True, eq=False, slots=True)
class Move:
    """A play: its one-die steps (from, to) in the mover's numbering (25 = bar, 0 = off).

    A Move is a value like python-chess's: two moves are equal (and hash alike)
    when their steps are, in any order; ``after`` and ``hits`` are context, not
    identity. Moves from ``legal_moves`` carry ``after`` (the afterstate, still
    seen from the mover) and ``hits`` (bit mask of the points where a blot was
    hit); compare ``m.after`` to ask whether two plays lead to the same position.
    ``eval(repr(m)) == m`` for every move.
    """

    steps: tuple[Step, ...]
    after: "Position | None" = None
    hits: int = 0

    @classmethod
    def from_str(cls, text: str) -> "Move":
        """A move from text as written (pairs may cover several pips, ``*`` marks a hit; no board needed)."""
        pairs, marks = parse_text(text)
        return cls(pairs, None, marks)

    @classmethod
    def _from_kernel(cls, after: "list[Position]", step_rows: list[list[int]], counts: list[int],
                     words: list[int]) -> "list[Move]":
        """Moves from move-generation output rows (trusted: the kernel's steps and hit masks are valid)."""
        new = object.__new__
        set_steps, set_after, set_hits = _SET_STEPS, _SET_AFTER, _SET_HITS
        moves = []
        for a, s, k, w in zip(after, step_rows, counts, words):
            st: tuple[Step, ...]
            if k == 2:
                st = ((s[0], s[1]), (s[2], s[3]))
            elif k == 4:
                st = ((s[0], s[1]), (s[2], s[3]), (s[4], s[5]), (s[6], s[7]))
            else:
                st = tuple(zip(s[0:2 * k:2], s[1:2 * k:2]))
            m = new(cls)
            set_steps(m, st)
            set_after(m, a)
            set_hits(m, w >> 3)
            moves.append(m)
        return moves

    @property
    def text(self) -> str:
        """gnubg-style notation, e.g. ``13/7*/5``; empty for no play."""
        return format_steps(self.steps, self.hits)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Move.from_str({format_steps(self.steps, self.hits, full=True)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return self.steps == other.steps or sorted(self.steps) == sorted(other.steps)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.steps)))

    @property
    def is_empty(self) -> bool:
        """True for the empty play (nothing could be moved)."""
        return not self.steps


# The slots' own setters: ``Move._from_kernel`` fills a new Move without the frozen __setattr__.
_SET_STEPS = Move.__dict__["steps"].__set__
_SET_AFTER = Move.__dict__["after"].__set__
_SET_HITS = Move.__dict__["hits"].__set__


def _jump(board: Sequence[int], pairs: Sequence[Step]) -> list[int] | None:
    """``board`` after jumping each checker straight along ``pairs`` (hits on landing only), or None if impossible."""
    b = list(board)
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
    return b


def apply_pairs(pos: "Position", pairs: Sequence[Step]) -> "Position | None":
    """The position after jumping each checker straight along ``pairs`` (hits on landing), or None if impossible."""
    b = _jump(pos.board, pairs)
    return None if b is None else type(pos)(b)


def hits_of(board: Sequence[int], steps: Sequence[Step]) -> int:
    """Bit mask of the points where ``steps``, played one by one on ``board``, land on a lone opposing checker."""
    b = list(board)
    hits = 0
    for a, t in steps:
        b[a] -= 1
        if t >= 1:
            if b[t] == -1:
                hits |= 1 << t
                b[t] = 0
            b[t] += 1
    return hits


def format_move(pos: "Position", move: Move) -> str:
    """gnubg-style text of a move of ``pos``, with the hit marks the position gives it."""
    return format_steps(move.steps, hits_of(pos.board, move.steps))


def _fits(steps: Sequence[Step], pairs: Sequence[Step]) -> bool:
    """Whether one-die ``steps`` split into one checker path per written pair (a, b), using every step once."""
    used = [False] * len(steps)

    def walk(i: int, at: int) -> bool:
        a, b = pairs[i]
        if at == b:
            return all(used) if i + 1 == len(pairs) else walk(i + 1, pairs[i + 1][0])
        for j, (s, t) in enumerate(steps):
            if not used[j] and s == at and t >= b:
                used[j] = True
                if walk(i, t):
                    return True
                used[j] = False
        return False

    return walk(0, pairs[0][0]) if pairs else not steps


def _points(mask: int) -> str:
    return ", ".join(str(p) for p in range(24, 0, -1) if mask >> p & 1)


def resolve_move(pos: "Position", text: str, moves: Sequence[Move], dice: Sequence[int] | str) -> Move:
    """The one play among ``moves`` (the legal plays of ``dice`` in ``pos``) that ``text`` writes.

    Text that jumps straight to a legal afterstate is that play (``13/5`` is the
    play through the empty point); otherwise the plays whose steps the written
    checker paths cover are candidates. A ``*`` the play does not make is an
    error, and text that fits two plays raises ``AmbiguousMoveError`` naming them.
    """
    roll = dice if isinstance(dice, str) else f"{dice[0]}-{dice[1]}"
    if not text.strip():
        if moves[0].is_empty:
            return moves[0]
        raise IllegalMoveError("an empty move is only legal when no checker can be played")
    pairs, marks = parse_text(text)
    board = _jump(pos.board, pairs)
    exact = [] if board is None else [m for m in moves if m.after is not None and list(m.after.board) == board]
    candidates = exact or [m for m in moves if _fits(m.steps, pairs)]
    if not candidates:
        raise IllegalMoveError(f"{text.strip()!r} is not a legal play of {roll} in this position")
    marked = [m for m in candidates if marks & ~m.hits == 0]
    if not marked:
        missing = marks & ~candidates[0].hits
        raise IllegalMoveError(f"{text.strip()!r} marks a hit on {_points(missing)}, but "
                               f"{candidates[0].text or 'the play'} hits no blot there")
    if len(marked) > 1:
        raise AmbiguousMoveError(f"{text.strip()!r} fits {len(marked)} plays of {roll}: "
                                 + " and ".join(m.text for m in marked) + "; write the one you mean in full")
    return marked[0]


def parse_move(pos: "Position", text: str, dice: Sequence[int] | str) -> Move:
    """Resolve ``text`` to the legal play of ``dice`` in ``pos`` it writes (see ``resolve_move``)."""
    return resolve_move(pos, text, pos.legal_moves(dice), dice)
