"""Distillation (bgnet.trainer.distill): label files of every format read alike, a fresh student learns them,
the same seed gives the same net, and bad input is one sentence."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.trainer.distill import DistillConfig, DistillError, distill, fit_student, holdout_split, read_labels
from bgnet.trainer.labels import U16_SCALE, quantize_probs


def _labels(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Self-play boards of the release and its 0-ply chances of them (a stand-in for search labels)."""
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.trainer.round_positions import collect_positions

    fn = load_evaluator(DEFAULT_CHECKPOINT).probs_of_boards
    boards = collect_positions(fn, n, seed, batch_games=64)
    return boards, fn(boards).astype(np.float32)


def test_label_files_of_every_format_read_alike(tmp_path) -> None:
    boards, probs = _labels(40, 1)
    np.savez(tmp_path / "rounds.npz", boards=boards[:10], targets=probs[:10])
    np.savez(tmp_path / "labels.npz", boards=boards[10:20], probs=probs[10:20], stderr=np.zeros((10, 5)))
    np.savez(tmp_path / "device.npz", boards=boards[20:], probs=quantize_probs(probs[20:]))
    got_boards, got = read_labels([tmp_path / f for f in ("rounds.npz", "labels.npz", "device.npz")])
    assert np.array_equal(got_boards, boards) and got.dtype == np.float32
    assert np.array_equal(got[:20], probs[:20]) and np.abs(got[20:] - probs[20:]).max() <= 0.5 / U16_SCALE + 1e-7


def test_bad_label_files_are_one_clear_error(tmp_path) -> None:
    np.savez(tmp_path / "no_targets.npz", boards=np.zeros((3, 26), np.int8))
    np.savez(tmp_path / "shape.npz", boards=np.zeros((3, 26), np.int8), targets=np.zeros((3, 4)))
    np.savez(tmp_path / "range.npz", boards=np.zeros((3, 26), np.int8), targets=np.full((3, 5), 1.5))
    (tmp_path / "text.npz").write_text("not a zip")
    for name, words in (("no_targets.npz", "not a labels file"), ("shape.npz", "(N, 5) chances"),
                        ("range.npz", "outside [0, 1]"), ("text.npz", "not a labels file"),
                        ("missing.npz", "not a labels file")):
        with pytest.raises(DistillError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            read_labels([tmp_path / name])
    with pytest.raises(DistillError):
        read_labels([])
    with pytest.raises(DistillError):
        DistillConfig(hidden=(16, 0))


def test_a_student_learns_its_labels_and_the_same_seed_gives_the_same_net(tmp_path) -> None:
    import torch

    from bgnet.nets.fastnet import load_evaluator
    from bgnet.nets.model import read_checkpoint

    boards, probs = _labels(3000, 2)
    cfg = DistillConfig(hidden=(16, 8), epochs=6, lr=3e-3, minibatch=128, holdout=300, seed=3)
    untrained = DistillConfig(hidden=(16, 8), epochs=1, lr=1e-9, minibatch=128, holdout=300, seed=3)
    _net, before = fit_student(boards, probs, untrained)
    np.savez(tmp_path / "labels.npz", boards=boards, targets=probs)
    after = distill([tmp_path / "labels.npz"], tmp_path / "a.pt", cfg)
    assert after < 0.5 * before  # the held-out error of the student's chances fell
    distill([tmp_path / "labels.npz"], tmp_path / "b.pt", cfg)
    a, b = read_checkpoint(tmp_path / "a.pt"), read_checkpoint(tmp_path / "b.pt")
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert a["model_config"]["hidden"] == [16, 8] and a["labels"] == 3000 and "distilled" in a["recipe"]
    student = load_evaluator(tmp_path / "a.pt")  # a checkpoint every command reads
    assert student.probs_of_boards(boards[:4]).shape == (4, 5)


def test_the_command_writes_a_checkpoint_and_refuses_bad_input_in_one_sentence(tmp_path, capsys) -> None:
    from bgnet.cli.distill import main

    boards, probs = _labels(200, 4)
    np.savez(tmp_path / "labels.npz", boards=boards, targets=probs)
    assert main([str(tmp_path / "s.pt"), str(tmp_path / "labels.npz"), "--hidden", "8,4", "--epochs", "1"]) == 0
    assert (tmp_path / "s.pt").is_file() and "wrote" in capsys.readouterr().err
    assert main([str(tmp_path / "v1.pt"), str(tmp_path / "labels.npz"), "--hidden", "8", "--epochs", "1",
                 "--features", "1"]) == 0  # the cheapest inputs, as a race net might use
    capsys.readouterr()
    from bgnet.nets.model import read_checkpoint

    assert read_checkpoint(tmp_path / "v1.pt")["model_config"]["feature_version"] == 1
    for argv, words in (([str(tmp_path / "t.pt"), str(tmp_path / "none.npz")], "not a labels file"),
                        ([str(tmp_path / "t.pt"), str(tmp_path / "labels.npz"), "--hidden", "8,x"], "not a list"),
                        ([str(tmp_path / "t.pt"), str(tmp_path / "labels.npz"), "--epochs", "0"], "positive"),
                        ([str(tmp_path / "t.pt"), str(tmp_path / "labels.npz"), "--features", "9"], "not one of")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "t.pt").exists()


def test_grouped_candidates_fit_with_the_ranking_term_and_hold_out_whole_groups(tmp_path, capsys) -> None:
    # rounds candidates --grouped gives whole groups of four siblings; a fit with --group 4 keeps them whole
    # (the ranking term compares siblings), and a file that does not hold whole groups is refused.
    from bgnet.cli.distill import main as distill_main
    from bgnet.cli.rounds import main as rounds_main
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.fastnet import load_evaluator

    cands = tmp_path / "cands.npz"
    assert rounds_main(["candidates", str(default_checkpoint()), str(cands), "--positions", "120", "--grouped"]) == 0
    with np.load(cands) as data:
        boards = data["boards"]
    assert len(boards) % 4 == 0 and len(boards) >= 200
    probs = load_evaluator(default_checkpoint()).probs_of_boards(boards)
    np.savez(tmp_path / "labels.npz", boards=boards, targets=probs)
    args = [str(tmp_path / "g.pt"), str(tmp_path / "labels.npz"), "--hidden", "8,4", "--epochs", "2",
            "--minibatch", "64", "--holdout", "40"]
    assert distill_main([*args, "--group", "4", "--rank-weight", "1"]) == 0
    np.savez(tmp_path / "labels.npz", boards=boards[:-1], targets=probs[:-1])
    capsys.readouterr()
    assert distill_main([*args, "--group", "4"]) == 2
    assert "a multiple of the group (4)" in capsys.readouterr().err
    assert distill_main([*args, "--group", "3"]) == 2  # the minibatch of 64 holds no whole groups of 3
    assert distill_main([*args, "--rank-weight", "1"]) == 2  # ranking needs siblings
    cfg = DistillConfig(hidden=(8, 4), epochs=1, minibatch=64, holdout=40, group=4)
    rows = np.arange(len(boards) - len(boards) % 4)
    net, held = fit_student(boards[rows], probs[rows], cfg)
    assert np.isfinite(held)


@pytest.mark.parametrize("group", [1, 4])
def test_the_holdout_is_whole_groups_and_every_row_is_used_once(group: int) -> None:
    hold, train = holdout_split(400, group, 60, np.random.default_rng(1))
    assert len(hold) == 40 // group * group and sorted([*hold, *train]) == list(range(400))
    for rows in (hold, train):
        starts = rows.reshape(-1, group)
        assert (starts % group == np.arange(group)).all() and (np.diff(starts, axis=1) == 1).all()
    assert not np.array_equal(np.sort(hold), np.arange(len(hold)))  # shuffled, not the first rows


def test_a_release_shrunk_to_its_own_widths_is_itself_and_cut_units_fold_into_the_next_bias() -> None:
    import torch

    from bgnet.features.registry import encode
    from bgnet.nets.model import BgNet, ModelConfig
    from bgnet.trainer.distill import shrink

    torch.manual_seed(3)
    release = BgNet(ModelConfig.for_features((16, 8), "relu", 2))
    boards, _probs = _labels(300, 6)
    x = encode(boards, version=2)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        same = shrink(release, (16, 8), x)
        assert torch.equal(same(xt), release(xt))
        # a first-layer unit that never fires and one whose output never changes the next layer: both cut exactly
        first, second = release.linears()[0], release.linears()[1]
        first.weight[5] = 0.0
        first.bias[5] = -1.0
        second.weight[:, 9] = 0.0
        cut = shrink(release, (14, 8), x)
        assert [layer.out_features for layer in cut.linears()] == [14, 8, 5]
        assert torch.allclose(cut(xt), release(xt), atol=1e-6)
        narrower = shrink(release, (16, 3), x)  # three of eight second-layer units: no longer the same function
        assert not torch.allclose(narrower(xt), release(xt), atol=1e-3)
        assert torch.isfinite(narrower(xt)).all()
    for widths in ((16,), (17, 8), (16, 0)):
        with pytest.raises(DistillError, match="cannot be shrunk"):
            shrink(release, widths, x)


def test_the_command_starts_from_a_shrunk_release(tmp_path, capsys) -> None:
    import torch

    from bgnet.cli.distill import main
    from bgnet.nets.model import BgNet, ModelConfig, load_net, read_checkpoint, save_checkpoint

    torch.manual_seed(4)
    save_checkpoint(tmp_path / "release.pt", BgNet(ModelConfig.for_features((16, 8), "relu", 2)))
    boards, probs = _labels(200, 7)
    np.savez(tmp_path / "labels.npz", boards=boards, probs=probs)
    assert main([str(tmp_path / "s.pt"), str(tmp_path / "labels.npz"), "--hidden", "16,4", "--epochs", "1",
                 "--start", str(tmp_path / "release.pt"), "--lr", "1e-9"]) == 0
    capsys.readouterr()
    student, release = load_net(tmp_path / "s.pt"), load_net(tmp_path / "release.pt")
    assert [layer.out_features for layer in student.linears()] == [16, 4, 5]
    # a learning rate of 1e-9 leaves the release's first layer where the shrink put it: all of it
    assert torch.allclose(student.linears()[0].weight, release.linears()[0].weight, atol=1e-6)
    assert "shrunk from release.pt" in read_checkpoint(tmp_path / "s.pt")["recipe"]
    assert main([str(tmp_path / "t.pt"), str(tmp_path / "labels.npz"), "--hidden", "32,4", "--epochs", "1",
                 "--start", str(tmp_path / "release.pt")]) == 2
    err = capsys.readouterr().err
    assert "cannot be shrunk" in err and len(err.strip().splitlines()) == 1
    assert main([str(tmp_path / "t.pt"), str(tmp_path / "labels.npz"), "--hidden", "8,4", "--epochs", "1",
                 "--start", str(tmp_path / "release.pt"), "--features", "1"]) == 2
    assert "reads features version 2" in capsys.readouterr().err
