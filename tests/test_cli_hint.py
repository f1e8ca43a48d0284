"""``bgnet hint`` and ``bgnet cube`` through a subprocess: text, JSON, match states from IDs, and one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bgnet import Position, legal_moves

ROOT = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
XGID_7PT_64 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:64:0:0:0:7:3"  # 7-point match 0-0, bottom to play 6-4
XGID_7PT_CUBE = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:7:3"  # the same, before rolling
XGID_CRAWFORD_33 = "XGID=-BC-DAD-A---------------f-:0:0:1:33:4:1:1:5:8"  # 5-point match 4-1 Crawford, 3-3 to play
XGID_NO_PLAY = "XGID=aFAC--a-----a-a----cbbbbAA:0:0:1:33:4:1:1:5:8"  # the same score, 3-3 cannot be played
MATCH_7PT_31 = "MIHlAAAAAAAE"  # 7-point match 0-0, player 0 rolled 3-1
CRAWFORD_MATCH = "8AmgAEAAEAAE"  # 5-point match 4-2, Crawford game, player 1 to roll
PROB_KEYS = {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
ONE_LINE_ERROR = re.compile(r"^bgnet( [a-z]+)?: error: [^\n]+$")
"""A usage or library error: one line naming the command (and subcommand, for a usage error of one)."""


def bgnet(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m bgnet`` with ``args`` from the repository root."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "bgnet", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def ok_json(*args: str) -> dict:
    res = bgnet(*args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def hint_lines(stdout: str) -> list[tuple[int, int, str, float]]:
    """(rank, ply, notation, equity) of each ranked line of a text move hint (cubeful or cubeless)."""
    found = []
    for line in stdout.splitlines():
        m = re.match(r"\s*(\d+)\. Cube(?:ful|less) (\d)-ply\s+(.*?)\s+Eq\.: ([+-]\d\.\d{3})", line)
        if m:
            found.append((int(m.group(1)), int(m.group(2)), m.group(3), float(m.group(4))))
    return found


def test_hint_text_lists_every_play_ranked() -> None:
    res = bgnet("hint", START_ID, "31")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(str(Position.start()))
    lines = hint_lines(res.stdout)
    assert [r for r, *_ in lines] == list(range(1, 17))
    assert {text for _, _, text, _ in lines} == {m.text for m in legal_moves(Position.start(), (3, 1))}
    equities = [eq for *_, eq in lines]
    assert equities == sorted(equities, reverse=True)
    assert "16 legal plays" in res.stdout


def test_hint_json_matches_the_library() -> None:
    out = ok_json("hint", START_ID, "3-1", "--top", "4", "--ply", "0", "--cubeless")
    assert out["dice"] == [3, 1] and out["ply"] == 0 and out["legal_plays"] == 16
    assert out["match"]["match_length"] == 0 and out["match"]["jacoby"] is True  # the money defaults, said
    assert out["rules"]["text"] == "money game, Jacoby rule on, beavers and raccoons allowed"
    moves = out["moves"]
    assert len(moves) == 4
    by_text = {m.text: m.after for m in legal_moves(Position.start(), (3, 1))}
    for m in moves:
        assert PROB_KEYS == set(m["probs"])
        assert by_text[m["move"]].position_id() == m["position_id"]
        # What GNU Backgammon shows after the play: the opponent on roll.
        assert by_text[m["move"]].swap_sides().position_id() == m["position_id_opponent_on_roll"]
        p = m["probs"]
        money = 2 * p["win"] - 1 + p["win_gammon"] - p["lose_gammon"] + p["win_backgammon"] - p["lose_backgammon"]
        assert m["equity"] == pytest.approx(money, abs=1e-6)
    assert [m["equity"] for m in moves] == sorted((m["equity"] for m in moves), reverse=True)
    # The same ranking as an in-process hint from the shipped net.
    from bgnet.play.hint import move_hint
    from bgnet.nets.model import NetEvaluator

    fn = NetEvaluator.from_checkpoint(ROOT / "checkpoints" / "bgnet.pt").probs_of_boards
    want = move_hint(fn, Position.start(), (3, 1), top=4)
    assert [m["move"] for m in moves] == [m.text for m in want.moves]


def test_hint_one_ply() -> None:
    out = ok_json("hint", START_ID, "64", "--ply", "1")
    assert out["ply"] == 1 and out["moves"][0]["ply"] == 1
    plies = [m["ply"] for m in out["moves"]]
    assert plies == sorted(plies, reverse=True)


def test_no_prune_searches_every_reply_and_prune_is_the_default() -> None:
    """``--no-prune`` gives the full 1-ply search's values; the default gives the pruned search's
    (``bgnet.nets.pruning``), both as the library computes them."""
    from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent
    from bgnet.play.hint import move_hint

    pos_id = "4HPiQSDgc/ABMA"  # an early position where, for some roll, the pruned search misses a reply
    differs = []
    for dice in ("52", "31", "64"):  # which roll it is depends on the release's pruning net
        got = {}
        for flags, prune in (((), True), (("--no-prune",), False)):
            out = ok_json("hint", pos_id, dice, "--ply", "1", "--cubeless", *flags)
            want = move_hint(NeuralAgent(DEFAULT_CHECKPOINT, 0, prune=prune).probs_fn,
                             Position.from_position_id(pos_id), (int(dice[0]), int(dice[1])), ply=1)
            got[prune] = [(m["move"], round(m["equity"], 6)) for m in out["moves"]]
            assert out["pruned"] == (5 if prune else 0)
            assert got[prune] == [(m.text, round(m.equity, 6)) for m in want.moves]
        differs.append(got[True] != got[False])
    assert any(differs)


def test_xgid_gives_position_dice_and_score() -> None:
    out = ok_json("hint", XGID_7PT_64)
    assert out["dice"] == [6, 4]
    assert out["match"]["match_length"] == 7 and out["match"]["score_me"] == 0
    assert out["equity"] == "cubeful normalised at the match score"  # cubeful by default, as gnubg and XG
    assert all(0.0 <= m["mwc"] <= 1.0 for m in out["moves"])
    assert ok_json("hint", XGID_7PT_64, "--cubeless")["equity"] == "cubeless normalised at the match score"
    # The same roll given again is fine, in either order; another roll contradicts the XGID.
    assert ok_json("hint", XGID_7PT_64, "46")["dice"] == ok_json("hint", XGID_7PT_64, "6-4")["dice"] == [6, 4]
    res = bgnet("hint", XGID_7PT_64, "21")
    assert res.returncode == 2 and res.stderr == ("bgnet: error: the dice 2-1 contradict the dice 6-4 the ID already "
                                                  "holds: give the roll once (or the same roll)\n")


def test_dice_are_printed_high_die_first() -> None:
    res = bgnet("hint", START_ID, "13", "--ply", "0", "--top", "1")
    assert res.returncode == 0 and "dice 3-1," in res.stdout and "1-3" not in res.stdout
    assert ok_json("hint", START_ID, "1-3", "--ply", "0", "--top", "1")["dice"] == [3, 1]


def test_hints_are_cubeful_by_default_and_cubeless_on_request() -> None:
    default = bgnet("hint", START_ID, "31", "--ply", "0", "--top", "2")
    assert default.returncode == 0, default.stderr
    assert "cubeful 0-ply" in default.stdout and [r for r, *_ in hint_lines(default.stdout)] == [1, 2]
    cubeful = ok_json("hint", START_ID, "31", "--ply", "0", "--top", "2")
    cubeless = ok_json("hint", START_ID, "31", "--ply", "0", "--top", "2", "--cubeless")
    assert (cubeful["equity"], cubeless["equity"]) == ("cubeful money", "cubeless money")
    top = cubeless["moves"][0]
    assert top["equity"] == top["cubeless_equity"] and cubeful["moves"][0]["equity"] != top["equity"]
    res = bgnet("hint", START_ID, "31", "--cubeful", "--cubeless")
    assert res.returncode == 2 and "not allowed with" in res.stderr


def test_named_models_and_a_model_with_its_depth() -> None:
    named = ok_json("hint", START_ID, "31", "--model", "default", "--ply", "0", "--top", "3")
    plain = ok_json("hint", START_ID, "31", "--ply", "0", "--top", "3")
    assert named["moves"] == plain["moves"]
    assert ok_json("hint", START_ID, "31", "--model", "default@1", "--top", "1")["ply"] == 1
    for args, words in [(("--model", "pubeval"), "gives no probabilities"),
                        (("--model", "default@1", "--ply", "0"), "contradicts the depth")]:
        res = bgnet("hint", START_ID, "31", *args)
        assert res.returncode == 2 and words in res.stderr, res.stderr


def test_cubeful_hint() -> None:
    out = ok_json("hint", START_ID, "62", "--cubeful", "--top", "3", "--ply", "0", "--no-jacoby", "--no-beavers")
    assert out["equity"] == "cubeful money"
    from bgnet import Probs
    from bgnet.play.hint import cubeful_after
    from bgnet.cube.match import MatchState

    for m in out["moves"]:
        probs = Probs(*(m["probs"][k] for k in ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")))
        want, _ = cubeful_after(probs, Position.from_position_id(m["position_id"]), MatchState())
        assert m["equity"] == pytest.approx(want, abs=1e-9)
        assert m["cubeless_equity"] == pytest.approx(probs.equity(), abs=1e-6)
    res = bgnet("hint", START_ID, "62", "--cubeful", "--top", "1", "--ply", "0")
    assert res.returncode == 0 and "Cubeful 0-ply" in res.stdout


def test_crawford_xgid_hint() -> None:
    out = ok_json("hint", XGID_CRAWFORD_33, "--top", "2")
    assert out["dice"] == [3, 3] and out["match"]["crawford"] is True and len(out["moves"]) == 2


def test_no_legal_play() -> None:
    out = ok_json("hint", XGID_NO_PLAY)
    assert out["legal_plays"] == 1 and out["moves"][0]["move"] == ""
    res = bgnet("hint", XGID_NO_PLAY)
    assert res.returncode == 0 and "(no play)" in res.stdout


def test_position_and_match_id_forms() -> None:
    a = ok_json("hint", f"{START_ID}:{MATCH_7PT_31}")
    b = ok_json("hint", START_ID, "--match", MATCH_7PT_31)
    assert a["dice"] == b["dice"] == [3, 1]
    assert a["match"] == b["match"] and a["match"]["match_length"] == 7
    assert a["moves"] == b["moves"]


def test_hint_without_dice_is_the_cube_hint() -> None:
    res = bgnet("hint", START_ID)
    assert res.returncode == 0, res.stderr
    assert "Proper cube action" in res.stdout and "No double" in res.stdout
    out = ok_json("hint", XGID_7PT_CUBE)
    assert out["action"] == "no double" and out["decision"]["match"]["match_length"] == 7


def test_cube_command() -> None:
    res = bgnet("cube", START_ID, "--ply", "1")
    assert res.returncode == 0, res.stderr
    assert "Cube analysis (money game, cube centred)" in res.stdout and "Take point" in res.stdout
    out = ok_json("cube", START_ID, "--xgid", XGID_7PT_CUBE)
    assert out["action"] in ("no double", "double, take", "double, pass", "too good")
    assert set(out["decision"]["probs"]) == PROB_KEYS
    d = out["decision"]
    assert d["mwc_no_double"] is not None and d["take_point"] is not None
    crawford = ok_json("cube", START_ID, "--match", CRAWFORD_MATCH)
    assert crawford["action"] == "no double" and crawford["decision"]["equity_double_take"] is None


def test_custom_model(tmp_path: Path) -> None:
    from bgnet.nets.model import BgNet, ModelConfig, save_checkpoint

    path = tmp_path / "tiny.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(4,))))
    out = ok_json("hint", START_ID, "21", "--model", str(path), "--ply", "1", "--top", "1")
    assert len(out["moves"]) == 1 and out["moves"][0]["ply"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("hint", "4HPwATDgc/AB", "31"),  # a Position ID of the wrong length
        ("hint", "//////////////", "31"),  # too many checkers
        ("hint", "XGID=nonsense"),  # a malformed XGID
        ("hint", START_ID, "71"),  # a die of 7
        ("hint", START_ID, "3"),  # one die
        ("hint", START_ID, "31", "--ply", "9"),
        ("hint", START_ID, "31", "--ply", "-1"),
        ("hint", START_ID, "31", "--ply", "two"),
        ("hint", START_ID, "31", "--top", "0"),
        ("hint", START_ID, "31", "--model", "no/such/file.pt"),
        ("hint", START_ID, "31", "--match", "notamatchid!"),
        ("hint", START_ID, "31", "--match", "UQqgAFAAEAAE"),  # 5-2 in a 5-point match: already over
        ("hint", START_ID, "31", "--xgid", "XGID=bad"),
        ("hint", START_ID, "31", "--match", MATCH_7PT_31, "--xgid", XGID_7PT_CUBE),  # both
        ("hint", XGID_7PT_64, "--match", MATCH_7PT_31),  # the XGID already gives the score
        ("hint", Position.from_points({6: 3}, {}).position_id(), "31"),  # the game is over
        ("hint",),
        ("hint", START_ID, "31", "--bogus"),
        ("cube",),
        ("cube", "4HPwATDgc/AB!A"),
        ("cube", START_ID, "--ply", "5"),
        ("cube", START_ID, "--model", "no/such/file.pt"),
        ("cube", START_ID, "31"),  # cube takes no dice
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    res = bgnet(*args)
    assert res.returncode == 2, res.stdout
    assert "Traceback" not in res.stderr
    assert ONE_LINE_ERROR.match(res.stderr.strip()), res.stderr
    assert res.stdout == ""


def test_corrupt_model_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    res = bgnet("cube", START_ID, "--model", str(bad))
    assert res.returncode == 2 and res.stderr.startswith("bgnet: error: checkpoint") and "Traceback" not in res.stderr


@pytest.mark.parametrize("args, prefix", [
    (("play", "--seed", "-1"), "bgnet: error: --seed must be a whole number of at least 0, got -1"),
    (("rollout", START_ID, "31", "--seed", "-1"), "bgnet: error: --seed must be a whole number of at least 0"),
    (("eval", "random", "pubeval", "--seed", "-1"), "bgnet eval: error: argument --seed: seed '-1' must not be"),
    (("train", "--config", "quick", "--seed=-1"), "bgnet train: error: seed must not be negative, got -1"),
])
def test_a_negative_seed_is_refused_by_every_command_that_takes_one(args: tuple[str, ...], prefix: str) -> None:
    res = bgnet(*args)
    assert res.returncode == 2 and res.stdout == "" and res.stderr.startswith(prefix), res.stderr
    assert res.stderr.count("\n") == 1


def test_help_of_ply_says_which_depths_work() -> None:
    from bgnet.play.search import MAX_PLY

    for command in ("hint", "cube"):
        text = " ".join(bgnet(command, "--help").stdout.split())
        assert f"search depth from 0 (the net alone, fastest) to {MAX_PLY}" in text, text
