"""bgnet.sim.backends without Ray: chunk seeds, the local backend's order and retries, and the clear errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import bgnet.sim.runner as runner
from bgnet.sim.backends import BackendError, LocalBackend, chunk_seeds, make_backend, map_chunks, split
from bgnet.cli.eval import main as eval_main
from bgnet.sim.runner import DuelSpec, run_duel
from bgnet.play.game import Rules
from bgnet.sim.selfplay import SelfPlay
from bgnet.trainer.config import ConfigError, build_config
from bgnet.trainer.distributed import LocalSelfPlay, pack, quotas, unpack


def noisy_sum(shared: np.ndarray, chunk: tuple[int, int], seed: int) -> tuple[int, float]:
    """A chunk's result that depends on the shared array, the chunk and the chunk's own seed."""
    lo, hi = chunk
    draw = np.random.default_rng(seed).random(hi - lo)
    return lo, float((shared[lo:hi] * draw).sum())


class FailOnce:
    """A chunk function that raises the first time it meets each chunk (a marker file per chunk), and logs successes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, shared: np.ndarray, chunk: tuple[int, int], seed: int) -> tuple[int, float]:
        marker = self.folder / f"tried_{chunk[0]}"
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            raise RuntimeError(f"chunk {chunk} fails on its first try")
        except FileExistsError:
            pass
        with open(self.folder / "done.log", "a") as fh:
            fh.write(f"{chunk[0]}\n")
        return noisy_sum(shared, chunk, seed)


def test_chunk_seeds_depend_only_on_the_seed_and_the_index() -> None:
    a, b = chunk_seeds(7, 5), chunk_seeds(7, 9)
    assert a == b[:5]  # more chunks do not change the first ones
    assert len(set(b)) == 9 and chunk_seeds(8, 5) != a
    assert all(0 <= s < 2 ** 63 for s in b)


def test_split_covers_every_item_once() -> None:
    parts = split(10, 3)
    assert parts == [(0, 3), (3, 6), (6, 9), (9, 10)]
    with pytest.raises(BackendError):
        split(10, 0)


def test_local_pool_gives_the_in_process_results_in_chunk_order() -> None:
    shared = np.arange(40, dtype=np.float64)
    chunks = split(40, 7)
    one = map_chunks(LocalBackend(1), noisy_sum, chunks, shared, seed=3)
    two = map_chunks(LocalBackend(2), noisy_sum, chunks, shared, seed=3)
    assert one == two
    assert [lo for lo, _ in one] == [lo for lo, _ in chunks]
    assert one != map_chunks(LocalBackend(1), noisy_sum, chunks, shared, seed=4)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_chunk_that_raises_once_is_retried_without_loss_or_duplicates(tmp_path: Path, workers: int) -> None:
    shared = np.linspace(0.0, 1.0, 30)
    chunks = split(30, 10)
    got = map_chunks(LocalBackend(workers), FailOnce(tmp_path), chunks, shared, seed=11)
    assert got == map_chunks(LocalBackend(1), noisy_sum, chunks, shared, seed=11)
    done = sorted(int(x) for x in (tmp_path / "done.log").read_text().split())
    assert done == [0, 10, 20]  # each chunk succeeded exactly once


def slow_after_the_first(shared: None, chunk: int, seed: int) -> tuple[int, int]:
    """Chunk 0 at once, every later one a minute (a chunk that must not be waited for when the caller stops)."""
    import time

    if chunk > 0:
        time.sleep(60)
    return chunk, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_chunks_are_taken_lazily_from_a_generator(workers: int) -> None:
    from itertools import count, islice

    taken: list[int] = []

    def endless() -> Iterator[tuple[int, int]]:
        for k in count():
            taken.append(k)
            yield (k, k + 3)

    shared = np.arange(100.0)
    got = list(islice(LocalBackend(workers).imap(noisy_sum, endless(), shared, seed=3), 5))
    assert got == map_chunks(LocalBackend(1), noisy_sum, [(k, k + 3) for k in range(5)], shared, seed=3)
    assert len(taken) <= 5 + 2 * workers  # never more ahead than two chunks per worker


def test_stopping_a_pool_ends_its_processes_at_once() -> None:
    import multiprocessing as mp
    import time

    results = LocalBackend(2).imap(slow_after_the_first, range(10), None)
    assert next(results)[0] == 0
    assert mp.active_children()  # the pool's processes, busy with minute-long chunks
    start = time.monotonic()
    results.close()  # what Ctrl-C in the caller does
    while mp.active_children() and time.monotonic() - start < 5:  # a killed process may take a moment to be reaped
        time.sleep(0.05)
    assert time.monotonic() - start < 5 and not mp.active_children()


def test_a_chunk_that_always_fails_raises_after_its_retries(tmp_path: Path) -> None:
    def broken(shared: None, chunk: int, seed: int) -> int:
        raise RuntimeError("always")

    with pytest.raises(RuntimeError, match="always"):
        map_chunks(LocalBackend(1, max_retries=2), broken, [0, 1], None)


def test_duel_on_the_local_backend_equals_the_plain_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "LOOP_CHUNK", 4)
    spec = DuelSpec("pubeval", "random", 9, seed=5, rules=Rules(match_length=3))
    plain = run_duel(spec, progress=False)
    on_backend = run_duel(spec, progress=False, backend=LocalBackend(2))
    assert plain.points == on_backend.points and plain.summary() == on_backend.summary()


def test_ray_missing_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(BackendError, match=r"pip install 'bgnet\[ray\]'"):
        make_backend("ray")
    with pytest.raises(BackendError, match="--ray-address needs --backend ray"):
        make_backend("local", address="10.0.0.1:6379")
    with pytest.raises(BackendError, match="unknown backend"):
        make_backend("slurm")
    with pytest.raises(BackendError, match="workers must be at least 1, not 0"):
        make_backend("local", 0)  # not taken for the default (None: one worker)
    assert make_backend("local").workers == 1 and make_backend("local", 2).workers == 2


def test_eval_refuses_a_ray_address_without_the_ray_backend(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["random", "pubeval", "--games", "2", "--ray-address", "auto", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--ray-address needs --backend ray" in err and "Traceback" not in err


def test_train_config_checks_the_backend_fields() -> None:
    assert build_config(None, {"backend": "ray", "workers": "3", "sync_games": "64"}).workers == 3
    for bad, words in [({"backend": "mpi"}, "backend must be local or ray"),
                       ({"backend": "ray", "workers": "0"}, "at least 1"),
                       ({"workers": "2"}, "need backend ray")]:
        with pytest.raises(ConfigError, match=words):
            build_config(None, bad)


def test_packed_games_come_back_equal() -> None:
    play = SelfPlay(8, seed=2)
    rng = np.random.default_rng(0)
    done = []
    while len(done) < 3:
        done.extend(play.step(lambda b: rng.random((len(b), 5)).astype(np.float32)))
    back = unpack(pack(done))
    assert len(back) == len(done)
    for x, y in zip(done, back):
        assert np.array_equal(x.boards, y.boards) and np.array_equal(x.values, y.values) and x.result == y.result
    assert unpack(pack([])) == []


def test_quotas_split_the_sync_games() -> None:
    assert quotas(10, 3) == [4, 3, 3] and sum(quotas(257, 4)) == 257 and quotas(1, 2) == [1, 1]


def test_local_selfplay_resumes_a_single_ray_stream_exactly() -> None:
    def fn(b: np.ndarray) -> np.ndarray:
        return np.tile(np.array([0.5, 0.1, 0.0, 0.1, 0.0], np.float32), (len(b), 1))

    a = SelfPlay(6, seed=9)
    for _ in range(5):
        a.step(fn)
    ray_state = {"backend": "ray", "workers": 1, "batch_games": 6, "actors": [a.state_dict()]}
    b = LocalSelfPlay(6, seed=1)
    b.load_state_dict(ray_state)
    assert np.array_equal(a.boards, b.boards) and np.array_equal(a.plies, b.plies)
    for _ in range(30):
        da, db = a.step(fn), b.step(fn)
        assert [t.result for t in da] == [t.result for t in db]
    c = LocalSelfPlay(6, seed=1)
    c.load_state_dict({**ray_state, "workers": 2, "actors": [a.state_dict(), a.state_dict()]})
    assert (c.plies == 0).all()  # two streams cannot continue in one: a fresh start
