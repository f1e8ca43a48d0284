"""The distinct boards of a batch with torch ops on any device: the twin of ``bgnet.core.distinct.distinct_boards``.

A torch search's last level reaches the same leaf by several paths (about a sixth of a 2-ply label's leaves
repeat); valuing each distinct leaf once spares its encoding and forward pass, which cost far more than a sort.
Each int8 board is read as four int64 words (its 26 bytes and six zero bytes), and four stable 1-D sorts, the
least significant word first (radix sorts on the CPU and the GPU, where ``torch.unique(dim=0)`` compares whole
rows), bring equal boards together.
"""

from __future__ import annotations

import torch

__all__ = ["distinct_boards_torch"]


def distinct_boards_torch(boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(first, inverse)`` (int64, on the boards' device) of int8 rows (N, 26): ``boards[first]`` are the distinct
    rows, each at its first appearance, in order of first appearance, and ``boards[first][inverse]`` equals
    ``boards``, as ``distinct_boards`` gives them. Exact (rows compared in full); one wait for the count on a GPU."""
    dev = boards.device
    n = len(boards)
    if n == 0:
        return torch.zeros(0, dtype=torch.int64, device=dev), torch.zeros(0, dtype=torch.int64, device=dev)
    words = torch.nn.functional.pad(boards.to(torch.int8).contiguous(), (0, 6)).view(torch.int64)  # (N, 4)
    perm = torch.arange(n, device=dev)
    for w in (3, 2, 1, 0):  # stable sorts keep equal rows in their original order, the first one first
        perm = perm.index_select(0, torch.sort(words[:, w].index_select(0, perm), stable=True).indices)
    ordered = words.index_select(0, perm)
    new = torch.ones(n, dtype=torch.bool, device=dev)
    new[1:] = (ordered[1:] != ordered[:-1]).any(1)
    group = torch.cumsum(new, 0) - 1  # each sorted row's group, groups in sorted order
    leaders = perm[new.nonzero().squeeze(1)]  # each group's first appearance (stable sorts: the smallest index)
    order = torch.argsort(leaders)  # groups by first appearance
    rank = torch.empty_like(order)
    rank[order] = torch.arange(len(order), device=dev)
    inverse = torch.empty(n, dtype=torch.int64, device=dev)
    inverse[perm] = rank.index_select(0, group)
    return leaders.index_select(0, order), inverse
