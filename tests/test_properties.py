"""Property tests (hypothesis): on random valid shapes, the shapes the rules rely on agree with
ONNX's own inference and numpy, costs are non-negative, linear in batch, and every node reads at
least its weights."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .util import const, cost, single

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def conv_case(draw):
    group = draw(st.sampled_from([1, 2, 4]))
    c_in = group * draw(st.integers(1, 3))
    c_out = group * draw(st.integers(1, 3))
    k = draw(st.integers(1, 4))
    stride = draw(st.integers(1, 3))
    dil = draw(st.integers(1, 2))
    pad = draw(st.integers(0, 2))
    h = draw(st.integers(dil * (k - 1) + 1, 20))
    w = draw(st.integers(dil * (k - 1) + 1, 20))
    n = draw(st.integers(1, 3))
    return n, c_in, c_out, k, stride, dil, pad, h, w, group


def _conv(n, c_in, c_out, k, stride, dil, pad, h, w, group):
    m = single("Conv", {"x": [n, c_in, h, w], "w": None}, inits=[const("w", [c_out, c_in // group, k, k])],
               kernel_shape=[k, k], strides=[stride, stride], dilations=[dil, dil], pads=[pad] * 4, group=group)
    m.graph.node[0].input[1] = "w"
    return cost(m)


@SETTINGS
@given(conv_case())
def test_conv_output_shape_and_macs(case):
    n, c_in, c_out, k, stride, dil, pad, h, w, group = case
    r = _conv(*case)
    ho = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    wo = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
    assert r.outputs[0].shape == (n, c_out, ho, wo)
    assert r.macs == n * c_out * ho * wo * (c_in // group) * k * k
    assert r.flops >= 2 * r.macs >= 0
    weight_bytes = 4 * c_out * (c_in // group) * k * k
    assert r.bytes_read >= weight_bytes
    assert r.params == c_out * (c_in // group) * k * k


@SETTINGS
@given(conv_case())
def test_conv_cost_is_linear_in_batch(case):
    one = _conv(1, *case[1:])
    three = _conv(3, *case[1:])
    assert three.macs == 3 * one.macs and three.flops == 3 * one.flops
    weight_bytes = 4 * case[2] * (case[1] // case[9]) * case[3] ** 2
    assert three.bytes_read - weight_bytes == 3 * (one.bytes_read - weight_bytes)


dims = st.integers(1, 5)


@st.composite
def matmul_case(draw):
    m, k, n = draw(dims), draw(dims), draw(dims)
    batch_rank = draw(st.integers(0, 3))
    batch = [draw(dims) for _ in range(batch_rank)]
    # each operand keeps a suffix of the batch dims, some set to 1 (broadcast)
    a_batch = [d if draw(st.booleans()) else 1 for d in batch[draw(st.integers(0, batch_rank)):]]
    b_batch = [d if draw(st.booleans()) else 1 for d in batch[draw(st.integers(0, batch_rank)):]]
    return a_batch + [m, k], b_batch + [k, n]


@SETTINGS
@given(matmul_case())
def test_matmul_shape_agrees_with_numpy_and_onnx(case):
    a, b = case
    r = cost(single("MatMul", {"a": a, "b": b}))
    expected = np.matmul(np.zeros(a, np.float32), np.zeros(b, np.float32)).shape
    assert r.outputs[0].shape == expected
    assert r.macs == int(np.prod(expected)) * a[-1]
    assert r.flops == 2 * r.macs
    assert r.bytes_read == 4 * (int(np.prod(a)) + int(np.prod(b)))


@SETTINGS
@given(st.lists(dims, min_size=1, max_size=4), st.data())
def test_elementwise_broadcast_agrees_with_numpy(shape, data):
    other = [d if data.draw(st.booleans()) else 1 for d in shape][data.draw(st.integers(0, len(shape) - 1)):]
    op = data.draw(st.sampled_from(["Add", "Mul", "Div", "Sub", "Pow", "Max"]))
    r = cost(single(op, {"a": shape, "b": other}))
    out = np.broadcast_shapes(tuple(shape), tuple(other))
    assert r.outputs[0].shape == out
    assert r.flops == int(np.prod(out))
    assert r.bytes_written == 4 * int(np.prod(out))


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(2, 12), st.integers(1, 3), st.integers(1, 3))
def test_pool_output_shape(n, c, h, k, s):
    k = min(k, h)
    r = cost(single("MaxPool", {"x": [n, c, h, h]}, kernel_shape=[k, k], strides=[s, s]))
    ho = (h - k) // s + 1
    assert r.status == "counted"
    assert r.outputs[0].shape == (n, c, ho, ho)
    assert r.flops >= 0 and r.bytes_read == 4 * n * c * h * h


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 6), st.booleans())
def test_gemm_linear_in_rows(m, k, n, bias):
    one = cost(single("Gemm", {"a": [m, k], "b": [k, n], "c": [n] if bias else None}))
    two = cost(single("Gemm", {"a": [2 * m, k], "b": [k, n], "c": [n] if bias else None}))
    assert two.macs == 2 * one.macs == 2 * m * n * k
    assert two.flops == 2 * one.flops
