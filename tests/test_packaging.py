"""A plain (non-editable) install works: a wheel built from the repository, installed into a fresh venv, gives hints.

The wheel must carry the released net inside the package (``bgnet/data/bgnet.pt``)
and must not install top-level ``train`` or ``eval`` packages. The fresh venv has
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
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    [whl] = out.glob("bgnet-*.whl")
    return whl


def test_the_wheel_holds_the_net_and_no_top_level_train_or_eval(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "bgnet/data/bgnet.pt" in names and "bgnet/py.typed" in names
    tops = {n.split("/")[0] for n in names if not n.startswith("bgnet-")}
    assert tops == {"bgnet"}, tops
    assert "bgnet/trainer/selfplay.py" in names and "bgnet/cli/eval.py" in names


def test_hint_from_a_wheel_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
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
                            "print(r.default_checkpoint())"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    module_file, net_file = where.stdout.split()
    assert module_file.startswith(str(site)) and net_file.startswith(str(site)), where.stdout
    hint = subprocess.run([str(env_dir / "bin" / "bgnet"), "hint", "4HPwATDgc/ABMA", "31", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert hint.returncode == 0, hint.stderr
    data = json.loads(hint.stdout)
    assert data["position_id"] == "4HPwATDgc/ABMA" and data["legal_plays"] == 16
    assert data["moves"][0]["move"] == "8/5 6/5"  # the opening 3-1 every strong net makes
    for top in ("train", "eval"):
        missing = subprocess.run([str(py), "-c", f"import {top}"], capture_output=True, text=True, cwd=tmp_path,
                                 env=env)
        assert missing.returncode != 0, f"a top-level {top!r} package was installed"
