"""Cube and match logic: the match state with its one frozen rule set (Jacoby, beavers,
raccoons, Holland, maximum cube), match equity tables, and cube decisions as pure
functions of five probabilities and the match state. Knows no net and no search;
imports ``core``, ``features`` and ``nets``.
"""

from importlib import import_module
from typing import Any


def __getattr__(name: str) -> Any:
    """``from bgnet.cube import cube_decision`` (the documented name) reaches ``bgnet.cube.decision``."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(import_module("bgnet.cube.decision"), name)
    except AttributeError:
        raise AttributeError(f"module 'bgnet.cube' has no attribute {name!r}") from None
