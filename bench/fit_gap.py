"""How far nets' 0-ply values are from labels files (a rounds run's ``labels_NNN.npz``): seen against unseen labels.

    python bench/fit_gap.py --labels runs/s11_p2/labels_003.npz runs/s11_p2/labels_004.npz \
        --models runs/s11_p2/round_003.pt runs/s11_p2/round_004.pt [--sample 40000] [--seed 1]

For each net and labels file: the squared error summed over the five chances (what the rounds' fit
minimises) and the root mean square of the money-equity difference, over ``--sample`` rows drawn from
the file. A net close to the labels it was fitted on but far from fresh labels of the same teacher
wants more labels; one as far from both wants capacity or other inputs.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.nets.model import net_from_checkpoint, read_checkpoint
from bgnet.core.probs import equities


def label_sample(path: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``n`` (boards, targets) rows of a labels file, drawn without replacement; ValueError when unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            boards, targets = data["boards"], data["targets"]
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"{path} is not a labels file with boards and targets ({exc})") from None
    rows = np.sort(np.random.default_rng(seed).choice(len(boards), min(n, len(boards)), replace=False))
    return np.ascontiguousarray(boards[rows], np.int8), np.asarray(targets[rows], np.float32)


def gaps(probs: np.ndarray, targets: np.ndarray) -> tuple[float, float]:
    """(mean squared error summed over the five chances, root mean square equity difference) of probs to targets."""
    mse = float(np.mean(np.sum((probs - targets) ** 2, axis=1)))
    return mse, float(np.sqrt(np.mean((equities(probs) - equities(targets)) ** 2)))


def main() -> int:
    """Print one line per net: its gaps to each labels file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", nargs="+", required=True)
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--sample", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.sample < 1:
        parser.error("--sample must be at least 1")
    from bgnet.trainer.inference import probs_fn_of

    try:
        sets = [label_sample(path, args.sample, args.seed + k) for k, path in enumerate(args.labels)]
        nets = [(path, probs_fn_of(net_from_checkpoint(read_checkpoint(path), f"checkpoint {path!r}")))
                for path in args.models]
    except (ValueError, BgnetError) as exc:
        print(f"fit_gap: error: {exc}", file=sys.stderr)
        return 2
    for path, probs_fn in nets:
        cells = []
        for name, (boards, targets) in zip(args.labels, sets):
            mse, rmse = gaps(probs_fn(boards), targets)
            cells.append(f"{name}: mse {mse:.6f}, equity rmse {rmse:.4f}")
        print(f"{path}  " + "  |  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
