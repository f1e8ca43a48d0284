"""``bgnet.cli.main.program``: the ``bgnet`` program keeps the garbage collector off while it imports, and every
command, passed through or not, runs with it on."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

import bgnet.cli.main as cli_main


@pytest.fixture(autouse=True)
def _thaw() -> Iterator[None]:
    """Give this process's objects back to the collector after ``program`` froze them."""
    yield
    gc.enable()
    gc.unfreeze()


def test_a_command_runs_with_the_collector_on_and_the_imports_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def run_command(prog: str, run: Any) -> int:
        seen["enabled"], seen["frozen"] = gc.isenabled(), gc.get_freeze_count()
        return 7

    monkeypatch.setattr(cli_main, "run_command", run_command)
    monkeypatch.setattr("sys.argv", ["bgnet", "moves", "4HPwATDgc/ABMA", "31"])
    gc.unfreeze()
    assert cli_main.program() == 7
    assert seen["enabled"] and seen["frozen"] > 0
    assert gc.isenabled()


def test_train_and_eval_run_with_the_collector_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def run_passthrough(command: str, rest: list[str]) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(cli_main, "_run_passthrough", run_passthrough)
    for command in ("train", "eval"):
        monkeypatch.setattr("sys.argv", ["bgnet", command, "--help"])
        assert cli_main.program() == 0
    assert seen == [True, True]
    assert gc.isenabled()


def test_a_bad_command_line_leaves_the_collector_on(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["bgnet", "moves", "4HPwATDgc/ABMA"])
    with pytest.raises(SystemExit) as done:
        cli_main.program()
    assert done.value.code == 2
    assert "error" in capsys.readouterr().err
    assert gc.isenabled()


def test_main_leaves_a_callers_collector_setting_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main, "run_command", lambda prog, run: 0)
    gc.disable()
    assert cli_main.main(["moves", "4HPwATDgc/ABMA", "31"]) == 0
    assert not gc.isenabled()
