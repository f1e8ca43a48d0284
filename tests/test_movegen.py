"""Legal moves: rule cases, a slow reference generator, a golden file, random-game invariants, gnubg_nn.

The reference generator below is written straight from the rules, one die at a
time, with no tricks; the fast kernels are checked against it, against a
perft-style golden file of counts (``tests/data/movegen.txt``, made by the
reference and cross-checked with ``gnubg_nn.moves``) and, when gnubg-nn is
installed, against GNU Backgammon's own generator.

Run ``PYTHONPATH=. python tests/test_movegen.py --write-golden`` to rebuild the golden file.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
import numpy as np
import pytest

from bgnet import Position, generate_afterstates, legal_moves
from bgnet.core.formats import key20_from_boards
from bgnet.core.movegen import InvalidDiceError, generate_plays
from bgnet.core.rules import Result, result_kind, winner

Board = tuple[int, ...]
GOLDEN = Path(__file__).resolve().parent / "data" / "movegen.txt"
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]  # the 21 distinct rolls, larger die first


# -- the reference generator ----------------------------------------------------


def ref_die_moves(b: Board, d: int) -> list[tuple[int, int]]:
    """Every legal (from, to) for one die ``d`` on board ``b`` (25 = bar, 0 = off), from the rules."""
    if b[25] > 0:
        sources = [25]  # a checker on the bar must enter before any other moves
    else:
        sources = [p for p in range(1, 25) if b[p] > 0]
    all_home = b[25] == 0 and all(b[p] <= 0 for p in range(7, 25))
    moves = []
    for p in sources:
        t = p - d
        if t >= 1:
            if b[t] >= -1:  # two or more opposing checkers close a point
                moves.append((p, t))
        elif all_home:
            # Exact number, or a higher one from the highest occupied point.
            if t == 0 or all(b[q] <= 0 for q in range(p + 1, 7)):
                moves.append((p, 0))
    return moves


def ref_apply(b: Board, p: int, t: int) -> Board:
    """``b`` after moving one checker p -> t, hitting a lone opposing checker on t."""
    c = list(b)
    c[p] -= 1
    if t >= 1:
        if c[t] == -1:
            c[t] = 0
            c[0] -= 1  # to the opponent's bar
        c[t] += 1
    return tuple(c)


def _play_die(states: set[Board], d: int) -> set[Board]:
    """Every board reachable from ``states`` by playing one more ``d``."""
    return {ref_apply(s, p, t) for s in states for p, t in ref_die_moves(s, d)}


def ref_afterstates(board: Board, dice: tuple[int, int]) -> set[Board]:
    """The distinct afterstates of every legal play, straight from the rules (slow)."""
    board = tuple(board)
    d1, d2 = dice
    if d1 == d2:
        # Doubles: as many of the four as can be played.
        best = {board}
        level = {board}
        for _ in range(4):
            level = _play_die(level, d1)
            if not level:
                break
            best = level
        return best
    hi, lo = max(d1, d2), min(d1, d2)
    first_hi = _play_die({board}, hi)
    first_lo = _play_die({board}, lo)
    both = _play_die(first_hi, lo) | _play_die(first_lo, hi)
    if both:
        return both  # both dice must be used when any play uses both
    if first_hi:
        return first_hi  # else the larger die when it can be played
    if first_lo:
        return first_lo
    return {board}


def ref_steps_ok(board: Board, dice: tuple[int, int], steps: tuple[tuple[int, int], ...]) -> Board | None:
    """Play ``steps`` one die at a time, each legal for an unused die; the final board or None."""
    left = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
    b = tuple(board)
    for p, t in steps:
        die = next((d for d in sorted(set(left)) if (p, t) in ref_die_moves(b, d)), None)
        if die is None:
            return None
        left.remove(die)
        b = ref_apply(b, p, t)
    return b


# -- seeded positions -------------------------------------------------------------


def _place(rng: np.random.Generator, n: int, points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Counts per point for ``n`` checkers dropped on ``points`` with ``weights``."""
    counts = np.zeros(26, np.int64)
    if n:
        picks = rng.choice(points, size=n, p=weights / weights.sum())
        np.add.at(counts, picks, 1)
    return counts


def random_position(rng: np.random.Generator) -> Position:
    """A seeded random legal position: contact, bear-off, bar-heavy and blocked shapes all occur."""
    kind = rng.integers(4)
    pts = np.arange(1, 25)
    while True:
        if kind == 0:  # anywhere
            w_me = np.ones(24)
        elif kind == 1:  # bear-off, with stragglers sometimes
            w_me = np.where(pts <= 6, 10.0, 0.15)
        elif kind == 2:  # back-game shapes: mine far back, theirs near their home
            w_me = np.linspace(0.3, 3.0, 24)
        else:  # lumpy primes: few points, many checkers each
            w_me = np.zeros(24)
            w_me[rng.choice(24, size=rng.integers(2, 8), replace=False)] = 1.0
        n_me = int(rng.integers(1, 16))
        n_opp = int(rng.integers(1, 16))
        me = _place(rng, n_me, pts, w_me)
        bar_me = int(rng.binomial(min(n_me, 3), 0.15))
        taken = 0
        for p in range(24, 0, -1):  # move up to bar_me checkers from the back to the bar
            while me[p] > 0 and taken < bar_me:
                me[p] -= 1
                taken += 1
        me[25] = taken
        free = np.array([p for p in range(1, 25) if me[p] == 0])
        w_opp = np.where(free >= 19, 4.0, 1.0) if kind != 2 else np.where(free >= 19, 0.3, 1.5)
        if kind == 1:
            w_opp = np.where(free >= 19, 10.0, 0.2)
        opp = _place(rng, n_opp, free, w_opp) if len(free) else np.zeros(26, np.int64)
        bar_opp = int(rng.binomial(min(n_opp, 3), 0.1))
        taken = 0
        for p in range(1, 25):  # the opponent's farthest-back checkers are on my low points
            while opp[p] > 0 and taken < bar_opp:
                opp[p] -= 1
                taken += 1
        board = [0] * 26
        for p in range(1, 25):
            board[p] = int(me[p]) - int(opp[p])
        board[25] = int(me[25])
        board[0] = -taken
        if sum(n for n in board[1:] if n > 0) and -sum(n for n in board[:25] if n < 0):
            return Position(board)


def random_positions(seed: int, n: int) -> list[Position]:
    """``n`` seeded random positions, different in shape (see ``random_position``)."""
    rng = np.random.default_rng(seed)
    return [random_position(rng) for _ in range(n)]


def selfplay_positions(seed: int, games: int, plies: int) -> list[Position]:
    """Positions met in ``games`` random-move games over ``plies`` plies (game-over ones dropped)."""
    rng = np.random.default_rng(seed)
    boards = np.tile(np.array(Position.start().board, np.int8), (games, 1))
    found: list[Position] = []
    for _ in range(plies):
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        after, off = generate_afterstates(boards, dice)
        pick = off[:-1] + (rng.random(len(boards)) * np.diff(off)).astype(np.int64)
        boards = -after[pick][:, ::-1]  # the other side is on roll
        alive = (boards[:, 1:] > 0).any(axis=1) & (boards[:, :25] < 0).any(axis=1)
        boards = np.ascontiguousarray(boards[alive])
        found.extend(Position(b.tolist()) for b in boards)
        if not len(boards):
            break
    return found


# -- rule cases -------------------------------------------------------------------
#
# Diagrams show the side on roll as X moving 24 -> 1, the opponent as O; only the
# points that matter are drawn, and "off: n" counts X's borne-off checkers.


def afters(pos: Position, dice: tuple[int, int]) -> set[Position]:
    """The set of afterstates of ``legal_moves`` (each a Position)."""
    moves = legal_moves(pos, dice)
    assert len({m.after for m in moves}) == len(moves), "plays must be distinct by afterstate"
    return {m.after for m in moves}


def texts(pos: Position, dice: tuple[int, int]) -> set[str]:
    """The notation of every legal play."""
    return {m.text for m in legal_moves(pos, dice)}


def test_opening_counts_from_the_rules() -> None:
    # The opening 3-1 has 16 distinct plays (as gnubg counts them).
    start = Position.start()
    assert len(legal_moves(start, (3, 1))) == 16
    assert "8/5 6/5" in texts(start, (3, 1))
    assert "24/18(2) 13/7(2)" in texts(start, (6, 6))
    assert "8/7(2) 6/5(2)" in texts(start, (1, 1))
    assert "24/14" in texts(start, (6, 4)) and "24/18/14" not in texts(start, (6, 4))


def test_only_one_die_playable() -> None:
    # 6-5. X has one checker, on 13 (14 off). O holds X's 7 and 2.
    #   13/7 is closed, 13/8 is open; from 8 the 6 lands on the closed 2, and
    #   the checker is not home so it cannot bear off.  Only 13/8 can be played.
    #     13 12 11 10  9  8  7 ...  2  1
    #      X                 O      O
    #                        O      O
    pos = Position.from_points({13: 1}, {18: 2, 23: 2, 6: 11})
    moves = legal_moves(pos, (6, 5))
    assert [m.text for m in moves] == ["13/8"]
    assert moves[0].steps == ((13, 8),)


def test_larger_die_forced_when_only_one_can_be_played() -> None:
    # 6-5. X has one checker on 13 (14 off); O holds X's 2.  13/7 and 13/8 are
    #   each legal, but 13/7/2 and 13/8/2 land on the closed 2: only one die can
    #   be played, so it must be the 6.
    #     13 ... 8  7 ... 2  1
    #      X               O
    #                      O
    pos = Position.from_points({13: 1}, {23: 2, 6: 13})
    assert texts(pos, (6, 5)) == {"13/7"}
    assert ref_afterstates(pos.board, (6, 5)) == {m.after.board for m in legal_moves(pos, (6, 5))}


def test_smaller_die_when_the_larger_cannot_be_played() -> None:
    # Same board but O also holds X's 7: the 6 cannot be played at all, so the 5 is.
    pos = Position.from_points({13: 1}, {23: 2, 18: 2, 6: 11})
    assert texts(pos, (6, 5)) == {"13/8"}


@pytest.mark.parametrize("blocked, expected", [(18, "24/21"), (15, "24/18"), (12, "24/15")])
def test_doubles_only_part_playable(blocked: int, expected: str) -> None:
    # 3-3. X: one checker on 24 that can move, one on the 1-point that cannot
    #   (not all home, so no bearing off).  O closes X's ``blocked`` point, so
    #   only 1, 2 or 3 of the four threes can be played.
    #     24 21 18 15 12 ... 1
    #      X  .  .  .  .     X      (O's two checkers on the blocked point)
    pos = Position.from_points({24: 1, 1: 1}, {25 - blocked: 2, 6: 13})
    moves = legal_moves(pos, (3, 3))
    assert [m.text for m in moves] == [expected]
    assert len(moves[0].steps) == (24 - blocked) // 3 - 1


def test_doubles_four_then_partial_choices() -> None:
    # 4-4 with X's 8 open but X's 4 closed: checkers on 12 may play 12/8 but never 8/4.
    #     12 ... 8 ... 4
    #      X           O
    #      X           O
    pos = Position.from_points({12: 2, 1: 1}, {21: 2, 6: 13})
    assert texts(pos, (4, 4)) == {"12/8(2)"}


def test_combined_move_blocked_at_both_intermediate_points() -> None:
    # 6-5. O holds X's 18 and 19, so the back checker cannot move at all: 24/13
    #   is illegal though 13 is open.  X must play 8/3 8/2.
    #     24 ... 19 18 ... 13 ... 8
    #      X      O  O             X (14)
    #             O  O
    pos = Position.from_points({24: 1, 8: 14}, {7: 2, 6: 2, 3: 11})
    assert texts(pos, (6, 5)) == {"8/3 8/2"}
    with pytest.raises(ValueError):
        pos.parse_move("24/13", (6, 5))


def test_combined_move_through_the_open_intermediate_point() -> None:
    # 6-5. O holds only X's 18: 24/18 is closed but 24/19/13 goes through the 19.
    pos = Position.from_points({24: 1, 8: 14}, {7: 2, 3: 13})
    plays = texts(pos, (6, 5))
    assert "24/13" in plays
    move = pos.parse_move("24/13", (6, 5))
    assert move.steps == ((24, 19), (19, 13))


def test_bear_off_with_higher_die_from_the_highest_point() -> None:
    # 6-5. X: one checker each on 4 and 2 (13 off).  Both dice are higher than
    #   the highest checker, so each bears off the highest: 4/off 2/off.
    pos = Position.from_points({4: 1, 2: 1}, {6: 15})
    moves = legal_moves(pos, (6, 5))
    assert [m.text for m in moves] == ["4/off 2/off"]
    assert moves[0].after.off == 15


def test_bear_off_never_from_below_a_higher_checker() -> None:
    # 5-4. X: one checker on 6 and one on 2 (13 off).  2/off with a 4 or 5 is
    #   illegal while the 6 is occupied, so the 6 must move first.
    #     6 5 4 3 2 1
    #     X       X
    pos = Position.from_points({6: 1, 2: 1}, {6: 15})
    got = afters(pos, (5, 4))
    assert got == {Position.from_points({1: 1}, {6: 15}), Position.from_points({2: 1}, {6: 15})}
    assert all(a.board[6] == 0 for a in got)


def test_bear_off_after_coming_home_in_the_same_roll() -> None:
    # 6-1. X: one checker on 7, two on 3 (12 off).  7/6 brings everything home,
    #   after which the 6 bears it off: 7/off is legal; 3/off before 7/6 is not.
    pos = Position.from_points({7: 1, 3: 2}, {6: 15})
    got = afters(pos, (6, 1))
    assert Position.from_points({3: 2}, {6: 15}) in got
    for m in legal_moves(pos, (6, 1)):
        first_off = next((i for i, (_, t) in enumerate(m.steps) if t == 0), None)
        if first_off is not None:  # a bear-off only after the 7 has come home
            assert any(p == 7 for p, _ in m.steps[:first_off]), m.text


def test_no_bear_off_with_a_checker_hit_back_on_the_bar() -> None:
    # 6-5. X was bearing off but a checker was hit: 1 on the bar, the rest home.
    #   It must enter first, and then is outside home, so nothing bears off.
    #     bar: X      6 5 4 3 2 1
    #                 X X X X X X   (two each, 2 off)
    pos = Position.from_points({25: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {3: 2, 10: 13})
    moves = legal_moves(pos, (6, 5))
    assert moves and all(m.steps[0][0] == 25 for m in moves)
    assert all(t != 0 for m in moves for _, t in m.steps)
    assert {m.after.board[25] for m in moves} == {0}


def test_no_bear_off_with_a_checker_outside() -> None:
    # 6-6. X: one checker on 9, the rest home.  9/3 brings it home and then
    #   6/off is allowed, but no bear-off before it.
    pos = Position.from_points({9: 1, 6: 4, 5: 4}, {6: 15})
    for m in legal_moves(pos, (6, 6)):
        assert m.steps[0] == (9, 3), m.text
    assert ref_afterstates(pos.board, (6, 6)) == {m.after.board for m in legal_moves(pos, (6, 6))}


# O's home board as seen by X: entering with die d lands on X's point 25 - d.
FIVE_POINT_BOARD = {2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 5}  # only O's ace point (X's 24) open
SIX_POINT_BOARD = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}


@pytest.mark.parametrize("roll", ROLLS)
def test_bar_entry_against_a_five_point_board(roll: tuple[int, int]) -> None:
    # X has one checker on the bar; O holds X's 19..23, only X's 24 is open.
    #     19 20 21 22 23 24   bar
    #      O  O  O  O  O  .   X
    pos = Position.from_points({25: 1, 13: 5, 6: 5, 8: 3, 1: 1}, FIVE_POINT_BOARD)
    moves = legal_moves(pos, roll)
    if 1 not in roll:
        assert len(moves) == 1 and moves[0].is_empty and moves[0].after == pos
    else:
        assert all(m.steps[0] == (25, 24) for m in moves)
        assert all(m.after.bar == 0 for m in moves)


@pytest.mark.parametrize("roll", ROLLS)
def test_closed_board_gives_one_empty_move(roll: tuple[int, int]) -> None:
    # X on the bar against a 6-point board: no roll enters, the play is empty and
    # its afterstate is the unchanged position.
    pos = Position.from_points({25: 1, 13: 5, 6: 5, 8: 4}, SIX_POINT_BOARD)
    moves = legal_moves(pos, roll)
    assert len(moves) == 1
    assert moves[0].is_empty and moves[0].steps == () and moves[0].text == ""
    assert moves[0].after == pos


def test_two_on_the_bar_one_enters() -> None:
    # 6-1. X has two on the bar.  Only the 1 enters (X's 24); the second checker
    #   is still on the bar and cannot enter with the 6, so nothing else moves.
    pos = Position.from_points({25: 2, 13: 5, 6: 5, 8: 3}, FIVE_POINT_BOARD)
    moves = legal_moves(pos, (6, 1))
    assert [m.text for m in moves] == ["bar/24"]
    assert moves[0].after.bar == 1


def test_two_on_the_bar_both_enter_first() -> None:
    # 1-1 against the 5-point board: both enter on 24 before the other two ones move.
    pos = Position.from_points({25: 2, 13: 5, 6: 5, 8: 3}, FIVE_POINT_BOARD)
    for m in legal_moves(pos, (1, 1)):
        assert m.steps[:2] == ((25, 24), (25, 24)) and len(m.steps) == 4


def test_everything_on_the_bar() -> None:
    # All fifteen of X's checkers on the bar, O's home board empty.
    pos = Position.from_points({25: 15}, {13: 15})
    assert texts(pos, (6, 6)) == {"bar/19(4)"}
    assert texts(pos, (4, 2)) == {"bar/23 bar/21"}
    assert all(m.after.bar == 13 for m in legal_moves(pos, (5, 3)))
    closed = Position.from_points({25: 15}, SIX_POINT_BOARD)
    assert [m.is_empty for m in legal_moves(closed, (3, 3))] == [True]


def test_hit_goes_to_the_bar() -> None:
    # 6-2 from the opening, but with an O blot on X's 7: 13/7*/5 hits it on the way.
    #     13 ... 8  7  6  5
    #      X     X  O  X  .
    pos = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 4, 8: 3, 6: 5, 18: 1})
    move = pos.parse_move("13/7*/5", (6, 2))
    assert move.after.opp_bar == 1 and move.after.board[7] == 0 and move.after.board[5] == 1
    for m in legal_moves(pos, (6, 2)):
        assert ("*" in m.text) == (m.after.opp_bar == 1), m.text
        assert m.after.opp_off == 0


def test_bad_dice_are_rejected() -> None:
    for bad in [(0, 3), (7, 1), (1, 2, 3), "9-1", "abc", "3"]:
        with pytest.raises(InvalidDiceError):
            legal_moves(Position.start(), bad)  # type: ignore[arg-type]


def test_moves_have_legal_steps() -> None:
    # Every play's steps are legal one die at a time and lead to its afterstate.
    for pos in random_positions(11, 60) + selfplay_positions(12, 4, 40)[::40]:
        for roll in ROLLS:
            for m in legal_moves(pos, roll):
                assert ref_steps_ok(pos.board, roll, m.steps) == m.after.board, (pos, roll, m)


def test_move_text_reads_back_to_the_same_play() -> None:
    # The notation of every play resolves (pos.parse_move) to that same play.
    for pos in random_positions(13, 30) + selfplay_positions(14, 4, 60)[::20]:
        for roll in ROLLS:
            moves = legal_moves(pos, roll)
            for m in moves[:: max(1, len(moves) // 6)]:
                assert pos.parse_move(m.text, roll) == m, (pos, roll, m.text)


# -- the reference, the batch API and the golden file ------------------------------


def test_reference_agrees_with_legal_moves() -> None:
    positions = random_positions(2024, 320) + selfplay_positions(7, 10, 300)[::40]
    assert len(positions) >= 340
    for pos in positions:
        for roll in ROLLS:
            want = ref_afterstates(pos.board, roll)
            got = legal_moves(pos, roll)
            assert {m.after.board for m in got} == want, (pos, roll)
            assert len(got) == len(want)


def test_batched_and_single_apis_agree() -> None:
    positions = random_positions(99, 200) + selfplay_positions(5, 6, 200)[::20]
    pairs = [(p, r) for p in positions for r in ROLLS]
    boards = np.array([p.board for p, _ in pairs], np.int8)
    dice = np.array([r for _, r in pairs], np.int8)
    after, off = generate_afterstates(boards, dice)
    assert off[0] == 0 and off[-1] == len(after) and (np.diff(off) >= 1).all()
    for i, (pos, roll) in enumerate(pairs):
        batch = {tuple(row) for row in after[off[i] : off[i + 1]].tolist()}
        assert batch == {m.after.board for m in legal_moves(pos, roll)}, (pos, roll)
    # The same boards in another order and batch size give the same sets.
    perm = np.random.default_rng(0).permutation(len(pairs))[:500]
    after2, off2 = generate_afterstates(boards[perm], dice[perm])
    for j, i in enumerate(perm):
        assert sorted(after2[off2[j] : off2[j + 1]].tolist()) == sorted(after[off[i] : off[i + 1]].tolist())


def test_generate_plays_steps_match_afterstates() -> None:
    positions = random_positions(5, 80)
    boards = np.array([p.board for p in positions for _ in ROLLS], np.int8)
    dice = np.array([r for _ in positions for r in ROLLS], np.int8)
    after, steps, nsteps, off = generate_plays(boards, dice)
    for i in range(len(boards)):
        roll = (int(dice[i, 0]), int(dice[i, 1]))
        for r in range(off[i], off[i + 1]):
            s = steps[r].tolist()
            pairs = tuple((s[2 * k], s[2 * k + 1]) for k in range(int(nsteps[r])))
            assert ref_steps_ok(tuple(boards[i].tolist()), roll, pairs) == tuple(after[r].tolist())


def test_batch_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError):
        generate_afterstates(np.zeros((3, 25), np.int8), np.ones((3, 2), np.int8))
    with pytest.raises(ValueError):
        generate_afterstates(np.zeros((3, 26), np.int8), np.ones((2, 2), np.int8))


def golden_positions() -> list[Position]:
    """The ~40 positions of the golden file: classics, rule corner cases, random and self-play ones."""
    fixed = [
        Position.start(),
        Position.from_points({25: 1, 13: 5, 6: 5, 8: 3, 1: 1}, FIVE_POINT_BOARD),
        Position.from_points({25: 2, 13: 5, 6: 5, 8: 3}, FIVE_POINT_BOARD),
        Position.from_points({25: 1, 13: 5, 6: 5, 8: 4}, SIX_POINT_BOARD),
        Position.from_points({25: 15}, {13: 15}),
        Position.from_points({25: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {3: 2, 10: 13}),
        Position.from_points({6: 1, 2: 1}, {6: 15}),
        Position.from_points({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 5, 5: 5, 4: 5}),
        Position.from_points({24: 1, 8: 14}, {7: 2, 6: 2, 3: 11}),
        Position.from_points({13: 1}, {23: 2, 6: 13}),
        Position.from_points({9: 1, 6: 4, 5: 4}, {6: 15}),
        Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 4, 8: 3, 6: 5, 18: 1}),
        Position.from_points({11: 2, 10: 2, 9: 2, 8: 3, 7: 3, 6: 3}, {1: 3, 2: 3, 3: 3, 4: 3, 5: 3}),
    ]
    return fixed + random_positions(424242, 10) + selfplay_positions(4243, 3, 150)[::16][:17]


GOLDEN_ROLLS = [(3, 1), (6, 5), (4, 2), (6, 6), (2, 2), (5, 1)]


def read_golden() -> list[tuple[str, tuple[int, int], int]]:
    """The lines of the golden file as (Position ID, dice, count)."""
    rows = []
    for line in GOLDEN.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pid, dice, count = line.split()
        rows.append((pid, (int(dice[0]), int(dice[1])), int(count)))
    return rows


def test_golden_file_counts() -> None:
    rows = read_golden()
    assert len(rows) >= 200 and len({pid for pid, _, _ in rows}) >= 35
    for pid, roll, count in rows:
        assert len(legal_moves(Position.from_position_id(pid), roll)) == count, (pid, roll)


def test_golden_file_against_the_reference() -> None:
    for pid, roll, count in read_golden():
        assert len(ref_afterstates(Position.from_position_id(pid).board, roll)) == count, (pid, roll)


def write_golden() -> None:
    """Rebuild the golden file from the reference generator, checked against gnubg_nn when present."""
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
    lines = [
        "# Perft-style legal-move counts: Position ID (side on roll as gnubg's player 1), dice, count.",
        "# Counts are distinct afterstates, an empty play counting 1; made by the slow reference",
        "# generator in tests/test_movegen.py (--write-golden) and checked against gnubg_nn.moves.",
    ]
    for pos in golden_positions():
        for roll in GOLDEN_ROLLS:
            count = len(ref_afterstates(pos.board, roll))
            if gnubg_nn is not None:
                theirs = len(gnubg_nn.moves([list(a) for a in pos.boards()], *roll)) or 1
                assert theirs == count, (pos, roll, theirs, count)
            lines.append(f"{pos.position_id()} {roll[0]}{roll[1]} {count}")
    GOLDEN.write_text("\n".join(lines) + "\n")


# -- random games ------------------------------------------------------------------


def test_random_games_keep_the_invariants() -> None:
    # 10,000 seeded games of random legal plays, all played at once in arrays.
    games = 10_000
    rng = np.random.default_rng(20240601)
    boards = np.tile(np.array(Position.start().board, np.int8), (games, 1))
    off = np.zeros((games, 2), np.int64)  # borne off by (side on roll, other side), counted from the steps
    ids = np.arange(games)
    mover_is_first = np.ones(games, bool)
    finished_pos: list[Position] = []
    finished_first_won: list[bool] = []
    passes = 0
    for ply in range(2000):
        if not len(boards):
            break
        n = len(boards)
        dice = rng.integers(1, 7, size=(n, 2)).astype(np.int8)
        if ply == 0:
            dice[:, 1] = (dice[:, 0] + rng.integers(1, 6, size=n)) % 6 + 1  # no double opens the game
        after, steps, nsteps, offs = generate_plays(boards, dice)
        count = np.diff(offs)
        assert (count >= 1).all()
        pick = offs[:-1] + (rng.random(n) * count).astype(np.int64)
        new, st, ns = after[pick].astype(np.int64), steps[pick].astype(np.int64), nsteps[pick].astype(np.int64)
        old = boards.astype(np.int64)
        doubles = dice[:, 0] == dice[:, 1]
        assert (ns <= np.where(doubles, 4, 2)).all()
        # An empty play leaves the board unchanged.
        empty = ns == 0
        passes += int(empty.sum())
        assert (new[empty] == old[empty]).all()
        # Steps: forward, exactly one die each (or less when bearing off).
        src, dst = st[:, 0::2], st[:, 1::2]
        used = np.arange(4)[None, :] < ns[:, None]
        dist = np.where(used, src - dst, 0)
        dmax = dice.max(axis=1).astype(np.int64)[:, None]
        exact = (dist == dice[:, :1]) | (dist == dice[:, 1:])
        assert (~used | exact | ((dst == 0) & (dist < dmax))).all()
        my_pips = lambda b: (np.clip(b[:, 1:], 0, None) * np.arange(1, 26)).sum(axis=1)  # noqa: E731
        assert (my_pips(old) - my_pips(new) == dist.sum(axis=1)).all()
        # Checkers are conserved: the steps' bear-offs account for every checker that left.
        borne = ((dst == 0) & used).sum(axis=1)
        off[:, 0] += borne
        mine_in_play = np.clip(new[:, 1:], 0, None).sum(axis=1)
        theirs_in_play = -np.clip(new[:, :25], None, 0).sum(axis=1)
        assert (mine_in_play + off[:, 0] == 15).all()
        assert (theirs_in_play + off[:, 1] == 15).all()
        # The opponent's checkers only move by being hit: a blot becomes mine, its checker goes to the bar.
        opp_old, opp_new = np.clip(-old[:, 1:25], 0, None), np.clip(-new[:, 1:25], 0, None)
        changed = opp_old != opp_new
        assert ((~changed) | ((opp_old == 1) & (opp_new == 0))).all()
        assert (old[:, 0] - new[:, 0] == changed.sum(axis=1)).all()
        # My bar empties before anything else moves.
        first_src = src[:, 0]
        assert ((old[:, 25] == 0) | empty | (first_src == 25)).all()
        # Turn round; finished games leave the batch.
        done = mine_in_play == 0
        for i in np.flatnonzero(done):
            pos = Position(new[i].tolist())
            finished_pos.append(pos)
            finished_first_won.append(bool(mover_is_first[i]))
        keep = ~done
        boards = np.ascontiguousarray(-new[keep][:, ::-1]).astype(np.int8)
        off = off[keep][:, ::-1].copy()
        ids = ids[keep]
        mover_is_first = ~mover_is_first[keep]
    assert not len(boards), "every game must end"
    assert len(finished_pos) == games
    assert passes > 0, "some random game should meet a position with no legal play"
    kinds = [result_kind(p) for p in finished_pos]
    assert all(winner(p) == 0 for p in finished_pos)
    assert set(kinds) <= {Result.SINGLE, Result.GAMMON, Result.BACKGAMMON}
    assert kinds.count(Result.SINGLE) > kinds.count(Result.GAMMON) > kinds.count(Result.BACKGAMMON) > 0
    assert 0.4 < np.mean(finished_first_won) < 0.6


# -- gnubg_nn ----------------------------------------------------------------------


def _key20_rows(after: np.ndarray) -> np.ndarray:
    """The 20-letter gnubg keys of afterstates (N, 26) seen from the mover, vectorized."""
    b = after.astype(np.int64)
    on_roll = np.concatenate([np.clip(b[:, 1:25], 0, None), b[:, 25:26]], axis=1)
    not_on_roll = np.concatenate([np.clip(-b[:, 24:0:-1], 0, None), -b[:, 0:1]], axis=1)
    counts = np.concatenate([not_on_roll, on_roll], axis=1)  # (N, 50), gnubg's order
    ends = np.cumsum(counts + 1, axis=1) - 1  # the zero after each run of ones
    bits = np.arange(80)[None, :] < ends[:, -1:]
    np.put_along_axis(bits, ends, False, axis=1)
    key = np.packbits(bits.reshape(-1, 10, 8), axis=2, bitorder="little").reshape(-1, 10)
    letters = np.stack([65 + (key >> 4), 65 + (key & 15)], axis=2).reshape(-1, 20).astype(np.uint8)
    return letters.view("S20").ravel()


def test_vectorized_key_matches_formats() -> None:
    positions = random_positions(3, 50) + [Position.start()]
    arr = np.array([p.board for p in positions], np.int8)
    assert [k.decode() for k in _key20_rows(arr)] == [key20_from_boards(p.boards()) for p in positions]


def test_against_gnubg_nn() -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg-nn is not installed (pip install gnubg-nn)")
    positions = random_positions(77, 2000) + selfplay_positions(78, 40, 200)[::8]
    assert len(positions) >= 2400
    boards = np.array([p.board for p in positions for _ in ROLLS], np.int8)
    dice = np.array([r for _ in positions for r in ROLLS], np.int8)
    after, off = generate_afterstates(boards, dice)
    keys = _key20_rows(after)
    mismatches = []
    i = 0
    for pos in positions:
        gb = [list(a) for a in pos.boards()]
        for roll in ROLLS:
            ours = set(keys[off[i] : off[i + 1]].tolist())
            theirs = {k.encode() for k in gnubg_nn.moves(gb, *roll)}
            if not theirs:  # gnubg gives no keys when nothing moves; bgnet one empty play
                theirs = {_key20_rows(np.array([pos.board], np.int8))[0]}
            if ours != theirs:
                mismatches.append((pos.position_id(), roll, len(ours), len(theirs)))
            i += 1
    assert not mismatches, mismatches[:10]


if __name__ == "__main__":
    if "--write-golden" in sys.argv:
        t0 = time.perf_counter()
        write_golden()
        print(f"wrote {GOLDEN} in {time.perf_counter() - t0:.1f} s")
