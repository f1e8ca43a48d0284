"""Match equity tables: the built-in Kazaross-XG2 table, loading others, and a generator.

A match equity table (MET) gives the match winning chance (MWC) of a player who
needs ``a`` points against one who needs ``b``, at the start of a game with the cube
centred. The built-in table is Kazaross-XG2 (Neil Kazaross, 2011; rolled out by
eXtreme Gammon to 9 points and by GNU Backgammon to 15, extrapolated to 25), carried
as data in ``bgnet/data/kazaross_xg2.json``, converted from GNU Backgammon's
``data/met/Kazaross-XG2.xml``. ``generate_met`` builds a table from first
principles instead; docs/CUBE.md says how and how far it is from Kazaross-XG2.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist, median
from typing import Callable, NamedTuple, Sequence

from bgnet.core.errors import BgnetError
from bgnet.core.resources import DATA_DIR

DEFAULT_MET_PATH = DATA_DIR / "kazaross_xg2.json"
MAX_AWAY = 64
"""The longest away the extrapolation answers for (a 64-point match); longer ones get InvalidMETError."""


class InvalidMETError(BgnetError):
    """A match equity table file or array that cannot be used."""


class MatchEquityTable:
    """Pre-Crawford and post-Crawford match winning chances; the table is symmetric in the players.

    ``pre[i][j]``: MWC of the player needing ``i+1`` against one needing ``j+1`` (a 1-away
    row or column is the Crawford game); ``post[i]``: MWC of the trailer needing ``i+1``
    against a leader at 1-away after the Crawford game.
    """

    def __init__(self, pre_crawford: Sequence[Sequence[float]], post_crawford: Sequence[float],
                 name: str = "", source: str = "") -> None:
        pre = [[float(x) for x in row] for row in pre_crawford]
        post = [float(x) for x in post_crawford]
        n = len(pre)
        if n < 2 or any(len(row) != n for row in pre):
            raise InvalidMETError(f"the pre-Crawford table must be square and at least 2x2, got {n} rows "
                                  f"of lengths {sorted({len(r) for r in pre})}")
        if len(post) < 2:
            raise InvalidMETError(f"the post-Crawford table needs at least 2 entries, got {len(post)}")
        if any(not 0.0 <= x <= 1.0 for row in pre for x in row) or any(not 0.0 <= x <= 1.0 for x in post):
            raise InvalidMETError("match winning chances must lie between 0 and 1")
        self._pre = pre
        self._post = post
        self.name = name
        self.source = source
        self._k = self._fit_normal_scale()

    # -- lookups ------------------------------------------------------------
    @property
    def size(self) -> int:
        """The longest away the pre-Crawford table holds explicitly."""
        return len(self._pre)

    @property
    def post_size(self) -> int:
        """The longest away the post-Crawford table holds explicitly."""
        return len(self._post)

    def equity(self, a: int, b: int) -> float:
        """MWC of the player needing ``a`` against one needing ``b`` at a game start, cube centred.

        ``a`` or ``b`` equal to 1 (not both) is the Crawford game; ``a <= 0`` means this
        player has already won (1.0), ``b <= 0`` that the opponent has (0.0).
        """
        if a <= 0 and b <= 0:
            raise InvalidMETError(f"both players cannot have won the match (needing {a} and {b})")
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        n = len(self._pre)
        if a <= n and b <= n:
            return self._pre[a - 1][b - 1]
        return self._extrapolate(a, b)

    def post_crawford(self, a: int) -> float:
        """MWC of the trailer needing ``a`` against a leader at 1-away, after the Crawford game."""
        if a <= 0:
            return 1.0
        if a <= len(self._post):
            return self._post[a - 1]
        if a > MAX_AWAY:
            raise InvalidMETError(f"match winning chances are known up to {MAX_AWAY}-away; "
                                  f"{a}-away is beyond this table's reach")
        # Each two more points halve-and-some the trailer's chances: carry the last
        # ratio between entries of the same parity forward (geometric tail).
        m = len(self._post)
        last = m if (a - m) % 2 == 0 else m - 1
        ratio = self._post[last - 1] / self._post[last - 3] if last >= 3 and self._post[last - 3] > 0 else 0.5
        return self._post[last - 1] * ratio ** ((a - last) // 2)

    def after_game(self, a: int, b: int, crawford_done: bool) -> float:
        """MWC at the next game start when the players need ``a`` and ``b``.

        ``crawford_done`` says whether the Crawford game has been played (or is the game
        just finished); a later game with a player at 1-away is then post-Crawford.
        """
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        if crawford_done:
            if b == 1:
                return self.post_crawford(a)
            if a == 1:
                return 1.0 - self.post_crawford(b)
        return self.equity(a, b)

    # -- extrapolation --------------------------------------------------------
    def _fit_normal_scale(self) -> float:
        """Scale k of the normal approximation MWC ~ Phi(k (b - a) / sqrt(a + b)), fitted to the table's edge."""
        n = len(self._pre)
        nd = NormalDist()
        ks = []
        for a in range(max(2, n - 4), n + 1):
            for b in range(max(2, n - 8), n + 1):
                e = self._pre[a - 1][b - 1]
                if a != b and 0.0 < e < 1.0:
                    ks.append(nd.inv_cdf(e) * math.sqrt(a + b) / (b - a))
        return median(ks) if ks else 1.0

    def _normal(self, a: int, b: int) -> float:
        """The fitted normal approximation Phi(k (b - a) / sqrt(a + b))."""
        return NormalDist().cdf(self._k * (b - a) / math.sqrt(a + b))

    def _extrapolate(self, a: int, b: int) -> float:
        """MWC beyond the table: the fitted normal approximation, anchored to the table's edge.

        With one side inside the table, the approximation's ratio to its value at the edge
        scales the edge entry (for the far trailer's chance, or the far leader's), so the
        values join the table continuously and stay monotone in both aways.
        """
        if a > MAX_AWAY or b > MAX_AWAY:
            raise InvalidMETError(f"match winning chances are known up to {MAX_AWAY}-away; "
                                  f"{max(a, b)}-away is beyond this table's reach")
        n = len(self._pre)
        if a == 1 or b == 1:
            # Crawford game against a long trailer: the trailer must win a gammonless
            # series; use the table's last Crawford entry scaled like the post-Crawford tail.
            trailer = max(a, b)
            edge = 1.0 - self._pre[0][n - 1]
            scale = self.post_crawford(trailer) / self.post_crawford(n) if self.post_crawford(n) > 0 else 0.0
            lead = 1.0 - edge * scale
            return lead if a == 1 else 1.0 - lead
        if a <= n:      # b beyond the table: my chance of losing shrinks like the approximation's
            return 1.0 - (1.0 - self._pre[a - 1][n - 1]) * (1.0 - self._normal(a, b)) / (1.0 - self._normal(a, n))
        if b <= n:      # a beyond the table: my chance of winning shrinks like the approximation's
            return self._pre[n - 1][b - 1] * self._normal(a, b) / self._normal(n, b)
        return self._normal(a, b)

    # -- I/O ------------------------------------------------------------------
    def to_json(self) -> dict[str, object]:
        """The table as a JSON-ready dict, in the layout of ``bgnet/data/kazaross_xg2.json``."""
        return {"name": self.name, "source": self.source,
                "pre_crawford": self._pre, "post_crawford": self._post}

    @classmethod
    def load(cls, path: str | Path) -> "MatchEquityTable":
        """Load a table from GNU Backgammon's MET XML (explicit tables) or bgnet's JSON layout."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
            return cls._from_json(text, path)
        return cls._from_gnubg_xml(text, path)

    @classmethod
    def _from_json(cls, text: str, path: Path) -> "MatchEquityTable":
        """Parse bgnet's JSON layout."""
        try:
            doc = json.loads(text)
            return cls(doc["pre_crawford"], doc["post_crawford"], doc.get("name", path.stem), doc.get("source", ""))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InvalidMETError(f"{path} is not a bgnet MET JSON file with pre_crawford and post_crawford: {exc}") from exc

    @classmethod
    def _from_gnubg_xml(cls, text: str, path: Path) -> "MatchEquityTable":
        """Parse GNU Backgammon's MET XML; only explicit tables are supported."""
        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            raise InvalidMETError(f"{path} is neither JSON nor readable MET XML: {exc}") from exc
        pre_el = root.find("pre-crawford-table")
        posts = root.findall("post-crawford-table")
        if pre_el is None or not posts:
            raise InvalidMETError(f"{path} lacks a pre-crawford-table or post-crawford-table element")
        if pre_el.get("type", "explicit") != "explicit" or any(p.get("type", "explicit") != "explicit" for p in posts):
            raise InvalidMETError(f"{path} uses a parametrised MET; only explicit tables can be loaded")
        pre = [[float(m.text or "nan") for m in row.findall("me")] for row in pre_el.findall("row")]
        rows = [[float(m.text or "nan") for m in p.find("row") or []] for p in posts]
        # gnubg may give one post-Crawford row per player; the table here is symmetric, so average them.
        width = min(len(r) for r in rows)
        post = [sum(r[i] for r in rows) / len(rows) for i in range(width)]
        info = root.find("info")
        name = info.findtext("name", path.stem) if info is not None else path.stem
        return cls(pre, post, name, f"GNU Backgammon MET file {path.name}")

    def __repr__(self) -> str:
        return f"<MatchEquityTable {self.name!r} {self.size}x{self.size}>"


@lru_cache(maxsize=1)
def default_met() -> MatchEquityTable:
    """The built-in Kazaross-XG2 table (loaded once and cached)."""
    return MatchEquityTable.load(DEFAULT_MET_PATH)


# -- generator ----------------------------------------------------------------

def generate_met(max_away: int = 15, gammon_rate: float = 0.26, backgammon_rate: float = 0.01,
                 free_drop_spread: float = 0.05, cube_efficiency: float = 1.0) -> MatchEquityTable:
    """A table computed from first principles (see docs/CUBE.md).

    ``gammon_rate``: share of games won that are gammons or better; ``backgammon_rate``:
    share that are backgammons; ``free_drop_spread``: half-width of the (uniform) spread
    of the trailer's game winning chance when he doubles post-Crawford; ``cube_efficiency``:
    weight of the live-cube model against the dead cube in pre-Crawford games.
    """
    if max_away < 2:
        raise InvalidMETError(f"max_away must be at least 2, got {max_away}")
    if not 0.0 <= backgammon_rate <= gammon_rate <= 1.0:
        raise InvalidMETError("need 0 <= backgammon_rate <= gammon_rate <= 1")
    if not 0.0 <= free_drop_spread <= 0.5 or not 0.0 <= cube_efficiency <= 1.0:
        raise InvalidMETError("free_drop_spread must lie in [0, 0.5] and cube_efficiency in [0, 1]")
    single, gammon, bg = 1.0 - gammon_rate, gammon_rate - backgammon_rate, backgammon_rate
    n = max_away

    # Post-Crawford: the trailer doubles at once (the leader's cube is dead), so a game
    # is worth 2/4/6 points to him; the leader passes when that is better for him (the
    # free drop), judged on the trailer's chance p ~ U[1/2 - w, 1/2 + w] at the double.
    post = [1.0] * (n + 1)          # post[a]: trailer needs a; post[0] = won
    lo, hi = 0.5 - free_drop_spread, 0.5 + free_drop_spread
    for a in range(1, n + 1):
        if a == 1:
            post[a] = 0.5
            continue
        win = single * post[max(a - 2, 0)] + gammon * post[max(a - 4, 0)] + bg * post[max(a - 6, 0)]
        drop = post[a - 1]
        post[a] = _expected_min(win, drop, lo, hi)

    # met[a][b]: MWC of the player needing a against b at a game start.
    met = [[0.5] * (n + 1) for _ in range(n + 1)]

    def after(a: int, b: int) -> float:
        """MWC at the next game start (Crawford bookkeeping as in ``after_game``)."""
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        return met[a][b]

    # Crawford game (one side 1-away, no cube): the leader wins any game; the
    # trailer's single/gammon/backgammon lead to post-Crawford games.
    for b in range(2, n + 1):
        trailer_win = single * post[b - 1] + gammon * post[max(b - 2, 0)] + bg * post[max(b - 3, 0)]
        met[1][b] = 0.5 + 0.5 * (1.0 - trailer_win)
        met[b][1] = 1.0 - met[1][b]

    # Pre-Crawford: the live (continuous) cube ladder at p = 1/2, mixed with the dead cube.
    for total in range(4, 2 * n + 1):
        for a in range(max(2, total - n), min(n, total - 2) + 1):
            b = total - a

            def outcome(points: int, mine: bool) -> float:
                """MWC after a single/gammon/backgammon win worth ``points`` per level, gammon-weighted."""
                if mine:
                    return single * after(a - points, b) + gammon * after(a - 2 * points, b) + bg * after(a - 3 * points, b)
                return single * after(a, b - points) + gammon * after(a, b - 2 * points) + bg * after(a, b - 3 * points)

            live = _ladder_centred(a, b, after, outcome)
            dead = 0.5 * outcome(1, True) + 0.5 * outcome(1, False)
            met[a][b] = cube_efficiency * live + (1.0 - cube_efficiency) * dead
    # Symmetrise against rounding drift: E(a, b) + E(b, a) = 1 exactly.
    pre = [[0.5] * n for _ in range(n)]
    for a in range(1, n + 1):
        for b in range(1, n + 1):
            pre[a - 1][b - 1] = 0.5 * (met[a][b] + 1.0 - met[b][a]) if a != b else 0.5
    name = f"generated (gammon rate {gammon_rate}, backgammon rate {backgammon_rate})"
    return MatchEquityTable(pre, post[1:], name, "bgnet.cube.met.generate_met")


def _expected_min(win: float, drop: float, lo: float, hi: float) -> float:
    """E[min(p * win, drop)] for p uniform on [lo, hi] (the doubled side passes when that is cheaper)."""
    if hi <= lo:
        return min(lo * win, drop)
    t = drop / win if win > 0 else math.inf
    if t >= hi:
        return 0.5 * (lo + hi) * win
    if t <= lo:
        return drop
    return (win * (t * t - lo * lo) / 2.0 + drop * (hi - t)) / (hi - lo)


# -- the live-cube ladder (shared with bgnet.cube.decision) ----------------------------

class Ladder(NamedTuple):
    """Janowski's fully live cube at every cube level: each player's cash point, in my winning chance p.

    Level n is the current cube times 2**n. ``win[n]``/``lose[n]``: my average value of a
    game won/lost at that cube (gammons and backgammons weighted by the position's
    ratios); ``cash[n]``: my value when the opponent passes my double from level n;
    ``drop[n]``: my value when I pass his. ``my_cash[n]`` is None where my double
    cannot gain (the cube covers what I need, or I have no access), likewise
    ``opp_cash[n]`` for the opponent. (A NamedTuple: one is built for every cube question.)
    """

    win: tuple[float, ...]
    lose: tuple[float, ...]
    cash: tuple[float, ...]
    drop: tuple[float, ...]
    my_cash: tuple[float | None, ...]
    opp_cash: tuple[float | None, ...]

    def knots(self, level: int, mine: bool, theirs: bool) -> tuple[tuple[float, float], ...]:
        """My live-cube value at ``level`` as a rising polyline in p; mine/theirs: who holds the cube's access.

        From (0, lose) the line runs to the opponent's cash point (he plays on for his
        gammons below it), then to my cash point, then on to (1, win): beyond my cash
        point I play on for my gammons, never worse than cashing.
        """
        pts = [(0.0, self.lose[level])]
        t = self.opp_cash[level] if theirs else None
        c = self.my_cash[level] if mine else None
        if t is not None:
            pts.append((t, self.drop[level]))
        if c is not None:
            pts.append((c, self.cash[level]))
        pts.append((1.0, self.win[level]))
        return tuple(pts)


def polyline_value(knots: Sequence[tuple[float, float]], p: float) -> float:
    """Value at p of a polyline whose knots rise in p (clamped to the end knots)."""
    if p <= knots[0][0]:
        return knots[0][1]
    for (p0, v0), (p1, v1) in zip(knots, knots[1:]):
        if p <= p1:
            return v0 if p1 <= p0 else v0 + (p - p0) * (v1 - v0) / (p1 - p0)
    return knots[-1][1]


def _solve_line(p0: float, v0: float, p1: float, v1: float, v: float) -> float:
    """The p in [p0, p1] where the line (p0, v0)-(p1, v1) reaches v (clamped)."""
    if v1 <= v0 or v <= v0:
        return p0 if v <= v0 else p1
    if v >= v1:
        return p1
    return p0 + (v - v0) * (p1 - p0) / (v1 - v0)


def build_ladder(win: Sequence[float], lose: Sequence[float], cash: Sequence[float], drop: Sequence[float],
                 mine_useful: Sequence[bool], theirs_useful: Sequence[bool]) -> Ladder:
    """Cash points of both players at each level, from the top level (where nobody's double gains) down.

    My cash point at level n is where the opponent, owning the cube at level n+1, is
    indifferent between taking and passing: his take value there runs from his own
    cash point at n+1 (or from (0, lose) if his redouble cannot gain) to (1, win).
    The opponent's cash point is the mirror image.
    """
    n = len(win)
    my_cash: list[float | None] = [None] * n
    opp_cash: list[float | None] = [None] * n
    for k in range(n - 2, -1, -1):
        up = k + 1
        if mine_useful[k] and win[up] > cash[k]:
            t = opp_cash[up]
            p0, v0 = (t, drop[up]) if t is not None else (0.0, lose[up])
            my_cash[k] = _solve_line(p0, v0, 1.0, win[up], cash[k])
        if theirs_useful[k] and lose[up] < drop[k]:
            c = my_cash[up]
            p1, v1 = (c, cash[up]) if c is not None else (1.0, win[up])
            opp_cash[k] = _solve_line(0.0, lose[up], p1, v1, drop[k])
    return Ladder(tuple(win), tuple(lose), tuple(cash), tuple(drop), tuple(my_cash), tuple(opp_cash))


def _ladder_centred(a: int, b: int, after: Callable[[int, int], float],
                    outcome: Callable[[int, bool], float]) -> float:
    """Live-cube MWC at p = 1/2 with a centred 1-cube (the generator's pre-Crawford value)."""
    levels = [1]
    while levels[-1] < max(a, b):
        levels.append(2 * levels[-1])
    ladder = build_ladder([outcome(k, True) for k in levels], [outcome(k, False) for k in levels],
                          [after(a - k, b) for k in levels], [after(a, b - k) for k in levels],
                          [k < a for k in levels], [k < b for k in levels])
    return polyline_value(ladder.knots(0, True, True), 0.5)
