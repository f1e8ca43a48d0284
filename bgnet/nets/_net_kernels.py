"""Numba kernel of ``bgnet.nets.fastnet.NumpyNet``'s forward pass on boards: the features folded into the first layer.

``net_probs`` encodes each board with its feature set's row kernel (``bgnet.features.registry``) and
multiplies only the non-zero inputs and, after a ReLU, the non-zero hidden units, so
most of each matrix product is skipped (about 1.8x faster than numpy's dense products
on the 256-128 net). Boards go through the layers in blocks, so that a weight row
one board loads serves its neighbours from the cache, but each board's sums are its
own, in the same order whatever else the block holds: a board's chances do not depend
on which other boards share its batch (numpy's blocked products do), which makes
caching a board's chances exact.

It is compiled with another module's numba functions (the row kernels) linked in, whose
later edits numba's on-disk cache would not notice here: ``bgnet.core.kernel_cache`` names the cache
folder by a digest of every kernel module, so any edit compiles everything afresh.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.features.common import SCRATCH_SHAPE
from bgnet.features.registry import encode_row

ACT_RELU, ACT_TANH, ACT_SIGMOID = 0, 1, 2
ACTS = {"relu": ACT_RELU, "tanh": ACT_TANH, "sigmoid": ACT_SIGMOID}


@njit(cache=True, nogil=True, inline="always")
def _sigmoid(x):  # type: ignore[no-untyped-def]
    """``bgnet.nets.fastnet._sigmoid`` of one value, as float32."""
    return np.float32(1.0 / (1.0 + np.exp(-min(max(np.float64(x), -60.0), 60.0))))


BLOCK = 32
"""Boards valued together: each loads a weight row that its neighbours (usually sibling plays, which share most
non-zero inputs and hidden units) have just brought into the cache. Each board's sums are the same operations in
the same order whatever the block holds, so its chances are bit for bit those it has alone."""


@njit(cache=True, nogil=True, inline="always")
def _active(x, n_in, idx, positive):  # type: ignore[no-untyped-def]
    """The indices of ``x[:n_in]``'s non-zero entries (``positive``: of its entries > 0) into ``idx``; their count."""
    n = 0
    for f in range(n_in):
        idx[n] = f
        n += (x[f] > 0.0) if positive else (x[f] != 0.0)
    return n


@njit(cache=True, nogil=True, inline="always")
def _add_rows8(x, idx, t, w, out):  # type: ignore[no-untyped-def]
    """``out += x[f] * w[f]`` for the eight inputs ``f = idx[t:t+8]``: ``out`` read and written once for the eight."""
    f0, f1, f2, f3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
    f4, f5, f6, f7 = idx[t + 4], idx[t + 5], idx[t + 6], idx[t + 7]
    v0, v1, v2, v3, v4, v5, v6, v7 = x[f0], x[f1], x[f2], x[f3], x[f4], x[f5], x[f6], x[f7]
    r0, r1, r2, r3, r4, r5, r6, r7 = w[f0], w[f1], w[f2], w[f3], w[f4], w[f5], w[f6], w[f7]
    for j in range(w.shape[1]):
        out[j] += (v0 * r0[j] + v1 * r1[j] + v2 * r2[j] + v3 * r3[j]) + (
            v4 * r4[j] + v5 * r5[j] + v6 * r6[j] + v7 * r7[j])


@njit(cache=True, nogil=True, inline="always")
def _add_rows(x, idx, t, n, w, out):  # type: ignore[no-untyped-def]
    """``out += x[f] * w[f]`` for the inputs ``f = idx[t:n]``, one row at a time (the last fewer than eight)."""
    for k in range(t, n):
        v0 = x[idx[k]]
        r0 = w[idx[k]]
        for j in range(w.shape[1]):
            out[j] += v0 * r0[j]


@njit(cache=True, nogil=True)
def net_probs(boards, version, weights, biases, act, out):  # type: ignore[no-untyped-def]
    """Five chances (N, 5) float32 into ``out`` for boards (N, 26): ``NumpyNet``'s forward pass fused with the encoding.

    ``weights`` is a tuple of every layer's (inputs, outputs) float32 matrix (an empty (0, 0) one: an identity
    layer of a ReLU net, ``bgnet.nets.fastnet.IDENTITY``), ``biases`` of their biases; ``act`` the hidden activation (``ACT_RELU`` ...). Each layer is
    ``b + x @ w`` over the non-zero inputs only (after a ReLU, the positive ones), added
    eight rows of ``w`` at a time; ``BLOCK`` boards go through each layer side by side.
    """
    n_layers = len(weights)
    width = 512  # room for any encoding's row, whatever the first layer's width
    for li in range(n_layers):
        width = max(width, weights[li].shape[0], weights[li].shape[1])
    block = max(1, min(BLOCK, boards.shape[0]))
    bufs = np.empty((2, block, width), np.float32)  # each board's layer input and output, swapped layer by layer
    idx = np.empty((block, width), np.int32)
    count = np.zeros(block, np.int64)
    scratch = np.empty(SCRATCH_SHAPE, np.int64)
    n_feat = weights[0].shape[0]
    for i0 in range(0, boards.shape[0], block):
        m = min(block, boards.shape[0] - i0)
        for p in range(m):
            encode_row(version, boards[i0 + p], bufs[0, p, :n_feat], scratch)
        n_in = n_feat
        for li in range(n_layers):
            w = weights[li]
            src, dst = li % 2, 1 - li % 2
            if w.shape[0] == 0:  # an identity layer (a shallower ReLU net at this depth): the ReLU'd units pass on
                for p in range(m):
                    for j in range(n_in):
                        v = bufs[src, p, j]
                        bufs[dst, p, j] = v if v > 0.0 else np.float32(0.0)
                continue
            groups = 0
            for p in range(m):
                count[p] = _active(bufs[src, p], n_in, idx[p], li > 0 and act == ACT_RELU)
                groups = max(groups, count[p] // 8)
                bias = biases[li]
                for j in range(w.shape[1]):  # a loop, not a slice assignment: its shape check costs 1.6 s to compile
                    bufs[dst, p, j] = bias[j]
            for g in range(groups):  # the boards' g-th eight rows one after the other, while they are in cache
                for p in range(m):
                    if 8 * g + 8 <= count[p]:
                        _add_rows8(bufs[src, p], idx[p], 8 * g, w, bufs[dst, p])
            for p in range(m):
                _add_rows(bufs[src, p], idx[p], count[p] - count[p] % 8, count[p], w, bufs[dst, p])
            n_in = w.shape[1]
            if li < n_layers - 1 and act != ACT_RELU:  # a ReLU is applied by skipping the units <= 0
                for p in range(m):
                    for j in range(n_in):
                        v = bufs[dst, p, j]
                        bufs[dst, p, j] = np.float32(np.tanh(v)) if act == ACT_TANH else _sigmoid(v)
        last = n_layers % 2
        for p in range(m):
            o = bufs[last, p]
            f0 = _sigmoid(o[0])
            f1 = _sigmoid(o[1])
            f2 = _sigmoid(o[2])
            f3 = _sigmoid(o[3])
            f4 = _sigmoid(o[4])
            i = i0 + p
            out[i, 0] = f0
            out[i, 1] = f0 * f1
            out[i, 2] = f0 * f1 * f2
            out[i, 3] = (np.float32(1.0) - f0) * f3
            out[i, 4] = (np.float32(1.0) - f0) * f3 * f4


@njit(cache=True, nogil=True)
def output_sigmoids(h_t, w, b, out):  # type: ignore[no-untyped-def]
    """The output layer and its sigmoids, ``out[i] = sigmoid(b + h_t[:, i] @ w)`` (float32), for the columns of
    ``h_t`` (inputs, N): each sum ``b[j] + h[0] w[0, j] + h[1] w[1, j] + ...`` in that order, the same operations
    for every column, so a board's outputs do not depend on its place in the batch (a BLAS product's may:
    ``bgnet.nets.bf16net``)."""
    n_in, n = h_t.shape
    acc = np.empty(n, np.float32)
    for j in range(w.shape[1]):
        for i in range(n):
            acc[i] = b[j]
        for k in range(n_in):
            wk = w[k, j]
            row = h_t[k]
            for i in range(n):  # across the boards: vectorised, and each board's sum in the same order
                acc[i] += wk * row[i]
        for i in range(n):
            out[i, j] = _sigmoid(acc[i])
