"""`bgnet train --engine=device`: the device self-play engine drives a whole run (logs, checkpoints, evaluation,
Ctrl-C), its config is refused where it cannot work, and a resumed run continues exactly."""

import dataclasses
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bgnet.nets.model import BgNet, ModelConfig, read_checkpoint

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--config", "configs/quick.toml", "--engine=device", "--games=240", "--batch_games=16", "--hidden=[16]",
        "--train_batch=256", "--minibatch=32", "--eval_every=0", "--checkpoint_every=100", "--log_every=50",
        "--exploration=0.05", "--no-progress"]
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]


def run_train(*args):
    return subprocess.run([sys.executable, "-m", "train", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def scalars(out: Path) -> dict[str, list[float]]:
    """The TensorBoard scalars a run wrote: tag -> values in step order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out))
    events.Reload()
    return {tag: [e.value for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_a_device_engine_run_writes_checkpoints_logs_and_evaluations(tmp_path):
    out = tmp_path / "run"
    r = run_train(*TINY, "--device=cpu", "--eval_every=120", "--eval_pairs=10", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "finished at" in r.stdout
    assert (out / "last.pt").is_file() and len(list(out.glob("games_*.pt"))) >= 2
    ckpt = read_checkpoint(out / "last.pt")
    assert ckpt["games"] >= 240 and ckpt["config"]["engine"] == "device" and ckpt["config"]["hidden"] == [16]
    assert "selfplay" not in ckpt and set(ckpt["device_trainer"]) == {"play", "optimizer", "generator", "learned_to"}
    assert int(ckpt["device_trainer"]["play"]["finished"]) == ckpt["games"]
    logged = scalars(out)
    for tag in ("charts/games_per_s", "losses/td_sse", "charts/learning_rate", "eval/ppg_vs_pubeval"):
        assert logged.get(tag), tag
    rates = logged["charts/learning_rate"]
    assert rates[0] > rates[-1] >= 0.001  # quick.toml's cosine decay from lr 0.003 towards lr_final 0.001
    assert all(loss == loss for loss in logged["losses/td_sse"])  # the fits ran: no NaN left


@pytest.mark.parametrize("device", DEVICES)
def test_a_resumed_device_run_ends_with_the_same_weights_as_an_unbroken_one(tmp_path, device):
    straight, broken = tmp_path / "a", tmp_path / "b"
    on = f"--device={device}"
    r = run_train(*TINY, on, "--out", str(straight))
    assert r.returncode == 0, r.stderr
    r = run_train(*TINY, on, "--out", str(broken), "--stop-after=120")
    assert r.returncode == 0 and "stopped at" in r.stdout, r.stderr
    assert 120 <= read_checkpoint(broken / "last.pt")["games"] < 240
    r = run_train("--resume", str(broken / "last.pt"), "--no-progress")
    assert r.returncode == 0 and "finished at" in r.stdout, r.stderr
    a, b = read_checkpoint(straight / "last.pt"), read_checkpoint(broken / "last.pt")
    assert a["games"] == b["games"] >= 240
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    play_a, play_b = a["device_trainer"]["play"], b["device_trainer"]["play"]
    assert torch.equal(play_a["boards"], play_b["boards"]) and torch.equal(play_a["generator"], play_b["generator"])
    assert a["device_trainer"]["learned_to"] == b["device_trainer"]["learned_to"]


def test_engine_settings_that_cannot_work_are_refused(monkeypatch):
    from bgnet.features.registry import FEATURE_SETS
    from bgnet.trainer.config import ConfigError, build_config

    assert build_config(None, {}).engine == "host"
    assert build_config(None, {"engine": "device", "feature_version": 2}).engine == "device"
    with pytest.raises(ConfigError, match="^engine must be host or device, not 'gpu'$"):
        build_config(None, {"engine": "gpu"})
    with pytest.raises(ConfigError, match="^engine device needs backend local"):
        build_config(None, {"engine": "device", "backend": "ray"})
    build_config(None, {"engine": "host", "backend": "ray"})  # the host engine still runs on Ray
    monkeypatch.setitem(FEATURE_SETS, 1, dataclasses.replace(FEATURE_SETS[1], torch_encoder=None))
    with pytest.raises(ConfigError, match="^engine device needs a feature set with a torch encoder, and "
                                          "feature_version 1 has none$"):
        build_config(None, {"engine": "device", "feature_version": 1})
    build_config(None, {"engine": "host", "feature_version": 1})


def test_the_command_line_refuses_an_unknown_engine_with_one_sentence(tmp_path):
    r = run_train(*TINY, "--engine=gpu", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr == "python -m train: error: engine must be host or device, not 'gpu'\n"


def test_the_device_kernels_reach_the_engine_and_a_cpu_without_triton_s_interpreter_is_refused(tmp_path, monkeypatch):
    """``--device_kernels=fused`` makes the run's self-play (and so its fits) use the fused kernels; where they cannot
    run, the command says so in one sentence before it starts."""
    import os

    pytest.importorskip("triton")

    from bgnet.trainer.config import build_config
    from bgnet.trainer.device_run import device_trainer

    monkeypatch.setenv("TRITON_INTERPRET", "1")  # as the suite runs Triton without a GPU
    cfg = build_config("quick", {"engine": "device", "device_kernels": "fused", "batch_games": 4})
    net = BgNet(ModelConfig.for_features([8], "relu", cfg.feature_version))
    assert device_trainer(cfg, net, torch.device("cpu")).play.kernels == "fused"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, "-m", "train", *TINY, "--device_kernels=fused", "--out", str(tmp_path / "x")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 2 and r.stderr == ("python -m train: error: fused device kernels run on a CUDA GPU, not on "
                                              "cpu: use torch there\n")
    assert not (tmp_path / "x").exists()


def test_a_checkpoint_resumes_only_with_the_engine_that_wrote_it(tmp_path):
    from bgnet.nets.model import CheckpointError, save_checkpoint
    from bgnet.trainer.config import build_config
    from bgnet.trainer.training_run import TrainOptions, run_config

    host = build_config(None, {"hidden": [8]})
    net = BgNet(ModelConfig.for_features([8], "relu", 1))
    path = tmp_path / "host.pt"
    save_checkpoint(path, net, config=dataclasses.asdict(host), games=0, selfplay={})
    assert run_config(TrainOptions(resume=str(path)))[0].engine == "host"
    with pytest.raises(CheckpointError, match="was written by the host engine and resumes only with engine host, "
                                              "not device$"):
        run_config(TrainOptions(resume=str(path), overrides={"engine": "device"}))
    released = tmp_path / "released.pt"
    save_checkpoint(released, net)
    with pytest.raises(CheckpointError, match="has no training state to resume"):
        run_config(TrainOptions(resume=str(released), overrides={"engine": "device"}))


def test_ctrl_c_ends_a_device_run_with_a_checkpoint(tmp_path, monkeypatch, capsys, one_torch_thread):
    """SIGINT during a fit interval: the interval ends, last.pt is written, the run says it was interrupted, and
    the handler from before the run is back."""
    import bgnet.trainer.device_run as device_run
    from bgnet.cli.train import parse_args
    from bgnet.trainer.selfplay import train

    play_one_fit = device_run.play_one_fit

    def interrupted(trainer, lr, exploration):
        play_one_fit(trainer, lr, exploration)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(device_run, "play_one_fit", interrupted)
    before = signal.getsignal(signal.SIGINT)
    assert train(parse_args([*TINY, "--device=cpu", "--out", str(tmp_path / "run")])) == 0
    assert capsys.readouterr().out.startswith("interrupted at ")
    ckpt = read_checkpoint(tmp_path / "run" / "last.pt")
    assert 0 <= ckpt["games"] < 240 and ckpt["device_trainer"]["learned_to"] == 16  # one fit interval: 256/16 steps
    assert signal.getsignal(signal.SIGINT) is before


def test_the_config_s_learning_settings_reach_the_device_trainer():
    from bgnet.trainer.config import build_config
    from bgnet.trainer.device_run import device_learning

    cfg = build_config("configs/gpu.toml", {"cuda_graphs": True, "device": "cpu"})
    learning = device_learning(cfg)
    assert learning.cuda_graphs and learning.minibatch == cfg.minibatch and learning.lam == cfg.lam
    assert learning.fit_every == cfg.train_batch // cfg.batch_games  # 262,144 positions a fit: every 4 steps
    assert not device_learning(build_config("configs/gpu.toml", {"device": "cpu"})).cuda_graphs
