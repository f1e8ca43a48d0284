"""Files bgnet ships and keeps: where the released net and the training configs lie (a wheel install or the
repository), and its cache."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
DATA_DIR = _PACKAGE_DIR / "data"
"""Data files shipped inside the package (weights, tables, the released net)."""
PACKAGED_NET = DATA_DIR / "bgnet.pt"
"""The released net inside an installed package (copied there by the build, see setup.py)."""
REPOSITORY_NET = _PACKAGE_DIR.parent / "checkpoints" / "bgnet.pt"
"""The released net in a source checkout (an editable install), next to its model card."""


PACKAGED_WEIGHTS = DATA_DIR / "bgnet.npz"
"""The released net's weights as numpy arrays inside an installed package (copied there by the build)."""
REPOSITORY_WEIGHTS = _PACKAGE_DIR.parent / "checkpoints" / "bgnet.npz"
"""The same in a source checkout, beside ``bgnet.pt``: read without importing torch on a first run."""


PACKAGED_PRUNING = DATA_DIR / "pruning.npz"
"""The released net's pruning net inside an installed package (``bgnet.nets.pruning``; copied by the build)."""
REPOSITORY_PRUNING = _PACKAGE_DIR.parent / "checkpoints" / "pruning.npz"
"""The same in a source checkout, beside ``bgnet.pt``."""


PACKAGED_STUDENT = DATA_DIR / "student.npz"
"""The released net's student (a narrower net that plays like it, ``bgnet.nets.companion``) inside an installed
package (copied by the build)."""
REPOSITORY_STUDENT = _PACKAGE_DIR.parent / "checkpoints" / "student.npz"
"""The same in a source checkout, beside ``bgnet.pt``."""


def shipped_student_nets() -> list[Path]:
    """Where the released net's student may lie (``bgnet.nets.companion`` checks each one's checkpoint digest)."""
    return [PACKAGED_STUDENT, REPOSITORY_STUDENT]


def shipped_pruning_nets() -> list[Path]:
    """Where the released net's pruning net may lie (``bgnet.nets.pruning`` checks each one's checkpoint digest)."""
    return [PACKAGED_PRUNING, REPOSITORY_PRUNING]


def shipped_weights() -> list[Path]:
    """Where numpy copies of the released net's weights may lie (``bgnet.nets.fastnet`` checks each one's digest)."""
    return [PACKAGED_WEIGHTS, REPOSITORY_WEIGHTS]


def default_checkpoint() -> Path:
    """The released net: the packaged copy when installed from a wheel, else the repository's."""
    return PACKAGED_NET if PACKAGED_NET.exists() else REPOSITORY_NET


PACKAGED_CONFIGS = DATA_DIR / "configs"
"""The training configs inside an installed package (``configs/**/*.toml``, copied there by the build)."""
REPOSITORY_CONFIGS = _PACKAGE_DIR.parent / "configs"
"""The training configs of a source checkout."""


def config_dir() -> Path:
    """The bundled training configs: the repository's ``configs/`` in a source checkout (so edits there count),
    else the copy packaged in the wheel."""
    in_checkout = (_PACKAGE_DIR.parent / "pyproject.toml").is_file() and REPOSITORY_CONFIGS.is_dir()
    return REPOSITORY_CONFIGS if in_checkout else PACKAGED_CONFIGS


def cache_dir() -> Path:
    """The user's cache folder for bgnet (the weight cache, the bear-off database): ``$BGNET_CACHE``, else
    ``$XDG_CACHE_HOME/bgnet``, else ``~/.cache/bgnet``. ``$BGNET_CACHE_DIR``, the bear-off database's older
    name for it, is still read when ``$BGNET_CACHE`` is unset (deprecated)."""
    if os.environ.get("BGNET_CACHE"):
        return Path(os.environ["BGNET_CACHE"])
    if os.environ.get("BGNET_CACHE_DIR"):
        warnings.warn("$BGNET_CACHE_DIR is deprecated: set $BGNET_CACHE", DeprecationWarning, stacklevel=2)
        return Path(os.environ["BGNET_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bgnet"
