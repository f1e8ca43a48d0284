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
from typing import Callable, Sequence

DEFAULT_MET_PATH = Path(__file__).with_name("data") / "kazaross_xg2.json"


class InvalidMETError(ValueError):
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

    def _extrapolate(self, a: int, b: int) -> float:
        """MWC beyond the table: a normal approximation whose scale is fitted to the table's last rows."""
        if a == 1 or b == 1:
            # Crawford game against a long trailer: the trailer must win a gammonless
            # series; use the table's last Crawford entry scaled like the post-Crawford tail.
            trailer = max(a, b)
            n = len(self._pre)
            edge = 1.0 - self._pre[0][n - 1]
            scale = self.post_crawford(trailer) / self.post_crawford(n) if self.post_crawford(n) > 0 else 0.0
            lead = 1.0 - edge * scale
            return lead if a == 1 else 1.0 - lead
        return NormalDist().cdf(self._k * (b - a) / math.sqrt(a + b))

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
    return MatchEquityTable(pre, post[1:], name, "bgnet.met.generate_met")


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


def _ladder_centred(a: int, b: int, after: Callable[[int, int], float],
                    outcome: Callable[[int, bool], float]) -> float:
    """Live-cube MWC at p = 1/2 with a centred 1-cube, both players doubling at the other's take point."""
    top = 1
    while top < 2 * max(a, b):
        top *= 2

    def line(cube: int, mine: bool, theirs: bool) -> tuple[float, float, float, float]:
        """Segment (p_lo, v_lo, p_hi, v_hi) of my live MWC with ``cube``; mine/theirs: who may double."""
        p_lo, v_lo = 0.0, outcome(cube, False)
        p_hi, v_hi = 1.0, outcome(cube, True)
        if mine and cube < top:
            cash = after(a - cube, b)
            seg = line(2 * cube, False, True)
            if line_value(seg, 1.0) > cash:
                p_hi, v_hi = line_solve(seg, cash), cash
        if theirs and cube < top:
            cash = after(a, b - cube)
            seg = line(2 * cube, True, False)
            if line_value(seg, 0.0) < cash:
                p_lo, v_lo = line_solve(seg, cash), cash
        return p_lo, v_lo, p_hi, v_hi

    return line_value(line(1, True, True), 0.5)


def line_value(seg: tuple[float, float, float, float], p: float) -> float:
    """Value of a clamped linear segment at p."""
    p_lo, v_lo, p_hi, v_hi = seg
    if p <= p_lo:
        return v_lo
    if p >= p_hi:
        return v_hi
    return v_lo + (p - p_lo) * (v_hi - v_lo) / (p_hi - p_lo)


def line_solve(seg: tuple[float, float, float, float], v: float) -> float:
    """The p at which a rising clamped segment reaches v."""
    p_lo, v_lo, p_hi, v_hi = seg
    if v <= v_lo:
        return p_lo
    if v >= v_hi:
        return p_hi
    return p_lo + (v - v_lo) * (p_hi - p_lo) / (v_hi - v_lo)
