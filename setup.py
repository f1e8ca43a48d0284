"""Build hook: the released net and the training configs go into the package.

The repository keeps one copy of the net (``checkpoints/bgnet.pt``, next to its model
card) and of the configs (``configs/**/*.toml``); a wheel or a plain ``pip install .``
carries them inside the package as ``bgnet/data/bgnet.pt`` and ``bgnet/data/configs/``
(with ``checkpoints/bgnet.npz``, the net's weights for numpy, as ``bgnet/data/bgnet.npz``, its pruning net
``checkpoints/pruning.npz`` as ``bgnet/data/pruning.npz`` and its student ``checkpoints/student.npz`` as
``bgnet/data/student.npz``),
so that ``bgnet hint`` and ``bgnet train --config quick`` work anywhere
(``bgnet.core.resources`` says where each is found).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
RELEASED_NET = ROOT / "checkpoints" / "bgnet.pt"
RELEASED_WEIGHTS = ROOT / "checkpoints" / "bgnet.npz"
RELEASED_PRUNING = ROOT / "checkpoints" / "pruning.npz"
RELEASED_STUDENT = ROOT / "checkpoints" / "student.npz"
CONFIGS = ROOT / "configs"


class BuildPyWithData(build_py):
    """``build_py`` that also copies the released net and the training configs into the built package."""

    def run(self) -> None:
        super().run()
        data = Path(self.build_lib) / "bgnet" / "data"
        data.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RELEASED_NET, data / "bgnet.pt")
        shutil.copyfile(RELEASED_WEIGHTS, data / "bgnet.npz")
        shutil.copyfile(RELEASED_PRUNING, data / "pruning.npz")
        shutil.copyfile(RELEASED_STUDENT, data / "student.npz")
        for config in sorted(CONFIGS.rglob("*.toml")):
            target = data / "configs" / config.relative_to(CONFIGS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(config, target)


setup(cmdclass={"build_py": BuildPyWithData})
