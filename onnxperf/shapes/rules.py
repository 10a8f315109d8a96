"""Own shape functions: output element types and shapes of the ops whose shapes ONNX cannot infer.

They run in the forward pass of :mod:`onnxperf.shapes.forward`, node by node, after ONNX's own
inference of that node (where ONNX has a schema with an inference function) has had its go:

- ``ai.onnx.ml`` operators, whose schemas infer element types only (this module);
- ``GroupNormalization`` and ``MeanVarianceNormalization`` (function ops ONNX does not shape) and
  ``BatchNormalization``'s training outputs (this module);
- every ``com.microsoft`` op that has a cost rule (:mod:`onnxperf.shapes.rules_ms`).

A shape function receives a :class:`ShapeCtx` (input shapes, element types, small constant values,
attributes) and returns one ``(element type, shape)`` per output, ``None`` for an output it cannot
tell and ``0`` for an element type it does not know. Dims are ints, symbols (str) or None.
Nothing is guessed: a function that lacks what it needs says None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from onnxperf.shapes.einsum import einsum_labels, einsum_output_shape

Dim = int | str | None
Shape = tuple  # of Dim
Out = tuple[int, Shape | None] | None
Rule = Callable[["ShapeCtx"], list[Out]]

ML = "ai.onnx.ml"
MS = "com.microsoft"

F = onnx.TensorProto.FLOAT
I64 = onnx.TensorProto.INT64
I32 = onnx.TensorProto.INT32
S = onnx.TensorProto.STRING
B = onnx.TensorProto.BOOL
U8 = onnx.TensorProto.UINT8


@dataclass(frozen=True)
class ShapeCtx:
    """What a shape function knows of a node: per input (absent optional inputs are None / 0)."""

    node: onnx.NodeProto
    shapes: tuple[Shape | None, ...]
    types: tuple[int, ...]
    values: tuple[np.ndarray | None, ...]
    attrs: dict[str, Any]

    def shape(self, i: int) -> Shape | None:
        return self.shapes[i] if i < len(self.shapes) else None

    def type(self, i: int) -> int:
        return self.types[i] if i < len(self.types) else 0

    def value(self, i: int) -> np.ndarray | None:
        return self.values[i] if i < len(self.values) else None

    def has(self, i: int) -> bool:
        """Whether optional input ``i`` is given (its name is not empty)."""
        return i < len(self.node.input) and bool(self.node.input[i])

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    @property
    def n_outputs(self) -> int:
        return len(self.node.output)


def attributes(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


# ------------------------------------------------------------------ dim arithmetic


def dim_mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return None


def dim_add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return None


def dim_div(a: Dim, b: int) -> Dim:
    """``a / b`` when it divides exactly; None otherwise (a shape is never rounded)."""
    if isinstance(a, int) and b and a % b == 0:
        return a // b
    return None


def broadcast(*shapes: Shape | None) -> Shape | None:
    """numpy broadcasting of shapes with symbolic dims: equal symbols stay, a 1 yields, anything
    else unknown becomes None."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for i in range(rank):
        ds = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in ds if d != 1}
        if not known:
            out.append(1)
        elif len(known) == 1:
            out.append(known.pop())
        else:  # a symbol broadcast against a number is that number (or the shapes disagree)
            ints = {d for d in known if isinstance(d, int)}
            out.append(ints.pop() if len(ints) == 1 else None)
    return tuple(out)


def matmul_shape(a: Shape | None, b: Shape | None) -> Shape | None:
    """numpy ``matmul`` of shapes (1-D operands promoted and their dim dropped, batch broadcast)."""
    if a is None or b is None or not a or not b:
        return None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    batch = broadcast(a2[:-2], b2[:-2])
    if batch is None:
        return None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def conv_spatial(spatial: Sequence[Dim], kernel: Sequence[Dim], attrs: dict[str, Any],
                 transposed: bool = False) -> list[Dim]:
    """Output spatial dims of a convolution or pooling window (ONNX's formulas, floor division,
    ``ceil_mode`` honoured; ``auto_pad`` SAME_* and VALID)."""
    n = len(spatial)
    strides = list(attrs.get("strides") or [1] * n)
    dil = list(attrs.get("dilations") or [1] * n)
    pads = list(attrs.get("pads") or [0] * (2 * n))
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    ceil = int(attrs.get("ceil_mode", 0))
    out: list[Dim] = []
    for i, x in enumerate(spatial):
        k = kernel[i] if i < len(kernel) else None
        if not isinstance(x, int) or not isinstance(k, int):
            out.append(None)
            continue
        eff = (k - 1) * dil[i] + 1
        if transposed:
            op = list(attrs.get("output_padding") or [0] * n)
            if attrs.get("output_shape"):
                out.append(int(attrs["output_shape"][i]))
            elif auto in ("SAME_UPPER", "SAME_LOWER"):
                out.append(x * strides[i])
            else:
                out.append(strides[i] * (x - 1) + op[i] + eff - pads[i] - pads[i + n])
            continue
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            out.append(-(-x // strides[i]))
        elif auto == "VALID":
            out.append((x - eff) // strides[i] + 1)
        else:
            span = x + pads[i] + pads[i + n] - eff
            out.append(ceil_windows(x, span, strides[i], pads[i]) if ceil else span // strides[i] + 1)
    return out


def ceil_windows(size: int, span: int, stride: int, pad_begin: int, drop_in_pad: bool = True) -> int:
    """Windows of a ``ceil_mode`` pooling along one axis, ``span`` = padded size − effective kernel:
    ``ceil(span / stride) + 1``, less one when the last window would start in the end padding
    (``(out − 1)·stride ≥ size + pad_begin``) and ``drop_in_pad``: as onnxruntime runs every pooling
    and ONNX's inference shapes the version-22 pooling ops (before, it keeps that window)."""
    out = -(-span // stride) + 1
    if drop_in_pad and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


# ------------------------------------------------------------------ ai.onnx.ml


def _rows(shape: Shape | None) -> Dim:
    """Rows: the first dim of a [N, F] input, 1 for a 1-D input."""
    if shape is None:
        return None
    return shape[0] if len(shape) >= 2 else 1


def _classes(a: dict[str, Any]) -> int | None:
    labels = a.get("classlabels_ints") or a.get("classlabels_strings") or a.get("classlabels_int64s")
    return len(labels) if labels else None


def _label_type(a: dict[str, Any]) -> int:
    return S if a.get("classlabels_strings") else I64


def _same_as_input(elem: int | None = None) -> Rule:
    """Output 0 has input 0's shape (and ``elem``, or input 0's element type)."""
    return lambda c: [(elem if elem is not None else c.type(0), c.shape(0))]


def _regressor(key: str | None, default: int) -> Rule:
    return lambda c: [(F, (_rows(c.shape(0)), int(c.attr(key, default)) if key else default))]


def _classifier(c: ShapeCtx) -> list[Out]:
    n, k = _rows(c.shape(0)), _classes(c.attrs)
    return [(_label_type(c.attrs), (n,)), (F, (n, k) if k is not None else None)]


def _array_feature_extractor(c: ShapeCtx) -> list[Out]:
    x, idx = c.shape(0), c.shape(1)
    if x is None or idx is None:
        return [None]
    k: Dim = 1
    for d in idx:
        k = dim_mul(k, d)
    return [(c.type(0), tuple(x[:-1]) + (k,) if len(x) > 1 else (1, k))]


def _feature_vectorizer(c: ShapeCtx) -> list[Out]:
    dims = c.attr("inputdimensions") or []
    return [(F, (_rows(c.shape(0)), sum(int(d) for d in dims) if dims else None))]


def _one_hot_encoder(c: ShapeCtx) -> list[Out]:
    cats = c.attr("cats_int64s") or c.attr("cats_strings")
    return [(F, tuple(c.shape(0)) + (len(cats),)) if c.shape(0) is not None and cats else None]


def _label_encoder(c: ShapeCtx) -> list[Out]:
    for key, t in (("values_strings", S), ("values_int64s", I64), ("values_floats", F)):
        if c.attr(key):
            return [(t, c.shape(0))]
    return [(0, c.shape(0))]


def _category_mapper(c: ShapeCtx) -> list[Out]:
    return [(I64 if c.type(0) == S else S, c.shape(0))]


def _tree_ensemble(c: ShapeCtx) -> list[Out]:
    return [(c.type(0), (_rows(c.shape(0)), int(c.attr("n_targets", 1))))]


def _linear_classifier(c: ShapeCtx) -> list[Out]:
    return _classifier(c)


# ------------------------------------------------------------------ ai.onnx functions ONNX leaves open


def _batch_norm(c: ShapeCtx) -> list[Out]:
    """Y like X; the training outputs running_mean / running_var (and, before opset 14, the saved
    mean and inverse std) are [C]."""
    x = c.shape(0)
    ch = (x[1],) if x is not None and len(x) >= 2 else (c.shape(1) if c.shape(1) is not None else None)
    outs: list[Out] = [(c.type(0), x)]
    for j in range(1, c.n_outputs):
        outs.append((c.type(3) or c.type(0), ch))
    return outs


def _einsum(c: ShapeCtx) -> list[Out]:
    """Einsum where ONNX's inference refuses: ellipses standing for different numbers of dims
    (``...ij,...jk`` on [3, 4] and [2, 4, 5] -> [2, 3, 5]), broadcast right-aligned as numpy does
    (:func:`onnxperf.shapes.einsum.einsum_output_shape`). Static shapes only; a label or ellipsis
    dim that does not broadcast (sizes other than equal or 1) gives nothing."""

    eq = c.attr("equation")
    eq = eq.decode() if isinstance(eq, bytes) else eq
    shapes = [c.shape(i) for i in range(len(c.node.input))]
    if not isinstance(eq, str) or not shapes or any(
            s is None or any(not isinstance(d, int) for d in s) for s in shapes):
        return [None]
    try:
        labelled, _, _ = einsum_labels(eq, shapes)
        seen: dict[str, set[int]] = {}
        for labels, shape in zip(labelled, shapes):
            if len(labels) != len(shape):
                return [None]
            for lab, d in zip(labels, shape):
                seen.setdefault(lab, set()).add(int(d))
        for lab, dims in seen.items():
            if len(dims - {1}) > 1 or (not lab.startswith("…") and len(dims) > 1):
                return [None]
        return [(c.type(0), tuple(int(d) for d in einsum_output_shape(eq, shapes)))]
    except (KeyError, ValueError, IndexError):
        return [None]


RULES: dict[tuple[str, str], Rule] = {
    (ML, "LinearRegressor"): _regressor("targets", 1),
    (ML, "SVMRegressor"): _regressor(None, 1),
    (ML, "TreeEnsembleRegressor"): _regressor("n_targets", 1),
    (ML, "TreeEnsemble"): _tree_ensemble,
    (ML, "LinearClassifier"): _linear_classifier,
    (ML, "SVMClassifier"): _classifier,
    (ML, "TreeEnsembleClassifier"): _classifier,
    (ML, "Normalizer"): _same_as_input(F), (ML, "Scaler"): _same_as_input(F), (ML, "Imputer"): _same_as_input(),
    (ML, "Binarizer"): _same_as_input(),
    (ML, "LabelEncoder"): _label_encoder, (ML, "CategoryMapper"): _category_mapper,
    (ML, "ArrayFeatureExtractor"): _array_feature_extractor,
    (ML, "FeatureVectorizer"): _feature_vectorizer,
    (ML, "OneHotEncoder"): _one_hot_encoder,
    ("", "GroupNormalization"): _same_as_input(),
    ("", "MeanVarianceNormalization"): _same_as_input(),
    ("", "BatchNormalization"): _batch_norm,
    ("", "Einsum"): _einsum,
}

#: ops that are maps or sequences, not tensors: no tensor shape to give (their cost rules say so)
NON_TENSOR = frozenset({(ML, "ZipMap"), (ML, "DictVectorizer"), (ML, "CastMap")})


