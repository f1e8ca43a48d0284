"""Nets, scorers and the trainer's checkpoints work wherever the net lives, not only on the CPU.

Each test runs on "cpu" and, with a GPU, on "cuda". Without one, two stand-ins catch the same mistakes: the
"meta" device (an op that mixes a meta tensor with a CPU one fails, as CUDA with CPU does) and a float64 net
(an input or a new layer that does not follow the net's weights has the wrong dtype, as it would have the
wrong device).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet.nets.model import (BgNet, ModelConfig, NetEvaluator, NetSet, average_nets, committee_net, placement,
                              read_checkpoint, save_checkpoint, widen, widen_hidden)

ROOT = Path(__file__).resolve().parent.parent

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]
"""The real devices: the CPU always, CUDA where there is a GPU."""


def small_nets(n: int, hidden: tuple[int, ...] = (12, 6), seed: int = 7) -> list[BgNet]:
    """``n`` freshly initialised version-1 nets (the same ones for a seed)."""
    torch.manual_seed(seed)
    return [BgNet(ModelConfig.for_features(hidden, "relu", 1)).eval() for _ in range(n)]


BUILDERS = {
    "widen": lambda nets: widen(nets[0], 2),
    "widen_hidden": lambda nets: widen_hidden(nets[0], [20, 9], seed=3),
    "average_nets": average_nets,
    "committee_net": committee_net,
}
"""Functions that build a new net from nets: each must put it where its inputs' weights are."""


def inputs_for(net: BgNet, n: int = 40) -> torch.Tensor:
    return torch.rand(n, net.config.num_features, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("build", sorted(BUILDERS))
def test_a_net_built_from_meta_nets_stays_on_meta(build):
    """The CUDA stand-in: building from nets on another device never mixes in a CPU tensor, and the result lives there."""
    nets = [n.to("meta") for n in small_nets(2)]
    built = BUILDERS[build](nets)
    assert {p.device.type for p in built.parameters()} == {"meta"}


@pytest.mark.parametrize("build", sorted(BUILDERS))
@pytest.mark.parametrize("device", DEVICES)
def test_a_net_built_from_nets_keeps_their_device_dtype_and_function(build, device):
    """On a real device, and in float64, the built net sits with its inputs' weights and computes what it
    computes from the same nets built on the CPU in float32."""
    reference = BUILDERS[build](small_nets(2))
    for dtype in (torch.float32, torch.float64):
        nets = [n.to(device, dtype) for n in small_nets(2)]
        built = BUILDERS[build](nets)
        assert {(p.device.type, p.dtype) for p in built.parameters()} == {(torch.device(device).type, dtype)}
        x = inputs_for(reference)
        with torch.no_grad():
            got = built(x.to(device, dtype)).cpu().double()
            want = reference(x).double()
        assert torch.allclose(got, want, atol=1e-5), (build, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_widen_hidden_of_a_float64_net_keeps_its_function_exactly(device):
    """Without noise Net2Net keeps the function; in float64 the copies' shared weights add up to 1e-12."""
    [net] = small_nets(1)
    net = net.to(device, torch.float64)
    wide = widen_hidden(net, [30, 11], noise=0.0)
    assert placement(wide) == placement(net)
    x = inputs_for(net).to(device, torch.float64)
    with torch.no_grad():
        assert torch.allclose(wide(x), net(x), atol=1e-12, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("device", DEVICES)
def test_netset_and_evaluator_score_on_their_nets_device(device, dtype, game_boards):
    """NetSet and NetEvaluator send the encoded boards to their nets' device and dtype and bring numpy back."""
    boards = game_boards(60, 2)
    contact, race = small_nets(2, hidden=(10,))
    want = NetSet({"contact": contact, "race": race}, bearoff=False)(boards)
    moved = NetSet({"contact": contact.to(device, dtype), "race": race.to(device, dtype)}, bearoff=False)
    got = moved(boards)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (60, 5)
    assert np.allclose(got, want, atol=1e-5)
    evaluator = NetEvaluator(small_nets(1, hidden=(10,))[0].to(dtype), device)
    alone = NetEvaluator(small_nets(1, hidden=(10,))[0]).probs_of_boards(boards)
    assert np.allclose(evaluator.probs_of_boards(boards), alone, atol=1e-5)


def test_a_gpu_run_checkpoints_and_restores_every_cuda_random_state(monkeypatch, tmp_path):
    """rng_states keeps CUDA's states when the run is on a GPU; they survive a weights_only checkpoint and are
    put back on the devices this machine has. (CUDA's functions are stood in for: there may be no GPU here.)"""
    from bgnet.trainer.selfplay import restore_rng_states, rng_states

    saved = [torch.arange(16, dtype=torch.uint8) + i for i in range(2)]  # two GPUs' states
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [s.clone() for s in saved])
    states = rng_states(np.random.default_rng(5), cuda=True)
    assert "cuda" not in rng_states(np.random.default_rng(5))  # a CPU run stores none (and wakes no GPU)
    save_checkpoint(tmp_path / "c.pt", small_nets(1)[0], rng_state=states)
    loaded = read_checkpoint(tmp_path / "c.pt")["rng_state"]  # read with weights_only=True

    restored: list[tuple[int, torch.Tensor]] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda state, device="cuda": restored.append((device, state)))
    rng = restore_rng_states(loaded)
    assert rng.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)
    assert [d for d, _ in restored] == [0] and torch.equal(restored[0][1], saved[0])  # one GPU here: the first
    restored.clear()
    restore_rng_states({"torch": loaded["torch"], "learn": loaded["learn"]})  # a checkpoint from before: no CUDA
    assert restored == []


def test_a_resumed_run_restores_the_cuda_states_of_its_checkpoint(monkeypatch):
    """RunState.restore puts a checkpoint's CUDA random states back (the part a GPU run's exact resume needs)."""
    from bgnet.sim.selfplay import SelfPlay, _encode_rng
    from bgnet.trainer.config import TrainConfig
    from bgnet.trainer.selfplay import RunState

    [net] = small_nets(1)
    cuda_states = [torch.full((16,), 9, dtype=torch.uint8)]
    state = RunState(TrainConfig(), net, torch.optim.Adam(net.parameters()), SelfPlay(4, seed=1),
                     np.random.default_rng(2))
    ckpt = {"optimizer": state.optimizer.state_dict(), "games": 3, "selfplay": state.play.state_dict(),
            "rng_state": {"torch": torch.get_rng_state(), "learn": _encode_rng(state.learn_rng), "cuda": cuda_states},
            "buffer_boards": np.zeros((0, 26), np.int8), "buffer_targets": np.zeros((0, 5), np.float32)}
    restored: list[torch.Tensor] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda s, device="cuda": restored.append(s))
    state.restore(ckpt)
    assert state.games == 3 and len(restored) == 1 and torch.equal(restored[0], cuda_states[0])


@pytest.mark.parametrize("device", DEVICES)
def test_the_random_states_round_trip_on_the_device(device, tmp_path):
    """Saved, drawn from, restored: the next draws on the run's device repeat exactly."""
    from bgnet.trainer.selfplay import resolve_device, restore_rng_states, rng_states

    dev = resolve_device(device)
    [net] = small_nets(1)
    torch.manual_seed(11)
    states = rng_states(np.random.default_rng(0), cuda=dev.type == "cuda")
    save_checkpoint(tmp_path / "r.pt", net, rng_state=states)
    first = torch.rand(8, device=dev)
    restore_rng_states(read_checkpoint(tmp_path / "r.pt")["rng_state"])
    assert torch.equal(torch.rand(8, device=dev), first)


def test_a_missing_gpu_is_one_sentence(monkeypatch):
    """resolve_device refuses a GPU this machine lacks (none, or not that index) and a device that is not one."""
    from bgnet.trainer.config import ConfigError
    from bgnet.trainer.selfplay import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="sees no CUDA GPU"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ConfigError, match="cuda:3 was asked for but torch sees 1 CUDA GPU$"):
        resolve_device("cuda:3")
    with pytest.raises(ConfigError, match="not cpu or cuda"):
        resolve_device("tpu")


def test_the_selfplay_bench_without_a_gpu_says_so_in_one_sentence():
    """bench/selfplay.py --device cuda on a machine without CUDA (hidden here even where there is one): exit 2."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    r = subprocess.run([sys.executable, "bench/selfplay.py", "--device", "cuda", "--seconds", "0.1"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == "bench/selfplay.py: error: device cuda was asked for but torch sees no CUDA GPU"
    assert r.stdout == ""
