"""``python -m bgnet.trainer.export RUN_CHECKPOINT OUT.pt``: a small release checkpoint (weights and metadata only);
``python -m bgnet.trainer.export student STUDENT.pt RELEASE.pt OUT.npz``: a student distilled from a release, as the
companion net that ships beside it (``checkpoints/student.npz``, ``bgnet.nets.companion``). ``STUDENT`` may also be
an earlier release's shipped ``student.npz``, stamped anew for a release that plays like the one it was made for."""

from __future__ import annotations

import sys
from pathlib import Path

from bgnet.core.errors import BgnetError
from bgnet.nets.model import CheckpointError, net_from_checkpoint, read_checkpoint, save_checkpoint

KEEP = ("config", "games", "git_sha")


def export(src: str, dst: str) -> None:
    """Copy the model and its description from a run checkpoint, dropping optimizer and self-play state."""
    ckpt = read_checkpoint(src)
    net = net_from_checkpoint(ckpt, f"checkpoint {src!r}")
    extra = {k: ckpt[k] for k in KEEP if k in ckpt}
    extra["source_git_sha"] = extra.pop("git_sha", "unknown")
    save_checkpoint(dst, net, **extra)


def export_student(student: str, release: str, out: str) -> None:
    """Write the student checkpoint's net (one net, not nets by kind) as the release's companion student, stamped
    with the release checkpoint's SHA-256."""
    from bgnet.nets.companion import write_companion_net
    from bgnet.nets.model import load_netset

    if not Path(release).is_file():
        raise CheckpointError(f"release checkpoint {release!r} does not exist")
    if student.endswith(".npz"):
        from bgnet.nets.companion import read_companion_net

        found = read_companion_net(student, "student")
        if found is None:
            raise CheckpointError(f"{student!r} is not a student net file (bgnet.nets.companion)")
        old = found[0]
        layers = [(w.T, b) for w, b in old.layers]  # NumpyNet keeps (in, out) weights; the file holds (out, in)
        write_companion_net(out, layers, old.activation, release, "student", old.feature_version)
        return
    nets = load_netset(student).nets
    if len(nets) != 1:
        raise CheckpointError(f"checkpoint {student!r} holds nets by kind; a student is one net")
    (net,) = nets.values()
    write_companion_net(out, net.numpy_layers(), net.config.activation, release, "student", net.config.feature_version)


USAGE = ("usage: python -m bgnet.trainer.export RUN_CHECKPOINT OUT.pt\n"
         "       python -m bgnet.trainer.export student STUDENT.pt|STUDENT.npz RELEASE.pt OUT.npz")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 4) or (len(args) == 4) != (args[0] == "student"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if len(args) == 4:
            export_student(args[1], args[2], args[3])
        else:
            export(args[0], args[1])
    except (CheckpointError, BgnetError, OSError) as exc:
        print(f"bgnet.trainer.export: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
