"""A compiled CPU forward pass for frozen sigmoid equity nets: the search's inner loop.

Why: a 2-ply search evaluates about 25,000 afterstates a decision, and torch spends most
of that time in a dense first layer over inputs that are mostly zero (the contact
encoding has about 41 non-zero inputs of 241) and in memory-bound passes over the
``(N, hidden)`` activations.  This kernel takes a block of 16 rows at a time through the
whole net, so the activations stay in L1 cache:

* the first layer adds the weight rows of the non-zero inputs only (a sparse times dense
  product, as NNUE engines do), about a sixth of the multiply-adds, or, for a row that
  differs from the previous one in fewer inputs than it holds, the weight rows of the
  differences;
* the dense layers after it (a second hidden layer, the head) take the block together,
  four rows per pass over each weight row, so each weight is read once for four
  products and four independent sums keep the vector units busy;
* hidden sigmoids use a vectorisable exponential (``2**k`` from the float's exponent
  bits times a degree-5 polynomial for ``2**f``, relative error below 3e-6), since
  numba's ``math.exp`` is a scalar call per unit;
* the five outcome probabilities are built exactly as ``nard_rl.nets.network.EquityNet``
  builds them, with the precise exponential;
* every kernel compiles with numba's ``error_model="numpy"``: under the default (Python's)
  model each division checks for a zero divisor and raises, a branch that kept the
  sigmoid's ``1 / (1 + e)`` loop scalar; without it the loop is vectorised (reciprocal
  plus a Newton step), and a 1-ply search ran about a fifth faster.

Results equal torch's to about 1e-5 in each probability (``tests/test_fastnet.py``
checks 1e-4 on random nets and the shipped one); ``scripts/bench_search.py`` prints the
speed.  The weights are copied when the kernel is built: use it for nets that do not
change (loaded checkpoints), not for a net being trained.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

__all__ = ["FusedNet", "supports"]

_LOG2E = np.float32(1.4426950408889634)
_MAX_CHAIN = 32
"""Rows in a row updated from their predecessor before one is summed afresh: bounds the
float32 rounding that the differences accumulate (about 1e-6 of a probability)."""


@njit(fastmath=True, error_model="numpy", cache=True, inline="always")
def _sigmoid_inplace(acc: np.ndarray, bits: np.ndarray, poly: np.ndarray, n: int) -> None:
    scale = bits.view(np.float32)
    for h in range(n):
        t = -acc[h] * _LOG2E
        t = min(max(t, np.float32(-126.0)), np.float32(126.0))
        k = np.floor(t + np.float32(0.5))
        f = t - k
        poly[h] = np.float32(1.0) + f * (
            np.float32(0.6931472)
            + f
            * (
                np.float32(0.2402265)
                + f
                * (
                    np.float32(0.05550411)
                    + f * (np.float32(0.009618129) + f * np.float32(0.001333355))
                )
            )
        )
        bits[h] = (np.int32(k) + np.int32(127)) << 23
    for h in range(n):
        acc[h] = np.float32(1.0) / (np.float32(1.0) + poly[h] * scale[h])


@njit(cache=True)
def _sigmoid(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


_BLOCK = 16
"""Rows taken through the dense layers together: each weight row, read once from cache,
serves all of them (one row at a time, a 256-wide second layer was bound by reading its
256 KB of weights for every row)."""


@njit(fastmath=True, error_model="numpy", cache=True)
def _dense_block(x: np.ndarray, n: int, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[i, :rows] = w @ x[i, :cols] + b`` for the block's first ``n`` rows: dot
    products over contiguous rows, a reduction the compiler vectorises (indexing one
    flat array at a running offset had kept it scalar, several times slower)."""
    rows, cols = w.shape
    for r in range(rows):
        wr = w[r]
        br = b[r]
        i = 0
        while i + 4 <= n:  # four independent sums: no one addition chain sets the pace
            x0 = x[i]
            x1 = x[i + 1]
            x2 = x[i + 2]
            x3 = x[i + 3]
            s0 = np.float32(0.0)
            s1 = np.float32(0.0)
            s2 = np.float32(0.0)
            s3 = np.float32(0.0)
            for c in range(cols):
                wc = wr[c]
                s0 += x0[c] * wc
                s1 += x1[c] * wc
                s2 += x2[c] * wc
                s3 += x3[c] * wc
            out[i, r] = s0 + br
            out[i + 1, r] = s1 + br
            out[i + 2, r] = s2 + br
            out[i + 3, r] = s3 + br
            i += 4
        while i < n:
            xi = x[i]
            s = np.float32(0.0)
            for c in range(cols):
                s += xi[c] * wr[c]
            out[i, r] = s + br
            i += 1


@njit(fastmath=True, error_model="numpy", cache=True)
def _outputs(logits: np.ndarray, out: np.ndarray, i: int, softmax: bool) -> None:
    """``out[i]``: the five probabilities from the head's logits, exactly as
    ``EquityNet`` builds them (five chained sigmoids or, with ``softmax``, six classes)."""
    if softmax:
        top = logits[0]
        for r in range(1, 6):
            top = max(top, logits[r])
        e = np.empty(6, np.float64)
        total = 0.0
        for r in range(6):
            e[r] = math.exp(logits[r] - top)
            total += e[r]
        wbg = e[2] / total
        wg = e[1] / total + wbg
        lbg = e[5] / total
        lg = e[4] / total + lbg
        out[i, 0] = e[0] / total + wg
        out[i, 1] = wg
        out[i, 2] = wbg
        out[i, 3] = lg
        out[i, 4] = lbg
        return
    win = _sigmoid(logits[0])
    wg = win * _sigmoid(logits[1])
    out[i, 0] = win
    out[i, 1] = wg
    out[i, 2] = wg * _sigmoid(logits[2])
    lg = (1.0 - win) * _sigmoid(logits[3])
    out[i, 3] = lg
    out[i, 4] = lg * _sigmoid(logits[4])


@njit(fastmath=True, error_model="numpy", cache=True)
def _forward(
    x: np.ndarray,
    w1t: np.ndarray,
    b1: np.ndarray,
    dense_w: np.ndarray,
    dense_b: np.ndarray,
    shapes: np.ndarray,
    width: int,
    out: np.ndarray,
    softmax: bool,
) -> None:
    """``out[i]`` = the net's five probabilities for encoded row ``x[i]``: the first layer
    row by row (sparse, or updated from the previous row), then the dense layers and the
    head over blocks of ``_BLOCK`` rows."""
    n, m = x.shape
    h1 = b1.shape[0]
    layers = shapes.shape[0]
    acc = np.empty(h1, np.float32)  # the first layer before its sigmoid, kept across rows
    cur = np.empty((_BLOCK, width), np.float32)
    nxt = np.empty((_BLOCK, width), np.float32)
    bits = np.empty(width, np.int32)
    poly = np.empty(width, np.float32)
    chain = _MAX_CHAIN
    for lo in range(0, n, _BLOCK):
        nb = min(_BLOCK, n - lo)
        for t in range(nb):
            i = lo + t
            changed = 0
            nonzero = 0
            if i > 0:
                for j in range(m):
                    v = x[i, j]
                    if v != x[i - 1, j]:
                        changed += 1
                    if v != 0.0:
                        nonzero += 1
            if i > 0 and changed < nonzero and chain < _MAX_CHAIN:
                # a neighbour of the previous row: update its accumulator by the difference
                for j in range(m):
                    d = x[i, j] - x[i - 1, j]
                    if d != 0.0:
                        for h in range(h1):
                            acc[h] += d * w1t[j, h]
                chain += 1
            else:
                for h in range(h1):
                    acc[h] = b1[h]
                for j in range(m):
                    v = x[i, j]
                    if v != 0.0:
                        for h in range(h1):
                            acc[h] += v * w1t[j, h]
                chain = 0
            row = cur[t]
            for h in range(h1):
                row[h] = acc[h]
            _sigmoid_inplace(row, bits, poly, h1)
        wo = 0
        bo = 0
        for layer in range(layers):
            rows = shapes[layer, 0]
            cols = shapes[layer, 1]
            w = dense_w[wo : wo + rows * cols].reshape((rows, cols))
            _dense_block(cur, nb, w, dense_b[bo : bo + rows], nxt)
            wo += rows * cols
            bo += rows
            if layer < layers - 1:
                for t in range(nb):
                    _sigmoid_inplace(nxt[t], bits, poly, rows)
            cur, nxt = nxt, cur
        for t in range(nb):
            _outputs(cur[t], out, lo + t, softmax)


@njit(fastmath=True, error_model="numpy", cache=True)
def _board_forward(
    boards: np.ndarray,
    point_table: np.ndarray,
    bar_table: np.ndarray,
    b1: np.ndarray,
    head_w: np.ndarray,
    head_b: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[i]`` for afterstate ``boards[i]`` of a one-hidden-layer net on a
    point-separable encoding: the first layer is the bias plus one table row per point and
    per bar (``BoardNet``); every sigmoid, the five outputs' too, is the vectorisable one."""
    n = boards.shape[0]
    h1 = b1.shape[0]
    cur = np.empty(h1, np.float32)
    bits = np.empty(h1, np.int32)
    poly = np.empty(h1, np.float32)
    logits = np.empty(5, np.float32)
    lbits = np.empty(5, np.int32)
    lpoly = np.empty(5, np.float32)
    for i in range(n):
        for h in range(h1):
            cur[h] = b1[h]
        for p in range(1, 25):
            k = np.int64(boards[i, p]) + 15
            for h in range(h1):
                cur[h] += point_table[p - 1, k, h]
        ours = np.int64(boards[i, 25])
        theirs = -np.int64(boards[i, 0])
        for h in range(h1):
            cur[h] += bar_table[0, ours, h] + bar_table[1, theirs, h]
        _sigmoid_inplace(cur, bits, poly, h1)
        for r in range(5):
            s = head_b[r]
            for h in range(h1):
                s += cur[h] * head_w[r, h]
            logits[r] = s
        _sigmoid_inplace(logits, lbits, lpoly, 5)
        win = logits[0]
        wg = win * logits[1]
        out[i, 0] = win
        out[i, 1] = wg
        out[i, 2] = wg * logits[2]
        lg = (np.float32(1.0) - win) * logits[3]
        out[i, 3] = lg
        out[i, 4] = lg * logits[4]


def supports(net: Any) -> bool:
    """Whether ``net`` (an ``EquityNet``) has the shape this kernel computes: sigmoid
    hidden layers (one or more) and either head."""
    return (
        getattr(net, "activation", None) == "sigmoid"
        and len(getattr(net, "hidden", ())) >= 1
        and getattr(net, "head_kind", "sigmoid5") in ("sigmoid5", "softmax6")
    )


class FusedNet:
    """The compiled forward pass of one frozen ``EquityNet`` (see the module doc)."""

    def __init__(self, net: Any) -> None:
        if not supports(net):
            raise ValueError("FusedNet computes sigmoid nets with at least one hidden layer")
        linears = [m for m in net.body if hasattr(m, "weight")] + [net.head]

        def arr(t: Any) -> np.ndarray:
            return np.ascontiguousarray(t.detach().cpu().float().numpy(), dtype=np.float32)

        first = linears[0]
        self.inputs = int(first.weight.shape[1])
        self.w1t = np.ascontiguousarray(arr(first.weight).T)
        self.b1 = arr(first.bias)
        rest = linears[1:]
        self.dense_w = np.concatenate([arr(m.weight).ravel() for m in rest])
        self.dense_b = np.concatenate([arr(m.bias) for m in rest])
        self.shapes = np.array([tuple(m.weight.shape) for m in rest], dtype=np.int64)
        self.softmax = getattr(net, "head_kind", "sigmoid5") == "softmax6"
        outputs = 6 if self.softmax else 5
        if self.shapes[-1, 0] != outputs:
            raise ValueError(f"the head must have {outputs} outputs, got {self.shapes[-1, 0]}")
        self.width = int(max(self.b1.shape[0], *self.shapes[:, 0]))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float32 probabilities of encoded rows ``x`` (``(N, inputs)``)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.inputs:
            raise ValueError(f"expected encoded rows of shape (N, {self.inputs}), got {x.shape}")
        out = np.empty((x.shape[0], 5), dtype=np.float32)
        if x.shape[0]:
            _forward(
                x,
                self.w1t,
                self.b1,
                self.dense_w,
                self.dense_b,
                self.shapes,
                self.width,
                out,
                self.softmax,
            )
        return out


class BoardNet:
    """The compiled forward pass of a frozen one-hidden-layer net on a point-separable
    encoding, straight from the boards: no encoded rows at all.

    Why: the pruning net ranks every legal reply inside a search, hundreds of thousands of
    rows a 2-ply decision, and for a 16-unit net writing and scanning a couple of hundred
    inputs a row costs several times the net itself.  When every input depends on one
    point's count, or is linear in the bars and borne-off counts (``tesauro198``), the
    first layer is a sum of one precomputed ``hidden``-vector per point and per bar: 26
    vector additions a row.  The tables are built by encoding one-point boards, so they
    follow the encoding's own definition; results equal ``FusedNet`` on the encoded rows
    to float32 rounding (``tests/test_fastnet.py``)."""

    def __init__(self, net: Any, encoding: Any) -> None:
        if not getattr(encoding, "point_separable", False):
            raise ValueError(f"encoding {encoding.name!r} is not point-separable")
        self.fused = FusedNet(net)
        if self.fused.shapes.shape[0] != 1 or self.fused.softmax:
            raise ValueError("BoardNet computes nets with one hidden layer and five sigmoids")
        if self.fused.inputs != encoding.size:
            raise ValueError(
                f"the net takes {self.fused.inputs} inputs, encoding {encoding.name!r} "
                f"has {encoding.size}"
            )
        w1t = self.fused.w1t.astype(np.float64)
        empty = np.zeros((1, 26), dtype=np.int8)
        base = encoding.encode(empty)[0].astype(np.float64)
        self.b1 = (self.fused.b1 + base @ w1t).astype(np.float32)
        counts = np.arange(-15, 16)
        probes = np.zeros((24, counts.size, 26), dtype=np.int8)
        for p in range(1, 25):
            probes[p - 1, :, p] = counts
        rows = encoding.encode(probes.reshape(-1, 26)).astype(np.float64) - base
        self.point_table = np.ascontiguousarray(
            (rows @ w1t).reshape(24, counts.size, -1), dtype=np.float32
        )
        bars = np.zeros((2, 16, 26), dtype=np.int8)
        bars[0, :, 25] = np.arange(16)  # ours, on our bar
        bars[1, :, 0] = -np.arange(16)  # theirs
        rows = encoding.encode(bars.reshape(-1, 26)).astype(np.float64) - base
        self.bar_table = np.ascontiguousarray((rows @ w1t).reshape(2, 16, -1), dtype=np.float32)
        self.head_w = np.ascontiguousarray(
            self.fused.dense_w.reshape(5, self.b1.shape[0]), dtype=np.float32
        )
        self.head_b = np.ascontiguousarray(self.fused.dense_b, dtype=np.float32)

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float32 probabilities of afterstates ``boards`` (``(N, 26)`` int8,
        valid boards: at most 15 checkers a point)."""
        arr = np.ascontiguousarray(boards, dtype=np.int8)
        if arr.ndim != 2 or arr.shape[1] != 26:
            raise ValueError(f"expected boards of shape (N, 26), got {arr.shape}")
        out = np.empty((arr.shape[0], 5), dtype=np.float32)
        if arr.shape[0]:
            _board_forward(
                arr, self.point_table, self.bar_table, self.b1, self.head_w, self.head_b, out
            )
        return out
