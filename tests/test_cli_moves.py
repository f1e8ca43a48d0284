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
ONE_LINE_ERROR = re.compile(r"^bgnet( [a-z]+)?: error: [^\n]+$")
"""A usage or library error: one line naming the command (and subcommand, for a usage error of one)."""
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
    """(notation, Position ID after the play with the opponent on roll) of each numbered play line."""
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
    assert ("8/5 6/5", NEXT_85_65) in plays  # the position GNU Backgammon shows next: the opponent on roll
    want = {(m.text, m.after.swap_sides().position_id()) for m in legal_moves(Position.start(), (3, 1))}
    assert set(plays) == want
    assert "dice 3-1:" in res.stdout and "opponent on roll" in res.stdout


def test_the_roll_is_printed_high_die_first() -> None:
    low_first, high_first = bgnet("moves", START_ID, "13"), bgnet("moves", START_ID, "3-1")
    assert low_first.returncode == 0 and "dice 3-1:" in low_first.stdout and "1-3" not in low_first.stdout
    assert set(_play_lines(low_first.stdout)) == set(_play_lines(high_first.stdout))
    assert json.loads(bgnet("moves", START_ID, "13", "--json").stdout)["dice"] == [3, 1]


def test_a_finished_game_or_dice_against_the_xgid_are_refused_as_hint_refuses_them() -> None:
    over = Position.from_points({6: 3}, {}).position_id()
    for command in ("moves", "hint"):
        res = bgnet(command, over, "31", "--json")
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr == ("bgnet: error: the game in this position is over: one side has borne off all 15 "
                              "checkers\n")
    rolled = START_XGID.replace(":00:", ":31:")
    assert bgnet("moves", rolled, "13").returncode == 0  # the same roll
    res = bgnet("moves", rolled, "52")
    assert res.returncode == 2 and "contradict the dice 3-1" in res.stderr


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
    assert play["position_id"] == AFTER_85_65 and play["position_id_opponent_on_roll"] == NEXT_85_65
    assert sorted(map(tuple, play["steps"])) == [(6, 5), (8, 5)]


def test_moves_when_nothing_can_be_played() -> None:
    # X on the bar against a closed board.
    pos = Position.from_points({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    res = bgnet("moves", pos.position_id(), "65", "--json")
    assert res.returncode == 0, res.stderr
    [play] = json.loads(res.stdout)["moves"]
    assert play["move"] == "" and play["steps"] == [] and play["position_id"] == pos.position_id()
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
    assert ONE_LINE_ERROR.match(res.stderr.strip()), res.stderr
    assert res.stdout == ""


def test_a_usage_error_names_the_subcommand_and_its_help() -> None:
    res = bgnet("moves", START_ID)
    assert res.returncode == 2 and res.stderr == (
        "bgnet moves: error: the following arguments are required: DICE (see 'bgnet moves --help')\n")


def test_help() -> None:
    res = bgnet("moves", "--help")
    assert res.returncode == 0 and "POSITION" in res.stdout and "DICE" in res.stdout


def test_the_top_level_help_lists_every_command() -> None:
    res = bgnet("--help")
    listed = set(re.findall(r"^    ([a-z]+) ", res.stdout, re.MULTILINE))
    assert res.returncode == 0
    assert listed == {"moves", "hint", "cube", "play", "serve", "analyze", "rollout", "eval", "train"}, res.stdout


def test_main_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from bgnet.cli.main import main

    assert main(["moves", START_ID, "66", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["moves"]) == len(legal_moves(Position.start(), (6, 6)))
    assert main(["moves", START_ID, "77"]) == 2
    assert capsys.readouterr().err.startswith("bgnet: error: ")


def _with_moves_running(monkeypatch: pytest.MonkeyPatch, run: object) -> None:
    """Make ``bgnet moves`` run ``run`` instead of listing plays."""
    import dataclasses

    from bgnet.cli import main as cli

    table = [dataclasses.replace(cmd, run=run) if cmd.name == "moves" else cmd for cmd in cli.SUBCOMMANDS]
    monkeypatch.setattr(cli, "SUBCOMMANDS", table)


def test_a_bgnet_error_is_one_sentence_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from bgnet import HintError
    from bgnet.cli.main import main

    def refuse(args: object) -> int:
        raise HintError("no  such\n play")

    _with_moves_running(monkeypatch, refuse)
    assert main(["moves", START_ID, "31"]) == 2
    assert capsys.readouterr().err == "bgnet: error: no such play\n"


@pytest.mark.parametrize("bug", [ValueError, TypeError, RuntimeError, KeyError])
def test_any_other_exception_is_a_bug_and_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch, bug: type) -> None:
    from bgnet.cli.main import main

    def broken(args: object) -> int:
        raise bug("a bug, not bad input")

    _with_moves_running(monkeypatch, broken)
    with pytest.raises(bug, match="a bug, not bad input"):
        main(["moves", START_ID, "31"])


def test_console_script() -> None:
    script = Path(sys.executable).with_name("bgnet")
    if not script.exists():
        script_path = shutil.which("bgnet")
        if script_path is None:
            pytest.skip("the bgnet console script is not installed (pip install -e .)")
        script = Path(script_path)
    res = subprocess.run([str(script), "moves", START_ID, "31"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    assert ("8/5 6/5", NEXT_85_65) in _play_lines(res.stdout)
