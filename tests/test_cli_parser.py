"""``bgnet.cli.parser``: the cube rule flags declared once from ``CubeRules``, and one money rule set that every
command and the HTTP API apply the same way, each naming the rules it used."""

from __future__ import annotations

import io
import json
import re
from dataclasses import fields
from typing import Any

import pytest

from bgnet.cli.eval import main as eval_main
from bgnet.cli.main import build_parser, main
from bgnet.cube.match import DEFAULT_MONEY_RULES, CubeRules

DECISION_COMMANDS = ("hint", "cube", "rollout")
"""Commands judging one decision: every rule flag but --holland (it counts the rolls of a whole game)."""


def help_of(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``bgnet COMMAND --help`` prints."""
    if command == "eval":
        assert eval_main(["--help"]) == 0  # its own parser, which returns the status
    else:
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args([command, "--help"])
        assert done.value.code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize("command", [*DECISION_COMMANDS, "play", "eval"])
def test_every_command_takes_one_flag_per_cube_rule(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(command, capsys)
    for f in fields(CubeRules):
        flag = "--" + f.name.replace("_", "-")
        wanted = not (f.name == "holland" and command in DECISION_COMMANDS)
        spelled = f"{flag}, --no-{flag[2:]}" if f.type in ("bool", bool) else f"{flag} N"
        assert (spelled in text) == wanted, (command, spelled)
    assert "Jacoby rule on, beavers and raccoons allowed" in " ".join(text.split())  # the defaults, said once


def test_the_flags_are_none_unless_given_and_read_back_by_name() -> None:
    from bgnet.cli.parser import cube_rule_choices

    assert cube_rule_choices(build_parser().parse_args(["cube", "4HPwATDgc/ABMA"])) == {}
    args = build_parser().parse_args(["play", "--no-jacoby", "--max-cube", "8", "--holland", "--length", "3"])
    assert cube_rule_choices(args) == {"jacoby": False, "max_cube": 8, "holland": True}


def test_the_money_defaults_are_gnubgs() -> None:
    assert DEFAULT_MONEY_RULES == CubeRules(jacoby=True, beavers=True, raccoons=True, holland=False, max_cube=0)
    assert DEFAULT_MONEY_RULES.for_play(False) == CubeRules()


# -- the same position and rules, the same verdict everywhere ---------------------------------------------------

PLAY_SEED = 1
"""With this seed the bot opens, so the player's first turn starts before the roll, with the cube centred."""
RULE_SETS = [((), {}, "No double, beaver", "money game, Jacoby rule on, beavers and raccoons allowed"),
             (("--no-beavers",), {"beavers": "false"}, "No double, take", "money game, Jacoby rule on, no beavers")]


def run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    """What ``bgnet ARGV`` prints on stdout, run in this process (exit status 0 asserted)."""
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = eval_main(argv[1:]) if argv[0] == "eval" else main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


@pytest.fixture(scope="module")
def api() -> Any:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from bgnet.serve.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize("flags, fields_, verdict, rules", RULE_SETS)
def test_every_command_gives_the_same_cube_verdict_and_names_its_rules(
        flags: tuple[str, ...], fields_: dict[str, str], verdict: str, rules: str, api: Any,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # play: the player asks for the cube hint at his first turn; the position is the one on his board
    played = run(["play", "--seed", str(PLAY_SEED), "--ply", "0", *flags], capsys, "hint\nquit\n", monkeypatch)
    assert f"Rules: {rules}." in played
    before_hint = played.split("Your turn: roll, double, hint or quit> ")[0]
    position = re.findall(r"Position ID (\S+) \(your side\)", before_hint)[-1]
    assert f"Rules assumed: {rules}" in played and f"Proper cube action: {verdict}\n" in played

    cube = json.loads(run(["cube", position, "--ply", "0", "--json", *flags], capsys))
    hint = json.loads(run(["hint", position, "--ply", "0", "--json", *flags], capsys))
    rollout = json.loads(run(["rollout", position, "--trials", "36", "--truncate", "2", "--json", "--no-progress",
                              *flags], capsys))
    served = api.get("/api/cube", params={"position": position, **fields_}).json()
    for answer in (cube, hint, rollout, served):
        assert answer["decision"]["proper_cube_action"] == verdict and answer["action"] == "no double"
        assert answer["rules"]["text"] == rules and answer["match"]["beavers"] == (verdict.endswith("beaver"))
    assert rollout["decision"]["method"] == "cubeful trials"  # the verdict of the rolled-out equities
    text = run(["cube", position, "--ply", "0", *flags], capsys)
    assert f"Rules assumed: {rules}\n" in text and f"Proper cube action: {verdict}\n" in text

    report = json.loads(run(["eval", "default", "pubeval", "--games", "2", "--cubeful", "--quiet", "--json", "-",
                             *flags], capsys))
    assert report["rules"]["text"] == rules and rules in report["mode"]
    assert report["rules"]["beavers"] == cube["rules"]["beavers"] == (not flags)


def test_a_rule_that_cannot_apply_is_one_sentence_in_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    match = "4HPwATDgc/ABMA:MAHgAAAAAAAE"  # a 7-point match at 0-0, before the roll
    for argv in (["cube", match, "--beavers"], ["hint", match, "--jacoby"], ["rollout", match, "--raccoons"],
                 ["play", "--length", "3", "--jacoby"], ["eval", "random", "random", "--match", "3", "--beavers"]):
        status = eval_main(argv[1:]) if argv[0] == "eval" else main(argv)
        err = capsys.readouterr().err.strip()
        assert status == 2 and "apply only to money play" in err and "\n" not in err, (argv, err)


@pytest.mark.parametrize("amx", [False, True])
def test_a_bf16_player_in_a_duel_gets_the_no_amx_note_only_without_amx(amx: bool, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``bgnet eval bf16:SPEC ...`` says on stderr when bfloat16 is the slower arithmetic here, and still plays."""
    import bgnet.nets.bf16net as bf16net

    monkeypatch.setattr(bf16net, "has_amx", lambda: amx)
    assert eval_main(["bf16:default", "pubeval", "--games", "2", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert ("bgnet eval: note: this CPU has no AMX tiles" in err) == (not amx)
    assert eval_main(["default", "pubeval", "--games", "2", "--quiet"]) == 0
    assert "AMX" not in capsys.readouterr().err
