"""bench/net_cost.py: the boards it times and the figures it prints."""

from __future__ import annotations

import json
from types import ModuleType

import numpy as np
import pytest

from bgnet.core import _game_kernels as gk


@pytest.fixture(scope="module")
def bench(bench_script) -> ModuleType:
    return bench_script("net_cost")


def test_sample_boards_are_legal_seeded_and_varied(bench: ModuleType) -> None:
    boards = bench.sample_boards(500, seed=3)
    assert boards.shape == (500, 26) and boards.dtype == np.int8
    assert np.array_equal(boards, bench.sample_boards(500, seed=3))
    assert not np.array_equal(boards, bench.sample_boards(500, seed=4))
    mine = np.where(boards[:, 1:25] > 0, boards[:, 1:25], 0).sum(axis=1) + boards[:, 25]
    theirs = -np.where(boards[:, 1:25] < 0, boards[:, 1:25], 0).sum(axis=1) - boards[:, 0]
    assert (mine <= 15).all() and (theirs <= 15).all()
    assert (gk.terminal_codes(boards) == 0).all()  # a few plies from the opening: no game is over
    assert len(np.unique(boards, axis=0)) > 100


def test_main_prints_a_cost_for_each_encoding_and_shipped_net(bench: ModuleType, capsys) -> None:
    assert bench.main(["--boards", "300", "--repeats", "1", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    costs = got["us_per_board"]
    assert {"encode v1", "encode v2", "release", "pruning", "student", "release bf16", "release/32",
            "release bf16/32"} <= set(costs)
    assert all(v > 0 for v in costs.values())
    assert costs["pruning"] < costs["release"]  # the pruning net is the cheap one
