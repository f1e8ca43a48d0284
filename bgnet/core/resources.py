"""Files bgnet ships: where the released net lies, in a wheel install or in the repository."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
DATA_DIR = _PACKAGE_DIR / "data"
"""Data files shipped inside the package (weights, tables, the released net)."""
PACKAGED_NET = DATA_DIR / "bgnet.pt"
"""The released net inside an installed package (copied there by the build, see setup.py)."""
REPOSITORY_NET = _PACKAGE_DIR.parent / "checkpoints" / "bgnet.pt"
"""The released net in a source checkout (an editable install), next to its model card."""


def default_checkpoint() -> Path:
    """The released net: the packaged copy when installed from a wheel, else the repository's."""
    return PACKAGED_NET if PACKAGED_NET.exists() else REPOSITORY_NET
