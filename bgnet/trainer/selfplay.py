"""The self-play trainer, top to bottom: config, seeding, model, loop, logging, checkpoint.

    python -m train --config configs/quick.toml [--key=value ...] [--device cpu|cuda]
                    [--out DIR] [--resume PATH]

(the command line is ``bgnet.cli.train``). Everything a checkpoint saves and a resume
restores lives in one ``RunState`` (net, optimizer, self-play games, counters, random
streams, unused samples). A run writes to ``runs/<run_name>__<seed>__<time>/`` unless
``out`` says where (a resume continues in the folder of its checkpoint).
"""

from __future__ import annotations

import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bgnet.core.atomic import atomic_path, default_permissions
from bgnet.features.registry import FEATURE_SETS
from bgnet.sim.duel import NeuralScorer, PubevalScorer, paired_duel
from bgnet.trainer.learner import cosine_lr, fit
from bgnet.nets.model import (BgNet, CheckpointError, ModelConfig, net_from_checkpoint, placement, read_checkpoint,
                              save_checkpoint)
from bgnet.sim.selfplay import SelfPlay, Trajectory
from bgnet.trainer.td import lambda_returns
from bgnet.trainer.config import ConfigError, TrainConfig, build_config
from bgnet.trainer.inference import TorchEvaluator
from bgnet.trainer.distributed import make_selfplay

EVAL_SEED = 20261129


@dataclass
class TrainOptions:
    """What a training run is asked besides its config's settings: where they come from and where it writes."""

    config: str | None = None
    """TOML config file (``bgnet.trainer.config.build_config``); None: the defaults."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Settings that override the config's (or a resumed run's), as ``--key=value`` gives them."""
    out: str | None = None
    """Output folder (default ``run_folder``'s)."""
    resume: str | None = None
    """Checkpoint of a run to continue exactly."""
    init: str | None = None
    """Checkpoint whose weights start a new run."""
    stop_after: int = 0
    """Stop once this many games are played (0: never; simulates an interruption)."""
    progress: bool = True
    """Show a tqdm bar."""


def run_folder(cfg: TrainConfig, out: str | None, resume: str | None, now: float | None = None) -> Path:
    """Where a run writes: ``--out``; else a resumed checkpoint's folder; else ``runs/<run_name>__<seed>__<time>``."""
    if out:
        return Path(out)
    if resume:
        return Path(resume).resolve().parent
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    return Path("runs") / f"{cfg.run_name}__{cfg.seed}__{stamp}"


def resolve_device(name: str) -> torch.device:
    """The torch device ``name`` ("cpu", "cuda" or "cuda:N"); a ConfigError (one sentence) when this machine
    lacks it, before any work starts."""
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"device {name!r} is not cpu or cuda") from None
    if device.type not in ("cpu", "cuda"):
        raise ConfigError(f"device {name!r} is not cpu or cuda")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ConfigError(f"device {name} was asked for but torch sees no CUDA GPU")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise ConfigError(f"device {name} was asked for but torch sees {count} CUDA GPU{'s' if count != 1 else ''}")
    return device


def use_torch_encoder(encoder: str, device: torch.device, feature_version: int = 1) -> bool:
    """Whether features are computed on the device (``encoder`` "torch", or "auto" off the CPU; sets with a torch
    encoder only)."""
    features = FEATURE_SETS.get(feature_version)
    return features is not None and features.has_torch_encoder and (
        encoder == "torch" or (encoder == "auto" and device.type != "cpu"))


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
    """Run (or resume) a self-play training run; prints how it ended and returns 0."""
    # -- config -----------------------------------------------------------------
    overrides = args.overrides
    resume_ckpt = read_checkpoint(args.resume) if args.resume else None
    if resume_ckpt is not None:
        if "config" not in resume_ckpt or "selfplay" not in resume_ckpt:
            raise CheckpointError(f"checkpoint {args.resume!r} has no training state to resume (is it a released model?)")
        base = {**resume_ckpt["config"], **overrides}
        cfg = build_config(None, base)
    else:
        cfg = build_config(args.config, overrides)
    device = resolve_device(cfg.device)
    out_dir = run_folder(cfg, args.out, args.resume)
    out_dir.mkdir(parents=True, exist_ok=True)

    # -- seeding ------------------------------------------------------------------
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    learn_rng = np.random.default_rng(cfg.seed + 1)

    # -- model --------------------------------------------------------------------
    if resume_ckpt is not None:
        net = net_from_checkpoint(resume_ckpt, f"checkpoint {args.resume!r}")
    elif args.init:
        net = net_from_checkpoint(read_checkpoint(args.init), f"checkpoint {args.init!r}")
        have = (list(net.config.hidden), net.config.activation, net.config.feature_version)
        if have != (list(cfg.hidden), cfg.activation, cfg.feature_version):
            raise ConfigError(f"--init checkpoint has hidden={have[0]} activation={have[1]} feature_version={have[2]}; "
                              f"the config says hidden={cfg.hidden} activation={cfg.activation} "
                              f"feature_version={cfg.feature_version}")
    else:
        net = BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version))
    net.to(device)
    play = make_selfplay(cfg, net)  # SelfPlay here, or Ray actors with backend ray (bgnet.trainer.distributed)
    if isinstance(play, SelfPlay):
        play.bearoff = cfg.bearoff_database
    state = RunState(cfg, net, torch.optim.Adam(net.parameters(), lr=cfg.lr), play, learn_rng)
    if resume_ckpt is not None:
        state.restore(resume_ckpt)
    games = state.games
    on_device = use_torch_encoder(cfg.encoder, device, net.config.feature_version)
    evaluator = TorchEvaluator(net, device, cfg.kernel_threads, on_device)

    def checkpoint(name: str) -> Path:
        state.games = games
        path = state.save(out_dir / name)
        if name != "last.pt":  # the same bytes, copied and renamed into place (still atomic)
            with atomic_path(out_dir / "last.pt", permissions=default_permissions()) as tmp:
                shutil.copyfile(path, tmp)
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
    if args.progress:
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
    window_gammon: list[float] = []
    last_loss = float("nan")
    last_ppg = None
    stop_after = args.stop_after
    while games < cfg.games and not stop["flag"]:
        done = play.step(evaluator, cfg.exploration)
        if not done:
            continue
        done = done[: cfg.games - games]
        games += len(done)
        window_len.extend(len(t.boards) + 1 for t in done)
        window_kind.extend(t.result for t in done)
        window_gammon.extend(gammon_chance(t) for t in done)
        b, t = trajectories_to_samples(done, cfg.lam)
        state.buf_boards.append(b)
        state.buf_targets.append(t)
        if state.samples() >= cfg.train_batch:
            lr = cosine_lr(cfg.lr, cfg.lr_final, games / cfg.games)
            for group in state.optimizer.param_groups:
                group["lr"] = lr
            boards, targets = state.take_samples()
            last_loss = fit(net, state.optimizer, boards, targets, cfg.minibatch, cfg.epochs, state.learn_rng,
                            device, on_device)
            writer.add_scalar("losses/td_sse", last_loss, games)
            writer.add_scalar("charts/learning_rate", lr, games)
        if bar is not None:
            bar.update(len(done))
        if games >= next_log:
            elapsed = time.perf_counter() - t0
            gps = (games - games_at_t0) / max(elapsed, 1e-9)
            kinds = np.array(window_kind)
            writer.add_scalar("charts/games_per_s", gps, games)
            writer.add_scalar("charts/mean_game_length", float(np.mean(window_len)), games)
            writer.add_scalar("charts/gammon_rate", float(np.mean(window_gammon)), games)
            writer.add_scalar("charts/backgammon_rate", float((kinds >= 3).mean()), games)
            if bar is not None:
                bar.set_postfix(gps=f"{gps:.0f}", loss=f"{last_loss:.4f}", ppg=("-" if last_ppg is None else f"{last_ppg:+.3f}"))
            window_len, window_kind, window_gammon = [], [], []
            next_log += cfg.log_every
        if next_eval is not None and games >= next_eval:
            res = paired_duel(NeuralScorer(evaluator), PubevalScorer(), cfg.eval_pairs, EVAL_SEED)
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
    play.close()
    signal.signal(signal.SIGINT, previous_handler)
    if bar is not None:
        bar.close()
    writer.flush()
    writer.close()
    elapsed = time.perf_counter() - t0
    reason = "interrupted" if stop["flag"] else "stopped" if games < cfg.games else "finished"
    print(f"{reason} at {games} games ({(games - games_at_t0) / max(elapsed, 1e-9):.0f} games/s); checkpoint {final}")
    return 0
