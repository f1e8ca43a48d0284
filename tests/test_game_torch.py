"""Points as int32 bit masks and the highest bit of a mask (``bgnet.core.game_torch``), against plain Python."""

from __future__ import annotations

import numpy as np
import torch

from bgnet.core.game_torch import bits_to_points_torch, high_bit_torch, points_to_bits_torch


def test_points_become_bits_and_back():
    rng = np.random.default_rng(1)
    mask = torch.from_numpy(rng.random((500, 25)) < 0.3)
    bits = points_to_bits_torch(mask)
    want = [sum(1 << (i + 1) for i in range(25) if row[i]) for row in mask.tolist()]
    assert bits.dtype == torch.int32 and bits.tolist() == want
    assert torch.equal(bits_to_points_torch(bits), mask)
    assert torch.equal(points_to_bits_torch(mask[:, :24]), bits & ((1 << 25) - 1))  # fewer columns: points 1..24


def test_the_highest_bit_of_every_mask_of_fifteen_points_or_fewer():
    rng = np.random.default_rng(2)
    masks = [0, 2, 1 << 25, (1 << 26) - (1 << 11)]  # nothing, point 1, the bar alone, the fifteen highest points
    for _ in range(20000):
        points = rng.choice(np.arange(1, 26), size=rng.integers(1, 16), replace=False)
        masks.append(int(sum(1 << int(p) for p in points)))
    masks += [x for x in range(0, 1 << 25, 4099 * 2)]  # even numbers below 2**25
    got = high_bit_torch(torch.tensor(masks, dtype=torch.int32)).tolist()
    assert got == [max(x.bit_length() - 1, 0) for x in masks]
    # The documented limit: bits 1..25 all set round up to 2**26 in float32.
    assert high_bit_torch(torch.tensor([(1 << 26) - 2], dtype=torch.int32)).item() == 26
