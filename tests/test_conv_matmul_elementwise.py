"""Rules of the conv, matmul and elementwise families, with expected values derived from
named dimensions."""

import numpy as np
import pytest
from onnx import TensorProto

from onnxperf.ops.elementwise import PER_ELEMENT
from onnxperf.ops.matmul import einsum_macs

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


@pytest.mark.parametrize("eq,shapes,expected", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], 2 * 3 * 4 * 5),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2 * 3 * 4 + 2 * 4 * 5),
    ("ii->i", [(3, 3)], 0),
    ("...ij,...jk->...ik", [(7, 2, 3), (7, 3, 4)], 7 * 2 * 3 * 4),
])
def test_einsum_macs(eq, shapes, expected):
    assert einsum_macs(eq, shapes) == expected


def test_einsum_node():
    b, i, j, k = 2, 3, 4, 5
    r = cost(single("Einsum", {"a": [b, i, j], "b2": [b, j, k]}, equation="bij,bjk->bik", opset=17))
    assert r.macs == b * i * j * k


@pytest.mark.parametrize("op", ["Add", "Relu", "Sigmoid", "Erf", "HardSwish"])
def test_elementwise_per_element_costs(op):
    shape = [2, 3, 4]
    numel = int(np.prod(shape))
    inputs = {"a": shape, "b": shape} if op == "Add" else {"a": shape}
    r = cost(single(op, inputs))
    assert r.flops == PER_ELEMENT[op] * numel
    assert r.bytes_read == 4 * numel * len(inputs)
    assert r.bytes_written == 4 * numel


def test_elementwise_broadcast_counts_output_elements():
    r = cost(single("Mul", {"a": [8, 1, 5], "b": [1, 3, 5]}))
    assert r.flops == 8 * 3 * 5


def test_integer_elementwise_is_int_ops():
    r = cost(single("Add", {"a": ([4], TensorProto.INT64), "b": ([4], TensorProto.INT64)}))
    assert (r.flops, r.int_ops) == (0, 4)


def test_gelu_tanh_approximation():
    r = cost(single("Gelu", {"a": [10]}, opset=20, approximate="tanh"))
    assert r.flops == 9 * 10


def test_variadic_sum_and_mean():
    r = cost(single("Sum", {"a": [6], "b": [6], "c": [6]}))
    assert r.flops == 2 * 6
    r = cost(single("Mean", {"a": [6], "b": [6], "c": [6]}))
    assert r.flops == 3 * 6
