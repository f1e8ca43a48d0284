"""Bear-off databases: positions worked by hand, the tables checked against their own recursions with
plays from ``legal_moves``, the cache file (corrupt, stale, atomic), the batched API, and agreement
with GNU Backgammon's bear-off databases (skipped without gnubg-nn)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from bgnet import Position, legal_moves
from bgnet.nets import bearoff as bo
from bgnet.core._game_kernels import apply_terminal, terminal_codes

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
WEIGHTS = [Fraction(1, 36) if a == b else Fraction(2, 36) for a, b in ROLLS]


@pytest.fixture(scope="module")
def db() -> bo.BearoffDatabase:
    return bo.build()


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A private, empty cache folder and a process database that forgets itself before and after."""
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path))
    bo._reset_for_tests()
    yield tmp_path
    bo._reset_for_tests()


@pytest.fixture
def cache(empty_cache, db):
    """A private cache folder holding the module's database (loaded, not rebuilt, by ``bo.database()``)."""
    bo.save(db)
    return empty_cache


def board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from the side on roll's checkers by point and the opponent's by *his* point numbers."""
    return np.array(Position.from_points(mine, theirs).board, np.int8)


def counts_of(pos: Position) -> tuple[int, ...]:
    return tuple(int(x) for x in pos.board[1:7])


def random_boards(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    """Pure bear-off boards whose one-sided indices for both sides are drawn from [lo, hi)."""
    table = bo.positions_table()
    out = np.zeros((n, 26), np.int8)
    ids = rng.integers(lo, hi, (n, 2))
    out[:, 1:7] = table[ids[:, 0]]
    out[:, 19:25] = -table[ids[:, 1], ::-1]
    return out


# -- numbering ---------------------------------------------------------------------------------


def test_index_is_a_bijection_with_small_positions_first() -> None:
    table = bo.positions_table()
    assert table.shape == (bo.N_POSITIONS, 6)
    assert len({tuple(r) for r in table.tolist()}) == bo.N_POSITIONS
    assert all(bo.index_of(table[i]) == i for i in range(0, bo.N_POSITIONS, 17))
    sums = table.sum(1)
    assert (np.diff(sums) >= 0).all() and sums.max() == 15
    assert (sums[: bo.N_TWO_SIDED] <= 6).all() and sums[bo.N_TWO_SIDED] == 7
    assert bo.position_of(0) == (0,) * 6 and bo.position_of(1) == (1, 0, 0, 0, 0, 0)
    with pytest.raises(bo.BearoffError):
        bo.index_of([0, 0, 0, 0, 0, 16])
    with pytest.raises(bo.BearoffError):
        bo.position_of(bo.N_POSITIONS)


def test_numbering_is_gnu_backgammons() -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    table = bo.positions_table()
    for i in list(range(1, 3000)) + list(range(bo.N_POSITIONS - 2000, bo.N_POSITIONS)):
        assert tuple(table[i]) == gnubg_nn.bearoff_id_2_pos(i)


# -- plays -------------------------------------------------------------------------------------


def test_roll_results_are_the_afterstates_of_legal_moves() -> None:
    """The database's own play generator against bgnet.core.movegen on random one-sided positions and every roll."""
    rng = np.random.default_rng(7)
    table = bo.positions_table()
    for i in rng.integers(1, bo.N_POSITIONS, 60):
        mine = {p + 1: int(n) for p, n in enumerate(table[i]) if n}
        pos = Position.from_points(mine, {6: 3, 5: 2})
        for dice in ROLLS:
            expected = sorted({counts_of(m.after) for m in legal_moves(pos, dice)})
            assert bo.roll_results(table[i], dice) == expected, (table[i], dice)


# -- the one-sided table ------------------------------------------------------------------------


def test_one_checker_distributions_by_hand(db: bo.BearoffDatabase) -> None:
    # A checker on the 6-point misses only with 1-1, 2-1, 3-1, 4-1, 3-2 (9 of 36), then any roll finishes.
    six = db.rolls[bo.index_of([0, 0, 0, 0, 0, 1])]
    assert six[:3] == pytest.approx([0.0, 27 / 36, 9 / 36], abs=1e-15) and six[3:].sum() == 0.0
    assert db.rolls[bo.index_of([1, 0, 0, 0, 0, 0])][1] == pytest.approx(1.0, abs=1e-15)
    assert db.mean_rolls(bo.index_of([0, 0, 0, 0, 0, 1])) == pytest.approx(1.25, abs=1e-15)
    # Fifteen on the 6-point: four rolls only with 6-6 four times; never more than 30 rolls (2-1 each time).
    full = db.rolls[bo.index_of([0, 0, 0, 0, 0, 15])]
    assert full[:4].sum() == 0.0 and full[4] == pytest.approx(36.0 ** -4, rel=1e-12)
    assert np.allclose(db.rolls.sum(1), 1.0, atol=1e-12) and db.rolls[:, 31].max() == 0.0


def test_first_checker_distribution_by_hand(db: bo.BearoffDatabase) -> None:
    # From fifteen on the 6-point a checker comes off now with any 6, 5-1, 4-2, 3-3 or 2-2: 17 rolls of 36.
    full = db.first_off_rolls(bo.index_of([0, 0, 0, 0, 0, 15]))
    assert full[0] == 0.0 and full[1] == pytest.approx(17 / 36, abs=1e-15)
    assert db.first_off_rolls(bo.index_of([15, 0, 0, 0, 0, 0]))[1] == pytest.approx(1.0, abs=1e-15)
    assert db.first_off_rolls(bo.index_of([0, 0, 0, 0, 0, 14]))[0] == 1.0  # one is already off
    assert bo.index_of([0, 0, 0, 0, 0, 15]) >= bo.FULL_START > bo.index_of([0, 0, 0, 0, 0, 14])
    assert np.allclose(db.first_off.sum(1), 1.0, atol=1e-12)


def test_one_sided_table_solves_its_recursion(db: bo.BearoffDatabase) -> None:
    """Mean rolls = 1 + the average over rolls of the best play's mean, with plays from legal_moves."""
    rng = np.random.default_rng(3)
    table = bo.positions_table()
    means = db.rolls @ np.arange(bo.MAX_ROLLS)
    for i in rng.integers(1, bo.N_POSITIONS, 40):
        mine = {p + 1: int(n) for p, n in enumerate(table[i]) if n}
        pos = Position.from_points(mine, {6: 2})
        expect = 1.0
        for (a, b), w in zip(ROLLS, WEIGHTS):
            expect += float(w) * min(means[bo.index_of(counts_of(m.after))] for m in legal_moves(pos, (a, b)))
        assert means[i] == pytest.approx(expect, abs=1e-9)


# -- the two-sided table -------------------------------------------------------------------------


def test_two_sided_small_cases_by_hand(db: bo.BearoffDatabase) -> None:
    six, ace = bo.index_of([0, 0, 0, 0, 0, 1]), bo.index_of([1, 0, 0, 0, 0, 0])
    assert db.win[ace, six] == 1.0 and db.win[six, ace] == pytest.approx(27 / 36, abs=1e-15)
    # Each side needs one roll (3/4) or two (1/4): the side on roll wins unless it misses and the other hits.
    assert db.win[six, six] == pytest.approx(1 - (1 / 4) * (3 / 4), abs=1e-15)
    # Cubeful: with the cube the other side's, the side on roll is worth 3/4 - 1/4 (the other redoubles and
    # wins when it misses); so doubling (take or pass both worth 1) beats not doubling (1/2).
    cube = db.cubeful[:, six, six]
    assert cube == pytest.approx([1.0, 1.0, 0.5], abs=1e-7)


def test_two_sided_table_solves_its_recursion(db: bo.BearoffDatabase) -> None:
    rng = np.random.default_rng(5)
    table = bo.positions_table()
    for a, b in rng.integers(1, bo.N_TWO_SIDED, (40, 2)):
        mine = {p + 1: int(n) for p, n in enumerate(table[a]) if n}
        theirs = {p + 1: int(n) for p, n in enumerate(table[b]) if n}
        pos = Position.from_points(mine, theirs)
        expect = 0.0
        for dice, w in zip(ROLLS, WEIGHTS):
            best = 0.0
            for m in legal_moves(pos, dice):
                j = bo.index_of(counts_of(m.after))
                best = max(best, 1.0 if j == 0 else 1.0 - db.win[b, j])
            expect += float(w) * best
        assert db.win[a, b] == pytest.approx(expect, abs=1e-12)


def test_cubeful_table_solves_its_recursion(db: bo.BearoffDatabase) -> None:
    """Money equity per unit cube: the roller doubles when that is worth more; the taker takes unless passing is."""
    rng = np.random.default_rng(19)
    table = bo.positions_table()
    e = db.cubeful.astype(np.float64)
    for a, b in rng.integers(1, bo.N_TWO_SIDED, (25, 2)):
        mine = {p + 1: int(n) for p, n in enumerate(table[a]) if n}
        theirs = {p + 1: int(n) for p, n in enumerate(table[b]) if n}
        pos = Position.from_points(mine, theirs)
        nd = np.zeros(3)  # no double now, with the cube centred / mine / the opponent's
        for dice, w in zip(ROLLS, WEIGHTS):
            vals = []
            for m in legal_moves(pos, dice):
                j = bo.index_of(counts_of(m.after))
                vals.append([1.0, 1.0, 1.0] if j == 0 else [-e[0, b, j], -e[2, b, j], -e[1, b, j]])
            nd += float(w) * np.max(vals, axis=0)
        doubled = min(1.0, 2.0 * nd[2])
        expect = [max(nd[0], doubled), max(nd[1], doubled), nd[2]]
        assert e[:, a, b] == pytest.approx(expect, abs=2e-6)
        mask, api = db.cubeful_equities(np.array([pos.board], np.int8))
        assert mask.tolist() == [True] and api[0] == pytest.approx(e[:, a, b], abs=1e-12)


def test_two_sided_consistency(db: bo.BearoffDatabase) -> None:
    w = db.win[1:, 1:]
    assert (np.diag(w) >= 0.5).all()  # with equal positions, being on roll cannot hurt
    assert ((0.0 <= w) & (w <= 1.0)).all()
    centred, mine, theirs = db.cubeful[:, 1:, 1:]
    assert (mine >= centred).all() and (centred >= theirs).all()
    assert (np.abs(db.cubeful) <= 1.0).all()
    # Owning the cube is worth at least the cubeless equity: its owner can simply never double.
    assert (mine >= 2 * w - 1 - 1e-6).all()


def test_race_approximation_is_close_to_the_exact_table(db: bo.BearoffDatabase) -> None:
    """The one-sided race (independent policies) stays within 2% of best play on the two-sided positions."""
    x, y = np.random.default_rng(23).integers(1, bo.N_TWO_SIDED, (2, 50_000))
    below = np.cumsum(db.rolls[y], 1) - db.rolls[y]
    race = (db.rolls[x] * (1 - below)).sum(1)
    gap = np.abs(race - db.win[x, y])
    assert gap.max() < 0.02 and gap.mean() < 2e-3


# -- the batched API -------------------------------------------------------------------------------


def test_the_issue_position(cache) -> None:
    """Fifteen on the 6-point against one checker on its ace: gammoned unless a checker comes off now."""
    b = board({6: 15}, {1: 1})
    mask, probs = bo.exact_probs(b[None])
    assert mask.tolist() == [True]
    assert probs[0] == pytest.approx([0.0, 0.0, 0.0, 19 / 36, 0.0], abs=1e-12)
    swapped = np.array(Position(b).swap_sides().board, np.int8)  # the single checker on roll: a certain gammon
    assert bo.exact_probs(swapped[None])[1][0] == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0], abs=1e-12)


def test_race_with_gammons_by_hand(cache) -> None:
    """One checker on the 6-point against fifteen on the ace: off now (27/36) is a gammon, and the other side
    needs at least four rolls, so the second roll (from the 3-point or lower, any roll) still wins."""
    mask, probs = bo.exact_probs(board({6: 1}, {1: 15})[None])
    assert mask.tolist() == [True] and probs[0] == pytest.approx([1.0, 27 / 36, 0.0, 0.0, 0.0], abs=1e-12)


def test_is_bearoff_mask() -> None:
    boards = np.array([
        board({6: 15}, {1: 1}),                      # yes
        board({6: 5, 5: 5}, {6: 4, 1: 2}),            # yes
        np.array(Position.start().board, np.int8),   # no: contact
        board({6: 14, 7: 1}, {1: 1}),                # no: a checker outside the home board
        board({6: 14, 25: 1}, {1: 1}),               # no: a checker on the bar
        board({6: 14}, {1: 1, 25: 1}),               # no: the opponent on the bar
        board({6: 3}, {20: 1}),                      # no: the opponent's checker in my home board
        board({}, {3: 2}),                           # yes: the side on roll is off (it has won)
    ])
    assert bo.is_bearoff(boards).tolist() == [True, True, False, False, False, False, False, True]
    assert bo.is_bearoff(np.zeros((1, 26), np.int8)).tolist() == [False]
    with pytest.raises(bo.BearoffError):
        bo.is_bearoff(np.zeros((3, 25), np.int8))


def test_exact_probs_batched_and_consistent(db: bo.BearoffDatabase) -> None:
    rng = np.random.default_rng(11)
    boards = np.concatenate([random_boards(rng, 300, 1, bo.N_TWO_SIDED), random_boards(rng, 300, 1, bo.N_POSITIONS),
                             np.array([Position.start().board], np.int8)])
    codes, probs = db.lookup(boards)
    assert (codes[:300] == 2).all() and (codes[300:600] >= 1).all() and codes[600] == 0
    assert (probs[600] == 0).all()
    one = np.array([db.lookup(b[None])[1][0] for b in boards[::37]])
    assert np.array_equal(one, probs[::37])  # a batch answers as its rows one by one
    assert (probs[:, 2] == 0).all() and (probs[:, 4] == 0).all()  # no backgammons without contact
    assert (probs[:, 1] <= probs[:, 0] + 1e-12).all() and (probs[:, 3] <= 1 - probs[:, 0] + 1e-12).all()
    # Gammons only against a side that has all 15 on the board.
    theirs = -boards[:600, 19:25].astype(int).sum(1)
    assert (probs[:600, 1][theirs < 15] == 0).all()


def test_finished_games_agree_with_the_terminal_rules(db: bo.BearoffDatabase) -> None:
    boards = np.array([board({}, {6: 15}), board({}, {2: 3}), board({3: 15}, {}), board({3: 2}, {})])
    codes, probs = db.lookup(boards)
    expect = np.zeros((4, 5), np.float32)
    apply_terminal(terminal_codes(boards), expect)
    assert (codes != 0).all() and np.allclose(probs, expect)


def test_with_database_replaces_only_bearoff_rows(cache) -> None:
    calls: list[int] = []

    def net(boards: np.ndarray) -> np.ndarray:
        calls.append(len(boards))
        return np.full((len(boards), 5), 0.25, np.float32)

    fn = bo.with_database(net)
    boards = np.array([Position.start().board, board({6: 15}, {1: 1}), Position.start().board], np.int8)
    out = fn(boards)
    assert calls == [2] and out.dtype == np.float32
    assert np.allclose(out[[0, 2]], 0.25) and out[1] == pytest.approx([0, 0, 0, 19 / 36, 0], abs=1e-6)
    fn(boards[1:2])
    assert calls == [2]  # all rows from the database: the net is not called


def test_with_database_wraps_an_evaluator_object(cache) -> None:
    from bgnet.core.protocols import Evaluator

    class Half:
        def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
            return np.full((len(boards), 5), 0.5, np.float32)

    ev = bo.with_database(Half())
    assert isinstance(ev, Evaluator) and bo.with_database(ev) is ev
    boards = np.array([board({6: 15}, {1: 1}), Position.start().board], np.int8)
    assert np.allclose(ev.probs_of_boards(boards)[1], 0.5) and ev(boards)[0, 3] == pytest.approx(19 / 36)


def test_search_with_database_is_exact_at_every_ply(cache) -> None:
    from bgnet.play.search import evaluate_position

    fn = bo.with_database(lambda boards: np.full((len(boards), 5), 0.5, np.float32))
    pos = Position(board({6: 15}, {1: 1}))
    for ply in (0, 1):
        assert list(evaluate_position(fn, pos, ply)) == pytest.approx([0, 0, 0, 19 / 36, 0], abs=1e-6)


# -- the cache file ----------------------------------------------------------------------------------


def test_cache_is_built_once_then_loaded(empty_cache, capsys) -> None:
    db = bo.database()
    assert bo.cache_path().exists() and bo.cache_path().parent == empty_cache
    assert "building the bear-off database" in capsys.readouterr().err
    bo._reset_for_tests()
    again = bo.database()
    assert capsys.readouterr().err == "" and np.array_equal(again.win, db.win)
    assert not [p for p in empty_cache.iterdir() if p.suffix == ".tmp"]  # no leftover temporary file


def test_corrupt_or_stale_file_is_rebuilt_with_one_line(cache, capsys) -> None:
    path = bo.cache_path()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the tables
    path.write_bytes(bytes(data))
    with pytest.raises(bo.BearoffError):
        bo.load(path)
    db = bo.database()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bear-off database" in err
    assert bo.load(path).checksum() == db.checksum()  # the rebuilt file is good again
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["win"] = arrays["win"].copy()
    arrays["win"][5, 7] += 1e-9  # a well-formed file whose numbers changed
    np.savez(path, **arrays)
    with pytest.raises(bo.BearoffError, match="checksum"):
        bo.load(path)
    arrays["version"] = np.int64(bo.VERSION - 1)
    np.savez(path, **arrays)
    with pytest.raises(bo.BearoffError, match="version"):
        bo.load(path)
    path.write_bytes(b"not a zip file")
    with pytest.raises(bo.BearoffError, match="cannot be read"):
        bo.load(path)


def test_build_command(tmp_path) -> None:
    out = tmp_path / "db.npz"
    res = subprocess.run([sys.executable, "-m", "bgnet.nets.bearoff", "build", "--path", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "built the bear-off databases" in res.stdout and bo.load(out).win.shape == (924, 924)


# -- GNU Backgammon as a reference --------------------------------------------------------------------


def test_one_sided_agrees_with_gnubg(db: bo.BearoffDatabase) -> None:
    """gnubg's one-sided database (16-bit entries) gives the same mean rolls on random positions."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(13)
    for i in rng.integers(1, bo.N_POSITIONS, 400):
        theirs = np.array(gnubg_nn.bearoff_probabilities(int(i)))  # entry k: exactly k + 1 rolls
        mean = float((np.arange(1, len(theirs) + 1) * theirs).sum())
        assert mean == pytest.approx(float(db.mean_rolls(int(i))), abs=5e-4)
        assert np.abs(theirs - db.rolls[i, 1:1 + len(theirs)]).max() < 5e-3


def test_exact_probs_agree_with_gnubg(db: bo.BearoffDatabase) -> None:
    """gnubg's 0-ply evaluation of pure bear-offs (its own two-sided and one-sided databases)."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(17)
    boards = np.concatenate([random_boards(rng, 150, 1, bo.N_TWO_SIDED), random_boards(rng, 150, 1, bo.N_POSITIONS),
                             random_boards(rng, 100, 39000, bo.N_POSITIONS)])
    _, ours = db.exact_probs(boards)
    theirs = np.array([gnubg_nn.probabilities([list(s) for s in Position(b).boards()], 0) for b in boards])
    assert np.abs(ours - theirs).max() < 1e-3
