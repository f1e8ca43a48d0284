"""n-ply evaluation of many positions with torch ops on any device: the twin of ``bgnet.play.search.evaluate_boards``.

The values are those of ``evaluate_boards`` at money play (``MONEY``), with a ``BgNet``
(``bgnet.trainer.inference.probs_fn_of``) or a ``NetSet`` (``NetSet.probs_of_boards``) as the
evaluator: 0-ply is the net's chances, exact for finished games; n-ply averages over the 21 rolls,
weighted 1/36 or 2/36, the opponent's (n - 1)-ply value of the afterstate of the mover's best play
by 0-ply money equity, turned round; a finished game is exact at every depth. A NetSet scores each
board with its kind's net, and pure bear-offs from its database, as ``NetSet.probs_of_boards`` does.

Each level is a few whole-batch ops: every roll of every live position, one
``generate_afterstates_torch`` call, the afterstates turned round, the net on all of them, a
segment argmax per (position, roll), then the next level on the chosen afterstates only (no move
filter: ``evaluate_boards`` picks every reply at 0 ply; with ``top`` K the last level values only each roll's K
plays pubeval ranks highest, as ``bgnet.trainer.labels.evaluate_pruned`` and the rounds' ``--label-top`` do).
Each level's distinct boards are valued once (``distinct_boards_torch``), and a NetSet's pure bear-offs are read
from its database without running a net on them, as the numba search does.
Positions are searched ``batch`` at a time
and the net runs on ``eval_batch`` rows at a time, so memory stays bounded. Probabilities are
summed in float64, as the numba search sums them; the net's float32 outputs differ from the numba
evaluator's by rounding only, so the values agree to about 1e-6 (a near tie between two plays may
pick the other one).
"""

from __future__ import annotations

import copy
from typing import Callable

import numpy as np
import torch

from bgnet.core.distinct_torch import distinct_boards_torch
from bgnet.core.game_torch import (flip_probs_torch, race_torch, segment_argmax_torch, swap_sides_torch,
                                   terminal_codes_torch, terminal_probs_torch)
from bgnet.core.movegen_torch import generate_afterstates_torch
from bgnet.features.kinds import KINDS
from bgnet.features.registry import feature_set
from bgnet.nets.bearoff_torch import DeviceBearoff
from bgnet.nets.model import BgNet, NetSet
from bgnet.nets.pubeval_torch import pubeval_top_torch
from bgnet.play.search import MONEY, ROLL_WEIGHTS, ROLLS, SearchError, check_ply

__all__ = ["LeafFn", "default_batch", "evaluate_boards_torch", "label_boards_torch", "leaf_fn",
           "position_kinds_torch"]

LeafFn = Callable[[torch.Tensor], torch.Tensor]
"""A net on a device: boards (M, 26) int8 there -> chances (M, 5) float32 there, each for its side on roll."""

ROLLED_ROWS = {"cpu": 1 << 16, "cuda": 1 << 20}
"""Rolled positions (positions x 21 ** ply) of one chunk at the deepest level, by device type: each gives
about 25 afterstates, so a chunk holds about 1.6 million afterstates on the CPU and 25 million on a GPU."""
EVAL_ROWS = {"cpu": 1 << 16, "cuda": 1 << 20}
"""Boards in one forward pass of the net, by device type."""


def default_batch(ply: int, device: torch.device) -> int:
    """Positions searched together at ``ply`` plies on ``device``: ``ROLLED_ROWS`` over 21 ** ply, at least 1."""
    return max(1, ROLLED_ROWS.get(device.type, ROLLED_ROWS["cpu"]) // len(ROLLS) ** ply)


# -- boards and chances as tensors --------------------------------------------------------------


def position_kinds_torch(boards: torch.Tensor) -> torch.Tensor:
    """The twin of ``bgnet.features.kinds.position_kinds``: (M,) int64, 0 contact, 1 crashed, 2 race."""
    b = boards.to(torch.int16)
    race = race_torch(b)
    mine, theirs = b.clamp(min=0), (-b).clamp(min=0)
    # Checkers out of the play: borne off, or on their owner's 1- and 2-points (his are my 24 and 23).
    dead_mine = 15 - mine[:, 1:26].sum(1) + mine[:, 1] + mine[:, 2]
    dead_theirs = 15 - theirs[:, 0:25].sum(1) + theirs[:, 24] + theirs[:, 23]
    crashed = (dead_mine >= 9) | (dead_theirs >= 9)
    return torch.where(race, 2, torch.where(crashed, 1, 0))



# -- the net on the device ----------------------------------------------------------------------


def _net_forward(net: BgNet, device: torch.device, eval_batch: int, kernels: str) -> LeafFn:
    """A copy of ``net`` on ``device`` with its feature set's torch encoder (``kernels``: its torch ops or Triton
    kernel), run ``eval_batch`` boards at a time."""
    net = copy.deepcopy(net).to(device).eval()
    dtype = next(net.parameters()).dtype
    encode = feature_set(net.config.feature_version).torch_encode_fn(kernels)

    def forward(boards: torch.Tensor) -> torch.Tensor:
        out = torch.empty((len(boards), 5), dtype=torch.float32, device=device)
        for s in range(0, len(boards), eval_batch):
            out[s:s + eval_batch] = net.infer(encode(boards[s:s + eval_batch]).to(dtype)).float()
        return out
    return forward


def _netset_forward(netset: NetSet, device: torch.device, eval_batch: int, kernels: str) -> LeafFn:
    """``NetSet.probs_of_boards`` on ``device``: each kind's net on its boards, pure bear-offs from the NetSet's
    database as device tensors (``DeviceBearoff``, rounded to float32 as the NetSet rounds them)."""
    forwards: dict[int, tuple[LeafFn, list[int]]] = {
        id(net): (_net_forward(net, device, eval_batch, kernels), []) for net in netset.nets.values()}
    for code, kind in enumerate(KINDS):
        forwards[id(netset.net_for(kind))][1].append(code)
    groups = [(fwd, torch.tensor(codes, device=device)) for fwd, codes in forwards.values() if codes]
    db = netset._database() if netset.bearoff else None  # the NetSet's own database, or False when it has none
    bearoff = DeviceBearoff(device, db, kernels) if db else None

    def forward(boards: torch.Tensor) -> torch.Tensor:
        out = torch.empty((len(boards), 5), dtype=torch.float32, device=device)
        kinds = position_kinds_torch(boards)
        if bearoff is not None:  # pure bear-offs from the database only: no net runs on them
            known = bearoff.is_bearoff(boards)
            rows = known.nonzero().squeeze(1)
            if len(rows):
                out[rows] = bearoff.probs(boards.index_select(0, rows))[1].float()
                kinds = torch.where(known, -1, kinds)
        for fwd, codes in groups:
            rows = torch.isin(kinds, codes).nonzero().squeeze(1)
            if len(rows):
                out[rows] = fwd(boards.index_select(0, rows))
        return out
    return forward


def leaf_fn(model: BgNet | NetSet, device: torch.device | str, eval_batch: int | None = None,
            kernels: str = "torch") -> LeafFn:
    """``model``'s chances on ``device`` (a copy of its weights there), exact for finished games: the twin of
    ``bgnet.play.search.leaf_probs`` with ``probs_fn_of(model)`` or ``NetSet.probs_of_boards``; with ``kernels``
    "fused" the features and bear-off lookups from their Triton kernels (``bgnet.core.device_kernels``)."""
    device = torch.device(device)
    rows = eval_batch or EVAL_ROWS.get(device.type, EVAL_ROWS["cpu"])
    if isinstance(model, NetSet):
        forward = _netset_forward(model, device, rows, kernels)
    elif isinstance(model, BgNet):
        forward = _net_forward(model, device, rows, kernels)
    else:
        raise SearchError(f"the torch search needs a BgNet or a NetSet, got {type(model).__name__}")

    def leaf(boards: torch.Tensor) -> torch.Tensor:
        out = forward(boards)
        codes = terminal_codes_torch(boards)
        return torch.where((codes != 0).unsqueeze(1), terminal_probs_torch(codes), out)
    return leaf


# -- the search ---------------------------------------------------------------------------------


def _distinct_leaf(leaf: LeafFn, boards: torch.Tensor) -> torch.Tensor:
    """``leaf(boards)`` valuing each distinct board once (``distinct_boards_torch``): a last level reaches the same
    leaf by several paths. A batch's rows may change a torch net's last bits, as any change of its batch does."""
    first, inverse = distinct_boards_torch(boards)
    if len(first) == len(boards):
        return leaf(boards)
    return leaf(boards.index_select(0, first)).index_select(0, inverse)


def _search(leaf: LeafFn, boards: torch.Tensor, ply: int, dice: torch.Tensor,
            weights: torch.Tensor, top: int = 0) -> torch.Tensor:
    """n-ply chances (M, 5) float64 of boards (M, 26) int8 for each side on roll (``evaluate_boards``, money; with
    ``top`` above 0, ``evaluate_pruned``: the last level's plays among pubeval's best ``top`` of each roll)."""
    if ply == 0:
        return leaf(boards).double()
    codes = terminal_codes_torch(boards)
    out = terminal_probs_torch(codes).double()
    live = (codes == 0).nonzero().squeeze(1)
    n = len(live)
    if n == 0:
        return out
    rolled = boards.index_select(0, live).repeat_interleave(len(ROLLS), dim=0)  # board-major, every roll
    after, offsets = generate_afterstates_torch(rolled, dice.repeat(n, 1))
    if ply == 1 and top > 0:  # the last level: the net judges pubeval's best few plays of each roll only
        rows, offsets = pubeval_top_torch(after, offsets, top)
        after = after.index_select(0, rows)
    cand = swap_sides_torch(after)  # the opponent on roll
    cand_probs = _distinct_leaf(leaf, cand).double()  # for the opponent
    mover = flip_probs_torch(cand_probs)
    values = MONEY.const + mover @ torch.tensor(MONEY.weights, dtype=torch.float64, device=boards.device)
    choice = segment_argmax_torch(values, offsets)
    if ply == 1:
        per_roll = mover.index_select(0, choice)
    else:
        per_roll = flip_probs_torch(_search(leaf, cand.index_select(0, choice), ply - 1, dice, weights, top))
    out[live] = (per_roll.view(n, len(ROLLS), 5) * weights.view(1, -1, 1)).sum(1)
    return out


@torch.inference_mode()
def evaluate_boards_torch(leaf: LeafFn, boards: np.ndarray | torch.Tensor, ply: int,
                          device: torch.device | str = "cpu", batch: int | None = None, top: int = 0) -> np.ndarray:
    """n-ply chances (N, 5) float64 for boards (N, 26), each for its side on roll, with ``leaf`` as the 0-ply
    evaluator on ``device``: ``batch`` positions at a time (default ``default_batch``); ``top`` above 0 values only
    pubeval's best ``top`` plays of each roll at the last level (``bgnet.trainer.labels.evaluate_pruned``)."""
    ply = check_ply(ply)
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise SearchError(f"top must be 0 (every play) or a number of plays, got {top!r}")
    device = torch.device(device)
    step = batch if batch is not None else default_batch(ply, device)
    if step < 1:
        raise SearchError(f"batch must be at least 1, got {step}")
    if isinstance(boards, torch.Tensor):
        boards = boards.detach().cpu().numpy()
    arr = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
    dice = torch.tensor(ROLLS, dtype=torch.int8, device=device)
    weights = torch.from_numpy(ROLL_WEIGHTS).to(device)
    out = np.zeros((len(arr), 5), np.float64)
    for s in range(0, len(arr), step):
        part = torch.from_numpy(arr[s:s + step]).to(device)
        out[s:s + step] = _search(leaf, part, ply, dice, weights, top).cpu().numpy()
    return out


def label_boards_torch(model: BgNet | NetSet, boards: np.ndarray | torch.Tensor, ply: int,
                       device: torch.device | str = "cpu", batch: int | None = None,
                       eval_batch: int | None = None, top: int = 0, kernels: str = "torch") -> np.ndarray:
    """n-ply chances (N, 5) float64 of boards (N, 26) by ``model`` (a BgNet or a NetSet) searched on ``device``:
    ``bgnet.play.search.evaluate_boards(probs_fn_of(model) or model.probs_of_boards, boards, ply)``, or with
    ``top`` above 0 ``bgnet.trainer.labels.evaluate_pruned(..., ply, top)``, computed ``batch`` positions at a
    time (default ``default_batch``) with forward passes of ``eval_batch`` boards, through ``kernels``' encoder
    and bear-off lookups (``leaf_fn``)."""
    ply = check_ply(ply)
    return evaluate_boards_torch(leaf_fn(model, device, eval_batch, kernels), boards, ply, device, batch, top)
