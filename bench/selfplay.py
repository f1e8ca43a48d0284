"""Self-play games per second with learning, on the default config's net (and the GPU config's on CUDA).

    python bench/selfplay.py [--seconds 60] [--json] [--device cpu|cuda] [--config configs/default.toml]
                             [--compare-bearoff] [--engine host|device] [--history PLIES] [--profile-table FILE]
                             [--matmul-precision highest|high|medium] [--compile-features]
                             [--device-kernels torch|fused]

Plays from the opening with an untrained net until games start finishing (warm-up,
compiles kernels), then counts finished games over the timed window while the
learner trains on every ``train_batch`` positions, as ``python -m train`` does.
``--compare-bearoff`` also plays two self-play batches step by step in turn (no learning),
one stopping at the bear-off database (the default) and one playing games out, and
reports both speeds: interleaving keeps the machine's load from favouring either.
``--engine device`` times ``bgnet.trainer.device_selfplay.DeviceTrainer`` instead: self-play,
TD targets and fits all on the device (the config's feature set must have a torch encoder),
a fit every ``ceil(train_batch / batch_games)`` steps; on CUDA it also counts the
synchronisations of a steady step (all in the move generator's ``nonzero`` and masks), and on any device the
torch ops a steady step dispatches, one fit included (the host's share of a GPU step).
``--device-kernels fused`` (the config's ``device_kernels``, ``bgnet.core.device_kernels``) encodes feature set 2
with one Triton kernel (``bgnet.features.v2_fused``) and looks pure bear-offs up with another
(``bgnet.nets.bearoff_fused``) instead of the torch ops, everywhere on the device (self-play, fits).
"""

from __future__ import annotations

import argparse
import json
import warnings
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bgnet.cli.parser import run_command  # noqa: E402
from bgnet.core.device_kernels import DEVICE_KERNELS  # noqa: E402
from bgnet.trainer.learner import fit  # noqa: E402
from bgnet.nets.model import BgNet, ModelConfig  # noqa: E402
from bgnet.sim.device_selfplay import DeviceSelfPlay  # noqa: E402
from bgnet.sim.selfplay import SelfPlay  # noqa: E402
from bgnet.trainer.config import ConfigError, TrainConfig, build_config  # noqa: E402
from bgnet.trainer.device_run import device_learning  # noqa: E402
from bgnet.trainer.device_selfplay import DeviceTrainer  # noqa: E402
from bgnet.trainer.inference import TorchEvaluator  # noqa: E402
from bgnet.trainer.selfplay import resolve_device, trajectories_to_samples, use_torch_encoder  # noqa: E402
from bgnet.trainer.training_run import seed_torch  # noqa: E402


def _setup(config_path: str, device: str, batch: int | None, precision: str | None = None, cuda_graphs: bool = False,
           kernels: str | None = None) -> tuple[TrainConfig, torch.device]:
    """The config with the bench's overrides (``kernels``: the device engine's ``device_kernels``), torch seeded and
    threaded as it says, and its device (checked)."""
    overrides: dict[str, object] = {"device": device}
    if kernels:
        overrides |= {"engine": "device", "device_kernels": kernels}
    if batch:
        overrides["batch_games"] = batch
    if precision:
        overrides["matmul_precision"] = precision
    if cuda_graphs:
        overrides["cuda_graphs"] = True
    cfg = build_config(config_path, overrides)
    seed_torch(cfg)
    return cfg, resolve_device(cfg.device)


def measure(config_path: str, device: str, seconds: float, batch: int | None, bearoff: bool = True) -> dict:
    cfg, dev = _setup(config_path, device, batch)
    net = BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version)).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    on_device = use_torch_encoder(cfg.encoder, dev, cfg.feature_version)
    probs_fn = TorchEvaluator(net, dev, cfg.kernel_threads, on_device)
    play = SelfPlay(cfg.batch_games, seed=cfg.seed, threads=cfg.kernel_threads, bearoff=bearoff)
    rng = np.random.default_rng(0)
    buf_b, buf_t = [], []
    finished = 0
    while finished < cfg.batch_games:  # warm-up: until a batch's worth of games has finished
        finished += len(play.step(probs_fn))
    games, plies, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        done = play.step(probs_fn, cfg.exploration)
        plies += cfg.batch_games
        if not done:
            continue
        games += len(done)
        b, t = trajectories_to_samples(done, cfg.lam)
        buf_b.append(b)
        buf_t.append(t)
        if sum(len(x) for x in buf_b) >= cfg.train_batch:
            fit(net, opt, np.concatenate(buf_b), np.concatenate(buf_t), cfg.minibatch, cfg.epochs, rng, dev, on_device)
            buf_b, buf_t = [], []
    elapsed = time.perf_counter() - t0
    return {"games_per_s": games / elapsed, "plies_per_s": plies / elapsed, "device": cfg.device,
            "batch": cfg.batch_games, "hidden": cfg.hidden, "feature_version": cfg.feature_version, "config": config_path, "seconds": round(elapsed, 1),
            "torch_threads": torch.get_num_threads(), "bearoff": bearoff}


def measure_device(config_path: str, device: str, seconds: float, batch: int | None, history: int | None,
                   profile_table: str | None = None, precision: str | None = None, cuda_graphs: bool = False,
                   kernels: str = "torch") -> dict:
    """Games/s with learning of the device engine: ``DeviceTrainer`` steps (self-play, TD targets, fits) on ``device``,
    through ``kernels`` (``bgnet.core.device_kernels``)."""
    cfg, dev = _setup(config_path, device, batch, precision, cuda_graphs, kernels)
    if not use_torch_encoder("torch", dev, cfg.feature_version):
        raise ConfigError(f"feature version {cfg.feature_version} has no torch encoder: the device engine needs one")
    net = BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version)).to(dev)
    learning = device_learning(cfg)
    play = DeviceSelfPlay(cfg.batch_games, seed=cfg.seed, device=dev, history=history, kernels=cfg.device_kernels)
    trainer = DeviceTrainer(net, play, learning, seed=cfg.seed)
    while int(play.finished) < cfg.batch_games:  # warm-up: until a batch's worth of games has finished
        trainer.step()
    syncs = count_syncs(trainer, cfg.exploration) if dev.type == "cuda" else None
    ops = count_ops(trainer, cfg.exploration, learning.fit_every)
    busy: float | str | None = None
    if dev.type == "cuda":
        try:  # a profiler that fails must not cost the run its games/s figure
            busy = gpu_busy(trainer, cfg.exploration, table=profile_table)
        except Exception as exc:  # noqa: BLE001 - reported in the output instead
            busy = f"profiler failed: {exc}"
    _wait(dev)
    games0, steps, t0 = int(play.finished), 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        trainer.step(cfg.exploration)
        steps += 1
    _wait(dev)
    elapsed = time.perf_counter() - t0
    games = int(play.finished) - games0
    return {"engine": "device", "games_per_s": games / elapsed, "plies_per_s": steps * cfg.batch_games / elapsed,
            "device": cfg.device, "batch": cfg.batch_games, "hidden": cfg.hidden,
            "feature_version": cfg.feature_version, "config": config_path, "seconds": round(elapsed, 1),
            "torch_threads": torch.get_num_threads(), "fit_every": learning.fit_every, "history": play.ring.steps,
            "loss": float(trainer.loss), "syncs_per_step": syncs, "ops_per_step": ops, "gpu_busy": busy,
            "matmul_precision": cfg.matmul_precision, "cuda_graphs": cfg.cuda_graphs,
            "device_kernels": cfg.device_kernels}


def compile_torch_features() -> None:
    """Replace the torch feature encoders by ``torch.compile``d ones (dynamic batch sizes): an experiment in fusing
    their many small kernels, measured against the eager ones in the same GPU run."""
    from bgnet.features import encoding_torch, v2_torch

    encoding_torch.encode_torch = torch.compile(encoding_torch.encode_torch, dynamic=True)
    v2_torch.encode_v2_torch = torch.compile(v2_torch.encode_v2_torch, dynamic=True)


def _wait(dev: torch.device) -> None:
    """Let the device finish its queued work (a GPU runs behind the Python loop)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def count_syncs(trainer: DeviceTrainer, exploration: float, steps: int = 8) -> float:
    """Synchronising CUDA operations per step over ``steps`` steady steps (``torch.cuda.set_sync_debug_mode``)."""
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(steps):
                trainer.step(exploration)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught) / steps


def count_ops(trainer: DeviceTrainer, exploration: float, steps: int) -> float:
    """Torch ops dispatched a step, views aside, over ``steps`` steady steps (one fit's worth): what the host launches
    one by one, the same count on any device."""
    from torch.utils._python_dispatch import TorchDispatchMode

    views = ("select", "view", "unsqueeze", "expand", "slice", "alias", "detach")

    class Ops(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if not any(v in str(func) for v in views):
                Ops.count += 1
            return func(*args, **(kwargs or {}))

    with Ops():
        for _ in range(steps):
            trainer.step(exploration)
    return Ops.count / steps


def gpu_busy(trainer: DeviceTrainer, exploration: float, steps: int = 8, table: str | None = None) -> float:
    """The fraction of ``steps`` steady steps' wall time during which the GPU ran kernels (torch profiler: the union
    of the CUDA kernels' intervals over the wall time of the profiled steps); with ``table``, the profiler's ops
    sorted by their GPU time and by their host time are written to that file (where a step's time goes)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            trainer.step(exploration)
        torch.cuda.synchronize()
        wall_us = (time.perf_counter() - t0) * 1e6
    spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA)
    busy, end = 0.0, float("-inf")
    for start, stop in spans:  # union of the kernels' intervals (streams may overlap)
        if stop > end:
            busy += stop - max(start, end)
            end = stop
    if table:
        averages = prof.key_averages()
        head = f"{steps} steps, {wall_us / steps / 1000:.1f} ms a step, GPU busy {busy / wall_us:.3f}\n\n"
        Path(table).write_text(head
                               + averages.table(sort_by="cuda_time_total", row_limit=40) + "\n\n"
                               + averages.table(sort_by="cpu_time_total", row_limit=25))
    return round(busy / wall_us, 3)


def compare_bearoff(config_path: str, steps: int = 400) -> dict:
    """Plies/s and games/s of self-play with and without the bear-off database, their steps interleaved."""
    cfg = build_config(config_path, {"device": "cpu"})
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    net = BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version))
    probs_fn = TorchEvaluator(net, torch.device("cpu"), cfg.kernel_threads, False)
    plays = {on: SelfPlay(cfg.batch_games, seed=cfg.seed, threads=cfg.kernel_threads, bearoff=on) for on in (True, False)}
    for play in plays.values():
        for _ in range(150):  # warm-up: games under way, kernels compiled
            play.step(probs_fn)
    spent, games = {True: 0.0, False: 0.0}, {True: 0, False: 0}
    for i in range(steps):
        for on in ((True, False) if i % 2 else (False, True)):
            t0 = time.perf_counter()
            games[on] += len(plays[on].step(probs_fn, cfg.exploration))
            spent[on] += time.perf_counter() - t0
    return {("on" if on else "off"): {"plies_per_s": steps * cfg.batch_games / spent[on],
                                      "games_per_s": games[on] / spent[on], "games": games[on]} for on in (True, False)}


def main() -> int:
    """Run the benchmark; a device this machine lacks (or any refused setting) is one sentence and exit status 2."""
    return run_command("bench/selfplay.py", bench)


def bench() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cpu, plus cuda when available)")
    ap.add_argument("--config", default=None)
    ap.add_argument("--batch", type=int, default=None, help="override batch_games")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compare-bearoff", action="store_true",
                    help="also time the CPU run with games played out past the bear-off database")
    ap.add_argument("--engine", choices=("host", "device"), default="host",
                    help="host: SelfPlay and fit (numba on the host); device: DeviceTrainer, all on the device")
    ap.add_argument("--history", type=int, default=None,
                    help="device engine: plies of trajectory kept per game (default: its ply limit, 600)")
    ap.add_argument("--profile-table", default=None, metavar="FILE",
                    help="device engine on CUDA: write the profiled steps' ops by GPU and host time to FILE")
    ap.add_argument("--matmul-precision", choices=("highest", "high", "medium"), default=None,
                    help="device engine: override the config's float32 matrix-product precision")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="device engine: each fit's TD sweep and minibatch loop replayed from CUDA graphs "
                         "(config cuda_graphs)")
    ap.add_argument("--compile-features", action="store_true",
                    help="device engine: the torch features compiled by torch.compile (fused kernels; the warm-up "
                         "includes the compilation)")
    ap.add_argument("--device-kernels", choices=DEVICE_KERNELS, default="torch",
                    help="device engine: fused = feature set 2 and the bear-off lookups each from one Triton kernel "
                         "(bgnet.core.device_kernels) instead of the torch ops")
    args = ap.parse_args()
    if args.device_kernels != "torch" and args.engine != "device":
        ap.error(f"--device-kernels {args.device_kernels} serves the device engine only: add --engine device")
    device = None if args.device is None else resolve_device(args.device)  # before any work: a missing GPU is one sentence
    if args.compile_features:
        compile_torch_features()
    runs = []

    def run(config: str, name: str) -> dict:
        if args.engine == "device":
            return {**measure_device(config, name, args.seconds, args.batch, args.history, args.profile_table,
                                     args.matmul_precision, args.cuda_graphs, args.device_kernels)}
        return measure(config, name, args.seconds, args.batch)

    if device is None or device.type == "cpu":
        runs.append(run(args.config or "configs/default.toml", "cpu"))

    if (device is not None and device.type == "cuda") or (device is None and torch.cuda.is_available()):
        runs.append(run(args.config or "configs/gpu.toml", args.device or "cuda"))
    compared = compare_bearoff(args.config or "configs/default.toml") if args.compare_bearoff else None
    if args.json:
        out = runs[0] if len(runs) == 1 else {**runs[0], "runs": runs}
        print(json.dumps(out if compared is None else {**out, "bearoff_database": compared}))
    else:
        for r in runs:
            engine = f", device engine (a fit every {r['fit_every']} steps)" if r.get("engine") == "device" else ""
            syncs = "" if r.get("syncs_per_step") is None else f", {r['syncs_per_step']:.1f} syncs per step"
            syncs += "" if r.get("ops_per_step") is None else f", {r['ops_per_step']:.0f} ops per step"
            rate = f"{r['games_per_s']:.1f}" if engine else f"{r['games_per_s']:.0f}"
            print(f"{r['device']}: {rate} games/s with learning ({r['plies_per_s']:.0f} plies/s), "
                  f"batch {r['batch']}, hidden {r['hidden']}, {r['seconds']} s{engine}{syncs}")
        if compared is not None:
            for key in ("off", "on"):
                c = compared[key]
                print(f"cpu, self-play only, bear-off database {key}: {c['plies_per_s']:.0f} plies/s, "
                      f"{c['games_per_s']:.0f} games/s (steps interleaved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
