"""A plain (non-editable) install works: a wheel built from the repository, installed into a fresh venv, gives
hints, evaluates and trains with the names the README uses.

The wheel must carry the released net and the training configs inside the package
(``bgnet/data/bgnet.pt``, ``bgnet/data/configs/``) and must not install top-level
``train`` or ``eval`` packages. The fresh venv has
no site-packages of its own but torch, numpy and numba, which it borrows from the
development venv through a path file (installing them would need the network);
bgnet itself comes only from the wheel, and the command runs outside the
repository with an empty weight cache, so nothing can be found through the
checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools")
    out = tmp_path_factory.mktemp("wheel")
    src = tmp_path_factory.mktemp("src")  # a copy, so that build/ and *.egg-info stay out of the checkout
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    shutil.copytree(ROOT / "bgnet", src / "bgnet", ignore=skip)
    (src / "checkpoints").mkdir()
    shutil.copy(ROOT / "checkpoints" / "bgnet.pt", src / "checkpoints" / "bgnet.pt")
    shutil.copy(ROOT / "checkpoints" / "bgnet.npz", src / "checkpoints" / "bgnet.npz")
    shutil.copy(ROOT / "checkpoints" / "pruning.npz", src / "checkpoints" / "pruning.npz")
    shutil.copy(ROOT / "checkpoints" / "student.npz", src / "checkpoints" / "student.npz")
    shutil.copytree(ROOT / "configs", src / "configs")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    [whl] = out.glob("bgnet-*.whl")
    return whl


def test_the_wheel_holds_the_net_and_no_top_level_train_or_eval(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "bgnet/data/bgnet.pt" in names and "bgnet/data/bgnet.npz" in names and "bgnet/py.typed" in names
    assert "bgnet/data/pruning.npz" in names and "bgnet/data/student.npz" in names
    configs = {n for n in names if n.startswith("bgnet/data/configs/")}
    assert configs == {"bgnet/data/configs/" + p.relative_to(ROOT / "configs").as_posix()
                       for p in (ROOT / "configs").rglob("*.toml")}
    assert "bgnet/data/configs/quick.toml" in configs and "bgnet/data/configs/release/08_ply2.toml" in configs
    tops = {n.split("/")[0] for n in names if not n.startswith("bgnet-")}
    assert tops == {"bgnet"}, tops
    assert "bgnet/trainer/selfplay.py" in names and "bgnet/cli/eval.py" in names


@dataclass(frozen=True)
class Installed:
    """A fresh venv with the wheel installed: its bin folder, the environment to run it in, a folder outside the
    repository to run it from."""

    bin: Path
    env: dict[str, str]
    cwd: Path

    def run(self, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
        """``bgnet ARGS`` from the installed wheel."""
        return subprocess.run([str(self.bin / "bgnet"), *args], capture_output=True, text=True, cwd=self.cwd,
                              env=self.env, timeout=timeout)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp_path = tmp_path_factory.mktemp("installed")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # Borrow the heavy dependencies (not bgnet: the dev venv has it only as an editable finder, which a
    # plain path entry does not run).
    (site / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q",
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["BGNET_CACHE"] = str(tmp_path / "cache")  # cold: the net is read from the package itself
    where = subprocess.run([str(py), "-c", "import bgnet, bgnet.core.resources as r; print(bgnet.__file__); "
                            "print(r.default_checkpoint()); print(r.config_dir())"], capture_output=True, text=True,
                           cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    module_file, net_file, config_dir = where.stdout.split()
    assert all(f.startswith(str(site)) for f in (module_file, net_file, config_dir)), where.stdout
    return Installed(bin=env_dir / "bin", env=env, cwd=tmp_path)


def test_hint_from_a_wheel_in_a_fresh_venv(installed: Installed) -> None:
    hint = installed.run("hint", "4HPwATDgc/ABMA", "31", "--json")
    assert hint.returncode == 0, hint.stderr
    data = json.loads(hint.stdout)
    assert data["position_id"] == "4HPwATDgc/ABMA" and data["legal_plays"] == 16
    assert data["moves"][0]["move"] == "8/5 6/5"  # the opening 3-1 every strong net makes
    rollout = installed.run("rollout", "4HPwATDgc/ABMA", "31", "--plays", "8/5 6/5", "--trials", "36", "--truncate",
                            "2", "--json")
    assert rollout.returncode == 0, rollout.stderr
    settings = json.loads(rollout.stdout)["settings"]  # the packaged pruning net and student serve the packaged net
    assert settings["pruned_play"] is True and settings["luck_net"] == "student"
    for top in ("train", "eval"):
        missing = subprocess.run([str(installed.bin / "python"), "-c", f"import {top}"], capture_output=True,
                                 text=True, cwd=installed.cwd, env=installed.env)
        assert missing.returncode != 0, f"a top-level {top!r} package was installed"


def test_the_readme_names_work_from_a_wheel(installed: Installed) -> None:
    """``--model default``, ``bgnet eval default pubeval`` and ``--config quick`` need no checkout."""
    hint = installed.run("hint", "4HPwATDgc/ABMA", "31", "--ply", "0", "--model", "default")
    assert hint.returncode == 0, hint.stderr
    assert "1. Cubeful 0-ply  8/5 6/5" in hint.stdout
    duel = installed.run("eval", "default", "pubeval", "--games", "4", "--seed", "1", "--quiet")
    assert duel.returncode == 0, duel.stderr
    assert duel.stdout.startswith("default vs pubeval: 4 games from 2 paired deals")
    out = installed.cwd / "run"
    train = installed.run("train", "--config", "quick", "--games=50", "--batch_games=10", "--hidden=[8]",
                          "--train_batch=256", "--minibatch=64", "--eval_every=0", "--checkpoint_every=50",
                          "--log_every=50", "--no-progress", "--out", str(out))
    assert train.returncode == 0, train.stderr
    assert "finished at 50 games" in train.stdout and (out / "last.pt").is_file()
    odd = installed.run("eval", "default", "pubeval", "--games", "3")
    assert odd.returncode == 2 and odd.stderr.startswith("bgnet eval: error: argument --games: '3' is odd")
