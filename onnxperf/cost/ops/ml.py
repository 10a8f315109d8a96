"""Classical ML operators of the ``ai.onnx.ml`` domain (scikit-learn style models).

Notation: N samples, F features (the last dim of X), E linear classifiers or targets,
C classes, V support vectors. The tree ensembles are in :mod:`.ml_trees`.

The model of these ops lives in attributes (coefficients, support vectors, tree nodes), not
in input tensors, so the default traffic (inputs only) would miss it: the model-like rules
add the bytes of their numeric and string list attributes (ints 8 bytes, floats 4, strings
their UTF-8 length), read once per call. Tensor-valued attributes are not visible to rules;
where one matters (TreeEnsemble's splits and leaf weights, in :mod:`.ml_trees`) its size is
derived from the node count. Lookup ops (LabelEncoder, CategoryMapper, OneHotEncoder) read only the table
entries they hit: their tables are not added.

A table lookup (hash or ordered map) counts as 1 integer op per looked-up element; string
hashing, whose cost scales with string length, is not counted beyond that.

ONNX infers element types but not shapes for most of these ops, so the rules whose output
shape follows from X's shape and the attributes are registered with
``outputs_may_be_unknown`` and compute the bytes they write themselves (an output's own
static shape is used when known). The walker then marks them inexact when it had no output
shape.

Map- and sequence-typed values have no static shape in onnxperf: CastMap and
DictVectorizer (map inputs) are reported unknown_shape; ZipMap (sequence output) is
registered with ``outputs_may_be_unknown`` and estimates its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from onnx import TensorProto

from onnxperf.base import dtypes
from onnxperf.cost.ops.elementwise import PER_ELEMENT
from onnxperf.cost.ops.reduce import ROW_WISE
from onnxperf.cost.ops.registry import NodeView, OpCost, arith, register, rule

ML = "ai.onnx.ml"

#: ops per score of a post_transform: LOGISTIC = the Sigmoid rule's 1/(1 + exp(−x)) (neg,
#: exp, add, div); SOFTMAX = the Softmax rule's per element (max, sub, exp, sum, div);
#: SOFTMAX_ZERO also tests for zero; PROBIT = √2·erfinv(2p − 1) (mul, sub, erfinv, mul).
POST_TRANSFORM_OPS: dict[str, int] = {
    "NONE": 0,
    "LOGISTIC": PER_ELEMENT["Sigmoid"],
    "SOFTMAX": ROW_WISE["Softmax"][0],
    "SOFTMAX_ZERO": ROW_WISE["Softmax"][0] + 1,
    "PROBIT": 4,
}
#: TreeEnsemble (ai.onnx.ml 5) encodes post_transform as an int.
_POST_TRANSFORM_BY_INT = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")

#: SVM kernel transform per (sample, support vector), after the dot product or distance:
#: POLY (gamma·d + coef0)^degree: mul, add, pow; RBF exp(−gamma·|x − s|²): mul, exp
#: (plus F subtracts for the difference); SIGMOID tanh(gamma·d + coef0): mul, add, tanh.
SVM_KERNEL_OPS: dict[str, int] = {"LINEAR": 0, "POLY": 3, "RBF": 2, "SIGMOID": 3}

#: Normalizer, ops per row of C values.
NORMALIZER_ROW_OPS = {
    "MAX": lambda c: (c - 1) + c,          # max, divide
    "L1": lambda c: c + (c - 1) + c,       # abs, sum, divide
    "L2": lambda c: c + (c - 1) + 1 + c,   # square, sum, sqrt, divide
}


def rows_features(x_shape: Sequence[int]) -> tuple[int, int]:
    """(N, F): samples and features of an [N, F] (or [F]) input."""
    f = x_shape[-1] if x_shape else 1
    n = 1
    for d in x_shape[:-1]:
        n *= d
    return n, f


def _list_bytes(values: Iterable) -> int:
    total = 0
    for v in values:
        if isinstance(v, str):
            total += len(v.encode("utf-8"))
        elif isinstance(v, bytes):
            total += len(v)
        elif isinstance(v, float):
            total += 4
        else:
            total += 8
    return total


def attr_bytes(n: NodeView, names: Iterable[str] | None = None) -> int:
    """Bytes of the node's list-valued attributes (all of them when ``names`` is None)."""
    keys = n.attrs.keys() if names is None else names
    return sum(_list_bytes(v) for k in keys if isinstance(v := n.attrs.get(k), (list, tuple)))


def post_transform_ops(n: NodeView) -> int:
    """Ops per score of the node's ``post_transform`` (a string, or TreeEnsemble's int code)."""
    pt = n.attr("post_transform", "NONE")
    if isinstance(pt, int):
        pt = _POST_TRANSFORM_BY_INT[pt]
    return POST_TRANSFORM_OPS[pt]


def written(n: NodeView, outputs: Sequence[tuple[int, int]]) -> int:
    """Bytes written: per output slot i, its static shape when known, else ``(elem_type,
    numel)`` from the rule's formula (string labels count 0 bytes)."""
    total = 0
    for i, (elem_type, numel) in enumerate(outputs):
        if i >= len(n.outputs):
            break
        total += n.out(i).nbytes if n.has_output(i) else dtypes.nbytes(elem_type, numel)
    return total


def label_type(n: NodeView, ints_attr: str) -> int:
    """int64 labels when the ``ints_attr`` list is given, else string labels."""
    return TensorProto.INT64 if n.attr(ints_attr) else TensorProto.STRING


F32 = TensorProto.FLOAT


def model_cost(n: NodeView, *, macs: int, flops: int, int_ops: int = 0, exact: bool = True,
                note: str = "", extra_bytes: int = 0, bytes_written: int | None = None) -> OpCost:
    """An OpCost whose bytes_read is X plus the model's list attributes."""
    read = sum(t.nbytes for t in n.present_inputs) + attr_bytes(n) + extra_bytes
    return OpCost(macs=macs, flops=flops, int_ops=int_ops, bytes_read=read, exact=exact, note=note,
                  bytes_written=bytes_written)


# --- linear models -----------------------------------------------------------------------

@rule("LinearClassifier", family="matmul", domain=ML, outputs_may_be_unknown=True)
def linear_classifier(n: NodeView) -> OpCost:
    """LinearClassifier: E = len(coefficients)/F classifiers. MACs = N·E·F; FLOPs = 2·MACs
    + N·E (intercepts, when given) + N·E·post_transform + N·max(E − 1, 1) (label choice).
    Arithmetic is in float (the coefficients are floats) whatever X's type.
    bytes_read = X + coefficients, intercepts and class labels."""
    samples, f = rows_features(n.inp(0).shape)
    e = len(n.attr("coefficients", [])) // f
    macs = samples * e * f
    scores = samples * e
    flops = (2 * macs + (scores if n.attr("intercepts") else 0) + scores * post_transform_ops(n)
             + samples * max(e - 1, 1))
    out = written(n, [(label_type(n, "classlabels_ints"), samples), (F32, scores)])
    return model_cost(n, macs=macs, flops=flops, bytes_written=out)


@rule("LinearRegressor", family="matmul", domain=ML, outputs_may_be_unknown=True)
def linear_regressor(n: NodeView) -> OpCost:
    """LinearRegressor: E = ``targets``. MACs = N·E·F; FLOPs = 2·MACs + N·E (intercepts, when
    given) + N·E·post_transform. bytes_read = X + coefficients and intercepts."""
    samples, f = rows_features(n.inp(0).shape)
    e = int(n.attr("targets"))
    macs = samples * e * f
    flops = 2 * macs + (samples * e if n.attr("intercepts") else 0) + samples * e * post_transform_ops(n)
    return model_cost(n, macs=macs, flops=flops, bytes_written=written(n, [(F32, samples * e)]))


# --- support vector machines ---------------------------------------------------------------

def _svm_kernel(n: NodeView, samples: int, v: int, f: int) -> tuple[int, int]:
    """(MACs, extra FLOPs) of evaluating the kernel of N samples against V support vectors."""
    kernel = n.attr("kernel_type")
    macs = samples * v * f
    extra = samples * v * SVM_KERNEL_OPS[kernel] + (samples * v * f if kernel == "RBF" else 0)
    return macs, extra


@rule("SVMClassifier", family="matmul", domain=ML, outputs_may_be_unknown=True)
def svm_classifier(n: NodeView) -> OpCost:
    """SVMClassifier. With support vectors (V = len(support_vectors)/F, C classes): kernel
    MACs N·V·F (+ N·V·F subtracts for RBF, + N·V·kernel ops), one-vs-one decisions over
    C(C−1)/2 classifiers using each vector in C − 1 of them: N·(C − 1)·V MACs, + N·C(C−1)/2
    rho adds and 2·N·C(C−1)/2 vote ops (compare, increment), + N·(C − 1) for the winner.
    Without support vectors (linear SVM), E = len(coefficients)/F: MACs N·E·F, + N·E rho adds.
    Then N·Z·post_transform on the Z score columns. Platt probabilities (prob_a/prob_b) need
    an iterative pairwise coupling that is not counted: inexact then."""
    samples, f = rows_features(n.inp(0).shape)
    labels = n.attr("classlabels_ints") or n.attr("classlabels_strings") or []
    c = max(len(labels), 2)
    sv = len(n.attr("support_vectors", [])) // f if n.attr("vectors_per_class") else 0
    pairs = c * (c - 1) // 2
    if sv:
        kmacs, extra = _svm_kernel(n, samples, sv, f)
        dmacs = samples * (c - 1) * sv
        macs = kmacs + dmacs
        flops = 2 * macs + extra + samples * pairs * 3 + samples * (c - 1)
    else:
        e = len(n.attr("coefficients", [])) // f
        macs = samples * e * f
        flops = 2 * macs + samples * e
    z_cols = n.out(1).shape[-1] if n.has_output(1) and n.out(1).rank else c
    flops += samples * z_cols * post_transform_ops(n)
    prob = bool(n.attr("prob_a"))
    out = written(n, [(label_type(n, "classlabels_ints"), samples), (F32, samples * z_cols)])
    return model_cost(n, macs=macs, flops=flops, exact=not prob, bytes_written=out,
                       note="Platt probability coupling not counted" if prob else "")


@rule("SVMRegressor", family="matmul", domain=ML, outputs_may_be_unknown=True)
def svm_regressor(n: NodeView) -> OpCost:
    """SVMRegressor: V = n_supports support vectors: kernel MACs N·V·F (+ kernel ops as
    SVMClassifier) and N·V MACs for the weighted sum; without support vectors a linear model
    of N·F MACs. FLOPs = 2·MACs + kernel ops + N (rho) + N·[one_class compare] +
    N·post_transform."""
    samples, f = rows_features(n.inp(0).shape)
    v = int(n.attr("n_supports"))
    if v:
        kmacs, extra = _svm_kernel(n, samples, v, f)
        macs = kmacs + samples * v
    else:
        macs, extra = samples * f, 0
    flops = 2 * macs + extra + samples * (1 + int(bool(n.attr("one_class"))) + post_transform_ops(n))
    return model_cost(n, macs=macs, flops=flops, bytes_written=written(n, [(F32, samples)]))


# --- elementwise preprocessing -------------------------------------------------------------

#: ops per element: Binarizer compare; Imputer compare (or NaN test) + select; Scaler
#: subtract offset + multiply by scale.
ML_PER_ELEMENT: dict[str, int] = {"Binarizer": 1, "Imputer": 2, "Scaler": 2}


def _ml_elementwise_rule(per_elem: int) -> Callable[[NodeView], OpCost]:
    def ml_elementwise(n: NodeView) -> OpCost:
        """Binarizer (1), Imputer (2) ops per element (:data:`ML_PER_ELEMENT`), on X's type;
        the output has X's type and shape."""
        x = n.inp(0)
        return arith(per_elem * x.numel, x.elem_type, bytes_written=written(n, [(x.elem_type, x.numel)]))

    return ml_elementwise


for _op in ("Binarizer", "Imputer"):
    register(_op, _ml_elementwise_rule(ML_PER_ELEMENT[_op]), family="elementwise", domain=ML,
             outputs_may_be_unknown=True)


@rule("Scaler", family="elementwise", domain=ML, outputs_may_be_unknown=True)
def scaler(n: NodeView) -> OpCost:
    """Scaler: 2 ops per element (:data:`ML_PER_ELEMENT`: subtract offset, multiply by
    scale), computed in float whatever X's type, float output. Reads X and its scale and
    offset lists."""
    x = n.inp(0)
    return OpCost(flops=ML_PER_ELEMENT["Scaler"] * x.numel,
                  bytes_read=x.nbytes + attr_bytes(n, ("scale", "offset")),
                  bytes_written=written(n, [(F32, x.numel)]))


@rule("Normalizer", family="norm", domain=ML, outputs_may_be_unknown=True)
def normalizer(n: NodeView) -> OpCost:
    """Normalizer over each row of C values: MAX 2C − 1 (max, divide), L1 3C − 1 (abs, sum,
    divide), L2 3C (square, sum, sqrt, divide) ops per row; computed in float."""
    rows, c = rows_features(n.inp(0).shape)
    return OpCost(flops=rows * NORMALIZER_ROW_OPS[n.attr("norm")](c),
                  bytes_written=written(n, [(F32, rows * c)]))


# --- lookups and movement ------------------------------------------------------------------

def lookup(n: NodeView) -> OpCost:
    """LabelEncoder, CategoryMapper, OneHotEncoder: one table lookup (1 int op) per input
    element. Traffic: input read, output written (OneHotEncoder's [.., categories] output
    included); only the table entries hit are read, not counted apart."""
    return OpCost(int_ops=n.inp(0).numel)


register(["LabelEncoder", "CategoryMapper", "OneHotEncoder"], lookup, family="misc", domain=ML)


@rule("ArrayFeatureExtractor", family="gather_scatter", domain=ML)
def array_feature_extractor(n: NodeView) -> OpCost:
    """ArrayFeatureExtractor: a Gather on the last axis: no arithmetic; reads the indices and
    only the selected columns: bytes_read = Y (indices) bytes + Z bytes."""
    return OpCost(bytes_read=n.inp(1).nbytes + n.out(0).nbytes)


@rule("FeatureVectorizer", family="movement", domain=ML, outputs_may_be_unknown=True)
def feature_vectorizer(n: NodeView) -> OpCost:
    """FeatureVectorizer: a Concat of its inputs' columns (cast to float): no arithmetic;
    every input read, output [N, Σ inputdimensions] float written."""
    samples, _ = rows_features(n.inp(0).shape)
    dims = n.attr("inputdimensions") or [rows_features(t.shape)[1] for t in n.present_inputs]
    return OpCost(bytes_written=written(n, [(F32, samples * sum(dims))]))


@rule("ZipMap", family="movement", domain=ML, outputs_may_be_unknown=True)
def zip_map(n: NodeView) -> OpCost:
    """ZipMap: [N, C] scores -> N maps {label: score}: no arithmetic. The sequence output has
    no static shape: bytes_written is estimated as N·C entries of (key, float value), keys
    8 bytes (int labels) or the labels' UTF-8 length (string labels): inexact."""
    samples, c = rows_features(n.inp(0).shape)
    strings = n.attr("classlabels_strings")
    value = dtypes.nbytes(TensorProto.FLOAT, 1)
    per_row = (_list_bytes(strings) + c * value) if strings else c * (8 + value)
    return OpCost(bytes_written=samples * per_row, exact=False, note="map sizes estimated")


def map_input(n: NodeView) -> OpCost:
    """CastMap, DictVectorizer: a map input, one lookup (1 int op) per output element, no
    arithmetic. onnxperf has no shapes for maps, so these nodes report unknown_shape; should
    the rule run, it counts the output elements as the lookups."""
    return OpCost(int_ops=n.out(0).numel, exact=False, note="map input: entry count unknown")


register(["CastMap", "DictVectorizer"], map_input, family="misc", domain=ML)
