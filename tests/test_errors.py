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


PLAIN = ("ValueError", "RuntimeError", "TypeError")
"""Built-in errors the library must not raise on purpose: a caller could not tell bad input from a bug."""
INTERNAL = {("bgnet/core/_movegen_kernels.py", "RuntimeError")}
"""A plain raise that marks a bug, not bad input: the numba kernel's internal table overflowing."""


def _plain_raises() -> list[str]:
    """``path:line: Name`` for every ``raise ValueError(...)`` (or RuntimeError, TypeError) under bgnet/."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT.parent))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in PLAIN and (rel, exc.id) not in INTERNAL:
                    out.append(f"{rel}:{node.lineno}: {exc.id}")
    return out


def test_the_raise_scan_sees_a_plain_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bgnet").mkdir()
    source = "def f(x):\n    if x:\n        raise ValueError('bad')\n    raise SearchError('ok')\n"
    (tmp_path / "bgnet" / "m.py").write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path / "bgnet")
    assert _plain_raises() == ["bgnet/m.py:3: ValueError"]


def test_the_library_raises_no_plain_value_runtime_or_type_error() -> None:
    """Bad input gets a BgnetError subclass (one sentence, exit status 2, HTTP 4xx); anything else is a bug."""
    assert _plain_raises() == []
