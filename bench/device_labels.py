"""Search labels made on a device for as long as a time budget allows: the rounds' candidates labelled in parts.

    python bench/device_labels.py OUT_DIR [--seconds 240] [--ply 1] [--device cuda] [--part 400000]
                                  [--model checkpoints/bgnet.pt] [--candidates 4] [--seed 7]
                                  [--matmul-precision highest|high] [--files 6] [--top K]
                                  [--device-kernels torch|fused]

Each part plays self-play positions with the net (``collect_positions``), takes the afterstates of
each one's ``--candidates`` best 0-ply plays for a random roll (``candidate_positions``, as the
rounds do), labels them with the net's own ``--ply`` search on the device
(``label_boards_torch``; with ``--top K`` the last level among pubeval's best K plays of each roll, the
rounds' ``--label-top``, as the release's 2-ply labels were made) and writes ``OUT_DIR/labels_KKK.npz``: ``boards`` (N, 26)
int8 and ``probs`` (N, 5) as uint16 steps of 1/65535 (``bgnet.trainer.labels.quantize_probs``: an error below
8e-6, far under the labels' own), compressed so that a part stays under 16 MiB. Parts are seeded
from ``--seed`` and their number, so the same command makes the same labels; it stops starting
parts when the next one would not finish in time. A figures line (labels a second) goes to stdout.
At the end the parts are packed into at most ``--files`` files of the same layout (the device tool brings back
eight files at most; the logs and figures need two). ``--matmul-precision high`` searches with TensorFloat-32 matrix products (``bench/labels.py --tf32`` measures
what that changes in the labels). ``--device-kernels fused`` encodes the search's features with one Triton kernel
(``bgnet.core.device_kernels``; the same labels).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bgnet.cli.parser import run_command  # noqa: E402
from bgnet.core.atomic import atomic_write  # noqa: E402
from bgnet.core.device_kernels import DEVICE_KERNELS  # noqa: E402
from bgnet.nets.model import net_from_checkpoint, read_checkpoint  # noqa: E402
from bgnet.play.search_torch import label_boards_torch  # noqa: E402
from bgnet.trainer.inference import make_probs_fn  # noqa: E402
from bgnet.trainer.labels import quantize_probs  # noqa: E402
from bgnet.trainer.round_positions import candidate_positions, collect_positions  # noqa: E402
from bgnet.trainer.selfplay import resolve_device  # noqa: E402

def make_part(model: torch.nn.Module, device: torch.device, n: int, ply: int, k: int,
              seed: int, top: int = 0, kernels: str = "torch") -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """(boards, probs, seconds spent collecting and labelling) of one part of about ``n`` candidates."""
    probs_fn = make_probs_fn(model, device, threads=max(1, (os.cpu_count() or 2) - 2), on_device=device.type == "cuda")
    t0 = time.perf_counter()
    positions = collect_positions(probs_fn, max(1, n // k), seed, batch_games=4096)
    boards = candidate_positions(probs_fn, positions, k, n, seed + 1)
    t1 = time.perf_counter()
    probs = label_boards_torch(model, boards, ply, device, top=top, kernels=kernels)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t2 = time.perf_counter()
    return boards, probs, {"collect_s": t1 - t0, "label_s": t2 - t1}


def pack_parts(out: Path, files: int) -> int:
    """Rewrite ``out``'s labels_KKK.npz parts as at most ``files`` parts of the same rows in the same order;
    the number of parts now there."""
    names = sorted(out.glob("labels_[0-9][0-9][0-9].npz"))
    if len(names) <= files:
        return len(names)
    parts = [np.load(name) for name in names]
    boards = np.concatenate([part["boards"] for part in parts])
    probs = np.concatenate([part["probs"] for part in parts])
    for name in names:
        name.unlink()
    bounds = np.linspace(0, len(boards), files + 1).astype(np.int64)
    for k in range(files):
        with atomic_write(out / f"labels_{k:03d}.npz") as fh:
            np.savez_compressed(fh, boards=boards[bounds[k]:bounds[k + 1]], probs=probs[bounds[k]:bounds[k + 1]])
    return files


def bench() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", metavar="OUT_DIR")
    ap.add_argument("--seconds", type=float, default=240.0)
    ap.add_argument("--ply", type=int, default=1, choices=(1, 2))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--part", type=int, default=400_000, help="candidates a part")
    ap.add_argument("--model", default=str(ROOT / "checkpoints" / "bgnet.pt"))
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--matmul-precision", choices=("highest", "high"), default="highest")
    ap.add_argument("--files", type=int, default=6, help="the most label files left at the end")
    ap.add_argument("--top", type=int, default=0, help="the last level among pubeval's best K plays (0: all)")
    ap.add_argument("--device-kernels", choices=DEVICE_KERNELS, default="torch",
                    help="fused: the search's features from one Triton kernel (bgnet.core.device_kernels)")
    args = ap.parse_args()
    if args.part < 1 or args.candidates < 1 or args.files < 1 or args.top < 0 or args.seconds <= 0:
        ap.error("--part, --candidates and --files must be at least 1, --top 0 or more and --seconds positive")
    device = resolve_device(args.device)
    torch.set_float32_matmul_precision(args.matmul_precision)
    model = net_from_checkpoint(read_checkpoint(args.model), args.model).to(device).eval()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    figures: dict[str, float] = {"labels": 0, "label_s": 0.0, "collect_s": 0.0}
    longest = 0.0
    part = 0
    while time.perf_counter() - start + 1.2 * longest < args.seconds:
        t = time.perf_counter()
        boards, probs, spent = make_part(model, device, args.part, args.ply, args.candidates,
                                         int(np.random.SeedSequence([args.seed, part]).generate_state(1)[0]) % 2**31,
                                         args.top, args.device_kernels)
        with atomic_write(out / f"labels_{part:03d}.npz") as fh:
            np.savez_compressed(fh, boards=boards, probs=quantize_probs(probs))
        figures["labels"] += len(boards)
        figures["label_s"] += spent["label_s"]
        figures["collect_s"] += spent["collect_s"]
        longest = max(longest, time.perf_counter() - t)
        part += 1
    figures["parts"] = part
    figures["files"] = pack_parts(out, args.files)
    figures["labels_per_s"] = figures["labels"] / max(figures["label_s"], 1e-9)
    print(json.dumps({"ply": args.ply, "top": args.top, "device": str(device),
                      "matmul_precision": args.matmul_precision, "device_kernels": args.device_kernels,
                      **figures}))
    return 0


def main() -> int:
    """Run it; a device this machine lacks (or a bad model) is one sentence and exit status 2."""
    return run_command("bench/device_labels.py", bench)


if __name__ == "__main__":
    sys.exit(main())
