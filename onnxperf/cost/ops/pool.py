"""Pooling (ai.onnx): MaxPool, AveragePool, LpPool, their Global forms, MaxRoiPool, MaxUnpool.
(RoiAlign is costed in misc.py with the other detection ops.)

Notation: N batch, C channels, K = prod(kernel_shape) window elements (for the Global forms,
K = S = prod(input spatial dims)), Y = output elements, ph×pw pooled bins.

Every output element is charged its full window of K elements, as Conv is: padding is not
subtracted, so ``pads``, ``auto_pad``, ``ceil_mode`` and ``dilations`` only act through the
output shape, and ``count_include_pad`` only changes AveragePool's divisor, not the count.
Integer inputs (uint8/int8 MaxPool) make the ops integer ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from onnxperf.cost.ops.registry import NodeView, OpCost, arith, prod, register, rule

#: window pools: (ops per window element, ops per output element); ops = Y·(a·K + b).
#: Max: K − 1 compares; Average: K − 1 adds + 1 divide. docs/rules.md reproduces it.
POOL: dict[str, tuple[int, int]] = {
    "MaxPool": (1, -1),
    "GlobalMaxPool": (1, -1),
    "AveragePool": (1, 0),
    "GlobalAveragePool": (1, 0),
}

#: pools whose window is the whole spatial extent (K = S)
GLOBAL_POOLS = frozenset({"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"})
#: pools with an optional Indices output (the argmax of each window, int64)
WITH_INDICES = frozenset({"MaxPool"})

#: Lp pools per window element, keyed by p: |x| (p=1), x·x (p=2), else |x| and pow;
#: the window sum adds K − 1 adds; the root per output: none (p=1), sqrt, else pow(1/p).
LP_TAP: dict[int, int] = {1: 1, 2: 1}
LP_TAP_OTHER = 2
LP_ROOT: dict[int, int] = {1: 0, 2: 1}
LP_ROOT_OTHER = 1


def lp_pool_per_output(k: int, p: float) -> int:
    """Ops per output element of an Lp pool over K elements: K·tap + (K − 1) + root."""
    tap = LP_TAP.get(p, LP_TAP_OTHER)  # p is a float in GlobalLpPool-1: 2.0 == 2
    root = LP_ROOT.get(p, LP_ROOT_OTHER)
    return k * tap + (k - 1) + root if k else 0


def _window(n: NodeView, global_pool: bool) -> int:
    """K: the spatial size of the input for a Global pool, else prod(kernel_shape)."""
    if global_pool:
        return prod(n.inp(0).shape[2:])
    return prod(n.attr("kernel_shape"))


def _pool_rule(per_tap: int, per_out: int, *, global_pool: bool, indices_output: bool
               ) -> Callable[[NodeView], OpCost]:
    def pool_rule(n: NodeView) -> OpCost:
        """Max/Average (Global) pools: ops = Y·(a·K + b) with (a, b) from :data:`POOL`
        (full windows: padding not subtracted). MaxPool's optional Indices output adds
        Y·(K − 1) integer ops: the winner's index is selected alongside each compare."""
        x, y = n.inp(0), n.out(0)
        k = _window(n, global_pool)
        per = per_tap * k + per_out if k else 0
        c = arith(y.numel * per, x.elem_type)
        if indices_output and n.has_output(1):
            return OpCost(flops=c.flops, int_ops=c.int_ops + y.numel * max(k - 1, 0))
        return c

    return pool_rule


def _lp_pool_rule(global_pool: bool) -> Callable[[NodeView], OpCost]:
    def lp_pool(n: NodeView) -> OpCost:
        """LpPool / GlobalLpPool: ops = Y·(K·tap + (K − 1) + root), tap and root from
        :data:`LP_TAP`/:data:`LP_ROOT` by p (p=2: 2·K ops per output)."""
        x, y = n.inp(0), n.out(0)
        return arith(y.numel * lp_pool_per_output(_window(n, global_pool), n.attr("p", 2)), x.elem_type)

    return lp_pool


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def max_roi_pool_compares(rois, height: int, width: int, pooled: tuple[int, int], scale: float) -> int:
    """Compares per channel of MaxRoiPool over constant ``rois`` [R, 5] (batch, x1, y1, x2, y2),
    as onnxruntime bins them: each non-empty bin of area A costs A − 1 compares."""
    ph_n, pw_n = pooled
    total = 0
    for roi in rois:
        sw, sh = _round_half_away(roi[1] * scale), _round_half_away(roi[2] * scale)
        ew, eh = _round_half_away(roi[3] * scale), _round_half_away(roi[4] * scale)
        bin_h = max(eh - sh + 1, 1) / ph_n
        bin_w = max(ew - sw + 1, 1) / pw_n
        for ph in range(ph_n):
            h0 = min(max(math.floor(ph * bin_h) + sh, 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h) + sh, 0), height)
            for pw in range(pw_n):
                w0 = min(max(math.floor(pw * bin_w) + sw, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + sw, 0), width)
                if h1 > h0 and w1 > w0:
                    total += (h1 - h0) * (w1 - w0) - 1
    return total


@rule("MaxRoiPool", family="pool")
def max_roi_pool(n: NodeView) -> OpCost:
    """MaxRoiPool, X [N, C, H, W], rois [R, 5] -> [R, C, ph, pw]: each bin costs its area − 1
    compares per channel. With constant rois the bins are computed exactly
    (:func:`max_roi_pool_compares`); otherwise an upper-bound estimate that every roi spans
    the whole map: R·C·(H·W − ph·pw) (exact=False)."""
    x, rois = n.inp(0), n.inp(1)
    c, h, w = x.shape[1], x.shape[2], x.shape[3]
    ph, pw = (int(v) for v in n.attr("pooled_shape"))
    const = n.const(1)
    if const is not None:
        per_c = max_roi_pool_compares(const.reshape(-1, 5).tolist(), h, w, (ph, pw),
                                      float(n.attr("spatial_scale")))
        return arith(c * per_c, x.elem_type)
    est = rois.shape[0] * c * max(h * w - ph * pw, 0)
    return arith(est, x.elem_type, exact=False,
                 note="rois not constant: upper bound, every roi spanning the whole feature map")


@rule("MaxUnpool", family="pool")
def max_unpool(n: NodeView) -> OpCost:
    """MaxUnpool: a zero fill of the output and a scatter of X by I: no arithmetic; traffic
    is every input (X, I, output_shape) read and the whole output written (the defaults)."""
    return OpCost()


for _op, (_a, _b) in POOL.items():
    register(_op, _pool_rule(_a, _b, global_pool=_op in GLOBAL_POOLS, indices_output=_op in WITH_INDICES),
             family="pool")
for _op in ("LpPool", "GlobalLpPool"):
    register(_op, _lp_pool_rule(global_pool=_op in GLOBAL_POOLS), family="pool")
