"""Shapes of common default-domain ops whose input shapes are all static: a fast path in front of
ONNX's per-node inference.

The forward pass (:mod:`onnxperf.shapes.forward`) shapes, node by node, what ONNX's whole-graph
pass left unknown. On transformer and detection exports that is most of the graph below the first
shape computed from data (Swin's shifted-window padding, SSD's resize transform), and asking ONNX
for one node costs ~70 µs of serialized types and values; these functions give the same answer in
a few µs. Each follows the operator's spec and ONNX's inference function for it, and says ``None``
for anything it does not fully handle (a symbolic or negative dim, a missing value, an attribute
form it does not read, inputs the op would refuse): ONNX's inference then runs as before, so a
``None`` is never wrong, only slower. ``tests/test_shape_static.py`` checks every function against
ONNX's inference on the same node.

A function takes ``(shapes, types, attr, value, opset)``: per input its static shape (a tuple of
ints, None when the input is absent) and element type, an attribute reader (``attr(name,
default)``), a reader of an input's known value (``value(i)``: an ndarray or None) and the node's
default-domain opset; it returns one ``(element type, shape)`` per output, or None.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

import onnx

from onnxperf.base import dtypes
from onnxperf.shapes.rules import ceil_windows, conv_spatial, matmul_shape

BOOL = onnx.TensorProto.BOOL
INT64 = onnx.TensorProto.INT64
INT64_MAX = (1 << 63) - 1

Out = list[tuple[int, tuple[int, ...]]] | None
StaticRule = Callable[..., Out]


def _bcast(shapes) -> tuple[int, ...] | None:
    """numpy broadcasting of static shapes; None when they do not broadcast."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        d = 1
        for s in shapes:
            j = len(s) - rank + i
            if j < 0:
                continue
            x = s[j]
            if x == d or x == 1:
                continue
            if d != 1:
                return None
            d = x
        out.append(d)
    return tuple(out)


def _present(shapes):
    return [s for s in shapes if s is not None]


def _same_types(types) -> bool:
    t = [x for x in types if x]
    return bool(t) and all(x == t[0] for x in t)


def _arith(shapes, types, attr, value, opset) -> Out:
    """Broadcasting arithmetic (Add, Sub, Mul, Div, Mod, Max, Min, Sum, Mean): the broadcast shape,
    the inputs' common element type."""
    s = _present(shapes)
    if len(s) != len(shapes) or not s or not _same_types(types):
        return None
    out = _bcast(s)
    return None if out is None else [(types[0], out)]


def _pow(shapes, types, attr, value, opset) -> Out:
    """Pow: the broadcast shape, the base's element type (the exponent's may differ)."""
    if len(shapes) != 2 or None in shapes or not types[0]:
        return None
    out = _bcast(shapes)
    return None if out is None else [(types[0], out)]


def _compare(shapes, types, attr, value, opset) -> Out:
    """Comparisons and logic (Equal, Less, Greater, ..., And, Or, Xor): the broadcast shape, bool."""
    if len(shapes) != 2 or None in shapes or not _same_types(types):
        return None
    out = _bcast(shapes)
    return None if out is None else [(BOOL, out)]


def _where(shapes, types, attr, value, opset) -> Out:
    """Where(cond, X, Y): the broadcast shape of all three, X's element type."""
    if len(shapes) != 3 or None in shapes or types[0] != BOOL or not types[1] or types[1] != types[2]:
        return None
    out = _bcast(shapes)
    return None if out is None else [(types[1], out)]


def _unary(shapes, types, attr, value, opset) -> Out:
    """Elementwise ops of one tensor (activations, Softmax, Clip, Identity, ...): the input's shape
    and element type."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    return [(types[0], shapes[0])]


def _to_bool(shapes, types, attr, value, opset) -> Out:
    """Not, IsNaN, IsInf: the input's shape, bool."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    return [(BOOL, shapes[0])]


def _cast(shapes, types, attr, value, opset) -> Out:
    """Cast: the input's shape, the element type ``to`` (None for a ``to`` that names no element type)."""
    to = attr("to", 0)
    if not shapes or shapes[0] is None or not dtypes.known(to):
        return None
    return [(int(to), shapes[0])]


def _dropout(shapes, types, attr, value, opset, n_out=1) -> Out:
    """Dropout: output the input's shape and type; the optional mask the same shape, bool."""
    if not shapes or shapes[0] is None or not types[0] or opset < 7:
        return None
    return [(types[0], shapes[0]), (BOOL, shapes[0])][:n_out]


def _matmul(shapes, types, attr, value, opset) -> Out:
    """MatMul: numpy ``matmul`` (1-D operands promoted, their dim dropped; batch dims broadcast)."""
    if len(shapes) != 2 or None in shapes or not _same_types(types):
        return None
    a, b = shapes
    if not a or not b or a[-1] != (b[0] if len(b) == 1 else b[-2]):
        return None  # the contracted dims differ
    out = matmul_shape(a, b)  # promotion, batch broadcast; a batch dim that does not broadcast is None
    if out is None or None in out:
        return None
    return [(types[0], out)]


def _gemm(shapes, types, attr, value, opset) -> Out:
    """Gemm: (M, N) from A (M, K) or its transpose and B (K, N) or its transpose; C must broadcast."""
    if len(shapes) < 2 or shapes[0] is None or shapes[1] is None or len(shapes[0]) != 2 or len(shapes[1]) != 2:
        return None
    if not _same_types(types) or opset < 7:
        return None
    a, b = shapes[0], shapes[1]
    m, k = (a[1], a[0]) if attr("transA", 0) else a
    k2, n = (b[1], b[0]) if attr("transB", 0) else b
    if k != k2:
        return None
    if len(shapes) > 2 and shapes[2] is not None and _bcast([shapes[2], (m, n)]) != (m, n):
        return None
    return [(types[0], (m, n))]


def _transpose(shapes, types, attr, value, opset) -> Out:
    """Transpose: dims permuted by ``perm`` (default: reversed)."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    x = shapes[0]
    perm = attr("perm", None)
    if perm is None:
        return [(types[0], x[::-1])]
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(x))):
        return None
    return [(types[0], tuple(x[p] for p in perm))]


def _ints(v) -> list[int] | None:
    if v is None or v.dtype.kind not in "iu" or v.ndim > 1:
        return None
    return [int(x) for x in v.reshape(-1)]


def _reshape(shapes, types, attr, value, opset) -> Out:
    """Reshape: the ``shape`` input's value, a 0 copying the input's dim (unless ``allowzero``), one
    -1 taking what is left."""
    if len(shapes) != 2 or shapes[0] is None or not types[0] or opset < 5:
        return None
    target = _ints(value(1))
    if target is None:
        return None
    x = shapes[0]
    allowzero = attr("allowzero", 0) if opset >= 14 else 0
    out: list[int] = []
    minus = -1
    for i, d in enumerate(target):
        if d == -1:
            if minus >= 0:
                return None
            minus = i
            out.append(1)
        elif d == 0 and not allowzero:
            if i >= len(x):
                return None
            out.append(x[i])
        elif d < 0:
            return None
        else:
            out.append(d)
    total = prod(x)
    if minus >= 0:
        rest = prod(out)
        if rest == 0 or total % rest:
            return None
        out[minus] = total // rest
    elif prod(out) != total:
        return None
    return [(types[0], tuple(out))]


def _flatten(shapes, types, attr, value, opset) -> Out:
    """Flatten: (prod of dims before ``axis``, prod of the rest); ``axis`` defaults to 1."""
    if not shapes or shapes[0] is None or not types[0] or opset < 9:
        return None
    x = shapes[0]
    axis = int(attr("axis", 1))
    if axis < 0:
        axis += len(x)
    if not 0 <= axis <= len(x):
        return None
    return [(types[0], (prod(x[:axis]), prod(x[axis:])))]


def _axes(shapes, attr, value, opset, since: int, i: int = 1) -> tuple[bool, list[int] | None]:
    """The ``axes`` of an op that took them as an attribute before opset ``since`` and as input
    ``i`` from it: (readable, the axes or None when not given)."""
    if opset < since:
        a = attr("axes", None)
        return True, None if a is None else [int(x) for x in a]
    if len(shapes) <= i or shapes[i] is None:
        return True, None
    axes = _ints(value(i))
    return axes is not None, axes


def _unsqueeze(shapes, types, attr, value, opset) -> Out:
    """Unsqueeze: a 1 inserted at each of ``axes`` (counted in the output's rank)."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    ok, axes = _axes(shapes, attr, value, opset, 13)
    if not ok or not axes:
        return None
    x = shapes[0]
    r = len(x) + len(axes)
    norm = sorted(a + r if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm) or any(not 0 <= a < r for a in norm):
        return None
    out = list(x)
    for a in norm:
        out.insert(a, 1)
    return [(types[0], tuple(out))]


def _squeeze(shapes, types, attr, value, opset) -> Out:
    """Squeeze: the dims at ``axes`` removed (each must be 1); without axes every 1 is removed."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    ok, axes = _axes(shapes, attr, value, opset, 13)
    if not ok:
        return None
    x = shapes[0]
    if axes is None:
        return [(types[0], tuple(d for d in x if d != 1))]
    norm = {a + len(x) if a < 0 else a for a in axes}
    if any(not 0 <= a < len(x) or x[a] != 1 for a in norm):
        return None
    return [(types[0], tuple(d for i, d in enumerate(x) if i not in norm))]


def _concat(shapes, types, attr, value, opset) -> Out:
    """Concat: the inputs' dims, summed along ``axis``; every other dim must agree."""
    if not shapes or None in shapes or not _same_types(types) or opset < 4:
        return None
    axis = attr("axis", None)
    if axis is None:
        return None
    r = len(shapes[0])
    a = int(axis) + r if int(axis) < 0 else int(axis)
    if not 0 <= a < r or any(len(s) != r for s in shapes):
        return None
    for i in range(r):
        if i != a and any(s[i] != shapes[0][i] for s in shapes):
            return None
    out = list(shapes[0])
    out[a] = sum(s[a] for s in shapes)
    return [(types[0], tuple(out))]


def _gather(shapes, types, attr, value, opset) -> Out:
    """Gather: data dims before ``axis``, the indices' dims, data dims after ``axis``."""
    if len(shapes) != 2 or None in shapes or not types[0] or types[1] not in (onnx.TensorProto.INT32, INT64):
        return None
    x, ind = shapes
    axis = int(attr("axis", 0))
    a = axis + len(x) if axis < 0 else axis
    if not 0 <= a < len(x):
        return None
    return [(types[0], x[:a] + ind + x[a + 1:])]


def _slice_len(dim: int, start: int, end: int, step: int) -> int | None:
    """Elements Slice keeps of one axis, as ONNX computes it: a negative start or end counts from
    the end; then, for a positive step, both are clamped to [0, dim]; for a negative step the start
    to [0, dim - 1] and the end to [-1, dim - 1] (unlike Python's slice, a start before the first
    element still keeps it). None for an empty axis."""
    if dim <= 0:
        return None
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        return max(0, -(-(end - start) // step))
    start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return max(0, -(-(start - end) // -step))


def _slice(shapes, types, attr, value, opset) -> Out:
    """Slice: per sliced axis, :func:`_slice_len` of its start, end and step."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    x = shapes[0]
    if opset < 10:
        starts, ends, axes = attr("starts", None), attr("ends", None), attr("axes", None)
        if starts is None or ends is None:
            return None
        starts, ends = [int(v) for v in starts], [int(v) for v in ends]
        axes = None if axes is None else [int(v) for v in axes]
        steps = None
    else:
        if len(shapes) < 3:
            return None
        starts, ends = _ints(value(1)), _ints(value(2))
        if starts is None or ends is None:
            return None
        axes = steps = None
        if len(shapes) > 3 and shapes[3] is not None:
            axes = _ints(value(3))
            if axes is None:
                return None
        if len(shapes) > 4 and shapes[4] is not None:
            steps = _ints(value(4))
            if steps is None:
                return None
    n = len(starts)
    if axes is None:
        axes = list(range(n))
    if steps is None:
        steps = [1] * n
    if len(ends) != n or len(axes) != n or len(steps) != n:
        return None
    out = list(x)
    seen = set()
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = a + len(x) if a < 0 else a
        if not 0 <= a < len(x) or a in seen or st == 0:
            return None
        seen.add(a)
        out[a] = _slice_len(x[a], s, e, st)
        if out[a] is None:
            return None
    return [(types[0], tuple(out))]


def _expand(shapes, types, attr, value, opset) -> Out:
    """Expand: the input's shape broadcast with the ``shape`` input's value (both ways)."""
    if len(shapes) != 2 or None in shapes or not types[0]:
        return None
    target = _ints(value(1))
    if target is None or any(d < 0 for d in target):
        return None
    out = _bcast([shapes[0], tuple(target)])
    return None if out is None else [(types[0], out)]


def _pad(shapes, types, attr, value, opset) -> Out:
    """Pad: each dim grown by its begin and end pads (negative pads crop); from opset 18 the pads
    may name only some ``axes``."""
    if not shapes or shapes[0] is None or not types[0] or opset < 2:
        return None
    x = shapes[0]
    r = len(x)
    if opset < 11:
        pads = attr("pads", None)
        pads = None if pads is None else [int(p) for p in pads]
        axes = None
    else:
        pads = _ints(value(1)) if len(shapes) > 1 else None
        axes = None
        if len(shapes) > 3 and shapes[3] is not None:
            axes = _ints(value(3))
            if axes is None:
                return None
    if pads is None:
        return None
    if axes is None:
        axes = list(range(r))
    k = len(axes)
    if len(pads) != 2 * k:
        return None
    out = list(x)
    for j, a in enumerate(axes):
        a = a + r if a < 0 else a
        if not 0 <= a < r:
            return None
        out[a] = x[a] + pads[j] + pads[j + k]
    if any(d < 0 for d in out):
        return None
    return [(types[0], tuple(out))]


def _window_attrs(attr, n: int) -> dict | None:
    """A conv or pool window's attributes that are given (``strides``, ``dilations``, ``pads``,
    ``auto_pad`` as text, ``ceil_mode``), as :func:`onnxperf.shapes.rules.conv_spatial` reads them;
    None when a list does not match the ``n`` spatial dims."""
    attrs = {k: attr(k, None) for k in ("strides", "dilations", "pads", "auto_pad", "ceil_mode")}
    for key, size in (("strides", n), ("dilations", n), ("pads", 2 * n)):
        if attrs[key] is not None and len(attrs[key]) != size:
            return None
    attrs = {k: v for k, v in attrs.items() if v is not None}
    if isinstance(attrs.get("auto_pad"), bytes):
        attrs["auto_pad"] = attrs["auto_pad"].decode()
    return attrs


def _conv(shapes, types, attr, value, opset) -> Out:
    """Conv: (N, M, *spatial) with M the weight's first dim and each spatial dim from ONNX's window
    formula (:func:`onnxperf.shapes.rules.conv_spatial`)."""
    if len(shapes) < 2 or shapes[0] is None or shapes[1] is None or not _same_types(types[:2]):
        return None
    x, w = shapes[0], shapes[1]
    if len(x) < 3 or len(w) != len(x):
        return None
    group = int(attr("group", 1))
    if group <= 0 or x[1] != w[1] * group or w[0] % group:
        return None
    n = len(x) - 2
    kernel = attr("kernel_shape", None)
    kernel = list(w[2:]) if kernel is None else [int(k) for k in kernel]
    if kernel != list(w[2:]):
        return None
    attrs = _window_attrs(attr, n)
    if attrs is not None:
        attrs.pop("ceil_mode", None)  # a pooling attribute: Conv has none, and ONNX ignores a stray one
    if attrs is None or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        return None
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (w[0],):
        return None
    spatial = conv_spatial(x[2:], kernel, attrs)
    if any(not isinstance(d, int) or d < 1 for d in spatial):
        return None
    return [(types[0], (x[0], w[0], *spatial))]


#: ops whose ``axes`` became an input: ReduceSum in opset 13, the others in opset 18
_REDUCE_AXES_INPUT = {"ReduceSum": 13}


def _reduce(op: str) -> StaticRule:
    since = _REDUCE_AXES_INPUT.get(op, 18)

    def rule(shapes, types, attr, value, opset) -> Out:
        """Reduce*: the ``axes`` dims dropped (``keepdims=0``) or kept as 1; no axes: all of them,
        or none when ``noop_with_empty_axes`` is set."""
        if not shapes or shapes[0] is None or not types[0]:
            return None
        x = shapes[0]
        ok, axes = _axes(shapes, attr, value, opset, since)
        if not ok:
            return None
        keep = int(attr("keepdims", 1))
        if not axes:
            if opset >= since and int(attr("noop_with_empty_axes", 0)):
                return [(types[0], x)]
            axes = list(range(len(x)))
        norm = {a + len(x) if a < 0 else a for a in axes}
        if any(not 0 <= a < len(x) for a in norm):
            return None
        out = tuple(1 if i in norm else d for i, d in enumerate(x) if keep or i not in norm)
        return [(types[0], out)]
    rule.__doc__ = f"{op}: {rule.__doc__}"
    return rule


def _layer_norm(shapes, types, attr, value, opset, n_out=1) -> Out:
    """LayerNormalization, its first output only: the input's shape and element type."""
    if n_out != 1 or not shapes or shapes[0] is None or not types[0]:
        return None
    return [(types[0], shapes[0])]


def _batch_norm(shapes, types, attr, value, opset, n_out=1) -> Out:
    """BatchNormalization in inference (one output): the input's shape and element type."""
    if n_out != 1 or not shapes or shapes[0] is None or not types[0]:
        return None
    return [(types[0], shapes[0])]


def _global_pool(shapes, types, attr, value, opset) -> Out:
    """GlobalAveragePool / GlobalMaxPool: (N, C, 1, ...)."""
    if not shapes or shapes[0] is None or len(shapes[0]) < 2 or not types[0]:
        return None
    x = shapes[0]
    return [(types[0], x[:2] + (1,) * (len(x) - 2))]


def _first_input(shapes, types, attr, value, opset) -> Out:
    """ScatterND, ScatterElements, CumSum, Trilu, InstanceNormalization, LRN: the first input's shape
    and element type (what the other inputs hold does not change them)."""
    return _unary(shapes, types, attr, value, opset)


def _gather_elements(shapes, types, attr, value, opset) -> Out:
    """GatherElements: the indices' shape, the data's element type (ranks must agree)."""
    if len(shapes) != 2 or None in shapes or not types[0] or len(shapes[0]) != len(shapes[1]) or not shapes[0]:
        return None
    axis = int(attr("axis", 0))
    if not -len(shapes[0]) <= axis < len(shapes[0]):
        return None
    return [(types[0], shapes[1])]


def _pool(shapes, types, attr, value, opset, n_out=1) -> Out:
    """MaxPool / AveragePool / LpPool: (N, C, *spatial), each spatial dim from ONNX's window formula
    with ``kernel_shape``, ``strides``, ``pads``, ``dilations``, ``auto_pad`` and ``ceil_mode``
    (:func:`onnxperf.shapes.rules.conv_spatial`); MaxPool's optional indices: the same shape, int64."""
    if not shapes or shapes[0] is None or len(shapes[0]) < 3 or not types[0] or n_out > 2:
        return None
    x = shapes[0]
    n = len(x) - 2
    kernel = attr("kernel_shape", None)
    if kernel is None or len(kernel) != n:
        return None
    attrs = _window_attrs(attr, n)
    if attrs is None or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID") or (
            attrs.get("ceil_mode") and attrs.get("auto_pad", "NOTSET") != "NOTSET"):
        return None
    if attrs.get("ceil_mode"):
        return _ceil_pool(x, [int(k) for k in kernel], attrs, types[0], n_out, opset)
    spatial = conv_spatial(x[2:], [int(k) for k in kernel], attrs)
    if any(not isinstance(d, int) or d < 1 for d in spatial):
        return None
    out = x[:2] + tuple(spatial)
    return [(types[0], out), (INT64, out)][:n_out]


def _ceil_pool(x, kernel, attrs, elem, n_out, opset) -> Out:
    """Pooling with ``ceil_mode``: ``ceil((in + pads - effective kernel) / stride) + 1``; from opset
    22 less one when that last window would start in the end padding (``(out - 1)·stride >= in +
    pad_begin``). ONNX's inference gives exactly this, per opset (its version-22 schemas made the
    window that starts in the padding go, as its reference implementation, onnxruntime and PyTorch
    drop it at every opset); tests compare with the installed onnx and with its node test cases."""
    n = len(kernel)
    strides = list(attrs.get("strides") or [1] * n)
    dil = list(attrs.get("dilations") or [1] * n)
    pads = list(attrs.get("pads") or [0] * (2 * n))
    out = list(x[:2])
    for i in range(n):
        eff = (kernel[i] - 1) * dil[i] + 1
        span = x[2 + i] + pads[i] + pads[i + n] - eff
        if span < 0:
            return None
        out.append(ceil_windows(x[2 + i], span, strides[i], pads[i], drop_in_pad=opset >= 22))
    return [(elem, tuple(out)), (INT64, tuple(out))][:n_out]


def _split(shapes, types, attr, value, opset, n_out=1) -> Out:
    """Split: the input cut along ``axis`` by ``split`` (an attribute before opset 13, an input from
    it), by ``num_outputs`` (opset 18), or into equal parts, one per output."""
    if not shapes or shapes[0] is None or not types[0] or n_out < 1:
        return None
    x = shapes[0]
    axis = int(attr("axis", 0))
    a = axis + len(x) if axis < 0 else axis
    if not 0 <= a < len(x):
        return None
    if opset < 13:
        split = attr("split", None)
        split = None if split is None else [int(v) for v in split]
    elif len(shapes) > 1 and shapes[1] is not None:
        split = _ints(value(1))
        if split is None:
            return None
    else:
        split = None
    d = x[a]
    if split is None:
        parts = int(attr("num_outputs", n_out)) if opset >= 18 else n_out
        if parts != n_out:
            return None
        if opset >= 18 and attr("num_outputs", None) is not None:
            size = -(-d // parts)
            split = [size] * (parts - 1) + [d - size * (parts - 1)]
            if split[-1] < 0:
                return None
        else:
            if d % parts:
                return None
            split = [d // parts] * parts
    if len(split) != n_out or sum(split) != d or any(v < 0 for v in split):
        return None
    return [(types[0], x[:a] + (v,) + x[a + 1:]) for v in split]


def _tile(shapes, types, attr, value, opset) -> Out:
    """Tile: each dim times its ``repeats`` value."""
    if len(shapes) != 2 or None in shapes or not types[0] or opset < 6:
        return None
    reps = _ints(value(1))
    if reps is None or len(reps) != len(shapes[0]) or any(r < 0 for r in reps):
        return None
    return [(types[0], tuple(d * r for d, r in zip(shapes[0], reps)))]


def _constant_of_shape(shapes, types, attr, value, opset) -> Out:
    """ConstantOfShape: the shape input's value; the element type of ``value`` (float32 without it)."""
    if len(shapes) != 1 or shapes[0] is None:
        return None
    dims = _ints(value(0))
    if dims is None or any(d < 0 for d in dims):
        return None
    t = attr("value", None)
    elem = onnx.TensorProto.FLOAT if t is None else int(t.data_type)
    return [(elem, tuple(dims))]


def _topk(shapes, types, attr, value, opset, n_out=2) -> Out:
    """TopK: the input with ``axis`` cut to k (from the K input since opset 10), values in the
    input's type, indices int64."""
    if not shapes or shapes[0] is None or not types[0] or n_out != 2:
        return None
    x = shapes[0]
    if opset < 10:
        k = attr("k", None)
    else:
        kv = _ints(value(1)) if len(shapes) > 1 else None
        k = None if kv is None or len(kv) != 1 else kv[0]
    axis = int(attr("axis", -1))
    a = axis + len(x) if axis < 0 else axis
    if k is None or not 0 <= a < len(x) or not 0 <= int(k) <= x[a]:
        return None
    out = x[:a] + (int(k),) + x[a + 1:]
    return [(types[0], out), (INT64, out)]


def _arg_reduce(shapes, types, attr, value, opset) -> Out:
    """ArgMax / ArgMin: ``axis`` dropped (``keepdims=0``) or kept as 1; int64."""
    if not shapes or shapes[0] is None or not types[0]:
        return None
    x = shapes[0]
    axis = int(attr("axis", 0))
    a = axis + len(x) if axis < 0 else axis
    if not 0 <= a < len(x):
        return None
    keep = int(attr("keepdims", 1))
    return [(INT64, x[:a] + ((1,) if keep else ()) + x[a + 1:])]


def _depth_to_space(shapes, types, attr, value, opset) -> Out:
    """DepthToSpace: (N, C / b², H·b, W·b)."""
    b = int(attr("blocksize", 0))
    if not shapes or shapes[0] is None or len(shapes[0]) != 4 or not types[0] or b <= 0:
        return None
    n, c, h, w = shapes[0]
    if c % (b * b):
        return None
    return [(types[0], (n, c // (b * b), h * b, w * b))]


def _space_to_depth(shapes, types, attr, value, opset) -> Out:
    """SpaceToDepth: (N, C·b², H / b, W / b)."""
    b = int(attr("blocksize", 0))
    if not shapes or shapes[0] is None or len(shapes[0]) != 4 or not types[0] or b <= 0:
        return None
    n, c, h, w = shapes[0]
    if h % b or w % b:
        return None
    return [(types[0], (n, c * b * b, h // b, w // b))]


def _einsum(shapes, types, attr, value, opset) -> Out:
    """Einsum with an explicit output (``...->...``) and no ellipsis: each output label's dim, from
    the operands (a label's dims must agree)."""
    eq = attr("equation", None)
    if eq is None or None in shapes or not shapes or not _same_types(types):
        return None
    eq = (eq.decode() if isinstance(eq, bytes) else str(eq)).replace(" ", "")
    if "->" not in eq or "." in eq:
        return None
    lhs, rhs = eq.split("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        return None
    size: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape) or not term.isalpha():
            return None
        for label, d in zip(term, shape):
            if size.setdefault(label, d) != d:
                return None
    if len(set(rhs)) != len(rhs) or any(c not in size for c in rhs):
        return None
    return [(types[0], tuple(size[c] for c in rhs))]


def _quantize(shapes, types, attr, value, opset) -> Out:
    """QuantizeLinear: the input's shape; the zero point's element type, else ``output_dtype``
    (opset 21), else uint8."""
    if len(shapes) < 2 or shapes[0] is None or shapes[1] is None or not types[0]:
        return None
    if len(shapes) > 2 and shapes[2] is not None:
        elem = types[2]
    else:
        elem = int(attr("output_dtype", 0)) if opset >= 21 else 0
        elem = elem or onnx.TensorProto.UINT8
    return [(elem, shapes[0])] if elem else None


def _dequantize(shapes, types, attr, value, opset) -> Out:
    """DequantizeLinear: the input's shape, the scale's element type."""
    if len(shapes) < 2 or shapes[0] is None or shapes[1] is None or not types[1]:
        return None
    return [(types[1], shapes[0])]


def _gather_nd(shapes, types, attr, value, opset) -> Out:
    """GatherND: ``indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]``."""
    if len(shapes) != 2 or None in shapes or not types[0] or types[1] != INT64:
        return None
    data, ind = shapes
    b = int(attr("batch_dims", 0))
    if not ind or b < 0 or b >= min(len(data), len(ind)) or data[:b] != ind[:b]:
        return None
    last = ind[-1]
    if not 1 <= last <= len(data) - b:
        return None
    return [(types[0], ind[:-1] + data[b + last:])]


def _resize(shapes, types, attr, value, opset) -> Out:
    """Resize by ``sizes`` (opset 11 on; no ``axes``, the default ``stretch`` aspect policy): the
    sizes' value. Resize by ``scales`` is left to ONNX (its float rounding is ONNX's to give)."""
    if len(shapes) < 4 or shapes[0] is None or shapes[3] is None or not types[0]:
        return None
    if attr("axes", None) is not None or attr("keep_aspect_ratio_policy", b"stretch") not in (b"stretch", "stretch"):
        return None
    sizes = _ints(value(3))
    if sizes is None or len(sizes) != len(shapes[0]) or any(d < 0 for d in sizes):
        return None
    if len(shapes) > 2 and shapes[2] is not None and shapes[2] != (0,):
        return None  # scales and sizes both given: ONNX refuses
    return [(types[0], tuple(sizes))]


def _roi_align(shapes, types, attr, value, opset) -> Out:
    """RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]): (R, C, output_height, output_width)."""
    if len(shapes) != 3 or None in shapes or len(shapes[0]) != 4 or len(shapes[1]) != 2 or len(shapes[2]) != 1:
        return None
    if shapes[1][0] != shapes[2][0] or shapes[1][1] != 4 or not types[0] or types[1] != types[0]:
        return None
    return [(types[0], (shapes[1][0], shapes[0][1], int(attr("output_height", 1)), int(attr("output_width", 1))))]


_UNARY = ("Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Celu", "Clip", "Cos", "Cosh",
          "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
          "LeakyRelu", "Log", "LogSoftmax", "Mish", "Neg", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid",
          "Sign", "Sin", "Sinh", "Softmax", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu")

#: the ops this module shapes; multi-output ops take the node's output count as ``n_out``
RULES: dict[str, StaticRule] = {
    **{op: _arith for op in ("Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum", "Mean")},
    "Pow": _pow,
    **{op: _compare for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor")},
    "Where": _where,
    **{op: _unary for op in _UNARY},
    **{op: _to_bool for op in ("Not", "IsNaN", "IsInf")},
    "Cast": _cast, "MatMul": _matmul, "Gemm": _gemm, "Transpose": _transpose, "Reshape": _reshape,
    "Flatten": _flatten, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Concat": _concat, "Gather": _gather,
    "Slice": _slice, "Expand": _expand, "Pad": _pad, "Conv": _conv,
    **{op: _reduce(op) for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                  "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")},
    "GlobalAveragePool": _global_pool, "GlobalMaxPool": _global_pool,
    **{op: _first_input for op in ("ScatterND", "ScatterElements", "CumSum", "Trilu", "InstanceNormalization",
                                   "LRN")},
    "GatherElements": _gather_elements, "AveragePool": _pool, "LpPool": _pool, "Tile": _tile,
    "ConstantOfShape": _constant_of_shape, "ArgMax": _arg_reduce, "ArgMin": _arg_reduce,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth, "Einsum": _einsum,
    "QuantizeLinear": _quantize, "DequantizeLinear": _dequantize, "GatherND": _gather_nd, "Resize": _resize,
    "RoiAlign": _roi_align,
}
#: ops whose rule takes the number of outputs the node asks for
MULTI_OUTPUT = {"Dropout": _dropout, "LayerNormalization": _layer_norm, "MaxPool": _pool, "Split": _split,
                "TopK": _topk, "BatchNormalization": _batch_norm}

#: Clip before opset 6 and Softmax-style ops are the same shape in every version; the few ops
#: whose early versions took other inputs or attributes are served from these opsets on
_MIN_OPSET = {"Clip": 6, "Reshape": 5, "Unsqueeze": 1, "Squeeze": 1, "Concat": 4, "Pad": 2, "Gather": 1,
              "Dropout": 7, "Cast": 6, "Where": 9, "Expand": 8, "Erf": 9, "Mod": 10, "Gelu": 20,
              "Mish": 18, "Celu": 12, "HardSwish": 14, "Acosh": 9, "Asinh": 9, "Atanh": 9, "Sinh": 9, "Cosh": 9,
              "Sign": 9, "IsNaN": 9, "IsInf": 10, "Max": 8, "Min": 8, "Sum": 8, "Mean": 8, "Less": 9,
              "Greater": 9, "Equal": 11, "LessOrEqual": 12, "GreaterOrEqual": 12, "And": 7, "Or": 7, "Xor": 7,
              "Add": 7, "Sub": 7, "Mul": 7, "Div": 7, "Pow": 7, "Flatten": 9, "Gemm": 7, "Conv": 1,
              "LayerNormalization": 17, "Transpose": 1, "ScatterND": 11, "ScatterElements": 11, "CumSum": 11,
              "Trilu": 14, "InstanceNormalization": 6, "LRN": 1, "GatherElements": 11, "AveragePool": 7,
              "LpPool": 11, "MaxPool": 8, "Split": 2, "Tile": 6, "ConstantOfShape": 9, "TopK": 1, "ArgMax": 1,
              "ArgMin": 1, "DepthToSpace": 1, "SpaceToDepth": 1, "BatchNormalization": 14, "Einsum": 12,
              "QuantizeLinear": 13, "DequantizeLinear": 13, "GatherND": 12, "Resize": 11, "RoiAlign": 10}


def rule_for(op_type: str, opset: int) -> StaticRule | None:
    """The fast shape function of a default-domain op at ``opset``, or None."""
    if opset < _MIN_OPSET.get(op_type, 1):
        return None
    return RULES.get(op_type) or MULTI_OUTPUT.get(op_type)


def shapes_of(op_type: str, opset: int, shapes, types, attr, value, n_out: int) -> Out:
    """The output (element type, shape) pairs of a node whose present inputs are all static, or
    None where ONNX's inference should answer."""
    rule = rule_for(op_type, opset)
    if rule is None:
        return None
    return apply(rule, op_type, opset, shapes, types, attr, value, n_out)


def apply(rule: StaticRule, op_type: str, opset: int, shapes, types, attr, value, n_out: int) -> Out:
    """:func:`shapes_of` with the rule already looked up (:func:`rule_for`)."""
    try:
        if op_type in MULTI_OUTPUT:
            out = rule(shapes, types, attr, value, opset, n_out)
        elif n_out != 1:
            return None
        else:
            out = rule(shapes, types, attr, value, opset)
    except (TypeError, ValueError, IndexError, ArithmeticError):  # a bad attribute (a stride of 0): not shaped here
        return None
    if out is not None and any(not 0 <= d <= INT64_MAX for _, shape in out for d in shape):
        return None  # beyond what an ONNX dim (int64) holds: ONNX's own arithmetic would wrap
    return out


__all__ = ["MULTI_OUTPUT", "RULES", "apply", "rule_for", "shapes_of"]
