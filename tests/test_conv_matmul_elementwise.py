"""Rules of the conv, matmul and elementwise families, with expected values derived from
named dimensions."""

import numpy as np
import pytest
from onnx import TensorProto

from onnxperf.cost.ops.matmul import einsum_cost, einsum_macs

from .util import const, cost, single


def test_conv_worked_example_from_conventions():
    # Conv 3->2 channels, kernel 7, stride 2, pad 3, no bias, 1x3x500x500 float32.
    n, c_in, c_out, k, h = 1, 3, 2, 7, 500
    h_out = (h + 2 * 3 - k) // 2 + 1
    assert h_out == 250
    m = single("Conv", {"x": [n, c_in, h, h], "w": None},
               inits=[const("w", [c_out, c_in, k, k])], kernel_shape=[k, k], strides=[2, 2], pads=[3, 3, 3, 3])
    m.graph.node[0].input[1] = "w"
    r = cost(m)
    assert r.status == "counted"
    assert r.outputs[0].shape == (n, c_out, h_out, h_out)
    assert r.macs == n * c_out * h_out * h_out * c_in * k * k == 18_375_000
    assert r.flops == 2 * r.macs
    assert r.bytes_read == 4 * (n * c_in * h * h + c_out * c_in * k * k) == 3_001_176
    assert r.bytes_written == 4 * n * c_out * h_out * h_out == 500_000
    assert r.params == c_out * c_in * k * k


@pytest.mark.parametrize("group", [1, 2, 8])
def test_conv_grouped_with_bias(group):
    n, c_in, c_out, k, h = 2, 8, 16, 3, 10
    m = single("Conv", {"x": [n, c_in, h, h], "w": [c_out, c_in // group, k, k], "b": [c_out]},
               group=group, kernel_shape=[k, k])
    r = cost(m)
    ho = h - k + 1
    macs = n * c_out * ho * ho * (c_in // group) * k * k
    assert r.macs == macs
    assert r.flops == 2 * macs + n * c_out * ho * ho


def test_conv_transpose():
    n, c_in, c_out, k, h, s = 1, 4, 6, 3, 5, 2
    m = single("ConvTranspose", {"x": [n, c_in, h, h], "w": [c_in, c_out, k, k]}, strides=[s, s])
    r = cost(m)
    assert r.outputs[0].shape == (n, c_out, (h - 1) * s + k, (h - 1) * s + k)
    assert r.macs == n * c_in * h * h * c_out * k * k
    assert r.flops == 2 * r.macs


def test_matmul_broadcasts_batch_dims_like_numpy():
    # onnx-tool gets [2,1,4,5] @ [3,5,6] wrong ([3,4,6]); ONNX gives [2,3,4,6].
    m = single("MatMul", {"a": [2, 1, 4, 5], "b": [3, 5, 6]})
    r = cost(m)
    assert r.outputs[0].shape == (2, 3, 4, 6)
    b, mm, nn, kk = 2 * 3, 4, 6, 5
    assert r.macs == b * mm * nn * kk
    assert r.flops == 2 * r.macs


def test_matmul_vector_operands():
    k, n = 7, 3
    r = cost(single("MatMul", {"a": [k], "b": [k, n]}))
    assert r.macs == k * n


@pytest.mark.parametrize("trans_a,trans_b,alpha,beta,bias", [(0, 0, 1.0, 1.0, True), (1, 1, 2.0, 0.5, True),
                                                              (0, 1, 1.0, 1.0, False)])
def test_gemm(trans_a, trans_b, alpha, beta, bias):
    m_, k, n = 4, 5, 6
    a = [k, m_] if trans_a else [m_, k]
    b = [n, k] if trans_b else [k, n]
    inputs = {"a": a, "b": b, "c": [n] if bias else None}
    r = cost(single("Gemm", inputs, transA=trans_a, transB=trans_b, alpha=alpha, beta=beta))
    macs = m_ * n * k
    extra = (m_ * n if alpha != 1.0 else 0) + ((m_ * n + (m_ * n if beta != 1.0 else 0)) if bias else 0)
    assert r.macs == macs
    assert r.flops == 2 * macs + extra


def test_matmul_integer_counts_int_ops_not_flops():
    m_, k, n = 3, 4, 5
    r = cost(single("MatMulInteger", {"a": ([m_, k], TensorProto.UINT8), "b": ([k, n], TensorProto.INT8)}))
    assert r.macs == m_ * n * k
    assert r.int_ops == 2 * m_ * n * k
    assert r.flops == 0


U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
#: requantizing an output: scale multiply, round, zero-point add, saturate (min, max), as
#: QuantizeLinear to int8 with a zero point
REQUANT = 1 + 1 + 1 + 2


def test_qlinear_matmul_zero_points_and_requantize():
    m_, k, n = 3, 4, 5
    r = cost(single("QLinearMatMul", {"a": ([m_, k], U8), "as": [], "azp": ([], U8), "b": ([k, n], I8), "bs": [],
                                      "bzp": ([], I8), "ys": [], "yzp": ([], U8)}, opset=10))
    assert r.status == "counted"
    macs = m_ * n * k
    assert r.macs == macs
    # as MatMulInteger with both zero points: one subtract per element of A and of B
    assert r.int_ops == 2 * macs + m_ * k + k * n
    assert r.flops == REQUANT * m_ * n


def test_matmul_integer_zero_points_match_qlinear_matmul():
    m_, k, n = 3, 4, 5
    r = cost(single("MatMulInteger", {"a": ([m_, k], U8), "b": ([k, n], I8), "azp": ([], U8), "bzp": ([], I8)}))
    assert r.int_ops == 2 * m_ * n * k + m_ * k + k * n


@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_conv_zero_points_bias_and_requantize(bias):
    n, c_in, c_out, k, h = 1, 4, 6, 3, 7
    ho = h - k + 1
    ins = {"x": ([n, c_in, h, h], U8), "xs": [], "xzp": ([], U8), "w": ([c_out, c_in, k, k], I8), "ws": [],
           "wzp": ([], I8), "ys": [], "yzp": ([], U8), "b": ([c_out], I32) if bias else None}
    r = cost(single("QLinearConv", ins, opset=10))
    assert r.status == "counted" and r.family == "conv"
    y = n * c_out * ho * ho
    macs = y * c_in * k * k
    assert r.macs == macs
    assert r.int_ops == 2 * macs + n * c_in * h * h + c_out * c_in * k * k + (y if bias else 0)
    assert r.flops == REQUANT * y


@pytest.mark.parametrize("eq,shapes,expected", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], 2 * 3 * 4 * 5),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2 * 3 * 4 + 2 * 4 * 5),
    ("ii->i", [(3, 3)], 0),
    ("...ij,...jk->...ik", [(7, 2, 3), (7, 3, 4)], 7 * 2 * 3 * 4),
])
def test_einsum_macs(eq, shapes, expected):
    assert einsum_macs(eq, shapes) == expected


I, J, K = 3, 4, 5


@pytest.mark.parametrize("eq,shapes,macs,ops", [
    # single operand: a diagonal is a gather, only summed-out labels cost adds
    ("ii->i", [(I, I)], 0, 0),
    ("ii->", [(I, I)], 0, I - 1),            # trace
    ("ij->", [(I, J)], 0, I * J - 1),
    ("ij->i", [(I, J)], 0, I * J - I),
    ("ij->ji", [(I, J)], 0, 0),              # transpose
    ("iij->j", [(I, I, J)], 0, I * J - J),   # diagonal, then sum over i
    # pairwise steps that contract nothing: one multiply per product element, no MACs
    ("i,j->ij", [(I,), (J,)], 0, I * J),
    ("ij,ij->ij", [(I, J), (I, J)], 0, I * J),
    ("i,j", [(I,), (J,)], 0, I * J),         # implicit output ij
    # contraction steps keep MACs
    ("ij,jk->ik", [(I, J), (J, K)], I * J * K, 0),
    ("ij,ij->", [(I, J), (I, J)], I * J, 0),  # a dot product
    ("i,j,jk->ik", [(I,), (J,), (J, K)], I * J * K, I * J),  # outer product, then a contraction
])
def test_einsum_cost(eq, shapes, macs, ops):
    assert einsum_cost(eq, shapes) == (macs, ops)


def test_einsum_node():
    b, i, j, k = 2, 3, 4, 5
    r = cost(single("Einsum", {"a": [b, i, j], "b2": [b, j, k]}, equation="bij,bjk->bik", opset=17))
    assert r.macs == b * i * j * k
    assert r.flops == 2 * b * i * j * k


def test_einsum_node_outer_product_and_diagonal():
    r = cost(single("Einsum", {"a": [I], "b2": [J]}, equation="i,j->ij", opset=17))
    assert (r.macs, r.flops) == (0, I * J)
    r = cost(single("Einsum", {"a": [I, I]}, equation="ii->i", opset=17))
    assert r.outputs[0].shape == (I,)
    assert (r.macs, r.flops) == (0, 0)


#: ops per element, written out from each op's ONNX definition: Sigmoid = neg, exp, add, div;
#: HardSwish = x · max(0, min(1, alpha·x + beta)): mul, add, min, max, mul
EXPECTED_PER_ELEMENT = {"Add": 1, "Relu": 1, "Sigmoid": 4, "Erf": 1, "HardSwish": 5}


@pytest.mark.parametrize("op", sorted(EXPECTED_PER_ELEMENT))
def test_elementwise_per_element_costs(op):
    shape = [2, 3, 4]
    numel = int(np.prod(shape))
    inputs = {"a": shape, "b": shape} if op == "Add" else {"a": shape}
    r = cost(single(op, inputs))
    assert r.flops == EXPECTED_PER_ELEMENT[op] * numel
    assert r.bytes_read == 4 * numel * len(inputs)
    assert r.bytes_written == 4 * numel


def test_elementwise_broadcast_counts_output_elements():
    r = cost(single("Mul", {"a": [8, 1, 5], "b": [1, 3, 5]}))
    assert r.flops == 8 * 3 * 5


def test_integer_elementwise_is_int_ops():
    r = cost(single("Add", {"a": ([4], TensorProto.INT64), "b": ([4], TensorProto.INT64)}))
    assert (r.flops, r.int_ops) == (0, 4)


@pytest.mark.parametrize("dtype,flops,int_ops", [(TensorProto.FLOAT, 1, 0), (TensorProto.INT64, 0, 1)])
def test_where_counts_on_its_data_not_its_bool_condition(dtype, flops, int_ops):
    numel = 6
    r = cost(single("Where", {"c": ([numel], TensorProto.BOOL), "a": ([numel], dtype), "b": ([numel], dtype)}))
    assert (r.flops, r.int_ops) == (flops * numel, int_ops * numel)


def test_comparisons_count_on_their_inputs_type():
    numel = 6
    r = cost(single("Less", {"a": [numel], "b": [numel]}))
    assert (r.flops, r.int_ops) == (numel, 0)
    r = cost(single("Less", {"a": ([numel], TensorProto.INT32), "b": ([numel], TensorProto.INT32)}))
    assert (r.flops, r.int_ops) == (0, numel)


@pytest.mark.parametrize("bounds", [(), ("min",), ("max",), ("min", "max")])
def test_clip_one_op_per_bound_given(bounds):
    numel = 10
    ins = {"x": [numel], "min": [] if "min" in bounds else None, "max": [] if "max" in bounds else None}
    r = cost(single("Clip", ins, opset=13))
    assert r.rule_since == 11
    assert r.flops == len(bounds) * numel


def test_clip_before_opset_11_has_both_bounds():
    numel = 10
    r = cost(single("Clip", {"x": [numel]}, opset=6))
    assert r.flops == 2 * numel


@pytest.mark.parametrize("alpha,per_element", [(1.0, 4 + 1), (1.702, 4 + 1 + 1)])
def test_swish_alpha_multiply_is_free_at_one(alpha, per_element):
    # x · sigmoid(alpha·x): Sigmoid (4) and a multiply; the alpha multiply only when alpha != 1
    numel = 12
    r = cost(single("Swish", {"x": [numel]}, opset=24, alpha=alpha))
    assert r.status == "counted" and r.family == "activation"
    assert r.flops == per_element * numel


def test_gelu_tanh_approximation():
    r = cost(single("Gelu", {"a": [10]}, opset=20, approximate="tanh"))
    assert r.flops == 9 * 10


def test_variadic_sum_and_mean():
    r = cost(single("Sum", {"a": [6], "b": [6], "c": [6]}))
    assert r.flops == 2 * 6
    r = cost(single("Mean", {"a": [6], "b": [6], "c": [6]}))
    assert r.flops == 3 * 6
