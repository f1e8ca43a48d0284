"""``bgnet rollout`` through a subprocess: text, JSON in the hint's vocabulary, cube rollouts, reproducibility,
one-line errors, and a rollout of a trillion trials that keeps its memory flat and stops on Ctrl-C with its partial
result."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgnet.nets.bf16net import has_amx

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
    assert [m["move"] for m in out["moves"]] == ["8/5 6/5", "24/23 13/10"]
    for m in out["moves"]:
        assert m["trials"] == 72 and m["equity_stderr"] > 0
        lo, hi = m["equity_interval95"]
        assert lo < m["equity"] < hi and m["equity"] == m["cubeless_equity"]
        p = m["probs"]
        assert 0 <= p["win_backgammon"] <= p["win_gammon"] <= p["win"] <= 1
    best = max(out["moves"], key=lambda m: m["equity"])
    assert best["rank"] == 1 and best["diff"] == 0.0 and all(m["diff"] <= 0 for m in out["moves"])
    assert out["seed"] == 5 and out["trials_done"] == 72 and out["settings"]["truncate"] == 4
    assert out["partial"] is False and "candidates" not in out
    again = json.loads(bgnet(*args).stdout)
    assert [m["equity"] for m in again["moves"]] == [m["equity"] for m in out["moves"]]


def test_the_pruning_net_plays_by_default_on_every_core_and_no_prune_values_every_play() -> None:
    """By default the trials run on every core (the same numbers as one worker) with the released net's pruning
    net picking the plays the net values and its student valuing the luck; ``--no-prune`` values every play."""
    args = ("rollout", START_ID, "31", "--plays", "8/5 6/5", "--trials", "72", "--truncate", "6", "--seed", "2",
            "--json")
    default, one = (json.loads(bgnet(*args, *extra).stdout) for extra in ((), ("--workers", "1")))
    full = json.loads(bgnet(*args, "--no-prune").stdout)
    assert default["settings"]["pruned_play"] is True and full["settings"]["pruned_play"] is False
    # the release's student values the luck (it ships with the pruning net); without those, the release itself
    assert default["settings"]["luck_net"] == "student" and full["settings"]["luck_net"] == "net"
    assert [m["equity"] for m in default["moves"]] == [m["equity"] for m in one["moves"]]


def test_hint_and_rollout_json_share_one_vocabulary() -> None:
    hint = json.loads(bgnet("hint", START_ID, "31", "--ply", "0", "--json").stdout)
    roll = json.loads(bgnet("rollout", START_ID, "31", "--plays", "8/5 6/5", "24/23 13/10", "--trials", "36",
                            "--truncate", "1", "--json").stdout)
    shared = {"position_id", "dice", "match", "equity", "moves"}
    assert shared <= set(hint) and shared <= set(roll)
    assert hint["position_id"] == roll["position_id"] and hint["dice"] == roll["dice"] == [3, 1]
    assert isinstance(hint["equity"], str) and roll["equity"] in ("cubeless money", "cubeful money")  # the kind
    assert all(d["match"] is None or {"match_length", "cube_value", "cube_owner"} <= set(d["match"])
               for d in (hint, roll))
    row_keys = {"rank", "move", "position_id", "equity", "diff", "probs", "mwc", "cubeless_equity"}
    by_move = {m["move"]: m for m in hint["moves"]}
    for m in roll["moves"]:
        h = by_move[m["move"]]  # the same play, by the same name
        assert row_keys <= set(m) and row_keys <= set(h)
        assert m["position_id"] == h["position_id"] and set(m["probs"]) == set(h["probs"])
        assert all(type(m[k]) is type(h[k]) for k in row_keys - {"mwc"})
    # bgnet moves names a play's afterstate as the hint does, from the mover and with the opponent on roll
    listed = {m["move"]: m for m in json.loads(bgnet("moves", START_ID, "31", "--json").stdout)["moves"]}
    for h in hint["moves"]:
        assert listed[h["move"]]["position_id"] == h["position_id"]
        assert listed[h["move"]]["position_id_opponent_on_roll"] == h["position_id_opponent_on_roll"]
    assert not {"after_position_id", "next_position_id"} & set().union(*listed.values())
    # every answer names its score and cube `match` and its cube rules `rules`, the cube decision too
    cube = json.loads(bgnet("cube", START_ID, "--ply", "0", "--json").stdout)
    for answer in (hint, roll, cube, cube["decision"]):
        assert answer["match"]["match_length"] == 0 and answer["match"]["jacoby"] is True
        assert answer["rules"] == hint["rules"] and set(answer["rules"]) == {"jacoby", "beavers", "raccoons",
                                                                             "holland", "max_cube", "text"}
    assert "state" not in cube["decision"]


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
    assert out["dice"] is None and "moves" not in out
    assert [line["action"] for line in out["lines"]] == ["no double", "double, take"]
    decision = out["decision"]
    assert decision["proper_cube_action"] and decision["method"] == "cubeful trials"
    assert out["action"] == decision["action"] and out["equity"] == "cubeful money"
    nd, dt = (line["equity"] for line in out["lines"])
    assert decision["equity_no_double"] == nd and decision["equity_double_take"] == dt
    assert decision["equity_double_pass"] == 1.0


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


TRILLION = "1000000000000"


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    """The subprocess environment, after a short rollout has filled numba's and the net's caches (so that the
    timed runs below spend their seconds in trials, not in a first compilation)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, "-m", "bgnet", "rollout", START_ID, "31", "--trials", "36", "--truncate", "2"],
                   capture_output=True, cwd=ROOT, env=env, timeout=300, check=True)
    return env


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (Linux /proc)."""
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) / 1024


def interrupted_rollout(env: dict[str, str], watch_s: float, *args: str) -> tuple[str, float, list[float], int]:
    """Start a rollout of a trillion trials, read its memory every 0.5 s for ``watch_s`` seconds, send SIGINT;
    its stdout, the seconds it took to exit after SIGINT, the memory readings and its exit status."""
    # A shell that starts its jobs in the background (``nohup bash .ci/run &``) passes SIGINT on as ignored,
    # and Python then never installs its handler: give the child the default disposition back.
    proc = subprocess.Popen([sys.executable, "-m", "bgnet", "rollout", START_ID, "31", "--trials", TRILLION, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        readings = []
        for _ in range(int(watch_s / 0.5)):
            time.sleep(0.5)
            readings.append(rss_mb(proc.pid))
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()  # never leave a trillion-trial rollout running behind a failed test
    print(f"exit {proc.returncode} {took:.2f} s after SIGINT; memory {min(readings):.0f}..{max(readings):.0f} MB")
    assert proc.returncode == 130, err
    return out, took, readings, proc.returncode


def test_a_trillion_trials_keep_memory_flat_and_ctrl_c_prints_the_partial_result(env: dict[str, str]) -> None:
    out, took, readings, _rc = interrupted_rollout(env, 10.0)
    assert max(readings) < 1024, readings  # the whole plan up front grew by about 0.5 GB a second
    assert max(readings[len(readings) // 2:]) - readings[len(readings) // 2] < 100, readings  # flat while it runs
    assert took < 2.0  # within a second, with slack for a loaded machine
    done = re.search(r"^Partial rollout: stopped after ([\d,]+) of 1,000,000,000,000 trials$", out, re.M)
    assert done and int(done.group(1).replace(",", "")) > 0, out
    assert f"{done.group(1).replace(',', '')} games (stopped early)" in out
    assert re.search(r"^1\. \S", out, re.M) and "95% interval" in out


def test_ctrl_c_on_threads_gives_partial_json(env: dict[str, str]) -> None:
    out, took, readings, _rc = interrupted_rollout(env, 5.0, "--workers", "2", "--json")
    assert max(readings) < 1024 and took < 2.0, (readings, took)
    res = json.loads(out)
    assert res["partial"] is True and 0 < res["trials_done"] < int(TRILLION)
    assert res["trials_requested"] == int(TRILLION) and res["trials_done"] % 36 == 0
    assert all(m["trials"] == res["trials_done"] for m in res["moves"])


def test_backend_flags_are_the_shared_ones(capsys) -> None:
    from bgnet.cli.parser import Parser
    from bgnet.cli.rollout import add_rollout_arguments

    parser = Parser(prog="bgnet rollout")
    add_rollout_arguments(parser)
    args = parser.parse_args([START_ID, "31", "--backend", "ray", "--ray-address", "auto", "--workers", "3"])
    assert (args.backend, args.ray_address, args.workers) == ("ray", "auto", 3)
    assert parser.parse_args([START_ID]).backend == "local"
    with pytest.raises(SystemExit) as stop:
        parser.parse_args([START_ID, "31", "--backend", "slurm"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "invalid choice: 'slurm'" in err


def test_the_footer_says_how_it_was_rolled_out_in_plain_words() -> None:
    """The lines under the plays say, as GNU Backgammon's do, how the trials were played, without internal terms."""
    r = bgnet("rollout", "4HPwATDgc/ABMA", "31", "--plays", "8/5 6/5", "--trials", "36", "--truncate", "5",
              "--seed", "3")
    assert r.returncode == 0, r.stderr
    footer = r.stdout[r.stdout.index("Truncated cubeless rollout"):]
    assert "36 games, dice from seed 3" in footer and "a truncated game is scored by the 0-ply net" in footer
    for jargon in ("counter-based", "beam", "truncation evaluation", "luck judged on", "(truncated at"):
        assert jargon not in footer, jargon


def test_a_bfloat16_rollout_is_close_to_float32_and_the_same_on_any_number_of_workers() -> None:
    """``--precision bfloat16`` values the plays in bfloat16 (``bgnet.nets.bf16net``): each board's chances its
    own, so the workers do not change the result; the net's small error leaves the rollout within its noise."""
    args = ("rollout", START_ID, "31", "--plays", "8/5 6/5", "--trials", "144", "--truncate", "5", "--seed", "3",
            "--json", "--no-luck")
    fp32 = json.loads(bgnet(*args).stdout)
    one, two = (json.loads(bgnet(*args, "--precision", "bfloat16", "--workers", w).stdout) for w in ("1", "2"))
    assert "precision" not in fp32 and one["precision"] == "bfloat16"  # the default JSON is /api/rollout's
    assert one["moves"][0]["equity"] == two["moves"][0]["equity"]
    assert abs(one["moves"][0]["equity"] - fp32["moves"][0]["equity"]) < 2 * fp32["moves"][0]["equity_stderr"]
    text = bgnet(*args[:-2], "--precision", "bfloat16")
    assert text.returncode == 0 and "The net valued in bfloat16 (--precision)" in text.stdout
    # where bfloat16 is the slower arithmetic (no AMX tiles), the command says so on stderr, once, and still runs
    assert text.stderr.count("bgnet rollout: note: this CPU has no AMX tiles") == (0 if has_amx() else 1)
    assert "AMX" not in bgnet(*args[:-2]).stderr
    bad = bgnet(*args, "--precision", "float16")
    assert bad.returncode == 2 and "invalid choice: 'float16'" in bad.stderr and "Traceback" not in bad.stderr
