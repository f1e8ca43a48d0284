"""The features layer in one import: encode boards with a registered feature set, and sort them by kind.

The sets themselves live in ``bgnet.features.v1`` (the shipped net's 214 inputs) and
``bgnet.features.v2`` (246: set 1 plus the expert inputs), registered in
``bgnet.features.registry``; ``encode`` computes version 1 unless told otherwise, and a
net's ``ModelConfig.feature_version`` says which it needs.
"""

from __future__ import annotations

from bgnet.core.race import race_flags
from bgnet.features.kinds import KINDS, position_kinds, rows_by_scorer
from bgnet.features.registry import FEATURE_VERSION, FEATURE_VERSIONS, encode, feature_set, num_features
from bgnet.features.v1 import RAW_PER_SIDE
from bgnet.features.v1 import WIDTH as NUM_FEATURES_V1
from bgnet.features.v2 import EXPERT_PER_SIDE
from bgnet.features.v2 import WIDTH as NUM_FEATURES_V2

__all__ = ["EXPERT_PER_SIDE", "FEATURE_VERSION", "FEATURE_VERSIONS", "KINDS", "NUM_FEATURES", "NUM_FEATURES_V1",
           "NUM_FEATURES_V2", "RAW_PER_SIDE", "encode", "feature_set", "num_features", "position_kinds", "race_flags",
           "rows_by_scorer"]

NUM_FEATURES = NUM_FEATURES_V1
"""Width of ``encode(boards)`` with its default version 1."""
