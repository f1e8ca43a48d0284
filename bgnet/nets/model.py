"""The PyTorch evaluator and its self-describing checkpoints.

``BgNet`` maps encoded positions to five probabilities for the side on roll. The
outputs are built so that they stay consistent: win = s(a), win gammon =
win * s(b), win backgammon = win gammon * s(c), and the same for losses with
1 - win, so backgammon <= gammon <= win always holds.
"""

from __future__ import annotations

import io
import os
import subprocess
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from bgnet.core.atomic import atomic_write, default_permissions
from bgnet.core.errors import BgnetError
from bgnet.features.kinds import KINDS, rows_by_scorer
from bgnet.features.registry import FEATURE_SETS, FEATURE_VERSIONS, encode, num_features
from bgnet.core.probs import equities, flip_probs  # noqa: F401  (re-exported: numpy helpers live in bgnet.core.probs)

CHECKPOINT_FORMAT = 1


class CheckpointError(BgnetError):
    """A checkpoint file that is missing, corrupt or does not fit this version of bgnet."""


class ModelError(BgnetError):
    """A net that cannot be built, widened, averaged or joined as asked."""


@dataclass(frozen=True)
class ModelConfig:
    """Shape of the evaluator network."""

    hidden: tuple[int, ...] = (128,)
    """Sizes of the hidden layers."""
    activation: str = "relu"
    """Hidden activation: "relu", "sigmoid" or "tanh"."""
    num_features: int = FEATURE_SETS[1].width
    """Input width (``bgnet.features.registry``)."""
    feature_version: int = 1
    """Version of the input encoding the net was trained on (it selects the encoder)."""

    @classmethod
    def for_features(cls, hidden: tuple[int, ...] | list[int], activation: str = "relu", feature_version: int = 1) -> "ModelConfig":
        """A config whose input width fits ``feature_version``."""
        return cls(hidden=tuple(int(h) for h in hidden), activation=activation,
                   num_features=num_features(feature_version), feature_version=feature_version)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise CheckpointError(f"unknown model settings {sorted(unknown)}")
        data = dict(data)
        if "hidden" in data:
            data["hidden"] = tuple(int(h) for h in data["hidden"])
        return cls(**data)


_ACTIVATIONS = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}


class BgNet(nn.Module):
    """Multi-layer perceptron with five consistent sigmoid outputs."""

    def __init__(self, config: ModelConfig = ModelConfig()) -> None:
        super().__init__()
        if config.activation not in _ACTIVATIONS:
            raise ModelError(f"activation {config.activation!r} is not one of {sorted(_ACTIVATIONS)}")
        self.config = config
        layers: list[nn.Module] = []
        width = config.num_features
        for h in config.hidden:
            layers += [nn.Linear(width, h), _ACTIVATIONS[config.activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, features) -> (N, 5): win, win gammon, win backgammon, lose gammon, lose backgammon."""
        return self._chances(self.head(self.body(x)))

    def infer(self, x: torch.Tensor) -> torch.Tensor:
        """``forward`` without gradients, each ReLU layer's bias and activation fused into its product
        (``torch._addmm_activation``: cuBLASLt's ReLU epilogue on CUDA, so the hidden activations are written once
        instead of three times; the same numbers as ``forward`` on the CPU)."""
        fused = getattr(torch, "_addmm_activation", None)
        with torch.no_grad():
            if self.config.activation != "relu" or fused is None:
                return self.forward(x)
            h = x
            for layer in self.linears()[:-1]:
                h = fused(layer.bias, h, layer.weight.t())
            return self._chances(self.head(h))

    @staticmethod
    def _chances(logits: torch.Tensor) -> torch.Tensor:
        """The five outputs' logits (N, 5) -> the five chances, each conditional output times the ones it refines."""
        s = torch.sigmoid(logits)
        win = s[:, 0]
        wg = win * s[:, 1]
        wbg = wg * s[:, 2]
        lg = (1.0 - win) * s[:, 3]
        lbg = lg * s[:, 4]
        return torch.stack((win, wg, wbg, lg, lbg), dim=1)

    def linears(self) -> list[nn.Linear]:
        """The net's linear layers in order: the hidden ones, then the head."""
        return [m for m in self.body if isinstance(m, nn.Linear)] + [self.head]

    def numpy_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each linear layer's (weight (out, in), bias) as numpy copies: what ``bgnet.nets.fastnet.NumpyNet`` takes."""
        return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in self.linears()]


def placement(net: nn.Module) -> tuple[torch.device, torch.dtype]:
    """The device and dtype of ``net``'s weights: where its inputs must go and where a net built from it belongs."""
    weight = next(net.parameters())
    return weight.device, weight.dtype


def git_revision() -> str:
    """The current git commit of the source tree, or "unknown"."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).resolve().parent).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _tensors(obj: Any) -> Any:
    """``obj`` with numpy arrays turned into tensors, so that ``weights_only`` loading accepts it."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, dict):
        return {k: _tensors(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_tensors(v) for v in obj)
    return obj


def save_checkpoint(path: str | os.PathLike[str], net: BgNet, **extra: Any) -> None:
    """Write ``net`` and ``extra`` metadata atomically (temp file in the same folder, then rename).

    numpy arrays in ``extra`` are stored as tensors (read them back with ``np.asarray``).
    """
    path = Path(path)
    extra = _tensors(extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": CHECKPOINT_FORMAT,
        "model": net.state_dict(),
        "model_config": {**asdict(net.config), "hidden": list(net.config.hidden)},
        "git_sha": git_revision(),
        **extra,
    }
    with atomic_write(path, permissions=default_permissions(), fsync=True) as fh:
        torch.save(payload, fh)


def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a checkpoint dict safely (``weights_only=True``); one clear sentence when it cannot be used."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        data = path.read_bytes()
        ckpt = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a bgnet checkpoint ({type(exc).__name__})") from None
    if not isinstance(ckpt, dict) or "model" not in ckpt or "model_config" not in ckpt:
        raise CheckpointError(f"checkpoint {str(path)!r} is not a bgnet checkpoint (no model or model_config)")
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} has format {ckpt.get('format')!r}; this bgnet reads format {CHECKPOINT_FORMAT}")
    return ckpt


def net_from_checkpoint(ckpt: dict[str, Any], source: str = "checkpoint") -> BgNet:
    """Rebuild the network described by a checkpoint dict."""
    config = ModelConfig.from_dict(ckpt["model_config"])
    if config.feature_version not in FEATURE_SETS or config.num_features != num_features(config.feature_version):
        raise CheckpointError(
            f"{source} was trained on features version {config.feature_version} ({config.num_features} inputs); "
            f"this bgnet computes versions {', '.join(f'{v} ({num_features(v)} inputs)' for v in FEATURE_VERSIONS)}")
    net = BgNet(config)
    try:
        net.load_state_dict(ckpt["model"])
    except (RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{source} weights do not match its model description ({str(exc).splitlines()[0]})") from None
    net.eval()
    return net


def load_net(path: str | os.PathLike[str]) -> BgNet:
    """The network stored in a checkpoint file, ready for evaluation on the CPU."""
    return net_from_checkpoint(read_checkpoint(path), f"checkpoint {str(path)!r}")


class NetEvaluator:
    """Scores positions with a BgNet in batches: probabilities for each side on roll."""

    def __init__(self, net: BgNet, device: str | torch.device = "cpu") -> None:
        self.net = net.to(device).eval()
        self.device = torch.device(device)

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike[str], device: str = "cpu") -> "NetEvaluator":
        return cls(load_net(path), device)

    @torch.inference_mode()
    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        if len(boards) == 0:
            return np.zeros((0, 5), np.float32)
        x = torch.from_numpy(encode(boards, version=self.net.config.feature_version)).to(*placement(self.net))
        return self.net(x).float().cpu().numpy()

    def evaluate(self, positions: list) -> list:
        """A Probs for each Position, for its side on roll."""
        from bgnet.core.probs import Probs

        boards = np.array([p.board for p in positions], dtype=np.int8).reshape(-1, 26)
        return [Probs(*map(float, row)) for row in self.probs_of_boards(boards)]


class NetSet:
    """Nets by kind of position (``bgnet.features.kinds.KINDS``), with the exact bear-off database at the end.

    ``nets`` must hold "contact"; a kind without its own net is scored by the
    contact net. Each call classifies the boards, runs one forward pass per net on
    its rows, and then, when ``bearoff`` is true and ``bgnet.nets.bearoff`` has its
    database, replaces the rows of pure bear-offs by their exact chances.
    """

    def __init__(self, nets: dict[str, BgNet], bearoff: bool = True) -> None:
        unknown = set(nets) - set(KINDS)
        if "contact" not in nets or unknown:
            raise ModelError(f"a NetSet needs a contact net and only kinds from {KINDS} (got {sorted(nets)})")
        self.nets = {k: n.eval() for k, n in nets.items()}
        self.bearoff = bearoff
        self._db: Any = None

    def net_for(self, kind: str) -> BgNet:
        """The net that scores positions of ``kind``."""
        return self.nets.get(kind, self.nets["contact"])

    def _database(self) -> Any:
        if self._db is None:
            try:
                from bgnet.nets import bearoff

                self._db = bearoff.database()
            except Exception:  # no database here (not built, unwritable cache): the nets answer alone
                self._db = False
        return self._db

    @torch.inference_mode()
    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll, from the net of its kind."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
        out = np.zeros((len(boards), 5), np.float32)
        if len(boards) == 0:
            return out
        for net, rows in rows_by_scorer(boards, [self.net_for(k) for k in KINDS]):  # one forward pass per net
            x = torch.from_numpy(encode(boards[rows], version=net.config.feature_version)).to(*placement(net))
            out[rows] = net(x).float().cpu().numpy()
        if self.bearoff and self._database():
            mask, exact = self._db.exact_probs(boards)
            out[mask] = np.asarray(exact, np.float32)[mask]
        return out

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        """The same as ``probs_of_boards`` (a plain boards -> probabilities function)."""
        return self.probs_of_boards(boards)


def save_netset(path: str | os.PathLike[str], netset: NetSet, **extra: Any) -> None:
    """One checkpoint for a NetSet: the contact net as the file's main ``model`` (so that single-net readers
    still load it), the others under ``nets``, and whether the bear-off database is used."""
    others = {k: {"model": n.state_dict(), "model_config": {**asdict(n.config), "hidden": list(n.config.hidden)}}
              for k, n in netset.nets.items() if k != "contact"}
    save_checkpoint(path, netset.nets["contact"], nets=others, bearoff=netset.bearoff, **extra)


def netset_from_checkpoint(ckpt: dict[str, Any], source: str = "checkpoint") -> NetSet:
    """The NetSet of a checkpoint dict; a single-net checkpoint gives a set of just its contact net."""
    nets = {"contact": net_from_checkpoint(ckpt, source)}
    for kind, entry in dict(ckpt.get("nets", {})).items():
        if kind not in KINDS or not isinstance(entry, dict) or "model" not in entry or "model_config" not in entry:
            raise CheckpointError(f"{source} has a net {kind!r} that is not one of {KINDS} with its model")
        nets[kind] = net_from_checkpoint(entry, f"{source} ({kind} net)")
    return NetSet(nets, bool(ckpt.get("bearoff", True)))


def load_netset(path: str | os.PathLike[str]) -> NetSet:
    """The NetSet stored in a checkpoint file (one net or several), ready on the CPU."""
    return netset_from_checkpoint(read_checkpoint(path), f"checkpoint {str(path)!r}")


def widen(net: BgNet, feature_version: int) -> BgNet:
    """A copy of ``net`` on a later feature version that computes the same function: the new inputs
    (appended after the old ones) start with zero weights, so training starts from what ``net`` knows."""
    old, new = net.config.num_features, num_features(feature_version)
    if feature_version < net.config.feature_version or new < old:
        raise ModelError(f"cannot widen a version {net.config.feature_version} net to version {feature_version}")
    config = ModelConfig(hidden=net.config.hidden, activation=net.config.activation, num_features=new,
                         feature_version=feature_version)
    wide = BgNet(config).to(*placement(net))
    state = {k: v.clone() for k, v in net.state_dict().items()}
    first = "body.0.weight" if net.config.hidden else "head.weight"
    w = torch.zeros(state[first].shape[0], new, dtype=state[first].dtype, device=state[first].device)
    w[:, :old] = state[first]
    state[first] = w
    wide.load_state_dict(state)
    return wide.eval()


def check_widening(old: Sequence[int], new: Sequence[int]) -> None:
    """ModelError unless hidden widths ``new`` can be reached from ``old`` by ``widen_hidden``."""
    if len(new) != len(old) or any(n < o for n, o in zip(new, old)):
        raise ModelError(f"hidden {list(new)} must have {len(old)} layers, each at least as wide as {list(old)}")


def widen_hidden(net: BgNet, hidden: Sequence[int], seed: int = 0, noise: float = 1e-4) -> BgNet:
    """A copy of ``net`` with wider hidden layers that computes (almost) the same function (Net2Net).

    Each new unit copies a randomly chosen unit of its layer (incoming weights and
    bias), and the next layer's weights of a unit and its copies are divided by their
    count, so that for any activation the outputs stay those of ``net``; then every
    unit's incoming weights get ``noise`` times their mean size of Gaussian noise, so
    that copies can drift apart (``noise=0`` keeps the function exactly). The copy lies on ``net``'s
    device with its dtype; the random choices are drawn on the CPU, so a seed gives the same net anywhere.
    """
    old = list(net.config.hidden)
    new = [int(h) for h in hidden]
    check_widening(old, new)
    gen = torch.Generator().manual_seed(seed)
    config = ModelConfig(hidden=tuple(new), activation=net.config.activation, num_features=net.config.num_features,
                         feature_version=net.config.feature_version)
    device, dtype = placement(net)
    wide = BgNet(config).to(device, dtype)
    linears_old = net.linears()
    linears_new = wide.linears()
    incoming = torch.arange(net.config.num_features)  # which old input each new input of the layer copies (CPU)
    counts = torch.ones(net.config.num_features)
    with torch.no_grad():
        for i, (lo, ln) in enumerate(zip(linears_old, linears_new)):
            # inputs that are copies share their unit's weight
            w = lo.weight[:, incoming.to(device)] / counts.to(device, dtype)[None, :]
            if i < len(old):
                pick = torch.cat([torch.arange(old[i]), torch.randint(0, old[i], (new[i] - old[i],), generator=gen)])
                scale = w.abs().mean() if w.numel() else w.new_zeros(())
                jitter = torch.randn(len(pick), w.shape[1], generator=gen).to(device, dtype)
                ln.weight.copy_(w[pick.to(device)] + noise * scale * jitter)
                ln.bias.copy_(lo.bias[pick.to(device)])
                incoming, counts = pick, torch.bincount(pick, minlength=old[i]).float()[pick]
            else:
                ln.weight.copy_(w)
                ln.bias.copy_(lo.bias)
    return wide.eval()


def average_nets(nets: Sequence[BgNet]) -> BgNet:
    """The net whose every weight is the mean of ``nets``' (weight averaging of one run's checkpoints).

    Checkpoints of one TD run a few thousand games apart lie in one basin, and the noise of
    a constant learning rate averages out; nets of different configs are refused. The mean lies on the first
    net's device with its dtype.
    """
    if not nets:
        raise ModelError("no nets to average")
    config = nets[0].config
    for n in nets[1:]:
        if n.config != config:
            raise ModelError(f"nets to average must share one config: {n.config} differs from {config}")
    device, dtype = placement(nets[0])
    mean = BgNet(config).to(device, dtype)
    states = [n.state_dict() for n in nets]
    with torch.no_grad():
        mean.load_state_dict({k: torch.stack([s[k].to(device, dtype) for s in states]).mean(0) for k in states[0]})
    return mean.eval()


def committee_net(nets: Sequence[BgNet]) -> BgNet:
    """One net that computes the committee of ``nets``: the mean of their heads' outputs before the sigmoids.

    The hidden layers are laid side by side with block-diagonal weights, so each member keeps its own
    units, and the head averages the members' heads. Unlike ``average_nets`` the members need not lie in
    one basin (nor share widths): the result is their exact committee, a wider net that every reader
    loads and that training can go on from. The nets must share inputs, depth and activation; the result lies
    on the first net's device with its dtype.
    """
    if not nets:
        raise ModelError("no nets to join")
    first = nets[0].config
    for n in nets[1:]:
        c = n.config
        if (c.feature_version, c.num_features, c.activation, len(c.hidden)) != \
                (first.feature_version, first.num_features, first.activation, len(first.hidden)):
            raise ModelError(f"nets to join must share inputs, depth and activation: {c} differs from {first}")
    depth = len(first.hidden)
    config = ModelConfig(hidden=tuple(sum(n.config.hidden[i] for n in nets) for i in range(depth)),
                         activation=first.activation, num_features=first.num_features,
                         feature_version=first.feature_version)
    device, dtype = placement(nets[0])
    joined = BgNet(config).to(device, dtype)
    with torch.no_grad():
        for i, layer in enumerate(joined.linears()):
            layer.weight.zero_()
            layer.bias.zero_()
            row = col = 0  # where this member's block starts in the layer's outputs and inputs
            for member in nets:
                w, b = (p.to(device, dtype) for p in (member.linears()[i].weight, member.linears()[i].bias))
                rows = slice(None) if i == depth else slice(row, row + w.shape[0])
                cols = slice(None) if i == 0 else slice(col, col + w.shape[1])
                share = 1.0 / len(nets) if i == depth else 1.0
                layer.weight[rows, cols] += share * w
                layer.bias[rows] += share * b
                row += w.shape[0]
                col += w.shape[1]
    return joined.eval()
