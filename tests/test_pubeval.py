"""Tests for bgnet.nets.pubeval: scores against gnubg's reference, the race switch, batching, move choice."""

from __future__ import annotations

import json
from types import ModuleType

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.nets.pubeval import WEIGHTS_FILE, WIN_SCORE, PubevalInputError, pubeval_score, pubeval_scores

# gnubg computes in float32; its "all off" score 99999999 rounds to 1e8 there.
RTOL = 1e-5
ATOL = 1e-4


@pytest.fixture(scope="module")
def gnubg_nn() -> ModuleType:
    """The reference implementation, or a skip when it is not installed."""
    return pytest.importorskip("gnubg_nn", reason="gnubg_nn (pip install gnubg-nn) is needed for the reference checks")


def _weights() -> dict[str, list[float]]:
    """The published weight vectors, read straight from the data file."""
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


def random_position(rng: np.random.Generator) -> Position:
    """A valid position with a random number of checkers per side scattered over points and bars."""
    board = [0] * 26
    for side in (1, -1):
        for _ in range(int(rng.integers(0, 16))):
            while True:
                p = int(rng.integers(1, 26))  # own numbering, 25 = bar
                slot = p if side == 1 else 25 - p
                if board[slot] * side >= 0:
                    board[slot] += side
                    break
    return Position(board)


def random_race(rng: np.random.Generator) -> Position:
    """A valid race: my checkers on points below a split, the opponent's above it."""
    split = int(rng.integers(2, 24))
    board = [0] * 26
    for _ in range(int(rng.integers(1, 16))):
        board[int(rng.integers(1, split))] += 1
    for _ in range(int(rng.integers(1, 16))):
        board[int(rng.integers(split, 25))] -= 1
    return Position(board)


def gnubg_board(after: Position) -> list[list[int]]:
    """The gnubg board that pub_eval_score rates for the side that just moved (that side comes first)."""
    not_on_roll, on_roll = after.boards()
    return [list(on_roll), list(not_on_roll)]


def gnubg_to_move(pos: Position) -> list[list[int]]:
    """The gnubg board (not_on_roll, on_roll) of a position before its mover plays."""
    not_on_roll, on_roll = pos.boards()
    return [list(not_on_roll), list(on_roll)]


def apply_gnubg_move(pos: Position, move: list[int]) -> Position:
    """The afterstate of a pub_best_move answer: 0-based from/to pairs, 24 = bar, -1 = off."""
    board = list(pos.board)
    for src, dst in zip(move[::2], move[1::2]):
        board[src + 1] -= 1
        if dst >= 0:
            if board[dst + 1] == -1:  # hit a blot: it goes to the opponent's bar
                board[dst + 1] = 0
                board[0] -= 1
            board[dst + 1] += 1
    return Position(board)


def sample_positions(seed: int, count: int) -> list[Position]:
    """Half scattered positions, half races, none with a side already finished."""
    rng = np.random.default_rng(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = random_position(rng) if len(out) % 2 else random_race(rng)
        if not pos.is_game_over():
            out.append(pos)
    return out


# -- the formula, without the reference -------------------------------------------


def test_weights_file_has_two_vectors_of_122() -> None:
    w = _weights()
    assert len(w["race"]) == len(w["contact"]) == 122
    assert w["race"] != w["contact"]


def test_score_is_the_sum_of_the_active_weights() -> None:
    # Mover: 2 on point 6, 3 on point 24, 5 on point 1; opponent: a blot on my point 20,
    # 2 on my point 10 (not an input), 1 on the bar. Mover has 5 off. Contact.
    pos = Position.from_points({6: 2, 24: 3, 1: 5}, {5: 1, 15: 2, 25: 1})
    wc = _weights()["contact"]

    def block(point: int) -> int:
        """First input index of the mover's point (inputs run from point 24 down to 1)."""
        return 5 * (24 - point)

    expected = (
        wc[block(6) + 2]
        + wc[block(24) + 2] + wc[block(24) + 3]
        + wc[block(1) + 2] + wc[block(1) + 4] * (5 - 3) / 2
        + wc[block(20) + 0]
        + wc[120] * 1 / 2
        + wc[121] * 5 / 15
    )
    assert pubeval_score(pos) == pytest.approx(expected, rel=1e-12)


def test_all_checkers_off_is_the_best_score() -> None:
    done = Position.from_points({}, {6: 3})
    assert pubeval_score(done) == WIN_SCORE
    assert pubeval_score(Position.from_points({1: 1}, {6: 3})) < WIN_SCORE


def test_own_bar_is_not_an_input() -> None:
    # Moving a checker from the bar to "off" changes only the borne-off input.
    on_bar = Position.from_points({25: 1, 6: 2}, {3: 2})
    off = Position.from_points({6: 2}, {3: 2})
    w = _weights()["contact"]
    assert pubeval_score(off, race=False) - pubeval_score(on_bar, race=False) == pytest.approx(w[121] / 15)


# -- race / contact switch ------------------------------------------------------


def test_race_uses_the_race_weights() -> None:
    race = Position.from_points({6: 5, 5: 5, 1: 3}, {6: 4, 3: 4})
    assert race.is_race()
    assert pubeval_score(race) == pubeval_score(race, race=True)
    assert pubeval_score(race) != pubeval_score(race, race=False)


def test_contact_uses_the_contact_weights() -> None:
    contact = Position.from_points({6: 5, 5: 5, 20: 3}, {6: 4, 3: 4})
    assert not contact.is_race()
    assert pubeval_score(contact) == pubeval_score(contact, race=False)
    assert pubeval_score(contact) != pubeval_score(contact, race=True)


@pytest.mark.parametrize(
    ("me", "opp", "race"),
    [
        ({12: 2}, {12: 2}, True),  # his checkers sit on my point 13, just behind mine
        ({13: 2}, {13: 2}, False),  # his checkers on my point 12 are in front of mine
        ({6: 2}, {1: 1}, True),
        ({6: 2}, {25: 1, 1: 1}, False),  # the same with one of his on the bar
        ({2: 1}, {2: 2}, True),
        ({25: 1, 2: 1}, {2: 2}, False),  # the same with one of mine on the bar
    ],
)
def test_per_row_race_decision(me: dict[int, int], opp: dict[int, int], race: bool) -> None:
    pos = Position.from_points(me, opp)
    assert pos.is_race() is race
    assert pubeval_score(pos) == pubeval_score(pos, race=race)
    assert pubeval_score(pos) != pubeval_score(pos, race=not race)


# -- batching and input checks -------------------------------------------------------


def test_batch_equals_single() -> None:
    positions = sample_positions(seed=11, count=200)
    stacked = np.stack([p.array() for p in positions])
    batch = pubeval_scores(stacked)
    assert batch.dtype == np.float64 and batch.shape == (200,)
    assert batch.tolist() == [pubeval_score(p) for p in positions]
    # A forced flag per row equals the single-position call with that flag.
    flags = np.array([i % 3 == 0 for i in range(200)])
    forced = pubeval_scores(stacked, race=flags)
    assert forced.tolist() == [pubeval_score(p, race=bool(f)) for p, f in zip(positions, flags)]
    assert pubeval_scores(stacked, race=True).tolist() == [pubeval_score(p, race=True) for p in positions]
    # Other integer dtypes are accepted.
    assert pubeval_scores(stacked.astype(np.int64)).tolist() == batch.tolist()


def test_empty_batch() -> None:
    assert pubeval_scores(np.zeros((0, 26), dtype=np.int8)).shape == (0,)


@pytest.mark.parametrize(
    ("after", "race"),
    [
        (np.zeros(26, dtype=np.int8), None),
        (np.zeros((3, 25), dtype=np.int8), None),
        (np.zeros((3, 26), dtype=np.float32), None),
        (np.zeros((3, 26), dtype=np.int8), np.array([True, False])),
        (np.zeros((3, 26), dtype=np.int8), np.array([1, 0, 1])),
    ],
)
def test_bad_input_raises(after: np.ndarray, race: object) -> None:
    with pytest.raises(PubevalInputError):
        pubeval_scores(after, race)  # type: ignore[arg-type]
    assert issubclass(PubevalInputError, ValueError)


def test_single_needs_a_position() -> None:
    with pytest.raises(PubevalInputError):
        pubeval_score(Position.start().board)  # type: ignore[arg-type]


# -- agreement with gnubg's pubeval ------------------------------------------------


def test_scores_agree_with_gnubg(gnubg_nn: ModuleType) -> None:
    positions = sample_positions(seed=3, count=400)
    positions.append(Position.from_points({}, {6: 3}))  # mover all off
    mine = pubeval_scores(np.stack([p.array() for p in positions]))
    ref = np.array([gnubg_nn.pub_eval_score(gnubg_board(p)) for p in positions])
    np.testing.assert_allclose(mine, ref, rtol=RTOL, atol=ATOL)
    races = sum(p.is_race() for p in positions)
    assert 100 < races < len(positions) - 100  # both weight vectors were exercised


def test_choice_agrees_with_gnubg_over_its_own_move_list(gnubg_nn: ModuleType) -> None:
    """Argmax over gnubg's legal afterstates, race flag from the position before the move."""
    rng = np.random.default_rng(7)
    checked = 0
    for pos in sample_positions(seed=5, count=300):
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        keys = gnubg_nn.moves(gnubg_to_move(pos), d1, d2)
        if len(keys) < 2:
            continue
        afters = [Position.from_boards(*gnubg_nn.board_from_position_key(k)) for k in keys]
        scores = pubeval_scores(np.stack([a.array() for a in afters]), race=pos.is_race())
        ref = apply_gnubg_move(pos, list(gnubg_nn.pub_best_move(gnubg_to_move(pos), d1, d2)))
        best = afters[int(np.argmax(scores))]
        if best != ref:  # only a float32 near-tie may pick another play
            assert scores[afters.index(ref)] == pytest.approx(scores.max(), rel=RTOL, abs=ATOL)
        checked += 1
    assert checked > 150


def test_choice_over_legal_moves_agrees_with_gnubg(gnubg_nn: ModuleType) -> None:
    """pubeval's pick among bgnet.core.movegen's plays is gnubg's pub_best_move (up to float32 ties)."""
    movegen = pytest.importorskip("bgnet.core.movegen", reason="bgnet.core.movegen is not written yet")
    rng = np.random.default_rng(9)
    positions = sample_positions(seed=13, count=250) + [Position.start()] * 30
    for pos in positions:
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        moves = movegen.legal_moves(pos, (d1, d2))
        ref_move = list(gnubg_nn.pub_best_move(gnubg_to_move(pos), d1, d2))
        afters = [m.after for m in moves]
        if not ref_move:  # no legal play: nothing moves
            assert all(a == pos for a in afters)
            continue
        ref = apply_gnubg_move(pos, ref_move)
        assert ref in afters
        scores = pubeval_scores(np.stack([a.array() for a in afters]), race=pos.is_race())
        best = afters[int(np.argmax(scores))]
        if best != ref:  # only a float32 near-tie may pick another play
            assert scores[afters.index(ref)] == pytest.approx(scores.max(), rel=RTOL, abs=ATOL)
