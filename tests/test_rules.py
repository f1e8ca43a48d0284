"""Game rules: game over, winner, single/gammon/backgammon, the opening roll."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bgnet import IllegalMoveError, Move, Position
from bgnet.core.rules import Outcome, Result, is_game_over, opening_roll, other_opening_die, result_kind, winner

# Each case: the loser's checkers (his own numbering, 25 = bar), the result, when the
# winner has borne off all fifteen.  The winner's home board is the loser's 19..24.
LOSER_CASES = [
    ({6: 14}, Result.SINGLE),  # one borne off
    ({1: 1}, Result.SINGLE),
    ({6: 15}, Result.GAMMON),  # none off, all in his own home
    ({18: 1, 6: 14}, Result.GAMMON),  # none off, outfield only
    ({19: 1, 6: 14}, Result.BACKGAMMON),  # one in the winner's home board
    ({24: 15}, Result.BACKGAMMON),
    ({25: 1, 6: 14}, Result.BACKGAMMON),  # one on the bar
    ({25: 1, 6: 13}, Result.SINGLE),  # on the bar, but one borne off
]


@pytest.mark.parametrize("loser, kind", LOSER_CASES)
def test_result_kind_when_the_opponent_won(loser: dict[int, int], kind: Result) -> None:
    # The side on roll lost: the opponent (who just moved) has no checkers left.
    pos = Position.from_points(loser, {})
    assert winner(pos) == 1 and is_game_over(pos) and pos.is_game_over()
    assert result_kind(pos) == kind


@pytest.mark.parametrize("loser, kind", LOSER_CASES)
def test_result_kind_when_the_side_on_roll_won(loser: dict[int, int], kind: Result) -> None:
    pos = Position.from_points(loser, {}).swap_sides()
    assert winner(pos) == 0 and is_game_over(pos)
    assert result_kind(pos) == kind


def test_result_values_are_points_at_cube_one() -> None:
    assert (int(Result.SINGLE), int(Result.GAMMON), int(Result.BACKGAMMON)) == (1, 2, 3)


def test_game_not_over() -> None:
    for pos in (Position.start(), Position.from_points({1: 1}, {1: 1})):
        assert winner(pos) is None and not is_game_over(pos)
        with pytest.raises(ValueError, match="not over"):
            result_kind(pos)


def test_opening_roll_is_never_a_double() -> None:
    rng = np.random.default_rng(123)
    rolls = [opening_roll(rng) for _ in range(6000)]
    assert all(a != b and 1 <= b < a <= 6 for a, b in rolls)
    counts = Counter(rolls)
    assert len(counts) == 15  # every non-double roll occurs ...
    assert max(counts.values()) < 2 * min(counts.values())  # ... about equally often


def test_other_opening_die_never_repeats_the_first() -> None:
    first, shift = np.meshgrid(np.arange(1, 7), np.arange(1, 6))
    second = other_opening_die(first, shift)
    assert np.all(second != first) and np.all((1 <= second) & (second <= 6))
    pairs = set(zip(first.ravel().tolist(), second.ravel().tolist()))
    assert len(pairs) == 30  # each of the 30 non-double rolls from exactly one (first, shift)
    assert other_opening_die(6, 1) == 1 and other_opening_die(2, 3) == 5


def test_opening_roll_is_seeded() -> None:
    a = [opening_roll(np.random.default_rng(5)) for _ in range(3)]
    b = [opening_roll(np.random.default_rng(5)) for _ in range(3)]
    assert a == b


def test_roll_opening_says_who_moves_first_and_keeps_the_ties() -> None:
    from bgnet.core.rules import OpeningRoll, roll_opening

    pairs = iter([(4, 4), (2, 5), (6, 1)])
    assert roll_opening(lambda: next(pairs)) == OpeningRoll(first=1, dice=(5, 2), tries=((4, 4), (2, 5)))
    # A generator draws two dice per try, exactly as a callable drawing from the same generator.
    rng, same = np.random.default_rng(11), np.random.default_rng(11)
    drawn = [roll_opening(rng) for _ in range(50)]
    assert drawn == [roll_opening(lambda: tuple(int(x) for x in same.integers(1, 7, size=2))) for _ in range(50)]
    assert any(len(o.tries) > 1 for o in drawn) and {o.first for o in drawn} == {0, 1}
    assert all(o.dice == (max(o.tries[-1]), min(o.tries[-1])) for o in drawn)


# -- Position.outcome and Position.play -----------------------------------------


@pytest.mark.parametrize("loser, kind", LOSER_CASES)
def test_outcome_names_the_winner_and_the_kind(loser: dict[int, int], kind: Result) -> None:
    lost = Position.from_points(loser, {})  # the side on roll lost
    assert lost.outcome() == Outcome("opponent", kind) and lost.outcome().signed_points == -int(kind)
    won = lost.swap_sides()
    assert won.outcome() == Outcome("me", kind) and won.outcome().points == int(kind)


def test_outcome_agrees_with_the_batched_kernel_codes() -> None:
    """``terminal_codes`` is the batched form of ``outcome().signed_points`` (0 while the game goes on)."""
    from bgnet.core._game_kernels import terminal_codes

    rng = np.random.default_rng(4)
    boards, expected = [], []
    for _ in range(40):
        pos = Position.start()
        while True:
            boards.append(pos.board)
            out = pos.outcome()
            expected.append(0 if out is None else out.signed_points)
            if out is not None:
                boards.append(pos.swap_sides().board)
                expected.append(-out.signed_points)
                break
            moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, 2)))
            pos = pos.play(moves[int(rng.integers(len(moves)))])
    codes = terminal_codes(np.array(boards, np.int8))
    assert codes.tolist() == expected
    assert {abs(e) for e in expected} >= {0, 1, 2}  # single games and gammons both met


def test_play_gives_the_next_position_with_the_other_side_on_roll() -> None:
    rng = np.random.default_rng(8)
    pos = Position.start()
    for _ in range(60):
        for m in pos.legal_moves((int(rng.integers(1, 7)), int(rng.integers(1, 7)))):
            assert m.after is not None
            assert pos.play(m) == m.after.swap_sides()
            assert pos.play(Move.from_str(repr(m)[15:-2])) == m.after.swap_sides()  # from the text alone
        if pos.outcome() is not None:
            break
        pos = pos.play(m)


def test_play_refuses_steps_that_cannot_be_played() -> None:
    start = Position.start()
    for text in ("20/15", "24/18 24/18 24/18", "6/off"):  # an empty point, a third checker, bearing off early
        with pytest.raises(IllegalMoveError):
            start.play(Move.from_str(text))
    on_bar = Position.from_points({25: 1, 13: 14}, {19: 2})
    with pytest.raises(IllegalMoveError):
        on_bar.play(Move.from_str("13/10"))  # the bar checker must enter first

