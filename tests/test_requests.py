"""``bgnet.app.requests`` and ``bgnet.app.answers``: typed requests that check their fields, answered the same way
for the command line and the server; argparse stays in the front ends."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from bgnet import BgnetError, CubeHint, MoveHints, Position, legal_moves
from bgnet.app.answers import answer_state, cube_of, hint_of, moves_of, position_and_state
from bgnet.app.requests import (DEFAULT_PLY, CubeRequest, HintRequest, MovesRequest, PositionRequest, RequestError,
                                RolloutRequest)
from bgnet.cli.main import build_parser
from bgnet.play.search import MAX_PLY

ROOT = Path(__file__).resolve().parents[1] / "bgnet"
START_ID = "4HPwATDgc/ABMA"
MATCH_POS = START_ID + ":MIHlAAAAAAAE"  # 7-point match 0-0, player 0 rolled 3-1
XGID_7PT_64 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:64:0:0:0:7:3"  # 7-point match 0-0, bottom to play 6-4
MIDGAME = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})


def even_odds(boards: np.ndarray) -> np.ndarray:
    """A stand-in net: every board is a 50% game with some gammons (the answers' plumbing, not the numbers)."""
    return np.tile(np.array([0.5, 0.15, 0.01, 0.15, 0.01]), (len(boards), 1))


# -- each request checks its own fields ---------------------------------------------------------------


@pytest.mark.parametrize("build, words", [
    (lambda: HintRequest(position=START_ID, ply=MAX_PLY + 1), f"--ply must be from 0 to {MAX_PLY}, got {MAX_PLY + 1}"),
    (lambda: HintRequest(position=START_ID, ply=-1), "--ply must be from 0"),
    (lambda: HintRequest(position=START_ID, ply=True), "--ply must be from 0"),
    (lambda: HintRequest(position=START_ID, ply=1.0), "--ply must be from 0"),
    (lambda: HintRequest(position=START_ID, top=0), "--top must be at least 1, got 0"),
    (lambda: HintRequest(position=START_ID, top=False), "--top must be at least 1"),
    (lambda: HintRequest(position=START_ID, cubeful=1), "--cubeful must be true or false"),
    (lambda: HintRequest(position=START_ID, dice=31), "the dice must be text"),
    (lambda: CubeRequest(position=START_ID, ply=MAX_PLY + 1), "--ply must be from 0"),
    (lambda: CubeRequest(position=START_ID, rules={"jacoby": "yes"}), "--jacoby must be true or false"),
    (lambda: CubeRequest(position=START_ID, rules={"max_cube": -2}), "--max-cube must be a whole number"),
    (lambda: CubeRequest(position=START_ID, rules={"crawford": True}), "there is no cube rule 'crawford'"),
    (lambda: CubeRequest(position=START_ID, rules=["jacoby"]), "must be given by name"),
    (lambda: CubeRequest(position=START_ID, match="cAkAAAAAAAAA", xgid=XGID_7PT_64), "--match or --xgid, not both"),
    (lambda: PositionRequest(position=None), "the position must be text"),
    (lambda: MovesRequest(position=START_ID, dice=None), "the dice must be text"),
    (lambda: RolloutRequest(position=START_ID, trials=0), "--trials must be at least 1, got 0"),
    (lambda: RolloutRequest(position=START_ID, ply=2), "--ply must be 0 or 1 in rollouts, got 2"),
    (lambda: RolloutRequest(position=START_ID, truncate=-1), "--truncate must be 0 or more plies"),
    (lambda: RolloutRequest(position=START_ID, plays=()), "--plays needs at least one play"),
    (lambda: RolloutRequest(position=START_ID, xgid=XGID_7PT_64), "not --xgid"),
])
def test_a_bad_field_is_one_sentence_when_the_request_is_built(build, words: str) -> None:
    with pytest.raises(RequestError) as caught:
        build()
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(caught.value, BgnetError) and isinstance(caught.value, ValueError)


def test_requests_are_frozen_values_built_by_keyword() -> None:
    request = HintRequest(position=START_ID, dice="31", ply=0)
    assert request == HintRequest(position=START_ID, dice="31", ply=0) and hash(request) == hash(
        HintRequest(position=START_ID, dice="31", ply=0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.ply = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        HintRequest(START_ID, "31")  # type: ignore[misc]  # positional fields could be swapped silently


@pytest.mark.parametrize("command, request_type", [("hint", HintRequest), ("cube", CubeRequest)])
def test_the_command_line_defaults_are_the_requests_defaults(command: str, request_type: type) -> None:
    """The CLI has no defaults of its own for request fields: ``bgnet hint POS`` asks ``HintRequest(position=POS)``
    (the depth left unset is the model's ``@ply``, else the request's default)."""
    from bgnet.app.answers import search_ply

    from bgnet.cli.parser import cube_rule_choices

    namespace = build_parser().parse_args([command, START_ID])
    args = vars(namespace)
    fields = {f.name for f in dataclasses.fields(request_type)}
    assert args["ply"] is None and args["model"] is None
    args["ply"] = search_ply(args["model"], args["ply"])
    args["rules"] = cube_rule_choices(namespace)
    assert request_type(**{k: v for k, v in args.items() if k in fields}) == request_type(position=START_ID)
    assert fields <= set(args) and request_type(position=START_ID).ply == DEFAULT_PLY


# -- the answers ----------------------------------------------------------------------------------------


def test_moves_of_lists_every_legal_play() -> None:
    pos, dice, moves = moves_of(MovesRequest(position=MIDGAME.position_id(), dice="4-2"))
    assert pos == MIDGAME and dice == (4, 2) and moves == legal_moves(MIDGAME, (4, 2))


def test_hint_of_ranks_the_plays_of_the_dice_or_gives_the_cube_hint() -> None:
    pos, hint = hint_of(HintRequest(position=START_ID, dice="31", ply=0, top=3), even_odds)
    assert pos == Position.start() and isinstance(hint, MoveHints) and len(hint.moves) == 3
    _pos, cube = hint_of(HintRequest(position=MIDGAME.position_id(), ply=0), even_odds)
    assert isinstance(cube, CubeHint)
    _pos, from_id = hint_of(HintRequest(position=XGID_7PT_64, ply=0), even_odds)  # the XGID's own dice
    assert isinstance(from_id, MoveHints) and from_id.to_dict()["dice"] == [6, 4]


def test_cube_of_uses_the_match_state_of_the_position() -> None:
    pos, hint = cube_of(CubeRequest(position=MATCH_POS, ply=0), even_odds)
    answer = hint.to_dict()
    assert pos == Position.start() and answer["decision"]["match"]["match_length"] == 7 == answer["match"]["match_length"]
    assert answer["rules"]["text"] == "7-point match, Crawford rule, no Holland rule" and "state" not in answer["decision"]


def test_the_score_and_cube_come_from_one_place() -> None:
    _pos, state, dice = position_and_state(PositionRequest(position=MATCH_POS))
    assert state is not None and state.match_length == 7 and dice == (3, 1)
    with pytest.raises(RequestError, match="already gives the score and cube"):
        position_and_state(PositionRequest(position=MATCH_POS, match="cAkAAAAAAAAA"))
    with pytest.raises(RequestError, match="game in this position is over"):
        position_and_state(PositionRequest(position=Position.from_points({6: 3}, {}).position_id()))


def test_money_rules_default_to_gnubgs_and_refuse_a_match_score() -> None:
    from bgnet.cube.match import DEFAULT_MONEY_RULES, CubeRules, InvalidCubeRulesError

    assert answer_state(CubeRequest(position=START_ID), None).rules == DEFAULT_MONEY_RULES == CubeRules(
        jacoby=True, beavers=True, raccoons=True)
    chosen = answer_state(CubeRequest(position=START_ID, rules={"jacoby": False, "beavers": False}), None).rules
    assert chosen == CubeRules()  # no beavers: no raccoons either
    assert answer_state(CubeRequest(position=MATCH_POS, rules={"jacoby": False}),
                        position_and_state(PositionRequest(position=MATCH_POS))[1]).rules == CubeRules()
    request = CubeRequest(position=MATCH_POS, rules={"beavers": True})
    with pytest.raises(InvalidCubeRulesError, match="only to money play"):
        answer_state(request, position_and_state(request)[1])


@pytest.mark.parametrize("position, choices, want", [
    # a Match ID records the Jacoby rule (bit 66: cAkAAAAAAAAA says on, cAkAAAAAAAAE off) and nothing else
    (START_ID + ":cAkAAAAAAAAA", {}, dict(jacoby=True, beavers=True, raccoons=True)),
    (START_ID + ":cAkAAAAAAAAE", {}, dict(jacoby=False, beavers=True, raccoons=True)),
    (START_ID + ":cAkAAAAAAAAE", {"jacoby": True}, dict(jacoby=True, beavers=True, raccoons=True)),  # a flag wins
    # an XGID records the Jacoby rule (1) and beavers (2): raccoons go with beavers
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10", {}, dict(jacoby=True, beavers=True, raccoons=True)),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", {}, dict(jacoby=False, beavers=False, raccoons=False)),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10", {"beavers": True}, dict(jacoby=True, beavers=True)),
    (START_ID, {"raccoons": False, "max_cube": 8}, dict(jacoby=True, beavers=True, max_cube=8)),
])
def test_a_flag_wins_over_the_id_which_wins_over_the_money_defaults(position: str, choices: dict[str, object],
                                                                   want: dict[str, object]) -> None:
    from bgnet.cube.match import CubeRules

    request = CubeRequest(position=position, rules=choices)
    assert answer_state(request, position_and_state(request)[1]).rules == CubeRules(**want)


# -- argparse stays in the front ends ------------------------------------------------------------------


def _imports_argparse(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def test_argparse_is_imported_only_by_the_command_line_front_ends() -> None:
    """Everything below ``bgnet/cli/`` and ``bgnet/serve/cli.py`` takes typed values, never an argparse Namespace."""
    front_ends = {ROOT / "serve" / "cli.py"}
    offenders = sorted(str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*.py")
                       if "cli" != p.relative_to(ROOT).parts[0] and p not in front_ends and _imports_argparse(p))
    assert offenders == []


# -- what a user gives twice, or gives wrong --------------------------------------------------------------


def test_dice_given_again_must_be_the_roll_the_id_holds() -> None:
    from bgnet.app.answers import given_dice

    assert given_dice("46", (6, 4)) == given_dice("6-4", (6, 4)) == given_dice(None, (4, 6)) == (6, 4)
    assert given_dice("13", None) == (3, 1) and given_dice(None, None) is None
    with pytest.raises(RequestError, match="the dice 2-1 contradict the dice 6-4 the ID already holds"):
        hint_of(HintRequest(position=XGID_7PT_64, dice="21", ply=0), even_odds)
    with pytest.raises(RequestError, match="contradict the dice 3-1"):
        moves_of(MovesRequest(position=MATCH_POS, dice="55"))


def test_moves_refuse_a_finished_game_as_hints_do() -> None:
    over = Position.from_points({6: 3}, {}).position_id()
    with pytest.raises(RequestError) as moves:
        moves_of(MovesRequest(position=over, dice="31"))
    with pytest.raises(RequestError) as hint:
        hint_of(HintRequest(position=over, dice="31", ply=0), even_odds)
    assert str(moves.value) == str(hint.value) == ("the game in this position is over: one side has borne off all 15 "
                                                   "checkers")


@pytest.mark.parametrize("seed", [-1, -7, 1.5, True])
def test_a_seed_is_a_whole_number_of_at_least_0(seed: object) -> None:
    from bgnet.app.requests import check_seed

    with pytest.raises(RequestError, match="--seed must be a whole number of at least 0"):
        RolloutRequest(position=START_ID, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(RequestError):
        check_seed(seed)
    assert check_seed(0) == 0


def test_the_depth_comes_from_ply_or_the_models_at_ply_but_not_both() -> None:
    from bgnet.app.answers import load_probs_fn, search_ply

    assert search_ply(None, None) == DEFAULT_PLY and search_ply("default@1", None) == 1
    assert search_ply("default", 0) == 0 and search_ply("default@3", 3) == 3
    with pytest.raises(RequestError, match="--ply 2 contradicts the depth of --model 'default@1'"):
        search_ply("default@1", 2)
    with pytest.raises(RequestError, match="gives no probabilities"):
        load_probs_fn("pubeval")
    boards = np.array([Position.start().board], np.int8)
    assert np.array_equal(load_probs_fn("default")(boards), load_probs_fn(None)(boards))
