"""``bgnet moves POSITION DICE [--json]`` through a subprocess: output, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bgnet import Position, legal_moves

ROOT = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
# From format_vectors.json: the opening 3-1 played 8/5 6/5.
AFTER_85_65 = "4HPwATCwZ/ABMA"
NEXT_85_65 = "sGfwATDgc/ABMA"


def bgnet(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m bgnet`` with ``args`` from the repository root."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "bgnet", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def _play_lines(stdout: str) -> list[tuple[str, str]]:
    """(notation, afterstate Position ID) of each numbered play line."""
    found = []
    for line in stdout.splitlines():
        m = re.match(r"\s*\d+\.\s+(.*?)\s+([A-Za-z0-9+/]{14})$", line)
        if m:
            found.append((m.group(1), m.group(2)))
    return found


def test_moves_text() -> None:
    res = bgnet("moves", START_ID, "31")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(str(Position.start()))
    plays = _play_lines(res.stdout)
    assert len(plays) == 16
    assert ("8/5 6/5", AFTER_85_65) in plays
    want = {(m.text, m.after.position_id()) for m in legal_moves(Position.start(), (3, 1))}
    assert set(plays) == want


def test_moves_accepts_xgid_and_dashed_dice() -> None:
    a = bgnet("moves", START_XGID, "3-1")
    b = bgnet("moves", START_ID, "31")
    assert a.returncode == 0 and a.stdout == b.stdout


def test_moves_json() -> None:
    res = bgnet("moves", START_ID, "31", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["position_id"] == START_ID and out["dice"] == [3, 1]
    assert len(out["moves"]) == 16
    [play] = [m for m in out["moves"] if m["move"] == "8/5 6/5"]
    assert play["after_position_id"] == AFTER_85_65 and play["next_position_id"] == NEXT_85_65
    assert sorted(map(tuple, play["steps"])) == [(6, 5), (8, 5)]


def test_moves_when_nothing_can_be_played() -> None:
    # X on the bar against a closed board.
    pos = Position.from_points({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    res = bgnet("moves", pos.position_id(), "65", "--json")
    assert res.returncode == 0, res.stderr
    [play] = json.loads(res.stdout)["moves"]
    assert play["move"] == "" and play["steps"] == [] and play["after_position_id"] == pos.position_id()
    text = bgnet("moves", pos.position_id(), "65")
    assert text.returncode == 0 and "no legal play" in text.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("moves", "4HPwATDgc/AB", "31"),  # wrong length
        ("moves", "4HPwATDgc/AB!A", "31"),  # bad character
        ("moves", "DwAAOOMMAAAAAA", "31"),  # both sides on one point
        ("moves", "//////////////", "31"),  # too many checkers
        ("moves", "XGID=nonsense", "31"),  # malformed XGID
        ("moves", START_ID, "71"),  # a die of 7
        ("moves", START_ID, "3"),  # one die
        ("moves", START_ID, "ab"),
        ("moves", START_ID, "0-1"),
        ("moves", START_ID),  # missing dice
        ("moves",),
        ("nosuchcommand",),
        (),
        ("moves", START_ID, "31", "--bogus"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    res = bgnet(*args)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bgnet: error: "), res.stderr
    assert res.stdout == ""


def test_help() -> None:
    res = bgnet("moves", "--help")
    assert res.returncode == 0 and "POSITION" in res.stdout and "DICE" in res.stdout


def test_main_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from bgnet.cli.main import main

    assert main(["moves", START_ID, "66", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["moves"]) == len(legal_moves(Position.start(), (6, 6)))
    assert main(["moves", START_ID, "77"]) == 2
    assert capsys.readouterr().err.startswith("bgnet: error: ")


def test_console_script() -> None:
    script = Path(sys.executable).with_name("bgnet")
    if not script.exists():
        script_path = shutil.which("bgnet")
        if script_path is None:
            pytest.skip("the bgnet console script is not installed (pip install -e .)")
        script = Path(script_path)
    res = subprocess.run([str(script), "moves", START_ID, "31"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    assert ("8/5 6/5", AFTER_85_65) in _play_lines(res.stdout)
