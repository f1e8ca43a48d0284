"""``python -m eval``: the JSON report, bad input, workers, tournaments and learning curves."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bgnet.sim.runner as runner
from bgnet.cli.eval import main
from bgnet.sim.runner import DuelSpec, run_duel
from bgnet.sim.tournament import elo_difference, least_squares_ratings
from bgnet.play.game import Rules

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "bgnet.pt"


def test_json_report_has_the_promised_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["pubeval", "random", "--games", "40", "--seed", "9", "--json", str(out), "--quiet"]) == 0
    report = json.loads(out.read_text())
    for key in ("games", "ppg", "ci95", "win_rate", "gammon_rate", "backgammon_rate", "seed", "agent_a", "agent_b",
                "win_rate_ci95", "gammon_rate_ci95", "backgammon_rate_ci95"):
        assert key in report, key
    assert report["games"] == 40 and report["seed"] == 9
    assert (report["agent_a"], report["agent_b"]) == ("pubeval", "random")
    assert report["ppg"] > 0.5 and 0 < report["ci95"] < 1
    assert 0.0 <= report["gammon_rate"] <= 1.0 and report["backgammon_rate"] <= report["gammon_rate"]
    text = capsys.readouterr().out
    assert "points per game" in text and "+-" in text


def test_match_report_has_the_match_win_rate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pubeval", "random", "--games", "4", "--match", "3", "--json", "-", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["matches"] == 4 and report["match_length"] == 3 and report["cubeful"]
    assert report["match_win_rate"] >= 0.5 and report["games"] >= 4


@pytest.mark.parametrize("argv, words", [
    (["nosuchbot", "random"], "nosuchbot"),
    (["random", "random", "--games", "0"], "--games"),
    (["random", "random", "--games", "ten"], "--games"),
    (["random", "random", "--workers", "-1"], "--workers"),
    (["random", "random", "--seed", "-3"], "seed"),
    (["random", "random", "--holland"], "--holland"),
    (["random", "random", "--beavers"], "--cubeful"),
    (["random", "random", "--match", "5", "--jacoby"], "money"),
    (["random", "random", "--money", "--match", "3"], "--match"),
    (["random"], "required"),
    (["random", "random@9"], "ply"),
    (["tournament", "random"], "two agents"),
    (["curve", "/nonexistent/run"], "does not exist"),
    (["random", "pubeval", "--luck", "--cubeful"], "cubeless money"),
    (["random", "pubeval", "--luck", "--match", "3"], "cubeless money"),
])
def test_bad_input_is_one_sentence_and_exit_code_2(argv: list[str], words: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_a_usage_error_names_the_command_and_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["random", "random", "--games", "0"]) == 2
    assert capsys.readouterr().err == ("bgnet eval: error: argument --games: '0' must be at least 2 "
                                       "(see 'bgnet eval --help')\n")
    assert main(["random", "random", "--games", "0"], prog="python -m eval") == 2  # the repository's entry point
    assert capsys.readouterr().err.startswith("python -m eval: error: argument --games:")


def test_an_odd_number_of_games_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Games come in pairs on the same dice: 3 games cannot be played as asked."""
    for argv in (["random", "random", "--games", "3"], ["tournament", "random", "pubeval", "--games", "5"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "is odd, but games come in pairs" in err and err.count("\n") == 1


def test_too_few_games_say_so_instead_of_a_zero_interval(capsys: pytest.CaptureFixture[str]) -> None:
    """One pair gives no spread at all, and two pairs of a mirror duel agree exactly: no interval, in words."""
    assert main(["random", "random", "--games", "2", "--quiet"]) == 0
    one_pair = capsys.readouterr().out
    assert "1 paired deal," in one_pair and "+-" not in one_pair and "inf" not in one_pair
    assert one_pair.count("(too few games for an interval)") == 4
    assert main(["random", "random", "--games", "4", "--seed", "3", "--quiet"]) == 0
    two_pairs = capsys.readouterr().out
    assert "win rate:        0.500 (too few games for an interval)" in two_pairs and "+- 0.000" not in two_pairs
    assert "points per game for random: +0.250 +- 0.490 (95%)" in two_pairs  # a real spread is still shown


def test_only_a_bgnet_error_becomes_exit_code_2(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import bgnet.cli.eval as eval_cli
    from bgnet import CurveError

    def refuse(argv: object, prog: str) -> int:
        raise CurveError("no run\nthere")

    monkeypatch.setattr(eval_cli, "cmd_duel", refuse)
    assert main(["a", "b"]) == 2 and capsys.readouterr().err == "bgnet eval: error: no run there\n"

    def broken(argv: object, prog: str) -> int:
        raise ValueError("a bug, not bad input")

    monkeypatch.setattr(eval_cli, "cmd_duel", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["a", "b"])


def test_an_unwritable_report_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "folder" / "r.json"
    assert main(["random", "random", "--games", "2", "--quiet", "--json", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bgnet eval: error: cannot write the report to {target}") and err.count("\n") == 1


def test_module_entry_point_exits_2_without_a_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "eval", "nosuchbot", "random"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("rules, chunk", [(None, "VECTOR_CHUNK"), (Rules(match_length=3), "LOOP_CHUNK")])
def test_workers_give_the_same_result(rules: Rules | None, chunk: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, chunk, 5)
    spec = DuelSpec("pubeval", "random", 14, seed=17, rules=rules)
    one = run_duel(spec, workers=1, progress=False)
    two = run_duel(spec, workers=2, progress=False)
    assert one.points == two.points and one.summary() == two.summary()


def test_workers_give_the_same_luck(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "VECTOR_CHUNK", 5)
    spec = DuelSpec("pubeval", "random", 14, seed=17, luck=True)
    one = run_duel(spec, workers=1, progress=False)
    two = run_duel(spec, workers=2, progress=False)
    assert one.adjusted_ppg is not None and one.summary() == two.summary()


def test_luck_narrows_the_interval_and_keeps_the_games(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["default", "pubeval", "--games", "200", "--seed", "5", "--json", "-", "--quiet"]
    assert main(base) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(base + ["--luck"]) == 0
    lucky = json.loads(capsys.readouterr().out)
    assert plain["adjusted_ppg"] is None
    assert (lucky["ppg"], lucky["ci95"]) == (plain["ppg"], plain["ci95"])  # the same games
    assert lucky["adjusted_ci95"] < plain["ci95"] / 1.5
    assert abs(lucky["adjusted_ppg"] - plain["ppg"]) < plain["ci95"]
    assert main(base[:-3] + ["--luck", "--quiet"]) == 0
    assert "luck-adjusted:" in capsys.readouterr().out


def test_same_seed_same_report(capsys: pytest.CaptureFixture[str]) -> None:
    reports = []
    for seed in ("1", "1", "2"):
        assert main(["random", "pubeval", "--games", "20", "--seed", seed, "--cubeful", "--json", "-", "--quiet"]) == 0
        report = json.loads(capsys.readouterr().out)
        reports.append({k: v for k, v in report.items() if k not in ("elapsed_s", "games_per_s")})
    assert reports[0] == reports[1] and reports[0] != reports[2]


def test_least_squares_ratings_recover_consistent_differences() -> None:
    truth = [0.6, -0.1, -0.5]
    pairs = [(i, j, truth[i] - truth[j], 1.0) for i in range(3) for j in range(i + 1, 3)]
    assert least_squares_ratings(3, pairs) == pytest.approx(truth)
    assert elo_difference(0.5, 100) == pytest.approx(0.0)
    assert elo_difference(0.76, 100) == pytest.approx(400 * __import__("math").log10(0.76 / 0.24))
    assert elo_difference(1.0, 10) < float("inf")


def test_tournament_ranks_pubeval_above_random(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "random", "pubeval", str(CHECKPOINT), "--games", "20", "--json", "-", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["results"]) == 3
    ratings = {r["agent"]: r for r in report["ratings"]}
    assert ratings["pubeval"]["ppg_rating"] > ratings["random"]["ppg_rating"]
    assert ratings["pubeval"]["elo"] > ratings["random"]["elo"]
    assert sum(r["ppg_rating"] for r in report["ratings"]) == pytest.approx(0.0, abs=1e-9)


def test_curve_writes_tensorboard_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for games in (2000, 500):
        shutil.copy(CHECKPOINT, run / f"games_{games:09d}.pt")
    (run / "last.pt").write_bytes(b"not a checkpoint")  # ignored: not games_*.pt
    assert main(["curve", str(run), "--opponent", "random", "--games", "8", "--json", "-", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["games_trained"] for p in report["points"]] == [500, 2000]
    assert all(p["games"] == 8 for p in report["points"])
    assert list(run.glob("events.out.tfevents.*"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert report["png"] is None
    else:
        assert report["png"] and Path(report["png"]).stat().st_size > 0


def test_bgnet_eval_is_the_same_command_as_python_m_eval(tmp_path: Path) -> None:
    """``bgnet eval`` (installed with the package) passes its arguments to the evaluator unchanged."""


    args = ["pubeval", "random", "--games", "6", "--seed", "3", "--quiet", "--json", "-"]
    outs = []
    for cmd in (["-m", "eval"], ["-m", "bgnet", "eval"]):
        proc = subprocess.run([sys.executable, *cmd, *args], cwd=ROOT if cmd[1] == "eval" else tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        outs.append({k: v for k, v in data.items() if k not in ("elapsed_s", "games_per_s")})
    assert outs[0] == outs[1] and outs[0]["games"] == 6
    bad = subprocess.run([sys.executable, "-m", "bgnet", "eval", "nosuchbot", "random"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("extra, a, b", [(["--games", "6", "--seed", "3"], "pubeval", "random"),
                                         (["--games", "2", "--seed", "5", "--match", "3"], "default", "pubeval")])
def test_saved_games_replay_legally_with_the_duels_results(tmp_path: Path, extra: list[str], a: str, b: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from bgnet.sim.recorded_games import file_name, player_names
    from bgnet.io.formats import read_match
    from bgnet.io.replay import replay_match

    folder = tmp_path / "games"
    assert main([a, b, *extra, "--quiet", "--save-games", str(folder)]) == 0
    assert "match files" in capsys.readouterr().out
    games = int(extra[1])
    rules = Rules(match_length=int(extra[5])) if "--match" in extra else None
    spec = DuelSpec(a, b, (games + 1) // 2, int(extra[3]), rules)
    outcomes = runner.play_chunk((spec, 0, spec.pairs))  # the duel's own games for those deals
    assert len(list(folder.glob("*.mat"))) == 2 * spec.pairs == len(outcomes)
    names = player_names(spec)
    for t in outcomes:
        record = replay_match(read_match(folder / file_name(names, t.deal, t.side)))  # every play checked
        assert record.players == (names if t.side == 0 else names[::-1])
        a_seat = 0 if t.side == 0 else 1
        points = tuple(g.points if g.winner == a_seat else -g.points for g in record.games)
        assert points == t.points and all(g.winner is not None for g in record.games)
        if rules is not None:  # a whole match: its winner is the duel's
            assert (record.games[-1].winner == a_seat) == t.match_won
