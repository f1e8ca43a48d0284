"""``bgnet analyze``: JSON and HTML output on a gnubg match file, and one-line errors (exit 2) on bad files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "matches"
MAT = DATA / "gnubg_3pt_noise.mat"


def bgnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bgnet", "analyze", *args], capture_output=True, text=True, timeout=300)


def test_json_and_html(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    r = bgnet(str(MAT), "--ply", "0", "--json", "--html", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["ply"] == 0 and data["match_length"] == 3
    players = data["players"]
    assert [p["name"] for p in players] == ["gnubg", "root"]
    gnubg = json.loads(MAT.with_suffix(".gnubg.json").read_text())["players"]
    assert [p["unforced_moves"] for p in players] == [int(p["unforced_moves"]) for p in gnubg]
    assert data["unfinished_games"] == []
    for p in players:
        assert isinstance(p["checker_error_rate_memg"], float) and isinstance(p["pr"], float)
        assert isinstance(p["luck_adjusted_result_mwc_percent"], float) and abs(p["actual_result_mwc_percent"]) == 50.0
        for d in p["decisions"]:
            assert [a["rank"] for a in d["alternatives"]][:2] == [1, 2][:len(d["alternatives"])]
            assert [a["played"] for a in d["alternatives"]].count(True) == 1
            name = "move" if d["kind"] == "move" else "action"  # the shared names of docs/JSON.md
            assert all({name, "equity", "ply"} <= set(a) and "choice" not in a for a in d["alternatives"])
        assert p["overall_error_rate_memg"] >= 0 and "luck_rate_memg" in p and "cube_error_rate_memg" in p
        moves = [d for d in p["decisions"] if d["kind"] == "move"]
        assert len(moves) == int(gnubg[players.index(p)]["total_moves"])
        assert all(len(d["position_id"]) == 14 and len(d["dice"]) == 2 for d in moves)
    marked = sum(1 for p in players for d in p["decisions"] if d["mark"])
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == marked > 0
    assert page.count(" (played)</td>") == page.count("<tr class='played'>") == marked
    assert "% MWC" in page and "wins 2 points" in page and "unfinished" not in page
    assert "Game 1" in page and "gnubg" in page
    try:
        import matplotlib  # noqa: F401
        assert "data:image/png;base64," in page
    except ImportError:
        pass


def test_text_output() -> None:
    r = bgnet(str(MAT), "--ply", "0")
    assert r.returncode == 0, r.stderr
    assert "Overall error rate mEMG" in r.stdout and "PR" in r.stdout
    assert r.stdout.startswith("Analysis of a 3-point match, 2 games, at 0 ply\n\n")
    (luck,) = [line for line in r.stdout.splitlines() if line.startswith("Luck adjusted result")]
    assert re.fullmatch(r"Luck adjusted result\s+[+-]\d+\.\d% MWC\s+[+-]\d+\.\d% MWC", luck), luck


def test_a_file_cut_off_in_a_game_is_analysed_with_a_warning(tmp_path: Path) -> None:
    """Exit 0 (every move read is legal, so the analysis of them is valid), and the report says what is missing."""
    lines = MAT.read_text().splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.strip() == "Game 2")
    cut = tmp_path / "cut.mat"
    cut.write_text("\n".join(lines[:start + 8]) + "\n")
    out = tmp_path / "cut.html"
    r = bgnet(str(cut), "--ply", "0", "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].startswith("Warning: game 2 is unfinished"), r.stdout
    assert "unfinished" in out.read_text()
    j = bgnet(str(cut), "--ply", "0", "--json")
    assert j.returncode == 0 and json.loads(j.stdout)["unfinished_games"] == [2]


def test_bad_files_give_one_line_and_exit_2(tmp_path: Path) -> None:
    text = MAT.read_text()
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("2)"))
    lines[i] = "  2) 66: 24/18 24/18 24/18 24/18"  # the left player has only two checkers on his 24-point
    bad = tmp_path / "bad.mat"
    bad.write_text("\n".join(lines) + "\n")
    for path, needle in ((bad, "game 1, move 2"), (tmp_path / "missing.mat", "cannot read"),
                         (DATA / "gnubg_3pt_noise.gnubg.json", "no 'N point match' line")):
        r = bgnet(str(path), "--ply", "0")
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr
    r = bgnet(str(bad), "--ply", "0", "--lenient", "--json")
    assert r.returncode == 0, r.stderr
    assert "skipped" in r.stderr and "game 1" in r.stderr
    assert json.loads(r.stdout)["games"] == text.count("Game ") - 1 == 1
    r = bgnet(str(bad), "--ply", "0", "--lenient")
    assert r.returncode == 0 and r.stdout.startswith("Analysis of a 3-point match, 1 game, at 0 ply\n"), r.stdout


@pytest.mark.parametrize("ply", ["-1", "9"])
def test_bad_ply(ply: str) -> None:
    r = bgnet(str(MAT), "--ply", ply)
    assert r.returncode == 2 and "--ply" in r.stderr


def test_play_save_writes_a_file_analyze_reads(tmp_path: Path) -> None:
    out = tmp_path / "game.mat"
    for seed in range(1, 20):  # a seed where the bot wins the opening roll, so it moves before the player quits
        r = subprocess.run([sys.executable, "-m", "bgnet", "play", "--seed", str(seed), "--length", "3",
                            "--save", str(out)], input="quit\n", capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        if "The bot rolls" in r.stdout:
            break
    from bgnet.io.formats import read_match

    m = read_match(out)
    assert m.players == ("You", "bgnet") and m.match_length == 3
    (action,) = m.games[0].actions
    assert action.player == 1 and action.kind == "move"
    said = r.stdout.split("The bot rolls ", 1)[1]
    assert said.startswith(f"{action.dice[0]}-{action.dice[1]}") or said.startswith(f"{action.dice[1]}-{action.dice[0]}")  # type: ignore[index]
    a = bgnet(str(out), "--ply", "0", "--json")
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["players"][1]["decisions"][0]["played"]


def test_the_analysis_says_whether_its_searches_were_pruned() -> None:
    """The released net's analysis searches with its pruning net and says so; ``--no-prune`` values every reply."""
    root = Path(__file__).resolve().parents[1]
    fixture = root / "tests" / "data" / "matches" / "gnubg_3pt_noise.mat"
    got = {}
    for flags in ((), ("--no-prune",)):
        r = subprocess.run([sys.executable, "-m", "bgnet", "analyze", str(fixture), "--ply", "1", "--json", *flags],
                           capture_output=True, text=True, cwd=root, timeout=600)
        assert r.returncode == 0, r.stderr
        got[flags] = json.loads(r.stdout)["pruned"]
    assert got == {(): 5, ("--no-prune",): 0}
