"""Rules of the pool family, with expected values derived from named dimensions:
Y output elements, K window elements, full windows charged (padding not subtracted)."""

import math

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.pool import POOL, lp_pool_per_output, max_roi_pool_compares

from .util import const, cost, single

N, C, H, W = 2, 3, 9, 9


def test_pool_table_is_as_documented():
    assert POOL == {"MaxPool": (1, -1), "GlobalMaxPool": (1, -1), "AveragePool": (1, 0),
                    "GlobalAveragePool": (1, 0)}


def test_max_pool_3x3_stride2_pad1():
    k, s, p = 3, 2, 1
    r = cost(single("MaxPool", {"x": [N, C, H, W]}, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4))
    ho = (H + 2 * p - k) // s + 1
    assert r.status == "counted" and r.family == "pool"
    assert r.outputs[0].shape == (N, C, ho, ho)
    assert r.flops == N * C * ho * ho * (k * k - 1)  # K − 1 compares per output, pads counted
    assert r.int_ops == 0


def test_max_pool_indices_output_adds_index_selects():
    k = 2
    r = cost(single("MaxPool", {"x": [N, C, 8, 8]}, ["y", "idx"], kernel_shape=[k, k], strides=[k, k]))
    y = N * C * 4 * 4
    assert r.flops == y * (k * k - 1)
    assert r.int_ops == y * (k * k - 1)
    assert r.bytes_written == y * (4 + 8)  # values + int64 indices


def test_max_pool_uint8_is_int_ops():
    k = 2
    r = cost(single("MaxPool", {"x": ([N, C, 8, 8], TensorProto.UINT8)}, kernel_shape=[k, k],
                    strides=[k, k], opset=12))
    assert (r.flops, r.int_ops) == (0, N * C * 16 * (k * k - 1))


@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_pool_divisor_mode_does_not_change_the_count(count_include_pad):
    k = 3
    r = cost(single("AveragePool", {"x": [N, C, H, W]}, kernel_shape=[k, k], pads=[1] * 4,
                    count_include_pad=count_include_pad))
    y = N * C * H * W  # same-size output
    assert r.flops == y * ((k * k - 1) + 1)  # K − 1 adds + 1 divide


def test_pool_1d_and_3d_with_ceil_mode():
    r = cost(single("AveragePool", {"x": [N, C, 10]}, kernel_shape=[3], strides=[2], ceil_mode=1))
    lo = -(-(10 - 3) // 2) + 1
    assert r.outputs[0].shape == (N, C, lo)
    assert r.flops == N * C * lo * 3
    d = 4
    r = cost(single("MaxPool", {"x": [N, C, d, d, d]}, kernel_shape=[2, 2, 2], strides=[2, 2, 2]))
    assert r.flops == N * C * 2 * 2 * 2 * (8 - 1)


def test_global_pools():
    s = H * W
    assert cost(single("GlobalAveragePool", {"x": [N, C, H, W]})).flops == N * C * s
    assert cost(single("GlobalMaxPool", {"x": [N, C, H, W]})).flops == N * C * (s - 1)
    assert cost(single("GlobalLpPool", {"x": [N, C, H, W]}, p=2)).flops == N * C * 2 * s


@pytest.mark.parametrize("p,per_output", [(2, lambda k: k + (k - 1) + 1),       # x·x, adds, sqrt
                                          (1, lambda k: k + (k - 1)),           # |x|, adds
                                          (3, lambda k: 2 * k + (k - 1) + 1)])  # |x|, pow, adds, root
def test_lp_pool(p, per_output):
    k = 2
    assert lp_pool_per_output(k * k, p) == per_output(k * k)
    r = cost(single("LpPool", {"x": [N, C, 8, 8]}, kernel_shape=[k, k], strides=[k, k], p=p))
    assert r.flops == N * C * 4 * 4 * per_output(k * k)


def test_max_unpool_moves_data_only():
    r = cost(single("MaxUnpool", {"x": [N, C, 4, 4], "i": ([N, C, 4, 4], TensorProto.INT64)},
                    kernel_shape=[2, 2], strides=[2, 2], opset=11))
    assert r.status == "counted"
    assert r.outputs[0].shape == (N, C, 8, 8)
    assert (r.flops, r.int_ops, r.macs) == (0, 0, 0)
    assert r.bytes_read == N * C * 16 * (4 + 8)
    assert r.bytes_written == 4 * N * C * 64


ROIS5 = [[0, 0, 0, 3, 3], [0, 2, 2, 6, 4]]


def test_max_roi_pool_bins_from_constant_rois():
    # roi 1: 4×4 region, 2×2 bins of 2×2: 4 bins × 3 compares
    # roi 2: x 2..6 (5 wide), y 2..4 (3 high): bins 2 high × 3 wide (ceil/floor overlap): 4 × 5
    assert max_roi_pool_compares(ROIS5, 8, 8, (2, 2), 1.0) == 4 * 3 + 4 * 5
    c = 2
    r = cost(single("MaxRoiPool", {"x": [1, c, 8, 8], "r": [2, 5]}, inits=[const("r", [2, 5], values=ROIS5)],
                    pooled_shape=[2, 2]))
    assert r.outputs[0].shape == (2, c, 2, 2)
    assert r.exact
    assert r.flops == c * (4 * 3 + 4 * 5)


def test_max_roi_pool_dynamic_rois_is_an_upper_bound():
    rois, c, h, w, ph = 3, 2, 8, 8, 2
    r = cost(single("MaxRoiPool", {"x": [1, c, h, w], "r": [rois, 5]}, pooled_shape=[ph, ph]))
    assert r.status == "counted" and not r.exact
    assert r.flops == rois * c * (h * w - ph * ph)


@pytest.mark.parametrize("spatial", [(H,), (H, W), (2, H, W)])
def test_global_average_pool_under_fvcore(spatial):
    # fvcore counts adaptive_avg_pool2d only (1 per input element); adaptive_avg_pool1d/3d have
    # no handler
    x = N * C * math.prod(spatial)
    r = cost(single("GlobalAveragePool", {"x": [N, C, *spatial]}), convention="fvcore")
    assert r.flops == (x if len(spatial) == 2 else 0)
