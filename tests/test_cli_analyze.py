"""``bgnet analyze``: JSON and HTML output on a gnubg match file, and one-line errors (exit 2) on bad files."""

from __future__ import annotations

import json
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
    for p in players:
        assert isinstance(p["checker_error_rate_memg"], float) and isinstance(p["pr"], float)
        assert p["overall_error_rate_memg"] >= 0 and "luck_rate_memg" in p and "cube_error_rate_memg" in p
        moves = [d for d in p["decisions"] if d["kind"] == "move"]
        assert len(moves) == int(gnubg[players.index(p)]["total_moves"])
        assert all(len(d["position_id"]) == 14 and len(d["dice"]) == 2 for d in moves)
    marked = sum(1 for p in players for d in p["decisions"] if d["mark"])
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == marked > 0
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
    assert json.loads(r.stdout)["games"] == text.count("Game ") - 1


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
    from bgnet.io.matchfile import read_match

    m = read_match(out)
    assert m.players == ("You", "bgnet") and m.match_length == 3
    (action,) = m.games[0].actions
    assert action.player == 1 and action.kind == "move"
    said = r.stdout.split("The bot rolls ", 1)[1]
    assert said.startswith(f"{action.dice[0]}-{action.dice[1]}") or said.startswith(f"{action.dice[1]}-{action.dice[0]}")  # type: ignore[index]
    a = bgnet(str(out), "--ply", "0", "--json")
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["players"][1]["decisions"][0]["played"]
