"""The torch move generator against the numba one: rule cases, the golden file's positions, self-play positions.

``generate_afterstates_torch`` must give, for every game, exactly the afterstates
of ``generate_afterstates`` (the numba kernels that tests/test_movegen.py checks
against a slow reference and GNU Backgammon), each game's rows sorted by their 26
slots. The comparison sorts numba's rows the same way and asks for equal arrays,
so a missing, extra, repeated or misordered afterstate all fail it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet import (BgnetError, InvalidDiceError, InvalidPositionError, Position, generate_afterstates,
                   generate_afterstates_torch)

GOLDEN = Path(__file__).resolve().parent / "data" / "movegen.txt"
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]  # the 21 distinct rolls, larger die first

# O's home board as seen by X: entering with die d lands on X's point 25 - d.
FIVE_POINT_BOARD = {2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 5}  # only O's ace point (X's 24) open
SIX_POINT_BOARD = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def numba_sorted(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``generate_afterstates`` with each game's rows sorted by slot 0, then slot 1, ... (the torch order)."""
    after, offsets = generate_afterstates(boards, dice)
    game = np.repeat(np.arange(len(boards)), np.diff(offsets))
    order = np.lexsort([after[:, c] for c in range(25, -1, -1)] + [game])  # the last key sorts first
    return after[order], offsets


def assert_same_as_numba(boards: np.ndarray, dice: np.ndarray) -> None:
    """The torch generator gives numba's afterstates for every game, sorted, as int8 and int64 on the CPU."""
    boards = np.ascontiguousarray(boards, np.int8)
    dice = np.ascontiguousarray(dice, np.int8)
    after, offsets = generate_afterstates_torch(torch.from_numpy(boards), torch.from_numpy(dice))
    assert after.dtype == torch.int8 and offsets.dtype == torch.int64
    assert after.device.type == "cpu" and offsets.device.type == "cpu"
    want_after, want_offsets = numba_sorted(boards, dice)
    got_after, got_offsets = after.numpy(), offsets.numpy()
    if np.array_equal(got_offsets, want_offsets) and np.array_equal(got_after, want_after):
        return
    for i in range(len(boards)):  # name the first game that differs
        got = got_after[got_offsets[i] : got_offsets[i + 1]].tolist()
        want = want_after[want_offsets[i] : want_offsets[i + 1]].tolist()
        assert got == want, (Position(boards[i].tolist()).position_id(), tuple(dice[i].tolist()), len(got), len(want))
    raise AssertionError("the outputs differ but no game does")


def with_all_rolls(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each board once per roll, and the matching dice."""
    return np.repeat(boards, len(ROLLS), axis=0), np.tile(np.array(ROLLS, np.int8), (len(boards), 1))


def afterstates(pos: Position, roll: tuple[int, int]) -> set[Position]:
    """The torch generator's afterstates of one position as Positions."""
    after, offsets = generate_afterstates_torch(torch.tensor([pos.board], dtype=torch.int8),
                                                torch.tensor([roll], dtype=torch.int8))
    assert offsets.tolist() == [0, len(after)]
    return {Position(row) for row in after.tolist()}


def selfplay_boards(seed: int, games: int, plies: int) -> np.ndarray:
    """Boards met in ``games`` seeded random-move games (numba generator), each seen from its side on roll."""
    rng = np.random.default_rng(seed)
    boards = np.tile(np.array(Position.start().board, np.int8), (games, 1))
    found = []
    for _ in range(plies):
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        after, off = generate_afterstates(boards, dice)
        pick = off[:-1] + (rng.random(len(boards)) * np.diff(off)).astype(np.int64)
        boards = np.ascontiguousarray(-after[pick][:, ::-1])  # the other side is on roll
        boards = boards[(boards[:, 1:] > 0).any(axis=1) & (boards[:, :25] < 0).any(axis=1)]  # games not over
        found.append(boards)
        if not len(boards):
            break
    return np.concatenate(found)


# -- rule cases -------------------------------------------------------------------
#
# The positions of tests/test_movegen.py's rule cases. Diagrams show the side on roll
# as X moving 24 -> 1 and the opponent as O; "off" counts X's borne-off checkers.

RULE_CASES = {
    "opening": Position.start(),
    # Only one die playable: O holds X's 7 and 2; 13/8 is the only play of 6-5.
    "one die only": Position.from_points({13: 1}, {18: 2, 23: 2, 6: 11}),
    # Either die alone but not both: the larger (13/7) must be played.
    "larger die": Position.from_points({13: 1}, {23: 2, 6: 13}),
    # The 6 cannot be played at all, so the 5 is.
    "smaller die": Position.from_points({13: 1}, {23: 2, 18: 2, 6: 11}),
    # 3-3 with X's 18, 15 or 12 closed: one, two or three of the four threes.
    "double blocked at 18": Position.from_points({24: 1, 1: 1}, {7: 2, 6: 13}),
    "double blocked at 15": Position.from_points({24: 1, 1: 1}, {10: 2, 6: 13}),
    "double blocked at 12": Position.from_points({24: 1, 1: 1}, {13: 2, 6: 13}),
    # 4-4: 12/8 is open but 8/4 is closed.
    "double four then partial": Position.from_points({12: 2, 1: 1}, {21: 2, 6: 13}),
    # O holds X's 18 and 19: the back checker cannot move, 24/13 is illegal.
    "both intermediate points blocked": Position.from_points({24: 1, 8: 14}, {7: 2, 6: 2, 3: 11}),
    # O holds only X's 18: 24/19/13 goes through the 19.
    "through the open intermediate point": Position.from_points({24: 1, 8: 14}, {7: 2, 3: 13}),
    # X: 4 and 2 (13 off); 6-5 bears off the highest checker with each die.
    "bear off with a larger die": Position.from_points({4: 1, 2: 1}, {6: 15}),
    # X: 6 and 2; 2/off with a 4 or 5 is illegal while the 6 is occupied.
    "bear off never below a higher checker": Position.from_points({6: 1, 2: 1}, {6: 15}),
    # X: 7 and 3, 3: 7/6 brings everything home, then the 6 bears it off.
    "bear off after coming home": Position.from_points({7: 1, 3: 2}, {6: 15}),
    # X bearing off with one checker hit: it enters first, then nothing bears off.
    "no bear off with a checker on the bar": Position.from_points(
        {25: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {3: 2, 10: 13}),
    # X: one checker on 9, the rest home.
    "no bear off with a checker outside": Position.from_points({9: 1, 6: 4, 5: 4}, {6: 15}),
    # One checker on the bar, only X's 24 open.
    "bar entry against a five-point board": Position.from_points({25: 1, 13: 5, 6: 5, 8: 3, 1: 1}, FIVE_POINT_BOARD),
    # On the bar against a closed board: no roll plays, the afterstate is the position.
    "closed board": Position.from_points({25: 1, 13: 5, 6: 5, 8: 4}, SIX_POINT_BOARD),
    "two on the bar": Position.from_points({25: 2, 13: 5, 6: 5, 8: 3}, FIVE_POINT_BOARD),
    "everything on the bar": Position.from_points({25: 15}, {13: 15}),
    "everything on the bar, closed board": Position.from_points({25: 15}, SIX_POINT_BOARD),
    # An O blot on X's 7: 13/7*/5 hits it on the way.
    "hit": Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 4, 8: 3, 6: 5, 18: 1}),
    "bear off race": Position.from_points({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 5, 5: 5, 4: 5}),
}


@pytest.mark.parametrize("name", RULE_CASES)
def test_rule_case_matches_numba_for_every_roll(name: str) -> None:
    assert_same_as_numba(*with_all_rolls(np.array([RULE_CASES[name].board], np.int8)))


def test_rule_cases_give_the_plays_the_rules_ask_for() -> None:
    case = RULE_CASES
    assert len(afterstates(case["opening"], (3, 1))) == 16
    assert afterstates(case["one die only"], (6, 5)) == {Position.from_points({8: 1}, {18: 2, 23: 2, 6: 11})}
    # "If either number can be played but not both, the larger one must be played."
    assert afterstates(case["larger die"], (6, 5)) == {Position.from_points({7: 1}, {23: 2, 6: 13})}
    assert afterstates(case["smaller die"], (6, 5)) == {Position.from_points({8: 1}, {23: 2, 18: 2, 6: 11})}
    for blocked, opp_point, lands in [(18, 7, 21), (15, 10, 18), (12, 13, 15)]:
        want = Position.from_points({lands: 1, 1: 1}, {opp_point: 2, 6: 13})
        assert afterstates(case[f"double blocked at {blocked}"], (3, 3)) == {want}
    assert afterstates(case["double four then partial"], (4, 4)) == {Position.from_points({8: 2, 1: 1}, {21: 2, 6: 13})}
    assert afterstates(case["both intermediate points blocked"], (6, 5)) == {
        Position.from_points({24: 1, 8: 12, 3: 1, 2: 1}, {7: 2, 6: 2, 3: 11})}
    assert Position.from_points({13: 1, 8: 14}, {7: 2, 3: 13}) in afterstates(
        case["through the open intermediate point"], (6, 5))
    assert afterstates(case["bear off with a larger die"], (6, 5)) == {Position.from_points({}, {6: 15})}
    assert afterstates(case["bear off never below a higher checker"], (5, 4)) == {
        Position.from_points({1: 1}, {6: 15}), Position.from_points({2: 1}, {6: 15})}
    assert Position.from_points({3: 2}, {6: 15}) in afterstates(case["bear off after coming home"], (6, 1))
    assert all(a.bar == 0 and a.off == 2 for a in afterstates(case["no bear off with a checker on the bar"], (6, 5)))
    assert all(a.board[9] == 0 for a in afterstates(case["no bear off with a checker outside"], (6, 6)))
    assert all(a.bar == 0 and a.board[24] == 1 for a in afterstates(case["bar entry against a five-point board"], (4, 1)))
    assert afterstates(case["bar entry against a five-point board"], (6, 5)) == {case["bar entry against a five-point board"]}
    for roll in ROLLS:  # no legal play: the one afterstate is the position itself
        assert afterstates(case["closed board"], roll) == {case["closed board"]}
    assert afterstates(case["two on the bar"], (6, 1)) == {
        Position.from_points({25: 1, 24: 1, 13: 5, 6: 5, 8: 3}, FIVE_POINT_BOARD)}
    assert {a.bar for a in afterstates(case["everything on the bar"], (6, 6))} == {11}
    assert any(a.opp_bar == 1 for a in afterstates(case["hit"], (6, 2)))


def test_boards_with_nothing_or_little_to_move() -> None:
    edge = np.zeros((4, 26), np.int8)  # row 0: nothing on the board at all
    edge[1, 1:7], edge[1, 0] = -2, -3  # only the opponent's checkers: the game is over
    edge[2, 1] = 1  # my last checker, on my ace point
    edge[3, 25], edge[3, 0] = 15, -15  # both sides' checkers all on the bar
    assert_same_as_numba(*with_all_rolls(edge))


# -- the golden file's positions and self-play positions --------------------------


def golden_boards() -> np.ndarray:
    """The distinct positions of tests/data/movegen.txt (the perft-style golden file)."""
    ids = []
    for line in GOLDEN.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line.split()[0] not in ids:
            ids.append(line.split()[0])
    return np.array([Position.from_position_id(pid).board for pid in ids], np.int8)


def test_golden_positions_with_every_roll() -> None:
    boards = golden_boards()
    assert len(boards) >= 35
    assert_same_as_numba(*with_all_rolls(boards))


def test_golden_file_counts() -> None:
    rows = [line.split() for line in GOLDEN.read_text().splitlines() if line.strip() and not line.startswith("#")]
    boards = np.array([Position.from_position_id(pid).board for pid, _, _ in rows], np.int8)
    dice = np.array([(int(d[0]), int(d[1])) for _, d, _ in rows], np.int8)
    _, offsets = generate_afterstates_torch(torch.from_numpy(boards), torch.from_numpy(dice))
    assert np.diff(offsets.numpy()).tolist() == [int(count) for _, _, count in rows]


def test_selfplay_positions() -> None:
    boards = selfplay_boards(seed=20250611, games=40, plies=120)
    assert len(boards) >= 3000
    rng = np.random.default_rng(5)
    assert_same_as_numba(boards, rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8))
    assert_same_as_numba(*with_all_rolls(boards[::25]))


def test_results_do_not_depend_on_the_batch() -> None:
    boards, dice = with_all_rolls(golden_boards())
    after, offsets = generate_afterstates_torch(torch.from_numpy(boards), torch.from_numpy(dice))
    pick = np.random.default_rng(1).permutation(len(boards))[:300]
    sub_after, sub_offsets = generate_afterstates_torch(torch.from_numpy(boards[pick]), torch.from_numpy(dice[pick]))
    for j, i in enumerate(pick.tolist()):
        assert torch.equal(sub_after[sub_offsets[j] : sub_offsets[j + 1]], after[offsets[i] : offsets[i + 1]])


# -- types, devices, bad input ------------------------------------------------------


def test_output_types_follow_the_contract() -> None:
    boards = torch.tensor([Position.start().board] * 3, dtype=torch.int64)  # any integer dtype in, int8 out
    dice = torch.tensor([[3, 1], [6, 6], [1, 3]])
    after, offsets = generate_afterstates_torch(boards, dice)
    assert after.dtype == torch.int8 and after.shape[1] == 26 and offsets.dtype == torch.int64
    assert offsets.tolist() == generate_afterstates(boards.numpy(), dice.numpy())[1].tolist()
    assert offsets[1] == 16 and torch.equal(after[:16], after[offsets[2] :])  # 3-1 and 1-3 are one roll
    assert torch.equal(boards, torch.tensor([Position.start().board] * 3))  # the input is left as it was
    # Numpy arrays and tensors that are not contiguous (every other row) give the same plays.
    again, again_offsets = generate_afterstates_torch(boards.numpy()[::-2], dice.numpy()[::-2])
    assert torch.equal(again, torch.cat([after[:16], after[offsets[2] :]])) and again_offsets.tolist() == [0, 16, 32]
    again, _ = generate_afterstates_torch(boards.to(torch.int8)[::2], dice[::2])
    assert torch.equal(again, torch.cat([after[:16], after[offsets[2] :]]))
    after, offsets = generate_afterstates_torch(torch.zeros((0, 26), dtype=torch.int8), torch.zeros((0, 2)).long())
    assert after.shape == (0, 26) and offsets.tolist() == [0]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu() -> None:
    boards, dice = with_all_rolls(np.concatenate([golden_boards(), selfplay_boards(3, 20, 100)[::4]]))
    want_after, want_offsets = generate_afterstates_torch(torch.from_numpy(boards), torch.from_numpy(dice))
    after, offsets = generate_afterstates_torch(torch.from_numpy(boards).cuda(), torch.from_numpy(dice).cuda())
    assert after.is_cuda and offsets.is_cuda and after.dtype == torch.int8 and offsets.dtype == torch.int64
    assert torch.equal(offsets.cpu(), want_offsets) and torch.equal(after.cpu(), want_after)


@pytest.mark.parametrize("boards, dice, error", [
    (torch.zeros((3, 25), dtype=torch.int8), torch.ones((3, 2), dtype=torch.int8), InvalidPositionError),
    (torch.zeros(26, dtype=torch.int8), torch.ones(2, dtype=torch.int8), InvalidPositionError),
    (torch.zeros((3, 26), dtype=torch.int8), torch.ones((2, 2), dtype=torch.int8), InvalidDiceError),
    (torch.zeros((3, 26), dtype=torch.int8), torch.ones((3, 3), dtype=torch.int8), InvalidDiceError),
    (torch.zeros((1, 26), dtype=torch.int8), torch.tensor([[0, 3]]), InvalidDiceError),
    (torch.zeros((1, 26), dtype=torch.int8), torch.tensor([[3, 7]]), InvalidDiceError),
    (torch.zeros((1, 26)), torch.tensor([[3, 1]]), InvalidPositionError),  # float boards
    (torch.zeros((1, 26), dtype=torch.int8), torch.tensor([[3.0, 1.0]]), InvalidDiceError),
    (torch.tensor([[0] * 6 + [16] + [0] * 19]), torch.tensor([[3, 1]]), InvalidPositionError),  # 16 checkers
    (torch.tensor([[1] + [0] * 25]), torch.tensor([[3, 1]]), InvalidPositionError),  # opponent's bar > 0
    (torch.tensor([[0] * 25 + [-1]]), torch.tensor([[3, 1]]), InvalidPositionError),  # my bar < 0
    # Boards and dice on different devices (a meta tensor holds no data, so this runs without a GPU).
    (torch.zeros((1, 26), dtype=torch.int8), torch.ones((1, 2), dtype=torch.int8, device="meta"), InvalidDiceError),
])
def test_bad_input_is_a_bgnet_error(boards: torch.Tensor, dice: torch.Tensor, error: type[BgnetError]) -> None:
    with pytest.raises(error):
        generate_afterstates_torch(boards, dice)


def test_a_call_waits_for_sizes_only_once_per_row_selection():
    """On a GPU every data-dependent size (``nonzero``, indexing by a mask) makes the host wait for the device. The
    generator selects rows by index lists made once per selection, never by boolean masks, and so waits once per
    level for its legal steps (every row's two dice in one mask), once per merge, once to keep the doubles for the
    third level and twice to pick the plays: 10 at most, whatever the batch (counted here on the CPU through the ops
    it dispatches)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Waits(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.nonzero = self.masks = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if func in (torch.ops.aten.nonzero.default, torch.ops.aten.nonzero_numpy.default):
                self.nonzero += 1
            if func is torch.ops.aten.index.Tensor and any(
                    isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1]):
                self.masks += 1
            return func(*args, **(kwargs or {}))

    boards, dice = with_all_rolls(np.array([Position.start().board, Position.from_position_id("4HPwATDgc/ABMA").board],
                                           np.int8))
    waits = Waits()
    with waits:
        generate_afterstates_torch(torch.from_numpy(boards), torch.from_numpy(dice), check=False)
    assert waits.masks == 0 and 0 < waits.nonzero <= 10
