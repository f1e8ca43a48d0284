"""The cubeful game and match state machine: cube actions, scoring, Crawford, Holland, Jacoby, match end."""

from __future__ import annotations

import pytest

from bgnet import Position, legal_moves
from bgnet.play.game import (Game, GameRuleError, Match, Rules, double, may_double, new_game, play, play_game,
                        play_generated, raccoon, respond, roll, roll_and_play_generated)
from bgnet.core.rules import Result
from bgnet.cube.match import CubeRules, InvalidCubeRulesError

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
    with pytest.raises(InvalidCubeRulesError, match="only to money play"):
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
    with pytest.raises(InvalidCubeRulesError, match="only to match play"):
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

    def offers_raccoon(self, pos: Position, state: object) -> bool:
        return False


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


# -- issue 11: rule gaps ---------------------------------------------------------------

BEAVER_RULES = Rules(beavers=True, raccoons=True)


class Escalator:
    """Always doubles, always beavers, always raccoons; fails if asked to double twice in one turn."""

    def __init__(self) -> None:
        self.asked: set[tuple[int, int]] = set()

    def choose_move(self, pos: Position, dice: tuple[int, int], state: object = None):  # type: ignore[no-untyped-def]
        return legal_moves(pos, dice)[0]

    def offers_double(self, pos: Position, state: object) -> bool:
        return True

    def cube_response(self, pos: Position, state: object) -> str:
        return "beaver"

    def offers_raccoon(self, pos: Position, state: object) -> bool:
        return True


def test_the_doubler_must_roll_after_a_raccoon() -> None:
    g = raccoon(respond(double(at_roll(BEAVER_RULES, Position.start())), "beaver"), True)
    assert (g.phase, g.cube, g.owner, g.turn) == ("roll", 8, 0, 0)
    assert not may_double(g)                                   # the doubler owns the cube but must roll first
    with pytest.raises(GameRuleError):
        double(g)
    g = roll(g, (3, 1))
    assert g.phase == "move" and not g.cube_turned


def test_the_doubler_must_roll_after_a_take_or_a_beaver() -> None:
    for answer in ("take", "beaver"):
        g = respond(double(at_roll(Rules(beavers=True), Position.start())), answer)
        assert g.phase == "roll" and g.turn == 0 and not may_double(g)


def test_play_game_never_asks_the_doubler_again_before_he_rolls() -> None:
    rolls_made = [0]
    asked_at: list[int] = []

    class Recorder(Escalator):
        def offers_double(self, pos: Position, state: object) -> bool:
            # Before the fix a raccoon handed the doubler the cube in the roll phase and he was asked
            # again at once: the cube escalated without end. Fail fast instead of looping.
            assert rolls_made[0] not in asked_at, "asked to double twice without a roll in between"
            asked_at.append(rolls_made[0])
            return True

    rolls = [(6, 5), (4, 2), (5, 3), (6, 4), (2, 1)]

    def dice() -> tuple[int, int]:
        rolls_made[0] += 1
        return rolls[rolls_made[0] % len(rolls)]

    end = play_game(new_game(BEAVER_RULES, 0, (3, 1)), (Recorder(), Recorder()), dice)
    assert end.is_over and end.cube == 8 ** len(asked_at)


def test_play_game_shows_every_step_to_its_observer() -> None:
    from bgnet.play.game import GameEvent

    events: list[GameEvent] = []
    rolls = iter([(6, 5), (4, 2), (5, 3), (6, 4), (2, 1)] * 400)
    end = play_game(new_game(BEAVER_RULES, 0, (3, 1)), (Escalator(), Escalator()), lambda: next(rolls),
                    observer=events.append)
    assert [e.kind for e in events[:6]] == ["play", "double", "beaver", "raccoon", "roll", "play"]
    assert [e.seat for e in events[:6]] == [0, 1, 0, 1, 1, 1]     # seat 1 doubles, 0 beavers, 1 raccoons and rolls
    assert events[3].after.cube == 8 and events[-1].kind == "end" and events[-1].after == end
    assert all(a.after == b.before for a, b in zip(events, events[1:]))  # no step unseen
    assert events[-1].seat == end.result.winner  # type: ignore[union-attr]


def test_a_beaver_the_cube_limit_forbids_is_a_take_in_play_game() -> None:
    from bgnet.play.game import GameEvent, allowed_answer

    capped = Rules(beavers=True, raccoons=True, max_cube=2)
    assert allowed_answer(double(at_roll(capped, Position.start())), "beaver") == "take"
    assert allowed_answer(double(at_roll(BEAVER_RULES, Position.start())), "beaver") == "beaver"
    events: list[GameEvent] = []
    rolls = iter([(6, 5), (4, 2), (5, 3), (6, 4), (2, 1)] * 400)
    play_game(new_game(capped, 0, (3, 1)), (Escalator(), Escalator()), lambda: next(rolls), observer=events.append)
    assert [e.kind for e in events[:3]] == ["play", "double", "take"]


def test_max_cube_bounds_beavers_and_raccoons() -> None:
    from bgnet.play.game import may_beaver, may_raccoon

    doubled = double(at_roll(Rules(beavers=True, raccoons=True, max_cube=4), Position.start(), cube=2, owner=0))
    assert not may_beaver(doubled)                              # 2 -> 8 would pass the limit of 4
    with pytest.raises(GameRuleError, match="limit"):
        respond(doubled, "beaver")
    assert respond(doubled, "take").cube == 4
    beavered = respond(double(at_roll(Rules(beavers=True, raccoons=True, max_cube=4), Position.start())), "beaver")
    assert beavered.cube == 4 and beavered.phase == "roll"      # no raccoon to 8: straight to the roll
    b2 = respond(double(at_roll(BEAVER_RULES, Position.start())), "beaver")
    assert b2.phase == "beavered" and may_raccoon(b2)


def test_an_opening_double_is_refused() -> None:
    with pytest.raises(GameRuleError, match="opening roll cannot be a double"):
        new_game(MONEY, 0, (4, 4))
    with pytest.raises(GameRuleError):
        Match(MONEY).start(1, (6, 6))


def test_play_refuses_an_afterstate_no_legal_play_produces() -> None:
    g = new_game(MONEY, 0, (3, 1))
    legal = legal_moves(g.position, (3, 1))
    other = legal_moves(g.position, (6, 5))[0].after
    assert other is not None and all(m.after != other for m in legal)
    with pytest.raises(GameRuleError, match="no legal play"):
        play(g, other)
    with pytest.raises(GameRuleError):
        play(g, g.position)                                      # passing when a play exists
    assert play(g, legal[0]).phase == "roll"


def test_dead_cube_reasons() -> None:
    from bgnet.play.game import dead_cube

    assert dead_cube(at_roll(MONEY, Position.start())) is None
    assert "dead" in (dead_cube(at_roll(Rules(match_length=5), Position.start(), score=(4, 2), post_crawford=True))
                      or "")
    assert "dead" in (dead_cube(at_roll(Rules(match_length=5), Position.start(), score=(4, 4), post_crawford=True))
                      or "")
    assert "covers" in (dead_cube(at_roll(Rules(match_length=5), Position.start(), score=(3, 0), cube=2, owner=0))
                        or "")


def test_play_generated_gives_the_same_game_as_play() -> None:
    # The game loops' trusted path skips the second move generation; on every candidate of
    # random games (cube turned or not, Jacoby or not, to the last play) it must give
    # exactly the Game that the public, checking ``play`` gives.
    import numpy as np

    from bgnet.core._game_kernels import terminal_codes
    from bgnet.play.game import play_generated
    from bgnet.core.movegen import generate_plays, swap_sides_batch

    rng = np.random.default_rng(11)
    finished = set()
    starts = [Position.start(), GAMMON_NEXT, BACKGAMMON_NEXT, SINGLE_NEXT]
    for n in range(24):
        rules = Rules(jacoby=n % 2 == 1)
        g = new_game(rules, n % 2, (3, 1), position=starts[n % 4] if n < 8 else Position.start())
        while not g.is_over:
            if g.phase == "roll":
                if may_double(g) and rng.random() < 0.05:
                    g = respond(double(g), "take")
                g = roll(g, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
                continue
            assert g.dice is not None
            after, _s, _n, _off = generate_plays(np.array([g.position.board], np.int8), np.array([g.dice], np.int8))
            codes, turned = terminal_codes(after), swap_sides_batch(after)
            nexts = []
            for i in range(len(after)):
                public = play(g, Position(after[i].tolist()))
                assert play_generated(g, Position(turned[i].tolist()), int(codes[i])) == public
                assert play_generated(g, Position(turned[i].tolist()), int(codes[i]),
                                      Position(after[i].tolist())) == public
                nexts.append(public)
            g = nexts[int(rng.integers(len(nexts)))]
        assert g.result is not None
        finished.add((g.result.kind, g.cube > 1, rules.cube_rules.jacoby))
    assert {k for k, _c, _j in finished} == {Result.SINGLE, Result.GAMMON, Result.BACKGAMMON}
    with pytest.raises(GameRuleError):
        play_generated(at_roll(MONEY, Position.start()), Position.start())  # not in the move phase


@pytest.mark.parametrize("position,dice,turn", [(Position.start(), (3, 1), 0), (Position.start(), (6, 6), 1),
                                                (GAMMON_NEXT, (2, 1), 0), (BACKGAMMON_NEXT, (4, 3), 1)])
def test_roll_and_play_generated_is_a_roll_then_a_play(position: Position, dice: tuple[int, int], turn: int) -> None:
    from bgnet.core.rules import result_kind, winner

    before = Game(MONEY, position, turn, "roll", rolls=(3, 2), cube=2, owner=turn, cube_turned=True)
    for move in legal_moves(position, dice):
        assert move.after is not None
        code = 0 if winner(move.after) is None else int(result_kind(move.after))  # the mover's result, if any
        turned = move.after.swap_sides()
        two_steps = play_generated(roll(before, dice), turned, code)
        assert roll_and_play_generated(before, dice, turned, code) == two_steps == play(roll(before, dice), move.after)
    with pytest.raises(GameRuleError):
        roll_and_play_generated(roll(before, dice), dice, position)


# -- the cube rules: one rule set, shared with the MatchState ---------------------------------------------------


def test_rules_hold_one_cube_rule_set_given_by_name_or_whole() -> None:
    by_name = Rules(jacoby=True, beavers=True, max_cube=8)
    whole = Rules(cube_rules=CubeRules(jacoby=True, beavers=True, max_cube=8))
    assert by_name == whole and hash(by_name) == hash(whole) and by_name.cube_rules.max_cube == 8
    assert (by_name.jacoby, by_name.raccoons) == (True, False)          # the flat names still read the rule set
    assert eval(repr(by_name), {"Rules": Rules, "CubeRules": CubeRules}) == by_name
    assert Rules(match_length=5, holland=True).to_dict() == {
        "match_length": 5, "cubeful": True, "jacoby": False, "beavers": False, "raccoons": False, "holland": True,
        "max_cube": 0}


def test_the_games_match_state_holds_the_games_cube_rules() -> None:
    rules = Rules(jacoby=True, beavers=True, raccoons=True, max_cube=16)
    g = at_roll(rules, SINGLE_NEXT, cube=2, owner=1)
    assert g.match_state().rules is rules.cube_rules
    assert g.match_state(1).rules is rules.cube_rules


@pytest.mark.parametrize("flags, words", [
    (dict(raccoons=True), "need beavers"),
    (dict(match_length=5, beavers=True), "only to money play"),
    (dict(holland=True), "only to match play"),
    (dict(max_cube=-2), "non-negative"),
    (dict(jacoby=1), "True or False"),
    (dict(jacobi=True), "no cube rule 'jacobi'"),
])
def test_bad_cube_rules_raise_the_same_error_from_rules_and_match_state(flags: dict, words: str) -> None:
    from bgnet.cube.match import MatchState

    with pytest.raises(InvalidCubeRulesError, match=words) as from_rules:
        Rules(**flags)
    with pytest.raises(InvalidCubeRulesError, match=words) as from_state:
        MatchState(**flags)
    assert str(from_rules.value) == str(from_state.value)


@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("owner", [None, 0, 1])
def test_the_games_scoring_agrees_with_gammons_count(jacoby: bool, owner: int | None) -> None:
    # Seat 0 bears off its last checker for a gammon; the game's count must follow MatchState.gammons_count.
    cube = 1 if owner is None else 2
    g = at_roll(Rules(jacoby=jacoby), GAMMON_NEXT, cube=cube, owner=owner)
    counts = g.match_state().gammons_count
    assert counts == (not jacoby or owner is not None)
    end = finish(g)
    assert end.result is not None
    assert end.result.kind == (Result.GAMMON if counts else Result.SINGLE)
    assert end.result.points == cube * (2 if counts else 1)


def test_beaver_and_raccoon_limits_come_from_the_cube_rules() -> None:
    from bgnet.play.game import may_beaver, may_raccoon

    for max_cube in (0, 2, 4, 8, 16):
        rules = Rules(beavers=True, raccoons=True, max_cube=max_cube)
        for cube, owner in ((1, None), (2, 0)):
            start = at_roll(rules, Position.start(), cube=cube, owner=owner)
            assert may_double(start) == rules.cube_rules.allows_cube(2 * cube)
            if not may_double(start):
                continue
            doubled = double(start)
            assert may_beaver(doubled) == rules.cube_rules.may_beaver(cube)
            assert may_beaver(doubled) == (max_cube == 0 or 4 * cube <= max_cube)
            if may_beaver(doubled):
                beavered = respond(doubled, "beaver")
                allowed = rules.cube_rules.may_raccoon(cube)
                assert allowed == (max_cube == 0 or 8 * cube <= max_cube)
                assert (beavered.phase == "beavered") == allowed == may_raccoon(beavered)
