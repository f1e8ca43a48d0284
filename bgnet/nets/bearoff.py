"""Bear-off databases built by bgnet itself: exact chances once both sides are bearing off.

Two tables, computed here from the rules alone (``python -m bgnet.nets.bearoff build``,
a few seconds; never downloaded):

* **one-sided**: for each of the 54,264 ways to place up to 15 checkers on one side's
  six home points, the distribution of the number of rolls that side needs to bear
  everything off when it plays every roll to minimise its expected number of rolls;
  and, for the positions with all 15 checkers still on the board, the distribution
  of the rolls needed to bear off its *first* checker (playing to minimise that),
  which decides gammons;
* **two-sided**: for each pair of positions with at most 6 checkers a side (924 x 924),
  the exact cubeless winning chance of the side on roll, both sides playing every
  roll to maximise their own winning chance, found by recursion over all 21 rolls.
  With at most 6 checkers left a side has borne off at least 9, so there are no
  gammons and the winning chance is the whole cubeless equity. The same recursion
  gives the exact cubeful money equities (cube centred, owned by the side on roll,
  owned by the opponent; optimal doubles and takes, no beavers).

Positions are numbered as GNU Backgammon numbers its bear-off positions
(``bgnet.nets.bearoff_tables``, which also builds the tables); ``index_of`` and
``position_of`` convert.

**Pure bear-off** (``is_bearoff``): every checker still in play on either side lies on
its owner's home points (the side on roll's on points 1..6, the opponent's on the side
on roll's 19..24), no checker is on a bar, and the board is not empty. Then no contact
is possible and the two sides race independently, so ``exact_probs`` can answer:

* both sides with at most 6 checkers: the two-sided table, exact;
* otherwise: the race between the two sides' independent one-sided roll counts. The
  side on roll needing ``k`` rolls wins when the other needs ``k`` or more; it wins a
  gammon when, in addition, the other (with all 15 still on the board) needs ``k`` or
  more rolls for its first checker; likewise for the gammon it loses. This is exact
  for sides that play the one-sided policies (fewest rolls on average; the first
  checker first when all 15 are on the board); best play can differ slightly: on the
  positions of the two-sided table the race's win chance is within 0.014 of the exact
  one, 0.0009 on average (``bench/bearoff.py``).

A finished game (one side has no checker left) whose other side is all home is a pure
bear-off too, with the game's exact result (as ``bgnet.core.rules`` scores it). Positions where
only one side is home (the other still has checkers outside its home board, with or without
contact) are not in the tables: the net answers them.

No backgammon is possible in a pure bear-off (neither side has a checker in the other's
home board or on the bar). Chances follow bgnet's five-probability convention
``(win, win_g, win_bg, lose_g, lose_bg)`` for the side on roll, gammons including
backgammons (see ``bgnet.core.probs``).

The tables are cached in bgnet's cache folder (``bgnet.core.resources.cache_dir``:
``$BGNET_CACHE``, else ``$XDG_CACHE_HOME/bgnet``, else ``~/.cache/bgnet``) as
``bearoff-v<VERSION>.npz``, with a SHA-256 checksum; a missing, corrupt or stale file is
rebuilt (one line of notice on stderr) and written atomically (temporary file, then rename).

Use: ``exact_probs(boards) -> (mask, probs)`` for batches; ``with_database(evaluator)``
wraps any Evaluator or function of boards so that search, hints, self-play and
rollouts get exact chances wherever the database has them.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from bgnet.core.atomic import atomic_write
from bgnet.core.protocols import Evaluator, EvaluatorLike, as_evaluator
from bgnet.core.resources import cache_dir
from bgnet.nets.bearoff_tables import (BINOM, FULL_START, MAX_CHECKERS, MAX_ROLLS, N_POSITIONS, N_TWO_SIDED, POINTS,
                                       TWO_SIDED_CHECKERS, VERSION, BearoffError, build_tables, index_of, position_of,
                                       positions_table, rank, roll_results)

__all__ = ["FULL_START", "MAX_CHECKERS", "MAX_ROLLS", "N_POSITIONS", "N_TWO_SIDED", "POINTS", "TWO_SIDED_CHECKERS",
           "VERSION", "BearoffDatabase", "BearoffError", "DatabaseEvaluator", "build", "cache_path",
           "database", "exact_probs", "index_of", "is_bearoff", "load", "position_of", "positions_table",
           "roll_results", "save", "with_database"]


# -- kernels: lookup ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _classify(boards, binom, idx):
    """Per board: 0 not a pure bear-off, 1 one-sided race, 2 in the two-sided table; indices (N, 2) of both sides."""
    n = boards.shape[0]
    code = np.zeros(n, np.int8)
    c = np.zeros(6, np.int64)
    t = np.zeros(6, np.int64)
    for i in range(n):
        b = boards[i]
        if b[0] != 0 or b[25] != 0:
            continue
        ok = True
        for p in range(7, 19):
            if b[p] != 0:
                ok = False
        nm = 0
        no = 0
        for p in range(1, 7):
            if b[p] < 0 or b[25 - p] > 0:
                ok = False
            c[p - 1] = b[p]
            t[p - 1] = -b[25 - p]
            nm += c[p - 1]
            no += t[p - 1]
        if not ok or nm > 15 or no > 15 or nm + no == 0:
            continue
        idx[i, 0] = rank(c, binom)
        idx[i, 1] = rank(t, binom)
        code[i] = 2 if nm <= 6 and no <= 6 else 1
    return code


@njit(cache=True, nogil=True)
def _lookup(boards, binom, dist, first, full_start, win, probs):
    """Classify boards and fill ``probs`` (N, 5) for the pure bear-offs; returns the codes of ``_classify``."""
    n = boards.shape[0]
    idx = np.zeros((n, 2), np.int64)
    code = _classify(boards, binom, idx)
    ncols = dist.shape[1]
    for i in range(n):
        for k in range(5):
            probs[i, k] = 0.0
        if code[i] == 0:
            continue
        x = idx[i, 0]
        y = idx[i, 1]
        if code[i] == 2:
            probs[i, 0] = win[x, y]
            continue
        w = 0.0
        cy = 0.0  # P(the other side needs fewer than k rolls)
        for k in range(ncols):
            w += dist[x, k] * (1.0 - cy)
            cy += dist[y, k]
        probs[i, 0] = min(1.0, max(0.0, w))  # sums of float64 terms: keep them inside [0, 1]
        if y >= full_start:  # the other side has all 15 on the board
            g = 0.0
            fy = 0.0
            for k in range(ncols):
                g += dist[x, k] * (1.0 - fy)
                fy += first[y - full_start, k]
            probs[i, 1] = min(probs[i, 0], max(0.0, g))
        if x >= full_start:
            g = 0.0
            fx = 0.0
            for k in range(ncols):
                fx += first[x - full_start, k]
                g += dist[y, k] * (1.0 - fx)  # I have not got my first checker off within k rolls
            probs[i, 3] = min(1.0 - probs[i, 0], max(0.0, g))
    return code


# -- the database object ----------------------------------------------------------------------


def _as_boards(boards: np.ndarray) -> np.ndarray:
    """Boards as a contiguous (N, 26) int8 array, or a BearoffError."""
    arr = np.asarray(boards)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != 26:
        raise BearoffError(f"boards must be an (N, 26) array of checker counts, got shape {np.shape(boards)}")
    return np.ascontiguousarray(arr, np.int8)


@dataclass(frozen=True, eq=False, repr=False)
class BearoffDatabase:
    """The one-sided and two-sided tables (read-only arrays) with batched lookups."""

    rolls: np.ndarray
    """(N_POSITIONS, MAX_ROLLS) float64: P(exactly k rolls to bear off all), fewest rolls on average."""
    first_off: np.ndarray
    """(N_POSITIONS - FULL_START, MAX_ROLLS) float64: for the positions with all 15 checkers on the board
    (index ``FULL_START + row``), P(exactly k rolls to bear off the first checker)."""
    win: np.ndarray
    """(N_TWO_SIDED, N_TWO_SIDED) float64: exact win chance of the side on roll, positions (on roll, other)."""
    cubeful: np.ndarray
    """(3, N_TWO_SIDED, N_TWO_SIDED) float32: exact money equity per unit cube, cube centred / mine / the other's."""

    def __repr__(self) -> str:
        return f"<BearoffDatabase v{VERSION}: {N_POSITIONS} one-sided, {N_TWO_SIDED}x{N_TWO_SIDED} two-sided>"

    def mean_rolls(self, index: int | np.ndarray) -> np.ndarray:
        """Expected number of rolls to bear off all checkers of one-sided position(s) ``index``."""
        return np.asarray(self.rolls[index] @ np.arange(MAX_ROLLS, dtype=np.float64))

    def first_off_rolls(self, index: int) -> np.ndarray:
        """P(exactly k rolls to bear off the first checker) of one-sided position ``index`` (k = 0 unless 15 left)."""
        if int(index) >= FULL_START:
            return np.asarray(self.first_off[int(index) - FULL_START])
        out = np.zeros(MAX_ROLLS)
        out[0] = 1.0
        return out

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Codes (N,) int8 (0 not a pure bear-off, 1 one-sided race, 2 exact two-sided) and probabilities (N, 5)."""
        arr = _as_boards(boards)
        probs = np.zeros((len(arr), 5), np.float64)
        codes = _lookup(arr, BINOM, self.rolls, self.first_off, FULL_START, self.win, probs)
        return codes, probs

    def exact_probs(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mask (N,) of pure bear-offs and their probabilities (N, 5) for each side on roll (zeros elsewhere)."""
        codes, probs = self.lookup(boards)
        return codes != 0, probs

    def cubeful_equities(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mask (N,) of boards in the two-sided table and their money equities (N, 3) per unit cube for the side
        on roll: cube centred, owned by the side on roll, owned by the other side (optimal cube play, no beavers)."""
        arr = _as_boards(boards)
        idx = np.zeros((len(arr), 2), np.int64)
        mask = _classify(arr, BINOM, idx) == 2
        out = np.zeros((len(arr), 3), np.float64)
        out[mask] = self.cubeful[:, idx[mask, 0], idx[mask, 1]].T.astype(np.float64)
        return mask, out

    def checksum(self) -> str:
        """SHA-256 of the tables' bytes, version and shapes."""
        h = hashlib.sha256(f"bgnet-bearoff-v{VERSION}".encode())
        for arr in (self.rolls, self.first_off, self.win, self.cubeful):
            h.update(f"{arr.dtype.str}{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).data)  # no copy
        return h.hexdigest()

    @property
    def nbytes(self) -> int:
        """Memory held by the tables."""
        return int(self.rolls.nbytes + self.first_off.nbytes + self.win.nbytes + self.cubeful.nbytes)


def _frozen(arr: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """A contiguous read-only copy (or view) of ``arr``."""
    out: np.ndarray = np.ascontiguousarray(arr, dtype)
    out.flags.writeable = False
    return out

def build() -> BearoffDatabase:
    """Compute both tables from the rules (seconds; no file is read or written)."""
    rolls, first, win, cubeful = build_tables()
    return BearoffDatabase(rolls=_frozen(rolls), first_off=_frozen(first), win=_frozen(win),
                           cubeful=_frozen(cubeful, np.float32))


# -- the cached file ---------------------------------------------------------------------------


def cache_path() -> Path:
    """The database file of this version."""
    return cache_dir() / f"bearoff-v{VERSION}.npz"


def save(db: BearoffDatabase, path: Path | None = None) -> Path:
    """Write ``db`` with its version and checksum to ``path`` (default ``cache_path()``): temp file, then rename."""
    path = cache_path() if path is None else Path(path)
    with atomic_write(path, parents=True, permissions=0o644) as f:
        np.savez(f, version=np.int64(VERSION), checksum=np.array(db.checksum()), rolls=db.rolls,
                 first_off=db.first_off, win=db.win, cubeful=db.cubeful)
    return path


def load(path: Path | None = None) -> BearoffDatabase:
    """Read and verify a database file; a BearoffError says why it cannot be used (missing, corrupt, stale)."""
    path = cache_path() if path is None else Path(path)
    if not path.exists():
        raise BearoffError(f"no bear-off database at {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            version = int(z["version"])
            if version != VERSION:
                raise BearoffError(f"the bear-off database at {path} is version {version}, not {VERSION}")
            db = BearoffDatabase(rolls=_frozen(z["rolls"]), first_off=_frozen(z["first_off"]),
                                 win=_frozen(z["win"]), cubeful=_frozen(z["cubeful"], np.float32))
            stored = str(z["checksum"])
    except BearoffError:
        raise
    except Exception as exc:  # a truncated or garbled file: zip, key or shape errors of any kind
        raise BearoffError(f"the bear-off database at {path} cannot be read ({type(exc).__name__})") from None
    shapes = ((N_POSITIONS, MAX_ROLLS), (N_POSITIONS - FULL_START, MAX_ROLLS), (N_TWO_SIDED, N_TWO_SIDED),
              (3, N_TWO_SIDED, N_TWO_SIDED))
    if tuple(a.shape for a in (db.rolls, db.first_off, db.win, db.cubeful)) != shapes:
        raise BearoffError(f"the bear-off database at {path} has tables of the wrong shape")
    if db.checksum() != stored:
        raise BearoffError(f"the bear-off database at {path} fails its checksum")
    return db


_DB: BearoffDatabase | None = None
_DB_LOCK = threading.Lock()


def database() -> BearoffDatabase:
    """The process's database: loaded from the cache file, or built and cached (one line on stderr) if that fails."""
    global _DB
    with _DB_LOCK:
        if _DB is None:
            path = cache_path()
            try:
                _DB = load(path)
            except BearoffError as exc:
                why = "" if not path.exists() else f" ({exc})"
                print(f"bgnet: building the bear-off database at {path}{why}", file=sys.stderr)
                _DB = build()
                try:
                    save(_DB, path)
                except OSError as err:  # a read-only home still gets exact answers, just not cached
                    print(f"bgnet: could not cache the bear-off database at {path}: {err}", file=sys.stderr)
        return _DB


def _reset_for_tests() -> None:
    """Forget the loaded database (tests that move the cache folder)."""
    global _DB
    with _DB_LOCK:
        _DB = None


# -- the API other modules use --------------------------------------------------------------


def is_bearoff(boards: np.ndarray) -> np.ndarray:
    """Mask (N,) of pure bear-offs among boards (N, 26): all checkers in play home, none on a bar (see module doc)."""
    arr = _as_boards(boards)
    return _classify(arr, BINOM, np.zeros((len(arr), 2), np.int64)) != 0


def exact_probs(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mask (N,) of pure bear-offs and their chances (N, 5) float64 for each side on roll, from ``database()``."""
    return database().exact_probs(boards)


class DatabaseEvaluator:
    """An Evaluator that answers pure bear-offs from the database and every other board from ``inner``.

    It is also a plain function of boards (``ProbsFn``), so that it can stand wherever
    a net's ``probs_of_boards`` does: search, hints, self-play, rollouts. ``inner`` is
    called once per call, on the other rows only (not at all when every row is a
    bear-off); the result is float32 (N, 5), each row for its board's side on roll.
    """

    def __init__(self, inner: EvaluatorLike) -> None:
        self.inner: Evaluator = as_evaluator(inner)

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities (N, 5) float32: exact for pure bear-offs, the inner evaluator's elsewhere."""
        arr = _as_boards(boards)
        mask = is_bearoff(arr)
        if not mask.any():
            return np.asarray(self.inner.probs_of_boards(arr), np.float32)
        out = np.empty((len(arr), 5), np.float32)
        rest = ~mask
        if rest.any():
            out[rest] = np.asarray(self.inner.probs_of_boards(arr[rest]), np.float32)
        out[mask] = database().exact_probs(arr[mask])[1]
        return out

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.probs_of_boards(boards)

    def __repr__(self) -> str:
        return f"with_database({self.inner!r})"


def with_database(inner: EvaluatorLike) -> DatabaseEvaluator:
    """``inner`` (an Evaluator or a function of boards) with exact answers for pure bear-offs."""
    return inner if isinstance(inner, DatabaseEvaluator) else DatabaseEvaluator(inner)


if __name__ == "__main__":
    from bgnet.cli.bearoff import main

    sys.exit(main())
