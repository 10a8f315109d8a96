"""Rules of the norm family, with expected values derived from named dimensions:
``ops = e·X + r·rows`` (e per element, r per normalized row / group / channel)."""

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.norm import BATCH_NORM_TRAINING, LP_NORM, LP_NORM_OTHER, NORM

from .util import const, cost, single

N, C, H, W = 2, 4, 3, 5
S = H * W
X = N * C * S


def test_norm_table_is_as_documented():
    assert NORM == {
        "BatchNormalization": (2, 5), "LayerNormalization": (6, 5), "GroupNormalization": (7, 5),
        "InstanceNormalization": (7, 5), "RMSNormalization": (4, 4), "MeanVarianceNormalization": (5, 6),
    }
    assert BATCH_NORM_TRAINING == (4, 8)
    assert (LP_NORM, LP_NORM_OTHER) == ({1: (3, 0), 2: (3, 1)}, (4, 1))


def _bn(opset, outputs=("y",), **attrs):
    return single("BatchNormalization", {"x": [N, C, H, W], "s": [C], "b": [C], "m": [C], "v": [C]},
                  list(outputs), opset=opset, **attrs)


@pytest.mark.parametrize("opset", [9, 14, 15])
def test_batch_norm_inference_folds_per_channel_constants(opset):
    r = cost(_bn(opset))
    assert r.status == "counted" and r.family == "norm"
    # y = x·a + b per element; a = scale/sqrt(var+eps), b = B − mean·a per channel
    assert r.flops == 2 * X + 5 * C
    assert r.bytes_read == 4 * (X + 4 * C)


def test_batch_norm_training():
    r = cost(_bn(15, ("y", "rm", "rv"), training_mode=1))
    assert r.rule_since == 14
    assert r.flops == (2 + 4) * X + (5 + 8) * C
    # before opset 14 training is signalled by the statistics outputs
    r = cost(_bn(9, ("y", "rm", "rv", "sm", "sv")))
    assert r.rule_since == 1
    assert r.flops == (2 + 4) * X + (5 + 8) * C


def test_batch_norm_fp16():
    r = cost(single("BatchNormalization", {"x": ([N, C, H, W], TensorProto.FLOAT16),
                                           "s": ([C], TensorProto.FLOAT16), "b": ([C], TensorProto.FLOAT16),
                                           "m": ([C], TensorProto.FLOAT16), "v": ([C], TensorProto.FLOAT16)},
                    opset=15))
    assert r.flops == 2 * X + 5 * C
    assert r.bytes_written == 2 * X


@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm(bias):
    batch, seq, hidden = 2, 7, 16
    r = cost(single("LayerNormalization", {"x": [batch, seq, hidden], "s": [hidden], "b": [hidden] if bias else None},
                    opset=17))
    rows = batch * seq
    assert r.flops == (7 if bias else 6) * batch * seq * hidden + 5 * rows


def test_layer_norm_axis_and_extra_outputs():
    batch, seq, hidden = 2, 7, 16
    r = cost(single("LayerNormalization", {"x": [batch, seq, hidden], "s": [seq, hidden]},
                    ["y", "mean", "inv"], opset=17, axis=1))
    assert r.flops == 6 * batch * seq * hidden + 5 * batch
    assert r.bytes_written == 4 * (batch * seq * hidden + 2 * batch)


def test_rms_norm_opset23():
    batch, seq, hidden = 3, 4, 8
    r = cost(single("RMSNormalization", {"x": [batch, seq, hidden], "s": [hidden]}, opset=23))
    assert r.status == "counted"
    assert r.flops == 4 * batch * seq * hidden + 4 * batch * seq


@pytest.mark.parametrize("opset,scale_len", [(18, 2), (21, C)])
def test_group_norm(opset, scale_len):
    g = 2
    r = cost(single("GroupNormalization", {"x": [N, C, H, W], "s": [scale_len], "b": [scale_len]},
                    opset=opset, num_groups=g))
    assert r.status == "counted"
    assert r.flops == 7 * X + 5 * N * g


def test_instance_norm():
    r = cost(single("InstanceNormalization", {"x": [N, C, H, W], "s": [C], "b": [C]}))
    assert r.flops == 7 * X + 5 * N * C


@pytest.mark.parametrize("p,expected", [(2, 3 * X + N * C * H), (1, 3 * X)])
def test_lp_norm_along_last_axis(p, expected):
    r = cost(single("LpNormalization", {"x": [N, C, H, W]}, p=p))
    # rows = X / W along axis −1
    assert r.flops == expected


def test_lp_norm_axis_1():
    r = cost(single("LpNormalization", {"x": [N, C, H, W]}, p=2, axis=1))
    assert r.flops == 3 * X + N * S


def test_mean_variance_normalization_default_axes():
    # default axes [0, 2, 3]: one group per channel, of N·H·W elements
    r = cost(single("MeanVarianceNormalization", {"x": [N, C, H, W]}, out_shapes={"y": [N, C, H, W]},
                    out_dtype=TensorProto.FLOAT, opset=13))
    assert r.status == "counted"
    assert r.flops == 5 * X + 6 * C


def test_mean_variance_normalization_custom_axes():
    r = cost(single("MeanVarianceNormalization", {"x": [N, C, H, W]}, out_shapes={"y": [N, C, H, W]},
                    out_dtype=TensorProto.FLOAT, opset=13, axes=[2, 3]))
    assert r.flops == 5 * X + 6 * N * C


@pytest.mark.parametrize("size", [3, 5])
def test_lrn(size):
    r = cost(single("LRN", {"x": [N, C, H, W]}, size=size))
    # x², size − 1 window adds, ·alpha/size, + bias, ^beta, divide
    assert r.flops == (1 + (size - 1) + 4) * X


def test_batch_norm_9_with_unshaped_statistics_outputs_is_costed():
    # BatchNormalization-9 in training writes Y and four statistics (mean, var, saved mean, saved
    # var); ONNX infers none of the four shapes. The rule needs only the inputs, so it runs, and
    # writes Y as X and each statistic as the C-element mean.
    m = _bn(9, ("y", "rm", "rv", "sm", "sv"))
    for o in list(m.graph.output)[1:]:
        m.graph.output.remove(o)  # statistics left unshaped and unused, as the model
    r = cost(m)
    assert r.status == "counted" and r.exact
    assert r.flops == (2 + 4) * X + (5 + 8) * C
    assert r.bytes_written == 4 * (X + 4 * C)


def _bn_const(opset, scale, **attrs):
    return single("BatchNormalization", {"x": [N, C, H, W], "s": [C], "b": [C], "m": [C], "v": [C]},
                  inits=[const("s", [C], values=scale)], opset=opset, **attrs)


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_under_fvcore(affine):
    # fvcore's batchnorm_flop_jit: inference 2 per element with an affine weight, 1 without; in
    # training its norm counter: 5 with, 4 without. The exporters write weight=None as ones.
    scale = [0.5 + c for c in range(C)] if affine else [1.0] * C
    assert cost(_bn_const(15, scale), convention="fvcore").flops == (2 if affine else 1) * X
    train = cost(_bn_const(15, scale, training_mode=1), convention="fvcore")
    assert train.flops == (5 if affine else 4) * X
    # torch's FlopCounterMode has no formula for batch norm
    assert cost(_bn_const(15, scale, training_mode=1), convention="torch").flops == 0


@pytest.mark.parametrize("op", ["LayerNormalization", "InstanceNormalization"])
@pytest.mark.parametrize("affine", [True, False])
def test_norms_under_fvcore(op, affine):
    # fvcore's norm_flop_counter: 5 per element with an affine weight, 4 without
    width = W if op == "LayerNormalization" else C
    scale = [0.5 + k for k in range(width)] if affine else [1.0] * width
    m = single(op, {"x": [N, C, H, W], "s": [width], "b": [width]}, inits=[const("s", [width], values=scale)],
               opset=17)
    assert cost(m, convention="fvcore").flops == (5 if affine else 4) * X
