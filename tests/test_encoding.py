"""Input features: each family checked on hand-made positions."""

import numpy as np
import pytest

from bgnet.core.race import race_flags
from bgnet.features.common import SCRATCH_SHAPE
from bgnet.features.registry import (FEATURE_SETS, FEATURE_VERSION, FEATURE_VERSIONS, EncodeOutputError, FeatureSet,
                                     FeatureVersionError, encode, feature_set, num_features)
from bgnet.features.v1 import RAW_PER_SIDE
from bgnet.features.v1 import WIDTH as NUM_FEATURES
from bgnet.core.position import Position

START = Position.start()
RAW = 2 * RAW_PER_SIDE


def feats(pos: Position) -> np.ndarray:
    return encode(np.array([pos.board], np.int8))[0]


def test_shape_and_dtype():
    x = encode(np.array([START.board] * 3, np.int8))
    assert x.shape == (3, NUM_FEATURES) and x.dtype == np.float32


def test_raw_units_for_point_counts():
    # me: 1 on my 1-point, 2 on 2, 3 on 3, 6 on 4; opponent: 15 on his 6-point
    pos = Position.from_points({1: 1, 2: 2, 3: 3, 4: 6, 25: 3}, {6: 15})
    x = feats(pos)
    assert list(x[0:4]) == [1, 0, 0, 0]
    assert list(x[4:8]) == [0, 1, 0, 0]
    assert list(x[8:12]) == [0, 0, 1, 0]
    assert list(x[12:16]) == [0, 0, 1, 1.5]
    assert x[96] == 1.5  # three on the bar, / 2
    assert x[97] == 0.0  # none off
    opp = x[RAW_PER_SIDE:RAW]
    assert list(opp[20:24]) == [0, 0, 1, 6.0]  # his 6-point in his own numbering
    assert opp[97] == 0.0


def test_borne_off_scaled():
    pos = Position.from_points({1: 3}, {1: 5})
    x = feats(pos)
    assert np.isclose(x[97], 12 / 15) and np.isclose(x[RAW_PER_SIDE + 97], 10 / 15)


def test_race_flag_and_pips():
    x = feats(START)
    assert x[RAW] == 0.0
    assert np.isclose(x[RAW + 1], 1.67) and np.isclose(x[RAW + 2], 1.67) and x[RAW + 3] == 0.0
    race = Position.from_points({6: 5, 5: 5}, {6: 5, 3: 5})
    xr = feats(race)
    assert xr[RAW] == 1.0
    assert np.isclose(xr[RAW + 1], (30 + 25) / 100) and np.isclose(xr[RAW + 2], (30 + 15) / 100)
    assert race_flags(np.array([START.board, race.board], np.int8)).tolist() == [False, True]


def test_structure_features():
    # me: points 4..9 made (a full prime), a blot on 24; opponent: 2 on his 24 and 13 on his 3-point
    pos = Position.from_points({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 24: 1}, {24: 2, 3: 13})
    x = feats(pos)[RAW + 4:]
    home, prime, blots, back, outfield, stripped, blocked = x[:7]
    assert np.isclose(home, 3 / 6) and np.isclose(prime, 1.0) and np.isclose(blots, 1 / 5)
    assert np.isclose(back, 1 / 5) and np.isclose(outfield, 6 / 5) and stripped == 0.0
    # my rearmost checker on 24 lands on 23..18; his 3-point is my 22: one of six closed
    assert np.isclose(blocked, 1 / 6)
    opp = x[7:]
    # his rearmost (his 24 = my 1) faces my points 4..9 = his 21..16: landing 23..18 -> his 21, 20, 19, 18 closed
    assert np.isclose(opp[6], 4 / 6)
    assert np.isclose(opp[5], 1 / 6)  # 13 checkers on one point: one stripped point


def test_swapped_board_swaps_families():
    pos = Position.from_points({6: 4, 8: 3, 13: 5, 24: 2, 25: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    x, y = feats(pos), feats(pos.swap_sides())
    assert np.array_equal(x[:RAW_PER_SIDE], y[RAW_PER_SIDE:RAW])
    assert np.array_equal(x[RAW + 4:RAW + 11], y[RAW + 11:RAW + 18])


# -- the registry of feature sets ---------------------------------------------------------------


@pytest.mark.parametrize("version", FEATURE_VERSIONS)
def test_each_registered_set_encodes_through_the_registry(version: int, game_boards) -> None:
    """The batch encoders (numba's side of the registry, serial and threaded) give each set's own row kernel."""
    fs = feature_set(version)
    boards = game_boards(300, seed=version)
    expected = np.zeros((len(boards), fs.width), np.float32)
    scratch = np.zeros(SCRATCH_SHAPE, np.int64)
    for i, b in enumerate(boards):
        fs.encode_row(b, expected[i], scratch)
    assert fs.width == num_features(version) and np.array_equal(encode(boards, version=version), expected)
    many = np.tile(boards, (15, 1))  # at least 4096 boards: the threaded encoder
    assert np.array_equal(encode(many, threads=2, version=version), np.tile(expected, (15, 1)))


@pytest.mark.parametrize("version", FEATURE_VERSIONS)
def test_encoding_into_the_first_columns_of_a_wider_array_leaves_the_rest(version: int, game_boards) -> None:
    boards = game_boards(50, seed=20 + version)
    width = num_features(version)
    expected = encode(boards, version=version)
    wide = np.full((len(boards), width + 10), 7.0, np.float32)
    assert encode(boards, version=version, out=wide) is wide
    assert np.array_equal(wide[:, :width], expected) and np.all(wide[:, width:] == 7.0)
    view = np.full((len(boards), width + 10), 7.0, np.float32)[:, :width]  # not contiguous, exactly the width
    assert np.array_equal(encode(boards, version=version, out=view), expected)
    for bad in (wide[:, :width - 1], wide[:, ::2], wide.astype(np.float64), wide[:-1]):
        with pytest.raises(EncodeOutputError, match="out must be"):
            encode(boards, version=version, out=bad)


def test_registry_versions_and_torch_encoders() -> None:
    from bgnet.features.encoding_torch import encode_torch

    assert FEATURE_VERSIONS == tuple(sorted(FEATURE_SETS)) == (1, 2) and FEATURE_VERSION == 2
    assert feature_set(1).has_torch_encoder and feature_set(1).torch_encode_fn() is encode_torch
    assert feature_set(2).has_torch_encoder
    numba_only = FeatureSet(version=9, width=1, encode_row=None)
    with pytest.raises(FeatureVersionError, match="no torch encoder"):
        numba_only.torch_encode_fn()
    with pytest.raises(FeatureVersionError, match="feature version 9 is not one of"):
        encode(np.array([START.board], np.int8), version=9)
