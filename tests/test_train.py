"""The trainer CLI: a smoke run, exact resume, and refusal of bad configs."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet.nets.model import read_checkpoint

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--games=120", "--batch_games=16", "--hidden=[8]", "--train_batch=512", "--minibatch=64",
        "--eval_every=0", "--checkpoint_every=60", "--log_every=30", "--no-progress"]


def run_train(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "train", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_smoke_run_writes_checkpoints_and_logs(tmp_path):
    out = tmp_path / "run"
    r = run_train("--config", "configs/quick.toml", *TINY, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "finished at 120 games" in r.stdout
    assert (out / "last.pt").is_file() and list(out.glob("games_*.pt"))
    assert list(out.glob("events.out.tfevents.*"))
    ckpt = read_checkpoint(out / "last.pt")
    assert ckpt["games"] == 120 and ckpt["config"]["hidden"] == [8]
    for key in ("optimizer", "selfplay", "rng_state", "git_sha", "model_config"):
        assert key in ckpt


DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]


@pytest.mark.parametrize("device", DEVICES)
def test_resume_gives_the_same_run_as_no_interruption(tmp_path, device):
    """An interrupted run resumed from its checkpoint ends with the same weights and games, on the CPU or a GPU
    (whose random states the checkpoint also keeps)."""
    straight, broken = tmp_path / "a", tmp_path / "b"
    on = f"--device={device}"
    assert run_train("--config", "configs/quick.toml", *TINY, on, "--out", str(straight)).returncode == 0
    r = run_train("--config", "configs/quick.toml", *TINY, on, "--out", str(broken), "--stop-after=50")
    assert r.returncode == 0 and "stopped at" in r.stdout
    part = read_checkpoint(broken / "last.pt")
    assert 50 <= part["games"] < 120
    r = run_train("--resume", str(broken / "last.pt"), "--out", str(broken), "--no-progress")
    assert r.returncode == 0, r.stderr
    a, b = read_checkpoint(straight / "last.pt"), read_checkpoint(broken / "last.pt")
    assert a["games"] == b["games"] == 120
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    assert np.array_equal(np.asarray(a["selfplay"]["boards"]), np.asarray(b["selfplay"]["boards"]))
    assert ("cuda" in a["rng_state"]) == (device == "cuda")


def test_a_missing_gpu_is_refused_with_one_sentence(tmp_path, monkeypatch, capsys):
    """`bgnet train --device cuda` where torch sees no GPU (or not that one): exit 2 with one sentence, before
    any folder is made. CUDA is hidden by hand, so this runs the same on a machine with a GPU."""
    from bgnet.cli.train import main

    out = tmp_path / "run"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["--config", "quick", *TINY, "--device", "cuda", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == "bgnet train: error: device cuda was asked for but torch sees no CUDA GPU\n"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert main(["--config", "quick", *TINY, "--device=cuda:1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == "bgnet train: error: device cuda:1 was asked for but torch sees 1 CUDA GPU\n"
    assert not out.exists()


def test_bad_config_is_refused_with_one_sentence(tmp_path):
    for args, fragment in [
        (["--bogus_key=3"], "unknown config key 'bogus_key'"),
        (["--games=many"], "must be an integer"),
        (["--lam=2"], "lam must be between 0 and 1"),
        (["--hidden=[a]"], "must be an integer"),
    ]:
        r = run_train("--config", "configs/quick.toml", *args, "--out", str(tmp_path / "x"))
        assert r.returncode == 2, (args, r.stderr)
        assert fragment in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("games = [\n")
    r = run_train("--config", str(bad))
    assert r.returncode == 2 and "not valid TOML" in r.stderr
    r = run_train("--config", "nope.toml")
    assert r.returncode == 2 and "is neither a file nor a bundled config" in r.stderr
    assert r.stderr.startswith("python -m train: error: ")  # the repository's entry point names itself
    r = run_train("--config", "quick", "--seed=-1")
    assert r.returncode == 2 and "seed must not be negative, got -1" in r.stderr
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"junk")
    r = run_train("--resume", str(junk))
    assert r.returncode == 2 and "corrupt" in r.stderr and "Traceback" not in r.stderr


def test_quick_config_beats_a_random_player(tmp_path, monkeypatch):
    """The quick config's net wins at least 90% of games against random play (issue target)."""
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    from bgnet.sim.duel import NeuralScorer, RandomScorer, paired_duel
    from bgnet.nets.fastnet import load_numpy_net

    out = tmp_path / "quick"
    r = run_train("--config", "configs/quick.toml", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    net = load_numpy_net(out / "last.pt")
    result = paired_duel(NeuralScorer(net.probs_of_boards), RandomScorer(3), n_pairs=200, seed=5)
    assert result.win_rate >= 0.9, result.summary()


def test_device_encoder_runs_the_same_loop(tmp_path):
    """encoder=torch (what a GPU run uses) trains end to end; its features equal numba's (test_encoding_torch)."""
    out = tmp_path / "t"
    r = run_train("--config", "configs/quick.toml", *TINY, "--encoder=torch", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert read_checkpoint(out / "last.pt")["config"]["encoder"] == "torch"
    r = run_train("--config", "configs/quick.toml", "--encoder=gpu", "--out", str(out))
    assert r.returncode == 2 and "encoder must be" in r.stderr


def test_help_lists_every_config_field_with_its_help():
    from dataclasses import fields

    from bgnet.trainer.config import TrainConfig, field_docs

    r = run_train("--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    docs = field_docs()
    assert set(docs) == {f.name for f in fields(TrainConfig)}
    for name, doc in docs.items():
        assert doc, f"field {name} has no docstring"
        assert f"--{name}=" in text and doc in text, name


def test_run_folders_carry_the_seed_and_the_time_unless_out_is_given(tmp_path):
    from bgnet.trainer.config import build_config
    from bgnet.trainer.selfplay import run_folder

    cfg = build_config(None, {"run_name": "quick", "seed": 7})
    a = run_folder(cfg, None, None, now=0.0)
    b = run_folder(cfg, None, None, now=3600.0)
    assert a.parent.name == "runs" and a.name.startswith("quick__7__") and a != b
    assert run_folder(cfg, str(tmp_path / "mine"), None) == tmp_path / "mine"
    ckpt = tmp_path / "r" / "last.pt"
    assert run_folder(cfg, None, str(ckpt)) == (tmp_path / "r").resolve()  # a resume stays in its folder
    # Through `bgnet train` from another folder, the bundled config by name: the run lands in
    # ./runs/<name>__<seed>__<time>/.
    r = subprocess.run([sys.executable, "-m", "bgnet", "train", "--config", "quick",
                        *TINY, "--games=16", "--seed=5", "--run_name=named"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    [made] = (tmp_path / "runs").iterdir()
    assert made.name.startswith("named__5__") and (made / "last.pt").is_file()
    assert read_checkpoint(made / "last.pt")["config"]["hidden"] == [8]  # quick.toml, then the overrides
    r = subprocess.run([sys.executable, "-m", "bgnet", "train", "--config", "no_such_config"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and r.stderr.startswith("bgnet train: error: config 'no_such_config' is neither")
