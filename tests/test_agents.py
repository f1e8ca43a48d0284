"""Agents behind one protocol: specs, legal plays, n-ply search wiring and cube actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bgnet import Position, Probs, legal_moves
from bgnet.play.agents import (DEFAULT_CHECKPOINT, AgentSpecError, NeuralAgent, NoProbabilitiesError, PubevalAgent,
                          RandomAgent, load_agent)
from bgnet.cube.decision import cube_decision
from bgnet.cube.match import MatchState
from bgnet.play.search import best_move, evaluate_position

START = Position.start()
# X far ahead in a race with O still on the bar: a position to double and pass.
CRUSHING = Position.from_points({1: 3, 2: 3, 3: 3}, {25: 1, 13: 5, 14: 5, 15: 4})


@pytest.fixture(scope="module")
def neural() -> NeuralAgent:
    agent = load_agent(str(DEFAULT_CHECKPOINT), ply=1)
    assert isinstance(agent, NeuralAgent)
    return agent


def test_specs() -> None:
    assert isinstance(load_agent("random"), RandomAgent)
    assert isinstance(load_agent("PubEval"), PubevalAgent)
    a = load_agent(f"{DEFAULT_CHECKPOINT}@2")
    assert isinstance(a, NeuralAgent) and a.ply == 2 and a.name.endswith("@2")
    assert load_agent("default").ply == 0  # type: ignore[attr-defined]
    assert load_agent(f"{DEFAULT_CHECKPOINT}@2", ply=1).ply == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("spec", ["nosuchbot", "checkpoints/missing.pt@1", f"{DEFAULT_CHECKPOINT}@x",
                                  f"{DEFAULT_CHECKPOINT}@9", "random@-1"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(AgentSpecError):
        load_agent(spec)


def test_a_new_kind_of_player_is_one_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """``register_agent_kind`` adds a kind that ``load_agent`` tries before the checkpoint path, with the spec's
    ply and seed; a name no kind takes lists every kind in one sentence."""
    from bgnet.play import agents

    monkeypatch.setattr(agents, "AGENT_KINDS", list(agents.AGENT_KINDS))
    made: list[agents.AgentSpec] = []
    agents.register_agent_kind(agents.AgentKind("echo", lambda name: name == "echo",
                                                lambda spec: made.append(spec) or RandomAgent(spec.seed)))
    agent = load_agent("echo@2", seed=7)
    assert isinstance(agent, RandomAgent) and agent.seed == 7
    assert made == [agents.AgentSpec(text="echo@2", name="echo", ply=2, seed=7)]
    assert agents.AGENT_KINDS[-1].label == "an existing checkpoint file"
    listed = (
        "is not random, pubeval, gnubg, noprune:SPEC, bf16:SPEC, default, netset:PATH, echo or an existing checkpoint file")
    with pytest.raises(AgentSpecError, match=listed):
        load_agent("nosuchbot")


def test_a_netset_spec_is_the_checkpoints_nets_by_kind() -> None:
    """``netset:PATH[@ply]`` plays the torch NetSet of a checkpoint (the released net: one contact net), with the
    bear-off database unless ``netset-no-bearoff:``; at 0-ply it picks the plays ``NeuralAgent`` picks."""
    from bgnet.play.netset_agent import NetSetAgent

    agent = load_agent(f"netset:{DEFAULT_CHECKPOINT}")
    bare = load_agent(f"netset-no-bearoff:{DEFAULT_CHECKPOINT}@1")
    assert isinstance(agent, NetSetAgent) and agent.netset.bearoff and agent.ply == 0
    assert isinstance(bare, NetSetAgent) and not bare.netset.bearoff and bare.ply == 1
    assert set(agent.netset.nets) == {"contact"}
    neural = load_agent("default")
    for dice in ((3, 1), (6, 6), (5, 2)):
        assert agent.choose_move(START, dice) == neural.choose_move(START, dice)
    assert np.allclose(list(agent.evaluate(START)), list(neural.evaluate(START)), atol=1e-5)


def test_corrupt_checkpoint_is_a_value_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.pt"
    bad.write_bytes(b"junk")
    with pytest.raises(ValueError, match="checkpoint"):
        load_agent(str(bad))


@pytest.mark.parametrize("spec", ["random", "pubeval", "default"])
def test_every_agent_plays_legal_moves(spec: str) -> None:
    agent = load_agent(spec)
    for dice in ((3, 1), (6, 6), (5, 2)):
        move = agent.choose_move(START, dice)
        assert move in legal_moves(START, dice)
    state = MatchState(5, 1, 2)
    assert agent.choose_move(START, (4, 2), state) in legal_moves(START, (4, 2))


def test_neural_agent_searches_at_its_ply(neural: NeuralAgent) -> None:
    fn = neural.probs_fn
    for dice in ((6, 4), (2, 1)):
        assert neural.choose_move(START, dice) == best_move(fn, START, dice, 1)
    got = neural.evaluate(START)
    want = evaluate_position(fn, START, 1)
    assert np.allclose(list(got), list(want))
    assert got != evaluate_position(fn, START, 0)


def test_neural_cube_actions_follow_the_cube_module(neural: NeuralAgent) -> None:
    money = MatchState()
    for pos in (START, CRUSHING):
        decision = cube_decision(neural.evaluate(pos, money), money, pos)
        assert neural.offers_double(pos, money) == decision.action.startswith("double")
        assert neural.cube_response(pos, money) == decision.response
    # No cube access: never a double, whatever the chances.
    assert not neural.offers_double(CRUSHING, MatchState(cube_value=2, cube_owner="opponent"))
    assert not neural.offers_double(CRUSHING, MatchState(5, 4, 2, crawford=True))


def test_crushing_position_is_passed(neural: NeuralAgent) -> None:
    # Every roll brings X closer to bearing off while O still has to enter: whatever the net says,
    # the exact endings in a 1-ply search make X a big favourite.
    p = neural.evaluate(CRUSHING)
    assert p.win > 0.8
    assert neural.cube_response(CRUSHING, MatchState()) == cube_decision(p, MatchState(), CRUSHING).response


def test_simple_agents_cube_behaviour() -> None:
    for agent in (RandomAgent(), PubevalAgent()):
        assert agent.offers_double(START, MatchState()) is False
        assert agent.cube_response(START, MatchState()) == "take"
    assert RandomAgent().evaluate(START) == Probs(0.5, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(NoProbabilitiesError):
        PubevalAgent().evaluate(START)
    with pytest.raises(NoProbabilitiesError):
        PubevalAgent().hint(START, "31")


def test_gnubg_needs_its_package() -> None:
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        with pytest.raises(AgentSpecError, match="gnubg-nn"):
            load_agent("gnubg")
        return
    agent = load_agent("gnubg@0")
    assert agent.choose_move(START, (3, 1)) in legal_moves(START, (3, 1))


def test_gnubg_filtered_plays_gnubgs_own_search_in_duels() -> None:
    """``gnubg-filtered@ply`` has no batch scorer, so duels ask its ``choose_move`` (gnubg's filtered search) on the
    game loop; at 0 ply it picks the plays ``gnubg@0``'s scorer picks, and a paired duel between them is even."""
    pytest.importorskip("gnubg_nn")
    from bgnet.play.agents import GnubgAgent
    from bgnet.sim.duel import play_cubeless, summarise_outcomes
    from bgnet.sim.runner import DuelSpec, engine, run_duel

    deep = load_agent("gnubg-filtered@1")
    assert isinstance(deep, GnubgAgent) and deep.filtered and deep.ply == 1 and deep.name == "gnubg-filtered@1"
    assert deep.batch_scorer() is None and load_agent("gnubg@1").batch_scorer() is not None
    assert engine(DuelSpec("gnubg-filtered@0", "gnubg@0", 1)) == "game loop"
    assert engine(DuelSpec("gnubg@0", "gnubg@0", 1)) == "vectorised"
    assert deep.choose_move(START, (6, 5)) in legal_moves(START, (6, 5))

    filtered = run_duel(DuelSpec("gnubg-filtered@0", "gnubg@0", 6, seed=3), progress=False)
    scorer = load_agent("gnubg@0").batch_scorer()
    same = summarise_outcomes(play_cubeless(scorer, scorer, range(6), 3))
    assert filtered.games == 12 and filtered.points == same.points and filtered.ppg == 0.0


def test_the_one_line_user_api() -> None:
    """``bgnet.load_agent(...)``, ``agent.hint(pos, "31")`` with Move objects, ``agent.cube(pos, state)``."""
    import json
    import typing

    import bgnet
    from bgnet.core.protocols import CubeAction

    agent = bgnet.load_agent("default", ply=1)
    hints = agent.hint(START, "31")
    assert isinstance(hints, bgnet.MoveHints) and isinstance(hints.best.move, bgnet.Move)
    assert hints.best.move in legal_moves(START, (3, 1)) and hints.best.move.after is not None
    assert START.play(hints.best.move) == hints.best.move.after.swap_sides()
    data = json.loads(json.dumps(hints.to_dict()))
    assert data["moves"][0]["move"] == hints.best.move.text == str(hints.best.move)
    assert {h.move for h in hints.moves} == set(legal_moves(START, (3, 1)))  # every play, ranked once
    cube = agent.cube(CRUSHING, bgnet.MatchState())
    assert isinstance(cube, bgnet.CubeHint) and cube.ply == 1
    assert cube.decision.action in typing.get_args(CubeAction)
    assert agent.evaluate(START) == hints_free_eval(agent)


def hints_free_eval(agent: object) -> Probs:
    """The same 1-ply evaluation through the search functions, without the agent."""
    return evaluate_position(agent.evaluator, START, 1)  # type: ignore[attr-defined]


def test_noprune_names_the_same_net_searching_every_reply() -> None:
    """``noprune:SPEC`` is SPEC's net at SPEC's ply without its pruning net (``bgnet.nets.pruning``)."""
    from bgnet.nets.pruning import PrunedEvaluator

    full = load_agent("noprune:default@2")
    assert full.ply == 2 and not isinstance(full.probs_fn, PrunedEvaluator)  # type: ignore[attr-defined]
    assert full.name.startswith("noprune:")
    assert isinstance(load_agent("default@2").probs_fn, PrunedEvaluator)  # type: ignore[attr-defined]
    with pytest.raises(AgentSpecError):
        load_agent("noprune:nosuchbot")
