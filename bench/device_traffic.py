"""Bytes a device self-play step moves, op by op, counted on the CPU: where a GPU step's time goes, without a GPU.

    python bench/device_traffic.py [--batch 4096] [--steps 4] [--top 25] [--json] [--fused-features] [--fused-bearoff]
    python bench/device_traffic.py --labels 16 [--ply 2] [--label-top 10] [--fused-features] [--fused-bearoff]

Plays ``DeviceTrainer`` steps as configs/gpu.toml sets them (the release's architecture,
features version 2), with ``train_batch`` scaled so that a fit comes every 4 steps as it
does at 65,536 games, and counts for every torch op but views the bytes of its tensor
arguments and results, by the bgnet line that called it. On a GPU nearly every op of a
step is a pass over memory, so these bytes are its work (the H100 of the fifth GPU run
moves about 3 TB a second); what the count cannot see are kernels slower than their
bytes (a row ``cumsum``, a ``cat`` along rows), which the profile of a GPU run shows.
Figures are per step, scaled to 65,536 games (linear in the batch). With ``--labels N`` it counts
instead the torch search's labels of N positions of the release's self-play (``label_boards_torch``, the
released NetSet with its bear-off database, ``--ply`` plies, the last level among pubeval's best
``--label-top``: the rounds' 2-ply labels by default), in MB a label. ``--fused-features`` counts feature set 2 as
the fused Triton kernel (``bgnet.features.v2_fused``) moves it: one op a call that reads each board's 26 bytes and
writes its 246 float32 inputs (its escape and run tables, 16 MiB and 48 KiB, stay in a GPU's L2 cache and are left
out); the values come from the torch ops, uncounted (the kernel's are the same bits). ``--fused-bearoff`` counts the
bear-off lookups as ``bgnet.nets.bearoff_fused`` moves them: each board's 26 bytes in, its mask and five float64
chances out, and the tables' rows it reads for the pure bear-offs only (five of 32 float64 for a race, one for the
two-sided table).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes, _get_current_dispatch_mode_stack

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bgnet.features import v2_torch  # noqa: E402
from bgnet.nets.bearoff_torch import DeviceBearoff  # noqa: E402
from bgnet.nets.model import BgNet, ModelConfig, load_netset  # noqa: E402
from bgnet.nets.pruning import load_exact_evaluator  # noqa: E402
from bgnet.play.search_torch import label_boards_torch  # noqa: E402
from bgnet.sim.device_selfplay import DeviceSelfPlay  # noqa: E402
from bgnet.trainer.config import build_config  # noqa: E402
from bgnet.trainer.device_run import device_learning  # noqa: E402
from bgnet.trainer.device_selfplay import DeviceTrainer  # noqa: E402
from bgnet.trainer.round_positions import collect_positions  # noqa: E402

VIEWS = ("select", "view", "unsqueeze", "expand", "slice", "alias", "detach", "t.default", "transpose", "permute",
         "squeeze", "as_strided", "unflatten", "split", "unbind")
"""Ops that move no data (their names contain one of these)."""
GPU_GAMES = 65536
"""configs/gpu.toml's games a step, to which the counts are scaled."""


def _bytes(x: object) -> int:
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_bytes(y) for y in x)
    return 0


class Traffic(TorchDispatchMode):
    """Counts bytes and ops by the innermost bgnet line on the stack."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes: collections.Counter[str] = collections.Counter()
        self.ops: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        if not any(v in str(func) for v in VIEWS):
            site = next((f"{f.filename.split('/bgnet/')[1]}:{f.lineno}" for f in reversed(traceback.extract_stack())
                         if "/bgnet/" in f.filename), "?")
            self.bytes[site] += _bytes(args) + _bytes(list((kwargs or {}).values())) + _bytes(out)
            self.ops[site] += 1
        return out


def _book(site: str, nbytes: int) -> None:
    """Book one op of ``nbytes`` to ``site`` in every ``Traffic`` count now active (a fused kernel's own reads and
    writes, whose values the torch ops computed outside the count)."""
    for traffic in _get_current_dispatch_mode_stack():
        if isinstance(traffic, Traffic):
            traffic.bytes[site] += nbytes
            traffic.ops[site] += 1


FUSED_SITE = "features/v2_fused.py:kernel"
"""Where ``--fused-features`` books the fused kernel's bytes."""


def count_features_as_fused() -> None:
    """Make feature set 2's torch encoder count as the fused kernel: the torch ops run outside the count, and the
    kernel's reads and writes are booked to ``FUSED_SITE`` in the counting mode that is active."""
    torch_ops = v2_torch.encode_v2_torch

    def encode(boards: torch.Tensor) -> torch.Tensor:
        with _disable_current_modes():
            out = torch_ops(boards)
        _book(FUSED_SITE, _bytes(boards) + _bytes(out))
        return out
    v2_torch.encode_v2_torch = encode  # the registry looks its torch encoder up by name at each use


BEAROFF_SITE = "nets/bearoff_fused.py:kernel"
"""Where ``--fused-bearoff`` books the fused lookup's bytes."""


def count_bearoff_as_fused() -> None:
    """Make ``DeviceBearoff.probs`` count as the fused lookup: the torch ops run outside the count, and the kernel's
    reads and writes are booked to ``BEAROFF_SITE``."""
    torch_ops = DeviceBearoff.probs

    def probs(self: DeviceBearoff, boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with _disable_current_modes():
            mask, out = torch_ops(self, boards)
            code = self.classify(boards)[0]
            races, two_sided = int((code == 1).sum()), int((code == 2).sum())
        _book(BEAROFF_SITE, _bytes(boards) + _bytes(mask) + _bytes(out) + races * 5 * self.rolls.shape[1] * 8
              + two_sided * 8)
        return mask, out
    DeviceBearoff.probs = probs  # type: ignore[method-assign]


def _shares(traffic: Traffic, scale: float, per: int) -> dict[str, Any]:
    """Each file's share of the counted bytes, and each line's bytes times ``scale`` and ops over ``per``."""
    total = sum(traffic.bytes.values())
    by_file: collections.Counter[str] = collections.Counter()
    for site, b in traffic.bytes.items():
        by_file[site.split(":")[0]] += b
    return {"by_file": {f: b / total for f, b in by_file.most_common()},
            "by_line": [(s, b * scale, traffic.ops[s] / per) for s, b in traffic.bytes.most_common()]}


def _report(r: dict[str, Any], headline: str, unit: str, top: int, as_json: bool) -> None:
    """Print ``r`` as JSON (its ``top`` lines), or as the headline, the files' shares and the ``top`` lines."""
    if as_json:
        print(json.dumps({k: v for k, v in r.items() if k != "by_line"} | {"by_line": r["by_line"][:top]}))
        return
    print(headline)
    for f, share in r["by_file"].items():
        print(f"  {100 * share:5.1f}%  {f}")
    print(f"\nlines ({unit}):")
    for site, amount, ops in r["by_line"][:top]:
        print(f"  {amount:7.2f}  {ops:6.1f}  {site}")


def measure(batch: int, steps: int, warmup: int = 40) -> dict[str, Any]:
    """Warm ``batch`` games up, then count ``steps`` steady steps (one fit among them)."""
    torch.manual_seed(0)
    cfg = build_config("configs/gpu.toml", {"device": "cpu", "batch_games": batch})
    cfg = dataclasses.replace(cfg, train_batch=4 * batch)
    net = BgNet(ModelConfig.for_features(cfg.hidden, cfg.activation, cfg.feature_version))
    trainer = DeviceTrainer(net, DeviceSelfPlay(batch, seed=cfg.seed), device_learning(cfg), seed=cfg.seed)
    for _ in range(warmup):
        trainer.step()
    traffic = Traffic()
    with traffic:
        for _ in range(steps):
            trainer.step()
    scale = GPU_GAMES / batch / steps
    return {"batch": batch, "steps": steps, "gb_per_step_at_65536": sum(traffic.bytes.values()) * scale / 1e9,
            "ops_per_step": sum(traffic.ops.values()) / steps} | _shares(traffic, scale / 1e9, steps)


def measure_labels(n: int, ply: int, top: int, checkpoint: str = "checkpoints/bgnet.pt") -> dict[str, Any]:
    """Count the torch search's labels of ``n`` self-play positions of ``checkpoint`` (seed 3), per label."""
    boards = collect_positions(load_exact_evaluator(ROOT / checkpoint), n, seed=3)
    netset = load_netset(ROOT / checkpoint)
    traffic = Traffic()
    with traffic:
        label_boards_torch(netset, boards, ply, "cpu", top=top)
    return {"labels": n, "ply": ply, "top": top, "mb_per_label": sum(traffic.bytes.values()) / n / 1e6,
            "ops_per_label": sum(traffic.ops.values()) / n} | _shares(traffic, 1 / n / 1e6, n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--labels", type=int, default=0, metavar="N",
                    help="count the torch search's labels of N positions instead of self-play steps")
    ap.add_argument("--ply", type=int, default=2, help="with --labels: the search's depth (1 or 2)")
    ap.add_argument("--label-top", type=int, default=10,
                    help="with --labels: the last level among pubeval's best K plays a roll (0: every play)")
    ap.add_argument("--fused-features", action="store_true",
                    help="count feature set 2 as the fused Triton kernel moves it (bgnet.features.v2_fused)")
    ap.add_argument("--fused-bearoff", action="store_true",
                    help="count the bear-off lookups as the fused Triton kernel moves them (bgnet.nets.bearoff_fused)")
    args = ap.parse_args()
    if min(args.batch, args.steps, args.top) < 1:
        ap.error("--batch, --steps and --top must be at least 1")
    if args.labels < 0 or args.ply not in (1, 2) or args.label_top < 0:
        ap.error("--labels must be 0 or more, --ply 1 or 2 and --label-top 0 or more")
    torch.set_num_threads(1)
    if args.fused_features:
        count_features_as_fused()
    if args.fused_bearoff:
        count_bearoff_as_fused()
    if args.labels:
        r = measure_labels(args.labels, args.ply, args.label_top)
        _report(r, f"{r['mb_per_label']:.1f} MB a label ({r['ops_per_label']:.0f} ops a label; {args.labels} "
                   f"positions, {args.ply}-ply, last level among pubeval's best {args.label_top})",
                "MB a label, ops a label", args.top, args.json)
        return 0
    r = measure(args.batch, args.steps)
    _report(r, f"{r['gb_per_step_at_65536']:.1f} GB a step at 65,536 games ({r['ops_per_step']:.0f} ops a step; "
               f"counted at {args.batch} games over {args.steps} steps)",
            "GB a step at 65,536 games, ops a step", args.top, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
