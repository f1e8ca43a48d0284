"""Training configuration: a dataclass read from TOML and overridden with ``--key=value``.

A TOML file may start from another: ``base = "default"`` (a config of the bundled
``configs/`` folder by name) or ``base = "v2/wide.toml"`` (a path, taken against that
folder unless absolute) takes every value of that file, itself perhaps based on a
third, and the file's own values override them. So a release stage or an experiment
is a few lines on top of the config it changes. ``--config`` takes a file or a bundled
config by name (``quick``, ``release/08_ply2``): the repository's ``configs/`` in a
checkout, the copy inside the package when installed from a wheel.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from bgnet.core.device_kernels import kernels_problem
from bgnet.core.errors import BgnetError
from bgnet.core.resources import config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(BgnetError):
    """A config file or override that cannot be used."""


CONFIG_DIR = config_dir()
"""The bundled configs (``configs/`` of the repository, or their copy in the package), against which a name or a
``base`` is resolved."""
BASE_KEY = "base"
"""The TOML key that names the config a file starts from."""


@dataclass
class TrainConfig:
    """Everything a self-play training run needs; one field per knob."""

    run_name: str = "bgnet"
    """Name of the run; checkpoints go to runs/<run_name>/ unless --out says otherwise."""
    seed: int = 1
    """Seed for the dice, exploration and weight initialisation."""
    device: str = "cpu"
    """Torch device: "cpu" or "cuda"."""
    games: int = 10_000
    """Total self-play games to train on (the run stops there)."""
    batch_games: int = 256
    """Games played at once (the self-play batch)."""
    hidden: list[int] = field(default_factory=lambda: [128])
    """Hidden layer sizes of the evaluator."""
    activation: str = "relu"
    """Hidden activation: relu, sigmoid or tanh."""
    lam: float = 0.7
    """TD(lambda) trace decay for the forward-view lambda-returns."""
    lr: float = 1e-3
    """Adam learning rate at the start."""
    lr_final: float = 1e-4
    """Learning rate reached at the end of the run (cosine decay); equal to lr for a constant rate."""
    train_batch: int = 8192
    """Positions gathered from finished games before each learning phase."""
    minibatch: int = 256
    """Positions per gradient step."""
    epochs: int = 1
    """Passes over each gathered batch of positions."""
    exploration: float = 0.0
    """Chance of a random play instead of the best one during self-play."""
    threads: int = 1
    """Torch CPU threads (0 = torch's default; 1 avoids thread contention with the numba kernels)."""
    encoder: str = "auto"
    """Where features are computed: "numba" (host), "torch" (on the device), "auto" (torch on a GPU)."""
    kernel_threads: int = 1
    """Threads for move generation and encoding (numba); raise it on many-core GPU hosts."""
    matmul_precision: str = "highest"
    """torch's float32 matrix products: "highest" (float32 throughout), or "high" / "medium" (TF32 or bfloat16
    inside them on a GPU that has them, several times faster, about 1e-3 relative error; no effect on a CPU)."""
    cuda_graphs: bool = False
    """Device engine on a CUDA GPU: each fit's TD(lambda) sweep over the full ring and its minibatch loop (forward,
    backward and Adam step of every minibatch) replayed from CUDA graphs, one launch each instead of thousands;
    no effect elsewhere."""
    eval_every: int = 5_000
    """Games between evaluations against pubeval (0 = never)."""
    eval_pairs: int = 500
    """Paired dice streams per evaluation (2 games each)."""
    checkpoint_every: int = 5_000
    """Games between checkpoints."""
    log_every: int = 1_000
    """Games between TensorBoard scalar logs."""
    max_plies: int = 600
    """Plies after which a game is abandoned (it does not train)."""
    feature_version: int = 1
    """Input features of a new net (bgnet.features.registry): 1 or 2 (with the expert inputs; the release's)."""
    backend: str = "local"
    """Where self-play runs: "local" (this process) or "ray" (``workers`` Ray actors; bgnet.trainer.distributed)."""
    workers: int = 1
    """Self-play actors with backend "ray", each playing batch_games games at once with its own seed stream."""
    ray_address: str = ""
    """Ray cluster to attach to with backend "ray" ("" = start a local Ray instance)."""
    sync_games: int = 256
    """Backend "ray": finished games gathered from all actors between two weight broadcasts."""
    bearoff_database: bool = True
    """Stop a self-play game once both sides are bearing off (bgnet.nets.bearoff): its exact chances are the TD target."""
    engine: str = "host"
    """Which self-play engine trains: "host" (SelfPlay, numba move generation, the learner's fit) or "device" (every
    step, TD target and fit as torch ops on the run's device, bgnet.trainer.device_run; backend local and a feature
    set with a torch encoder; encoder and kernel_threads then only serve the pubeval evaluation)."""
    device_kernels: str = "torch"
    """Engine device: "torch" (whole-batch torch ops, any device) or "fused" (feature set 2 and the bear-off lookups
    each one Triton kernel, bgnet.core.device_kernels; a CUDA GPU with Triton, which torch's CUDA builds ship): the
    same bits, so the same games and weights, with 0.28 times a step's bytes (counted by bench/device_traffic.py;
    not yet timed on a GPU)."""


def field_docs() -> dict[str, str]:
    """Each TrainConfig field's docstring (the string under it in the class body), in field order."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(TrainConfig))).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    items = body.body
    for node, nxt in zip(items, items[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return {f.name: docs.get(f.name, "") for f in fields(TrainConfig)}


def _coerce(name: str, value: Any, kind: Any) -> Any:
    origin = getattr(kind, "__origin__", None)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"setting {name!r} must be true or false, not {value!r}")
    if kind is int:
        if isinstance(value, bool):
            raise ConfigError(f"setting {name!r} must be an integer, not {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value.replace("_", ""))
            except ValueError:
                pass
        raise ConfigError(f"setting {name!r} must be an integer, not {value!r}")
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"setting {name!r} must be a number, not {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"setting {name!r} must be a string, not {value!r}")
    if origin is list:
        if isinstance(value, str):
            value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
        if not isinstance(value, list):
            raise ConfigError(f"setting {name!r} must be a list of integers, not {value!r}")
        return [_coerce(name, v, int) for v in value]
    raise ConfigError(f"setting {name!r} has an unsupported type")


def base_path(base: str) -> Path:
    """The file a ``base`` entry names: a name is ``configs/<name>.toml`` (``quick``, ``release/08_ply2``); a
    relative path is taken against ``configs/``, an absolute one as it is."""
    path = Path(base).expanduser()
    if path.suffix != ".toml":
        path = path.with_name(path.name + ".toml")
    return path if path.is_absolute() else CONFIG_DIR / path


def bundled_configs() -> list[str]:
    """The names of the bundled configs (``quick``, ``release/08_ply2``, ...), sorted."""
    return sorted(p.relative_to(CONFIG_DIR).with_suffix("").as_posix() for p in CONFIG_DIR.rglob("*.toml"))


def config_path(config: str | Path) -> Path:
    """The file ``--config`` names: an existing file as it is, else a bundled config by name (``quick``,
    ``release/08_ply2``); ConfigError when it is neither."""
    given = Path(config).expanduser()
    if given.is_file():
        return given
    named = base_path(str(config))
    if named.is_file():
        return named
    top = [name for name in bundled_configs() if "/" not in name]
    raise ConfigError(f"config {str(config)!r} is neither a file nor a bundled config (bundled: {', '.join(top)}, "
                      "and release/NAME, experiments/NAME)")


def read_config_file(path: str | Path, _chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The values of a TOML config, its base's (and theirs, in turn) under its own; one sentence (ConfigError) for a
    missing or invalid file, a base that does not exist, or bases that lead back to a file already read."""
    p = config_path(path) if not _chain else Path(path)
    try:
        values = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not valid TOML ({exc})") from None
    if BASE_KEY not in values:
        return values
    base = values.pop(BASE_KEY)
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"config file {str(path)!r} has base {base!r}; it must name a config or a TOML file")
    chain = (*_chain, p.resolve())
    parent = base_path(base)
    if not parent.is_file():
        raise ConfigError(f"config file {str(path)!r} names base {base!r}, but {str(parent)!r} does not exist")
    if parent.resolve() in chain:
        raise ConfigError(f"config file {str(path)!r} names base {base!r}, which leads back to "
                          f"{str(parent.resolve())!r}: the bases form a cycle")
    return {**read_config_file(parent, chain), **values}


def build_config(path: str | None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """A TrainConfig from a TOML file or bundled config name (with its bases, see ``read_config_file``) and
    ``overrides``; unknown keys and wrong types are refused."""
    values: dict[str, Any] = {}
    if path is not None:
        values.update(read_config_file(path))
    values.update(overrides or {})
    hints = get_type_hints(TrainConfig)
    known = {f.name for f in fields(TrainConfig)}
    for key in values:
        if key not in known:
            raise ConfigError(f"unknown config key {key!r}; known keys are {', '.join(sorted(known))}")
    cfg = TrainConfig(**{k: _coerce(k, v, hints[k]) for k, v in values.items()})
    validate(cfg)
    return cfg


def validate(cfg: TrainConfig) -> None:
    """Refuse settings that cannot work, with one sentence."""
    from bgnet.features.registry import FEATURE_SETS  # here, not at the top: it compiles the encoders' kernels

    features = FEATURE_SETS.get(cfg.feature_version)
    checks = [
        (cfg.games > 0, "games must be positive"),
        (cfg.seed >= 0, f"seed must not be negative, got {cfg.seed}"),
        (cfg.batch_games > 0, "batch_games must be positive"),
        (0.0 <= cfg.lam <= 1.0, "lam must be between 0 and 1"),
        (cfg.lr > 0 and cfg.lr_final > 0, "lr and lr_final must be positive"),
        (cfg.minibatch > 0 and cfg.train_batch >= cfg.minibatch, "train_batch must be at least minibatch, both positive"),
        (cfg.epochs > 0, "epochs must be positive"),
        (0.0 <= cfg.exploration <= 1.0, "exploration must be between 0 and 1"),
        (all(h > 0 for h in cfg.hidden), "hidden sizes must be positive"),
        (cfg.activation in ("relu", "sigmoid", "tanh"), "activation must be relu, sigmoid or tanh"),
        (cfg.device in ("cpu", "cuda") or cfg.device.startswith("cuda:"), "device must be cpu or cuda"),
        (cfg.eval_every >= 0 and cfg.checkpoint_every > 0 and cfg.log_every > 0,
         "eval_every, checkpoint_every and log_every must be positive (eval_every may be 0)"),
        (cfg.max_plies >= 50, "max_plies must be at least 50"),
        (cfg.encoder in ("auto", "numba", "torch"), "encoder must be auto, numba or torch"),
        (features is not None, f"feature_version must be {' or '.join(str(v) for v in FEATURE_SETS)}"),
        (features is None or features.has_torch_encoder or cfg.encoder != "torch",
         f"feature_version {cfg.feature_version} has no torch encoder: use encoder numba or auto"),
        (cfg.kernel_threads >= 1 and cfg.threads >= 0, "kernel_threads must be at least 1 and threads at least 0"),
        (cfg.matmul_precision in ("highest", "high", "medium"), "matmul_precision must be highest, high or medium"),
        (cfg.backend in ("local", "ray"), "backend must be local or ray"),
        (cfg.workers >= 1 and cfg.sync_games >= 1, "workers and sync_games must be at least 1"),
        (cfg.backend == "ray" or (cfg.workers == 1 and not cfg.ray_address),
         "workers and ray_address need backend ray (--backend ray)"),
        (cfg.bearoff_database or cfg.backend == "local",
         "bearoff_database false needs backend local (Ray's self-play actors always stop at the bear-off database)"),
        (cfg.engine in ("host", "device"), f"engine must be host or device, not {cfg.engine!r}"),
        (cfg.engine != "device" or cfg.backend == "local",
         "engine device needs backend local (Ray's self-play actors run the host engine)"),
        (cfg.engine != "device" or features is None or features.has_torch_encoder,
         f"engine device needs a feature set with a torch encoder, and feature_version {cfg.feature_version} has none"),
        (cfg.device_kernels == "torch" or cfg.engine == "device",
         f"device_kernels {cfg.device_kernels} serves the device engine only: add --engine=device"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    problem = kernels_problem(cfg.device_kernels, cfg.device)
    if problem is not None:
        raise ConfigError(problem)
