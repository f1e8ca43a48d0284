"""Self-play and learning on a torch device: no host reads in a step, the games of ``SelfPlay`` given the same
dice, ``td.lambda_returns``'s targets, the bear-off database's values, exact resume. Each runs on "cpu" and,
with a GPU, on "cuda"."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet.core import _game_kernels as gk
from bgnet.core.game_torch import segment_argmax_torch, swap_sides_torch, terminal_codes_torch, terminal_probs_torch
from bgnet.core.movegen import legal_moves, swap_sides_batch
from bgnet.core.position import Position
from bgnet.core.probs import equities
from bgnet.nets.bearoff import database, is_bearoff
from bgnet.nets.bearoff_torch import DeviceBearoff
from bgnet.nets.model import BgNet, ModelConfig
from bgnet.sim.device_selfplay import DeviceSelfPlay, net_probs, roll_dice_torch
from bgnet.sim.selfplay import SelfPlay, SelfPlayStateError, roll_dice
from bgnet.sim.trajectory_ring import END_ABANDONED, END_BEAROFF
from bgnet.trainer.device_selfplay import DeviceLearning, DeviceTrainer
from bgnet.trainer.device_td import GraphedRingReturns, _returns, ring_lambda_returns
from bgnet.trainer.td import lambda_returns, result_probs

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]

_WEIGHTS = torch.from_numpy(np.random.default_rng(5).integers(1, 1 << 30, size=(3, 26)))


def hashed_probs(boards: torch.Tensor) -> torch.Tensor:
    """A stand-in evaluator exact on any device: chances from three hashes of the board (ties between two boards
    about once in 2**60), float32 ops only."""
    h = ((boards.to(torch.int64).unsqueeze(1) + 15) * _WEIGHTS.to(boards.device)).sum(2) % (1 << 20)
    u = h.float() / float(1 << 20)
    zero = torch.zeros_like(u[:, 0])
    return torch.stack([u[:, 0], u[:, 0] * u[:, 1], zero, (1.0 - u[:, 0]) * u[:, 2], zero], dim=1)


def on_host(probs_fn):
    """The device evaluator as ``SelfPlay`` takes it: numpy boards in, numpy chances out."""
    return lambda boards: probs_fn(torch.from_numpy(np.ascontiguousarray(boards))).numpy()


def small_net(feature_version: int = 1, seed: int = 0) -> BgNet:
    torch.manual_seed(seed)
    return BgNet(ModelConfig.for_features([24], "tanh", feature_version))


def ring_games(play: DeviceSelfPlay) -> list[tuple[int, int, np.ndarray, np.ndarray, int]]:
    """Every game the ring holds from its ply 0 to its end, as (end step, slot, boards, values, end code), in the order
    they ended (``SelfPlay``'s order: by step, then slot)."""
    ring = {k: v.numpy() for k, v in play.ring.state_dict().items() if k != "written"}
    games = []
    for slot in range(play.n_games):
        rows: list[int] = []
        for row, step in play.ring.rows():
            if ring["ply"][row, slot] == 0:
                rows = []
            rows.append(row)
            end = int(ring["end"][row, slot])
            if end and ring["ply"][rows[0], slot] == 0:
                games.append((step, slot, ring["boards"][rows, slot], ring["values"][rows, slot], end))
    return sorted(games, key=lambda g: g[:2])


# -- the torch twins of the game kernels and of the bear-off database -------------------------------------------


def test_terminal_codes_probs_and_segment_argmax_match_the_numba_kernels(game_boards):
    boards = game_boards(3000, 11)
    finished = boards.copy()
    finished[:, 1:26] = np.where(finished[:, 1:26] > 0, 0, finished[:, 1:26])  # the side on roll bore off all 15
    swapped = swap_sides_batch(finished)
    everything = np.concatenate([boards, finished, swapped])
    codes = gk.terminal_codes(everything)
    assert set(np.unique(codes)) >= {-3, -2, -1, 0, 1, 2, 3}
    got = terminal_codes_torch(torch.from_numpy(everything))
    assert np.array_equal(got.numpy(), codes)
    want = np.zeros((len(codes), 5), np.float32)
    gk.apply_terminal(codes, want)
    assert np.array_equal(terminal_probs_torch(got).numpy(), want)
    assert np.array_equal(swap_sides_torch(torch.from_numpy(boards)).numpy(), swap_sides_batch(boards))

    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, 5000).astype(np.float32)  # many ties: the first of equal ones wins
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 30, 400))])
    offsets = offsets[offsets < len(values)]
    offsets = np.append(offsets, len(values)).astype(np.int64)
    got = segment_argmax_torch(torch.from_numpy(values), torch.from_numpy(offsets))
    assert np.array_equal(got.numpy(), gk.segment_argmax(values, offsets))


def bearoff_boards(n: int, seed: int) -> np.ndarray:
    """n pure bear-offs: up to 15 checkers a side on its home points, a third of them with at most 6 a side."""
    rng = np.random.default_rng(seed)
    boards = np.zeros((n, 26), np.int8)
    for i in range(n):
        cap = 6 if i % 3 == 0 else 15
        mine = np.bincount(rng.integers(0, 6, rng.integers(0, cap + 1)), minlength=6)
        theirs = np.bincount(rng.integers(0, 6, rng.integers(1, cap + 1)), minlength=6)
        boards[i, 1:7] = mine
        boards[i, 19:25] = -theirs[::-1]
    return boards


@pytest.mark.parametrize("device", DEVICES)
def test_device_bearoff_values_equal_the_database(device, game_boards):
    boards = np.concatenate([bearoff_boards(3000, 1), game_boards(1000, 2)])
    codes, want = database().lookup(boards)
    assert (codes == 1).sum() > 1000 and (codes == 2).sum() > 500 and (want[:, 1] > 0).any() and (want[:, 3] > 0).any()
    table = DeviceBearoff(device)
    mask, got = table.probs(torch.from_numpy(boards).to(device))
    assert np.array_equal(mask.cpu().numpy(), codes != 0)
    assert np.array_equal(mask.cpu().numpy(), is_bearoff(boards))
    assert np.array_equal(table.is_bearoff(torch.from_numpy(boards).to(device)).cpu().numpy(), codes != 0)
    assert np.array_equal(got.cpu().numpy(), want)  # float64 bit for bit: the numba kernel's operations in its order


@pytest.mark.parametrize("device", DEVICES)
def test_opening_rolls_are_never_doubles_and_every_roll_comes(device):
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    opening = torch.arange(6000, device=device) % 2 == 0
    dice = roll_dice_torch(gen, opening).cpu().numpy()
    first = dice[opening.cpu().numpy()]
    assert np.all(first[:, 0] != first[:, 1]) and len({tuple(d) for d in first.tolist()}) == 30
    assert len({tuple(d) for d in dice.tolist()}) == 36 and dice.min() == 1 and dice.max() == 6


# -- the same games as SelfPlay ---------------------------------------------------------------------------------


class SharedDice:
    """``SelfPlay`` rolls (numpy, its rules); the device self-play replays the same rolls, step for step."""

    def __init__(self, seed: int, device: str) -> None:
        self.rng = np.random.default_rng(seed)
        self.device = device
        self.rolls: list[np.ndarray] = []

    def roll(self, opening: np.ndarray) -> np.ndarray:
        dice = roll_dice(self.rng, len(opening), opening)
        self.rolls.append(dice)
        return dice

    def replay(self, opening: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(self.rolls.pop(0)).to(self.device)


def play_both(probs_fn, device: str, n_games: int, steps: int, bearoff: bool, kernels: str = "torch"):
    """``SelfPlay`` and ``DeviceSelfPlay`` (through ``kernels``) on the same dice and evaluator: SelfPlay's finished
    games (by step, then slot) and the device self-play."""
    dice = SharedDice(3, device)
    host = SelfPlay(n_games, seed=0, bearoff=bearoff, dice=dice.roll)
    play = DeviceSelfPlay(n_games, seed=0, device=device, bearoff=bearoff, history=steps, dice=dice.replay,
                          kernels=kernels)
    finished = []
    for step in range(steps):
        for t in host.step(on_host(probs_fn)):
            finished.append((step, t))
        play.step(probs_fn)
        assert not dice.rolls
    return finished, play


def assert_same_games(finished, play: DeviceSelfPlay, atol: float = 0.0) -> None:
    """Every game ended at the same step in the same slot with the same plays, values (within ``atol``) and result; a
    game stopped at the bear-off database may end on another play of equal equity (the engines list plays in other
    orders)."""
    games = [g for g in ring_games(play) if g[4] != END_ABANDONED]
    assert len(games) == len(finished)
    ties = 0
    for (step, t), (end_step, slot, boards, values, end) in zip(finished, games):
        assert end_step == step
        if end == END_BEAROFF:
            assert t.result == 0 and len(boards) == len(t.boards)
            assert np.array_equal(boards[:-1], t.boards[:-1])
            assert np.allclose(values[:-1], t.values[:-1], rtol=0, atol=atol)
            assert np.allclose(equities(values[-1:]), equities(t.values[-1:]), rtol=0, atol=atol)
            ties += not np.array_equal(boards[-1], t.boards[-1])
        else:
            assert t.result == end and np.array_equal(boards[:-1], t.boards)
            assert np.allclose(values[:-1], t.values, rtol=0, atol=atol)
    assert ties < len(games) // 4


@pytest.mark.parametrize("device", DEVICES)
def test_the_same_dice_and_evaluator_play_the_same_games_as_selfplay(device):
    finished, play = play_both(hashed_probs, device, n_games=48, steps=260, bearoff=True)
    results = [t.result for _, t in finished]
    assert len(finished) > 80 and results.count(0) > 25 and results.count(2) > 10 and results.count(3) > 10
    assert_same_games(finished, play)
    assert int(play.finished) == len(finished)


@pytest.mark.parametrize("device", DEVICES)
def test_without_the_database_games_are_played_out_the_same(device):
    finished, play = play_both(hashed_probs, device, n_games=24, steps=260, bearoff=False)
    assert len(finished) > 30 and {t.result for _, t in finished} >= {1, 2}
    assert_same_games(finished, play)


def test_a_net_plays_the_same_games_as_selfplay_with_it():
    # The net's float32 rows may round differently in batches of other sizes: the same plays, values within 1e-6.
    finished, play = play_both(net_probs(small_net(2)), "cpu", n_games=16, steps=150, bearoff=True)
    assert len(finished) > 12
    assert_same_games(finished, play, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_exploring_plays_are_legal_and_differ_from_the_best(device):
    plays = {}
    for exploration in (0.0, 1.0):
        play = DeviceSelfPlay(8, seed=4, device=device, history=40)
        for _ in range(40):
            before, dice_state = play.boards.cpu().numpy(), play.generator.get_state()
            opening = play.plies == 0
            play.step(hashed_probs, exploration)
            replay = torch.Generator(device=device)
            replay.set_state(dice_state)
            dice = roll_dice_torch(replay, opening).cpu().numpy()
            chosen = play.ring.boards[(play.steps - 1) % 40].cpu().numpy()
            for g in range(8):
                afters = {m.after.swap_sides().board for m in legal_moves(Position(before[g].tolist()), tuple(dice[g]))}
                assert tuple(chosen[g].tolist()) in afters
        plays[exploration] = play.ring.boards.cpu().numpy()
    assert not np.array_equal(plays[0.0], plays[1.0])


# -- TD targets, fits, resume, no host reads ---------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_ring_targets_equal_td_lambda_returns(device):
    play = DeviceSelfPlay(32, seed=2, device=device, history=200, max_plies=120)
    for _ in range(200):
        play.step(hashed_probs)
    targets, samples = ring_lambda_returns(play.ring, 0.7)
    targets, samples = targets.cpu().numpy(), samples.cpu().numpy()
    games = ring_games(play)
    ends = {g[4] for g in games}
    assert len(games) > 40 and {END_BEAROFF, END_ABANDONED} <= ends and ends & {1, 2, 3}
    seen = 0
    for end_step, slot, boards, values, end in games:
        rows = [(end_step - k) % play.ring.steps for k in range(len(boards))][::-1]
        if end == END_ABANDONED:
            assert not samples[rows, slot].any()
            continue
        keep = len(values) - (end != END_BEAROFF)  # a win's finished board is no sample
        outcome = values[-1] if end == END_BEAROFF else result_probs(end)
        want = lambda_returns(values[:keep], outcome, 0.7)
        assert samples[rows[:keep], slot].all() and not samples[rows[keep:], slot].any()
        assert np.array_equal(targets[rows[:keep], slot], want)
        seen += keep
    assert samples.sum() == seen  # games still under way give no samples

    later = ring_lambda_returns(play.ring, 0.7, since=150)[1].cpu().numpy()
    assert 0 < later.sum() < samples.sum() and not (later & ~samples).any()


def test_ring_targets_of_a_wrapped_ring_are_those_of_a_whole_one():
    """A row's target and sample depend only on the rows after it: a ring that has wrapped round (history 100 after
    250 steps) gives its rows the values a ring holding every step gives the same steps."""
    rings = {}
    for history in (100, 300):
        play = DeviceSelfPlay(24, seed=5, history=history, max_plies=120)
        for _ in range(250):
            play.step(hashed_probs)
        rings[history] = ring_lambda_returns(play.ring, 0.7, since=180)
    steps = np.arange(150, 250)
    for wrapped, whole in zip(rings[100], rings[300]):
        assert torch.equal(wrapped[steps % 100], whole[steps])
    assert rings[100][1].any()


def test_the_sweep_takes_its_first_step_and_since_as_device_scalars():
    """What a CUDA graph of the sweep replays: the first step and ``since`` as 0-dim tensors give the bits of the
    Python ints, on a ring that has wrapped round."""
    play = DeviceSelfPlay(24, seed=5, history=100, max_plies=120)
    for _ in range(250):
        play.step(hashed_probs)
    want = ring_lambda_returns(play.ring, 0.7, since=180)
    got = _returns(play.ring, 0.7, torch.tensor(150), torch.tensor(180), 100)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]) and want[1].any()
    graphed = GraphedRingReturns(0.7)  # on a CPU: the eager sweep
    assert all(torch.equal(a, b) for a, b in zip(graphed(play.ring, 180), want))


@pytest.mark.cuda
@pytest.mark.cuda_graphs
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_graphed_sweep_gives_the_eager_targets_fit_after_fit():
    play = DeviceSelfPlay(64, seed=3, device="cuda", history=40, max_plies=120)
    graphed = GraphedRingReturns(0.7)
    checked = 0
    for step in range(1, 161):
        play.step(hashed_probs)
        if step % 10 == 0:
            since = max(0, step - 25)
            want = ring_lambda_returns(play.ring, 0.7, since)
            got = graphed(play.ring, since)
            assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
            checked += step >= 40  # replays of the captured graph (the ring full)
    assert checked >= 12 and graphed._graph is not None

    def trained(graphs: bool) -> BgNet:
        net = small_net(2).to("cuda")
        trainer = DeviceTrainer(net, DeviceSelfPlay(32, seed=1, device="cuda", history=30),
                                DeviceLearning(fit_every=5, minibatch=64, cuda_graphs=graphs), seed=2)
        for _ in range(90):
            trainer.step(0.05)
        return net

    # The fits' loops replayed from a graph take Adam's rate as a device scalar: the same up to its rounding.
    start = [p.detach().clone() for p in small_net(2).parameters()]
    moved = 0.0
    for a, b, s in zip(trained(True).parameters(), trained(False).parameters(), start):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)
        moved = max(moved, float((b.cpu() - s).abs().max()))
    assert moved > 1e-3  # the fits did learn


def test_the_td_sweep_launches_a_few_ops_a_row():
    """The targets' recursion is the only loop over the ring's rows: at most 9 kernels a row (views aside), so that a
    GPU step's host is not the bottleneck."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Kernels(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not any(v in str(func) for v in ("select", "view", "unsqueeze", "expand", "slice", "alias")):
                Kernels.count += 1
            return func(*args, **(kwargs or {}))

    play = DeviceSelfPlay(16, seed=1, history=150, max_plies=120)
    for _ in range(150):
        play.step(hashed_probs)
    with Kernels():
        ring_lambda_returns(play.ring, 0.7)
    assert Kernels.count <= 9 * 150 + 60


def no_host_reads(monkeypatch) -> None:
    """Make every way Python reads a tensor's value raise."""
    def refuse(*args, **kwargs):
        raise AssertionError("a tensor's value was read back to Python")
    for name in ("cpu", "item", "numpy", "tolist", "__bool__", "__int__", "__float__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, refuse)


@pytest.mark.parametrize("graphs", [False, pytest.param(True, marks=pytest.mark.cuda_graphs)])
@pytest.mark.parametrize("device", DEVICES)
def test_a_steady_step_and_fit_read_nothing_back(device, graphs, monkeypatch):
    net = small_net(2).to(device)
    trainer = DeviceTrainer(net, DeviceSelfPlay(32, seed=1, device=device),
                            DeviceLearning(fit_every=4, minibatch=64, cuda_graphs=graphs))
    for _ in range(12):  # warm-up: constants made, the fused optimizer's state created
        trainer.step(0.1)
    before = trainer.play.steps
    with monkeypatch.context() as m:
        no_host_reads(m)
        with pytest.raises(AssertionError):
            torch.zeros(1).item()  # the refusal is in place
        for _ in range(8):
            trainer.step(0.1)  # two fits among them
    assert trainer.play.steps == before + 8 and trainer.learned_to == before + 8
    assert np.isfinite(float(trainer.loss))


def sync_places(trainer: DeviceTrainer, steps: int) -> set[str]:
    """The files whose lines made CUDA wait for the host in ``steps`` more steps of ``trainer``."""
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(steps):
                trainer.step(0.1)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return {Path(w.filename).name for w in caught if "synchroniz" in str(w.message)}


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("graphs", [False, pytest.param(True, marks=pytest.mark.cuda_graphs)])
def test_on_a_gpu_a_steady_step_and_fit_wait_only_for_the_move_generators_sizes(graphs):
    trainer = DeviceTrainer(small_net(2).to("cuda"), DeviceSelfPlay(64, seed=1, device="cuda"),
                            DeviceLearning(fit_every=4, minibatch=64, cuda_graphs=graphs))
    for _ in range(12):
        trainer.step(0.1)
    # nonzero and boolean masks in the move generator; none in play, encoding, net or fit
    assert sync_places(trainer, 8) == {"movegen_torch.py"}


@pytest.mark.parametrize("device", DEVICES)
def test_resume_plays_and_learns_the_same_next_steps(device):
    def trainer() -> DeviceTrainer:
        play = DeviceSelfPlay(16, seed=7, device=device, history=60)
        return DeviceTrainer(small_net(1).to(device), play, DeviceLearning(fit_every=5, minibatch=32), seed=3)

    first = trainer()
    for _ in range(23):
        first.step(0.05)
    state = copy.deepcopy(first.state_dict())
    weights = copy.deepcopy(first.net.state_dict())
    for _ in range(17):
        first.step(0.05)

    again = trainer()
    again.net.load_state_dict(weights)
    again.load_state_dict(state)
    for _ in range(17):
        again.step(0.05)
    for name in ("boards", "plies", "game", "finished"):
        assert torch.equal(getattr(first.play, name), getattr(again.play, name))
    for name in ("boards", "values", "game", "ply", "end"):
        assert torch.equal(getattr(first.play.ring, name), getattr(again.play.ring, name))
    assert torch.equal(first.loss, again.loss)
    for a, b in zip(first.net.parameters(), again.net.parameters()):
        assert torch.equal(a, b)

    with pytest.raises(SelfPlayStateError):
        DeviceSelfPlay(8, seed=7, device=device, history=60).load_state_dict(state["play"])
