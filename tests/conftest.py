"""Suite-wide settings and shared fixtures: caches (weights, the bear-off database) go to a temporary folder, never
the user's home."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# Set at import, before any test or subprocess runs, so that CLI subprocesses inherit it too; removed at exit
# (it holds a 35 MB bear-off database).
if not os.environ.get("BGNET_CACHE"):
    os.environ["BGNET_CACHE"] = tempfile.mkdtemp(prefix="bgnet-test-cache-")
    atexit.register(shutil.rmtree, os.environ["BGNET_CACHE"], ignore_errors=True)

# Without a CUDA GPU, Triton kernels (bgnet.features.v2_fused) run in Triton's interpreter on CPU tensors; Triton
# reads this when it is imported, so it is set before any test imports it.
if "TRITON_INTERPRET" not in os.environ:
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


@pytest.fixture(scope="session")
def net():
    """The shipped net's 0-ply ``boards -> probs`` function (the rollout and labelling tests' evaluator), without
    its pruning net: searches on it value every reply (tests/test_pruning.py tests the pruned ones)."""
    from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent

    return NeuralAgent(DEFAULT_CHECKPOINT, 0, prune=False).probs_fn


@pytest.fixture(scope="session")
def exact():
    """The bear-off database as an evaluator: exact chances for pure bear-offs (every board asked must be one)."""
    import numpy as np

    bearoff = pytest.importorskip("bgnet.nets.bearoff")

    def probs_fn(boards: np.ndarray) -> np.ndarray:
        mask, probs = bearoff.exact_probs(boards)
        assert np.asarray(mask).all(), "the exact evaluator was asked about a board that is not a pure bear-off"
        return np.asarray(probs, np.float32)
    return probs_fn


@pytest.fixture(scope="session")
def game_boards():
    """``game_boards(n, seed)``: n boards (N, 26) int8 from random games (contact, races, bars, bear-offs), each the
    afterstate of a random legal play seen from the side that played it."""
    import numpy as np

    from bgnet.core.movegen import generate_plays
    from bgnet.core.position import Position

    def make(n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        start = np.array(Position.start().board, np.int8)
        b, out = start, []
        while len(out) < n:
            after, _s, _n, off = generate_plays(b[None, :], rng.integers(1, 7, (1, 2)).astype(np.int8))
            a = after[rng.integers(off[1])]
            out.append(a.copy())
            b = -a[::-1].copy()
            if (b > 0).sum() == 0 or (b < 0).sum() == 0:
                b = start
        return np.array(out)
    return make


@pytest.fixture(scope="session")
def bench_script():
    """A loader of ``bench/NAME.py`` as a module (registered under NAME), for tests of the benchmark scripts. The
    script runs in the suite's process, so it must not set ``NUMBA_NUM_THREADS`` at import (numba refuses a change
    once its threads run, in every later compile)."""
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "bench"

    def load(name: str):  # type: ignore[no-untyped-def]
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(name, mod)
        spec.loader.exec_module(mod)
        return mod
    return load


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch intra-op thread for a module of many small ops: the suite may share few cores with other jobs."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture()
def tiny_v2_checkpoint(tmp_path):
    """A checkpoint of a small seeded net on feature set 2 (16 hidden units), for runs that start from one."""
    import torch

    from bgnet.nets.model import BgNet, ModelConfig, save_checkpoint

    torch.manual_seed(0)
    path = tmp_path / "init.pt"
    save_checkpoint(path, BgNet(ModelConfig.for_features([16], "relu", 2)))
    return path
