"""Detection, losses and text features: NonMaxSuppression, RoiAlign,
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, TfIdfVectorizer (ai.onnx).

Notation: B batch, S boxes, C classes, R regions of interest, T target elements
(N·d1·…·dk), K classes of a loss.
"""

from __future__ import annotations

import math

from onnx import TensorProto

from onnxperf.base import dtypes
from onnxperf.cost.ops.reduce import ROW_WISE
from onnxperf.cost.ops.registry import NodeView, OpCost, arith, rule, scalar

#: NonMaxSuppression, per compared pair of boxes: intersection corners (2 max, 2 min),
#: width/height (2 sub), clamp at 0 (2 max), intersection area (1 mul), union
#: (area_a + area_b − inter: 2), IoU divide (1), threshold compare (1).
NMS_IOU_PAIR_OPS = 13
#: per box: its area ((x2 − x1)·(y2 − y1): 3 ops).
NMS_BOX_AREA_OPS = 3
#: per box with center_point_box=1: corners from centre and size (x ± w/2, y ± h/2: 6 ops).
NMS_CENTER_TO_CORNER_OPS = 6

#: RoiAlign: per sampling point of a bin, shared by every channel: sample coordinates,
#: bounds checks, floor/fractions and the four bilinear weights (about 20 ops).
ROI_ALIGN_WEIGHT_OPS = 20
#: per sampling point and channel: 4 multiplies + 3 adds to interpolate, 1 to pool
#: (add for avg, max for max).
ROI_ALIGN_SAMPLE_OPS = 8
#: samples per bin side assumed when sampling_ratio = 0 (adaptive: ceil(roi size / bins),
#: known only from the data); 2 is the usual value of torchvision and Detectron.
ROI_ALIGN_ADAPTIVE_GUESS = 2


def nms_compared_pairs(s: int, m: int | None) -> int:
    """Upper bound on IoU computations of greedy NMS over ``s`` boxes of one class keeping at
    most ``m`` (None: unlimited): box i is compared with at most min(i, m) kept boxes, so
    sum_{i<s} min(i, m); S·(S − 1)/2, every pair, when m ≥ S − 1 or unknown."""
    if m is None or m >= s - 1:
        return s * (s - 1) // 2 if s > 0 else 0
    return m * (m + 1) // 2 + (s - 1 - m) * m


@rule("NonMaxSuppression", family="misc", since=10, outputs_may_be_unknown=True)
def non_max_suppression(n: NodeView) -> OpCost:
    """NonMaxSuppression: boxes [B, S, 4], scores [B, C, S]. Upper bound, per batch and class:
    P = nms_compared_pairs(S, M) IoU tests of 13 ops (all S·(S−1)/2 pairs unless
    ``max_output_boxes_per_class`` M is a constant smaller than S − 1), a sort of the scores
    (S·ceil(log2 S) compares) and, with ``score_threshold``, S compares; per box, its area (3)
    and, with center_point_box=1, its corners (6):
    ops = B·C·(13·P + S·ceil(log2 S) + S·[score_threshold]) + B·S·(3 + 6·[center]).
    Output [n, 3] int64 with n ≤ B·C·min(S, M): bytes written are this bound. A constant
    M = 0 (also the default when absent) selects nothing and costs nothing. Always inexact."""
    boxes, scores = n.inp(0), n.inp(1)
    b, s = boxes.shape[0], boxes.shape[1]
    c = scores.shape[1]
    m: int | None = 0
    if n.has_input(2):
        m = scalar(n.const(2))
    if m == 0:
        return OpCost(bytes_written=0, note="max_output_boxes_per_class is 0: nothing selected")
    sort = s * math.ceil(math.log2(s)) if s > 1 else 0
    thresh = s if n.has_input(4) else 0
    center = NMS_CENTER_TO_CORNER_OPS if n.attr("center_point_box") else 0
    ops = b * c * (NMS_IOU_PAIR_OPS * nms_compared_pairs(s, m) + sort + thresh) \
        + b * s * (NMS_BOX_AREA_OPS + center)
    kept = b * c * (s if m is None else min(s, m))
    return arith(ops, boxes.elem_type, bytes_written=dtypes.nbytes(TensorProto.INT64, 3 * kept), exact=False,
                 note="upper bound: every pair of boxes compared, every box kept")


@rule("RoiAlign", family="misc", since=10)
def roi_align(n: NodeView) -> OpCost:
    """RoiAlign: X [N, C, H, W], R rois, output [R, C, oh, ow]. Each bin averages (or maxes)
    s = sr_h·sr_w bilinear samples, sr = ``sampling_ratio``, or, when it is 0 (adaptive, data
    dependent), an assumed 2 per side (inexact). FLOPs = R·oh·ow·s·(20 + 8·C) + (R·C·oh·ow
    divides for mode avg). Reads only the sampled neighbourhoods of X: bytes_read =
    min(X bytes, 4 values per sample per channel) + rois + batch_indices."""
    x, rois, y = n.inp(0), n.inp(1), n.out(0)
    r, c, oh, ow = y.shape
    sr = int(n.attr("sampling_ratio"))
    exact = sr > 0
    per_side = sr if sr > 0 else ROI_ALIGN_ADAPTIVE_GUESS
    samples = per_side * per_side
    bins = r * oh * ow
    ops = bins * samples * (ROI_ALIGN_WEIGHT_OPS + ROI_ALIGN_SAMPLE_OPS * c)
    if n.attr("mode") == "avg":
        ops += bins * c
    touched = min(x.nbytes, dtypes.nbytes(x.elem_type, 4 * bins * samples * c))
    read = touched + rois.nbytes + n.inp(2).nbytes
    note = "" if exact else f"sampling_ratio=0 is adaptive: {per_side}x{per_side} samples per bin assumed"
    return arith(ops, x.elem_type, bytes_read=read, exact=exact, note=note)


def _nll_ops(t: int, weighted: bool, ignore: bool, reduction: str) -> int:
    """Ops of the NLL part on T target elements: negate the picked value (T), weight it (T),
    test ignore_index (T); reduce: sum T − 1 adds; mean also sums the weights (T − 1, when
    weighted) and divides once."""
    ops = t * (1 + int(weighted) + int(ignore))
    if reduction in ("sum", "mean") and t > 0:
        ops += t - 1
        if reduction == "mean":
            ops += (t - 1 if weighted else 0) + 1
    return ops


@rule("NegativeLogLikelihoodLoss", family="misc", since=12)
def negative_log_likelihood_loss(n: NodeView) -> OpCost:
    """NegativeLogLikelihoodLoss: input [N, K, d1..dk], target [N, d1..dk] (T elements):
    ops = T·(1 negate + [1 weight multiply] + [1 ignore_index compare]) + reduction
    (sum: T − 1; mean: T − 1, + T − 1 for the weight sum when weighted, + 1 divide).
    Reads only the picked input values: bytes_read = T input elements + target + weight."""
    x, target = n.inp(0), n.inp(1)
    t = target.numel
    weighted = n.has_input(2)
    ops = _nll_ops(t, weighted, n.attr("ignore_index") is not None, n.attr("reduction"))
    read = dtypes.nbytes(x.elem_type, t) + target.nbytes + (n.inp(2).nbytes if weighted else 0)
    return arith(ops, x.elem_type, bytes_read=read)


@rule("SoftmaxCrossEntropyLoss", family="misc", since=12)
def softmax_cross_entropy_loss(n: NodeView) -> OpCost:
    """SoftmaxCrossEntropyLoss: scores [N, K, d1..dk], labels [N, d1..dk] (T rows): a
    log-softmax over K per row (the LogSoftmax rule's cost: 5 ops per score + 1 per row, 5K + 1),
    then the NLL of NegativeLogLikelihoodLoss: ops = T·(5K + 1) + NLL(T). Traffic is the
    default: every score is read, and the optional log_prob output is written."""
    x, labels = n.inp(0), n.inp(1)
    t, k = labels.numel, x.shape[1]
    per_score, per_row = ROW_WISE["LogSoftmax"]
    ops = t * (per_score * k + per_row) + _nll_ops(t, n.has_input(2), n.attr("ignore_index") is not None,
                                                   n.attr("reduction"))
    return arith(ops, x.elem_type)


@rule("TfIdfVectorizer", family="misc", since=9)
def tfidf_vectorizer(n: NodeView) -> OpCost:
    """TfIdfVectorizer: bytes only (input tokens read, the [.., V] frequency output written).
    The n-gram matching (a pool lookup per position, gram length and skip) and the TF-IDF
    weighting are not counted: inexact."""
    return OpCost(exact=False, note="n-gram matching not counted: bytes only")
