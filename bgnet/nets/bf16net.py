"""A net's forward pass in bfloat16 through torch's oneDNN products (AMX tiles on CPUs that have them).

The fused float32 kernel (``bgnet.nets._net_kernels``) values a board of the release in about 3.3-7 µs on one
core (the VM varies). oneDNN multiplies bfloat16 matrices on AMX at some 500-900 GMAC/s, so in large batches (duels,
rollouts, search leaves) the same net costs 0.44-0.46 times as much (``python bench/net_cost.py``). What it costs
in play: the chances move by about 0.001 in equity from the float32 ones (docs/TRAINING.md, "Cheaper evaluators"),
and the choice changes in about 1% of decisions, each between plays within a few thousandths. Opt-in: ``bf16:SPEC``
players and ``--precision bfloat16``.

On CPUs without AMX it gives the same kind of chances at more than the float32 kernel's cost (``has_amx``; the
command line says so, ``precision_note``): 1.1x in batches of 40,000 and 6.7x in batches of 32 on an AMD EPYC with
AVX-512's bfloat16 instructions, 2x on an Intel one, 11x with AVX2 alone.

Each board's chances are its own, as the float32 kernel's are. oneDNN's bits for a row depend on the shape of the
product and on its thread count, not on the other rows: so boards go through the net in blocks of exactly
``BLOCK`` rows (the last padded with empty rows) on one torch thread, and a board has the same chances alone or in
any batch, whatever the number of workers. They are the same on another machine only if its CPU and torch build
choose the same kernels (an AMX machine and one without differ in the last bits).

The hidden layers run in bfloat16 (each product, bias and activation fused in one oneDNN call), the output layer
in float32: its five sums decide the chances, and rounding them to bfloat16 would double the error. The output
layer is bgnet's own kernel (``bgnet.nets._net_kernels.output_sigmoids``), not torch's ``addmm``: on an AMD EPYC,
MKL's float32 product gave a few rows in a thousand other last bits when their place in the block changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.features.registry import encode
from bgnet.nets._net_kernels import output_sigmoids
from bgnet.nets.fastnet import NumpyNet, NumpyNetSet, chances_of_outputs

__all__ = ["BLOCK", "PRECISIONS", "Bf16Net", "Bf16NetError", "check_precision", "cpu_model", "has_amx",
           "precision_note", "with_precision"]

BLOCK = 256
"""Boards a product takes, always (the last block is padded): oneDNN's bits for a row depend on the product's
shape, so a fixed shape makes each board's chances independent of its batch. 256 rows keep AMX's tiles full
(at 128 a board costs a third more; padding a single board costs one block, about 0.6 ms)."""

PRECISIONS = ("float32", "bfloat16")
"""The arithmetic a bgnet net can be evaluated in: float32 (the fused kernel, the default) or bfloat16 (this
module)."""


class Bf16NetError(BgnetError):
    """A precision bgnet does not have, or a bfloat16 evaluation asked of something that is not a bgnet net."""


def _torch() -> Any:
    """torch, on one thread (imported here: the float32 path never needs it)."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)  # oneDNN's bits depend on its thread count; bgnet's workers all run one
    return torch


def _cpuinfo_field(name: str) -> str | None:
    """The value of the first ``name`` line of Linux's ``/proc/cpuinfo`` (the first core's), or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == name:
                    return value.strip()
    except OSError:
        pass
    return None


def has_amx() -> bool:
    """Whether this CPU has AMX tiles (Linux's ``amx_tile`` flag), where bfloat16 is the cheaper arithmetic: without
    them oneDNN's bfloat16 products cost 1.1-11 times the float32 kernel."""
    return "amx_tile" in (_cpuinfo_field("flags") or "").split()


def cpu_model() -> str:
    """The CPU's name as Linux gives it (``model name``), else ``platform.processor()``: benchmarks print it beside
    ``has_amx``, since which arithmetic is cheaper, and by how much, depends on it."""
    import platform

    return _cpuinfo_field("model name") or platform.processor() or "unknown CPU"


def precision_note(precision: str, amx: bool | None = None) -> str | None:
    """One sentence for a user who asked for bfloat16 on a CPU without AMX tiles (``amx``: ``has_amx()`` unless
    given), where it is slower than the default float32; None otherwise."""
    if precision != "bfloat16" or (has_amx() if amx is None else amx):
        return None
    return ("this CPU has no AMX tiles, so bfloat16 is slower here than the default float32 "
            "(it is cheaper only on CPUs with AMX)")


def _fused_layers(torch: Any, w: Any, b: Any, activation: str) -> bool:
    """Whether oneDNN's fused product, bias and activation (``mkldnn._linear_pointwise``) is there and runs on
    this CPU (it refuses bfloat16 on CPUs without AVX-512)."""
    mkldnn = getattr(torch.ops, "mkldnn", None)
    if not (torch.backends.mkldnn.is_available() and mkldnn is not None and hasattr(mkldnn, "_linear_pointwise")):
        return False
    return _fused_layer_runs(torch, mkldnn, w, b, activation)


def _fused_layer_runs(torch: Any, mkldnn: Any, w: Any, b: Any, activation: str) -> bool:
    """Whether the fused layer takes these weights (plain or packed): one call on a block of zeros."""
    try:
        mkldnn._linear_pointwise(torch.zeros((BLOCK, w.shape[1]), dtype=torch.bfloat16), w, b, activation, [], "")
    except RuntimeError:
        return False
    return True


def _padded_width(inputs: int) -> int:
    """The first layer's inputs rounded up to a multiple of 32 with zero columns: AMX takes bfloat16 pairs in
    rows of 32, and a ragged last tile (246 inputs) made that layer take 1.5 times as long. Zeros add nothing:
    the chances are the same bits."""
    return -(-inputs // 32) * 32


def _packed_layers(torch: Any, hidden: list[tuple[Any, Any]], activation: str) -> list[tuple[Any, Any]]:
    """The hidden layers' weights reordered once into oneDNN's blocked layout for ``BLOCK`` rows (otherwise each
    product reorders them again, some 20-40 µs a call); the same bits. As given where torch lacks the op or the
    fused layer refuses the packed weights."""
    mkldnn = getattr(torch.ops, "mkldnn", None)
    reorder = getattr(mkldnn, "_reorder_linear_weight", None)
    if mkldnn is None or reorder is None:
        return hidden
    try:
        packed = [(reorder(w, BLOCK), b) for w, b in hidden]
    except RuntimeError:
        return hidden
    return packed if all(_fused_layer_runs(torch, mkldnn, w, b, activation) for w, b in packed) else hidden


class Bf16Net:
    """``NumpyNet``'s net valued in bfloat16 (hidden layers) and float32 (output layer), ``BLOCK`` boards a
    product; the same ``probs_of_boards`` as ``NumpyNet``."""

    def __init__(self, net: NumpyNet) -> None:
        torch = _torch()
        layers = [(w, b) for w, b in net.layers if w.shape[0]]  # an identity layer passes the ReLU'd units on
        self.feature_version = net.feature_version
        self.activation = net.activation
        self._hidden = [(torch.from_numpy(np.ascontiguousarray(w.T)).to(torch.bfloat16),
                         torch.from_numpy(b.copy()).to(torch.bfloat16)) for w, b in layers[:-1]]
        self._features = self._inputs = layers[0][0].shape[0]
        if self._hidden:
            self._inputs = _padded_width(self._inputs)
            w_first, b_first = self._hidden[0]
            padded = torch.zeros((w_first.shape[0], self._inputs), dtype=torch.bfloat16)
            padded[:, :w_first.shape[1]] = w_first
            self._hidden[0] = (padded, b_first)
        w_out, b_out = layers[-1]
        self._w_out = np.ascontiguousarray(w_out, np.float32)  # (inputs, 5)
        self._b_out = b_out.astype(np.float32)
        self._fused = bool(self._hidden) and _fused_layers(torch, *self._hidden[0], net.activation)
        self._pack()

    def _pack(self) -> None:
        """The hidden weights the products take: packed once where the fused layer runs (``_packed_layers``)."""
        self._packed = _packed_layers(_torch(), self._hidden, self.activation) if self._fused else self._hidden

    def __getstate__(self) -> dict[str, Any]:
        """The state without the packed weights (oneDNN's own layout does not pickle): rebuilt on arrival."""
        state = dict(self.__dict__)
        del state["_packed"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pack()

    def _hidden_layer(self, torch: Any, x: Any, w: Any, b: Any) -> Any:
        """``act(x @ w.T + b)`` in bfloat16: one fused oneDNN call where torch has it, else a product and an
        activation (as reproducible; a method, not a stored function, so that the net pickles for workers)."""
        if self._fused:
            return torch.ops.mkldnn._linear_pointwise(x, w, b, self.activation, [], "")
        act = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid}[self.activation]
        return act(torch.nn.functional.linear(x, w, b))

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        arr = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
        n = len(arr)
        if n == 0:
            return np.zeros((0, 5), np.float32)
        torch = _torch()
        padded = np.zeros((-(-n // BLOCK) * BLOCK, self._inputs), np.float32)
        encode(arr, version=self.feature_version, out=padded[:n])  # the first columns; the zeros stay
        inputs = torch.from_numpy(padded).to(torch.bfloat16)
        s = np.empty((len(padded), 5), np.float32)
        with torch.no_grad():
            for i in range(0, len(padded), BLOCK):
                h = inputs[i:i + BLOCK]
                for w, b in (self._packed if self._fused else self._hidden):
                    h = self._hidden_layer(torch, h, w, b)
                output_sigmoids(np.ascontiguousarray(h.float().numpy().T), self._w_out, self._b_out, s[i:i + BLOCK])
        return chances_of_outputs(s[:n])

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        """The same as ``probs_of_boards``."""
        return self.probs_of_boards(boards)


def check_precision(precision: str) -> str:
    """``precision`` if bgnet has it (``PRECISIONS``); Bf16NetError otherwise."""
    if precision not in PRECISIONS:
        raise Bf16NetError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return precision


def with_precision(net: NumpyNet | NumpyNetSet, precision: str) -> NumpyNet | NumpyNetSet | Bf16Net:
    """``net`` itself for float32, its bfloat16 twin for bfloat16 (nets by kind: each kind's net, shared ones
    still shared)."""
    if check_precision(precision) == "float32":
        return net
    if not isinstance(net, NumpyNetSet):
        return Bf16Net(net)
    twins: dict[int, Bf16Net] = {}
    for kind_net in net.nets.values():
        if not isinstance(kind_net, NumpyNet):
            raise Bf16NetError(f"nets by kind hold a {type(kind_net).__name__}, not a NumpyNet to value in bfloat16")
        twins.setdefault(id(kind_net), Bf16Net(kind_net))
    return NumpyNetSet({kind: twins[id(kind_net)] for kind, kind_net in net.nets.items()})
