"""Generate match files with GNU Backgammon (the gnubg package): gnubg plays gnubg, exports .mat/.sgf, analyses.

    .venv/bin/python bench/make_match_fixtures.py            # rewrites tests/data/matches/
    .venv/bin/python bench/make_match_fixtures.py --out DIR --matches 6   # bench set (several strengths)

The .mat files carry gnubg's ``EventDate`` header, so a rerun differs only in that line.
Each match is played by gnubg at 0 ply against itself, one or both sides with
chequer-play noise (deterministic, so a seed gives the same file); gnubg then
imports the .mat it wrote, analyses it (``--analysis-ply``, default 2) and its
``show statistics match`` figures are saved as ``NAME.gnubg.json``. gnubg runs in
a child process per step, its C-level stdout captured through fd 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "matches"

_CHILD = r"""
import json, os, sys
cmds, out = json.loads(sys.argv[1]), sys.argv[2]
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
import gnubg
for c in cmds:
    gnubg.command(c)
sys.stdout.flush()
"""

# The fixtures the tests use: (name, length, seed, noise of player 0, noise of player 1); the first also as .sgf.
FIXTURE_SET = (
    ("gnubg_5pt_noise", 5, 11, 0.0, 0.08),
    ("gnubg_3pt_noise", 3, 12, 0.06, 0.0),
)


def run_gnubg(commands: list[str], timeout: float = 600.0) -> str:
    """Run gnubg commands in a fresh child process; returns what gnubg printed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.txt")
        subprocess.run([sys.executable, "-c", _CHILD, json.dumps(["set threads 1", "set sound enable off"] + commands),
                        out], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True, timeout=timeout)
        return Path(out).read_text(errors="replace")


def play_match(mat: Path, length: int, seed: int, noise: tuple[float, float], sgf: Path | None = None) -> None:
    """gnubg plays a ``length``-point match against itself (0 ply, the given chequer-play noise) and exports it."""
    cmds = ["set rng mersenne", f"set seed {seed}"]
    for p in (0, 1):
        cmds += [f"set player {p} gnubg", f"set player {p} chequerplay evaluation plies 0",
                 f"set player {p} cubedecision evaluation plies 0",
                 f"set player {p} chequerplay evaluation noise {noise[p]}",
                 f"set player {p} chequerplay evaluation deterministic on"]
    cmds += ["set display off", f"new match {length}", f"export match mat {mat}"]
    if sgf is not None:
        cmds.append(f"save match {sgf}")
    run_gnubg(cmds)


def analyse(mat: Path, ply: int = 2) -> tuple[dict[str, object], float]:
    """gnubg's own analysis of a .mat file at ``ply``: its statistics per player, and the seconds it took."""
    cmds = [f"import mat {mat}"]
    for kind in ("chequerplay", "cubedecision"):
        cmds.append(f"set analysis {kind} evaluation plies {ply}")
    cmds += ["analyse match", "show statistics match"]
    t0 = time.perf_counter()
    text = run_gnubg(cmds)
    return parse_statistics(text), time.perf_counter() - t0


_ROWS = {
    "Unforced moves": "unforced_moves",
    "Total moves": "total_moves",
    "Close or actual cube decisions": "close_cube_decisions",
    "Moves marked doubtful": "doubtful",
    "Moves marked bad": "bad",
    "Moves marked very bad": "very_bad",
}


def parse_statistics(text: str) -> dict[str, object]:
    """Per-player figures from ``show statistics match`` (error rates in mEMG, as gnubg prints them, negated)."""
    section = ""
    players: list[dict[str, float]] = [{}, {}]
    names: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Player ") and not names:
            names = s.split()[1:3]
        for title, key in (("Chequerplay statistics", "checker"), ("Cube statistics", "cube"),
                           ("Overall statistics", "overall"), ("Luck statistics", "luck")):
            if s == title:
                section = key
        for label, key in _ROWS.items():
            if s.startswith(label):
                nums = re.findall(r"-?\d+", s[len(label):])
                if len(nums) >= 2:
                    players[0][key], players[1][key] = float(nums[0]), float(nums[1])
        if s.startswith("Error rate mEMG") or s.startswith("Luck rate mEMG"):
            nums = re.findall(r"[-+]?\d+\.\d+", s)
            # "value (mwc%)" twice: value0 mwc0 value1 mwc1
            if len(nums) >= 4:
                key = "luck_rate_memg" if s.startswith("Luck") else f"{section}_error_rate_memg"
                sign = 1.0 if s.startswith("Luck") else -1.0
                players[0][key], players[1][key] = sign * float(nums[0]), sign * float(nums[2])
    if not all(players) or len(names) < 2:
        raise RuntimeError("gnubg printed no match statistics:\n" + text[-2000:])
    return {"players": [dict(name=names[i], **players[i]) for i in (0, 1)]}


def make(out: Path, name: str, length: int, seed: int, noise: tuple[float, float], ply: int, sgf: bool) -> dict[str, object]:
    """One match: NAME.mat (and NAME.sgf), NAME.gnubg.json with gnubg's analysis and timing."""
    out.mkdir(parents=True, exist_ok=True)
    mat = out / f"{name}.mat"
    play_match(mat, length, seed, noise, out / f"{name}.sgf" if sgf else None)
    stats, seconds = analyse(mat, ply)
    stats.update(length=length, seed=seed, noise=list(noise), analysis_ply=ply)
    (out / f"{name}.gnubg.json").write_text(json.dumps(stats, indent=1) + "\n")  # no timing: reruns give the same file
    return dict(stats, gnubg_analysis_seconds=round(seconds, 2))


def bench_set(n: int) -> list[tuple[str, int, int, float, float]]:
    """``n`` 5-point matches between players of different strengths (noise 0 to 0.08), seeded."""
    levels = (0.0, 0.02, 0.04, 0.08)
    return [(f"bench_{i:02d}", 5, 100 + i, levels[i % 4], levels[(i // 4 + i + 1) % 4]) for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIXTURES)
    ap.add_argument("--matches", type=int, default=0, help="make this many bench matches instead of the test fixtures")
    ap.add_argument("--analysis-ply", type=int, default=2)
    args = ap.parse_args()
    todo = bench_set(args.matches) if args.matches else list(FIXTURE_SET)
    for k, (name, length, seed, n0, n1) in enumerate(todo):
        stats = make(args.out, name, length, seed, (n0, n1), args.analysis_ply, sgf=not args.matches and k == 0)
        rates = [p["overall_error_rate_memg"] for p in stats["players"]]  # type: ignore[index]
        print(f"{name}: {length}-point match, noise {n0}/{n1}, gnubg overall error rates {rates} mEMG, "
              f"analysis {stats['gnubg_analysis_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
