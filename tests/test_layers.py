"""The folders of ``bgnet`` are its layers, and imports only go downwards through them.

The order of the folders is ``bgnet.LAYERS`` (lowest first); a module's layer is the
folder it lives in. Imports inside functions count (a lazy import is still a
dependency); imports under ``if TYPE_CHECKING:`` do not (they are annotations only).
Inside a folder any module may import another, as long as the module graph as a
whole has no cycle. An ``if __name__ == "__main__":`` stanza does not count either: it
lets ``python -m bgnet.trainer.rounds`` start its front end in ``bgnet.cli``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import bgnet

ROOT = Path(__file__).resolve().parents[1] / "bgnet"
FRONT_ENDS = {"cli", "serve"}
"""Front ends sit side by side at the top: neither imports the other, except that ``cli`` starts ``serve``."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module: str) -> str:
    """The folder of ``bgnet.<module>``: its first dotted part, or "" for the package's own modules."""
    return module.split(".")[0] if "." in module or (ROOT / module).is_dir() else ""


def _rank(module: str) -> int:
    layer = _layer(module)
    if layer == "":
        return len(bgnet.LAYERS) + (1 if module == "__main__" else -1)
    return bgnet.LAYERS.index(layer) if layer in bgnet.LAYERS else -1


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_main_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":``: a module's entry-point stanza, which may start a front end."""
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _imports(path: Path, module: str) -> set[str]:
    """The bgnet modules (relative names) that ``path`` imports at run time (entry-point stanzas aside)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and (_is_type_checking(node.test) or _is_main_guard(node.test)):
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
                hits = [s for s in subs if s in MODULES]
                found.update(hits if hits else [target])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


GRAPH = {module: _imports(path, module) for module, path in MODULES.items()}


def test_every_folder_is_a_layer() -> None:
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(bgnet.LAYERS)
    assert set(bgnet.LAYERS[-len(FRONT_ENDS):]) == FRONT_ENDS


def test_every_module_lives_in_a_layer_folder() -> None:
    flat = sorted(m for m in MODULES if _layer(m) == "" and m not in ("", "__main__"))
    assert flat == []


def test_every_folder_says_what_it_owns() -> None:
    for layer in bgnet.LAYERS:
        doc = ast.get_docstring(ast.parse((ROOT / layer / "__init__.py").read_text()))
        assert doc and len(doc.split()) >= 15, f"bgnet/{layer}/__init__.py needs a paragraph saying what it owns"


def _violations() -> list[str]:
    out = []
    for module, targets in GRAPH.items():
        for target in sorted(targets):
            mine, theirs = _layer(module), _layer(target)
            if mine == theirs:
                continue
            if mine in FRONT_ENDS and theirs in FRONT_ENDS:
                if (mine, theirs) == ("cli", "serve"):
                    continue
            elif _rank(target) < _rank(module):
                continue
            out.append(f"bgnet.{module} imports bgnet.{target or '(the package)'}")
    return out


def test_imports_only_go_downwards() -> None:
    assert _violations() == []


def _cycle() -> list[str]:
    """One import cycle among the modules, or [] when the graph is acyclic."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if nxt not in GRAPH or nxt == "":
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if state.get(nxt) is None and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(GRAPH):
        if state.get(node) is None and (found := visit(node)):
            return found
    return []


def test_no_import_cycles() -> None:
    assert _cycle() == []


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    """The import reader sees lazy imports and skips TYPE_CHECKING ones (so the tests above can fail)."""
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bgnet.cube import A\n"
                   "def f():\n    from bgnet.play.agents import load_agent\n    from bgnet.core import _game_kernels\n"
                   "if __name__ == '__main__':\n    from bgnet.cli.main import main\n")
    assert _imports(src, "core.position") == {"play.agents", "core._game_kernels"}


def test_the_architecture_document_names_every_layer() -> None:
    text = (ROOT.parent / "docs" / "ARCHITECTURE.md").read_text()
    for layer in bgnet.LAYERS:
        assert f"`{layer}/`" in text, f"docs/ARCHITECTURE.md does not say what {layer}/ owns"


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """Code, tests and docs cite the repository's own docs (docs/ARCHITECTURE.md), never the team's shared notes."""
    outside = ("DESIGN.md", "STYLE.md", "FORMATS.md", "../shared")
    repo = ROOT.parent
    files = [*repo.glob("bgnet/**/*.py"), *repo.glob("tests/*.py"), *repo.glob("bench/*.py"), *repo.glob("docs/*.md"),
             repo / "README.md", repo / "checkpoints" / "README.md"]
    found = [f"{path.relative_to(repo)}: {name}" for path in files if path != Path(__file__).resolve()
             for name in outside if name in path.read_text()]
    assert found == []
