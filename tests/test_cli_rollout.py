"""``bgnet rollout`` through a subprocess: text, JSON, cube rollouts, reproducibility and one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
MIDGAME_ID = "4HPwASik5+ABMA"


def bgnet(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m bgnet`` with ``args`` from the repository root."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "bgnet", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def test_rollout_of_given_plays_as_json_is_reproducible() -> None:
    args = ("rollout", START_ID, "31", "--plays", "8/5 6/5", "24/23 13/10", "--trials", "72", "--truncate", "4",
            "--seed", "5", "--json")
    res = bgnet(*args)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [c["label"] for c in out["candidates"]] == ["8/5 6/5", "24/23 13/10"]
    for c in out["candidates"]:
        assert c["trials"] == 72 and c["equity_stderr"] > 0
        lo, hi = c["equity_interval95"]
        assert lo < c["equity"] < hi
        p = c["probs"]
        assert 0 <= p["win_backgammon"] <= p["win_gammon"] <= p["win"] <= 1
    assert out["seed"] == 5 and out["trials_done"] == 72 and out["settings"]["truncate"] == 4
    again = json.loads(bgnet(*args).stdout)
    assert [c["equity"] for c in again["candidates"]] == [c["equity"] for c in out["candidates"]]


def test_rollout_text_in_gnubg_style_with_cubeful_equities() -> None:
    res = bgnet("rollout", START_ID, "31", "--plays", "8/5 6/5", "--trials", "36", "--truncate", "2", "--cubeful")
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "1. 8/5 6/5:" in text
    assert re.search(r"^  \d\.\d{3} \d\.\d{3} \d\.\d{3} - \d\.\d{3} \d\.\d{3} \d\.\d{3} CL [+-]\d\.\d{3} CF [+-]\d\.\d{3}$",
                     text, re.M), text
    assert re.search(r"^ \[\d\.\d{3} .* CL +\d\.\d{3} CF +\d\.\d{3}\]$", text, re.M), text
    assert "36 games" in text and "seed 0" in text and "Truncated cubeful rollout (depth 2)" in text
    assert "Cube: played in every trial" in text


def test_cube_rollout_without_dice() -> None:
    res = bgnet("rollout", MIDGAME_ID, "--trials", "36", "--truncate", "2", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert out["dice"] is None
    assert [c["label"] for c in out["candidates"]] == ["No double", "Double, take"]
    assert all(c["cubeful_equity"] is not None for c in out["candidates"])
    assert out["cube"]["proper_cube_action"] and out["cube"]["method"] == "cubeful trials"
    nd, dt = (c["cubeful_equity"] for c in out["candidates"])
    assert out["cube"]["equity_no_double"] == nd and out["cube"]["equity_double_take"] == dt
    assert out["cube"]["equity_double_pass"] == 1.0


def test_bad_input_is_one_line_and_exit_status_2() -> None:
    for args in (("rollout", START_ID, "31", "--plays", "24/21 13/12"),
                 ("rollout", START_ID, "31", "--trials", "0"),
                 ("rollout", START_ID, "31", "--ply", "2"),
                 ("rollout", "not-a-position", "31"),
                 ("rollout", START_ID, "71")):
        res = bgnet(*args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert res.stderr.startswith("bgnet: error:")


def test_ctrl_c_prints_the_trials_done_so_far() -> None:
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    command = [sys.executable, "-m", "bgnet", "rollout", START_ID, "31", "--plays", "8/5 6/5",
               "--chunk-size", "36", "--truncate", "2", "--json"]
    # A short run first fills numba's and the net's caches, so that the interrupt below lands in the trials,
    # not in a first compilation (which a fresh checkout would spend its first seconds on).
    subprocess.run([*command, "--trials", "36"], capture_output=True, cwd=ROOT, env=env, timeout=300, check=True)
    # Far more trials than any machine finishes in the waits below (a fast machine did 50,000 in under 4 s),
    # so the interrupt always lands mid-run.
    trials = 20_000_000
    out = err = ""
    for wait in (4.0, 8.0, 16.0):  # a loaded machine may need longer to reach the first finished chunk
        # A shell that starts its jobs in the background (``nohup bash .ci/run &``) passes SIGINT on as ignored,
        # and Python then never installs its handler: give the child the default disposition back.
        proc = subprocess.Popen([*command, "--trials", str(trials)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=ROOT, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()  # never leave a 20-million-trial rollout running behind a failed test
            raise
        if out.strip():
            break
    assert proc.returncode == 130, err
    res = json.loads(out)
    assert res["interrupted"] is True and 0 < res["trials_done"] < trials and res["trials_done"] % 36 == 0
    assert res["candidates"][0]["trials"] == res["trials_done"]
