"""What a label of the rounds costs and how close the cheap ones are to the full 2-ply search.

On candidate positions of the kind the rounds label (the afterstates of self-play positions' four best 0-ply
plays, ``bgnet.trainer.round_positions.candidate_positions``), times on one core, per position, the net's 1-ply search,
its 2-ply search with the last level pruned to pubeval's best K plays of each roll
(``bgnet.trainer.labels.evaluate_pruned``, ``--label ply2 --label-top K``), and the full 2-ply search, and prints
each one's equity RMS and mean difference from the full 2-ply values of the same positions.

With ``--device`` it also times the torch search (``bgnet.play.search_torch.label_boards_torch``, what the rounds'
``--device`` labels with) on that device next to the numba search on one core, at 1 and 2 plies, in labels a
second (also at 2 plies with each ``--tops`` K, the rounds' ``--label-top``), and prints the largest difference
between their chances on the same positions (``--device-scale K``
times the torch search on K copies of them, to fill a GPU; ``--batch`` sets its positions a chunk; ``--tops ""``
leaves out the pruned rows; ``--tf32`` adds the torch rows with TensorFloat-32 matrix products, whose difference
from the float32 search is what that speed costs; ``--fused-kernels`` adds the torch rows with the device kernels
fused, ``bgnet.core.device_kernels``: feature set 2 encoded by one Triton kernel instead of the torch ops).

    python bench/labels.py [--model checkpoints/bgnet.pt] [--positions 100] [--tops 6,10] [--seed 5]
        [--precision bfloat16] [--device cpu|cuda [--device-scale K] [--batch N] [--tf32] [--fused-kernels]]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bgnet.cli.parser import run_command  # noqa: E402
from bgnet.features.registry import FEATURE_SETS  # noqa: E402
from bgnet.nets.bf16net import PRECISIONS  # noqa: E402
from bgnet.nets.model import BgNet, net_from_checkpoint, read_checkpoint  # noqa: E402
from bgnet.core.probs import equities  # noqa: E402
from bgnet.trainer.labels import evaluate_pruned  # noqa: E402
from bgnet.play.search import evaluate_boards  # noqa: E402
from bgnet.play.search_torch import label_boards_torch  # noqa: E402
from bgnet.trainer.selfplay import resolve_device  # noqa: E402
from bgnet.trainer.inference import probs_fn_of  # noqa: E402
from bgnet.trainer.round_positions import candidate_positions, collect_positions  # noqa: E402

BATCH = 20
"""Positions searched together (the rounds' 2-ply labelling uses batches of about 100)."""


def timed(label: Callable[[np.ndarray], np.ndarray], boards: np.ndarray) -> tuple[np.ndarray, float]:
    """(equities (N,), ms per position) of ``label`` over ``boards`` in batches, after a warm-up batch."""
    label(boards[:4])
    t = time.perf_counter()
    probs = np.concatenate([label(boards[s:s + BATCH]) for s in range(0, len(boards), BATCH)])
    return equities(probs.astype(np.float32)), (time.perf_counter() - t) * 1000 / len(boards)


def device_rows(net: BgNet, fn: Callable[[np.ndarray], np.ndarray], boards: np.ndarray,
                device: torch.device, scale: int, batch: int | None, tf32: bool = False,
                tops: tuple[int, ...] = (), fused: bool = False) -> None:
    """Print labels a second of the numba search (one core) and the torch search on ``device`` at 1 and 2 plies
    (and at 2 plies with the last level among pubeval's best K, for each K of ``tops``), and the largest
    difference of their chances on ``boards``; with ``tf32`` also the torch search with TensorFloat-32 products,
    with ``fused`` also with the device kernels fused (``bgnet.core.device_kernels``)."""
    copies = f", the torch one on {scale} copies of them" if scale > 1 else ""
    print(f"\nnumba search on one core vs torch search on {device} ({len(boards)} positions{copies}; chunks of "
          f"{batch or 'the default number of'} positions)")
    print(f"{'label':<22} {'numba labels/s':>15} {'torch labels/s':>15} {'speed-up':>9} {'max |diff|':>11}")
    many = np.tile(boards, (scale, 1))
    for ply, top in ((1, 0), (2, 0), *((2, k) for k in tops)):
        def numba_label(b: np.ndarray) -> np.ndarray:
            return evaluate_pruned(fn, b, ply, top) if top else evaluate_boards(fn, b, ply)
        numba_label(boards[:4])
        t = time.perf_counter()
        want = np.concatenate([numba_label(boards[s:s + BATCH]) for s in range(0, len(boards), BATCH)])
        numba_rate = len(boards) / (time.perf_counter() - t)
        for precision in ("highest", "high") if tf32 else ("highest",):
            for kernels in ("torch", "fused") if fused else ("torch",):
                torch.set_float32_matmul_precision(precision)
                # warm-up: the device, its kernels
                label_boards_torch(net, boards[:4], ply, device, batch, top=top, kernels=kernels)
                t = time.perf_counter()
                got = label_boards_torch(net, many, ply, device, batch, top=top,
                                         kernels=kernels)[:len(boards)]  # ends on the host
                torch_rate = len(many) / (time.perf_counter() - t)
                name = (f"{ply}-ply" + (f" top {top}" if top else "") + (" TF32" if precision == "high" else "")
                        + (" fused" if kernels == "fused" else ""))
                print(f"{name:<22} {numba_rate:>15.1f} {torch_rate:>15.1f} {torch_rate / numba_rate:>8.2f}x "
                      f"{np.abs(got - want).max():>11.2e}")
        torch.set_float32_matmul_precision("highest")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; a device this machine lacks is one sentence and exit status 2."""
    return run_command("bench/labels.py", lambda: bench(argv))


def bench(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "checkpoints" / "bgnet.pt"))
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--tops", default="6,10", help="the K of the pruned 2-ply rows, comma-separated")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--precision", choices=PRECISIONS, default="float32",
                    help="bfloat16: also the 1-ply and pruned 2-ply labels with the net in bfloat16 "
                         "(bgnet.nets.bf16net)")
    ap.add_argument("--device", default="", help="also time the torch search on this device (cpu, cuda)")
    ap.add_argument("--device-scale", type=int, default=1, help="the torch search times this many copies")
    ap.add_argument("--batch", type=int, default=None, help="positions a chunk of the torch search")
    ap.add_argument("--tf32", action="store_true", help="also time the torch search with TF32 matrix products")
    ap.add_argument("--fused-kernels", action="store_true",
                    help="also time the torch search with its features from one Triton kernel (device kernels fused)")
    args = ap.parse_args(argv)
    device = resolve_device(args.device) if args.device else None  # one sentence when this machine lacks it
    torch.set_num_threads(1)
    net = net_from_checkpoint(read_checkpoint(args.model), f"checkpoint {args.model!r}")
    fn = probs_fn_of(net)
    boards = collect_positions(fn, args.positions, args.seed)
    cands = candidate_positions(fn, boards, 4, args.positions, args.seed + 1, grouped=True)
    if len(cands) == 0:  # grouped candidates come four to a position: too few positions make none
        ap.error(f"--positions {args.positions} gave no candidate positions to label: ask for at least 4")
    full, full_ms = timed(lambda b: evaluate_boards(fn, b, 2), cands)
    rows = [("1-ply", *timed(lambda b: evaluate_boards(fn, b, 1), cands))]
    tops = [int(t) for t in args.tops.split(",") if t.strip()]
    for k in tops:
        def pruned(b: np.ndarray, k: int = k) -> np.ndarray:
            return evaluate_pruned(fn, b, 2, k)
        rows.append((f"2-ply, last level pubeval's best {k}", *timed(pruned, cands)))
    if args.precision != "float32":  # the same labels with the net in bfloat16, timed in the same run
        from bgnet.nets.bf16net import with_precision
        from bgnet.trainer.inference import numpy_net_of

        low = with_precision(numpy_net_of(net), args.precision)
        rows.append((f"1-ply, {args.precision}", *timed(lambda b: evaluate_boards(low, b, 1), cands)))
        for k in tops:
            def pruned_low(b: np.ndarray, k: int = k) -> np.ndarray:
                return evaluate_pruned(low, b, 2, k)
            rows.append((f"2-ply, best {k}, {args.precision}", *timed(pruned_low, cands)))
    print(f"{len(cands)} candidate positions, {args.model}, one torch thread")
    print(f"{'label':<36} {'ms a position':>14} {'RMS from 2-ply':>15} {'mean diff':>10}")
    for name, eq, ms in rows:
        print(f"{name:<36} {ms:>14.1f} {np.sqrt(np.mean((eq - full) ** 2)):>15.4f} {np.mean(eq - full):>+10.4f}")
    print(f"{'2-ply (every play)':<36} {full_ms:>14.1f} {0:>15.4f} {0:>+10.4f}")
    if device is not None:
        device_rows(net, fn, cands, device, args.device_scale, args.batch, args.tf32, tuple(tops), args.fused_kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
