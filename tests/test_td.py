"""TD(lambda) targets on hand-made trajectories."""

import numpy as np
import pytest

from bgnet.trainer.td import lambda_returns, result_probs


def flip(v):
    return np.array([1 - v[0], v[3], v[4], v[1], v[2]], np.float32)


VALUES = np.array([
    [0.5, 0.1, 0.0, 0.1, 0.0],
    [0.4, 0.1, 0.01, 0.2, 0.02],
    [0.7, 0.3, 0.05, 0.05, 0.0],
    [0.2, 0.0, 0.0, 0.5, 0.1],
], np.float32)


def test_result_vectors():
    assert result_probs(1).tolist() == [1, 0, 0, 0, 0]
    assert result_probs(2).tolist() == [1, 1, 0, 0, 0]
    assert result_probs(3).tolist() == [1, 1, 1, 0, 0]
    with pytest.raises(ValueError):
        result_probs(4)


def test_lambda_zero_is_next_value_flipped():
    res = result_probs(2)
    out = lambda_returns(VALUES, res, 0.0)
    assert np.allclose(out[3], res)
    for t in range(3):
        assert np.allclose(out[t], flip(VALUES[t + 1]))


def test_lambda_one_is_the_result_seen_alternately():
    res = result_probs(3)
    out = lambda_returns(VALUES, res, 1.0)
    # position 3's side won a backgammon; position 2's side lost one, and so on
    assert np.allclose(out[3], res)
    assert np.allclose(out[2], [0, 0, 0, 1, 1])
    assert np.allclose(out[1], res)
    assert np.allclose(out[0], [0, 0, 0, 1, 1])


def test_intermediate_lambda_by_hand():
    lam = 0.5
    res = result_probs(1)
    out = lambda_returns(VALUES, res, lam)
    g3 = res
    g2 = flip((1 - lam) * VALUES[3] + lam * g3)
    g1 = flip((1 - lam) * VALUES[2] + lam * g2)
    g0 = flip((1 - lam) * VALUES[1] + lam * g1)
    assert np.allclose(out, [g0, g1, g2, g3], atol=1e-6)


def test_targets_stay_consistent_probabilities():
    rng = np.random.default_rng(0)
    v = rng.random((30, 5)).astype(np.float32)
    v[:, 1] *= v[:, 0]
    v[:, 2] *= v[:, 1]
    v[:, 3] *= 1 - v[:, 0]
    v[:, 4] *= v[:, 3]
    out = lambda_returns(v, result_probs(2), 0.7)
    assert np.all(out >= 0) and np.all(out <= 1)
    assert np.all(out[:, 1] <= out[:, 0] + 1e-6) and np.all(out[:, 2] <= out[:, 1] + 1e-6)
    assert np.all(out[:, 3] <= 1 - out[:, 0] + 1e-6) and np.all(out[:, 4] <= out[:, 3] + 1e-6)


def test_empty_trajectory():
    assert lambda_returns(np.zeros((0, 5), np.float32), result_probs(1), 0.7).shape == (0, 5)
