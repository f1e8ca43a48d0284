"""The torch encoder gives exactly the numba encoder's features."""

import numpy as np
import torch

from bgnet.features.encoding import encode
from bgnet.features.encoding_torch import encode_torch
from bgnet.core.movegen import generate_afterstates
from bgnet.core.position import Position


def test_same_features_as_numba_on_many_positions():
    rng = np.random.default_rng(2)
    boards = [Position.start().board,
              Position.from_points({25: 3, 1: 12}, {6: 10, 25: 2}).board,   # bars, back checkers
              Position.from_points({1: 2}, {1: 1}).board,                    # race, most checkers off
              Position.from_points({}, {6: 15}).board]                       # all mine off
    pos = Position.start()
    for _ in range(3000):
        after, offsets = generate_afterstates(np.array([pos.board], np.int8), rng.integers(1, 7, (1, 2)))
        row = after[rng.integers(len(after))]
        pos = Position(row.tolist()).swap_sides()
        if pos.is_game_over():
            pos = Position.start()
        boards.append(pos.board)
    b = np.array(boards, np.int8)
    expected = encode(b)
    got = encode_torch(torch.from_numpy(b)).numpy()
    assert got.shape == expected.shape
    assert np.allclose(got, expected, atol=1e-6), np.argwhere(~np.isclose(got, expected, atol=1e-6))[:5]
