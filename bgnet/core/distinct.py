"""The distinct boards of a batch: a search's rolls and a rollout's trials reach the same boards by many paths,
and each distinct board need be valued once."""

from __future__ import annotations

import numpy as np

from bgnet.core._distinct_kernels import distinct_rows

__all__ = ["distinct_boards"]


def distinct_boards(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of rows (N, W) int8: ``boards[first]`` are the distinct rows in order of first
    appearance and ``boards[first][inverse]`` equals ``boards``. Exact (rows are compared in full), O(N)."""
    rows = np.ascontiguousarray(boards, np.int8)
    if len(rows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first, inverse = distinct_rows(rows.reshape(len(rows), -1))
    return first, inverse
