"""The teacher (``bgnet.trainer.labels``): training targets from rollouts or n-ply search, written and read back."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.trainer.labels import evaluate_pruned, label_positions, load_targets, save_targets

START = Position.start()
MIDGAME = Position.from_position_id("4HPwASik5+ABMA")


def test_label_positions_evaluates_and_rolls_out(net, exact, tmp_path) -> None:
    from bgnet.play.search import evaluate_boards

    boards = np.array([MIDGAME.board, START.board], np.int8)
    b, p, se = label_positions(net, boards, trials=0, ply=1)
    assert np.allclose(p, evaluate_boards(net, boards, 1), atol=1e-6) and not se.any()
    races = np.array([Position.from_points({6: 2, 5: 1}, {4: 2, 1: 1}).board,
                      Position.from_points({3: 3}, {6: 1, 2: 2}).board], np.int8)
    b, p, se = label_positions(exact, races, trials=324, seed=1, settings=RolloutSettings(luck_vr=False, bearoff=False),
                               bearoff_fn=None)
    want = exact(races)
    assert (np.abs(p[:, 0] - want[:, 0]) < 3.3 * se[:, 0] + 1e-6).all() and (se[:, 0] > 0).all()
    again = label_positions(exact, races, trials=324, seed=1, settings=RolloutSettings(luck_vr=False, bearoff=False),
                            bearoff_fn=None)
    assert np.array_equal(again[1], p)
    out = tmp_path / "targets.npz"
    save_targets(out, b, p, se, trials=324)
    t = load_targets(out)
    assert np.array_equal(t.boards, b) and np.array_equal(t.probs, p) and t.meta["trials"] == "324"
    assert [x.name for x in tmp_path.iterdir()] == ["targets.npz"]  # no temporary file left behind


def test_label_cli_writes_targets(tmp_path) -> None:
    import subprocess
    import sys

    inp, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(inp, boards=np.array([MIDGAME.board, START.board], np.int8))
    res = subprocess.run([sys.executable, "-m", "bgnet.trainer.labels", "label", str(inp), str(out), "--ply", "0"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"wrote 2 targets to {out}"
    assert load_targets(out).probs.shape == (2, 5)
    for command in ("bgnet.trainer.labels", "bgnet.sim.rollout"):  # the command's old address still works
        bad = subprocess.run([sys.executable, "-m", command, "label", str(out) + ".missing", str(out)],
                             capture_output=True, text=True, timeout=300)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
        assert bad.stderr.startswith(f"python -m {command}: error:"), bad.stderr
    np.savez(inp, positions=np.zeros((1, 26), np.int8))
    bad = subprocess.run([sys.executable, "-m", "bgnet.trainer.labels", "label", str(inp), str(out)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no array named 'boards'" in bad.stderr


def test_pruned_search_is_the_full_search_when_nothing_is_pruned_and_never_better_for_the_last_mover(net) -> None:
    from bgnet.core.probs import equities
    from bgnet.play.search import evaluate_boards

    boards = np.array([MIDGAME.board, START.board, Position.from_points({6: 2, 5: 1}, {4: 2, 1: 1}).board], np.int8)
    # no roll has 1,000 plays: the pruned search is then the full one, level by level
    assert np.allclose(evaluate_pruned(net, boards, 1, 1000), evaluate_boards(net, boards, 1), atol=1e-5)
    assert np.allclose(evaluate_pruned(net, boards[:1], 2, 1000), evaluate_boards(net, boards[:1], 2), atol=1e-5)
    # at 1 ply the side on roll chooses among fewer plays: its equity can only fall, and with 1 play it does
    full = equities(evaluate_boards(net, boards, 1))
    one, ten = (equities(evaluate_pruned(net, boards, 1, k)) for k in (1, 10))
    assert (ten <= full + 1e-6).all() and (one <= ten + 1e-6).all() and (one < full - 1e-3).any()
    # the labelling path gives the same; a finished game its exact value; bad arguments an error
    _, p, _ = label_positions(net, boards, trials=0, ply=1, last_level_top=10)
    assert np.allclose(equities(p), ten, atol=1e-5)
    won = np.zeros((1, 26), np.int8)
    won[0, 1] = -15  # the side on roll has no checkers left: a finished game
    assert np.allclose(evaluate_pruned(net, won, 2, 10), evaluate_boards(net, won, 2))
    with pytest.raises(RolloutError, match="ply >= 1"):
        evaluate_pruned(net, boards, 0, 10)


def test_label_cli_prune_gives_the_released_nets_pruned_search(tmp_path, capsys) -> None:
    # --prune labels with the search bgnet hint runs (each roll's best replies by the shipped pruning net): the
    # chances of evaluate_boards on the pruned evaluator; without --ply, or with --trials, it is refused.
    from bgnet.cli.labels import main
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.bearoff import with_database
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.nets.pruning import with_pruning
    from bgnet.play.search import evaluate_boards

    from bgnet.core.movegen import legal_moves

    inp, out = tmp_path / "in.npz", tmp_path / "out.npz"
    rng, pos, walk = np.random.default_rng(5), START, []
    while len(walk) < 24:  # middle-game positions of a random walk
        moves = legal_moves(pos, tuple(int(d) for d in rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after.swap_sides()
        pos = START if pos.is_game_over() else pos
        walk.append(pos.board)
    boards = np.array(walk, np.int8)
    np.savez(inp, boards=boards)
    assert main(["label", str(inp), str(out), "--ply", "1", "--prune"]) == 0
    fn = with_database(load_evaluator(default_checkpoint())).probs_of_boards
    pruned = evaluate_boards(with_pruning(fn, default_checkpoint()), boards, 1)
    got = load_targets(out)
    assert np.allclose(got.probs, pruned, atol=1e-6) and got.meta["prune"] == "True"
    assert not np.allclose(pruned, evaluate_boards(fn, boards, 1), atol=1e-7)  # the pruning changed something
    capsys.readouterr()
    for extra in (["--ply", "0"], ["--ply", "1", "--trials", "4"]):
        assert main(["label", str(inp), str(out), "--prune", *extra]) == 2
        assert "--prune applies to n-ply labels" in capsys.readouterr().err


def test_label_cli_in_bfloat16_labels_with_the_bf16_net(tmp_path, capsys) -> None:
    # --precision bfloat16 labels through bgnet.nets.bf16net: the search's chances on that net, within a few
    # thousandths of the float32 labels; the file says which.
    from bgnet.cli.labels import main
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.pruning import load_exact_evaluator
    from bgnet.play.search import evaluate_boards

    inp, out, out32 = tmp_path / "in.npz", tmp_path / "out.npz", tmp_path / "out32.npz"
    boards = np.array([MIDGAME.board, START.board, MIDGAME.swap_sides().board], np.int8)
    np.savez(inp, boards=boards)
    assert main(["label", str(inp), str(out), "--ply", "1", "--precision", "bfloat16"]) == 0
    assert main(["label", str(inp), str(out32), "--ply", "1"]) == 0
    got, fp32 = load_targets(out), load_targets(out32)
    want = evaluate_boards(load_exact_evaluator(default_checkpoint(), "bfloat16"), boards, 1)
    assert np.array_equal(got.probs, want.astype(np.float32))
    assert got.meta["precision"] == "bfloat16" and fp32.meta["precision"] == "float32"
    assert 0 < np.abs(got.probs - fp32.probs).max() < 0.01
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:  # argparse: one line, exit status 2
        main(["label", str(inp), str(out), "--precision", "half"])
    assert stop.value.code == 2 and "invalid choice: 'half'" in capsys.readouterr().err


def test_label_cli_scores_each_board_with_its_kinds_net_and_bear_offs_exactly(tmp_path) -> None:
    # A checkpoint with a race net of its own labels races with it, and pure bear-offs with the database, as the
    # rounds' labels and every agent do (not with the contact net alone).
    import torch

    from bgnet.cli.labels import main
    from bgnet.nets.model import BgNet, ModelConfig, NetSet, save_netset

    torch.manual_seed(3)
    netset = NetSet({"contact": BgNet(ModelConfig.for_features((8,), "relu", 2)),
                     "race": BgNet(ModelConfig.for_features((6,), "relu", 1))})
    save_netset(tmp_path / "set.pt", netset)
    race = np.zeros(26, np.int8)
    race[[6, 8, 13]], race[[19, 22]] = (5, 5, 5), (-8, -7)  # contact is over, checkers outside both home boards
    bearoff = np.zeros(26, np.int8)
    bearoff[[1, 3]], bearoff[[22, 24]] = (4, 3), (-2, -5)
    contact = np.array(START.board, np.int8)
    boards = np.stack([race, bearoff, contact])
    np.savez(tmp_path / "in.npz", boards=boards)
    argv = ["label", str(tmp_path / "in.npz"), str(tmp_path / "out.npz"), "--model", str(tmp_path / "set.pt")]
    assert main(argv) == 0
    got = load_targets(tmp_path / "out.npz").probs
    assert np.allclose(got, netset.probs_of_boards(boards), atol=1e-5)
    only_contact = NetSet({"contact": netset.nets["contact"]}).probs_of_boards(boards)
    assert not np.allclose(got[0], only_contact[0], atol=1e-3)  # the race net, not the contact net
    assert np.allclose(got[2], only_contact[2], atol=1e-5) and got[1].sum() > 0


def test_label_cli_workers_label_in_local_processes_with_the_same_targets(tmp_path, monkeypatch, capsys) -> None:
    # --workers N without Ray runs the groups in N local processes (it once did nothing without --backend ray);
    # the targets are those of one process, and a count below 1 is one sentence.
    from bgnet.cli.labels import main
    from bgnet.core.movegen import generate_afterstates, swap_sides_batch
    from bgnet.sim import backends

    made = []

    def spy(name="local", workers=None, address=None):
        made.append((name, workers))
        return real(name, workers, address)

    real = backends.make_backend
    monkeypatch.setattr(backends, "make_backend", spy)
    rng = np.random.default_rng(3)
    starts = np.repeat(np.array([START.board, MIDGAME.board], np.int8), 200, axis=0)
    after, _offsets = generate_afterstates(starts, rng.integers(1, 7, (400, 2)).astype(np.int8))
    boards = swap_sides_batch(after)[:6000]
    assert len(boards) > 4096  # two groups of the labeller's 4,096, so that both processes get one
    inp, one, two = tmp_path / "in.npz", tmp_path / "one.npz", tmp_path / "two.npz"
    np.savez(inp, boards=boards)
    assert main(["label", str(inp), str(one), "--ply", "0"]) == 0 and made == []
    assert main(["label", str(inp), str(two), "--ply", "0", "--workers", "2"]) == 0
    assert made == [("local", 2)]
    assert np.array_equal(load_targets(one).probs, load_targets(two).probs)
    capsys.readouterr()
    assert main(["label", str(inp), str(two), "--ply", "0", "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "workers must be at least 1" in err and len(err.strip().splitlines()) == 1
