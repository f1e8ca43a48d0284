"""``bgnet train`` and ``python -m train``: the self-play trainer's command line (``bgnet.trainer.selfplay``).

    bgnet train --config quick [--key=value ...] [--device cpu|cuda]
                [--out DIR] [--resume PATH] [--init PATH] [--backend local|ray [--workers N]]

``--config`` takes a TOML file or a bundled config by name (``quick``, ``default``,
``gpu``, ``release/08_ply2``). Any ``--key=value`` overrides a config field
(``bgnet.trainer.config.TrainConfig``); ``--help`` lists them all. A refused config or
checkpoint is one sentence on stderr (``bgnet train: error: ...``) and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Sequence

from bgnet.cli.parser import Parser, add_backend_arguments, run_command

if TYPE_CHECKING:  # torch loads with the trainer, inside the functions
    from bgnet.trainer.selfplay import TrainOptions

PROG = "bgnet train"
"""The command's name in its messages (``python -m train`` in the repository passes its own)."""


def config_help() -> str:
    """The ``--help`` epilog: every TrainConfig field with its default and its docstring."""
    from bgnet.trainer.config import TrainConfig, field_docs

    lines = ["config fields (set in the TOML file, or override with --key=value; a TOML file may start from",
             "another with base = \"NAME\" or base = \"PATH\", resolved against configs/):"]
    defaults = asdict(TrainConfig())
    for name, doc in field_docs().items():
        lines.append(f"  --{name}={defaults[name]!r}".replace("'", ""))
        lines.append(f"      {doc}")
    return "\n".join(lines)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The trainer's flags; anything else on the command line is a ``--key=value`` override."""
    parser = Parser(prog=prog, description="Train a bgnet evaluator by TD(lambda) self-play.",
                    epilog=config_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="a TOML config file, or a bundled config by name: quick (minutes on a CPU), "
                                         "default, gpu, release/08_ply2, ...")
    parser.add_argument("--device", help="cpu or cuda (overrides the config)")
    parser.add_argument("--out", help="output folder (default runs/<run_name>__<seed>__<time>/; "
                                      "a resume continues in its checkpoint's folder)")
    parser.add_argument("--resume", help="checkpoint to continue from (same run, exactly)")
    parser.add_argument("--init", help="checkpoint whose weights start a new run")
    parser.add_argument("--stop-after", type=int, default=0, help=argparse.SUPPRESS)  # simulate an interruption
    add_backend_arguments(parser, workers_flag=True, help_for={
        "backend": "self-play here or on Ray actors (overrides the config)",
        "ray_address": "Ray cluster to attach to (default: a local Ray instance)",
        "workers": "self-play Ray actors with --backend ray (overrides the config)"})
    parser.set_defaults(backend=None)  # each backend flag overrides the config only when it is given
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    return parser


def parse_args(argv: Sequence[str] | None, prog: str = PROG) -> TrainOptions:
    """The ``bgnet.trainer.selfplay.TrainOptions`` of a command line: known flags plus ``--key=value`` overrides."""
    from bgnet.trainer.config import ConfigError
    from bgnet.trainer.selfplay import TrainOptions

    args, rest = build_parser(prog).parse_known_args(argv)
    overrides: dict[str, Any] = {}
    for item in rest:
        if not item.startswith("--") or "=" not in item:
            raise ConfigError(f"unexpected argument {item!r}; overrides are written --key=value")
        key, value = item[2:].split("=", 1)
        overrides[key.replace("-", "_")] = value
    if args.device:
        overrides["device"] = args.device
    for key in ("backend", "workers", "ray_address"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    return TrainOptions(config=args.config, overrides=overrides, out=args.out, resume=args.resume, init=args.init,
                        stop_after=args.stop_after, progress=not args.no_progress)


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Run the trainer with ``argv`` (default: the process arguments); returns the exit status (a refused config
    or checkpoint: one sentence ``bgnet train: error: ...`` and 2)."""
    from bgnet.trainer.selfplay import train

    return run_command(prog, lambda: train(parse_args(argv, prog)))


if __name__ == "__main__":
    sys.exit(main())
