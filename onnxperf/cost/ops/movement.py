"""Data movement: ops that do (almost) no arithmetic but read and write real bytes (ai.onnx).

Transpose, Concat, Split, Slice, Gather*, Scatter*, TensorScatter, Tile, Expand, Pad, Cast,
CastLike, BitCast, DepthToSpace, SpaceToDepth, Compress, NonZero, Unique, OneHot, Range,
ConstantOfShape, EyeLike, Trilu, ReverseSequence.

Every rule here has FLOPs = 0 unless its docstring names the arithmetic (a Scatter with a
reduction, Range's running add, NonZero's and Unique's compares). Index arithmetic (computing
addresses) is never counted, here or elsewhere. Traffic defaults to "read every input, write
every output"; the rules that read only part of an input (Slice, Gather, GatherElements,
GatherND, Compress, CastLike, EyeLike, TensorScatter) override ``bytes_read`` and say so.

Data-dependent outputs (Compress, NonZero, Unique) are registered with
``outputs_may_be_unknown``: when the output shape is not static they give an upper bound for
the bytes written and are marked inexact.
"""

from __future__ import annotations

import math

from onnx import TensorProto

from onnxperf.base import dtypes
from onnxperf.cost.ops.registry import NodeView, OpCost, arith, axis_of, register, rule

#: pure movement: no arithmetic, traffic = every input read once, every output written once.
PURE_MOVEMENT = (
    "Transpose", "Concat", "Split", "Tile", "Expand", "Pad", "Cast", "BitCast", "DepthToSpace",
    "SpaceToDepth", "OneHot", "ConstantOfShape", "Trilu", "ReverseSequence",
)


def movement(n: NodeView) -> OpCost:
    """No arithmetic; traffic is the default: every input read once, every output written once.

    Transpose, Concat, Split, Tile, Expand, Pad (constant/reflect/edge/wrap alike: the padded
    border is written, the source of each border element is an already-read input element),
    DepthToSpace, SpaceToDepth, ReverseSequence, OneHot, ConstantOfShape, Trilu (the masked half
    is written as zeros; its compare on indices is index arithmetic, not counted).
    Cast counts no arithmetic: a conversion is one instruction of a copy, accounted as traffic.
    BitCast is counted as a copy; a runtime that aliases the buffer would make it free.
    """
    return OpCost()


register(PURE_MOVEMENT, movement, family="movement")


def _index_input_bytes(n: NodeView, first: int) -> int:
    return sum(t.nbytes for t in n.inputs[first:] if t is not None)


@rule("Slice", family="movement")
def slice_(n: NodeView) -> OpCost:
    """Slice: no arithmetic. Reads only the sliced elements of ``data``:
    bytes_read = output bytes + bytes of starts/ends/axes/steps (absent before opset 10,
    where they are attributes); bytes_written = output bytes."""
    return OpCost(bytes_read=n.out(0).nbytes + _index_input_bytes(n, 1))


@rule(["Gather", "GatherElements", "GatherND"], family="gather_scatter")
def gather(n: NodeView) -> OpCost:
    """Gather, GatherElements, GatherND: no arithmetic. Reads the indices and only the
    gathered rows/elements of ``data`` (an embedding lookup reads B·S rows, not the table):
    bytes_read = indices bytes + output bytes; bytes_written = output bytes."""
    return OpCost(bytes_read=n.inp(1).nbytes + n.out(0).nbytes)


@rule(["ScatterElements", "ScatterND", "Scatter"], family="gather_scatter")
def scatter(n: NodeView) -> OpCost:
    """ScatterElements, ScatterND, Scatter (deprecated, since 9): the output is a copy of
    ``data`` with ``updates`` written at ``indices``. Traffic is the default (data, indices
    and updates read, output written). With ``reduction`` add/mul/max/min (since 16/18) each
    update element costs 1 op (U = updates elements); reduction "none" costs nothing."""
    if n.attr("reduction", "none") == "none":
        return OpCost()
    return arith(n.inp(2).numel, n.inp(0).elem_type)


@rule("TensorScatter", family="gather_scatter", since=24)
def tensor_scatter(n: NodeView) -> OpCost:
    """TensorScatter (KV-cache update): no arithmetic. Its spec models an in-place update of
    the cache buffer, so only the update is moved: bytes_read = update bytes + write_indices
    bytes, bytes_written = update bytes. The rest of ``past_cache`` is neither read nor
    written (a runtime that copies the cache functionally moves 2 × cache bytes more)."""
    upd = n.inp(1).nbytes
    wi = n.inp(2).nbytes if n.has_input(2) else 0
    return OpCost(bytes_read=upd + wi, bytes_written=upd)


@rule("CastLike", family="movement", since=15)
def cast_like(n: NodeView) -> OpCost:
    """CastLike: as Cast, no arithmetic. ``target_type`` is used for its element type only,
    its data is never read: bytes_read = input bytes."""
    return OpCost(bytes_read=n.inp(0).nbytes)


@rule("EyeLike", family="movement", since=9)
def eye_like(n: NodeView) -> OpCost:
    """EyeLike: writes an identity-like matrix; only the input's shape and type are used,
    its data is never read: bytes_read = 0, bytes_written = output bytes."""
    return OpCost(bytes_read=0)


@rule("Range", family="movement", since=11)
def range_(n: NodeView) -> OpCost:
    """Range: by its ONNX function (a Loop of ``prev + delta``), 1 add per output element
    (N = output elements); computing N from start/limit/delta is scalar work, not counted."""
    return arith(n.out(0).numel, n.out(0).elem_type)


def _upper_bound_bytes(n: NodeView, i: int, elem_type: int, max_elems: int) -> tuple[int, bool]:
    """Bytes of output ``i`` when its shape is known (exact), else of ``max_elems`` elements."""
    if n.has_output(i):
        return n.out(i).nbytes, True
    return dtypes.nbytes(elem_type, max_elems), False


@rule("Compress", family="gather_scatter", since=9, outputs_may_be_unknown=True)
def compress(n: NodeView) -> OpCost:
    """Compress: no arithmetic (testing the condition is a branch, not counted). Reads the
    condition and only the selected slices of ``input``: bytes_read = condition bytes +
    bytes written. When the output shape depends on the condition's values, bytes written is
    the upper bound "every slice selected": min(len(condition), D) slices of the input along
    ``axis`` (D = that axis' size), or min(len(condition), numel) elements without ``axis``;
    the figure is then inexact."""
    x, cond = n.inp(0), n.inp(1)
    axis = n.attr("axis")
    if axis is None:
        cap = min(cond.numel, x.numel)
    else:
        d = x.shape[axis_of(axis, x.rank)]
        cap = (x.numel // d if d else 0) * min(cond.numel, d)
    written, exact = _upper_bound_bytes(n, 0, x.elem_type, cap)
    note = "" if exact else "output size depends on the condition: upper bound (all selected)"
    return OpCost(bytes_read=cond.nbytes + written, bytes_written=written, exact=exact, note=note)


@rule("NonZero", family="gather_scatter", since=9, outputs_may_be_unknown=True)
def nonzero(n: NodeView) -> OpCost:
    """NonZero: 1 compare with zero per input element (N = input elements); the output is
    int64 [rank, nnz]. When nnz is not static, bytes written is the upper bound nnz = N
    (8·rank·N bytes) and the figure is inexact."""
    x = n.inp(0)
    written, exact = _upper_bound_bytes(n, 0, TensorProto.INT64, x.rank * x.numel)
    note = "" if exact else "nnz depends on the data: upper bound nnz = every element"
    return arith(x.numel, x.elem_type, bytes_written=written, exact=exact, note=note)


@rule("Unique", family="gather_scatter", since=11, outputs_may_be_unknown=True)
def unique(n: NodeView) -> OpCost:
    """Unique: a sort of the K items (K = input elements without ``axis``, or the size of
    ``axis``, each item then a slice of S = N/K elements): N·ceil(log2 K) compares
    (K·log2 K item compares of S elements each). Always inexact (the sort's work depends on
    the data). Outputs Y, indices, inverse_indices, counts: when a shape is not static its
    bytes are the upper bound "every item unique" (Y = input bytes, the others 8·K bytes each;
    an output slot the node leaves empty cannot be told from an unknown one and is bounded too).
    """
    x = n.inp(0)
    axis = n.attr("axis")
    k = x.numel if axis is None else x.shape[axis_of(axis, x.rank)]
    ops = x.numel * math.ceil(math.log2(k)) if k > 1 else 0
    written, _ = _upper_bound_bytes(n, 0, x.elem_type, x.numel)
    for i in range(1, min(len(n.outputs), 4)):
        written += _upper_bound_bytes(n, i, TensorProto.INT64, k)[0]
    return arith(ops, x.elem_type, bytes_written=written, exact=False,
                 note="sort cost and output sizes depend on the data: upper bound")
