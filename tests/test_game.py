"""The cubeful game and match state machine: cube actions, scoring, Crawford, Holland, Jacoby, match end."""

from __future__ import annotations

import pytest

from bgnet import Position, legal_moves
from bgnet.game import (Game, GameRuleError, Match, Rules, double, may_double, new_game, play, play_game, raccoon,
                        respond, roll)
from bgnet.rules import Result

MONEY = Rules()

# The side on roll has one checker left on its ace point; the opponent has all fifteen
# on his six point (none borne off): bearing off wins a gammon.
#   me:  1:1            opp: 6:15
GAMMON_NEXT = Position.from_points({1: 1}, {6: 15})
# Same, but the opponent has one checker on my ace point (his 24): a backgammon.
BACKGAMMON_NEXT = Position.from_points({2: 1}, {6: 14, 24: 1})
# The opponent has borne off one checker already: a single game.
SINGLE_NEXT = Position.from_points({1: 1}, {6: 14})


def at_roll(rules: Rules, position: Position, **kw: object) -> Game:
    """Seat 0 on roll, before rolling, in ``position``."""
    return Game(rules, position, 0, "roll", **kw)  # type: ignore[arg-type]


def finish(game: Game, dice: tuple[int, int] = (2, 1)) -> Game:
    """Roll ``dice`` and play the first legal move (bears the last checker off in the positions above)."""
    game = roll(game, dice)
    return play(game, legal_moves(game.position, dice)[0])


def test_take_doubles_the_cube_and_hands_it_over() -> None:
    g = respond(double(at_roll(MONEY, GAMMON_NEXT)), "take")
    assert (g.cube, g.owner, g.phase, g.turn) == (2, 1, "roll", 0)
    end = finish(g)
    assert end.result is not None and end.result.winner == 0
    assert end.result.kind == Result.GAMMON
    assert end.result.points == 4 and end.result.points_for(1) == -4


def test_pass_scores_the_old_cube_for_the_doubler() -> None:
    g = at_roll(MONEY, GAMMON_NEXT, cube=4, owner=0)
    end = respond(double(g), "pass")
    assert end.is_over and end.result is not None
    assert (end.result.winner, end.result.points, end.result.dropped) == (0, 4, True)


def test_only_the_cube_owner_may_redouble() -> None:
    owned_by_opp = at_roll(MONEY, SINGLE_NEXT, cube=2, owner=1)
    assert not may_double(owned_by_opp)
    with pytest.raises(GameRuleError):
        double(owned_by_opp)
    mine = at_roll(MONEY, SINGLE_NEXT, cube=2, owner=0)
    taken = respond(double(mine), "take")
    assert (taken.cube, taken.owner) == (4, 1)
    assert not may_double(taken)  # the doubler lost access to the cube
    assert finish(taken).result.points == 4  # type: ignore[union-attr]


def test_cube_actions_only_in_their_phase() -> None:
    g = at_roll(MONEY, SINGLE_NEXT)
    with pytest.raises(GameRuleError):
        respond(g, "take")
    with pytest.raises(GameRuleError):
        play(g, legal_moves(g.position, (2, 1))[0])
    with pytest.raises(GameRuleError):
        respond(double(g), "drop")


def test_beaver_quadruples_and_the_beaverer_owns_the_cube() -> None:
    rules = Rules(beavers=True)
    g = respond(double(at_roll(rules, BACKGAMMON_NEXT)), "beaver")
    assert (g.cube, g.owner, g.phase) == (4, 1, "roll")
    end = finish(g)
    assert end.result is not None and end.result.kind == Result.BACKGAMMON
    assert end.result.points == 12
    with pytest.raises(GameRuleError):
        respond(double(at_roll(MONEY, SINGLE_NEXT)), "beaver")


def test_raccoon_doubles_again_and_the_doubler_owns_the_cube() -> None:
    rules = Rules(beavers=True, raccoons=True)
    beavered = respond(double(at_roll(rules, SINGLE_NEXT)), "beaver")
    assert beavered.phase == "beavered"
    coon = raccoon(beavered, True)
    assert (coon.cube, coon.owner, coon.phase) == (8, 0, "roll")
    assert finish(coon).result.points == 8  # type: ignore[union-attr]
    declined = raccoon(beavered, False)
    assert (declined.cube, declined.owner) == (4, 1)


def test_jacoby_rule_counts_gammons_single_only_while_the_cube_is_centred() -> None:
    jacoby = Rules(jacoby=True)
    assert finish(at_roll(jacoby, GAMMON_NEXT)).result.points == 1  # type: ignore[union-attr]
    assert finish(at_roll(MONEY, GAMMON_NEXT)).result.points == 2  # type: ignore[union-attr]
    turned = respond(double(at_roll(jacoby, GAMMON_NEXT)), "take")
    assert finish(turned).result.points == 4  # type: ignore[union-attr]
    assert issubclass(GameRuleError, ValueError)
    with pytest.raises(GameRuleError):
        Rules(match_length=5, jacoby=True)


def test_match_reaches_crawford_then_post_crawford_then_ends() -> None:
    rules = Rules(match_length=5)
    m = Match(rules, score=(3, 2))
    assert not m.next_is_crawford
    # Seat 0 wins a single game: 4-2, so the next game is the Crawford game.
    g = m.start(0, (2, 1))
    g = Game(rules, SINGLE_NEXT, 0, "roll", score=g.score)
    m = m.record(finish(g))
    assert m.score == (4, 2) and m.next_is_crawford
    crawford = m.start(1, (3, 1))
    assert crawford.crawford and crawford.match_state().crawford
    after_open = Game(rules, SINGLE_NEXT, 1, "roll", score=m.score, crawford=True)
    assert not may_double(after_open)
    with pytest.raises(GameRuleError):
        double(after_open)
    # The trailer wins the Crawford game: 4-3, post-Crawford, and he may double at once.
    m = m.record(finish(after_open))
    assert m.score == (4, 3) and m.crawford_played and not m.next_is_crawford
    post = m.start(0, (3, 1))
    assert not post.crawford and post.post_crawford
    trailer_on_roll = Game(rules, SINGLE_NEXT, 1, "roll", score=m.score, post_crawford=True)
    state = trailer_on_roll.match_state()
    assert state.post_crawford and state.away_me == 2 and state.away_opp == 1
    assert may_double(trailer_on_roll)
    # The trailer doubles, the leader takes, the trailer wins 2: 4-5, the match is over.
    m = m.record(finish(respond(double(trailer_on_roll), "take")))
    assert m.is_over and m.winner == 1 and m.score == (4, 5)
    with pytest.raises(GameRuleError):
        m.start(0, (3, 1))


def test_no_second_crawford_game() -> None:
    rules = Rules(match_length=3)
    m = Match(rules, score=(2, 1), crawford_played=True)
    assert not m.next_is_crawford
    m = Match(rules, score=(1, 2))
    assert m.next_is_crawford and m.start(0, (2, 1)).crawford


def test_holland_rule_blocks_the_trailer_until_both_have_rolled_twice() -> None:
    rules = Rules(match_length=5, holland=True)
    base = dict(score=(2, 4), post_crawford=True)
    for rolls, allowed in (((0, 1), False), ((1, 1), False), ((1, 2), False), ((2, 1), False), ((2, 2), True)):
        g = Game(rules, SINGLE_NEXT, 0, "roll", rolls=rolls, **base)  # type: ignore[arg-type]
        assert may_double(g) is allowed, rolls
    free = Game(Rules(match_length=5), SINGLE_NEXT, 0, "roll", rolls=(0, 1), **base)  # type: ignore[arg-type]
    assert may_double(free)
    with pytest.raises(GameRuleError):
        Rules(holland=True)  # money play has no Holland rule


def test_rolls_are_counted_for_the_holland_rule() -> None:
    g = new_game(Rules(match_length=5), 1, (3, 1))
    assert g.rolls == (0, 1) and g.phase == "move"
    g = play(g, legal_moves(g.position, (3, 1))[0])
    assert g.turn == 0 and g.phase == "roll"
    assert roll(g, (6, 6)).rolls == (1, 1)


def test_play_swaps_sides_and_keeps_the_board_consistent() -> None:
    g = new_game(MONEY, 0, (3, 1))
    move = legal_moves(g.position, (3, 1))[0]
    after = play(g, move)
    assert after.turn == 1 and after.position == move.after.swap_sides()  # type: ignore[union-attr]
    assert after.dice is None and not after.is_over


def test_cubeless_rules_never_allow_a_double() -> None:
    assert not may_double(at_roll(Rules(cubeful=False), SINGLE_NEXT))
    assert not may_double(at_roll(Rules(max_cube=2), SINGLE_NEXT, cube=2, owner=0))


class Scripted:
    """A player that plays the first legal move and follows fixed cube answers."""

    def __init__(self, doubles: bool, answer: str) -> None:
        self.doubles, self.answer = doubles, answer

    def choose_move(self, pos: Position, dice: tuple[int, int], state: object = None):  # type: ignore[no-untyped-def]
        return legal_moves(pos, dice)[0]

    def offers_double(self, pos: Position, state: object) -> bool:
        return self.doubles

    def cube_response(self, pos: Position, state: object) -> str:
        return self.answer


def test_play_game_drives_callbacks_to_a_pass() -> None:
    g = new_game(MONEY, 1, (3, 1))
    players = (Scripted(True, "take"), Scripted(False, "pass"))
    rolls = iter([(6, 5)] * 1000)
    end = play_game(g, players, lambda: next(rolls))
    # Seat 1 opens, seat 0 doubles on its first turn and seat 1 passes.
    assert end.result is not None and end.result.dropped
    assert (end.result.winner, end.result.points) == (0, 1)


def test_play_game_scores_match_the_cube() -> None:
    g = new_game(MONEY, 0, (3, 1))
    players = (Scripted(True, "take"), Scripted(True, "take"))
    rolls = iter([(6, 5), (4, 2), (6, 6), (1, 1), (5, 3)] * 400)
    end = play_game(g, players, lambda: next(rolls))
    assert end.result is not None
    assert end.result.points == end.cube * int(end.result.kind)
    assert end.cube >= 2 and end.owner is not None
