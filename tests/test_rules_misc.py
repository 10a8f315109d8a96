"""Misc rules: NonMaxSuppression upper bound, RoiAlign, the two losses, TfIdfVectorizer."""

import math

import pytest
from onnx import TensorProto, helper

import onnxperf

from onnxperf.cost.ops.misc import nms_compared_pairs

from .util import const, cost, model, single, vi

I64 = TensorProto.INT64


def test_nms_pairs_formula():
    s = 10
    assert nms_compared_pairs(s, None) == s * (s - 1) // 2
    assert nms_compared_pairs(s, s) == s * (s - 1) // 2
    m = 3
    assert nms_compared_pairs(s, m) == sum(min(i, m) for i in range(s))


@pytest.mark.parametrize("max_out", [None, 4])
def test_nms_upper_bound(max_out):
    b, c, s = 2, 3, 20
    inputs = {"boxes": [b, s, 4], "scores": [b, c, s], "m": ([1], I64), "iou": [1], "st": [1]}
    inits = [const("iou", [1], values=[0.5]), const("st", [1], values=[0.1])]
    if max_out is not None:  # else "m" stays a graph input: its value is unknown, no cap
        inits.append(const("m", [1], I64, [max_out]))
    r = cost(single("NonMaxSuppression", inputs, inits=inits, opset=11))
    assert r.status == "counted" and not r.exact
    pairs = s * (s - 1) // 2 if max_out is None else sum(min(i, max_out) for i in range(s))
    ops = b * c * (13 * pairs + s * math.ceil(math.log2(s)) + s) + b * s * 3
    assert r.flops == ops
    kept = b * c * (s if max_out is None else max_out)
    assert r.bytes_written == 8 * 3 * kept


def test_nms_default_max_output_zero_selects_nothing():
    r = cost(single("NonMaxSuppression", {"boxes": [1, 5, 4], "scores": [1, 2, 5]}, opset=11))
    assert r.status == "counted"
    assert r.flops == 0 and r.bytes_written == 0


@pytest.mark.parametrize("mode,sr", [("avg", 2), ("max", 3), ("avg", 0)])
def test_roi_align(mode, sr):
    n, c, h, w, r_, oh, ow = 1, 8, 32, 32, 5, 7, 7
    r = cost(single("RoiAlign", {"x": [n, c, h, w], "rois": [r_, 4], "bi": ([r_], I64)},
                    mode=mode, sampling_ratio=sr, output_height=oh, output_width=ow, opset=16))
    assert r.status == "counted"
    assert r.outputs[0].shape == (r_, c, oh, ow)
    samples = (sr if sr else 2) ** 2
    bins = r_ * oh * ow
    assert r.flops == bins * samples * (20 + 8 * c) + (bins * c if mode == "avg" else 0)
    assert r.exact == (sr > 0)
    touched = min(4 * n * c * h * w, 4 * 4 * bins * samples * c)
    assert r.bytes_read == touched + 4 * r_ * 4 + 8 * r_


@pytest.mark.parametrize("reduction,weighted", [("mean", False), ("mean", True), ("sum", False), ("none", True)])
def test_nll_loss(reduction, weighted):
    n, k, d = 4, 10, 3
    t = n * d
    inputs = {"x": [n, k, d], "t": ([n, d], I64), "w": [k] if weighted else None}
    r = cost(single("NegativeLogLikelihoodLoss", inputs, reduction=reduction, opset=13))
    assert r.status == "counted"
    ops = t * (1 + int(weighted))
    if reduction != "none":
        ops += t - 1
    if reduction == "mean":
        ops += (t - 1 if weighted else 0) + 1
    assert r.flops == ops
    # reads only the picked input values
    assert r.bytes_read == 4 * t + 8 * t + (4 * k if weighted else 0)


def test_nll_loss_ignore_index_adds_a_compare():
    n, k = 6, 5
    r = cost(single("NegativeLogLikelihoodLoss", {"x": [n, k], "t": ([n], I64)}, reduction="sum",
                    ignore_index=0, opset=13))
    assert r.flops == n * 2 + (n - 1)


def test_softmax_cross_entropy_loss():
    n, k = 8, 10
    r = cost(single("SoftmaxCrossEntropyLoss", {"x": [n, k], "t": ([n], I64)}, outputs=("loss", "logp"),
                    opset=13))
    assert r.status == "counted"
    # log-softmax per row, the LogSoftmax rule's: max, sub, exp, sum, sub per score + log per row;
    # then NLL: negate, sum, divide (mean)
    assert r.flops == n * (5 * k + 1) + n + (n - 1) + 1
    assert r.bytes_read == 4 * n * k + 8 * n
    assert r.bytes_written == 4 + 4 * n * k


def test_tfidf_vectorizer_bytes_only():
    n, length = 2, 6
    r = cost(single("TfIdfVectorizer", {"x": ([n, length], I64)}, mode="TF", min_gram_length=1,
                    max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1, 2],
                    pool_int64s=[5, 6, 7], opset=9))
    assert r.status == "counted" and not r.exact
    assert (r.flops, r.int_ops) == (0, 0)
    assert r.bytes_read == 8 * n * length
    assert r.bytes_written == 4 * n * 3


def test_a_rule_that_cannot_cost_a_node_names_each_node():
    """Nodes with equal signatures share the rule's result, but never a failure: its note names
    the node it met."""
    nodes = [helper.make_node("Conv", ["x", ""], ["y1"], name="c1"),
             helper.make_node("Conv", ["x", ""], ["y2"], name="c2")]
    m = model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y1", [1, 2, 8, 8]), vi("y2", [1, 2, 8, 8])])
    a = onnxperf.analyze(m)
    assert [r.status for r in a.nodes] == ["unsupported", "unsupported"]
    assert "'c1': input 1 is absent" in a.nodes[0].note
    assert "'c2': input 1 is absent" in a.nodes[1].note
