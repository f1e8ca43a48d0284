"""Search labels on a torch device (``bgnet.play.search_torch``) against the numba search they stand for.

``label_boards_torch`` must give ``bgnet.play.search.evaluate_boards``' values (what the rounds pipeline labels
with) at 0, 1 and 2 plies within 1e-5, and ``bgnet.trainer.labels.evaluate_pruned``'s with a pruned last level, for a single net and for a NetSet with its bear-off database, on
positions of every kind: contact, races, pure bear-offs, checkers on the bar, finished games, and positions
where some plays or replies end the game (with gammons and backgammons). The rounds pipeline's ``--device``
labels through it, and refuses a device this machine lacks in one sentence. Each test runs on the CPU and,
where there is a GPU, on CUDA too.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import bgnet.trainer.round_config as round_config
import bgnet.trainer.round_labels as round_labels
from bgnet.cli.rounds import main
from bgnet.core import _game_kernels as gk
from bgnet.core.errors import BgnetError
from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.features.kinds import position_kinds
from bgnet.nets.bearoff import is_bearoff
from bgnet.nets.model import BgNet, ModelConfig, NetSet, load_net, save_checkpoint
from bgnet.play.search import ROLLS, SearchError, evaluate_boards
from bgnet.core.game_torch import segment_argmax_torch, terminal_codes_torch
from bgnet.play.search_torch import label_boards_torch, position_kinds_torch
from bgnet.nets.pubeval import WIN_SCORE, pubeval_tables
from bgnet.nets.pubeval_torch import pubeval_scores_torch, pubeval_top_torch
from bgnet.sim._rollout_kernels import pubeval_row
from bgnet.sim.rollout_play import pubeval_top
from bgnet.trainer.labels import evaluate_pruned
from bgnet.trainer.inference import probs_fn_of
from bgnet.trainer.round_config import RoundsConfig, RoundsError
from bgnet.trainer.rounds import run_rounds

TOL = 1e-5
CUDA = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]
"""The CPU always, CUDA where there is a GPU."""


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def small_net(seed: int, version: int = 2, hidden: tuple[int, ...] = (16,)) -> BgNet:
    """A freshly initialised net (the same one for a seed), its outputs spread by a larger head."""
    torch.manual_seed(seed)
    net = BgNet(ModelConfig.for_features(hidden, "relu", version)).eval()
    with torch.no_grad():
        net.head.weight.mul_(4.0)  # chances well apart, so that near ties between plays are rare
    return net


def board(me: dict[int, int], opp: dict[int, int]) -> np.ndarray:
    """A board from each side's own points (25 = its bar), as ``Position.from_points``."""
    b = np.zeros(26, np.int8)
    for p, n in me.items():
        b[p] += n
    for p, n in opp.items():
        b[0 if p == 25 else 25 - p] -= n
    return b


HAND_MADE = np.array([
    board({1: 1, 2: 1}, {25: 2, 22: 3, 5: 10}),  # my last two off with most rolls: a backgammon
    board({1: 1, 3: 1}, {6: 5, 8: 5, 13: 5}),  # gammons: the opponent has borne off none
    board({8: 5, 12: 5, 20: 5}, {1: 1, 2: 1}),  # his replies end the game with a gammon or a backgammon
    board({25: 2, 6: 5, 8: 3, 13: 5}, {1: 2, 2: 2, 3: 2, 4: 2, 6: 2, 13: 5}),  # on the bar, one point open
    board({25: 1, 24: 1, 13: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}),  # closed out: no play
    board({1: 3, 2: 1}, {1: 2, 2: 2}),  # a short bear-off
    board({}, {3: 2, 19: 1}),  # finished: I have borne off all (a single game: he has some off)
    board({4: 5, 20: 10}, {}),  # finished: the opponent has borne off all, mine in his home: a backgammon
    board({6: 15}, {}),  # finished: a gammon
], np.int8)


def bearoffs(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` pure bear-offs of one to four checkers a side: many plays and replies end the game."""
    out = np.zeros((n, 26), np.int8)
    for i in range(n):
        np.add.at(out[i], rng.integers(1, 7, rng.integers(1, 5)), 1)
        np.add.at(out[i], 25 - rng.integers(1, 7, rng.integers(1, 5)), -1)
    return out


def mixed_positions(game_boards, n: int, seed: int) -> np.ndarray:
    """``n`` boards of random games (contact, bars, races, bear-offs, finished games), short bear-offs and the
    hand-made cases, in a random order."""
    rng = np.random.default_rng(seed)
    short = bearoffs(n // 6, rng)
    games = game_boards(n - len(short) - len(HAND_MADE), seed)
    boards = np.concatenate([games, short, HAND_MADE])
    return boards[rng.permutation(len(boards))]


def reply_ends_game(boards: np.ndarray) -> np.ndarray:
    """Mask (N,) of boards where some play of some roll ends the game."""
    dice = np.tile(np.array(ROLLS, np.int8), (len(boards), 1))
    after, _s, _n, offsets = generate_plays(np.repeat(boards, len(ROLLS), axis=0), dice)
    over = gk.terminal_codes(swap_sides_batch(after)) != 0
    per_roll = np.add.reduceat(over, offsets[:-1]) > 0
    return per_roll.reshape(len(boards), len(ROLLS)).any(1)


def test_the_test_positions_hold_every_kind(game_boards):
    """The positions below cover contact, crashed, race, pure bear-off, bar, finished and game-ending plays."""
    boards = mixed_positions(game_boards, 300, 1)
    kinds = position_kinds(boards)
    codes = gk.terminal_codes(boards)
    live = codes == 0
    assert {0, 1, 2} <= set(kinds[live].tolist())
    assert is_bearoff(boards[live]).sum() >= 30
    assert ((boards[:, 25] > 0) | (boards[:, 0] < 0))[live].sum() >= 20
    assert set(np.abs(codes).tolist()) >= {0, 1, 2, 3}
    assert reply_ends_game(boards[live]).sum() >= 30


def test_the_torch_twins_of_the_kernels_agree_with_them(game_boards):
    """Finished games' codes, kinds and segment argmax (the first of equal values) as the numba kernels."""
    boards = mixed_positions(game_boards, 2000, 2)
    t = torch.from_numpy(boards)
    assert np.array_equal(terminal_codes_torch(t).numpy(), gk.terminal_codes(boards))
    assert np.array_equal(position_kinds_torch(t).numpy(), position_kinds(boards))
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 9, 500)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = rng.integers(0, 4, offsets[-1]).astype(np.float64)  # many ties
    got = segment_argmax_torch(torch.from_numpy(values), torch.from_numpy(offsets)).numpy()
    assert np.array_equal(got, gk.segment_argmax(values, offsets))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ply, n", [(0, 300), (1, 300), (2, 60)])
def test_labels_of_a_net_are_the_numba_search(game_boards, device, ply, n):
    net = small_net(11)
    boards = mixed_positions(game_boards, n, 4 + ply)
    want = evaluate_boards(probs_fn_of(net), boards, ply)
    got = label_boards_torch(net, boards, ply, device)
    assert got.shape == (len(boards), 5) and got.dtype == np.float64
    assert np.abs(got - want).max() < TOL
    if ply:  # not the net's own value: the search did something
        assert np.abs(got - evaluate_boards(probs_fn_of(net), boards, ply - 1)).max() > 1e-2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ply, n", [(0, 200), (1, 200), (2, 40)])
def test_labels_of_a_netset_with_its_bearoff_database_are_the_numba_search(game_boards, device, ply, n):
    """Each board by its kind's net (three different nets), pure bear-offs exact from the database."""
    nets = NetSet({"contact": small_net(1, 1), "crashed": small_net(2), "race": small_net(3, 2, (8,))})
    boards = mixed_positions(game_boards, n, 7 + ply)
    want = evaluate_boards(nets.probs_of_boards, boards, ply)
    assert np.abs(label_boards_torch(nets, boards, ply, device) - want).max() < TOL
    no_db = NetSet(nets.nets, bearoff=False)  # the database made a difference, and is left out when asked
    assert np.abs(label_boards_torch(no_db, boards, ply, device) - want).max() > 1e-3
    assert np.abs(label_boards_torch(no_db, boards, ply, device)
                  - evaluate_boards(no_db.probs_of_boards, boards, ply)).max() < TOL


@pytest.mark.parametrize("device", DEVICES)
def test_labels_through_the_fused_kernels_are_the_torch_ops_labels(game_boards, device):
    """The search's features and bear-off lookups from their Triton kernels (in Triton's interpreter without a GPU):
    the same labels, bit for bit."""
    pytest.importorskip("triton")
    nets = NetSet({"contact": small_net(1), "crashed": small_net(2), "race": small_net(3, 2, (8,))})
    for ply, n in ((0, 300), (1, 12)):
        boards = mixed_positions(game_boards, n, 11 + ply)
        assert np.array_equal(label_boards_torch(nets, boards, ply, device, kernels="fused"),
                              label_boards_torch(nets, boards, ply, device))


@pytest.mark.parametrize("device", DEVICES)
def test_labels_of_the_released_net_are_the_numba_search(game_boards, device):
    net = load_net("checkpoints/bgnet.pt")
    fn = probs_fn_of(net)
    boards = mixed_positions(game_boards, 40, 10)
    for ply, rows in ((0, boards), (1, boards), (2, boards[:16])):
        assert np.abs(label_boards_torch(net, rows, ply, device) - evaluate_boards(fn, rows, ply)).max() < TOL


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ply, top, n", [(1, 3, 200), (2, 10, 30), (2, 2, 30)])
def test_labels_with_a_pruned_last_level_are_evaluate_pruned(game_boards, device, ply, top, n):
    """``top`` K: the last level's play of each roll among pubeval's best K only, the rounds' ``--label-top``."""
    net = small_net(13)
    boards = mixed_positions(game_boards, n, 20 + top)
    want = evaluate_pruned(probs_fn_of(net), boards, ply, top)
    got = label_boards_torch(net, boards, ply, device, top=top)
    assert np.abs(got - want).max() < TOL
    assert np.abs(got - evaluate_boards(probs_fn_of(net), boards, ply)).max() > 1e-3  # pruning changed values
    with pytest.raises(SearchError, match="top"):
        label_boards_torch(net, boards[:2], ply, device, top=-1)


def test_pubeval_s_torch_twin_scores_and_ranks_as_the_kernels(game_boards):
    """Bit-equal scores (so equal ties) and the same best K of every segment, equal scores in generation order."""
    boards = mixed_positions(game_boards, 400, 21)
    after, _s, _n, offsets = generate_plays(boards, np.array(ROLLS, np.int8)[np.arange(len(boards)) % 21])
    tables, extra = pubeval_tables()
    want = np.array([pubeval_row(row, tables, extra, WIN_SCORE) for row in after])
    got = pubeval_scores_torch(torch.from_numpy(after)).numpy()
    assert np.array_equal(got, want) and (want == WIN_SCORE).any()
    for k in (1, 4, 10):
        rows, new_offsets = pubeval_top_torch(torch.from_numpy(after), torch.from_numpy(offsets), k)
        kept, kept_offsets = pubeval_top(after, offsets, k)
        assert np.array_equal(rows.numpy(), kept) and np.array_equal(new_offsets.numpy(), kept_offsets)


def test_chunk_sizes_do_not_change_the_labels(game_boards):
    """Positions searched one, seven or all at a time, forward passes of 33 boards or of all: the same labels, but
    for the float32 rounding of forward passes over other batch sizes (about 1e-8)."""
    net = small_net(5)
    boards = mixed_positions(game_boards, 60, 12)
    for ply, rows, chunks in ((1, boards, ((1, None), (7, None), (7, 33))), (2, boards[:12], ((5, None), (5, 33)))):
        whole = label_boards_torch(net, rows, ply)
        for batch, eval_batch in chunks:
            assert np.abs(label_boards_torch(net, rows, ply, batch=batch, eval_batch=eval_batch) - whole).max() < 1e-7


def test_bad_requests_are_search_errors():
    boards = HAND_MADE[:2]
    with pytest.raises(SearchError, match="BgNet or a NetSet"):
        label_boards_torch(probs_fn_of(small_net(1)), boards, 1)  # type: ignore[arg-type]
    with pytest.raises(SearchError, match="ply"):
        label_boards_torch(small_net(1), boards, 4)
    with pytest.raises(SearchError, match="batch"):
        label_boards_torch(small_net(1), boards, 1, batch=0)


# -- the rounds pipeline -------------------------------------------------------------------------------


@pytest.fixture()
def init(tiny_v2_checkpoint):
    return tiny_v2_checkpoint


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_the_rounds_refuse_a_missing_gpu_in_one_sentence(init, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--init", str(init), "--out", str(out), "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cuda" in err and "no CUDA GPU" in err
    config = tmp_path / "gpu.toml"
    config.write_text('device = "cuda"\nlabel = "ply2"\n')
    assert main(["--config", str(config), "--init", str(init), "--out", str(out)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not out.exists()  # refused before anything was made


def test_the_rounds_refuse_a_device_for_labels_it_does_not_compute(monkeypatch):
    monkeypatch.setattr(round_config, "resolve_device", lambda name: torch.device("cpu"))
    with pytest.raises(RoundsError, match="--device cuda computes the search labels only"):
        RoundsConfig(device="cuda", label="rollout").check()
    RoundsConfig(device="cuda", label="ply2").check()
    RoundsConfig(device="cuda", label="ply2", label_top=10).check()  # the release's labels: pruned last level
    RoundsConfig(device="cuda", label="ply2", device_kernels="torch").check()
    with pytest.raises(RoundsError, match="must be torch or fused, not 'fast'"):
        RoundsConfig(device="cuda", label="ply2", device_kernels="fast").check()
    monkeypatch.undo()
    with pytest.raises(BgnetError, match="not cpu or cuda"):
        RoundsConfig(device="tpu").check()
    with pytest.raises(RoundsError, match="--device-kernels fused serves the search labels on a GPU: add --device"):
        RoundsConfig(device_kernels="fused").check()


@pytest.mark.parametrize("kind", ["all", "race"])
def test_a_rounds_run_labels_on_its_device(init, tmp_path, monkeypatch, kind):
    """``device`` cuda labels with the torch search (here sent to the CPU), the same labels as the numba search;
    the device may change between sittings of a run."""
    if not torch.cuda.is_available():  # the pipeline's device, played by the CPU
        monkeypatch.setattr(round_config, "resolve_device", lambda name: torch.device("cpu"))
        monkeypatch.setattr(round_labels, "resolve_device", lambda name: torch.device("cpu"))
    calls = []
    real = round_labels.label_boards_torch
    monkeypatch.setattr(round_labels, "label_boards_torch", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    small = dict(positions=40, epochs=1, duel_pairs=10, batch_games=16, seed=3, label="ply1", kind=kind,
                 label_chunk=25)
    out = tmp_path / "run"
    run_rounds(str(init), out, RoundsConfig(rounds=1, device="cuda", **small), log=lambda s: None)
    assert calls == [1, 1]  # two parts, each by the torch search at 1 ply
    with np.load(out / "labels_001.npz") as data:
        boards, targets = data["boards"], data["targets"]
    model = load_net(init) if kind == "all" else NetSet({"contact": load_net(init)})
    fn = probs_fn_of(model) if kind == "all" else model.probs_of_boards
    assert targets.dtype == np.float32 and np.abs(targets - evaluate_boards(fn, boards, 1)).max() < TOL
    # a second sitting on the CPU continues the run (the device is free to change)
    state = run_rounds(str(init), out, RoundsConfig(rounds=2, device="cpu", **small), log=lambda s: None)
    assert len(state.done) == 2 and calls == [1, 1]
    assert json.loads((out / "state.json").read_text())["config"]["device"] == "cuda"


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_labels_on_cuda_in_large_batches_are_the_numba_search(game_boards):
    """The default (GPU-sized) chunks: 2-ply labels of a few hundred positions, the released net."""
    net = load_net("checkpoints/bgnet.pt")
    boards = mixed_positions(game_boards, 200, 13)
    got = label_boards_torch(net, boards, 2, "cuda")
    assert np.abs(got - evaluate_boards(probs_fn_of(net), boards, 2)).max() < TOL
