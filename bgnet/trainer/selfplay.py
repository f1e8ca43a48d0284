"""The self-play trainer: ``train`` starts a run and hands it to its engine's loop; the host engine's loop is here.

    python -m train --config configs/quick.toml [--key=value ...] [--device cpu|cuda]
                    [--out DIR] [--resume PATH] [--engine=device]

(the command line is ``bgnet.cli.train``). What both engines share (folder, seeding, starting
net, writer, Ctrl-C, checkpoint names, the pubeval evaluation) is in
``bgnet.trainer.training_run``; engine "device" runs ``bgnet.trainer.device_run``. On the
host, everything a checkpoint saves and a resume restores lives in one ``RunState`` (net,
optimizer, self-play games, counters, random streams, unused samples). A run writes to
``runs/<run_name>__<seed>__<time>/`` unless ``out`` says where (a resume continues in the
folder of its checkpoint).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bgnet.nets.model import BgNet, placement, save_checkpoint
from bgnet.sim.selfplay import SelfPlay, Trajectory
from bgnet.trainer.config import TrainConfig
from bgnet.trainer.distributed import make_selfplay
from bgnet.trainer.inference import TorchEvaluator
from bgnet.trainer.learner import cosine_lr, fit
from bgnet.trainer.td import lambda_returns
from bgnet.trainer.training_run import (LAST, Every, RunStart, TrainOptions, checkpoint_name, end_message, finish,
                                        eval_vs_pubeval, games_per_second, open_writer, progress_bar, resolve_device,
                                        run_folder, show_progress, start_run, stop_on_sigint, use_torch_encoder,
                                        write_checkpoint)

__all__ = ["RunState", "TrainOptions", "gammon_chance", "resolve_device", "restore_rng_states", "rng_states",
           "run_folder", "train", "trajectories_to_samples", "use_torch_encoder"]


def trajectories_to_samples(done: list[Trajectory], lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(boards, targets) pairs from finished games (a game stopped at the bear-off database ends on its exact chances)."""
    boards = [t.boards for t in done]
    targets = [lambda_returns(t.values, t.outcome(), lam) for t in done]
    return np.concatenate(boards), np.concatenate(targets)


def gammon_chance(t: Trajectory) -> float:
    """1 for a game won by a gammon or more, 0 for a single game; a game stopped at the bear-off database: its exact chance."""
    o = t.outcome()
    return float(o[1] + o[3])


def rng_states(learn_rng: np.random.Generator, cuda: bool = False) -> dict[str, Any]:
    """The torch CPU and learner random states, checkpoint-ready, and with ``cuda`` (a run on a GPU) every CUDA
    device's, so that a resumed GPU run draws the same numbers."""
    from bgnet.sim.selfplay import _encode_rng

    states: dict[str, Any] = {"torch": torch.get_rng_state(), "learn": _encode_rng(learn_rng)}
    if cuda:
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(states: dict[str, Any]) -> np.random.Generator:
    """Set torch's random states from ``rng_states`` output and return the learner's generator.

    CUDA states are restored on the devices this machine has (a checkpoint written without them, or on a
    CPU, leaves CUDA's streams as seeded)."""
    from bgnet.sim.selfplay import _decode_rng

    torch.set_rng_state(states["torch"])
    cuda = states.get("cuda")
    if cuda is not None and torch.cuda.is_available():
        for index, state in enumerate(list(cuda)[: torch.cuda.device_count()]):
            torch.cuda.set_rng_state(state, index)
    return _decode_rng(states["learn"])


@dataclass
class RunState:
    """Everything a checkpoint holds and a resume restores: the net and its optimizer, the self-play games,
    the games counter, the learner's random stream and the samples gathered since the last fit."""

    cfg: TrainConfig
    net: BgNet
    optimizer: torch.optim.Optimizer
    play: Any
    """``SelfPlay`` (or its Ray counterpart from ``bgnet.trainer.distributed``)."""
    learn_rng: np.random.Generator
    games: int = 0
    buf_boards: list[np.ndarray] = field(default_factory=list)
    buf_targets: list[np.ndarray] = field(default_factory=list)

    def samples(self) -> int:
        """Positions gathered since the last fit."""
        return sum(len(x) for x in self.buf_boards)

    def take_samples(self) -> tuple[np.ndarray, np.ndarray]:
        """The gathered (boards, targets), emptying the buffer."""
        b, t = np.concatenate(self.buf_boards), np.concatenate(self.buf_targets)
        self.buf_boards, self.buf_targets = [], []
        return b, t

    def save(self, path: Path) -> Path:
        """Write the checkpoint to ``path`` (atomically, see ``bgnet.nets.model.save_checkpoint``)."""
        bb = np.concatenate(self.buf_boards) if self.buf_boards else np.zeros((0, 26), np.int8)
        bt = np.concatenate(self.buf_targets) if self.buf_targets else np.zeros((0, 5), np.float32)
        on_gpu = placement(self.net)[0].type == "cuda"
        save_checkpoint(path, self.net, optimizer=self.optimizer.state_dict(), config=asdict(self.cfg),
                        games=self.games, selfplay=self.play.state_dict(), rng_state=rng_states(self.learn_rng, on_gpu),
                        buffer_boards=bb, buffer_targets=bt)
        return path

    def restore(self, ckpt: dict[str, Any]) -> None:
        """Continue exactly from a checkpoint written by ``save`` (the net's weights are already loaded)."""
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.games = int(ckpt["games"])
        self.play.load_state_dict(ckpt["selfplay"])
        self.learn_rng = restore_rng_states(ckpt["rng_state"])
        if len(ckpt["buffer_boards"]):
            self.buf_boards = [np.asarray(ckpt["buffer_boards"], np.int8)]
            self.buf_targets = [np.asarray(ckpt["buffer_targets"], np.float32)]


def train(args: TrainOptions) -> int:
    """Run (or resume) a self-play training run on its config's engine; prints how it ended and returns 0."""
    start = start_run(args)
    if start.cfg.engine == "device":
        from bgnet.trainer.device_run import train_on_device  # here: a host run loads no device engine

        return train_on_device(start)
    return train_on_host(start)


@dataclass
class Window:
    """The games finished since the last log: their lengths, results and gammon chances."""

    lengths: list[int] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    gammons: list[float] = field(default_factory=list)

    def add(self, done: list[Trajectory]) -> None:
        self.lengths.extend(len(t.boards) + 1 for t in done)
        self.kinds.extend(t.result for t in done)
        self.gammons.extend(gammon_chance(t) for t in done)

    def log(self, writer: Any, games: int) -> None:
        """Write the window's game length, gammon and backgammon rates at ``games``."""
        writer.add_scalar("charts/mean_game_length", float(np.mean(self.lengths)), games)
        writer.add_scalar("charts/gammon_rate", float(np.mean(self.gammons)), games)
        writer.add_scalar("charts/backgammon_rate", float((np.array(self.kinds) >= 3).mean()), games)


def fit_gathered(state: RunState, games: int, device: torch.device, on_device: bool, writer: Any) -> float:
    """Fit the net on the gathered samples at the cosine rate of ``games`` (logged with the loss); returns the
    loss."""
    cfg = state.cfg
    lr = cosine_lr(cfg.lr, cfg.lr_final, games / cfg.games)
    for group in state.optimizer.param_groups:
        group["lr"] = lr
    boards, targets = state.take_samples()
    loss = fit(state.net, state.optimizer, boards, targets, cfg.minibatch, cfg.epochs, state.learn_rng, device,
               on_device)
    writer.add_scalar("losses/td_sse", loss, games)
    writer.add_scalar("charts/learning_rate", lr, games)
    return loss


def train_on_host(start: RunStart) -> int:
    """The host engine's loop (``SelfPlay`` or its Ray actors, numba kernels, ``fit``) from a started run."""
    cfg, args, net, device, out_dir = start.cfg, start.options, start.net, start.device, start.out_dir
    learn_rng = np.random.default_rng(cfg.seed + 1)
    play = make_selfplay(cfg, net)  # SelfPlay here, or Ray actors with backend ray (bgnet.trainer.distributed)
    if isinstance(play, SelfPlay):
        play.bearoff = cfg.bearoff_database
    state = RunState(cfg, net, torch.optim.Adam(net.parameters(), lr=cfg.lr), play, learn_rng)
    if start.resumed is not None:
        state.restore(start.resumed)
    games = state.games
    on_device = use_torch_encoder(cfg.encoder, device, net.config.feature_version)
    evaluator = TorchEvaluator(net, device, cfg.kernel_threads, on_device)

    def checkpoint(name: str) -> Path:
        state.games = games
        return write_checkpoint(out_dir, name, state.save)

    writer = open_writer(out_dir, cfg)
    bar = progress_bar(args, cfg, games)
    t0 = time.perf_counter()
    games_at_t0 = games
    logs = Every.after(games, cfg.log_every)
    ckpts = Every.after(games, cfg.checkpoint_every)
    evals = Every.after(games, cfg.eval_every)
    window = Window()
    last_loss = float("nan")
    last_ppg = None
    with stop_on_sigint() as stop:
        while games < cfg.games and not stop.requested:
            done = play.step(evaluator, cfg.exploration)
            if not done:
                continue
            done = done[: cfg.games - games]
            games += len(done)
            window.add(done)
            b, t = trajectories_to_samples(done, cfg.lam)
            state.buf_boards.append(b)
            state.buf_targets.append(t)
            if state.samples() >= cfg.train_batch:
                last_loss = fit_gathered(state, games, device, on_device, writer)
            if bar is not None:
                bar.update(len(done))
            if logs.due(games):
                gps = games_per_second(games, games_at_t0, t0)
                writer.add_scalar("charts/games_per_s", gps, games)
                window.log(writer, games)
                show_progress(bar, gps, last_loss, last_ppg)
                window = Window()
            if evals.due(games):
                last_ppg = eval_vs_pubeval(evaluator, cfg, writer, games, bar)
            if ckpts.due(games):
                checkpoint(checkpoint_name(games))
            if args.stop_after and games >= args.stop_after:
                break
        final = checkpoint(LAST)
        play.close()
    finish(writer, bar)
    print(end_message(stop, cfg, games, games_per_second(games, games_at_t0, t0), final))
    return 0
