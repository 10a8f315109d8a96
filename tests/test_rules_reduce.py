"""Rules of the reduce family (Reduce*, ArgMax/ArgMin, CumSum/CumProd, TopK), the row-wise
activations Softmax, LogSoftmax, Hardmax, and Det (family matmul), with expected values derived
from named dimensions."""

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.matmul import det_ops
from onnxperf.cost.ops.reduce import REDUCE, ROW_WISE, ceil_log2

from .util import const, cost, single

I64 = TensorProto.INT64
N, C, H = 2, 3, 5
IN = N * C * H

# (ops per input element, per reduction step, per output element), written out by hand so
# the table in onnxperf.cost.ops.reduce is checked, not just echoed.
EXPECTED_REDUCE = {
    "ReduceSum": (0, 1, 0), "ReduceMean": (0, 1, 1), "ReduceMax": (0, 1, 0), "ReduceMin": (0, 1, 0),
    "ReduceProd": (0, 1, 0), "ReduceL1": (1, 1, 0), "ReduceL2": (1, 1, 1), "ReduceLogSum": (0, 1, 1),
    "ReduceLogSumExp": (4, 0, 2), "ReduceSumSquare": (1, 1, 0), "ArgMax": (0, 1, 0), "ArgMin": (0, 1, 0),
}


def test_reduce_table_is_as_documented():
    assert REDUCE == EXPECTED_REDUCE


def _reduce_over_channels(op, opset, keepdims=1):
    """op over axis 1 of [N, C, H], axes given the way this opset wants them."""
    attrs = {"keepdims": keepdims}
    if op in ("ArgMax", "ArgMin"):
        return single(op, {"x": [N, C, H]}, opset=opset, axis=1, **attrs)
    axes_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes_input:
        return single(op, {"x": [N, C, H], "axes": [1]}, inits=[const("axes", [1], I64, [1])],
                      opset=opset, **attrs)
    return single(op, {"x": [N, C, H]}, opset=opset, axes=[1], **attrs)


@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("opset", [11, 18])
def test_reduce_over_one_axis(op, opset):
    r = cost(_reduce_over_channels(op, opset))
    assert r.status == "counted"
    out = N * H
    a, b, c = EXPECTED_REDUCE[op]
    assert r.flops == a * IN + b * N * H * (C - 1) + c * out
    assert (r.macs, r.int_ops) == (0, 0)


def test_reduce_mean_named_dims_and_keepdims():
    for keepdims in (0, 1):
        r = cost(_reduce_over_channels("ReduceMean", 18, keepdims))
        # N·H rows of C values: C − 1 adds and 1 divide each
        assert r.flops == N * H * (C - 1) + N * H
        assert r.bytes_written == 4 * N * H


def test_reduce_sum_all_axes_opset13_no_axes_input():
    r = cost(single("ReduceSum", {"x": [N, C, H], "axes": None}, opset=13))
    assert r.outputs[0].shape == (1, 1, 1)
    assert r.flops == IN - 1


def test_reduce_l2_and_logsumexp_named():
    r = cost(_reduce_over_channels("ReduceL2", 18))
    assert r.flops == IN + N * H * (C - 1) + N * H  # squares, adds, sqrt
    r = cost(_reduce_over_channels("ReduceLogSumExp", 18))
    # stable form, as Softmax: max, subtract, exp, sum per input element; log, + max per output
    assert r.flops == 4 * IN + 2 * N * H


def test_reduce_noop_with_empty_axes_costs_no_reduction():
    r = cost(single("ReduceSum", {"x": [N, C, H], "axes": None}, opset=13, noop_with_empty_axes=1))
    assert r.outputs[0].shape == (N, C, H)
    assert r.flops == 0


def test_integer_reduce_is_int_ops():
    r = cost(single("ReduceSum", {"x": ([N, C, H], TensorProto.INT32), "axes": [1]},
                    inits=[const("axes", [1], I64, [1])], opset=13))
    assert (r.flops, r.int_ops) == (0, N * H * (C - 1))


def test_reduce_with_data_dependent_axes_is_unknown_shape():
    r = cost(single("ReduceMean", {"x": [N, C, H], "axes": ([1], I64)}, opset=18))
    assert r.status == "unknown_shape"


def test_argmax_counts_compares_on_input_dtype():
    r = cost(single("ArgMax", {"x": [N, C, H]}, opset=13, axis=-1, keepdims=0, select_last_index=1))
    assert r.outputs[0].shape == (N, C)
    assert r.flops == N * C * (H - 1)
    assert r.bytes_written == 8 * N * C  # int64 indices


@pytest.mark.parametrize("op,opset", [("CumSum", 14), ("CumSum", 11), ("CumProd", 26)])
@pytest.mark.parametrize("exclusive", [0, 1])
def test_scans(op, opset, exclusive):
    lines, length = N * H, C  # scan along axis 1
    r = cost(single(op, {"x": [N, C, H], "ax": []}, inits=[const("ax", [], I64, 1)], opset=opset,
                    exclusive=exclusive, reverse=1))
    assert r.status == "counted" and r.exact
    assert r.flops == lines * (length - 1 - exclusive)


def test_cumsum_non_constant_axis_is_an_estimate():
    r = cost(single("CumSum", {"x": [N, C, H], "ax": ([], I64)}, opset=14))
    assert r.status == "counted"
    assert not r.exact
    assert r.flops == IN


@pytest.mark.parametrize("k,sorted_", [(1, 1), (3, 1), (3, 0), (8, 1)])
def test_topk(k, sorted_):
    rows, n = 4, 8
    r = cost(single("TopK", {"x": [rows, n], "k": [1]}, ["v", "i"], inits=[const("k", [1], I64, [k])],
                    opset=11, sorted=sorted_))
    assert r.outputs[0].shape == (rows, k)
    log_k = {1: 0, 3: 2, 8: 3}[k]
    assert ceil_log2(k) == log_k
    select = n * max(1, log_k)
    sort = k * log_k if sorted_ else 0
    assert r.flops == rows * (select + sort)
    assert r.bytes_written == rows * k * (4 + 8)  # values + int64 indices


def test_topk_opset1_k_attribute_on_middle_axis():
    a, n, b, k = 2, 6, 3, 2
    r = cost(single("TopK", {"x": [a, n, b]}, ["v", "i"], opset=1, k=k, axis=1))
    assert r.outputs[0].shape == (a, k, b)
    assert r.flops == a * b * (n * 1 + k * 1)  # ⌈log2 2⌉ = 1; always sorted before opset 11


@pytest.mark.parametrize("m", [1, 2, 3, 5])
def test_det_ops_closed_form(m):
    # LU: for r = 1..M−1: r compares, r divides, r² multiply-subtracts; M − 1 diagonal products
    macs = sum(r * r for r in range(1, m))
    ops = sum(2 * r + 2 * r * r for r in range(1, m)) + max(m - 1, 0)
    assert det_ops(m) == (macs, ops)


def test_det_node():
    batch, m = 4, 3
    r = cost(single("Det", {"x": [batch, m, m]}, opset=22))
    assert r.outputs[0].shape == (batch,)
    assert r.family == "matmul"  # LU is matmul-like work: its multiply-subtracts are MACs
    # m = 3: r = 1, 2: MACs 1 + 4 = 5; ops 2·(1 + 2) + 2·5 + (3 − 1) = 18
    assert (r.macs, r.flops) == (batch * 5, batch * 18)


def test_row_wise_table_is_as_documented():
    assert ROW_WISE == {"Softmax": (5, 0), "LogSoftmax": (5, 1), "Hardmax": (1, -1)}


@pytest.mark.parametrize("opset", [11, 13])
def test_softmax_five_ops_per_element(opset):
    r = cost(single("Softmax", {"x": [N, C, H]}, opset=opset))
    assert r.status == "counted" and r.family == "activation"
    assert r.rule_since == (13 if opset >= 13 else 1)
    assert r.flops == 5 * IN


def test_log_softmax_and_hardmax_rows_follow_the_opset():
    # opset 13+: single axis (default −1): rows = N·C of H
    r = cost(single("LogSoftmax", {"x": [N, C, H]}, opset=13))
    assert r.flops == 5 * IN + N * C
    r = cost(single("Hardmax", {"x": [N, C, H]}, opset=13, axis=1))
    assert r.flops == N * H * (C - 1)
    # before 13: coerced to 2-D at axis (default 1): rows = N of C·H
    r = cost(single("LogSoftmax", {"x": [N, C, H]}, opset=11))
    assert r.flops == 5 * IN + N
    r = cost(single("Hardmax", {"x": [N, C, H]}, opset=11))
    assert r.flops == N * (C * H - 1)
    assert r.family == "activation"


# noop_with_empty_axes = 1 and no axes: the spec (ReduceSum-13, the others 18) says "reduction
# over an empty set of axes means that the reduction step behaves like a no-op (identity
# function), but composite-reduction operators will still perform the non-reduction steps as
# needed. Thus, ReduceLogSum returns the Log of input tensor, and ReduceSumSquare returns the
# Square of the input tensor". Ops per element of the steps that remain, written out here:
NOOP_STEPS = {
    "ReduceSum": 0, "ReduceMean": 0, "ReduceMax": 0, "ReduceMin": 0, "ReduceProd": 0,  # identity
    "ReduceL1": 1,         # |x|
    "ReduceL2": 2,         # sqrt(x·x): square, sqrt
    "ReduceLogSum": 1,     # log(x)
    "ReduceSumSquare": 1,  # x·x
    "ReduceLogSumExp": 4,  # stable form without its max and sum: x − m, exp, log, + m
}


@pytest.mark.parametrize("op", sorted(NOOP_STEPS))
@pytest.mark.parametrize("axes", ["absent", "empty"])
def test_reduce_noop_with_empty_axes_keeps_only_the_non_reduction_steps(op, axes):
    opset = 13 if op == "ReduceSum" else 18
    if axes == "absent":
        m = single(op, {"x": [N, C, H], "axes": None}, opset=opset, noop_with_empty_axes=1)
    else:
        m = single(op, {"x": [N, C, H], "axes": [0]}, inits=[const("axes", [0], I64, [])], opset=opset,
                   noop_with_empty_axes=1)
    r = cost(m)
    assert r.status == "counted"
    assert r.outputs[0].shape == (N, C, H)  # the output is the input's shape
    assert r.flops == NOOP_STEPS[op] * IN


def test_reduce_noop_matches_the_reference_implementation():
    # onnx's reference ReduceMean and ReduceL2 with noop_with_empty_axes return the input and
    # |input|: a mean of one value is that value (0 ops), an L2 norm of one value is sqrt(x²)
    import numpy as np
    from onnx.reference import ReferenceEvaluator

    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    for op, expected in (("ReduceMean", x), ("ReduceL2", np.abs(x)), ("ReduceSumSquare", x * x)):
        m = single(op, {"x": [2, 3]}, opset=18, noop_with_empty_axes=1)
        m.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT
        np.testing.assert_allclose(ReferenceEvaluator(m).run(None, {"x": x})[0], expected)
