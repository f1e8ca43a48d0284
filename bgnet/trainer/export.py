"""``python -m bgnet.trainer.export RUN_CHECKPOINT OUT.pt``: a small release checkpoint (weights and metadata only)."""

from __future__ import annotations

import sys

from bgnet.nets.model import CheckpointError, net_from_checkpoint, read_checkpoint, save_checkpoint

KEEP = ("config", "games", "git_sha")


def export(src: str, dst: str) -> None:
    """Copy the model and its description from a run checkpoint, dropping optimizer and self-play state."""
    ckpt = read_checkpoint(src)
    net = net_from_checkpoint(ckpt, f"checkpoint {src!r}")
    extra = {k: ckpt[k] for k in KEEP if k in ckpt}
    extra["source_git_sha"] = extra.pop("git_sha", "unknown")
    save_checkpoint(dst, net, **extra)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m bgnet.trainer.export RUN_CHECKPOINT OUT.pt", file=sys.stderr)
        return 2
    try:
        export(args[0], args[1])
    except CheckpointError as exc:
        print(f"bgnet.trainer.export: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
