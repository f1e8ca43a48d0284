"""Companion nets (bgnet.nets.companion): files by role, stamped for one release; the shipped student."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.nets.companion import CompanionError, load_companion_net, read_companion_net, write_companion_net
from bgnet.nets.fastnet import NumpyNet, load_numpy_net

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "checkpoints" / "bgnet.pt"


def _layers(seed: int, inputs: int, hidden: tuple[int, ...] = (12, 6)) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded (out, in) weights and biases of a ReLU net with ``inputs`` inputs and five outputs."""
    rng = np.random.default_rng(seed)
    sizes = (inputs, *hidden, 5)
    return [(rng.normal(0, 0.2, (o, i)).astype(np.float32), rng.normal(0, 0.1, o).astype(np.float32))
            for i, o in zip(sizes, sizes[1:])]


def test_a_student_file_round_trips_with_its_role_and_feature_version(tmp_path, game_boards):
    layers = _layers(3, 246)
    file = write_companion_net(tmp_path / "s.npz", layers, "relu", RELEASE, "student", 2)
    net, digest = read_companion_net(file, "student")
    assert digest == hashlib.sha256(RELEASE.read_bytes()).hexdigest()
    boards = game_boards(200, 5)
    assert np.array_equal(net.probs_of_boards(boards), NumpyNet(layers, "relu", 2).probs_of_boards(boards))
    assert read_companion_net(file, "pruning") is None  # a student is never taken for a pruning net
    assert load_companion_net(RELEASE, "student", [tmp_path / "missing.npz", file]) is not None


def test_a_file_without_a_role_is_a_pruning_net_on_features_version_1(tmp_path):
    """Pruning nets written before roles existed stay readable, as pruning nets only."""
    layers = _layers(4, 214, (8,))
    arrays = {"format": np.array(1), "activation": np.array("relu"), "checkpoint_sha256": np.array("ab"),
              "n_layers": np.array(len(layers))}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w, b
    np.savez(tmp_path / "old.npz", **arrays)
    found = read_companion_net(tmp_path / "old.npz", "pruning")
    assert found is not None and found[1] == "ab" and found[0].feature_version == 1
    assert read_companion_net(tmp_path / "old.npz", "student") is None


def test_bad_companions_are_refused_or_ignored(tmp_path, tiny_v2_checkpoint):
    with pytest.raises(CompanionError, match="role"):
        write_companion_net(tmp_path / "x.npz", _layers(1, 246), "relu", RELEASE, "teacher", 2)
    with pytest.raises(CompanionError, match="features version 2"):
        write_companion_net(tmp_path / "x.npz", _layers(1, 214), "relu", RELEASE, "student", 2)
    assert not (tmp_path / "x.npz").exists()
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert read_companion_net(tmp_path / "bad.npz", "student") is None
    made_for_another = write_companion_net(tmp_path / "s.npz", _layers(2, 246), "relu", tiny_v2_checkpoint,
                                           "student", 2)
    assert load_companion_net(RELEASE, "student", [made_for_another]) is None
    assert load_companion_net(tmp_path / "no-such.pt", "student", [made_for_another]) is None


def test_the_release_ships_a_student_that_is_close_to_it(game_boards):
    """``checkpoints/student.npz`` is made for this release, is narrower, and values positions near its values."""
    from bgnet.nets.pruning import load_student_net

    student = load_student_net(RELEASE)
    assert student is not None, "checkpoints/student.npz is missing or made for another net: export it again"
    release = load_numpy_net(RELEASE)
    assert student.layers[0][0].shape[1] < release.layers[0][0].shape[1]  # narrower first layer
    boards = game_boards(400, 9)
    gap = np.abs(student.probs_of_boards(boards)[:, 0] - release.probs_of_boards(boards)[:, 0])
    assert np.median(gap) < 0.02 and gap.mean() > 0.0


def test_export_writes_a_student_for_its_release_and_refuses_bad_input(tmp_path, tiny_v2_checkpoint, capsys):
    from bgnet.trainer.export import main

    out = tmp_path / "student.npz"
    assert main(["student", str(tiny_v2_checkpoint), str(RELEASE), str(out)]) == 0
    net = load_companion_net(RELEASE, "student", [out])
    assert net is not None and net.feature_version == 2
    board = np.array([Position.start().board], np.int8)
    assert net.probs_of_boards(board).shape == (1, 5)
    assert main(["student", str(tmp_path / "missing.pt"), str(RELEASE), str(tmp_path / "y.npz")]) == 2
    assert main(["student", str(tiny_v2_checkpoint), str(tmp_path / "no-release.pt"), str(tmp_path / "y.npz")]) == 2
    assert "release checkpoint" in capsys.readouterr().err
    assert main(["student", str(tiny_v2_checkpoint)]) == 2 and not (tmp_path / "y.npz").exists()


def test_export_stamps_an_earlier_student_file_anew_for_another_release(tmp_path, tiny_v2_checkpoint, game_boards):
    """A shipped student re-exported for another checkpoint is the same function, made for that checkpoint only."""
    from bgnet.trainer.export import main

    first = tmp_path / "first.npz"
    assert main(["student", str(tiny_v2_checkpoint), str(RELEASE), str(first)]) == 0
    other_release = tmp_path / "other.pt"
    other_release.write_bytes(RELEASE.read_bytes() + b"\0")  # another file: another digest
    again = tmp_path / "again.npz"
    assert main(["student", str(first), str(other_release), str(again)]) == 0
    old, new = load_companion_net(RELEASE, "student", [first]), load_companion_net(other_release, "student", [again])
    assert old is not None and new is not None and load_companion_net(RELEASE, "student", [again]) is None
    boards = game_boards(50, 3)
    assert np.array_equal(old.probs_of_boards(boards), new.probs_of_boards(boards))
    pruning_file = tmp_path / "p.npz"
    write_companion_net(pruning_file, _layers(8, 246), "relu", RELEASE, "pruning", 2)
    assert main(["student", str(pruning_file), str(other_release), str(tmp_path / "z.npz")]) == 2
    assert not (tmp_path / "z.npz").exists()
