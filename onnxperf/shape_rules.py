"""Own shape rules, used only where ONNX's inference and onnxruntime's symbolic inference both
leave an output without a shape (see :mod:`onnxperf.shapes`).

Today: the ``ai.onnx.ml`` operators, whose schemas infer element types only. Each rule maps the
node's input shapes and attributes to its output shapes (None where it cannot tell); element types
come from ONNX's inference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import onnx

Shape = tuple  # of int | str | None
Rule = Callable[[Sequence[Shape | None], dict[str, Any]], list[Shape | None]]

ML = "ai.onnx.ml"


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _n(shape: Shape | None):
    """Rows: the first dim of a [N, F] input, 1 for a 1-D input."""
    if shape is None:
        return None
    return shape[0] if len(shape) >= 2 else 1


def _classes(a: dict[str, Any]) -> int | None:
    labels = a.get("classlabels_ints") or a.get("classlabels_strings") or a.get("classlabels_int64s")
    return len(labels) if labels else None


def _same(ins, a):
    return [ins[0]]


def _regressor(key: str, default: int) -> Rule:
    return lambda ins, a: [(_n(ins[0]), int(a.get(key, default)))]


def _classifier(ins, a):
    n, c = _n(ins[0]), _classes(a)
    return [(n,), (n, c) if c is not None else None]


def _array_feature_extractor(ins, a):
    x, idx = ins[0], ins[1] if len(ins) > 1 else None
    if x is None or idx is None:
        return [None]
    k = 1
    for d in idx:
        k = k * d if isinstance(d, int) and isinstance(k, int) else None
    return [tuple(x[:-1]) + (k,)] if len(x) > 1 else [(1, k)]


def _feature_vectorizer(ins, a):
    dims = a.get("inputdimensions") or []
    return [(_n(ins[0]) if ins and ins[0] is not None else None, sum(int(d) for d in dims) if dims else None)]


def _one_hot_encoder(ins, a):
    cats = a.get("cats_int64s") or a.get("cats_strings")
    return [tuple(ins[0]) + (len(cats),)] if ins[0] is not None and cats else [None]


RULES: dict[tuple[str, str], Rule] = {
    (ML, "LinearRegressor"): _regressor("targets", 1),
    (ML, "SVMRegressor"): lambda ins, a: [(_n(ins[0]), 1)],
    (ML, "TreeEnsembleRegressor"): _regressor("n_targets", 1),
    (ML, "TreeEnsemble"): _regressor("n_targets", 1),
    (ML, "LinearClassifier"): _classifier,
    (ML, "SVMClassifier"): _classifier,
    (ML, "TreeEnsembleClassifier"): _classifier,
    (ML, "Normalizer"): _same, (ML, "Scaler"): _same, (ML, "Imputer"): _same, (ML, "Binarizer"): _same,
    (ML, "LabelEncoder"): _same, (ML, "CategoryMapper"): _same,
    (ML, "ArrayFeatureExtractor"): _array_feature_extractor,
    (ML, "FeatureVectorizer"): _feature_vectorizer,
    (ML, "OneHotEncoder"): _one_hot_encoder,
}


F = onnx.TensorProto.FLOAT
I64 = onnx.TensorProto.INT64
S = onnx.TensorProto.STRING
SAME = -1  # the first input's element type


def _label_type(a: dict[str, Any]) -> int:
    return S if a.get("classlabels_strings") else I64


#: element types of the outputs, for when ONNX's inference left them undefined
DTYPES: dict[tuple[str, str], Callable[[dict[str, Any]], list[int]]] = {
    (ML, "LinearRegressor"): lambda a: [F], (ML, "SVMRegressor"): lambda a: [F],
    (ML, "TreeEnsembleRegressor"): lambda a: [F], (ML, "TreeEnsemble"): lambda a: [SAME],
    (ML, "LinearClassifier"): lambda a: [_label_type(a), F], (ML, "SVMClassifier"): lambda a: [_label_type(a), F],
    (ML, "TreeEnsembleClassifier"): lambda a: [_label_type(a), F],
    (ML, "Normalizer"): lambda a: [F], (ML, "Scaler"): lambda a: [F], (ML, "Imputer"): lambda a: [SAME],
    (ML, "Binarizer"): lambda a: [SAME], (ML, "ArrayFeatureExtractor"): lambda a: [SAME],
    (ML, "FeatureVectorizer"): lambda a: [F], (ML, "OneHotEncoder"): lambda a: [F],
}


def output_shapes(node: onnx.NodeProto, input_shapes: Sequence[Shape | None]) -> list[Shape | None] | None:
    """Output shapes by our own rule, or None when there is no rule for this op."""
    rule = RULES.get((node.domain, node.op_type))
    if rule is None:
        return None
    return rule(list(input_shapes), _attrs(node))


def output_dtypes(node: onnx.NodeProto, first_input_type: int) -> list[int] | None:
    """Output element types by our own rule (None: no rule, or it depends on attributes we lack)."""
    rule = DTYPES.get((node.domain, node.op_type))
    if rule is None:
        return None
    return [first_input_type if t == SAME else t for t in rule(_attrs(node))]
