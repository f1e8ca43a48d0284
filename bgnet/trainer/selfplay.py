"""The self-play trainer, top to bottom: config, seeding, model, loop, logging, checkpoint.

    python -m train --config configs/quick.toml [--key=value ...] [--device cpu|cuda]
                    [--out DIR] [--resume PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bgnet.duel import NeuralScorer, PubevalScorer, paired_duel
from bgnet.encoding import encode
from bgnet.encoding_torch import encode_torch
from bgnet.learner import cosine_lr, fit
from bgnet.model import BgNet, CheckpointError, ModelConfig, net_from_checkpoint, read_checkpoint, save_checkpoint
from bgnet.selfplay import SelfPlay, Trajectory
from bgnet.td import lambda_returns, result_probs
from bgnet.trainer.config import ConfigError, TrainConfig, build_config

EVAL_SEED = 20261129


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, dict[str, Any]]:
    """Known flags plus ``--key=value`` overrides of TrainConfig fields."""
    parser = argparse.ArgumentParser(prog="python -m train", description="Train a bgnet evaluator by TD(lambda) self-play.")
    parser.add_argument("--config", help="TOML config file (configs/quick.toml, default.toml, gpu.toml)")
    parser.add_argument("--device", help="cpu or cuda (overrides the config)")
    parser.add_argument("--out", help="output folder (default runs/<run_name>/)")
    parser.add_argument("--resume", help="checkpoint to continue from (same run, exactly)")
    parser.add_argument("--init", help="checkpoint whose weights start a new run")
    parser.add_argument("--stop-after", type=int, default=0, help=argparse.SUPPRESS)  # simulate an interruption
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args, rest = parser.parse_known_args(argv)
    overrides: dict[str, Any] = {}
    for item in rest:
        if not item.startswith("--") or "=" not in item:
            raise ConfigError(f"unexpected argument {item!r}; overrides are written --key=value")
        key, value = item[2:].split("=", 1)
        overrides[key.replace("-", "_")] = value
    if args.device:
        overrides["device"] = args.device
    return args, overrides


def use_torch_encoder(encoder: str, device: torch.device) -> bool:
    """Whether features are computed on the device (``encoder`` "torch", or "auto" off the CPU)."""
    return encoder == "torch" or (encoder == "auto" and device.type != "cpu")


def make_probs_fn(net: BgNet, device: torch.device, threads: int = 1, on_device: bool = False):
    """Boards -> probabilities with one forward pass (no gradients); features on the device when ``on_device``."""

    @torch.inference_mode()
    def probs_fn(boards: np.ndarray) -> np.ndarray:
        if on_device:
            x = encode_torch(torch.from_numpy(np.ascontiguousarray(boards, np.int8)).to(device, non_blocking=True))
        else:
            x = torch.from_numpy(encode(boards, threads)).to(device, non_blocking=True)
        return net(x).float().cpu().numpy()

    return probs_fn


def trajectories_to_samples(done: list[Trajectory], lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(boards, targets) pairs from finished games."""
    boards = [t.boards for t in done]
    targets = [lambda_returns(t.values, result_probs(t.result), lam) for t in done]
    return np.concatenate(boards), np.concatenate(targets)


def rng_states(learn_rng: np.random.Generator) -> dict[str, Any]:
    from bgnet.selfplay import _encode_rng

    return {"torch": torch.get_rng_state(), "learn": _encode_rng(learn_rng)}


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except (ConfigError, CheckpointError) as exc:
        print(f"train: error: {exc}", file=sys.stderr)
        return 2


def run(argv: list[str] | None) -> int:
    # -- config -----------------------------------------------------------------
    args, overrides = parse_args(argv)
    resume_ckpt = read_checkpoint(args.resume) if args.resume else None
    if resume_ckpt is not None:
        if "config" not in resume_ckpt or "selfplay" not in resume_ckpt:
            raise CheckpointError(f"checkpoint {args.resume!r} has no training state to resume (is it a released model?)")
        base = {**resume_ckpt["config"], **overrides}
        cfg = build_config(None, base)
    else:
        cfg = build_config(args.config, overrides)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device cuda was asked for but torch sees no CUDA GPU")
    device = torch.device(cfg.device)
    out_dir = Path(args.out) if args.out else Path("runs") / cfg.run_name
    out_dir.mkdir(parents=True, exist_ok=True)

    # -- seeding ------------------------------------------------------------------
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    learn_rng = np.random.default_rng(cfg.seed + 1)
    play = SelfPlay(cfg.batch_games, seed=cfg.seed, max_plies=cfg.max_plies, threads=cfg.kernel_threads)

    # -- model --------------------------------------------------------------------
    if resume_ckpt is not None:
        net = net_from_checkpoint(resume_ckpt, f"checkpoint {args.resume!r}")
    elif args.init:
        net = net_from_checkpoint(read_checkpoint(args.init), f"checkpoint {args.init!r}")
        if list(net.config.hidden) != list(cfg.hidden) or net.config.activation != cfg.activation:
            raise ConfigError(f"--init checkpoint has hidden={list(net.config.hidden)} activation={net.config.activation}; the config says hidden={cfg.hidden} activation={cfg.activation}")
    else:
        net = BgNet(ModelConfig(hidden=tuple(cfg.hidden), activation=cfg.activation))
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    games = 0
    buf_boards: list[np.ndarray] = []
    buf_targets: list[np.ndarray] = []
    if resume_ckpt is not None:
        optimizer.load_state_dict(resume_ckpt["optimizer"])
        games = int(resume_ckpt["games"])
        play.load_state_dict(resume_ckpt["selfplay"])
        torch.set_rng_state(resume_ckpt["rng_state"]["torch"])
        from bgnet.selfplay import _decode_rng

        learn_rng = _decode_rng(resume_ckpt["rng_state"]["learn"])
        if len(resume_ckpt["buffer_boards"]):
            buf_boards = [np.asarray(resume_ckpt["buffer_boards"], np.int8)]
            buf_targets = [np.asarray(resume_ckpt["buffer_targets"], np.float32)]
    on_device = use_torch_encoder(cfg.encoder, device)
    probs_fn = make_probs_fn(net, device, cfg.kernel_threads, on_device)

    def checkpoint(name: str) -> Path:
        bb = np.concatenate(buf_boards) if buf_boards else np.zeros((0, 26), np.int8)
        bt = np.concatenate(buf_targets) if buf_targets else np.zeros((0, 5), np.float32)
        path = out_dir / name
        save_checkpoint(path, net, optimizer=optimizer.state_dict(), config=asdict(cfg), games=games,
                        selfplay=play.state_dict(), rng_state=rng_states(learn_rng),
                        buffer_boards=bb, buffer_targets=bt)
        if name != "last.pt":  # the same bytes, copied and renamed into place (still atomic)
            tmp = out_dir / "last.pt.copy.tmp"
            shutil.copyfile(path, tmp)
            os.replace(tmp, out_dir / "last.pt")
        return path

    # -- logging ------------------------------------------------------------------
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(out_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(cfg).items()))
    stop = {"flag": False}

    def on_sigint(signum: int, frame: Any) -> None:
        stop["flag"] = True

    previous_handler = signal.signal(signal.SIGINT, on_sigint)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.games, initial=games, unit="game", dynamic_ncols=True)

    # -- loop ---------------------------------------------------------------------
    t0 = time.perf_counter()
    games_at_t0 = games
    next_log = (games // cfg.log_every + 1) * cfg.log_every
    next_ckpt = (games // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    next_eval = (games // cfg.eval_every + 1) * cfg.eval_every if cfg.eval_every else None
    window_len: list[int] = []
    window_kind: list[int] = []
    last_loss = float("nan")
    last_ppg = None
    stop_after = args.stop_after
    while games < cfg.games and not stop["flag"]:
        done = play.step(probs_fn, cfg.exploration)
        if not done:
            continue
        done = done[: cfg.games - games]
        games += len(done)
        window_len.extend(len(t.boards) + 1 for t in done)
        window_kind.extend(t.result for t in done)
        b, t = trajectories_to_samples(done, cfg.lam)
        buf_boards.append(b)
        buf_targets.append(t)
        if sum(len(x) for x in buf_boards) >= cfg.train_batch:
            lr = cosine_lr(cfg.lr, cfg.lr_final, games / cfg.games)
            for group in optimizer.param_groups:
                group["lr"] = lr
            last_loss = fit(net, optimizer, np.concatenate(buf_boards), np.concatenate(buf_targets),
                            cfg.minibatch, cfg.epochs, learn_rng, device, on_device)
            buf_boards, buf_targets = [], []
            writer.add_scalar("losses/td_mse", last_loss, games)
            writer.add_scalar("charts/learning_rate", lr, games)
        if bar is not None:
            bar.update(len(done))
        if games >= next_log:
            elapsed = time.perf_counter() - t0
            gps = (games - games_at_t0) / max(elapsed, 1e-9)
            kinds = np.array(window_kind)
            writer.add_scalar("charts/games_per_s", gps, games)
            writer.add_scalar("charts/mean_game_length", float(np.mean(window_len)), games)
            writer.add_scalar("charts/gammon_rate", float((kinds >= 2).mean()), games)
            writer.add_scalar("charts/backgammon_rate", float((kinds >= 3).mean()), games)
            if bar is not None:
                bar.set_postfix(gps=f"{gps:.0f}", loss=f"{last_loss:.4f}", ppg=("-" if last_ppg is None else f"{last_ppg:+.3f}"))
            window_len, window_kind = [], []
            next_log += cfg.log_every
        if next_eval is not None and games >= next_eval:
            res = paired_duel(NeuralScorer(probs_fn), PubevalScorer(), cfg.eval_pairs, EVAL_SEED)
            last_ppg = res.ppg
            writer.add_scalar("eval/ppg_vs_pubeval", res.ppg, games)
            writer.add_scalar("eval/ppg_vs_pubeval_ci95", res.ci95, games)
            writer.add_scalar("eval/win_rate_vs_pubeval", res.win_rate, games)
            if bar is not None:
                bar.write(f"games {games}: vs pubeval {res.ppg:+.3f} ppg +- {res.ci95:.3f} (95%), win rate {res.win_rate:.3f}")
            next_eval += cfg.eval_every
        if games >= next_ckpt:
            checkpoint(f"games_{games:09d}.pt")
            next_ckpt += cfg.checkpoint_every
        if stop_after and games >= stop_after:
            break

    # -- checkpoint ---------------------------------------------------------------
    final = checkpoint("last.pt")
    signal.signal(signal.SIGINT, previous_handler)
    if bar is not None:
        bar.close()
    writer.flush()
    writer.close()
    elapsed = time.perf_counter() - t0
    reason = "interrupted" if stop["flag"] else "stopped" if games < cfg.games else "finished"
    print(f"{reason} at {games} games ({(games - games_at_t0) / max(elapsed, 1e-9):.0f} games/s); checkpoint {final}")
    return 0
