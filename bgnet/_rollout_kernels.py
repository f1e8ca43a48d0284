"""Numba kernels behind the rollout's luck variance reduction: the 21 rolls' plays and a fused forward pass.

The luck of a roll needs, for every live position and each of the 21 rolls, the
best of the plays pubeval ranks highest, valued by the net. Two kernels do it
without the big intermediate arrays of the general path:

* ``luck_plays`` generates each roll's plays into a small reused buffer (the move
  generator's own ``gen_one``), ranks them with pubeval's table form as it goes,
  keeps the top ``k`` (within a margin), and writes each kept afterstate turned
  round (the opponent on roll), once per position: the same afterstate reached
  by two rolls (4-1 and 3-2 both playing 8/4 6/5, say) is evaluated once;
* ``net_probs`` is a ``bgnet.fastnet.NumpyNet`` forward pass, the features of
  each board (``bgnet.encoding``'s own per-board kernels) folded straight into
  the first layer: only the non-zero inputs and, after a ReLU, the non-zero
  hidden units are multiplied, so most of each matrix product is skipped. Its
  float32 sums run in another order than numpy's, so its chances may differ from
  the net's in the last bits: the luck is a control variate, which only needs
  one fixed function of the position and roll, so this does not bias the mean.

Both call other modules' numba functions (``gen_one``, the encoders), whose later
edits numba's on-disk cache does not notice here: ``FusedNet.agrees`` checks the
fused net against the net before the rollout uses it, and a stale ``luck_plays``
could only make the luck a worse control variate, never a biased one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet._movegen_kernels import MAX_PER_POSITION, TABLE_SIZE, gen_one
from bgnet.encoding import _encode_one, _encode_one_v2
from bgnet.fastnet import NumpyNet
from bgnet.pubeval import race_scan

ACT_RELU, ACT_TANH, ACT_SIGMOID = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def pubeval_row(row, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """Pubeval's score of one afterstate (mover's view), from ``bgnet.rollout._pubeval_tables``."""
    in_play, is_race = race_scan(row)
    if in_play == 0:
        return win_score
    v = 0 if is_race else 1
    s = 0.0
    for block in range(24):
        s += tables[v, block, row[24 - block] + 15]
    s += extra[v, 0] * (-row[0]) / 2.0
    s += extra[v, 1] * (15 - in_play) / 15.0
    return s


@njit(cache=True, nogil=True)
def luck_plays(boards, rolls, k, margin, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """For each board and roll, pubeval's best ``k`` plays (less those more than ``margin`` below the best).

    Returns ``(cand, slot, owner)``: ``cand`` (M, 26) int8 the distinct afterstates of
    each board, turned round (the opponent on roll); ``slot`` (B, R, k) int64 the row
    of ``cand`` of each roll's kept plays in the move generator's play order (-1 past
    the last kept one): the same plays, in the same order, as ``gen_batch`` followed
    by ``bgnet.rollout._pubeval_top``; ``owner`` (M,) the board each row belongs to.
    """
    n = boards.shape[0]
    nr = rolls.shape[0]
    tk1 = np.zeros(TABLE_SIZE, np.int64)
    tk2 = np.zeros(TABLE_SIZE, np.int64)
    tst = np.zeros(TABLE_SIZE, np.int64)
    genbox = np.zeros(1, np.int64)
    out_b = np.empty((MAX_PER_POSITION, 26), np.int8)
    out_s = np.empty((MAX_PER_POSITION, 8), np.int8)
    out_n = np.empty(MAX_PER_POSITION, np.int8)
    out_d = np.empty(MAX_PER_POSITION, np.int64)
    b = np.empty(26, np.int8)
    steps = np.zeros(8, np.int8)
    scores = np.empty(MAX_PER_POSITION, np.float64)
    top = np.empty(k, np.int64)
    window = np.empty(k, np.int64)
    cand = np.empty((n * nr * k, 26), np.int8)
    owner = np.empty(n * nr * k, np.int64)
    slot = np.full((n, nr, k), -1, np.int64)
    size = 1
    while size < 4 * nr * k:
        size *= 2
    mask = size - 1
    hrow = np.zeros(size, np.int64)
    hstamp = np.zeros(size, np.int64)
    m = 0
    for i in range(n):
        stamp = i + 1
        for r in range(nr):
            cnt = gen_one(boards[i], rolls[r, 0], rolls[r, 1], out_b, out_s, out_n, out_d, 0, tk1, tk2, tst, genbox,
                          b, steps)
            c = 0
            for j in range(cnt):  # insertion into the sorted (best first) window of the best k
                sj = pubeval_row(out_b[j], tables, extra, win_score)
                scores[j] = sj
                if c < k:
                    q = c
                    c += 1
                elif sj > scores[top[k - 1]]:
                    q = k - 1
                else:
                    continue
                while q > 0 and scores[top[q - 1]] < sj:
                    top[q] = top[q - 1]
                    q -= 1
                top[q] = j
            best = scores[top[0]]
            kept = 0
            for q in range(c):
                if scores[top[q]] >= best - margin:
                    w = top[q]
                    j = kept
                    while j > 0 and window[j - 1] > w:  # into the move generator's order
                        window[j] = window[j - 1]
                        j -= 1
                    window[j] = w
                    kept += 1
            for q in range(kept):
                src = out_b[window[q]]
                h = np.uint64(1469598103934665603)
                for x in range(26):  # the turned-round board's hash (FNV-1a over its bytes)
                    h = (h ^ np.uint64(np.uint8(-src[25 - x]))) * np.uint64(1099511628211)
                pos = np.int64(h >> np.uint64(40)) & mask
                found = -1
                while hstamp[pos] == stamp:
                    row = hrow[pos]
                    same = True
                    for x in range(26):
                        if cand[row, x] != -src[25 - x]:
                            same = False
                            break
                    if same:
                        found = row
                        break
                    pos = (pos + 1) & mask
                if found < 0:
                    for x in range(26):
                        cand[m, x] = -src[25 - x]
                    hstamp[pos] = stamp
                    hrow[pos] = m
                    owner[m] = i
                    found = m
                    m += 1
                slot[i, r, q] = found
    return cand[:m], slot, owner[:m]


@njit(cache=True, nogil=True, inline="always")
def _sigmoid(x):  # type: ignore[no-untyped-def]
    """``bgnet.fastnet._sigmoid`` of one value, as float32."""
    return np.float32(1.0 / (1.0 + np.exp(-min(max(np.float64(x), -60.0), 60.0))))


@njit(cache=True, nogil=True, inline="always")
def _sparse_layer(x, n_in, w, b, out, idx, positive):  # type: ignore[no-untyped-def]
    """``out = b + x[:n_in] @ w`` over the non-zero inputs only (``positive``: the inputs are ReLU outputs).

    The non-zero inputs are gathered first, then added eight rows of ``w`` at a time,
    so that ``out`` is read and written once per eight inputs.
    """
    n = 0
    for f in range(n_in):
        idx[n] = f
        n += (x[f] > 0.0) if positive else (x[f] != 0.0)
    h = w.shape[1]
    for j in range(h):
        out[j] = b[j]
    t = 0
    while t + 8 <= n:
        f0, f1, f2, f3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        f4, f5, f6, f7 = idx[t + 4], idx[t + 5], idx[t + 6], idx[t + 7]
        v0, v1, v2, v3, v4, v5, v6, v7 = x[f0], x[f1], x[f2], x[f3], x[f4], x[f5], x[f6], x[f7]
        r0, r1, r2, r3, r4, r5, r6, r7 = w[f0], w[f1], w[f2], w[f3], w[f4], w[f5], w[f6], w[f7]
        for j in range(h):
            out[j] += (v0 * r0[j] + v1 * r1[j] + v2 * r2[j] + v3 * r3[j]) + (
                v4 * r4[j] + v5 * r5[j] + v6 * r6[j] + v7 * r7[j])
        t += 8
    while t < n:
        f0 = idx[t]
        v0 = x[f0]
        r0 = w[f0]
        for j in range(h):
            out[j] += v0 * r0[j]
        t += 1


@njit(cache=True, nogil=True)
def net_probs(boards, version, weights, biases, act, out):  # type: ignore[no-untyped-def]
    """Five chances (N, 5) float32 into ``out`` for boards (N, 26): ``NumpyNet``'s forward pass fused with the encoding.

    ``weights`` is a tuple of every layer's (inputs, outputs) float32 matrix, ``biases``
    of their biases; ``act`` the hidden activation (``ACT_RELU`` ...).
    """
    n_layers = len(weights)
    width = 512  # room for any encoding's row, whatever the first layer's width
    for li in range(n_layers):
        width = max(width, weights[li].shape[0], weights[li].shape[1])
    x = np.zeros(width, np.float32)
    y = np.zeros(width, np.float32)
    idx = np.empty(width, np.int64)
    c = np.empty(26, np.int64)
    o = np.empty(26, np.int64)
    esc_c = np.empty(26, np.int64)
    esc_o = np.empty(26, np.int64)
    n_feat = weights[0].shape[0]
    feats = x[:n_feat]
    for i in range(boards.shape[0]):
        if version == 2:
            _encode_one_v2(boards[i], feats, c, o, esc_c, esc_o)
        else:
            _encode_one(boards[i], feats)
        cur = x
        nxt = y
        n_in = n_feat
        for li in range(n_layers):
            w = weights[li]
            _sparse_layer(cur, n_in, w, biases[li], nxt, idx, li > 0 and act == ACT_RELU)
            n_in = w.shape[1]
            if li < n_layers - 1 and act != ACT_RELU:  # a ReLU is applied by skipping the units <= 0
                for j in range(n_in):
                    nxt[j] = np.float32(np.tanh(nxt[j])) if act == ACT_TANH else _sigmoid(nxt[j])
            cur, nxt = nxt, cur
        f0 = _sigmoid(cur[0])
        f1 = _sigmoid(cur[1])
        f2 = _sigmoid(cur[2])
        f3 = _sigmoid(cur[3])
        f4 = _sigmoid(cur[4])
        out[i, 0] = f0
        out[i, 1] = f0 * f1
        out[i, 2] = f0 * f1 * f2
        out[i, 3] = (np.float32(1.0) - f0) * f3
        out[i, 4] = (np.float32(1.0) - f0) * f3 * f4


_ACTS = {"relu": ACT_RELU, "tanh": ACT_TANH, "sigmoid": ACT_SIGMOID}


class FusedNet:
    """A ``NumpyNet``'s chances through ``net_probs`` (an Evaluator): the same net, the sums in another order."""

    def __init__(self, net: NumpyNet) -> None:
        self.net = net
        self.weights = tuple(np.ascontiguousarray(w, np.float32) for w, _b in net.layers)
        self.biases = tuple(np.ascontiguousarray(b, np.float32) for _w, b in net.layers)
        self.act = _ACTS[net.activation]
        self.version = int(net.feature_version)

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 chances for boards (N, 26), each for its side on roll."""
        arr = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
        out = np.empty((len(arr), 5), np.float32)
        if len(arr):
            net_probs(arr, self.version, self.weights, self.biases, self.act, out)
        return out

    def agrees(self, boards: np.ndarray, tol: float = 1e-4) -> bool:
        """Whether it gives the net's own chances on ``boards`` (a guard against a stale compiled kernel)."""
        return bool(np.abs(self.probs_of_boards(boards) - self.net.probs_of_boards(boards)).max(initial=0.0) <= tol)
