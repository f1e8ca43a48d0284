"""The device engine's training run (config ``engine = "device"``): ``DeviceTrainer`` plays, makes TD(lambda)
targets and fits on one torch device, driven to ``games`` finished games with the host loop's schedule.

The loop goes one fit at a time (``fit_every`` steps, the last of which fits) and reads one number from the
device between two fits: the count of finished games, which sets the next fit's learning rate (the cosine
decay, at the count before its games) and says when to log, evaluate, checkpoint and stop. The loss is read
only at log time. So a run may end a little past ``games``: the games of its last interval all count and train.
A checkpoint holds the net, ``DeviceTrainer.state_dict()`` (the games in play, their ring of plies, the
optimizer, both device random generators, the step learnt to), the config and the games count; a resume from
it plays and learns the same next steps as the run that wrote it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from bgnet.nets.model import BgNet, save_checkpoint
from bgnet.sim.device_selfplay import DeviceSelfPlay
from bgnet.trainer.config import TrainConfig
from bgnet.trainer.device_selfplay import DeviceLearning, DeviceTrainer
from bgnet.trainer.inference import TorchEvaluator
from bgnet.trainer.learner import cosine_lr
from bgnet.trainer.training_run import (ENGINE_STATE, LAST, Every, RunStart, checkpoint_name, end_message,
                                        eval_vs_pubeval, finish, games_per_second, open_writer, progress_bar,
                                        show_progress, stop_on_sigint, use_torch_encoder, write_checkpoint)

__all__ = ["device_learning", "device_trainer", "save_device_run", "train_on_device"]

STATE_KEY = ENGINE_STATE["device"]
"""The checkpoint key of ``DeviceTrainer.state_dict()``."""


def device_learning(cfg: TrainConfig) -> DeviceLearning:
    """The config's learning settings for ``DeviceTrainer``: a fit every ``train_batch / batch_games`` steps (about
    ``train_batch`` positions), ``epochs`` passes over them in minibatches of ``minibatch``."""
    return DeviceLearning(lam=cfg.lam, lr=cfg.lr, minibatch=cfg.minibatch, epochs=cfg.epochs,
                          fit_every=math.ceil(cfg.train_batch / cfg.batch_games), cuda_graphs=cfg.cuda_graphs)


def device_trainer(cfg: TrainConfig, net: BgNet, device: torch.device) -> DeviceTrainer:
    """``net`` learning from ``batch_games`` games on ``device`` (dice seeded by ``seed``, the fits' shuffles by
    ``seed + 1``)."""
    play = DeviceSelfPlay(cfg.batch_games, seed=cfg.seed, device=device, max_plies=cfg.max_plies,
                          bearoff=cfg.bearoff_database, kernels=cfg.device_kernels)
    return DeviceTrainer(net, play, device_learning(cfg), seed=cfg.seed + 1)


def finished_games(trainer: DeviceTrainer) -> int:
    """Games finished with positions to learn from (one read from the device)."""
    return int(trainer.play.finished)


def play_one_fit(trainer: DeviceTrainer, lr: float, exploration: float) -> None:
    """Steps up to and including the next fit, which learns at rate ``lr``."""
    for group in trainer.optimizer.param_groups:
        group["lr"] = lr
    for _ in range(max(1, trainer.learning.fit_every - (trainer.play.steps - trainer.learned_to))):
        trainer.step(exploration)


def save_device_run(path: Path, cfg: TrainConfig, trainer: DeviceTrainer, games: int) -> None:
    """The run's checkpoint: the net, the trainer's state, the config and the games count (see the module)."""
    save_checkpoint(path, trainer.net, config=asdict(cfg), games=games, **{STATE_KEY: trainer.state_dict()})


def log_scalars(writer: Any, games: int, games_per_s: float, loss: float, lr: float) -> None:
    """TensorBoard's scalars of the device engine at ``games``."""
    writer.add_scalar("charts/games_per_s", games_per_s, games)
    writer.add_scalar("losses/td_sse", loss, games)
    writer.add_scalar("charts/learning_rate", lr, games)


def train_on_device(start: RunStart) -> int:
    """The device engine's loop from a started run (``bgnet.trainer.selfplay.train`` with engine "device")."""
    cfg, args, device, out_dir = start.cfg, start.options, start.device, start.out_dir
    trainer = device_trainer(cfg, start.net, device)
    if start.resumed is not None:
        trainer.load_state_dict(start.resumed[STATE_KEY])
    games = games_at_t0 = finished_games(trainer)
    writer = open_writer(out_dir, cfg)
    bar = progress_bar(args, cfg, games)
    logs = Every.after(games, cfg.log_every)
    ckpts = Every.after(games, cfg.checkpoint_every)
    evals = Every.after(games, cfg.eval_every)
    on_device = use_torch_encoder(cfg.encoder, device, cfg.feature_version)
    last_ppg = None
    t0 = time.perf_counter()

    def checkpoint(name: str) -> Path:
        return write_checkpoint(out_dir, name, lambda path: save_device_run(path, cfg, trainer, games))

    with stop_on_sigint() as stop:
        while games < cfg.games and not stop.requested:
            lr = cosine_lr(cfg.lr, cfg.lr_final, games / cfg.games)
            play_one_fit(trainer, lr, cfg.exploration)
            before, games = games, finished_games(trainer)
            if bar is not None:
                bar.update(games - before)
            if logs.due(games):
                gps = games_per_second(games, games_at_t0, t0)
                loss = float(trainer.loss)
                log_scalars(writer, games, gps, loss, lr)
                show_progress(bar, gps, loss, last_ppg)
            if evals.due(games):  # a fresh evaluator: it may cache a copy of the weights
                evaluator = TorchEvaluator(trainer.net, device, cfg.kernel_threads, on_device)
                last_ppg = eval_vs_pubeval(evaluator, cfg, writer, games, bar)
            if ckpts.due(games):
                checkpoint(checkpoint_name(games))
            if args.stop_after and games >= args.stop_after:
                break
        final = checkpoint(LAST)
    finish(writer, bar)
    print(end_message(stop, cfg, games, games_per_second(games, games_at_t0, t0), final))
    return 0
