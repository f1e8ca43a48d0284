"""The bfloat16 forward pass: close to the float32 kernel, each board's chances its own whatever its batch."""

import pickle

import numpy as np
import pytest
import torch

from bgnet.core.position import Position
from bgnet.core.probs import equities
from bgnet.features.kinds import KINDS, position_kinds
from bgnet.features.registry import num_features
from bgnet.nets.bf16net import BLOCK, Bf16Net, Bf16NetError, cpu_model, precision_note, with_precision
from bgnet.nets.bearoff import DatabaseEvaluator
from bgnet.nets.fastnet import NumpyNet, NumpyNetSet, load_evaluator
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.play.agents import DEFAULT_CHECKPOINT, AgentSpecError, NeuralAgent, load_agent


@pytest.fixture(scope="module", autouse=True)
def _torch_threads(one_torch_thread):
    """A bfloat16 net pins torch to one thread; the module's fixture gives the suite's setting back after it."""


@pytest.fixture(scope="module")
def release() -> NumpyNet:
    net = load_evaluator(DEFAULT_CHECKPOINT)
    assert isinstance(net, NumpyNet)
    return net


def test_chances_are_close_to_the_float32_kernel(release, game_boards):
    boards = game_boards(600, seed=1)
    exact = release.probs_of_boards(boards)
    probs = Bf16Net(release).probs_of_boards(boards)
    assert probs.shape == (600, 5) and probs.dtype == np.float32
    error = np.abs(equities(probs) - equities(exact))
    assert error.mean() < 0.002 and error.max() < 0.02  # measured: about 0.0008 and 0.008
    assert error.max() > 0  # bfloat16 really is in use
    # the chances keep their order: gammons within wins, backgammons within gammons
    assert np.all(probs[:, 1] <= probs[:, 0]) and np.all(probs[:, 2] <= probs[:, 1])
    assert np.all(probs[:, 4] <= probs[:, 3]) and np.all(probs[:, 3] <= 1 - probs[:, 0])


def test_a_boards_chances_do_not_depend_on_its_batch(release, game_boards):
    net = Bf16Net(release)
    boards = game_boards(2 * BLOCK + 37, seed=2)
    whole = net.probs_of_boards(boards)
    rng = np.random.default_rng(3)
    for _ in range(3):  # a row's place in its block changes; some BLAS products' bits depend on it (not ours)
        order = rng.permutation(len(boards))
        assert np.array_equal(net.probs_of_boards(boards[order]), whole[order])
    for size in (1, 7, BLOCK - 1, BLOCK, BLOCK + 1):
        start = int(rng.integers(0, len(boards) - size))
        assert np.array_equal(net.probs_of_boards(boards[start:start + size]), whole[start:start + size])


def test_torch_threads_do_not_change_the_chances(release, game_boards):
    boards = game_boards(300, seed=4)
    one = Bf16Net(release).probs_of_boards(boards)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert np.array_equal(Bf16Net(release).probs_of_boards(boards), one)
        assert torch.get_num_threads() == 1  # pinned: oneDNN's bits depend on its threads
    finally:
        torch.set_num_threads(before)


def test_without_the_fused_oneDNN_layer_the_chances_are_as_close_and_as_reproducible(release, game_boards):
    net = Bf16Net(release)
    net._fused = False  # as on a CPU where oneDNN refuses it (AVX2 only)
    boards = game_boards(300, seed=7)
    whole = net.probs_of_boards(boards)
    assert np.abs(equities(whole) - equities(release.probs_of_boards(boards))).max() < 0.02
    assert np.array_equal(net.probs_of_boards(boards[:5]), whole[:5])
    assert np.array_equal(net.probs_of_boards(boards[::-1])[::-1], whole)


def test_the_net_pickles_for_workers(release, game_boards):
    net = Bf16Net(release)
    boards = game_boards(40, seed=6)
    assert np.array_equal(pickle.loads(pickle.dumps(net)).probs_of_boards(boards), net.probs_of_boards(boards))


@pytest.mark.parametrize("activation", ["tanh", "sigmoid"])
def test_other_activations_are_valued_too(activation, game_boards):
    rng = np.random.default_rng(8)
    width = num_features(2)
    layers = [(rng.normal(0, 0.1, (32, width)).astype(np.float32), rng.normal(0, 0.1, 32).astype(np.float32)),
              (rng.normal(0, 0.3, (5, 32)).astype(np.float32), rng.normal(0, 0.1, 5).astype(np.float32))]
    net = NumpyNet(layers, activation, 2)
    boards = game_boards(300, seed=9)
    probs = Bf16Net(net).probs_of_boards(boards)
    assert 0 < np.abs(probs - net.probs_of_boards(boards)).max() < 0.02


def test_no_boards_gives_no_chances(release):
    assert Bf16Net(release).probs_of_boards(np.zeros((0, 26), np.int8)).shape == (0, 5)


def test_nets_by_kind_each_value_their_own_boards(release, game_boards):
    width = release.layers[0][0].shape[0]  # NumpyNet takes torch's (outputs, inputs) matrices
    race_net = NumpyNet([(np.full((8, width), 0.01, np.float32), np.zeros(8, np.float32)),
                         (np.full((5, 8), -0.5, np.float32), np.zeros(5, np.float32))], "relu", release.feature_version)
    bf16 = with_precision(NumpyNetSet({"contact": release, "race": race_net}), "bfloat16")
    assert isinstance(bf16, NumpyNetSet) and all(isinstance(net, Bf16Net) for net in bf16.nets.values())
    assert bf16.by_code[KINDS.index("crashed")] is bf16.nets["contact"]  # a kind without a net: the contact net
    boards = game_boards(1500, seed=5)
    race = position_kinds(boards) == KINDS.index("race")
    assert 0 < race.sum() < len(boards)
    probs = bf16.probs_of_boards(boards)
    assert np.array_equal(probs[race], Bf16Net(race_net).probs_of_boards(boards[race]))
    assert np.array_equal(probs[~race], Bf16Net(release).probs_of_boards(boards[~race]))


def test_float32_is_the_net_itself_and_unknown_precisions_are_refused(release):
    assert with_precision(release, "float32") is release
    with pytest.raises(Bf16NetError, match="precision 'float16'"):
        with_precision(release, "float16")


def test_bf16_players_value_with_the_bf16_net():
    agent = load_agent("bf16:default")
    assert isinstance(agent, NeuralAgent) and isinstance(agent.net, Bf16Net)
    assert agent.name.startswith("bf16:") and agent.precision == "bfloat16"
    # the student (a rollout's luck) in bfloat16 too; the pruning net, which picks the plays valued, in float32
    evaluator = agent.evaluator
    assert isinstance(evaluator, PrunedEvaluator) and isinstance(evaluator.pruning, NumpyNet)
    assert isinstance(evaluator.student, DatabaseEvaluator) and isinstance(evaluator.student.inner, Bf16Net)
    assert load_agent(agent.name).name == agent.name  # the name loads the same player back (duel workers do)
    unpruned = load_agent("noprune:bf16:default@1")
    assert isinstance(unpruned, NeuralAgent) and isinstance(unpruned.net, Bf16Net) and unpruned.ply == 1
    assert load_agent("bf16:noprune:default@1").name == unpruned.name
    with pytest.raises(AgentSpecError, match="applies to a bgnet net"):
        load_agent("bf16:pubeval")


def test_a_bf16_player_picks_the_float32_players_play_in_a_clear_position():
    pos = Position.start()
    assert load_agent("bf16:default").hint(pos, "31").best.move == load_agent("default").hint(pos, "31").best.move


def test_weights_packed_once_give_the_chances_of_the_plain_weights(release, game_boards):
    net = Bf16Net(release)
    boards = game_boards(300, seed=10)
    packed = net.probs_of_boards(boards)
    net._packed = net._hidden  # reordered by oneDNN on every product, as before packing
    assert np.abs(net.probs_of_boards(boards) - packed).max() < 1e-6


def test_a_net_without_hidden_layers_takes_its_inputs_unpadded(game_boards):
    rng = np.random.default_rng(11)
    width = num_features(2)
    net = NumpyNet([(rng.normal(0, 0.1, (5, width)).astype(np.float32), np.zeros(5, np.float32))], "relu", 2)
    boards = game_boards(20, seed=12)
    assert np.abs(Bf16Net(net).probs_of_boards(boards) - net.probs_of_boards(boards)).max() < 0.005  # inputs in bfloat16


def test_packed_weights_the_fused_layer_refuses_are_left_plain(release):
    import types

    import torch

    from bgnet.nets.bf16net import _packed_layers

    hidden = Bf16Net(release)._hidden
    wrong = types.SimpleNamespace(_reorder_linear_weight=lambda w, rows: w.T.contiguous(),  # a layout it cannot use
                                  _linear_pointwise=torch.ops.mkldnn._linear_pointwise)
    fake = types.SimpleNamespace(ops=types.SimpleNamespace(mkldnn=wrong), zeros=torch.zeros, bfloat16=torch.bfloat16)
    assert _packed_layers(fake, hidden, "relu") is hidden
    assert _packed_layers(types.SimpleNamespace(ops=types.SimpleNamespace()), hidden, "relu") is hidden  # no op


def test_bfloat16_without_amx_tiles_comes_with_a_note_and_float32_never():
    """The command line's one line for a user whose CPU makes bfloat16 the slower arithmetic."""
    note = precision_note("bfloat16", amx=False)
    assert note is not None and "no AMX tiles" in note and "float32" in note and "\n" not in note
    assert precision_note("bfloat16", amx=True) is None
    assert precision_note("float32", amx=False) is None and precision_note("float32", amx=True) is None


def test_the_cpu_is_named_in_one_line():
    """What benchmarks print beside ``has_amx``: a name, never empty, on one line."""
    name = cpu_model()
    assert isinstance(name, str) and name.strip() == name and name and "\n" not in name
