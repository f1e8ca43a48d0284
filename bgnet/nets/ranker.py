"""A fitted play ranker: pubeval's table form plus nine cheap contact features, fitted to bgnet's own net.

The luck of a rollout's roll needs, for each of the 21 rolls, the value of a good
play, found without valuing every play with the net. Pubeval ranks plays in about
25 ns each but picks the net's own choice only about two times in three; this
ranker re-ranks pubeval's best ``window`` plays with a linear score fitted (by
``bgnet.trainer.ranker``, from the released net's equities of self-play plays) so
that its top play is the net's about four times in five, at a few ns a play more.

The score of an afterstate (mover's view, as ``bgnet.nets.pubeval``) is, with ``v`` the
race/contact flag of ``bgnet.core.race``:
``sum_points tables[v, point, count + 15] + extra[v, 0] * opp_bar / 2 +
extra[v, 1] * borne_off / 15``, plus, in contact only, ``contact @ features``
with the features of ``contact_features``. Any fixed score keeps the luck an exact
control variate; a better one only makes it a closer one.

The model is package data (``bgnet/data/luck_ranker.npz``, ``load()``), rebuilt by
``python -m bgnet.trainer.ranker``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from bgnet.core.atomic import atomic_write
from bgnet.core.errors import BgnetError
from bgnet.core.race import race_of_masks
from bgnet.features.common import longest_run, popcount
from bgnet.nets.pubeval import WIN_SCORE
from bgnet.core.resources import DATA_DIR

VERSION = 1
"""Format of the model file; another version is refused."""
N_CONTACT = 9
"""Contact features (``contact_features``)."""
CONTACT_FEATURES = (
    "blots exposed to a direct shot", "their points / 24", "shooter points within 6 of a blot, summed over blots",
    "blots exposed only to indirect shots (7-12 away)", "directly exposed blots on points 13-24",
    "directly exposed blots, squared", "blots", "longest run of made points", "home points made x opponent's bar",
)
MODEL_FILE = DATA_DIR / "luck_ranker.npz"
"""The shipped model, fitted to the released net."""

_HOME = np.int64(0x7E)  # bits 1..6
_OUTER = np.int64(0x1FFE000)  # bits 13..24
_POINTS = np.int64(0x1FFFFFE)  # bits 1..24


class RankerError(BgnetError):
    """A ranker model file that is missing, damaged or of another version."""


@dataclass(frozen=True, eq=False)
class Ranker:
    """A fitted linear ranker: tables (2, 24, 31), extra (2, 2) and contact weights (N_CONTACT,) float64.

    ``window``: how many of pubeval's best plays it re-ranks (what it was fitted on).
    """

    tables: np.ndarray
    extra: np.ndarray
    contact: np.ndarray
    window: int

    def __post_init__(self) -> None:
        for name, shape in (("tables", (2, 24, 31)), ("extra", (2, 2)), ("contact", (N_CONTACT,))):
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or not np.isfinite(arr).all():
                raise RankerError(f"a ranker's {name} must be a finite array of shape {shape}")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            raise RankerError(f"a ranker's window must be a positive number of plays, got {self.window!r}")
        for name in ("tables", "extra", "contact"):
            arr = np.ascontiguousarray(getattr(self, name), np.float64)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    def scores(self, after: np.ndarray) -> np.ndarray:
        """Scores (N,) float64 of afterstates (N, 26) int8, mover's view; a finished game scores ``WIN_SCORE``."""
        arr = np.ascontiguousarray(after, np.int8).reshape(-1, 26)
        return _scores(arr, self.tables, self.extra, self.contact)  # type: ignore[no-any-return]


@njit(cache=True, nogil=True, inline="always")
def _scan(row):  # type: ignore[no-untyped-def]
    """(checkers of mine in play, race flag, my blots, my made points, the opponent's checkers) of one row.

    Masks have bit p for point p (the opponent's bar is bit 0). The race flag is
    ``bgnet.core.race``'s rule on the masks of the same branch-free pass.
    """
    in_play = 0
    blots = np.int64(0)
    made = np.int64(0)
    opp = np.int64(0)
    for p in range(25):
        n = np.int64(row[p])
        in_play += max(n, 0)
        blots |= np.int64(n == 1) << p
        made |= np.int64(n >= 2) << p
        opp |= np.int64(n < 0) << p
    bar = np.int64(row[25])
    in_play += max(bar, 0)
    mine = blots | made | (np.int64(bar > 0) << 25)
    return in_play, race_of_masks(mine, opp), blots & _POINTS, made & _POINTS, opp


@njit(cache=True, nogil=True, inline="always")
def _contact_values(row, blots, made, opp):  # type: ignore[no-untyped-def]
    """The N_CONTACT contact features of a mover-view afterstate (from its ``_scan`` masks), as a tuple.

    An opposing checker on my point q (his bar: q = 0) hits my blot on p > q directly
    when p - q <= 6; his checkers move up my numbering.
    """
    direct = np.int64(0)
    shooters = 0
    for k in range(1, 7):
        s = opp << k
        direct |= s
        shooters += popcount(blots & s)
    exposed = blots & direct
    d1 = popcount(exposed)
    pts = 0
    x = exposed
    while x:
        p = 63 - leading_zeros(x)
        pts += p
        x ^= np.int64(1) << p
    return (float(d1), pts / 24.0, float(shooters), float(popcount(blots & (direct << 6) & ~direct)),
            float(popcount(exposed & _OUTER)), float(d1 * d1), float(popcount(blots)), float(longest_run(made)),
            float(popcount(made & _HOME) * max(0, -np.int64(row[0]))))


@njit(cache=True, nogil=True)
def contact_features(row, xs):  # type: ignore[no-untyped-def]
    """The N_CONTACT contact features of a mover-view afterstate into ``xs`` (N_CONTACT,) float64."""
    _n, _race, blots, made, opp = _scan(row)
    v = _contact_values(row, blots, made, opp)
    for k in range(N_CONTACT):
        xs[k] = v[k]


@njit(cache=True, nogil=True, inline="always")
def table_score(row, tables, extra, in_play, race):  # type: ignore[no-untyped-def]
    """The table part of the score (pubeval's form) of a row with ``in_play`` > 0 checkers of mine."""
    v = 0 if race else 1
    s = 0.0
    for block in range(24):
        s += tables[v, block, row[24 - block] + 15]
    return s + extra[v, 0] * (-row[0]) / 2.0 + extra[v, 1] * (15 - in_play) / 15.0


@njit(cache=True, nogil=True, inline="always")
def score_row(row, tables, extra, contact):  # type: ignore[no-untyped-def]
    """The ranker's score of one mover-view afterstate (pubeval's ``WIN_SCORE`` when the mover has borne off all)."""
    in_play, race, blots, made, opp = _scan(row)
    if in_play == 0:
        return WIN_SCORE
    s = table_score(row, tables, extra, in_play, race)
    if not race:
        v = _contact_values(row, blots, made, opp)
        s += (contact[0] * v[0] + contact[1] * v[1] + contact[2] * v[2] + contact[3] * v[3] + contact[4] * v[4]
              + contact[5] * v[5] + contact[6] * v[6] + contact[7] * v[7] + contact[8] * v[8])
    return s


@njit(cache=True, nogil=True)
def _scores(after, tables, extra, contact):  # type: ignore[no-untyped-def]
    out = np.empty(after.shape[0], np.float64)
    for i in range(after.shape[0]):
        out[i] = score_row(after[i], tables, extra, contact)
    return out


@njit(cache=True, nogil=True)
def _features(after, out):  # type: ignore[no-untyped-def]
    """Per row: its race flag (returned) and its contact features into ``out`` (zeros in races and finished games)."""
    race = np.zeros(after.shape[0], np.bool_)
    for i in range(after.shape[0]):
        in_play, r, _b, _m, _o = _scan(after[i])
        race[i] = r or in_play == 0
        if not race[i]:
            contact_features(after[i], out[i])
    return race


def features(after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(race flags (N,), contact features (N, N_CONTACT)) of mover-view afterstates (N, 26); features 0 in races."""
    arr = np.ascontiguousarray(after, np.int8).reshape(-1, 26)
    out = np.zeros((len(arr), N_CONTACT), np.float64)
    return _features(arr, out), out


def save(ranker: Ranker, path: str | os.PathLike[str]) -> Path:
    """Write ``ranker`` to ``path`` (.npz) through a temporary file and a rename."""
    dest = Path(path)
    # package data: readable by all, like the files beside it
    with atomic_write(dest, parents=True, permissions=0o644) as fh:
        np.savez(fh, version=np.int64(VERSION), tables=ranker.tables, extra=ranker.extra, contact=ranker.contact,
                 window=np.int64(ranker.window))
    return dest


def load(path: str | os.PathLike[str] | None = None) -> Ranker:
    """The ranker in ``path`` (default: the shipped ``MODEL_FILE``), or a RankerError in one sentence."""
    src = Path(path) if path is not None else MODEL_FILE
    try:
        with np.load(src, allow_pickle=False) as doc:
            version = int(doc["version"])
            if version != VERSION:
                raise RankerError(f"{src} is a version-{version} ranker; this bgnet reads version {VERSION}")
            return Ranker(np.array(doc["tables"], np.float64), np.array(doc["extra"], np.float64),
                          np.array(doc["contact"], np.float64), int(doc["window"]))
    except RankerError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise RankerError(f"cannot read the ranker model {src}: {e}") from None


_DEFAULT: Ranker | None = None


def default() -> Ranker:
    """The shipped ranker, loaded once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load()
    return _DEFAULT
