"""Where parallel work runs: this process, local worker processes, or a Ray cluster.

Every parallel job in bgnet (duels, rollouts, labelling) is the same shape: a pure
function ``fn(shared, chunk, seed)`` mapped over a fixed sequence of chunks, with
``shared`` the read-only data every chunk needs (a net's weights, the agents) and
``seed`` the chunk's own seed, derived from the run's seed and the chunk's index
only (``chunk_seed``). Results come back in chunk order, so the answer is the
same on any backend and for any number of workers; only the wall time changes.
Chunks are taken from the iterable as workers come free, so a generator of any
length (a rollout's plan) is never held whole.

- ``LocalBackend(workers=1)`` calls ``fn`` in this process (``workers > 1``: a
  process pool, ``shared`` sent once to each process; Ctrl-C ends the pool's
  processes at once);
- ``RayBackend(address=None, num_workers=None)`` runs each chunk as a Ray task:
  ``shared`` is ``ray.put`` once per map and every task gets a reference to it,
  a task whose worker dies (or that raises) is retried up to ``max_retries``
  times, and Ctrl-C cancels the tasks still queued or running.

Ray is an optional extra (``pip install 'bgnet[ray]'``) and is imported only when a
``RayBackend`` is made.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from collections.abc import Sized
from itertools import count
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

import numpy as np

from bgnet.core.errors import BgnetError

S = TypeVar("S")
C = TypeVar("C")
R = TypeVar("R")

ChunkFn = Callable[[S, C, int], R]
"""A pure function of (shared data, one chunk, the chunk's seed) -> the chunk's result."""

BACKENDS = ("local", "ray")
"""Names accepted by ``--backend``."""

DEFAULT_RETRIES = 3
"""Times a failed chunk is run again before its error is raised."""


class BackendError(BgnetError):
    """A backend that cannot be used as asked (ray missing, bad address, bad option)."""


def single_blas_thread() -> bool:
    """Run numpy's bundled OpenBLAS on one thread in this process, as Ray runs its workers (OMP_NUM_THREADS=1).

    Why: a matrix product's rounding depends on how many BLAS threads split it, so
    a net's outputs (and a rollout's means) would differ in the last bits between
    this process and the workers. Returns whether one thread is now in force.
    """
    if "1" in (os.environ.get("OMP_NUM_THREADS"), os.environ.get("OPENBLAS_NUM_THREADS")):
        return True
    from bgnet.core.blas import limit_blas_threads

    return limit_blas_threads(1)


def chunk_seed(seed: int, index: int) -> int:
    """The 63-bit seed of chunk ``index``: from the run's seed and the chunk's index only, not the worker count."""
    return int(np.random.SeedSequence([int(seed), 0xC4A2, index]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def chunk_seeds(seed: int, n_chunks: int) -> list[int]:
    """``chunk_seed`` of chunks 0 to ``n_chunks - 1``."""
    return [chunk_seed(seed, i) for i in range(n_chunks)]


def split(n_items: int, chunk_size: int) -> list[tuple[int, int]]:
    """The fixed split of ``range(n_items)`` into (first, end) chunks of ``chunk_size`` (the last may be shorter)."""
    if chunk_size < 1:
        raise BackendError(f"chunk size must be at least 1, not {chunk_size}")
    return [(lo, min(lo + chunk_size, n_items)) for lo in range(0, n_items, chunk_size)]


class Backend(Protocol):
    """Maps a pure chunk function over chunks; results in chunk order, the same on every backend."""

    name: str
    """"local" or "ray"."""

    @property
    def workers(self) -> int:
        """How many chunks run at once."""
        ...

    def imap(self, fn: Callable[[S, C, int], R], chunks: Iterable[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield ``fn(shared, chunk_i, chunk_seed(seed, i))`` for the chunks i = 0, 1, ... in order."""
        ...

    def close(self) -> None:
        """Release the workers (a no-op where there are none)."""
        ...


def map_chunks(backend: Backend, fn: Callable[[S, C, int], R], chunks: Iterable[C], shared: S, seed: int = 0, *,
               desc: str = "", progress: bool = False) -> list[R]:
    """Every chunk's result, in chunk order."""
    return list(backend.imap(fn, chunks, shared, seed, desc=desc, progress=progress))


def _bar(chunks: Iterable[Any], desc: str, enabled: bool) -> Any:
    """A tqdm bar over chunks on stderr (its total when ``chunks`` has a length), or None when disabled."""
    if not enabled:
        return None
    from tqdm import tqdm

    total = len(chunks) if isinstance(chunks, Sized) else None
    return tqdm(total=total, desc=desc or "chunks", unit="chunk", leave=False, file=sys.stderr)


def _numbered(chunks: Iterable[C], seed: int) -> Iterator[tuple[int, C, int]]:
    """``(index, chunk, chunk_seed)`` of each chunk, taken lazily."""
    for i, chunk in zip(count(), chunks):
        yield i, chunk, chunk_seed(seed, i)


# -- local --------------------------------------------------------------------------------

_SHARED: dict[str, Any] = {}
"""A local pool worker's copy of the shared data (set once per process by the pool initializer)."""


def _set_shared(shared: Any) -> None:
    """Pool initializer: keep ``shared`` for every chunk this process runs; one torch thread per process."""
    _SHARED["value"] = shared
    single_blas_thread()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _pool_call(fn: Callable[[Any, Any, int], Any], chunk: Any, seed: int) -> Any:
    """Run one chunk in a pool worker against its copy of the shared data."""
    return fn(_SHARED["value"], chunk, seed)


class LocalBackend:
    """Chunks in this process (``workers=1``) or in a local process pool; failed chunks are retried."""

    name = "local"

    def __init__(self, workers: int = 1, max_retries: int = DEFAULT_RETRIES) -> None:
        if workers < 1:
            raise BackendError(f"workers must be at least 1, not {workers}")
        self._workers = workers
        single_blas_thread()  # the same float sums as a Ray worker's
        self.max_retries = max_retries

    @property
    def workers(self) -> int:
        """How many chunks run at once."""
        return self._workers

    def imap(self, fn: Callable[[S, C, int], R], chunks: Iterable[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield each chunk's result in order, computed here or in the pool."""
        bar = _bar(chunks, desc, progress)
        try:
            if self._workers == 1 or (isinstance(chunks, Sized) and len(chunks) <= 1):
                for _i, chunk, s in _numbered(chunks, seed):
                    yield self._call_here(fn, shared, chunk, s)
                    if bar is not None:
                        bar.update(1)
            else:
                yield from self._pool(fn, chunks, shared, seed, bar)
        finally:
            if bar is not None:
                bar.close()

    def _call_here(self, fn: Callable[[S, C, int], R], shared: S, chunk: C, seed: int) -> R:
        """One chunk in this process, run again (up to ``max_retries`` times) if it raises."""
        for attempt in range(self.max_retries + 1):
            try:
                return fn(shared, chunk, seed)
            except Exception:
                if attempt == self.max_retries:
                    raise
        raise AssertionError("unreachable")

    def _pool(self, fn: Callable[[S, C, int], R], chunks: Iterable[C], shared: S, seed: int,
              bar: Any) -> Iterator[R]:
        """Chunks over a process pool, ``shared`` sent once per process, at most two chunks per process submitted
        ahead; results released in order. Stopped early (Ctrl-C, an error, the caller closing), it ends the
        pool's processes instead of waiting for their chunks."""
        import multiprocessing as mp

        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        workers = min(self._workers, len(chunks)) if isinstance(chunks, Sized) else self._workers
        pool = ProcessPoolExecutor(workers, mp_context=mp.get_context(method), initializer=_set_shared,
                                   initargs=(shared,))
        todo = _numbered(chunks, seed)
        futures: dict[Future[Any], tuple[int, Any, int]] = {}
        attempts: dict[int, int] = {}
        results: dict[int, Any] = {}
        nxt = 0

        def submit(i: int, chunk: Any, s: int) -> None:
            futures[pool.submit(_pool_call, fn, chunk, s)] = (i, chunk, s)

        def fill() -> None:
            """At most two chunks per process running or waiting their turn to be yielded."""
            while len(futures) + len(results) < 2 * workers:
                job = next(todo, None)
                if job is None:
                    return
                submit(*job)

        try:
            fill()
            while futures:
                done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                for fut in done:
                    i, chunk, s = futures.pop(fut)
                    exc = fut.exception()
                    if exc is not None:
                        attempts[i] = attempts.get(i, 0) + 1
                        if attempts[i] > self.max_retries:
                            raise exc
                        submit(i, chunk, s)
                        continue
                    attempts.pop(i, None)
                    results[i] = fut.result()
                    if bar is not None:
                        bar.update(1)
                while nxt in results:
                    yield results.pop(nxt)
                    nxt += 1
                fill()
        except BaseException:
            _end_pool(pool)
            raise
        pool.shutdown(wait=True)

    def close(self) -> None:
        """Nothing to release: a pool lives only as long as one map."""


def _end_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel a pool's queued chunks and end its processes now, rather than wait for the running chunks."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)
    pool.shutdown(wait=True)  # the manager thread sees its workers gone and ends; nothing is left running


# -- ray ------------------------------------------------------------------------------------

def import_ray() -> Any:
    """The ray module, or one sentence saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError("--backend ray needs the optional Ray package: pip install 'bgnet[ray]'") from None
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to Ray: the cluster at ``address``, else a new local instance; True when this call started it.

    Does nothing when Ray is already initialised in this process (a test's instance, a user's own).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    if address:
        _check_reachable(address)
    try:
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    except ConnectionError as exc:
        raise BackendError(f"cannot reach a Ray cluster at {address!r} ({exc})") from None
    return True


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail at once, in one sentence, when a ``host:port`` address has nothing listening (Ray itself keeps retrying)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://...": left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise BackendError(f"cannot reach a Ray cluster at {address!r} ({exc.strerror or exc})") from None


def _ray_call(fn: Callable[[Any, Any, int], Any], shared: Any, chunk: Any, seed: int) -> Any:
    """The body of a Ray task: one chunk (``shared`` arrives resolved from the object store)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return fn(shared, chunk, seed)


def cancel_all(ray: Any, refs: list[Any], patience: float = 10.0) -> None:
    """Cancel Ray tasks and wait until each is gone; a cancel that lands while a task is being handed to a
    worker can be lost, so the survivors are cancelled again (for up to ``patience`` seconds)."""
    deadline = time.monotonic() + patience
    while refs and time.monotonic() < deadline:
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # finished meanwhile
                pass
        _done, refs = ray.wait(refs, num_returns=len(refs), timeout=0.5)


class RayBackend:
    """Chunks as Ray tasks: ``shared`` put once per map, retries for dead workers, Ctrl-C cancels."""

    name = "ray"

    def __init__(self, address: str | None = None, num_workers: int | None = None,
                 max_retries: int = DEFAULT_RETRIES) -> None:
        if num_workers is not None and num_workers < 1:
            raise BackendError(f"workers must be at least 1, not {num_workers}")
        self.ray = import_ray()
        self.address = address
        single_blas_thread()  # whatever runs here (summaries, a local fallback) rounds as the workers do
        self.started = ensure_ray(address, num_workers)
        self.max_retries = max_retries
        self._num_workers = num_workers
        self._remote = self.ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=True)(_ray_call)

    @property
    def workers(self) -> int:
        """Chunks in flight at once: ``num_workers``, else the cluster's CPUs."""
        if self._num_workers is not None:
            return self._num_workers
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def imap(self, fn: Callable[[S, C, int], R], chunks: Iterable[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield each chunk's result in order; at most ``workers`` tasks are in flight (or waiting for an earlier
        chunk to be yielded), taken lazily from ``chunks``."""
        ray = self.ray
        todo = _numbered(chunks, seed)
        shared_ref = ray.put(shared)  # once: every task gets the reference, not a copy
        window = self.workers
        pending: dict[Any, int] = {}
        results: dict[int, Any] = {}
        nxt = 0
        bar = _bar(chunks, desc, progress)
        try:
            while True:
                while len(pending) + len(results) < window:
                    job = next(todo, None)
                    if job is None:
                        break
                    i, chunk, s = job
                    pending[self._remote.remote(fn, shared_ref, chunk, s)] = i
                if not pending:
                    break
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    results[i] = ray.get(ref)
                    if bar is not None:
                        bar.update(1)
                while nxt in results:
                    yield results.pop(nxt)
                    nxt += 1
        except BaseException:  # Ctrl-C, an error, or the caller stopped early: nothing keeps running
            cancel_all(ray, list(pending))
            raise
        finally:
            if bar is not None:
                bar.close()

    def close(self) -> None:
        """Shut Ray down if this backend started it."""
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = False


def make_backend(name: str = "local", workers: int | None = None, address: str | None = None) -> Backend:
    """The backend named by ``--backend``; ``workers`` None means 1 locally and the cluster's CPUs on Ray (below 1:
    ``BackendError``, as either backend says)."""
    if name == "local":
        if address:
            raise BackendError("--ray-address needs --backend ray")
        return LocalBackend(1 if workers is None else workers)
    if name == "ray":
        return RayBackend(address=address, num_workers=workers)
    raise BackendError(f"unknown backend {name!r}; choose local or ray")


def busy_fraction(spans: Sequence[tuple[float, float]], wall: float, workers: int) -> float:
    """Share of ``workers x wall`` seconds spent inside chunks, from each chunk's (start, end) times."""
    if wall <= 0 or workers < 1:
        return 0.0
    return sum(max(0.0, e - s) for s, e in spans) / (wall * workers)


def timed(fn: Callable[[S, C, int], R]) -> Callable[[S, C, int], tuple[R, float, float, int]]:
    """``fn`` wrapped to also return its wall-clock (start, end) and the process id (for benchmarks)."""
    return _Timed(fn)


class _Timed:
    """A picklable timing wrapper around a chunk function."""

    def __init__(self, fn: Callable[[Any, Any, int], Any]) -> None:
        self.fn = fn

    def __call__(self, shared: Any, chunk: Any, seed: int) -> tuple[Any, float, float, int]:
        start = time.time()
        out = self.fn(shared, chunk, seed)
        return out, start, time.time(), os.getpid()
