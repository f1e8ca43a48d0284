"""Scaling of the backends: duel throughput in one process, on the local backend and on 1 and 2 Ray workers.

    .venv/bin/python bench/scaling.py [--repeats 3] [--chunks 8] [--chunk-seconds 1.0] [--selfplay]

Work: a 0-ply net (214-128-64-5, fresh weights: the cost of a forward pass does not
depend on their values) against pubeval, cubeless money, split into chunks of deals
sized to about ``--chunk-seconds`` of work each. For every setting it prints the
median over the repeats of games per second; for Ray also the worker busy fraction
(time inside chunks / (wall time x workers)) and the per-task overhead measured
with empty tasks. ``--selfplay`` adds self-play games per second on 1 and 2 Ray
actors and the learner's fit time per round (the serial part of training).
Every setting checks that its results equal the plain run's. BLAS runs one thread
per process everywhere (Ray sets OMP_NUM_THREADS=1 in its workers; this script sets
it for itself), so that the comparison is of backends, not of BLAS threading.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one BLAS thread here, as Ray gives its
    os.environ.setdefault(_var, "1")                                       # workers: a fair single-process baseline

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bgnet.sim.backends import LocalBackend, RayBackend, busy_fraction, map_chunks, timed  # noqa: E402
from bgnet.sim.runner import DuelSpec, play_chunk_shared, shared_agents  # noqa: E402


def noop(shared: Any, chunk: int, seed: int) -> int:
    """An empty task: what remains is the backend's own cost."""
    return chunk


def make_net(folder: Path) -> str:
    """A checkpoint with fresh weights of the released net's shape."""
    import torch

    from bgnet.nets.model import BgNet, ModelConfig, save_checkpoint

    torch.manual_seed(0)
    path = folder / "bench_net.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(128, 64))))
    return str(path)


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def duel_scaling(args: argparse.Namespace, net: str) -> None:
    spec = DuelSpec(net, "pubeval", 10 ** 6, seed=1)
    agents = shared_agents(spec)
    probe = 128
    play_chunk_shared(agents, (spec, 0, 32), 0)  # warm-up (numba caches, first calls)
    spans = []
    for k in range(2):
        t0 = time.perf_counter()
        play_chunk_shared(agents, (spec, (k + 1) * probe, (k + 2) * probe), 0)
        spans.append(time.perf_counter() - t0)
    per_deal = min(spans) / probe
    size = max(4, int(round(args.chunk_seconds / per_deal)))
    jobs = [(spec, k * size, (k + 1) * size) for k in range(args.chunks)]
    games = 2 * size * args.chunks
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"duel: {net.split('/')[-1]} (0-ply, 214-128-64-5) vs pubeval, {args.chunks} chunks of {size} deals "
          f"({2 * size} games, ~{size * per_deal:.2f} s each), {args.repeats} repeats; medians")

    def plain() -> list[Any]:
        return [play_chunk_shared(agents, job, 0) for job in jobs]

    reference = plain()
    rows: dict[str, dict[str, list[float]]] = {}

    def record(name: str, key: str, value: float) -> None:
        rows.setdefault(name, {}).setdefault(key, []).append(value)

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray1, ray2 = RayBackend(num_workers=1), RayBackend(num_workers=2)
    for backend in (ray1, ray2):  # warm the workers: imports, numba caches
        map_chunks(backend, play_chunk_shared, jobs[:2], agents)
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = plain()
        record("plain loop, 1 process", "gps", games / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        out = map_chunks(LocalBackend(1), play_chunk_shared, jobs, agents)
        record("local backend, 1 worker", "gps", games / (time.perf_counter() - t0))
        assert out == reference
        t0 = time.perf_counter()
        out = map_chunks(LocalBackend(2), play_chunk_shared, jobs, agents)
        record("local backend, 2 processes", "gps", games / (time.perf_counter() - t0))
        assert out == reference
        for name, backend in (("ray, 1 worker", ray1), ("ray, 2 workers", ray2)):
            t0 = time.perf_counter()
            res = map_chunks(backend, timed(play_chunk_shared), jobs, agents)
            wall = time.perf_counter() - t0
            assert [r[0] for r in res] == reference
            record(name, "gps", games / wall)
            record(name, "busy", busy_fraction([(r[1], r[2]) for r in res], wall, backend.workers))
            record(name, "chunk_s", median([r[2] - r[1] for r in res]))
        for name, backend in (("ray, 1 worker", ray1), ("ray, 2 workers", ray2)):
            n = 200
            t0 = time.perf_counter()
            map_chunks(backend, noop, list(range(n)), None)
            record(name, "task_ms", 1000 * (time.perf_counter() - t0) / n * backend.workers)
    base = median(rows["plain loop, 1 process"]["gps"])
    print(f"{'setting':<26}{'games/s':>9}{'vs plain':>10}{'busy':>7}{'chunk s':>9}{'empty task ms':>15}")
    for name, r in rows.items():
        gps = median(r["gps"])
        busy = f"{median(r['busy']):.1%}" if "busy" in r else "-"
        chunk = f"{median(r['chunk_s']):.2f}" if "chunk_s" in r else "-"
        task = f"{median(r['task_ms']):.2f}" if "task_ms" in r else "-"
        print(f"{name:<26}{gps:>9.1f}{gps / base:>9.2f}x{busy:>7}{chunk:>9}{task:>15}")
    one, two = median(rows["ray, 1 worker"]["gps"]), median(rows["ray, 2 workers"]["gps"])
    pool = median(rows["local backend, 2 processes"]["gps"]) / median(rows["local backend, 1 worker"]["gps"])
    print(f"ray 2 workers / 1 worker: {two / one:.2f}x (what this machine gives 2 local processes now: {pool:.2f}x);  "
          f"local backend overhead vs plain: {(base / median(rows['local backend, 1 worker']['gps']) - 1):+.1%}")
    print("raw games/s per repeat:", {k: [round(x, 1) for x in v["gps"]] for k, v in rows.items()})
    pairs = zip(rows["ray, 2 workers"]["gps"], rows["ray, 1 worker"]["gps"],
                rows["local backend, 2 processes"]["gps"], rows["local backend, 1 worker"]["gps"])
    print("per repeat, ray 2/1 workers and local 2/1 processes:",
          [(round(r2 / r1, 2), round(l2 / l1, 2)) for r2, r1, l2, l1 in pairs])
    if args.selfplay:
        selfplay_scaling(args)
    ray.shutdown()


def selfplay_scaling(args: argparse.Namespace) -> None:
    import torch

    from bgnet.trainer.learner import fit
    from bgnet.nets.model import BgNet, ModelConfig
    from bgnet.trainer.td import lambda_returns
    from bgnet.trainer.distributed import RaySelfPlay

    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = BgNet(ModelConfig(hidden=(128, 64)))
    print(f"self-play on Ray actors: batch 128 games per actor, 256 games per round per actor, "
          f"{args.rounds} timed rounds after one warm-up; medians")
    for workers in (1, 2):
        play = RaySelfPlay(net, seed=1, workers=workers, batch_games=128, sync_games=256 * workers)
        play.step()
        times, counts, positions = [], [], []
        done: list[Any] = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            done = play.step()
            times.append(time.perf_counter() - t0)
            counts.append(len(done))
            positions.append(sum(len(t.boards) for t in done))
        play.close()
        boards = np.concatenate([t.boards for t in done])
        targets = np.concatenate([lambda_returns(t.values, t.outcome(), 0.7) for t in done])
        learner = copy.deepcopy(net)  # the actors of the next setting play the same untrained net
        opt = torch.optim.Adam(learner.parameters(), lr=1e-4)
        t0 = time.perf_counter()
        fit(learner, opt, boards, targets, 256, 1, np.random.default_rng(0), torch.device("cpu"))
        fit_s = time.perf_counter() - t0
        gps = [c / t for c, t in zip(counts, times)]
        pps = [n / t for n, t in zip(positions, times)]
        print(f"  {workers} actor(s): {median(gps):.0f} games/s, {median(pps):.0f} positions/s self-play "
              f"({median(times):.2f} s per round of {int(median(counts))} games); learner fit: "
              f"{1e6 * fit_s / len(boards):.1f} us per position on 1 CPU thread")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chunks", type=int, default=8)
    p.add_argument("--chunk-seconds", type=float, default=1.0)
    p.add_argument("--selfplay", action="store_true", help="also self-play on 1 and 2 actors")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        duel_scaling(args, make_net(Path(tmp)))


if __name__ == "__main__":
    main()
