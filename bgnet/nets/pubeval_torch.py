"""Pubeval's score and its best plays of each position with torch ops on any device: the twins of
``bgnet.nets.pubeval.pubeval_scores`` (race decided per afterstate) and of the rollout kernels' pubeval ranking
(``bgnet.sim._rollout_kernels.pubeval_top_kernel``), for the torch search's pruned last level.

Scores are pubeval's table form (``pubeval_tables``) summed point by point in float64 in the rollout kernels'
order (``bgnet.sim._rollout_kernels.pubeval_row``), so they are bit-equal to it and a tie between two plays is a
tie on every device.
"""

from __future__ import annotations

import torch

from bgnet.core.game_torch import race_torch, segment_ids
from bgnet.nets.pubeval import WIN_SCORE, pubeval_tables

__all__ = ["pubeval_scores_torch", "pubeval_top_torch"]

_TABLES: dict[torch.device, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
"""Per device: pubeval's tables (2 * 24 * 31,) float64, flattened, its extra weights (2, 2) float64, and (24,) int32
where each block's 31 entries start in a weight vector's table, plus 15 (a count of -15 reads the first)."""

_POINTS = 24 * 31
"""Entries of one weight vector's table."""


def _tables(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if device not in _TABLES:
        tables, extra = pubeval_tables()
        _TABLES[device] = (torch.from_numpy(tables.reshape(-1).copy()).to(device),
                           torch.from_numpy(extra.copy()).to(device),
                           torch.arange(15, _POINTS, 31, dtype=torch.int32, device=device))
    return _TABLES[device]


def pubeval_scores_torch(after: torch.Tensor) -> torch.Tensor:
    """Pubeval scores (M,) float64 of afterstates (M, 26), each seen from the side that just moved: the race
    weights where contact is over (decided per row), ``WIN_SCORE`` where the mover has borne off all 15."""
    b = after.to(torch.int16)
    tables, extra, block_offsets = _tables(b.device)
    in_play = b.clamp(min=0).sum(1)
    vector = torch.where(race_torch(b), 0, 1)  # index 0: the race weights, 1: the contact ones
    # Every block's table index at once, block-major (24, M) int32 so that each block's terms are one contiguous
    # row: block k reads the count on point 24 - k.
    index = (b[:, 1:25].flip(1).to(torch.int32) + (vector * _POINTS).to(torch.int32).unsqueeze(1)
             + block_offsets).t().contiguous()
    terms = tables.index_select(0, index.view(-1)).view(24, len(b))
    score = torch.zeros(len(b), dtype=torch.float64, device=b.device)
    for block in range(24):  # the numba kernel's order of additions: the same bits
        score = score + terms[block]
    score = score + extra[vector, 0] * (-b[:, 0]) / 2.0 + extra[vector, 1] * (15 - in_play) / 15.0
    return torch.where(in_play == 0, WIN_SCORE, score)


def pubeval_top_torch(after: torch.Tensor, offsets: torch.Tensor, keep: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows, new_offsets)``: the indices (ascending) of each segment's ``keep`` plays that pubeval scores highest,
    equal scores in their order in ``after`` (as the numba kernel keeps them), and the offsets of those segments."""
    counts = offsets[1:] - offsets[:-1]
    segment = segment_ids(offsets, len(after))  # no wait for a size on a GPU, as repeat_interleave would
    by_score = torch.sort(pubeval_scores_torch(after), descending=True, stable=True).indices
    order = by_score[torch.sort(segment[by_score], stable=True).indices]  # each segment's rows, best first
    rank = torch.arange(len(order), device=after.device) - offsets[:-1][segment[order]]
    rows = torch.sort(order[rank < keep]).values
    new_offsets = torch.zeros_like(offsets)
    new_offsets[1:] = torch.cumsum(counts.clamp(max=keep), 0)
    return rows, new_offsets
