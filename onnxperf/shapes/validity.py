"""Attributes no runtime accepts: a node that holds one is named, not shaped and not costed.

A model file is untrusted: a Conv with a stride of 0 divides by zero in every shape function,
``Cast(to=10**12)`` names no element type. ONNX's checker does not look at attribute values, so
such a node reaches the shape pass; onnxruntime refuses the model when it builds its session. This
module says what is wrong in one line (``strides 0: each must be at least 1``), the shape pass
leaves the node's outputs unshaped, and the walker counts the node as ``unknown_shape`` with that
line as its note: unknown, never a guess and never a crash.

The rules follow the operator specs (onnx/docs/Operators.md): strides, dilations, kernel sizes,
groups and block sizes are positive; pads and output paddings are not negative; an element-type
attribute (``to``, ``dtype``, ``output_dtype``) names a type of ``onnx.TensorProto``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import onnx

from onnxperf.base import dtypes
from onnxperf.shapes.einsum import valid_equation
from onnxperf.shapes.rules import attributes

#: op types with window attributes (convolutions and pools, every domain that keeps ONNX's names)
WINDOWED = frozenset({
    "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "MaxPool", "AveragePool", "LpPool",
    "MaxUnpool", "MaxRoiPool", "NhwcConv", "FusedConv", "NhwcMaxPool", "QLinearAveragePool", "NhwcFusedConv",
    "QLinearGlobalAveragePool", "Col2Im",
})
#: attributes that must be at least 1, where present
POSITIVE_LISTS = ("strides", "dilations", "kernel_shape", "block_shape")
POSITIVE = ("group", "blocksize")
#: attributes that must not be negative, where present
NON_NEGATIVE_LISTS = ("pads", "output_padding")
#: attributes holding an element type, by op type (0 means "not set" where the spec allows a default)
TYPE_ATTRS = {
    "Cast": ("to", False), "EyeLike": ("dtype", True), "RandomNormal": ("dtype", True),
    "RandomUniform": ("dtype", True), "RandomNormalLike": ("dtype", True), "RandomUniformLike": ("dtype", True),
    "Multinomial": ("dtype", True), "Bernoulli": ("dtype", True), "QuantizeLinear": ("output_dtype", True),
    "DynamicQuantizeLinear": ("to", True),
}


#: every op type :func:`problem` looks at (the shape pass asks only for these)
CHECKED = WINDOWED | {"DepthToSpace", "SpaceToDepth", "Einsum"} | frozenset(TYPE_ATTRS)


def _ints(v: Any) -> list[int] | None:
    if isinstance(v, (list, tuple)):
        return [x for x in v if isinstance(x, int)]
    return [v] if isinstance(v, int) else None


def problem(op_type: str, attrs: Mapping[str, Any]) -> str | None:
    """What makes this node's attributes invalid, in one line, or None when nothing does.

    ``attrs`` maps attribute names to Python values (:func:`onnxperf.shapes.rules.attributes`)."""
    if op_type in WINDOWED:
        for key in POSITIVE_LISTS:
            vals = _ints(attrs.get(key))
            bad = [x for x in vals or () if x < 1]
            if bad:
                return f"{key} {bad[0]}: each must be at least 1"
        for key in POSITIVE:
            vals = _ints(attrs.get(key))
            if vals and vals[0] < 1:
                return f"{key} {vals[0]}: must be at least 1"
        for key in NON_NEGATIVE_LISTS:
            vals = _ints(attrs.get(key))
            bad = [x for x in vals or () if x < 0]
            if bad:
                return f"{key} {bad[0]}: each must be at least 0"
    elif op_type in ("DepthToSpace", "SpaceToDepth"):
        b = attrs.get("blocksize")
        if isinstance(b, int) and b < 1:
            return f"blocksize {b}: must be at least 1"
    elif op_type == "Einsum":
        eq = attrs.get("equation")
        if isinstance(eq, bytes):
            eq = eq.decode("utf-8", "replace")
        if eq is not None and not valid_equation(eq):
            return f"equation {eq!r}: not an einsum equation the ONNX spec allows"
    hit = TYPE_ATTRS.get(op_type)
    if hit is not None:
        key, optional = hit
        v = attrs.get(key)
        if v is None or (optional and v == 0):
            return None
        if not dtypes.known(v):
            return f"{key} = {v}: names no ONNX element type"
    return None


@lru_cache(maxsize=4096)
def required(domain: str, op_type: str, opset: int) -> tuple[str, ...]:
    """The attributes ONNX's schema of this op (at this opset) requires; () for an op it does not know."""
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # an op of another domain or a newer opset: nothing known to require
        return ()
    return tuple(sorted(name for name, a in schema.attributes.items() if a.required))


def node_problem(node: onnx.NodeProto, domain: str, opset: int) -> str | None:
    """:func:`problem` for a node, and a required attribute the node lacks (``size: required,
    missing`` for an LRN without one): None when the node is one a runtime accepts."""
    need = required(domain, node.op_type, opset) if domain in ("", "ai.onnx", "ai.onnx.ml") else ()
    if need:
        have = {a.name for a in node.attribute}
        missing = [k for k in need if k not in have]
        if missing:
            return f"{missing[0]}: required, missing"
    if node.op_type in CHECKED and domain in ("", "ai.onnx", "com.microsoft"):
        return problem(node.op_type, attributes(node))
    return None


__all__ = ["CHECKED", "node_problem", "problem", "required"]
