"""Move notation: gnubg's pretty form, the reader (docs/ARCHITECTURE.md, Formats 5), Move values and pos.parse_move."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bgnet import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, InvalidPositionError, Move, Position
from bgnet.core.notation import format_steps, parse_pairs

VECTORS_PATH = Path(__file__).resolve().parent / "data" / "format_vectors.json"
MOVE_VECTORS: list[dict[str, Any]] = json.loads(VECTORS_PATH.read_text())["moves"]


def _shares_a_point(v: dict[str, Any]) -> bool:
    """True for the vectors whose position has both sides on one point (gnubg allows it, bgnet does not)."""
    a, b = v["board_not_on_roll"], v["board_on_roll"]
    return any(b[i] and a[23 - i] for i in range(24))


VALID = [v for v in MOVE_VECTORS if not _shares_a_point(v)]
SHARED = [v for v in MOVE_VECTORS if _shares_a_point(v)]


def _hits(v: dict[str, Any]) -> int:
    """The hit mask of a vector's play: points where an opposing blot was landed on, from the boards."""
    opp = v["board_not_on_roll"]
    return sum(1 << t for _, t in v["move_pairs"] if 1 <= t <= 24 and opp[24 - t] == 1)


def test_vectors_split_as_documented() -> None:
    assert len(SHARED) == 2 and len(VALID) == len(MOVE_VECTORS) - 2


@pytest.mark.parametrize("v", SHARED, ids=lambda v: v["description"])
def test_vectors_with_a_shared_point_are_rejected(v: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="both sides"):
        Position.from_position_id(v["position_id"])
    with pytest.raises(InvalidPositionError):
        Position.from_boards(v["board_not_on_roll"], v["board_on_roll"])
    # The text itself needs no board.
    assert format_steps([tuple(p) for p in v["move_pairs"]]) == v["gnubg_notation"]
    assert parse_pairs(v["gnubg_notation"]) == tuple(tuple(p) for p in v["gnubg_parsemove"])


@pytest.mark.parametrize("v", VALID, ids=lambda v: v["description"])
def test_move_vector(v: dict[str, Any]) -> None:
    pos = Position.from_position_id(v["position_id"])
    assert pos.boards() == (v["board_not_on_roll"], v["board_on_roll"])
    dice = tuple(v["dice"])
    after = Position.from_position_id(v["after_position_id_same_perspective"])
    moves = pos.legal_moves(dice)
    [move] = [m for m in moves if m.after == after]
    assert move.text == v["gnubg_notation"] == str(move)
    assert len(move.steps) == len(v["move_pairs"])  # one die per step (the route may differ)
    assert after.swap_sides().position_id() == v["after_position_id_next_player_on_roll"]
    assert format_steps([tuple(p) for p in v["move_pairs"]], _hits(v)) == v["gnubg_notation"]
    assert parse_pairs(v["gnubg_notation"]) == tuple(tuple(p) for p in v["gnubg_parsemove"])
    for text in (v["gnubg_notation"], v["elementary_move_form"]):
        assert pos.parse_move(text, dice) == move


# GNU Backgammon's printed form (docs/ARCHITECTURE.md, Formats 5): (steps, hit points, gnubg's text).
PRETTY = [
    ([(8, 5), (6, 5)], [], "8/5 6/5"),
    ([(24, 18), (13, 11)], [], "24/18 13/11"),
    ([(24, 18), (18, 14)], [], "24/14"),
    ([(24, 20), (24, 20), (13, 9), (13, 9)], [], "24/20(2) 13/9(2)"),
    ([(13, 7), (7, 5)], [7], "13/7*/5"),
    ([(13, 7), (13, 11)], [7], "13/11 13/7*"),
    ([(13, 11), (11, 7)], [7], "13/7*"),
    ([(25, 22), (8, 7)], [], "bar/22 8/7"),
    ([(25, 22), (13, 8)], [22], "bar/22* 13/8"),
    ([(6, 0), (4, 0)], [], "6/off 4/off"),
    ([(6, 0), (6, 0), (4, 0), (4, 0)], [], "6/off(2) 4/off(2)"),
    ([(24, 18), (18, 12), (24, 18), (18, 12)], [], "24/12(2)"),
    ([(25, 20), (25, 20), (20, 15), (20, 15)], [], "bar/15(2)"),
    ([(13, 9), (9, 5), (8, 4), (8, 4)], [9, 5], "13/9*/5* 8/4(2)"),
    ([(5, 2), (2, 0)], [], "5/off"),
    ([(8, 5), (5, 3)], [], "8/3"),  # chained on points alone
    ([], [], ""),
]


@pytest.mark.parametrize("steps, hit_points, text", PRETTY)
def test_format_steps(steps: list[tuple[int, int]], hit_points: list[int], text: str) -> None:
    hits = sum(1 << p for p in hit_points)
    assert format_steps(steps, hits) == text
    assert format_steps(list(reversed(steps)), hits) == text  # order of the steps does not matter


READS = [
    ("8/5 6/5", ((8, 5), (6, 5))),
    ("8 5 6 5", ((8, 5), (6, 5))),  # bare numbers pair up in order
    ("24/14", ((24, 14),)),
    ("13/7*/5", ((13, 7), (7, 5))),
    ("13/7*, 13/11", ((13, 7), (13, 11))),
    ("bar/22 8/7", ((25, 22), (8, 7))),
    ("b/22 BAR/20", ((25, 22), (25, 20))),
    ("25/22", ((25, 22),)),
    ("6/off 4/o", ((6, 0), (4, 0))),
    ("3/0", ((3, 0),)),
    ("24/12(2)", ((24, 12), (24, 12))),
    ("bar/15(2)", ((25, 15), (25, 15))),
    ("6/off(2) 4/off(2)", ((6, 0), (6, 0), (4, 0), (4, 0))),
    ("8/7(4)", ((8, 7),) * 4),
    ("13/9*/5* 8/4(2)", ((13, 9), (9, 5), (8, 4), (8, 4))),
    ("  8/5   6/5  ", ((8, 5), (6, 5))),
    ("", ()),
]


@pytest.mark.parametrize("text, pairs", READS)
def test_parse_pairs(text: str, pairs: tuple[tuple[int, int], ...]) -> None:
    assert parse_pairs(text) == pairs
    assert Move.from_str(text).steps == pairs


BAD_TEXT = [
    "/24", "24/", "24//20", "24/20 5", "off/20", "24/bar", "20/24", "24/26", "8/5(5)", "8/5(0)",
    "(2)", "8(2)", "13/x", "24-18", "8/7 8/7 8/7 8/7 6/5", "1/2/3", "13.7",
]


@pytest.mark.parametrize("text", BAD_TEXT)
def test_malformed_text_is_rejected_with_one_sentence(text: str) -> None:
    with pytest.raises(InvalidMoveError) as err:
        Move.from_str(text)
    message = str(err.value)
    assert "\n" not in message and message.strip() and isinstance(err.value, ValueError)


def test_move_values() -> None:
    a, b = Move.from_str("8/5 6/5"), Move.from_str("6/5 8/5")
    assert a == b and hash(a) == hash(b)
    assert a != Move.from_str("8/5 6/4")
    assert str(a) == "8/5 6/5"
    assert eval(repr(a), {"Move": Move}) == a
    assert Move.from_str("").is_empty and not a.is_empty
    with pytest.raises(AttributeError):
        a.steps = ()  # type: ignore[misc]


@pytest.mark.parametrize("v", VALID, ids=lambda v: v["description"])
def test_format_move_marks_hits_from_the_position(v: dict[str, Any]) -> None:
    pos = Position.from_position_id(v["position_id"])
    assert pos.format_move(Move.from_str(v["elementary_move_form"])) == v["gnubg_notation"]


def _sample_positions(n_games: int, seed: int) -> list[Position]:
    """Positions from seeded random-move games, every stage of the game."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_games):
        pos = Position.start()
        while pos.outcome() is None:
            out.append(pos)
            moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, 2)))
            pos = pos.play(moves[int(rng.integers(len(moves)))])
    return out


def test_repr_evaluates_back_to_an_equal_move_for_every_legal_play() -> None:
    """``eval(repr(m)) == m`` straight, not through parse_move (which would hide a lossy repr such as 24/14)."""
    seen = 0
    for pos in _sample_positions(6, seed=11) + [Position.start()]:
        for roll in ((6, 4), (5, 5), (3, 1), (2, 1), (6, 6)):
            for m in pos.legal_moves(roll):
                again = eval(repr(m), {"Move": Move})
                assert again == m and hash(again) == hash(m), (pos, roll, repr(m))
                assert again.hits == m.hits
                seen += 1
    assert seen > 1000
    [run] = [m for m in Position.start().legal_moves((6, 4)) if m.text == "24/14"]
    assert eval(repr(run), {"Move": Move}) == run and len(run.steps) == 2


def test_equal_moves_hash_alike() -> None:
    """Equality and hash agree: a legal play equals the text form of its steps, and a shortened text is another move."""
    for pos in _sample_positions(3, seed=2):
        for m in pos.legal_moves((4, 2)):
            other = Move.from_str(str(m))
            assert (other == m) == (sorted(other.steps) == sorted(m.steps))
            if other == m:
                assert hash(other) == hash(m)
            assert len({m, Move(tuple(reversed(m.steps)))}) == 1


# -- pos.parse_move ---------------------------------------------------------------


def test_parse_move_finds_the_play_in_any_written_form() -> None:
    start = Position.start()
    want = start.parse_move("8/5 6/5", (3, 1))
    for text in ("6/5 8/5", "8/5, 6/5", "8 5 6 5"):
        assert start.parse_move(text, (3, 1)) == want
    assert start.parse_move("24/14", (6, 4)).steps in (((24, 18), (18, 14)), ((24, 20), (20, 14)))


def test_a_hit_mark_the_play_does_not_make_is_an_error() -> None:
    with pytest.raises(IllegalMoveError, match="hit on 5"):
        Position.start().parse_move("8/5* 6/5", (3, 1))  # nothing stands on the 5-point


# X to play 4-1 with O blots on X's 9 and 12: 13/8 can go either way and hits either way.
#     13 12 11 10  9  8
#      X  O  .  .  O  X
AMBIGUOUS = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 8: 3, 6: 5, 13: 1, 16: 1})


def test_text_that_fits_two_plays_is_ambiguous_and_names_both() -> None:
    with pytest.raises(AmbiguousMoveError) as err:
        AMBIGUOUS.parse_move("13/8", (4, 1))
    assert "13/9*/8" in str(err.value) and "13/12*/8" in str(err.value)
    # Written in full, or with the hit mark that tells them apart, each is one play.
    via9 = AMBIGUOUS.parse_move("13/9*/8", (4, 1))
    via12 = AMBIGUOUS.parse_move("13/12*/8", (4, 1))
    assert via9 != via12 and via9.after != via12.after
    assert AMBIGUOUS.parse_move("13/9*/8", (4, 1)).text == "13/9*/8"
    assert AMBIGUOUS.parse_move("13/9* 6/5", (4, 1)).text == "13/9* 6/5"
    with pytest.raises(IllegalMoveError, match="hit on 5"):
        AMBIGUOUS.parse_move("13/9* 6/5*", (4, 1))


def test_parse_move_illegal() -> None:
    start = Position.start()
    for text in ("13/7", "24/20 13/7", "8/5 6/4", "24/21", "6/off 6/off"):
        with pytest.raises(IllegalMoveError) as err:
            start.parse_move(text, (3, 1))
        assert "\n" not in str(err.value)
    with pytest.raises(IllegalMoveError):
        start.parse_move("", (3, 1))  # an empty play while a play exists


def test_parse_move_malformed() -> None:
    for text in ("13/x", "24/", "off/20"):
        with pytest.raises(InvalidMoveError):
            Position.start().parse_move(text, (3, 1))


def test_parse_move_empty_play_when_nothing_moves() -> None:
    # X on the bar against O's closed board: the empty text is the (only) play.
    pos = Position.from_points({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    move = pos.parse_move("", (6, 5))
    assert move.is_empty and move.after == pos
    with pytest.raises(IllegalMoveError):
        pos.parse_move("bar/20", (6, 5))


def test_shortened_chain_means_no_hit_on_the_way() -> None:
    # 6-2 with an O blot on X's 7 (docs/ARCHITECTURE.md, Formats 5): "13/5" jumps straight, so it is
    # the play through the empty 11, not 13/7*/5.
    #     13 ... 11 ... 7  6  5
    #      X            O  X  .
    pos = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 4, 8: 3, 6: 5, 18: 1})
    quiet, hit = pos.parse_move("13/5", (6, 2)), pos.parse_move("13/7*/5", (6, 2))
    assert quiet != hit
    assert quiet.after.opp_bar == 0 and hit.after.opp_bar == 1
    assert quiet.text == "13/5" and hit.text == "13/7*/5"


def test_error_classes_are_value_errors() -> None:
    for cls in (InvalidMoveError, IllegalMoveError, AmbiguousMoveError):
        assert issubclass(cls, ValueError)
