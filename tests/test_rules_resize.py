"""Rules of the resize family (Resize, Upsample, GridSample, AffineGrid, Col2Im,
CenterCropPad), with expected values derived from named dimensions: an output element of
T interpolation taps costs 2·T − 1 ops (T multiplies, T − 1 adds), nearest 0."""

import math

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.resize import TAPS_PER_AXIS, interp_ops, resize_taps

from .util import const, cost, single

F32, I64 = TensorProto.FLOAT, TensorProto.INT64
N, C, H, W = 1, 3, 4, 6


def test_taps_table_is_as_documented():
    assert TAPS_PER_AXIS == {"nearest": 1, "linear": 2, "bilinear": 2, "cubic": 4, "bicubic": 4}
    assert [interp_ops(t) for t in (1, 2, 4, 16)] == [0, 3, 7, 31]


def _resize(mode, scales, opset=19, **attrs):
    return single("Resize", {"x": [N, C, H, W], "roi": None, "sc": [4]},
                  inits=[const("sc", [4], F32, scales)], mode=mode, opset=opset, **attrs)


@pytest.mark.parametrize("mode,taps", [("nearest", 1), ("linear", 2 * 2), ("cubic", 4 * 4)])
def test_resize_2x_over_two_axes(mode, taps):
    r = cost(_resize(mode, [1, 1, 2, 2]))
    assert r.status == "counted" and r.family == "resize"
    y = N * C * 2 * H * 2 * W
    assert r.outputs[0].shape == (N, C, 2 * H, 2 * W)
    assert r.flops == (0 if mode == "nearest" else y * (2 * taps - 1))
    assert r.bytes_written == 4 * y


def test_resize_nearest_is_a_pure_copy():
    r = cost(_resize("nearest", [1, 1, 2, 2]))
    assert (r.flops, r.int_ops, r.macs) == (0, 0, 0)
    assert r.bytes_read == 4 * (N * C * H * W + 4)  # X and the scales


def test_resize_linear_one_axis_only():
    r = cost(_resize("linear", [1, 1, 1, 2]))
    y = N * C * H * 2 * W
    assert r.flops == y * (2 * 2 - 1)  # d = 1: 2 taps


def test_resize_sizes_input_opset11_and_opset10():
    r = cost(single("Resize", {"x": [N, C, H, W], "roi": None, "sc": None, "sz": [4]},
                    inits=[const("sz", [4], I64, [N, C, 3, 9])], mode="linear", opset=13))
    assert r.outputs[0].shape == (N, C, 3, 9)
    assert r.flops == N * C * 3 * 9 * 7
    r = cost(single("Resize", {"x": [N, C, H, W], "sc": [4]}, inits=[const("sc", [4], F32, [1, 1, 2, 2])],
                    mode="linear", opset=10))
    assert r.rule_since == 10
    assert r.flops == N * C * 2 * H * 2 * W * 7


def test_resize_3d_trilinear():
    d = 2
    r = cost(single("Resize", {"x": [N, C, d, d, d], "roi": None, "sc": [5]},
                    inits=[const("sc", [5], F32, [1, 1, 2, 2, 2])], mode="linear", opset=19))
    assert r.flops == N * C * (2 * d) ** 3 * (2 * 8 - 1)


def test_resize_antialias_widens_downscaling_filters():
    # downscale W by 3 (s = 1/3): linear taps 2 -> ⌈2·3⌉ = 6 on that axis; H unchanged
    assert resize_taps("linear", (1, 1, 4, 6), (1, 1, 4, 2), antialias=True) == 6
    assert resize_taps("linear", (1, 1, 4, 6), (1, 1, 4, 2), antialias=False) == 2
    r = cost(single("Resize", {"x": [N, C, H, W], "roi": None, "sc": None, "sz": [4]},
                    inits=[const("sz", [4], I64, [N, C, H, 2])], mode="linear", antialias=1, opset=18))
    assert r.flops == N * C * H * 2 * (2 * 6 - 1)


def test_resize_uint8_is_int_ops():
    r = cost(single("Resize", {"x": ([N, C, H, W], TensorProto.UINT8), "roi": None, "sc": [4]},
                    inits=[const("sc", [4], F32, [1, 1, 2, 2])], mode="linear", opset=19))
    assert (r.flops, r.int_ops) == (0, N * C * 2 * H * 2 * W * 7)


@pytest.mark.parametrize("opset", [1, 7, 9])
def test_upsample(opset):
    if opset == 1:
        # Upsample-1: height_scale/width_scale attributes, "bilinear"; ONNX infers no shape for
        # it, so the output shape is declared
        m = single("Upsample", {"x": [N, C, H, W]}, height_scale=2.0, width_scale=2.0, mode="bilinear", opset=1,
                   out_shapes={"y": [N, C, 2 * H, 2 * W]}, out_dtype=F32)
    elif opset == 7:
        m = single("Upsample", {"x": [N, C, H, W]}, scales=[1.0, 1.0, 2.0, 2.0], mode="linear", opset=7)
    else:
        m = single("Upsample", {"x": [N, C, H, W], "sc": [4]}, inits=[const("sc", [4], F32, [1, 1, 2, 2])],
                   mode="linear", opset=9)
    r = cost(m)
    assert r.status == "counted" and r.rule_since == 1
    assert r.flops == N * C * 2 * H * 2 * W * 7  # 4 taps: 2·4 − 1 ops per output element


@pytest.mark.parametrize("opset,mode,taps", [(16, "bilinear", 4), (16, "bicubic", 16), (16, "nearest", 1),
                                             (20, "linear", 4), (20, "cubic", 16), (22, "linear", 4)])
def test_grid_sample_2d(opset, mode, taps):
    ho, wo = 3, 5
    r = cost(single("GridSample", {"x": [N, C, H, W], "g": [N, ho, wo, 2]}, mode=mode, opset=opset))
    assert r.outputs[0].shape == (N, C, ho, wo)
    y = N * C * ho * wo
    grid_coords = N * ho * wo * 2
    assert r.flops == y * interp_ops(taps) + grid_coords * 4


def test_grid_sample_3d_opset20():
    do, ho, wo = 2, 3, 4
    r = cost(single("GridSample", {"x": [N, C, 4, 4, 4], "g": [N, do, ho, wo, 3]}, mode="linear", opset=20))
    y = N * C * do * ho * wo
    assert r.flops == y * (2 * 8 - 1) + N * do * ho * wo * 3 * 4


@pytest.mark.parametrize("size", [[2, 3, 5, 6], [2, 3, 4, 5, 6]])
def test_affine_grid(size):
    d = len(size) - 2
    b = size[0]
    points = b * math.prod(size[2:])
    r = cost(single("AffineGrid", {"t": [b, d, d + 1], "sz": [len(size)]},
                    inits=[const("sz", [len(size)], I64, size)], opset=20))
    assert r.status == "counted"
    assert r.outputs[0].shape == (b, *size[2:], d)
    assert r.macs == points * d * (d + 1)
    assert r.flops == 2 * r.macs


def test_col2im():
    c, kh, kw, ih, iw = 2, 2, 2, 4, 5
    blocks = (ih - kh + 1) * (iw - kw + 1)
    r = cost(single("Col2Im", {"x": [N, c * kh * kw, blocks], "im": [2], "bl": [2]},
                    inits=[const("im", [2], I64, [ih, iw]), const("bl", [2], I64, [kh, kw])], opset=18))
    assert r.outputs[0].shape == (N, c, ih, iw)
    assert r.flops == N * c * kh * kw * blocks  # one add per column element


def test_center_crop_pad_reads_only_the_kept_window():
    h, w, ch, oh, ow = 5, 6, 3, 3, 8  # crop H to 3, pad W to 8
    r = cost(single("CenterCropPad", {"x": [h, w, ch], "sh": [2]}, inits=[const("sh", [2], I64, [oh, ow])],
                    axes=[0, 1], opset=18))
    assert r.status == "counted"
    assert r.outputs[0].shape == (oh, ow, ch)
    assert (r.flops, r.int_ops) == (0, 0)
    assert r.bytes_read == 4 * min(h, oh) * min(w, ow) * ch + 8 * 2
    assert r.bytes_written == 4 * oh * ow * ch


def test_equal_shapes_different_attributes_are_costed_apart():
    """The walker gives nodes with equal signatures the rule's result once; attributes are part
    of the signature, so two Resizes that differ only in mode are costed separately."""
    from onnx import helper

    import onnxperf

    from .util import model, vi

    scales = const("s", [4], values=[1, 1, 2, 2])
    nodes = [helper.make_node("Resize", ["x", "", "s"], ["y1"], mode="nearest", name="near"),
             helper.make_node("Resize", ["x", "", "s"], ["y2"], mode="linear", name="lin"),
             helper.make_node("Resize", ["x", "", "s"], ["y3"], mode="nearest", name="near2")]
    a = onnxperf.analyze(model(nodes, [vi("x", [1, 3, 8, 8])], [vi(y, None) for y in ("y1", "y2", "y3")],
                               [scales], opset=19))
    near, lin, near2 = a.nodes
    assert near.flops != lin.flops
    assert (near.macs, near.flops, near.bytes_read, near.bytes_written) == \
        (near2.macs, near2.flops, near2.bytes_read, near2.bytes_written)
    assert (near.name, near2.name) == ("near", "near2")


@pytest.mark.parametrize("mode,per_output", [("nearest", 1), ("linear", 4), ("cubic", 0)])
def test_resize_2d_under_fvcore(mode, per_output):
    # fvcore: upsample_nearest2d 1 and upsample_bilinear2d 4 per output element; no bicubic handler
    r = cost(_resize(mode, [1, 1, 2, 2]), convention="fvcore")
    assert r.flops == N * C * 2 * H * 2 * W * per_output
    assert cost(_resize(mode, [1, 1, 2, 2]), convention="torch").flops == 0


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("spatial", [(W,), (2, 3, 4)])
def test_resize_1d_and_3d_under_fvcore_are_not_counted(mode, spatial):
    # fvcore has handlers only for upsample_nearest2d and upsample_bilinear2d: the 1-d and 3-d
    # forms (upsample_linear1d, upsample_trilinear3d, ...) count 0
    rank = 2 + len(spatial)
    m = single("Resize", {"x": [N, C, *spatial], "roi": None, "sc": [rank]},
               inits=[const("sc", [rank], F32, [1, 1] + [2] * len(spatial))], mode=mode, opset=19)
    assert cost(m, convention="fvcore").flops == 0
