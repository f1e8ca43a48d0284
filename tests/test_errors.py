"""One error base: every error class bgnet defines is a ``BgnetError`` (a ``ValueError``) and is exported from bgnet."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import bgnet
from bgnet import BgnetError

ROOT = Path(__file__).resolve().parents[1] / "bgnet"
NOT_ERRORS = {"Quit", "_TooLarge"}
"""Exceptions used for control flow inside one module (the terminal game's quit, the web server's body limit)."""


def _defined_exceptions() -> list[tuple[str, str]]:
    """(module, class) for every class in bgnet whose name ends in Error or that derives from an exception."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name not in NOT_ERRORS:
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if node.name.endswith("Error") or bases & {"ValueError", "Exception", "RuntimeError"}:
                    out.append((rel, node.name))
    return out


ERRORS = _defined_exceptions()


def test_the_scan_finds_the_library_errors() -> None:
    names = {name for _, name in ERRORS}
    assert {"InvalidPositionError", "IllegalMoveError", "GameRuleError", "SearchError", "AgentSpecError"} <= names


@pytest.mark.parametrize("module, name", ERRORS, ids=[f"{m}.{n}" for m, n in ERRORS])
def test_every_error_is_a_bgnet_error_exported_from_bgnet(module: str, name: str) -> None:
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError as exc:  # an optional extra (the web stack, Ray) that is not installed
        pytest.skip(str(exc))
    assert issubclass(cls, BgnetError) and issubclass(cls, ValueError), f"{module}.{name} must derive from BgnetError"
    assert name in bgnet.ERROR_CLASSES and getattr(bgnet, name) is cls


def test_a_bad_position_is_caught_as_a_bgnet_error() -> None:
    with pytest.raises(BgnetError):
        bgnet.Position.from_position_id("not an id")
    with pytest.raises(BgnetError):
        bgnet.legal_moves(bgnet.Position.start(), "77")
