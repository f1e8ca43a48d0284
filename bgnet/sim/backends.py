"""Where parallel work runs: this process, local worker processes, or a Ray cluster.

Every parallel job in bgnet (duels, rollouts, labelling) is the same shape: a pure
function ``fn(shared, chunk, seed)`` mapped over a fixed list of chunks, with
``shared`` the read-only data every chunk needs (a net's weights, the agents) and
``seed`` the chunk's own seed, derived from the run's seed and the chunk's index
only (``chunk_seeds``). Results come back in chunk order, so the answer is the
same on any backend and for any number of workers; only the wall time changes.

- ``LocalBackend(workers=1)`` calls ``fn`` in this process (``workers > 1``: a
  process pool, ``shared`` sent once to each process);
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
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar

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


def chunk_seeds(seed: int, n_chunks: int) -> list[int]:
    """One 63-bit seed per chunk, from the run's seed and the chunk's index only (not from any worker count)."""
    return [int(np.random.SeedSequence([int(seed), 0xC4A2, i]).generate_state(2, np.uint64)[0] >> np.uint64(1))
            for i in range(n_chunks)]


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

    def imap(self, fn: Callable[[S, C, int], R], chunks: Sequence[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield ``fn(shared, chunks[i], chunk_seeds(seed, n)[i])`` for i = 0, 1, ... in order."""
        ...

    def close(self) -> None:
        """Release the workers (a no-op where there are none)."""
        ...


def map_chunks(backend: Backend, fn: Callable[[S, C, int], R], chunks: Sequence[C], shared: S, seed: int = 0, *,
               desc: str = "", progress: bool = False) -> list[R]:
    """Every chunk's result, in chunk order."""
    return list(backend.imap(fn, chunks, shared, seed, desc=desc, progress=progress))


def _bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar over chunks on stderr, or None when disabled."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc or "chunks", unit="chunk", leave=False, file=sys.stderr)


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

    def imap(self, fn: Callable[[S, C, int], R], chunks: Sequence[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield each chunk's result in order, computed here or in the pool."""
        seeds = chunk_seeds(seed, len(chunks))
        bar = _bar(len(chunks), desc, progress)
        try:
            if self._workers == 1 or len(chunks) <= 1:
                for chunk, s in zip(chunks, seeds):
                    yield self._call_here(fn, shared, chunk, s)
                    if bar is not None:
                        bar.update(1)
            else:
                yield from self._pool(fn, chunks, shared, seeds, bar)
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

    def _pool(self, fn: Callable[[S, C, int], R], chunks: Sequence[C], shared: S, seeds: list[int],
              bar: Any) -> Iterator[R]:
        """Chunks over a process pool, ``shared`` sent once per process; results released in order."""
        import multiprocessing as mp

        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        n = len(chunks)
        with ProcessPoolExecutor(min(self._workers, n), mp_context=mp.get_context(method),
                                 initializer=_set_shared, initargs=(shared,)) as pool:
            futures: dict[Future[Any], int] = {}
            attempts = [0] * n
            results: dict[int, Any] = {}
            for i in range(n):
                futures[pool.submit(_pool_call, fn, chunks[i], seeds[i])] = i
            nxt = 0
            try:
                while nxt < n:
                    done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                    for fut in done:
                        i = futures.pop(fut)
                        exc = fut.exception()
                        if exc is not None:
                            attempts[i] += 1
                            if attempts[i] > self.max_retries:
                                raise exc
                            futures[pool.submit(_pool_call, fn, chunks[i], seeds[i])] = i
                            continue
                        results[i] = fut.result()
                        if bar is not None:
                            bar.update(1)
                    while nxt in results:
                        yield results.pop(nxt)
                        nxt += 1
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise

    def close(self) -> None:
        """Nothing to release: a pool lives only as long as one map."""


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

    def imap(self, fn: Callable[[S, C, int], R], chunks: Sequence[C], shared: S, seed: int = 0, *,
             desc: str = "", progress: bool = False) -> Iterator[R]:
        """Yield each chunk's result in order; at most ``workers`` tasks are in flight."""
        ray = self.ray
        n = len(chunks)
        seeds = chunk_seeds(seed, n)
        shared_ref = ray.put(shared)  # once: every task gets the reference, not a copy
        window = self.workers
        pending: dict[Any, int] = {}
        results: dict[int, Any] = {}
        submitted = nxt = 0
        bar = _bar(n, desc, progress)
        try:
            while nxt < n:
                while submitted < n and len(pending) < window:
                    pending[self._remote.remote(fn, shared_ref, chunks[submitted], seeds[submitted])] = submitted
                    submitted += 1
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
    """The backend named by ``--backend``; ``workers`` None means 1 locally and the cluster's CPUs on Ray."""
    if name == "local":
        if address:
            raise BackendError("--ray-address needs --backend ray")
        return LocalBackend(workers or 1)
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
