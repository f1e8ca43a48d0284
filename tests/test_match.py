"""MatchState: validation, derived flags, and reading Match IDs and XGIDs from the shared vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bgnet.cube.match import CubeRules, InvalidCubeRulesError, InvalidMatchStateError, MatchState

VECTORS = Path(__file__).resolve().parent / "data" / "format_vectors.json"


def _vectors(section: str) -> list[dict]:
    return json.loads(VECTORS.read_text())[section]


def test_defaults_are_money_with_centred_cube() -> None:
    s = MatchState()
    assert s.is_money and s.cube_value == 1 and s.cube_owner == "centred"
    assert s.may_double and not s.post_crawford and not s.crawford_done


def test_away_and_post_crawford() -> None:
    s = MatchState(7, 6, 3, 2, "opponent")
    assert (s.away_me, s.away_opp) == (1, 4)
    assert s.post_crawford and s.crawford_done and not s.may_double
    assert not MatchState(7, 6, 3, crawford=True).post_crawford
    assert MatchState(7, 6, 3, crawford=True).crawford_done
    assert not MatchState(7, 4, 3).post_crawford
    assert MatchState(7, 6, 6).post_crawford          # double match point is after the Crawford game
    assert not MatchState(1).post_crawford             # a 1-point match never had a Crawford game


def test_swap_sides_round_trips() -> None:
    s = MatchState(9, 2, 5, 4, "me")
    t = s.swap_sides()
    assert (t.score_me, t.score_opp, t.cube_owner) == (5, 2, "opponent")
    assert t.swap_sides() == s


@pytest.mark.parametrize("kwargs, words", [
    (dict(match_length=7, score_me=7), "already ended"),
    (dict(match_length=5, score_opp=6), "already ended"),
    (dict(cube_value=3, cube_owner="me"), "power of two"),
    (dict(cube_value=0), "power of two"),
    (dict(cube_value=-2, cube_owner="me"), "negative"),
    (dict(score_me=-1), "negative"),
    (dict(match_length=-3), "negative"),
    (dict(cube_value=2, cube_owner="centred"), "owned"),
    (dict(cube_value=1, cube_owner="me"), "centred"),
    (dict(cube_owner="nobody"), "cube_owner"),
    (dict(match_length=5, score_me=4, crawford=True, cube_value=2, cube_owner="me"), "Crawford"),
    (dict(match_length=5, score_me=2, crawford=True), "1-away"),
    (dict(match_length=5, score_me=4, score_opp=4, crawford=True), "1-away"),
    (dict(crawford=True), "match play"),
    (dict(match_length=5, jacoby=True), "money play"),
    (dict(match_length=5, beavers=True), "money play"),
    (dict(raccoons=True), "beavers"),
    (dict(match_length=2.0), "int"),
])
def test_impossible_states_are_rejected(kwargs: dict, words: str) -> None:
    with pytest.raises(InvalidMatchStateError, match=words):
        MatchState(**kwargs)


def test_error_is_a_value_error() -> None:
    assert issubclass(InvalidMatchStateError, ValueError)


def test_away_is_undefined_in_money_play() -> None:
    with pytest.raises(InvalidMatchStateError):
        MatchState().away_me


def test_from_match_id_matches_decoded_vector_fields() -> None:
    pytest.importorskip("bgnet.core.formats")
    for v in _vectors("match_ids"):
        f = v["fields"]
        me = f.get("dice_owner_player_on_roll", f.get("dice_owner"))
        length = f["match_length"]
        scores = (f.get("score_player0", f.get("score0")), f.get("score_player1", f.get("score1")))
        cube = f.get("cube_value", 2 ** f.get("cube_log2", 0))
        owner_raw = f["cube_owner"]
        s = MatchState.from_match_id(v["match_id"])
        assert (s.match_length, s.score_me, s.score_opp, s.cube_value) == (length, scores[me], scores[1 - me], cube), v["match_id"]
        expected_owner = "centred" if owner_raw in ("centered", 3) else ("me" if owner_raw == me else "opponent")
        assert s.cube_owner == expected_owner, v["match_id"]
        assert s.crawford == bool(f.get("crawford_game", f.get("crawford"))), v["match_id"]
        no_jacoby = f.get("bit66_jacoby_not_in_use", f.get("no_jacoby"))
        assert s.jacoby == (length == 0 and not no_jacoby), v["match_id"]
        assert not s.beavers


def test_from_match_id_manual_example_is_seen_by_the_roller() -> None:
    pytest.importorskip("bgnet.core.formats")
    # 9-point match, player 0 has 2 and owns a 2-cube, player 1 (4 points) has rolled.
    s = MatchState.from_match_id("QYkqASAAIAAE")
    assert s == MatchState(9, 4, 2, 2, "opponent")
    assert MatchState.from_match_id("QYkqASAAIAAA") == s          # old form without bit 66
    assert MatchState.from_match_id("MAEAAAAAAAAA", beavers=True).beavers


def test_from_xgid_matches_vectors() -> None:
    pytest.importorskip("bgnet.core.formats")
    for v in _vectors("xgids"):
        fields = v["xgid"].split("=", 1)[-1].split(":")
        cube_log2, cube_pos, turn = int(fields[1]), int(fields[2]), int(fields[3])
        score_bottom, score_top, rules, length = int(fields[5]), int(fields[6]), int(fields[7]), int(fields[8])
        s = MatchState.from_xgid(v["xgid"])
        assert v["player_on_roll"] == ("bottom" if turn == 1 else "top")
        mine, theirs = (score_bottom, score_top) if turn == 1 else (score_top, score_bottom)
        assert (s.match_length, s.score_me, s.score_opp, s.cube_value) == (length, mine, theirs, 2 ** cube_log2)
        assert s.cube_owner == ("centred" if cube_pos == 0 else "me" if cube_pos == turn else "opponent")
        if length:
            assert s.crawford == bool(rules & 1) and not s.jacoby and not s.beavers
        else:
            assert (s.jacoby, s.beavers) == (bool(rules & 1), bool(rules & 2))


def test_from_xgid_top_on_roll_owning_cube() -> None:
    pytest.importorskip("bgnet.core.formats")
    s = MatchState.from_xgid("XGID=-EA--------------------bh-:2:-1:-1:00:0:0:0:0:10")
    assert s == MatchState(0, 0, 0, 4, "me")
    c = MatchState.from_xgid("XGID=aFAC--a-----a-a----cbbbbAA:0:0:1:33:4:1:1:5:8")
    assert c == MatchState(5, 4, 1, crawford=True)


# -- the cube rules: one frozen rule set held by the state ----------------------------------------------------


def test_rules_by_name_build_the_held_rule_set() -> None:
    s = MatchState(jacoby=True, beavers=True)
    assert s.rules == CubeRules(jacoby=True, beavers=True)
    assert s == MatchState(rules=CubeRules(jacoby=True, beavers=True)) != MatchState()
    assert (s.jacoby, s.beavers, s.raccoons, s.holland, s.max_cube) == (True, True, False, False, 0)  # flat reads
    assert MatchState(7, 2, 4).rules == CubeRules() and MatchState(7, 2, 4).score_opp == 4
    with pytest.raises(AttributeError):
        s.no_such_rule  # noqa: B018


def test_repr_evaluates_back_and_equality_agrees_with_hash() -> None:
    import pickle
    from dataclasses import replace

    for s in (MatchState(), MatchState(7, 2, 4, 2, "me"), MatchState(rules=CubeRules(beavers=True, raccoons=True)),
              MatchState(9, 8, 3, crawford=True), MatchState(5, 1, 1, holland=True, max_cube=8)):
        back = eval(repr(s), {"MatchState": MatchState, "CubeRules": CubeRules})
        assert back == s and hash(back) == hash(s)
        assert pickle.loads(pickle.dumps(s)) == s
        assert replace(s, score_me=s.score_me) == s and replace(s, rules=s.rules) == s
    assert replace(MatchState(jacoby=True), beavers=True) == MatchState(jacoby=True, beavers=True)


def test_swap_sides_keeps_the_rules() -> None:
    s = MatchState(0, 3, 1, 2, "me", rules=CubeRules(jacoby=True, beavers=True, raccoons=True, max_cube=64))
    assert s.swap_sides().rules is s.rules and s.swap_sides().cube_owner == "opponent"


def test_to_dict_keeps_the_flat_layout() -> None:
    assert MatchState(jacoby=True).to_dict() == {
        "match_length": 0, "score_me": 0, "score_opp": 0, "cube_value": 1, "cube_owner": "centred",
        "crawford": False, "jacoby": True, "beavers": False, "raccoons": False, "holland": False}
    assert MatchState(max_cube=16).to_dict()["max_cube"] == 16


@pytest.mark.parametrize("rules, words", [
    (dict(raccoons=True), "need beavers"),
    (dict(max_cube=-1), "non-negative"),
    (dict(max_cube=True), "non-negative"),
    (dict(beavers="yes"), "True or False"),
])
def test_impossible_rule_sets_are_rejected_by_the_rule_set_itself(rules: dict, words: str) -> None:
    with pytest.raises(InvalidCubeRulesError, match=words):
        CubeRules(**rules)
    with pytest.raises(InvalidMatchStateError, match=words):  # the state's own error, as before the rule set
        MatchState(**rules)


def test_rules_must_be_a_rule_set() -> None:
    with pytest.raises(InvalidCubeRulesError, match="CubeRules"):
        MatchState(rules=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MatchState(0, 0, 0, 1, "centred", False, True)  # type: ignore[misc]  # the old positional jacoby


@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("owner", ["centred", "me", "opponent"])
def test_gammons_count_unless_jacoby_with_a_centred_cube(jacoby: bool, owner: str) -> None:
    s = MatchState(cube_value=1 if owner == "centred" else 2, cube_owner=owner, jacoby=jacoby)  # type: ignore[arg-type]
    assert s.gammons_count == (not jacoby or owner != "centred")
    assert s.swap_sides().gammons_count == s.gammons_count
    assert MatchState(5, 1, 2, 1 if owner == "centred" else 2, owner).gammons_count  # type: ignore[arg-type]


def test_beaver_and_raccoon_limits() -> None:
    rules = CubeRules(beavers=True, raccoons=True, max_cube=8)
    assert rules.may_beaver(1) and rules.may_beaver(2) and not rules.may_beaver(4)
    assert rules.may_raccoon(1) and not rules.may_raccoon(2)
    assert not CubeRules().may_beaver(1) and not CubeRules(beavers=True).may_raccoon(1)
    assert CubeRules(beavers=True).may_beaver(1 << 20)  # no limit


# -- the money defaults of the commands, and the rules a user chooses ---------------------------------------


def test_the_money_defaults_are_gnubgs_and_a_match_drops_them() -> None:
    from bgnet.cube.match import DEFAULT_MONEY_RULES

    assert DEFAULT_MONEY_RULES == CubeRules(jacoby=True, beavers=True, raccoons=True)
    assert DEFAULT_MONEY_RULES.for_play(True) == DEFAULT_MONEY_RULES
    assert DEFAULT_MONEY_RULES.for_play(False) == CubeRules()
    assert CubeRules(holland=True, max_cube=8).for_play(True) == CubeRules(max_cube=8)
    assert MatchState() == MatchState(rules=CubeRules())  # the library's own default stays "no optional rule"


@pytest.mark.parametrize("choices, money, want", [
    ({}, True, dict(jacoby=True, beavers=True, raccoons=True)),
    ({"jacoby": False, "raccoons": None}, True, dict(beavers=True, raccoons=True)),
    ({"beavers": False}, True, dict(jacoby=True)),                      # no beavers: no raccoons
    ({"max_cube": 16}, True, dict(jacoby=True, beavers=True, raccoons=True, max_cube=16)),
    ({"jacoby": False, "beavers": False}, False, dict()),               # off where they cannot apply: fine
    ({"holland": True}, False, dict(holland=True)),
])
def test_choices_switch_the_rules_by_name(choices: dict, money: bool, want: dict) -> None:
    from bgnet.cube.match import DEFAULT_MONEY_RULES

    assert DEFAULT_MONEY_RULES.choose(choices, money) == CubeRules(**want)


@pytest.mark.parametrize("choices, money, words", [
    ({"beavers": False, "raccoons": True}, True, "raccoons need beavers"),
    ({"jacoby": True}, False, "apply only to money play"),
    ({"holland": True}, True, "only to match play"),
    ({"crawford": True}, True, "there is no cube rule 'crawford'"),
])
def test_choices_that_cannot_apply_are_refused(choices: dict, money: bool, words: str) -> None:
    from bgnet.cube.match import DEFAULT_MONEY_RULES

    with pytest.raises(InvalidCubeRulesError, match=words):
        DEFAULT_MONEY_RULES.choose(choices, money)


def test_the_rules_in_words() -> None:
    assert CubeRules(jacoby=True, beavers=True, raccoons=True).describe(True) == (
        "Jacoby rule on, beavers and raccoons allowed")
    assert CubeRules(beavers=True, max_cube=8).describe(True) == "Jacoby rule off, beavers allowed, no raccoons, " \
                                                                 "cube limit 8"
    assert CubeRules().describe(True) == "Jacoby rule off, no beavers"
    assert CubeRules(holland=True).describe(False) == "Holland rule" and CubeRules().describe(False) == "no Holland rule"


def test_an_id_gives_the_rules_it_records_and_defaults_the_rest() -> None:
    from bgnet.cube.match import DEFAULT_MONEY_RULES

    jacoby_off = MatchState.from_match_id("cAkAAAAAAAAE", defaults=DEFAULT_MONEY_RULES)  # money, bit 66 set
    assert jacoby_off.rules == CubeRules(beavers=True, raccoons=True)
    assert MatchState.from_match_id("cAkAAAAAAAAE").rules == CubeRules()  # no defaults: only what the ID says
    match = MatchState.from_match_id("MAHgAAAAAAAE", defaults=DEFAULT_MONEY_RULES)  # a 7-point match at 0-0
    assert match.match_length == 7 and match.rules == CubeRules()
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10"  # money, Jacoby on, no beavers
    assert MatchState.from_xgid(xgid, defaults=DEFAULT_MONEY_RULES).rules == CubeRules(jacoby=True)
    assert MatchState.from_xgid(xgid.replace(":0:0:1:0:10", ":0:0:3:0:10"),
                                defaults=DEFAULT_MONEY_RULES).rules == DEFAULT_MONEY_RULES


def test_the_cube_limit_ends_the_access_to_the_cube() -> None:
    assert not MatchState(0, 0, 0, 8, "me", rules=CubeRules(max_cube=8)).may_double
    assert MatchState(0, 0, 0, 4, "me", rules=CubeRules(max_cube=8)).may_double
