"""The distinct boards of a batch with torch ops on any device: the twin of ``bgnet.core.distinct.distinct_boards``.

A torch search's last level reaches the same leaf by several paths (about a sixth of a 2-ply label's leaves
repeat); valuing each distinct leaf once spares its encoding and forward pass, which cost far more than a sort.
Each int8 board is read as four int64 words (its 26 bytes and six zero bytes), and a lexicographic sort of them
(``lexsort_torch``, also the move generator's) brings equal boards together.
"""

from __future__ import annotations

from typing import Sequence

import torch

__all__ = ["distinct_boards_torch", "lexsort_torch"]


def lexsort_torch(words: Sequence[torch.Tensor]) -> torch.Tensor:
    """The stable lexicographic order (N,) int64 of rows given as ``words`` (1-D integer tensors of N, the most
    significant first): one stable 1-D sort a word, the least significant first (1-D integer sorts are radix sorts
    on the CPU and the GPU, far faster than ``torch.unique(dim=0)``, which compares whole rows)."""
    perm = torch.sort(words[-1], stable=True).indices
    for word in reversed(words[:-1]):
        perm = perm.index_select(0, torch.sort(word.index_select(0, perm), stable=True).indices)
    return perm


def distinct_boards_torch(boards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(first, inverse)`` (int64, on the boards' device) of int8 rows (N, 26): ``boards[first]`` are the distinct
    rows, each at its first appearance, in order of first appearance, and ``boards[first][inverse]`` equals
    ``boards``, as ``distinct_boards`` gives them. Exact (rows compared in full); one wait for the count on a GPU."""
    dev = boards.device
    n = len(boards)
    if n == 0:
        return torch.zeros(0, dtype=torch.int64, device=dev), torch.zeros(0, dtype=torch.int64, device=dev)
    words = torch.nn.functional.pad(boards.to(torch.int8).contiguous(), (0, 6)).view(torch.int64)  # (N, 4)
    perm = lexsort_torch(words.unbind(1))  # stable: equal rows in their original order, the first one first
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
