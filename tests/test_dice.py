"""bgnet.core.dice: the one SplitMix64, and the numbers the dice and the random player have always drawn from it."""

from __future__ import annotations

import numpy as np

from bgnet.core.dice import counter_hash, splitmix64
from bgnet.play.scorers import RandomScorer


def test_splitmix64_gives_the_reference_outputs() -> None:
    x = np.array([0, 1, 2, 0xFFFFFFFFFFFFFFFF], np.uint64)
    # 0xE220A8397B1DCDAF is SplitMix64's first output from seed 0 (Vigna's reference implementation).
    assert [int(v) for v in splitmix64(x)] == [0xE220A8397B1DCDAF, 0x910A2DEC89025CC1, 0x975835DE1C9756CE,
                                               0xE4D971771B652C20]


def test_counter_hash_chains_the_parts_as_the_rollout_dice_always_did() -> None:
    assert int(counter_hash(0)) == 0xE220A8397B1DCDAF  # no parts: the seed mixed once
    assert int(counter_hash(7, 0x5EED, np.int64(3), np.arange(1))[0]) == 0xBC305726E7F5EA1E
    assert int(counter_hash(1, 0x7EAC4E5, 0)) == 0xA788CF45A4A300B1  # a labelling group's seed
    assert int(counter_hash(-1)) == int(counter_hash(0xFFFFFFFFFFFFFFFF))  # seeds are cut to 64 bits
    broadcast = counter_hash(3, np.arange(4)[:, None], np.arange(5)[None, :])
    assert broadcast.shape == (4, 5) and broadcast.dtype == np.uint64 and len(set(broadcast.ravel().tolist())) == 20


def test_the_random_player_draws_the_same_scores_from_the_shared_hash() -> None:
    before = np.zeros((1, 26), np.int8)
    after = np.eye(3, 26, dtype=np.int8)
    scores = RandomScorer(3).score_plays(before, after, np.array([0, 3]))
    assert scores.tolist() == [0.1456735400755932, 0.156823397781912, 0.22619607343154002]
