"""Zero-cost declarations, sequence, string, random and ImageDecoder rules."""

import math

import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.cost.ops import REGISTRY
from .util import const, cost, model, single, vi

I64 = TensorProto.INT64

ZERO_OPS = ["Shape", "Size", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Constant",
            "Optional", "OptionalGetElement", "OptionalHasElement", "SequenceAt", "SequenceConstruct",
            "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength"]


@pytest.mark.parametrize("op", ZERO_OPS)
def test_declared_zero_with_a_reason(op):
    e = REGISTRY.lookup("", op, 25)
    assert e is not None and e.is_zero and e.family == "zero"
    assert len(e.zero_reason) > 10


@pytest.mark.parametrize("op,inputs,attrs", [
    ("Reshape", {"x": [2, 3, 4], "s": ([2], I64)}, {}),
    ("Flatten", {"x": [2, 3, 4]}, {}),
    ("Identity", {"x": [5]}, {}),
    ("Shape", {"x": [2, 3]}, {}),
])
def test_zero_ops_in_a_model(op, inputs, attrs):
    inits = [const("s", [2], I64, [6, 4])] if "s" in inputs else []
    r = cost(single(op, inputs, inits=inits, opset=17, **attrs))
    assert r.status == "zero_by_design"
    assert (r.macs, r.flops, r.int_ops, r.bytes_read, r.bytes_written) == (0, 0, 0, 0, 0)
    assert r.note


def test_split_to_sequence_writes_the_whole_input():
    n, c = 4, 6
    m = model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=1)], [vi("x", [n, c])],
              [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)], opset=17)
    r = cost(m)
    assert r.status == "counted" and r.family == "sequence"
    assert r.flops == 0
    assert r.bytes_read == r.bytes_written == 4 * n * c
    assert r.exact  # the sequence has no static shape, but the rule writes the whole input, exactly


def test_concat_from_sequence_is_a_rule_but_its_input_has_no_shape():
    e = REGISTRY.lookup("", "ConcatFromSequence", 17)
    assert e is not None and not e.is_zero
    m = model([helper.make_node("SequenceEmpty", [], ["s"]),
               helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
              [], [vi("y", None)], opset=17)
    recs = {r.op_type: r for r in onnxperf.analyze(m).main_nodes}
    assert recs["SequenceEmpty"].status == "zero_by_design"
    assert recs["ConcatFromSequence"].status == "unknown_shape"


@pytest.mark.parametrize("op,inputs,outputs,opset,attrs,written", [
    ("StringNormalizer", {"x": ([1, 5], TensorProto.STRING)}, ("y",), 10, {"case_change_action": "LOWER"}, 0),
    ("RegexFullMatch", {"x": ([7], TensorProto.STRING)}, ("y",), 20, {"pattern": "a.*"}, 7),
    ("StringConcat", {"x": ([3], TensorProto.STRING), "z": ([3], TensorProto.STRING)}, ("y",), 20, {}, 0),
    ("StringSplit", {"x": ([4], TensorProto.STRING)}, ("y", "n"), 20, {}, 4 * 8),
])
def test_string_ops_counted_zero_ops_inexact(op, inputs, outputs, opset, attrs, written):
    r = cost(single(op, inputs, outputs=outputs, opset=opset, **attrs))
    assert r.status == "counted" and r.family == "misc"
    assert (r.flops, r.int_ops) == (0, 0)
    assert r.bytes_read == 0  # strings have no fixed size
    assert r.bytes_written == written  # only the bool / int64 outputs count
    assert not r.exact


# --- Dropout: zero-cost before opset 12, a rule on training_mode from 12 -----------------

D = 4 * 4  # elements of the Dropout tests' [4, 4] input


def test_dropout_before_opset_12_is_zero_by_design():
    e = REGISTRY.lookup("", "Dropout", 11)
    assert e is not None and e.is_zero and len(e.zero_reason) > 10
    r = cost(single("Dropout", {"x": [4, 4]}, opset=11))
    assert r.status == "zero_by_design"
    assert (r.macs, r.flops, r.int_ops, r.bytes_read, r.bytes_written) == (0, 0, 0, 0, 0)


@pytest.mark.parametrize("training", [None, False])
def test_dropout_at_inference_costs_nothing(training):
    # training_mode absent, or the constant false: the identity (ratio ignored)
    ins = {"x": [4, 4], "ratio": [], "t": ([], TensorProto.BOOL) if training is not None else None}
    inits = [const("ratio", [], TensorProto.FLOAT, 0.5)]
    if training is not None:
        inits.append(const("t", [], TensorProto.BOOL, training))
    r = cost(single("Dropout", ins, inits=inits, opset=17))
    assert r.status == "counted" and r.exact
    assert (r.macs, r.flops, r.int_ops, r.bytes_read, r.bytes_written) == (0, 0, 0, 0, 0)
    assert "inference" in r.note


def test_dropout_at_inference_writes_only_a_requested_mask():
    r = cost(single("Dropout", {"x": [4, 4]}, ("y", "mask"), opset=17))
    assert (r.flops, r.bytes_read, r.bytes_written) == (0, 0, D)  # bool mask, 1 byte each


def test_dropout_training_mode_constant_true():
    # per element: a random draw, a compare with the ratio, a scale multiply = 3 ops
    ins = {"x": [4, 4], "ratio": [], "t": ([], TensorProto.BOOL)}
    inits = [const("ratio", [], TensorProto.FLOAT, 0.5), const("t", [], TensorProto.BOOL, True)]
    r = cost(single("Dropout", ins, ("y", "mask"), inits=inits, opset=17))
    assert r.status == "counted" and r.family == "random" and r.exact
    assert r.flops == 3 * D
    assert r.bytes_read == 4 * D + 4 + 1  # data, ratio, training_mode
    assert r.bytes_written == 4 * D + D  # output, bool mask


def test_dropout_training_mode_from_data_is_an_upper_bound():
    r = cost(single("Dropout", {"x": [4, 4], "ratio": None, "t": ([], TensorProto.BOOL)}, opset=17))
    assert r.status == "counted" and not r.exact
    assert r.flops == 3 * D
    assert "training_mode" in r.note


# --- random generators -------------------------------------------------------------------

#: ops per generated element, written out: uniform = draw, scale, add low; normal = Box-Muller
#: (2 draws, log, mul, sqrt, mul, cos, sin, 2 mul per pair = 5 per value) + scale and mean (2)
UNIFORM, NORMAL, BERNOULLI = 3, 7, 2


@pytest.mark.parametrize("op,per_element", [("RandomUniform", UNIFORM), ("RandomNormal", NORMAL)])
def test_random_generators(op, per_element):
    shape = [3, 5]
    r = cost(single(op, {}, shape=shape))
    assert r.status == "counted" and r.family == "random"
    assert r.flops == per_element * 15
    assert (r.bytes_read, r.bytes_written) == (0, 4 * 15)


@pytest.mark.parametrize("op,per_element", [("RandomUniformLike", UNIFORM), ("RandomNormalLike", NORMAL)])
def test_random_like_reads_no_data(op, per_element):
    r = cost(single(op, {"x": [2, 8]}))
    assert r.flops == per_element * 16
    assert r.bytes_read == 0 and r.bytes_written == 4 * 16


def test_bernoulli_reads_its_probabilities():
    n = 10
    r = cost(single("Bernoulli", {"p": [n]}, opset=15))
    assert r.flops == BERNOULLI * n  # a draw and a compare with p
    assert r.bytes_read == 4 * n


def test_multinomial():
    b, k, s = 3, 10, 4
    r = cost(single("Multinomial", {"x": [b, k]}, sample_size=s, opset=7))
    assert r.outputs[0].shape == (b, s)
    assert r.flops == b * (4 * k - 2) + b * s * (2 + math.ceil(math.log2(k)))


def test_image_decoder_bytes_only():
    nbytes = 1000
    r = cost(single("ImageDecoder", {"x": ([nbytes], TensorProto.UINT8)}, opset=20))
    assert r.status == "counted" and r.family == "misc"
    assert (r.flops, r.int_ops) == (0, 0)
    assert r.bytes_read == nbytes
    assert r.bytes_written == 0  # decoded size known only from the data
    assert not r.exact
