"""The torch twin of ``distinct_boards``: the same first rows and inverse, on the CPU and on CUDA."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bgnet.core.distinct import distinct_boards
from bgnet.core.distinct_torch import distinct_boards_torch, lexsort_torch

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_first_rows_and_inverse_are_those_of_distinct_boards(device, n):
    rng = np.random.default_rng(n)
    pool = rng.integers(-15, 16, size=(max(1, n // 4), 26)).astype(np.int8)
    pool[1::2, 25] = 0  # rows that differ in one slot only, the last
    boards = pool[rng.integers(0, len(pool), size=n)]
    first, inverse = distinct_boards(boards)
    got_first, got_inverse = distinct_boards_torch(torch.from_numpy(boards).to(device))
    assert np.array_equal(got_first.cpu().numpy(), first) and np.array_equal(got_inverse.cpu().numpy(), inverse)
    assert np.array_equal(boards[got_first.cpu().numpy()][got_inverse.cpu().numpy()], boards)
    assert n < 100 or len(first) < n  # the large case does repeat rows


def test_rows_equal_but_for_one_slot_stay_apart():
    a = np.zeros((3, 26), np.int8)
    a[1, 25], a[2, 0] = 1, -1
    first, inverse = distinct_boards_torch(torch.from_numpy(np.concatenate([a, a])))
    assert first.tolist() == [0, 1, 2] and inverse.tolist() == [0, 1, 2, 0, 1, 2]


def test_lexsort_is_numpy_s_stable_lexsort():
    rng = np.random.default_rng(3)
    words = rng.integers(-3, 4, size=(3, 2000))  # many ties, so stability shows
    got = lexsort_torch(torch.from_numpy(words).unbind(0))
    assert np.array_equal(got.numpy(), np.lexsort(words[::-1]))  # numpy's last key is the most significant
