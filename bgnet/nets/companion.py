"""Companion nets: small nets that ship beside one release and serve it alone (its pruning net, its student).

A companion net is a plain ``.npz`` (``allow_pickle=False``) of its layers, its
activation, its feature version, its role and the SHA-256 of the release checkpoint
it was made for, so that it is never used with another net. Roles:

* ``"pruning"``: ranks a search's replies for the release to value (``bgnet.nets.pruning``);
* ``"student"``: a narrower net distilled from the release or one it was made to copy (``bgnet.trainer.distill``),
  about 0.6 times its cost a position, for values that need not be the release's own: a rollout's luck
  (``bgnet.sim.rollout_luck``: any function of the position and roll keeps the luck an exact control variate).

Files written before roles existed hold a pruning net with features version 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import numpy as np

from bgnet.core.atomic import atomic_write
from bgnet.core.errors import BgnetError
from bgnet.features.registry import FEATURE_SETS
from bgnet.nets.fastnet import NumpyNet, file_digest

__all__ = ["COMPANION_FORMAT", "COMPANION_ROLES", "CompanionError", "load_companion_net", "read_companion_net",
           "write_companion_net"]

COMPANION_FORMAT = 1
"""Version of the companion net file's layout."""
COMPANION_ROLES = ("pruning", "student")
"""What a companion net is for (see the module's docstring)."""


class CompanionError(BgnetError):
    """A companion net that cannot be written as asked (an unknown role or feature version)."""


def write_companion_net(out: str | os.PathLike[str], layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                        checkpoint: str | os.PathLike[str], role: str, feature_version: int = 1) -> Path:
    """Write a companion net (layers as (out, in) weights and biases) stamped with the SHA-256 of the
    ``checkpoint`` it serves; written to a temporary file, then renamed."""
    if role not in COMPANION_ROLES:
        raise CompanionError(f"a companion net's role is one of {', '.join(COMPANION_ROLES)}, got {role!r}")
    if feature_version not in FEATURE_SETS or layers[0][0].shape[1] != FEATURE_SETS[feature_version].width:
        raise CompanionError(f"the net's first layer does not take features version {feature_version}")
    target = Path(out)
    arrays: dict[str, np.ndarray] = {"format": np.array(COMPANION_FORMAT), "activation": np.array(activation),
                                     "checkpoint_sha256": np.array(file_digest(checkpoint)),
                                     "n_layers": np.array(len(layers)), "role": np.array(role),
                                     "feature_version": np.array(feature_version)}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"] = np.asarray(w, np.float32)
        arrays[f"b{i}"] = np.asarray(b, np.float32)
    with atomic_write(target, parents=True) as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy>=2.1 stub matches **arrays against allow_pickle
    if read_companion_net(target, role) is None:
        raise CompanionError(f"could not write a companion net to {str(target)!r}")
    return target


def read_companion_net(path: str | os.PathLike[str], role: str) -> tuple[NumpyNet, str] | None:
    """``(net, checkpoint digest)`` of a companion net file of that role, or None when it is missing, damaged, of
    another role or of another format."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["format"]) != COMPANION_FORMAT:
                return None
            found_role = str(data["role"]) if "role" in data.files else "pruning"
            version = int(data["feature_version"]) if "feature_version" in data.files else 1
            if found_role != role or version not in FEATURE_SETS:
                return None
            layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(int(data["n_layers"]))]
            if layers[0][0].shape[1] != FEATURE_SETS[version].width or layers[-1][0].shape[0] != 5:
                return None  # the feature set's inputs in, five chances out
            activation = str(data["activation"])
            return NumpyNet(layers, activation, version), str(data["checkpoint_sha256"])
    except (OSError, KeyError, ValueError, IndexError, BgnetError):
        return None


def load_companion_net(checkpoint: str | os.PathLike[str], role: str,
                       files: Iterable[str | os.PathLike[str]]) -> NumpyNet | None:
    """The companion net of that role among ``files`` made for this exact checkpoint file, or None."""
    path = Path(checkpoint)
    if not path.is_file():
        return None
    digest = None
    for file in files:
        if Path(file).is_file():
            found = read_companion_net(file, role)
            if found is not None:
                digest = digest or file_digest(path)
                if found[1] == digest:
                    return found[0]
    return None
