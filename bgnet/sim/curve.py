"""Learning curves: every ``games_*.pt`` checkpoint of a run against one opponent, to TensorBoard and a PNG."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bgnet.core.errors import BgnetError
from bgnet.sim.duel import DuelResult

CHECKPOINT_PATTERN = re.compile(r"^games_(\d+)\.pt$")


class CurveError(BgnetError):
    """A run folder that holds no checkpoints to evaluate."""


@dataclass(frozen=True)
class CurvePoint:
    """One checkpoint's result: games trained and its duel summary."""

    games: int
    checkpoint: str
    result: DuelResult


def run_checkpoints(run_dir: str | Path) -> list[tuple[int, Path]]:
    """The run's ``games_N.pt`` files as (N, path), by games trained."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise CurveError(f"run folder {str(folder)!r} does not exist")
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := CHECKPOINT_PATTERN.match(p.name))]
    if not found:
        raise CurveError(f"run folder {str(folder)!r} holds no games_*.pt checkpoints")
    return sorted(found)


def tag_for(opponent: str) -> str:
    """TensorBoard tag of the curve against ``opponent``."""
    name = re.sub(r"[^A-Za-z0-9_.@-]+", "_", Path(opponent).name if opponent.endswith(".pt") else opponent)
    return f"eval/curve_ppg_vs_{name}"


def write_tensorboard(run_dir: str | Path, opponent: str, points: list[CurvePoint]) -> None:
    """Write ppg (and its 95% half-width and win rate) against games trained into the run's TensorBoard folder."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir))
    tag = tag_for(opponent)
    for p in points:
        writer.add_scalar(tag, p.result.ppg, p.games)
        writer.add_scalar(tag + "_ci95", p.result.ci95, p.games)
        writer.add_scalar(tag.replace("curve_ppg", "curve_win_rate"), p.result.win_rate, p.games)
    writer.flush()
    writer.close()


def write_png(path: str | Path, opponent: str, points: list[CurvePoint]) -> bool:
    """Plot the curve with 95% error bars to ``path``; False (and nothing written) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar([p.games for p in points], [p.result.ppg for p in points],
                yerr=[p.result.ci95 for p in points], marker="o", capsize=3)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("games trained")
    ax.set_ylabel(f"points per game vs {opponent}")
    ax.set_title("learning curve (95% intervals from paired dice)")
    fig.tight_layout()
    fig.savefig(str(path), dpi=100)
    plt.close(fig)
    return True
