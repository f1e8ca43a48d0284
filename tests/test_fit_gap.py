"""bench/fit_gap.py: the gaps it reports, and one sentence for a bad labels file."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(bench_script) -> ModuleType:
    return bench_script("fit_gap")


def test_gaps_of_one_win_chance_off_by_a_tenth(bench: ModuleType) -> None:
    probs = np.array([[0.6, 0.2, 0.0, 0.1, 0.0]], np.float32)
    targets = np.array([[0.5, 0.2, 0.0, 0.1, 0.0]], np.float32)
    mse, rmse = bench.gaps(probs, targets)
    assert mse == pytest.approx(0.01, abs=1e-6)  # 0.1 squared, the other chances equal
    assert rmse == pytest.approx(0.2, abs=1e-6)  # money equity moves by twice the win chance


def test_main_reads_a_labels_file_and_rejects_a_bad_one(bench: ModuleType, tmp_path: Path, monkeypatch,
                                                        capsys) -> None:
    from bgnet.core.position import Position

    boards = np.array([Position.from_position_id("4HPwATDgc/ABMA").board] * 3, np.int8)
    targets = np.tile(np.array([0.5, 0.15, 0.01, 0.15, 0.01], np.float32), (3, 1))
    good = tmp_path / "labels_001.npz"
    np.savez(good, boards=boards, targets=targets)
    monkeypatch.setattr(sys, "argv", ["fit_gap", "--labels", str(good), "--models", "checkpoints/bgnet.pt"])
    monkeypatch.chdir(ROOT)
    assert bench.main() == 0
    out = capsys.readouterr().out
    assert "equity rmse" in out and "labels_001.npz" in out
    bad = tmp_path / "bad.npz"
    np.savez(bad, other=boards)
    monkeypatch.setattr(sys, "argv", ["fit_gap", "--labels", str(bad), "--models", "checkpoints/bgnet.pt"])
    assert bench.main() == 2
    err = capsys.readouterr().err
    assert err.startswith("fit_gap: error:") and "not a labels file" in err and "Traceback" not in err
