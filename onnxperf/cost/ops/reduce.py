"""Reductions, scans and row-wise ops (ai.onnx): the Reduce* ops, ArgMax/ArgMin, CumSum/CumProd
and TopK (family "reduce"), and Softmax, LogSoftmax, Hardmax (family "activation"). (Det, an LU
factorization, is matmul-like work: matmul.py.)

Notation: In = input elements, Out = output elements; a *line* is the run of L elements along
the reduced/scanned axis; a *row* is the group a row-wise op normalizes over.

Counting:

* A standalone reduction of R values into one costs R − 1 binary ops (add, mul, max ...), so a
  Reduce op does ``In − Out`` of them in all. The reduced axes are never read from the
  ``axes`` attribute or input (it moved from attribute to input at opset 13/18): the counts
  come from the input and output shapes, which works for every version, ``keepdims`` and
  ``noop_with_empty_axes``.
* Composite ops (Softmax, LogSoftmax, and ReduceLogSumExp among the Reduce ops) are counted
  in the numerically stable form every runtime uses (a max shift before the exp, as Softmax's
  ONNX function body does) with a per-element table: a reduction inside them is 1 op per
  element reduced (the accumulator is seeded with the identity), so Softmax is exactly 5 ops
  per element and ReduceLogSumExp 4 per element + 2 per output.
* Integer inputs make every count integer ops, not FLOPs (``arith``).
"""

from __future__ import annotations

from collections.abc import Callable

from onnxperf.cost.ops.registry import NodeView, OpCost, arith, axis_of, prod, register, rule, scalar

#: Reduce ops and ArgMax/ArgMin: (ops per input element, ops per reduction step, ops per
#: output element); cost = a·In + b·(In − Out) + c·Out. docs/rules.md reproduces it.
REDUCE: dict[str, tuple[int, int, int]] = {
    "ReduceSum": (0, 1, 0),        # adds
    "ReduceMean": (0, 1, 1),       # adds, 1 divide per output
    "ReduceMax": (0, 1, 0),        # max
    "ReduceMin": (0, 1, 0),        # min
    "ReduceProd": (0, 1, 0),       # multiplies
    "ReduceL1": (1, 1, 0),         # |x|, adds
    "ReduceL2": (1, 1, 1),         # x·x, adds, sqrt
    "ReduceLogSum": (0, 1, 1),     # adds, log
    # stable form, as Softmax: max, subtract, exp, sum per element; log, add the max per output
    "ReduceLogSumExp": (4, 0, 2),
    "ReduceSumSquare": (1, 1, 0),  # x·x, adds
    "ArgMax": (0, 1, 0),           # compares (the index rides along with the winner)
    "ArgMin": (0, 1, 0),
}

#: ``noop_with_empty_axes`` = 1 with no axes (ReduceSum from opset 13, the others from 18):
#: the spec makes the reduction step an identity over an empty set of axes, "but composite-
#: reduction operators will still perform the non-reduction steps" (ReduceSumSquare returns the
#: square of the input, ReduceLogSum its log): ops per element of those steps. A mean of one
#: value is that value (the reference implementation returns the input); LogSumExp keeps the
#: subtract, exp, log and add of its stable form (its max and sum are the reduction steps).
REDUCE_NOOP: dict[str, int] = {
    "ReduceSum": 0, "ReduceMean": 0, "ReduceMax": 0, "ReduceMin": 0, "ReduceProd": 0,
    "ReduceL1": 1,          # |x|
    "ReduceL2": 2,          # x·x, sqrt
    "ReduceLogSum": 1,      # log
    "ReduceLogSumExp": 4,   # x − max, exp, log, + max
    "ReduceSumSquare": 1,   # x·x
}

#: scans: ops per step along the axis (inclusive scan of L values: L − 1 steps per line;
#: exclusive: L − 2, the first two outputs being 0/1 and x[0]).
SCAN: dict[str, int] = {"CumSum": 1, "CumProd": 1}

#: row-wise ops: (ops per element, ops per row). Softmax = ReduceMax, Sub, Exp, ReduceSum, Div;
#: LogSoftmax = ReduceMax, Sub, Exp, ReduceSum, Sub per element + Log per row;
#: Hardmax = an argmax per row (L − 1 compares), writing the one-hot row costs no arithmetic.
ROW_WISE: dict[str, tuple[int, int]] = {
    "Softmax": (5, 0),
    "LogSoftmax": (5, 1),
    "Hardmax": (1, -1),
}


def reduces_nothing(n: NodeView) -> bool:
    """``noop_with_empty_axes`` = 1 and no axes: the axes input is absent or empty (its shape
    is [0]). The attribute exists only where axes are an input (ReduceSum-13, the rest 18)."""
    if not n.attr("noop_with_empty_axes", 0):
        return False
    return not n.has_input(1) or n.inp(1).numel == 0


def _reduce_rule(op: str, a: int, b: int, c: int) -> Callable[[NodeView], OpCost]:
    def reduce_rule(n: NodeView) -> OpCost:
        """Reduce*/ArgMax/ArgMin: ops = a·In + b·(In − Out) + c·Out with (a, b, c) from
        :data:`REDUCE`; In, Out from the shapes (axes never read). The Reduce* ops with
        ``noop_with_empty_axes`` = 1 and no axes reduce nothing: only the non-reduction steps
        remain, ops = REDUCE_NOOP[op]·In."""
        x = n.inp(0)
        if op in REDUCE_NOOP and reduces_nothing(n):
            return arith(REDUCE_NOOP[op] * x.numel, x.elem_type)
        y = n.out(0)
        return arith(a * x.numel + b * max(x.numel - y.numel, 0) + c * y.numel, x.elem_type)

    return reduce_rule


def _scan_rule(per_step: int) -> Callable[[NodeView], OpCost]:
    def scan_rule(n: NodeView) -> OpCost:
        """CumSum/CumProd: lines = In / L, L the length of the scanned axis (a constant
        input); ops = per_step · lines · (L − 1), or (L − 2) when ``exclusive``.
        When the axis is not a constant the figure is the bound In (exact=False)."""
        x = n.inp(0)
        axis = scalar(n.const(1))
        if axis is None or x.rank == 0:
            return arith(per_step * x.numel, x.elem_type, exact=False,
                         note="scan axis not constant: bounded by one op per element")
        length = x.shape[axis_of(axis, x.rank)]
        lines = x.numel // length if length else 0
        steps = max(length - (2 if n.attr("exclusive", 0) else 1), 0)
        return arith(per_step * lines * steps, x.elem_type)

    return scan_rule


def ceil_log2(k: int) -> int:
    """⌈log2 k⌉ for k ≥ 1 (0 for k = 1)."""
    return (k - 1).bit_length() if k > 1 else 0


@rule("TopK", family="reduce")
def topk(n: NodeView) -> OpCost:
    """TopK over lines of n elements (n = X.shape[axis], k = Values.shape[axis]; k is read
    from the output shape, whether it came from the attribute (opset 1) or the K input):
    a bounded heap of size k costs n·max(1, ⌈log2 k⌉) compares per line, plus
    k·⌈log2 k⌉ to emit the k winners in order when ``sorted`` (always before opset 11).
    ops = lines · (select + sort); k = 0 costs nothing. Index bookkeeping is not counted."""
    x, y = n.inp(0), n.out(0)
    ax = axis_of(n.attr("axis"), x.rank)
    length, k = x.shape[ax], y.shape[ax]
    if length == 0 or k == 0:
        return arith(0, x.elem_type)
    lines = x.numel // length
    select = length * max(1, ceil_log2(k))
    sort = k * ceil_log2(k) if n.attr("sorted", 1) else 0
    return arith(lines * (select + sort), x.elem_type)


def rows_coerced_2d(n: NodeView) -> tuple[int, int]:
    """(rows, L) before opset 13: the input is coerced to 2-D at ``axis`` (default 1):
    rows = prod(shape[:axis]), L = prod(shape[axis:])."""
    x = n.inp(0)
    ax = axis_of(n.attr("axis"), x.rank) if x.rank else 0
    return prod(x.shape[:ax]), prod(x.shape[ax:])


def rows_single_axis(n: NodeView) -> tuple[int, int]:
    """(rows, L) from opset 13: one axis (default −1): L = shape[axis], rows = In / L."""
    x = n.inp(0)
    if x.rank == 0:
        return 1, 1
    length = x.shape[axis_of(n.attr("axis"), x.rank)]
    return (x.numel // length if length else 0), length


def _row_rule(per_elem: int, per_row: int,
              rows_of: Callable[[NodeView], tuple[int, int]]) -> Callable[[NodeView], OpCost]:
    def row_rule(n: NodeView) -> OpCost:
        """Softmax/LogSoftmax/Hardmax: ops = e·In + r·rows with (e, r) from
        :data:`ROW_WISE`; rows per the opset's axis semantics (coerced 2-D before 13)."""
        x = n.inp(0)
        rows, length = rows_of(n)
        if length == 0:
            return arith(0, x.elem_type)
        return arith(per_elem * x.numel + per_row * rows, x.elem_type)

    return row_rule


for _op, (_a, _b, _c) in REDUCE.items():
    register(_op, _reduce_rule(_op, _a, _b, _c), family="reduce")
for _op, _k in SCAN.items():
    register(_op, _scan_rule(_k), family="reduce")
for _op, (_e, _r) in ROW_WISE.items():
    register(_op, _row_rule(_e, _r, rows_coerced_2d), family="activation", since=1)
    register(_op, _row_rule(_e, _r, rows_single_axis), family="activation", since=13)
