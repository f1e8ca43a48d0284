"""The rounds pipeline: positions, 1-ply labels, fit, duel; resumable and reproducible from a seed."""

import numpy as np
import pytest
import torch

from bgnet.core import _game_kernels as gk
from bgnet.core.errors import BgnetError
from bgnet.nets.model import BgNet, ModelConfig, load_net, save_checkpoint
from bgnet.play.search import evaluate_boards
from bgnet.cli.rounds import main
from bgnet.trainer.inference import probs_fn_of
from bgnet.trainer.round_config import RoundsConfig
from bgnet.trainer.round_labels import label_positions
from bgnet.trainer.round_positions import collect_positions
from bgnet.trainer.rounds import run_rounds

SMALL = dict(rounds=2, positions=200, epochs=1, duel_pairs=20, batch_games=16, seed=3)


@pytest.fixture()
def init(tiny_v2_checkpoint):
    return tiny_v2_checkpoint


def test_positions_are_live_and_labels_are_the_1ply_search(init):
    fn = probs_fn_of(load_net(init))
    boards = collect_positions(fn, 100, seed=5, batch_games=16)
    assert boards.shape == (100, 26) and (gk.terminal_codes(boards) == 0).all()
    assert np.array_equal(boards, collect_positions(fn, 100, seed=5, batch_games=16))
    y = label_positions(fn, boards, "ply1", seed=0)
    assert y.shape == (100, 5) and np.allclose(y, evaluate_boards(fn, boards, 1), atol=1e-6)
    # the 1-ply label is not the net's own 0-ply value (else the fit would learn nothing)
    assert np.abs(y - fn(boards)).max() > 1e-3
    with pytest.raises(ValueError, match="not one of"):
        label_positions(fn, boards, "ply9", seed=0)
    # the last level pruned to pubeval's best plays: the full 1-ply labels when no roll has that many plays
    assert np.allclose(label_positions(fn, boards[:20], "ply1", seed=0, top=1000), y[:20], atol=1e-5)
    with pytest.raises(ValueError, match="label-top"):
        label_positions(fn, boards, "rollout", seed=0, top=4)


def test_rounds_resume_and_reproduce(init, tmp_path):
    cfg = RoundsConfig(**SMALL)
    full = run_rounds(str(init), tmp_path / "a", cfg, log=lambda s: None)
    assert [r["round"] for r in full.done] == [1, 2]
    # the same seed from nothing in two sittings (one round, then one more): the same duels and final net
    out_b = tmp_path / "b"
    run_rounds(str(init), out_b, RoundsConfig(**{**SMALL, "rounds": 1}), log=lambda s: None)
    again = run_rounds(str(init), out_b, cfg, log=lambda s: None)
    assert [r["duel_ppg"] for r in again.done] == [r["duel_ppg"] for r in full.done]
    a, b = load_net(tmp_path / "a" / "round_002.pt"), load_net(out_b / "round_002.pt")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert load_net(tmp_path / "a" / "round_001.pt").config.feature_version == 2


def test_bfloat16_labels_are_the_search_on_the_bf16_net_and_only_where_they_apply(init, tmp_path):
    # --precision bfloat16 labels with bgnet.nets.bf16net's twin of the round's net (positions, fit and duel stay
    # float32): the same positions as a float32 run, labels within a few thousandths of its labels
    from bgnet.nets.bf16net import Bf16Net
    from bgnet.trainer.inference import numpy_net_of

    small = {**SMALL, "rounds": 1, "positions": 40}
    run_rounds(str(init), tmp_path / "a", RoundsConfig(**small), log=lambda s: None)
    run_rounds(str(init), tmp_path / "b", RoundsConfig(**{**small, "precision": "bfloat16"}), log=lambda s: None)
    with np.load(tmp_path / "a" / "labels_001.npz") as a, np.load(tmp_path / "b" / "labels_001.npz") as b:
        assert np.array_equal(a["boards"], b["boards"])
        want = evaluate_boards(Bf16Net(numpy_net_of(load_net(init))), b["boards"], 1)
        assert np.array_equal(b["targets"], want.astype(b["targets"].dtype))
        assert 0 < np.abs(a["targets"] - b["targets"]).max() < 0.02
    for bad in ({"precision": "half"}, {"precision": "bfloat16", "label": "rollout"},
                {"precision": "bfloat16", "kind": "race"}):
        with pytest.raises(BgnetError, match="precision"):
            RoundsConfig(**{**SMALL, **bad}).check()


def test_labels_in_parts_resume_and_do_not_depend_on_workers(init, tmp_path, monkeypatch):
    import bgnet.trainer.round_labels as labels_mod

    cfg = RoundsConfig(**{**SMALL, "rounds": 1, "positions": 90, "label_chunk": 40})
    whole = run_rounds(str(init), tmp_path / "a", cfg, log=lambda s: None)
    # interrupted after its first part, then resumed on two workers: the same labels, the first part not redone
    real, calls = labels_mod.label_positions, []

    def once_then_fail(*args, **kwargs):
        calls.append(len(args[1]))
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(labels_mod, "label_positions", once_then_fail)
    with pytest.raises(KeyboardInterrupt):
        run_rounds(str(init), tmp_path / "b", cfg, log=lambda s: None)
    assert sorted(p.name for p in (tmp_path / "b").glob("labels_001_part_*")) == ["labels_001_part_000.npz"]
    monkeypatch.setattr(labels_mod, "label_positions", lambda *a, **k: calls.append(len(a[1])) or real(*a, **k))
    again = run_rounds(str(init), tmp_path / "b", RoundsConfig(**{**SMALL, "rounds": 1, "positions": 90,
                                                                  "label_chunk": 40, "workers": 2}), log=lambda s: None)
    assert calls == [40, 40, 40, 10]  # part 0, the failed part 1, then parts 1 and 2 only
    a, b = np.load(tmp_path / "a" / "labels_001.npz"), np.load(tmp_path / "b" / "labels_001.npz")
    assert np.array_equal(a["boards"], b["boards"]) and np.array_equal(a["targets"], b["targets"])
    assert again.done[0]["duel_ppg"] == whole.done[0]["duel_ppg"]
    assert not list((tmp_path / "b").glob("labels_001_part_*")) and not (tmp_path / "b" / "positions_001.npz").exists()
    # the parts' labels are each part's own 1-ply search, as in one piece
    fn = probs_fn_of(load_net(init))
    assert np.allclose(a["targets"], evaluate_boards(fn, a["boards"], 1), atol=1e-6)


def test_a_fit_window_fits_a_round_on_its_own_and_the_earlier_rounds_labels(init, tmp_path):
    from bgnet.nets.model import net_from_checkpoint, read_checkpoint
    from bgnet.trainer.round_config import round_seed
    from bgnet.trainer.round_fit import fit_copy
    from bgnet.trainer.round_labels import window_labels

    out = tmp_path / "w"
    run_rounds(str(init), out, RoundsConfig(**{**SMALL, "rounds": 1}), log=lambda s: None)
    # the window may be widened when a run is continued: it changes only the fits of rounds still to run
    cfg = RoundsConfig(**{**SMALL, "fit_window": 2})
    state = run_rounds(str(init), out, cfg, log=lambda s: None)
    one, two = np.load(out / "labels_001.npz"), np.load(out / "labels_002.npz")
    boards, targets = window_labels(out, 2, 2, two["boards"], two["targets"])
    assert np.array_equal(boards, np.concatenate([one["boards"], two["boards"]]))
    assert np.array_equal(targets, np.concatenate([one["targets"], two["targets"]]))
    first = one["boards"]
    assert window_labels(out, 1, 2, first, one["targets"])[0] is first  # nothing before round 1
    # round 2's net is the round-2 starting net fitted to both rounds' labels
    start = load_net(out / "round_001.pt") if state.done[0]["kept"] else load_net(init)
    expect, _ = fit_copy(start, boards, targets, cfg, round_seed(cfg.seed, 2, 2))
    got = net_from_checkpoint(read_checkpoint(out / "round_002.pt"), "round 2")
    assert all(torch.equal(x, y) for x, y in zip(expect.state_dict().values(), got.state_dict().values()))
    with pytest.raises(ValueError, match="fit-window"):
        run_rounds(str(init), tmp_path / "bad", RoundsConfig(**{**SMALL, "fit_window": 0}), log=lambda s: None)


def test_refit_fits_a_rounds_labels_again_into_another_start_window_or_width(init, tmp_path, capsys):
    """``refit`` is round R's fit with another start, window or width: the same net ``fit_copy`` makes of the
    window's labels with the run's settings and round R's fit seed; a folder without a run, a round without
    labels or a narrower width gets exit code 2, one sentence and no file."""
    from bgnet.trainer.round_config import round_seed
    from bgnet.trainer.round_fit import fit_copy
    from bgnet.trainer.round_labels import window_labels

    out = tmp_path / "run"
    run_rounds(str(init), out, RoundsConfig(**SMALL), log=lambda s: None)
    dst = tmp_path / "wide.pt"
    assert main(["refit", str(out), str(dst), "--start", str(out / "round_001.pt"), "--round", "2",
                 "--fit-window", "2", "--hidden", "24"]) == 0
    assert "fitted to" in capsys.readouterr().out
    two = np.load(out / "labels_002.npz")
    boards, targets = window_labels(out, 2, 2, two["boards"], two["targets"])
    cfg = RoundsConfig(**{**SMALL, "fit_window": 2, "hidden": "24"})
    expect, _ = fit_copy(load_net(out / "round_001.pt"), boards, targets, cfg, round_seed(cfg.seed, 2, 2))
    got = load_net(dst)
    assert got.config.hidden == (24,)
    assert all(torch.equal(x, y) for x, y in zip(expect.state_dict().values(), got.state_dict().values()))
    # another run's labels fitted too come first, as an older round's would
    again = tmp_path / "again.pt"
    assert main(["refit", str(out), str(again), "--start", str(init), "--round", "2",
                 "--with-labels", str(out / "labels_001.npz")]) == 0
    one = np.load(out / "labels_001.npz")
    cfg = RoundsConfig(**SMALL)
    expect, _ = fit_copy(load_net(init), np.concatenate([one["boards"], two["boards"]]),
                         np.concatenate([one["targets"], two["targets"]]), cfg, round_seed(cfg.seed, 2, 2))
    assert all(torch.equal(x, y) for x, y in zip(expect.state_dict().values(), load_net(again).state_dict().values()))
    np.savez(tmp_path / "odd.npz", boards=one["boards"][:, :10], targets=one["targets"])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "state.json").write_text('{"config": {"no_such_setting": 1}}')
    for bad in (["refit", str(tmp_path), str(tmp_path / "x.pt"), "--start", str(init), "--round", "1"],
                ["refit", str(tmp_path / "broken"), str(tmp_path / "x.pt"), "--start", str(init), "--round", "1"],
                ["refit", str(out), str(tmp_path / "x.pt"), "--start", str(init), "--round", "1",
                 "--with-labels", str(tmp_path / "odd.npz")],
                ["refit", str(out), str(tmp_path / "x.pt"), "--start", str(init), "--round", "1",
                 "--with-labels", str(tmp_path / "none.npz")],
                ["refit", str(out), str(tmp_path / "x.pt"), "--start", str(init), "--round", "3"],
                ["refit", str(out), str(tmp_path / "x.pt"), "--start", str(init), "--round", "1", "--hidden", "8"]):
        assert main(bad) == 2
    err = capsys.readouterr().err
    assert "has no state.json" in err and "has no labels for round 3 (labels_003.npz)" in err
    assert "each at least as wide as [16]" in err and "Traceback" not in err
    assert "is not a rounds run's state" in err
    assert "odd.npz' does not hold labels like the run's" in err and "none.npz' is not a labels file" in err
    assert not (tmp_path / "x.pt").exists()


def test_cli_refuses_other_settings_in_the_same_folder(init, tmp_path, capsys):
    out = tmp_path / "r"
    args = ["--init", str(init), "--out", str(out), "--rounds", "1", "--positions", "100", "--epochs", "1",
            "--duel-pairs", "10", "--batch-games", "16"]
    assert main(args) == 0
    assert main(args[:-2] + ["--batch-games", "8"]) == 2
    assert "other settings" in capsys.readouterr().err
    assert main(["--init", str(tmp_path / "nope.pt"), "--out", str(tmp_path / "x")]) == 2
    assert main(args[:2] + ["--out", str(tmp_path / "w"), "--workers", "0"]) == 2
    assert main(args[:2] + ["--out", str(tmp_path / "c"), "--label-chunk", "-1"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert main(args[:2] + ["--out", str(tmp_path / "l"), "--loss", "hinge"]) == 2
    assert "loss 'hinge' is not one of mse, outcomes" in capsys.readouterr().err


def test_the_module_still_runs_as_the_command_line(tmp_path):
    """``python -m bgnet.trainer.rounds`` starts ``bgnet.cli.rounds``: a missing checkpoint is one sentence, status 2."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "bgnet.trainer.rounds", "widen", str(tmp_path / "none.pt"),
                        str(tmp_path / "out.pt")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("bgnet.trainer.rounds widen: error: checkpoint")
    assert "does not exist" in r.stderr and not (tmp_path / "out.pt").exists()


def test_average_and_committee_commands_write_the_combined_net(init, tmp_path, capsys):
    """``average`` and ``committee`` write loadable nets of the given checkpoints; a net that does not fit
    the others, or a missing file, gets exit code 2 and one sentence."""
    torch.manual_seed(1)
    other = tmp_path / "other.pt"
    save_checkpoint(other, BgNet(ModelConfig.for_features([16], "relu", 2)))
    assert main(["average", str(tmp_path / "mean.pt"), str(init), str(other)]) == 0
    assert main(["committee", str(tmp_path / "joined.pt"), str(init), str(other)]) == 0
    assert load_net(tmp_path / "mean.pt").config.hidden == (16,)
    joined, a, b = load_net(tmp_path / "joined.pt"), load_net(init), load_net(other)
    assert joined.config.hidden == (32,)
    x = torch.randn(20, joined.config.num_features)
    with torch.no_grad():
        assert torch.allclose(joined.head(joined.body(x)), (a.head(a.body(x)) + b.head(b.body(x))) / 2, atol=1e-5)
    capsys.readouterr()
    save_checkpoint(tmp_path / "deep.pt", BgNet(ModelConfig.for_features([8, 4], "relu", 2)))
    assert main(["committee", str(tmp_path / "bad.pt"), str(init), str(tmp_path / "deep.pt")]) == 2
    assert main(["average", str(tmp_path / "bad.pt"), str(init), str(tmp_path / "nope.pt")]) == 2
    err = capsys.readouterr().err
    assert "share inputs, depth and activation" in err and "does not exist" in err
    assert not (tmp_path / "bad.pt").exists()


def test_a_round_can_fit_a_wider_student_with_a_cosine_rate(init, tmp_path, capsys):
    """``--hidden 24`` fits a Net2Net-widened copy (the round's net and the next current net are 24 wide) and
    ``--schedule cosine`` ends the fit at a rate of 0; a width list that is not one, or another schedule, is
    refused with one sentence and exit code 2."""
    from bgnet.trainer.round_fit import fit_copy

    cfg = RoundsConfig(**{**SMALL, "rounds": 1, "hidden": "24", "schedule": "cosine"})
    run_rounds(str(init), tmp_path / "w", cfg, log=lambda _: None)
    assert load_net(tmp_path / "w" / "round_001.pt").config.hidden == (24,)
    net = load_net(init)
    boards = np.zeros((40, 26), np.int8)
    boards[:, [6, 8, 13, 24]] = [5, 3, 5, 2]
    boards[:, [19, 17, 12, 1]] = [-5, -3, -5, -2]
    targets = np.full((40, 5), 0.5, np.float32)
    wide, _ = fit_copy(net, boards, targets, cfg, seed=1)
    flat, _ = fit_copy(net, boards, targets, RoundsConfig(**{**SMALL, "epochs": 1}), seed=1)
    assert wide.config.hidden == (24,) and flat.config.hidden == (16,)
    args = ["--init", str(init), "--out", str(tmp_path / "bad"), "--rounds", "1"]
    assert main(args + ["--hidden", "wide"]) == 2
    assert main(args + ["--schedule", "step"]) == 2
    assert main(args + ["--candidates", "-1"]) == 2
    assert main(args + ["--candidates", "2", "--kind", "race"]) == 2
    assert main(args + ["--rank-weight", "1"]) == 2  # no candidates to rank
    assert main(args + ["--candidates", "3", "--rank-weight", "1", "--minibatch", "256"]) == 2
    assert main(args[:3] + [str(tmp_path / "narrow"), "--rounds", "1", "--hidden", "8"]) == 2
    err = capsys.readouterr().err
    assert "is not a list of widths" in err and "is not constant or cosine" in err
    assert "--candidates must be 0 or more" in err and "--kind all only" in err
    assert err.count("--rank-weight must be 0, or above 0 with --candidates 2 or more that divides") == 2
    assert "each at least as wide as [16]" in err
    assert not list((tmp_path / "narrow").glob("*.npz"))  # refused before anything was labelled


def _plays_by_roll(fn, boards):
    """For every board and each of the 21 rolls, its plays' afterstates turned round, ordered best first at 0-ply."""
    from bgnet.core.movegen import generate_afterstates, swap_sides_batch
    from bgnet.core.probs import equities
    from bgnet.play.search import ROLLS

    rolls = np.array(ROLLS, np.int8)
    for board in boards:
        after, offsets = generate_afterstates(np.repeat(board[None], len(rolls), 0), rolls)
        replies = swap_sides_batch(after)
        mover = -equities(fn(replies))
        for i in range(len(rolls)):
            a, b = offsets[i], offsets[i + 1]
            yield replies[a + np.argsort(-mover[a:b], kind="stable")]


def test_candidates_are_the_best_plays_afterstates_turned_round(init):
    """With k = 1 each candidate is, turned round, the 0-ply best play of its board for one of the 21 rolls;
    with k = 3 every candidate is a legal afterstate of its board, at most 3 a board, none of a finished game;
    the same seed gives the same candidates."""
    from bgnet.trainer.round_positions import candidate_positions

    fn = probs_fn_of(load_net(init))
    base = collect_positions(fn, 3, seed=5, batch_games=4)
    best, legal = set(), set()
    for plays in _plays_by_roll(fn, base):
        best.add(plays[0].tobytes())
        legal.update(r.tobytes() for r in plays)
    one = candidate_positions(fn, base, 1, 100, seed=9)
    assert 1 <= len(one) <= 3 and all(c.tobytes() in best for c in one)
    three = candidate_positions(fn, base, 3, 100, seed=9)
    assert len(one) <= len(three) <= 9 and all(c.tobytes() in legal for c in three)
    assert (gk.terminal_codes(three) == 0).all()
    assert np.array_equal(three, candidate_positions(fn, base, 3, 100, seed=9))
    assert len(candidate_positions(fn, base, 3, 2, seed=9)) == 2


def test_grouped_candidates_are_whole_groups_of_one_boards_best_plays(init, tmp_path):
    """grouped=True: n // k groups of k consecutive rows, each the k best 0-ply plays of one board for one
    roll, best first; a rank-weighted round labels whole groups and fits them."""
    from bgnet.trainer.round_positions import candidate_positions

    fn = probs_fn_of(load_net(init))
    base = collect_positions(fn, 6, seed=5, batch_games=4)
    tops = {plays[:2].tobytes() for plays in _plays_by_roll(fn, base)}  # every board and roll's two best, in order
    grouped = candidate_positions(fn, base, 2, 7, seed=9, grouped=True)
    assert grouped.shape == (6, 26)
    assert all(grouped[g:g + 2].tobytes() in tops for g in range(0, 6, 2))
    cfg = RoundsConfig(**{**SMALL, "rounds": 1, "positions": 40, "candidates": 2, "rank_weight": 1.0})
    state = run_rounds(str(init), tmp_path / "g", cfg, log=lambda _: None)
    with np.load(tmp_path / "g" / "labels_001.npz") as data:
        assert len(data["boards"]) == 40
    assert state.done[0]["positions"] == 40 and np.isfinite(state.done[0]["fit_mse"])


def test_netset_duel_plays_the_deals_of_a_paired_duel(init, tmp_path, capsys):
    """``rounds duel`` plays agent ``netset[-no-bearoff]:CKPT`` (``load_agent``) on a paired duel's deals: a
    single-net checkpoint without the database scores what its net scores in ``paired_duel``; a missing
    checkpoint is one sentence and exit status 2."""
    from bgnet.play.agents import load_agent
    from bgnet.play.netset_agent import NetSetAgent
    from bgnet.play.scorers import PubevalScorer
    from bgnet.sim.duel import NeuralScorer, paired_duel
    from bgnet.sim.runner import DuelSpec, run_duel

    agent = load_agent(f"netset-no-bearoff:{init}@0")
    assert isinstance(agent, NetSetAgent) and not agent.netset.bearoff and set(agent.netset.nets) == {"contact"}
    assert load_agent(f"netset:{init}").netset.bearoff and load_agent(f"NetSet:{init}@1").ply == 1
    ours = run_duel(DuelSpec(f"netset-no-bearoff:{init}", "pubeval", 20, 9), progress=False)
    ref = paired_duel(NeuralScorer(probs_fn_of(load_net(init))), PubevalScorer(), 20, 9)
    assert ours.games == 40 and ours.ppg == pytest.approx(ref.ppg)
    assert main(["duel", str(init), "pubeval", "--games", "40", "--seed", "9", "--no-bearoff"]) == 0
    out = capsys.readouterr().out
    assert f"(nets only) vs pubeval: 40 games, seed 9: {ours.ppg:+.3f} +- {ours.ci95:.3f} ppg" in out
    assert main(["duel", str(tmp_path / "none.pt"), "pubeval"]) == 2
    assert "bgnet.trainer.rounds duel: error: checkpoint" in capsys.readouterr().err


def test_a_kind_round_fits_only_that_kinds_net(init, tmp_path):
    """kind="race": race positions only, fitted into a race net of a NetSet; the contact net stays as it was."""
    from bgnet.features.encoding import KINDS, position_kinds
    from bgnet.nets.model import load_netset
    from bgnet.trainer.round_positions import collect_kind_positions

    fn = probs_fn_of(load_net(init))
    race = collect_kind_positions(fn, 60, seed=4, kind="race", batch_games=16)
    assert race.shape == (60, 26) and (position_kinds(race) == KINDS.index("race")).all()
    cfg = RoundsConfig(**{**SMALL, "rounds": 1, "positions": 60, "kind": "race", "label": "ply1", "keep": "mean"})
    state = run_rounds(str(init), tmp_path / "k", cfg, log=lambda s: None)
    assert len(state.done) == 1
    fitted = load_netset(tmp_path / "k" / "round_001.pt")
    assert set(fitted.nets) == {"contact", "race"}
    start = load_net(init)
    assert all(torch.equal(x, y) for x, y in zip(fitted.nets["contact"].state_dict().values(), start.state_dict().values()))
    assert any(not torch.equal(x, y) for x, y in zip(fitted.nets["race"].state_dict().values(), start.state_dict().values()))
    with pytest.raises(ValueError, match="kind"):
        run_rounds(str(init), tmp_path / "bad", RoundsConfig(**{**SMALL, "kind": "blitz"}), log=lambda s: None)


def test_candidates_command_writes_the_positions_a_round_labels(tmp_path, capsys) -> None:
    # The first step of distillation on the CPU: the release's candidates as a labels command's input.
    from bgnet.core import _game_kernels as gk
    from bgnet.core.resources import default_checkpoint

    out = tmp_path / "cands.npz"
    assert main(["candidates", str(default_checkpoint()), str(out), "--positions", "30", "--seed", "3"]) == 0
    with np.load(out) as data:
        boards = data["boards"]
    assert boards.dtype == np.int8 and boards.shape[1] == 26 and 30 < len(boards) <= 4 * 30
    assert (gk.terminal_codes(boards) == 0).all()  # finished games are left out
    assert f"candidates of 30 positions to {out}" in capsys.readouterr().out
    assert main(["candidates", str(default_checkpoint()), str(out), "--positions", "0"]) == 2
    assert "--positions and --candidates must be at least 1" in capsys.readouterr().err
