"""Build hook: the released net (``checkpoints/bgnet.pt``) goes into the package as ``bgnet/data/bgnet.pt``.

The repository keeps one copy of the net, next to its model card; a wheel or a plain
``pip install .`` carries it inside the package so that ``bgnet hint`` works anywhere.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

RELEASED_NET = Path(__file__).resolve().parent / "checkpoints" / "bgnet.pt"


class BuildPyWithNet(build_py):
    """``build_py`` that also copies the released net into the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "bgnet" / "data" / "bgnet.pt"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RELEASED_NET, target)


setup(cmdclass={"build_py": BuildPyWithNet})
