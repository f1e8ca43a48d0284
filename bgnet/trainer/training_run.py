"""What every self-play training run shares, whichever engine plays (``bgnet.trainer.selfplay`` on the host,
``bgnet.trainer.device_run`` on the device): its options, folder, device, seeding and starting net, the
TensorBoard writer, Ctrl-C, the progress bar, when it logs, checkpoints and evaluates, checkpoint names and the
evaluation against pubeval.
"""

from __future__ import annotations

import shutil
import signal
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from bgnet.core.atomic import atomic_path, default_permissions
from bgnet.features.registry import FEATURE_SETS
from bgnet.nets.model import BgNet, CheckpointError, ModelConfig, net_from_checkpoint, read_checkpoint
from bgnet.sim.duel import NeuralScorer, PubevalScorer, paired_duel
from bgnet.trainer.config import ConfigError, TrainConfig, build_config

EVAL_SEED = 20261129
"""The dice of every evaluation against pubeval (so that points compare across a run)."""
LAST = "last.pt"
"""The name of a run's newest checkpoint."""
ENGINE_STATE = {"host": "selfplay", "device": "device_trainer"}
"""The checkpoint key under which each engine keeps the state that a resume continues from."""


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


@dataclass
class RunStart:
    """A run ready for its engine's loop: the config, the options, the device, the folder, the net (seeded, on the
    device) and the checkpoint it resumes (None for a new run)."""

    cfg: TrainConfig
    options: TrainOptions
    device: torch.device
    out_dir: Path
    net: BgNet
    resumed: dict[str, Any] | None


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


def run_config(options: TrainOptions) -> tuple[TrainConfig, dict[str, Any] | None]:
    """The run's config (a resumed run's own, under the overrides) and the checkpoint it resumes; one sentence
    (CheckpointError) for a checkpoint with no training state of the config's engine."""
    if not options.resume:
        return build_config(options.config, options.overrides), None
    ckpt = read_checkpoint(options.resume)
    written = [engine for engine, key in ENGINE_STATE.items() if key in ckpt]
    if "config" not in ckpt or not written:
        raise CheckpointError(f"checkpoint {options.resume!r} has no training state to resume (is it a released model?)")
    cfg = build_config(None, {**ckpt["config"], **options.overrides})
    if ENGINE_STATE[cfg.engine] not in ckpt:
        raise CheckpointError(f"checkpoint {options.resume!r} was written by the {written[0]} engine and resumes only "
                              f"with engine {written[0]}, not {cfg.engine}")
    return cfg, ckpt


def seed_torch(cfg: TrainConfig) -> None:
    """Seed torch's global streams (the new net's weights), set its CPU threads and its float32 matrix products'
    precision."""
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.set_float32_matmul_precision(cfg.matmul_precision)


def starting_net(cfg: TrainConfig, options: TrainOptions, resumed: dict[str, Any] | None) -> BgNet:
    """The resumed checkpoint's net, else ``--init``'s weights (which must fit the config), else a new seeded net."""
    if resumed is not None:
        return net_from_checkpoint(resumed, f"checkpoint {options.resume!r}")
    if not options.init:
        return BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version))
    net = net_from_checkpoint(read_checkpoint(options.init), f"checkpoint {options.init!r}")
    have = (list(net.config.hidden), net.config.activation, net.config.feature_version)
    if have != (list(cfg.hidden), cfg.activation, cfg.feature_version):
        raise ConfigError(f"--init checkpoint has hidden={have[0]} activation={have[1]} feature_version={have[2]}; "
                          f"the config says hidden={cfg.hidden} activation={cfg.activation} "
                          f"feature_version={cfg.feature_version}")
    return net


def start_run(options: TrainOptions) -> RunStart:
    """Config, device (refused before any work when missing), folder, seeding and the net on its device."""
    cfg, resumed = run_config(options)
    device = resolve_device(cfg.device)
    out_dir = run_folder(cfg, options.out, options.resume)
    out_dir.mkdir(parents=True, exist_ok=True)
    seed_torch(cfg)
    net = starting_net(cfg, options, resumed)
    net.to(device)
    return RunStart(cfg, options, device, out_dir, net, resumed)


def open_writer(out_dir: Path, cfg: TrainConfig) -> Any:
    """A TensorBoard ``SummaryWriter`` in ``out_dir``, the config written as a table of hyperparameters."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(out_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(cfg).items()))
    return writer


def progress_bar(options: TrainOptions, cfg: TrainConfig, games: int) -> Any:
    """A tqdm bar of the run's games (None without ``progress``)."""
    if not options.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=cfg.games, initial=games, unit="game", dynamic_ncols=True)


@dataclass
class StopRequest:
    """Set by Ctrl-C: the loop finishes its step, checkpoints and ends."""

    requested: bool = False


@contextmanager
def stop_on_sigint() -> Iterator[StopRequest]:
    """While inside, SIGINT sets the yielded request instead of raising; the previous handler comes back after."""
    stop = StopRequest()

    def on_sigint(signum: int, frame: Any) -> None:
        stop.requested = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class Every:
    """Marks every ``every`` games (0: never): ``due`` once the games reach the next one, which then moves past
    them."""

    every: int
    next: int | None

    @classmethod
    def after(cls, games: int, every: int) -> "Every":
        """The marks from the first past ``games``."""
        return cls(every, (games // every + 1) * every if every else None)

    def due(self, games: int) -> bool:
        """Whether ``games`` reached the next mark (then the mark moves to the first past ``games``)."""
        if self.next is None or games < self.next:
            return False
        self.next = (games // self.every + 1) * self.every
        return True


def games_per_second(games: int, games_at_t0: int, t0: float) -> float:
    """Games played since ``t0`` (``time.perf_counter``), when ``games_at_t0`` had been, per second of wall time."""
    return (games - games_at_t0) / max(time.perf_counter() - t0, 1e-9)


def show_progress(bar: Any, games_per_s: float, loss: float, ppg: float | None) -> None:
    """The progress bar's figures: games/s, the last fit's loss, the last ppg against pubeval (when there is a bar)."""
    if bar is not None:
        bar.set_postfix(gps=f"{games_per_s:.0f}", loss=f"{loss:.4f}", ppg=("-" if ppg is None else f"{ppg:+.3f}"))


def checkpoint_name(games: int) -> str:
    """The file of the checkpoint written at ``games`` games."""
    return f"games_{games:09d}.pt"


def write_checkpoint(out_dir: Path, name: str, save: Callable[[Path], object]) -> Path:
    """``save`` the run's checkpoint to ``out_dir/name``; any name but ``last.pt`` is also copied (atomically) to
    ``last.pt``, so that it always holds the newest."""
    path = out_dir / name
    save(path)
    if name != LAST:
        with atomic_path(out_dir / LAST, permissions=default_permissions()) as tmp:
            shutil.copyfile(path, tmp)
    return path


def eval_vs_pubeval(probs_fn: Any, cfg: TrainConfig, writer: Any, games: int, bar: Any) -> float:
    """``eval_pairs`` paired-dice games of the net (``probs_fn``: boards -> chances) against pubeval on fixed dice,
    logged at ``games``; returns the net's points per game."""
    res = paired_duel(NeuralScorer(probs_fn), PubevalScorer(), cfg.eval_pairs, EVAL_SEED)
    writer.add_scalar("eval/ppg_vs_pubeval", res.ppg, games)
    writer.add_scalar("eval/ppg_vs_pubeval_ci95", res.ci95, games)
    writer.add_scalar("eval/win_rate_vs_pubeval", res.win_rate, games)
    if bar is not None:
        bar.write(f"games {games}: vs pubeval {res.ppg:+.3f} ppg +- {res.ci95:.3f} (95%), win rate {res.win_rate:.3f}")
    return float(res.ppg)


def finish(writer: Any, bar: Any) -> None:
    """Close the progress bar (if any) and flush and close the TensorBoard writer."""
    if bar is not None:
        bar.close()
    writer.flush()
    writer.close()


def end_message(stop: StopRequest, cfg: TrainConfig, games: int, games_per_s: float, final: Path) -> str:
    """How the run ended (interrupted, stopped by ``--stop-after``, finished), its speed and its last checkpoint."""
    reason = "interrupted" if stop.requested else "stopped" if games < cfg.games else "finished"
    return f"{reason} at {games} games ({games_per_s:.0f} games/s); checkpoint {final}"
