"""Self-play games per second with learning, on the default config's net (and the GPU config's on CUDA).

    python bench/selfplay.py [--seconds 60] [--json] [--device cpu|cuda] [--config configs/default.toml]
                             [--compare-bearoff]

Plays from the opening with an untrained net until games start finishing (warm-up,
compiles kernels), then counts finished games over the timed window while the
learner trains on every ``train_batch`` positions, as ``python -m train`` does.
``--compare-bearoff`` also plays two self-play batches step by step in turn (no learning),
one stopping at the bear-off database (the default) and one playing games out, and
reports both speeds: interleaving keeps the machine's load from favouring either.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bgnet.cli.parser import run_command  # noqa: E402
from bgnet.trainer.learner import fit  # noqa: E402
from bgnet.nets.model import BgNet, ModelConfig  # noqa: E402
from bgnet.sim.selfplay import SelfPlay  # noqa: E402
from bgnet.trainer.config import build_config  # noqa: E402
from bgnet.trainer.inference import TorchEvaluator  # noqa: E402
from bgnet.trainer.selfplay import resolve_device, trajectories_to_samples, use_torch_encoder  # noqa: E402


def measure(config_path: str, device: str, seconds: float, batch: int | None, bearoff: bool = True) -> dict:
    overrides = {"device": device}
    if batch:
        overrides["batch_games"] = batch
    cfg = build_config(config_path, overrides)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    dev = resolve_device(cfg.device)
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
    args = ap.parse_args()
    device = None if args.device is None else resolve_device(args.device)  # before any work: a missing GPU is one sentence
    runs = []
    if device is None or device.type == "cpu":
        runs.append(measure(args.config or "configs/default.toml", "cpu", args.seconds, args.batch))

    if (device is not None and device.type == "cuda") or (device is None and torch.cuda.is_available()):
        runs.append(measure(args.config or "configs/gpu.toml", args.device or "cuda", args.seconds, args.batch))
    compared = compare_bearoff(args.config or "configs/default.toml") if args.compare_bearoff else None
    if args.json:
        out = runs[0] if len(runs) == 1 else {**runs[0], "runs": runs}
        print(json.dumps(out if compared is None else {**out, "bearoff_database": compared}))
    else:
        for r in runs:
            print(f"{r['device']}: {r['games_per_s']:.0f} games/s with learning ({r['plies_per_s']:.0f} plies/s), "
                  f"batch {r['batch']}, hidden {r['hidden']}, {r['seconds']} s")
        if compared is not None:
            for key in ("off", "on"):
                c = compared[key]
                print(f"cpu, self-play only, bear-off database {key}: {c['plies_per_s']:.0f} plies/s, "
                      f"{c['games_per_s']:.0f} games/s (steps interleaved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
