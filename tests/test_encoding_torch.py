"""The torch encoder gives exactly the numba encoder's features."""

import numpy as np
import torch

from bgnet.core.race import race_flags
from bgnet.features.registry import encode
from bgnet.features.v1 import RAW_PER_SIDE
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


def test_race_flag_is_the_twin_of_the_rule() -> None:
    """The torch encoder's race input equals ``bgnet.core.race`` on many random boards, bars and bear-offs included."""
    rng = np.random.default_rng(7)
    boards = []
    for _ in range(4000):
        mine, theirs = rng.multinomial(15, rng.dirichlet(np.ones(26))), rng.multinomial(15, rng.dirichlet(np.ones(26)))
        b = np.zeros(26, np.int64)
        b[1:26] = mine[1:26]  # my points 1..24 and my bar; mine[0] are borne off
        b[0] = -theirs[25]  # his bar
        for p in range(1, 25):  # his checkers on my points where mine are not
            if b[p] == 0:
                b[p] = -theirs[25 - p]
        boards.append(b)
    b = np.array(boards, np.int8)
    flags = race_flags(b)
    assert 0 < flags.sum() < len(flags)
    got = encode_torch(torch.from_numpy(b)).numpy()[:, 2 * RAW_PER_SIDE]
    assert np.array_equal(got == 1.0, flags)


def test_an_encoding_is_a_fixed_few_hundred_ops_whatever_the_batch():
    """On a GPU each op is a kernel launch: both sides' per-side inputs come from one op over 2N rows, so a version-2
    encoding dispatches the same ops for 4 boards as for 400, and under 450 of them (887 when each side had its own
    ops)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from bgnet.features.v2_torch import encode_v2_torch

    class Ops(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.count += 1
            return func(*args, **(kwargs or {}))

    counts = []
    for n in (4, 400):
        boards = torch.from_numpy(np.repeat(np.array([Position.from_position_id("4HPwATDgc/ABMA").board], np.int8),
                                            n, axis=0))
        for encoder in (encode_torch, encode_v2_torch):
            encoder(boards)  # constants moved to the device on first use
            ops = Ops()
            with ops:
                encoder(boards)
            counts.append(ops.count)
    assert counts[:2] == counts[2:] and counts[0] < counts[1] < 450


def test_a_version_2_encoding_moves_under_45_kilobytes_a_board():
    """On a GPU an encoding's time is the bytes its ops read and write: counts in int16, bit masks in int32, escape
    counts in int8 and no concatenated pieces keep it near 38 KB a board (102 KB when everything was int64)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from bgnet.features.v2_torch import encode_v2_torch

    def size(x: object) -> int:
        if isinstance(x, torch.Tensor):
            return x.numel() * x.element_size()
        return sum(size(y) for y in x) if isinstance(x, (list, tuple)) else 0

    class Bytes(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.total = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            out = func(*args, **(kwargs or {}))
            if not any(v in str(func) for v in ("view", "slice", "select", "unsqueeze", "expand", "alias", "detach",
                                                 "transpose", "unflatten", "squeeze", "permute", "as_strided")):
                self.total += size(args) + size(out)
            return out

    boards = torch.from_numpy(np.repeat(np.array([Position.start().board], np.int8), 20000, axis=0))  # shapes decide
    encode_v2_torch(boards)
    counted = Bytes()
    with counted:
        encode_v2_torch(boards)
    assert 20_000 < counted.total / len(boards) < 45_000
