"""Shape arithmetic evaluated: the small integer tensors that exporters compute from ``Shape``.

PyTorch's exporter (and tf2onnx) write a model's reshapes as arithmetic on its input shape:
``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``, ``Slice`` of a position table up to the
sequence length, ``Range``/``Expand``/``ConstantOfShape`` for masks. ONNX's data propagation follows
some of these ops but not all (a ``Slice`` whose ``ends`` come from a ``Shape`` is left with an
unknown shape), which used to send such models to onnxruntime's symbolic inference (0.3 s and a
sympy import for a small BERT).

Here, once the input dims are bound, those tensors are computed (by the forward pass of
:mod:`onnxperf.shapes.forward`, node by node): every node of the default domain whose inputs are all
known small values (initializers and ``Constant`` outputs the loader read, earlier computed values,
or ``Shape``/``Size`` of a tensor whose shape is fully known) is computed with numpy, following the
op's ONNX definition (:data:`EVALUATORS`; ONNX's own reference implementation costs a 60 ms import
and is the fallback for other ops only), on at most :data:`MAX_ELEMENTS` elements in and out, each
size checked before anything is built. Nothing is guessed: a node that cannot be computed is left
as it was, and any failure leaves it uncomputed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import numpy_helper


#: the largest tensor computed, in elements (inputs and outputs); shape tensors are tiny
MAX_ELEMENTS = 1 << 16

def _axes(ins, attrs, opset: int, since: int, index: int = 1):
    """An ``axes`` operand: an input from opset ``since`` on, an attribute before."""
    if opset >= since:
        return None if len(ins) <= index or ins[index] is None else [int(x) for x in ins[index].reshape(-1)]
    v = attrs.get("axes")
    return None if v is None else [int(x) for x in v]


def _norm(axes, rank: int) -> list[int]:
    return sorted(a + rank if a < 0 else a for a in axes)


def _unsqueeze(ins, attrs, opset):
    x = ins[0]
    axes = _norm(_axes(ins, attrs, opset, 13), x.ndim + len(_axes(ins, attrs, opset, 13)))
    for a in axes:
        x = np.expand_dims(x, a)
    return x


def _squeeze(ins, attrs, opset):
    axes = _axes(ins, attrs, opset, 13)
    return np.squeeze(ins[0]) if axes is None else np.squeeze(ins[0], axis=tuple(_norm(axes, ins[0].ndim)))


def _slice(ins, attrs, opset):
    x = ins[0]
    if opset >= 10:
        starts, ends = ins[1].reshape(-1), ins[2].reshape(-1)
        axes = ins[3].reshape(-1) if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = ins[4].reshape(-1) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    else:
        starts, ends = attrs["starts"], attrs["ends"]
        axes = attrs.get("axes", range(len(starts)))
        steps = [1] * len(starts)
    index = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        if int(sp) == 0:
            raise ValueError("Slice step 0")
        index[int(ax) + x.ndim if int(ax) < 0 else int(ax)] = slice(int(st), int(en), int(sp))
    return x[tuple(index)]


def _int_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.floor_divide(a, b)
        return q + ((np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)
    return np.divide(a, b)


def _same(a, out):
    """A binary op's result in its first input's dtype (ONNX keeps the operands' type)."""
    return np.asarray(out).astype(a.dtype, copy=False)


def _reduce(fn, since: int):
    def run(ins, attrs, opset):
        x = ins[0]
        axes = _axes(ins, attrs, opset, since)
        keep = bool(attrs.get("keepdims", 1))
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return x
            return fn(x, axis=None, keepdims=keep).astype(x.dtype)
        return fn(x, axis=tuple(_norm(axes, x.ndim)), keepdims=keep).astype(x.dtype)
    return run


def _range(ins, attrs, opset):
    start, limit, delta = (x.reshape(-1)[0] for x in ins[:3])
    n = max(int(np.ceil((limit - start) / delta)), 0)
    return (start + np.arange(n) * delta).astype(ins[0].dtype)


def _constant_of_shape(ins, attrs, opset):
    v = attrs.get("value")
    fill = numpy_helper.to_array(v).reshape(-1)[0] if v is not None else np.float32(0)
    return np.full(tuple(int(d) for d in ins[0].reshape(-1)), fill, dtype=np.asarray(fill).dtype)


def _expand(ins, attrs, opset):
    shape = np.broadcast_shapes(ins[0].shape, tuple(int(d) for d in ins[1].reshape(-1)))
    return np.broadcast_to(ins[0], shape).copy()


def _reshape(ins, attrs, opset):
    x = ins[0]
    shape = [int(d) for d in ins[1].reshape(-1)]
    if not attrs.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def _flatten(ins, attrs, opset):
    x = ins[0]
    axis = int(attrs.get("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


def _cast(ins, attrs, opset):
    return ins[0].astype(onnx.helper.tensor_dtype_to_np_dtype(int(attrs["to"])))


def _gather(ins, attrs, opset):
    x, idx = ins[0], ins[1].astype(np.int64)
    axis = int(attrs.get("axis", 0))
    axis = axis + x.ndim if axis < 0 else axis
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return np.take(x, idx, axis=axis)


def _gather_elements(ins, attrs, opset):
    x, idx = ins[0], ins[1].astype(np.int64)
    axis = int(attrs.get("axis", 0))
    axis = axis + x.ndim if axis < 0 else axis
    return np.take_along_axis(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)


def _scatter_nd(ins, attrs, opset):
    data, idx, upd = ins[0].copy(), ins[1].astype(np.int64), ins[2]
    red = attrs.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else str(red)
    k = idx.shape[-1]
    flat_idx = idx.reshape(-1, k)
    flat_upd = upd.reshape((flat_idx.shape[0],) + data.shape[k:])
    # the updates in index order, vectorized: a plain write keeps the last of repeated indices (as the
    # spec's sequential loop does), a reduction applies every one (ufunc.at does not buffer)
    where = tuple(np.where(flat_idx < 0, flat_idx + np.array(data.shape[:k]), flat_idx).T)
    if red == "add":
        np.add.at(data, where, flat_upd)
    elif red == "mul":
        np.multiply.at(data, where, flat_upd)
    elif red == "max":
        np.maximum.at(data, where, flat_upd)
    elif red == "min":
        np.minimum.at(data, where, flat_upd)
    else:
        data[where] = flat_upd
    return data


def _gather_nd(ins, attrs, opset):
    data, idx = ins[0], ins[1].astype(np.int64)
    b = int(attrs.get("batch_dims", 0))
    if b:
        raise ValueError("GatherND batch_dims")  # left to the reference evaluator
    k = idx.shape[-1]
    out = [data[tuple(int(v) for v in i)] for i in idx.reshape(-1, k)]
    return np.asarray(out, dtype=data.dtype).reshape(idx.shape[:-1] + data.shape[k:])


def _cumsum(ins, attrs, opset):
    x, axis = ins[0], int(ins[1].reshape(-1)[0])
    if attrs.get("exclusive", 0) or attrs.get("reverse", 0):
        raise ValueError("CumSum exclusive/reverse")  # left to the reference evaluator
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _clip(ins, attrs, opset):
    x = ins[0]
    if opset < 11:
        lo, hi = attrs.get("min"), attrs.get("max")
    else:
        lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
        hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
    out = x
    if lo is not None:
        out = np.maximum(out, np.asarray(lo, dtype=x.dtype))
    if hi is not None:
        out = np.minimum(out, np.asarray(hi, dtype=x.dtype))
    return np.asarray(out, dtype=x.dtype)


def _variadic(fn):
    def run(ins, attrs, opset):
        out = ins[0]
        for x in ins[1:]:
            out = fn(out, x)
        return out
    return run


#: numpy evaluations of the ops that shape arithmetic uses, by ONNX's definitions:
#: f(inputs, attributes, opset) -> the single output
EVALUATORS: dict[str, Callable[[list, dict, int], np.ndarray]] = {
    "Identity": lambda ins, at, op: ins[0],
    "Cast": _cast,
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": lambda ins, at, op: np.concatenate([x for x in ins if x is not None], axis=int(at["axis"])),
    "Slice": _slice,
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": lambda ins, at, op: np.transpose(ins[0], at.get("perm")),
    "Expand": _expand,
    "Tile": lambda ins, at, op: np.tile(ins[0], [int(r) for r in ins[1].reshape(-1)]),
    "ConstantOfShape": _constant_of_shape,
    "Range": _range,
    "Add": lambda ins, at, op: _same(ins[0], ins[0] + ins[1]),
    "Sub": lambda ins, at, op: _same(ins[0], ins[0] - ins[1]),
    "Mul": lambda ins, at, op: _same(ins[0], ins[0] * ins[1]),
    "Div": lambda ins, at, op: _same(ins[0], _int_div(ins[0], ins[1])),
    "Mod": lambda ins, at, op: np.fmod(ins[0], ins[1]) if at.get("fmod", 0) else np.mod(ins[0], ins[1]),
    "Neg": lambda ins, at, op: np.negative(ins[0]),
    "Abs": lambda ins, at, op: np.abs(ins[0]),
    "Floor": lambda ins, at, op: np.floor(ins[0]),
    "Ceil": lambda ins, at, op: np.ceil(ins[0]),
    "Sqrt": lambda ins, at, op: np.sqrt(ins[0]),
    "Min": _variadic(np.minimum),
    "Max": _variadic(np.maximum),
    "Equal": lambda ins, at, op: np.equal(ins[0], ins[1]),
    "Less": lambda ins, at, op: np.less(ins[0], ins[1]),
    "Greater": lambda ins, at, op: np.greater(ins[0], ins[1]),
    "LessOrEqual": lambda ins, at, op: np.less_equal(ins[0], ins[1]),
    "GreaterOrEqual": lambda ins, at, op: np.greater_equal(ins[0], ins[1]),
    "Not": lambda ins, at, op: np.logical_not(ins[0]),
    "And": lambda ins, at, op: np.logical_and(ins[0], ins[1]),
    "Or": lambda ins, at, op: np.logical_or(ins[0], ins[1]),
    "Xor": lambda ins, at, op: np.logical_xor(ins[0], ins[1]),
    "Where": lambda ins, at, op: np.where(ins[0], ins[1], ins[2]),
    "ScatterND": _scatter_nd,
    "GatherND": _gather_nd,
    "CumSum": _cumsum,
    "Clip": _clip,
    "Pow": lambda ins, at, op: _same(ins[0], np.power(ins[0], ins[1])),
    "Reciprocal": lambda ins, at, op: np.reciprocal(ins[0]),
    "ReduceProd": _reduce(np.prod, 18),
    "ReduceSum": _reduce(np.sum, 13),
    "ReduceMin": _reduce(np.min, 18),
    "ReduceMax": _reduce(np.max, 18),
}
#: ops computed on known values
VALUE_OPS = frozenset(EVALUATORS) | {"Shape", "Size"}


def _numel(shape) -> int:
    k = 1
    for d in shape:
        k *= int(d)
    return k


def _out_size_ok(op: str, ins: list[np.ndarray | None], max_elements: int = MAX_ELEMENTS) -> bool:
    """Ops whose output size is set by an input's *value*: check it before running them."""
    try:
        if op == "ConstantOfShape":
            return _numel(ins[0].reshape(-1)) <= max_elements
        if op == "Expand":
            shape = np.broadcast_shapes(tuple(ins[0].shape), tuple(int(d) for d in ins[1].reshape(-1)))
            return _numel(shape) <= max_elements
        if op == "Tile":
            return ins[0].size * _numel(ins[1].reshape(-1)) <= max_elements
        if op == "Range":
            start, limit, delta = (float(x.reshape(-1)[0]) for x in ins[:3])
            return delta != 0 and max(0.0, (limit - start) / delta) <= max_elements
    except (ValueError, TypeError, IndexError, OverflowError):
        return False
    return True


def _shape_value(node: onnx.NodeProto, shape: tuple[int, ...]) -> np.ndarray:
    if node.op_type == "Size":
        return np.array(_numel(shape), dtype=np.int64)
    rank = len(shape)
    attrs = {a.name: a.i for a in node.attribute}
    start, end = attrs.get("start", 0), attrs.get("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return np.array(shape[start:end], dtype=np.int64)


def evaluate(node: onnx.NodeProto, op_type: str, ins: list[np.ndarray | None], opset: int,
             input_shape: tuple[int, ...] | None = None, max_elements: int = MAX_ELEMENTS) -> np.ndarray | None:
    """The single output of a default-domain value op (:data:`VALUE_OPS`) on known inputs, or None
    when it cannot be computed here (an input too large, an output that would be, a failure).
    ``Shape``/``Size`` take their input's static ``input_shape`` instead of values. Call it under
    ``np.errstate(all="raise")``: an overflow leaves the node uncomputed. ``max_elements``: the size
    limit in and out (the attention masks of :mod:`onnxperf.cost.subnormal` take a larger one)."""
    try:
        if op_type in ("Shape", "Size"):
            if input_shape is None:
                return None
            out = _shape_value(node, input_shape)
        else:
            if not _out_size_ok(op_type, ins, max_elements):
                return None
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            out = EVALUATORS[op_type](ins, attrs, opset)
    except Exception:  # the op refused these values: leave the node uncomputed
        return None
    if isinstance(out, np.ndarray | np.generic):
        arr = np.asarray(out)
        if arr.size <= max_elements and arr.dtype != object:
            return arr
    return None


#: numpy dtype -> ONNX element type of the values computed here
CONST_TYPES = {np.dtype(np.int64): onnx.TensorProto.INT64, np.dtype(np.int32): onnx.TensorProto.INT32,
               np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.float64): onnx.TensorProto.DOUBLE,
               np.dtype(np.bool_): onnx.TensorProto.BOOL, np.dtype(np.uint8): onnx.TensorProto.UINT8,
               np.dtype(np.int8): onnx.TensorProto.INT8}


__all__ = ["CONST_TYPES", "EVALUATORS", "MAX_ELEMENTS", "VALUE_OPS", "evaluate"]
