"""Imports only go downwards: every ``bgnet`` module imports only modules below it in the layer order.

The order is the one the ``bgnet/__init__.py`` docstring describes (DESIGN.md's
layers, with an order inside each): engine, cube and match logic, coach, front
ends. Imports inside functions count (a lazy import is still a dependency);
imports under ``if TYPE_CHECKING:`` do not (they are annotations only). A new
module must be placed in ``LAYERS`` before it can be imported by anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "bgnet"

LAYERS: dict[str, list[str]] = {
    "engine": [
        "errors", "resources", "blas", "formats", "render", "probs", "notation", "_movegen_kernels", "movegen", "position",
        "rules", "_game_kernels", "protocols", "encoding", "encoding_torch", "pubeval", "ranker", "bearoff", "model",
        "_net_kernels", "fastnet",
    ],
    "cube and match logic": ["match", "met", "search", "_cube_kernels", "cube", "game"],
    "coach": [
        "scorers", "selfplay", "td", "learner", "duel_stats", "duel", "backends", "_rollout_kernels", "rollout",
        "trainer", "trainer.config", "trainer.inference", "trainer.distributed", "trainer.selfplay", "trainer.export",
        "trainer.ranker",
    ],
    "front ends": [
        "hint", "agents", "answers", "", "matchfile", "evaluation", "evaluation.tournament", "evaluation.curve",
        "evaluation.runner", "evaluation.games", "evaluation.cli", "trainer.rounds", "analysis", "analyze_cli", "play", "serve", "rollout_cli", "cli", "__main__",
    ],
}
"""Modules (relative to ``bgnet``; a package's submodules may be listed, else they share its place), lowest first.

``trainer.rounds`` runs duels through ``bgnet.evaluation`` and loads agents, so it
sits with the front ends although it lives in the trainer package.

``""`` is the package itself (``import bgnet``): its eager imports are engine modules
and the rest load lazily, so front ends may use it but nothing below them.
"""

KNOWN: set[str] = set()
"""Violations in modules other helpers are still writing, each to be fixed there (the test below fails
when one disappears, so the list only shrinks)."""

ORDER = [m for layer in LAYERS.values() for m in layer]
RANK = {m: i for i, m in enumerate(ORDER)}


def _place(module: str) -> str:
    """The LAYERS entry of ``bgnet.<module>`` (its own, else its package's)."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in RANK:
            return name
    return module


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The bgnet modules (relative names) that ``path`` imports at run time."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "bgnet" or alias.name.startswith("bgnet."):
                    found.add(alias.name[6:])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "bgnet" or node.module.startswith("bgnet.")):
                target = node.module[6:]
            else:
                target = None
            if target is not None:
                subs = [f"{target}.{a.name}".strip(".") for a in node.names]
                hits = [s for s in subs if s in known or s in RANK]
                found.update(hits if hits else [target])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


MODULES = _modules()


def test_every_module_has_a_place_in_the_layers() -> None:
    missing = sorted(m for m in MODULES if _place(m) not in RANK)
    assert not missing, f"place these modules in LAYERS: {missing}"


def _violations() -> list[str]:
    out = []
    for module, path in MODULES.items():
        me = _place(module)
        for target in sorted(_imports(path, module, set(MODULES))):
            there = _place(target)
            if there == me:
                continue
            if RANK.get(there, len(ORDER)) >= RANK.get(me, -1):
                out.append(f"bgnet.{module} imports bgnet.{target or '(the package)'}")
    return out


def test_imports_only_go_downwards() -> None:
    found = set(_violations())
    assert sorted(found - KNOWN) == []
    assert sorted(KNOWN - found) == [], "fixed: remove these from KNOWN"


@pytest.mark.parametrize("module", ["position", "notation", "movegen"])
def test_the_board_layer_has_no_cycle(module: str) -> None:
    """position, notation and movegen once imported one another; now notation < movegen < position."""
    below = {m for m in ORDER[: RANK[module]]}
    assert _imports(MODULES[module], module, set(MODULES)) <= below


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    """The import reader sees lazy imports and skips TYPE_CHECKING ones (so the test above can fail)."""
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bgnet.cube import A\n"
                   "def f():\n    from bgnet.agents import load_agent\n    from bgnet import _game_kernels\n")
    assert _imports(src, "position", set(MODULES)) == {"agents", "_game_kernels"}
