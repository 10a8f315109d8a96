"""Rules of the com.microsoft contrib ops (ms_contrib*.py), expected values derived from named
dimensions. Every output shape is given explicitly in the graph outputs, so the tests do not
depend on onnxruntime's symbolic shape inference, except the one test that checks it."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.cost.ops.ms_contrib import ACTIVATIONS
from onnxperf.cost.ops.ms_contrib_quant import BLOCK_DEQUANT_OPS, QLINEAR_ELEMENTWISE, dequant_ops, quant_ops
from onnxperf.cost.ops.registry import MS

from .util import const, cost, model, single, vi

F32, F16, U8, I8, I32, I64 = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.UINT8, TensorProto.INT8,
                              TensorProto.INT32, TensorProto.INT64)

# Per-element and per-row costs written out from the ops' definitions (docs/rules.md), so the
# tables in the code are checked, not echoed.
# LayerNormalization: sum, sub, square, sum, ·inv_std, ·scale per element; 2 divides, + eps,
# sqrt, reciprocal per row. RMS norm: x·x, sum, ·inv_rms, ·scale; divide, + eps, sqrt, reciprocal.
LN_E, LN_R = 6, 5
RMS_E, RMS_R = 4, 4
GROUP_NORM_E, GROUP_NORM_R = 7, 5  # LayerNormalization's, with the bias always present
RELU, LEAKY_RELU, SIGMOID = 1, 2, 4
GELU, GELU_TANH = 5, 9            # erf form: div, erf, add, mul, mul; tanh form: 9
SILU = SIGMOID + 1
SCALE, SOFTMAX, SOFTCAP, ROTARY = 1, 5, 3, 3  # per score, per score, per score, per rotated element
# quantization, per element: dequantize = (x − zp)·scale; quantize to 8 bits = divide, round,
# + zp, saturate (min, max); requantize an int32 accumulator = scale multiply, round, + zp, saturate
DEQUANT_ZP, DEQUANT = 2, 1
QUANT_ZP, QUANT = 5, 4
REQUANT = 5
BLOCK_DEQUANT = 2  # a block-quantized weight: zero-point subtract, scale multiply


def ms(op, inputs, outs, dtype=F32, **kw):
    """A one-node com.microsoft model whose outputs (name -> shape) are declared."""
    r = cost(single(op, inputs, tuple(outs), domain=MS, out_shapes=outs, out_dtype=dtype, **kw))
    assert r.status == "counted", r.note
    assert r.rule_since == 1 and r.domain == MS
    return r


def core(b, h, s, t, d, dv, per_score_extra=0):
    scores = b * h * s * t
    macs = scores * (d + dv)
    return macs, 2 * macs + scores * (SCALE + SOFTMAX + per_score_extra)


# --- fused conv / gemm / matmul ------------------------------------------------------------

def test_fused_conv_bias_residual_activation():
    n, c_in, c_out, k, h = 1, 4, 8, 3, 10
    ho = h - k + 1
    r = ms("FusedConv", {"x": [n, c_in, h, h], "w": [c_out, c_in, k, k], "b": [c_out], "z": [n, c_out, ho, ho]},
           {"y": [n, c_out, ho, ho]}, kernel_shape=[k, k], activation="Relu")
    y = n * c_out * ho * ho
    assert r.family == "conv"
    assert r.macs == y * c_in * k * k
    assert r.flops == 2 * r.macs + y * (1 + 1 + RELU)


def test_nhwc_conv_grouped():
    n, c_in, c_out, k, h, g = 2, 8, 4, 3, 6, 2
    ho = h - k + 1
    r = ms("NhwcConv", {"x": [n, h, h, c_in], "w": [c_out, c_in // g, k, k]}, {"y": [n, ho, ho, c_out]},
           kernel_shape=[k, k], group=g)
    assert r.macs == n * ho * ho * c_out * (c_in // g) * k * k
    assert r.flops == 2 * r.macs


def test_fused_gemm_with_activation():
    m, k, nn = 3, 5, 4
    r = ms("FusedGemm", {"a": [m, k], "b": [nn, k], "c": [nn]}, {"y": [m, nn]}, transB=1, activation="LeakyRelu",
           activation_alpha=0.1)
    assert r.macs == m * nn * k
    assert r.flops == 2 * r.macs + m * nn + LEAKY_RELU * m * nn


@pytest.mark.parametrize("a_shape,b_shape,y_shape,attrs,k", [
    ([2, 3, 4], [3, 4, 5], [3, 2, 5], {"transBatchA": 1}, 4),
    ([2, 3, 4], [3, 2, 5], [3, 4, 5], {"transBatchA": 1, "transA": 1}, 2),
    ([4, 3, 5], [4, 3, 6], [4, 5, 6], {"transA": 1, "alpha": 0.5}, 3),
    ([4, 3, 5], [4, 6, 5], [4, 3, 6], {"transB": 1}, 5),
])
def test_fused_matmul_transposes(a_shape, b_shape, y_shape, attrs, k):
    r = ms("FusedMatMul", {"a": a_shape, "b": b_shape}, {"y": y_shape}, **attrs)
    y = int(np.prod(y_shape))
    assert r.macs == y * k
    assert r.flops == 2 * r.macs + (y if attrs.get("alpha", 1.0) != 1.0 else 0)


def test_gemm_fast_gelu():
    m, k, nn = 4, 6, 5
    r = ms("GemmFastGelu", {"x": [m, k], "w": [k, nn], "bias": [nn]}, {"y": [m, nn]})
    assert r.macs == m * k * nn
    assert r.flops == 2 * r.macs + m * nn * (1 + GELU_TANH)


# --- activations, bias ops -------------------------------------------------------------------

SHAPE = [2, 3, 8]
NUMEL = 2 * 3 * 8


@pytest.mark.parametrize("op,inputs,per_element", [
    ("Gelu", {"x": SHAPE}, GELU),
    ("BiasGelu", {"x": SHAPE, "b": [8]}, 1 + GELU),
    ("FastGelu", {"x": SHAPE}, GELU_TANH),
    ("FastGelu", {"x": SHAPE, "b": [8]}, 1 + GELU_TANH),
    ("QuickGelu", {"x": SHAPE}, SILU + 1),  # x·sigmoid(1.702·x): SiLU and the alpha multiply
    ("BiasAdd", {"x": SHAPE, "b": [8], "skip": SHAPE}, 2),
    ("BiasSoftmax", {"x": SHAPE, "b": SHAPE}, 1 + SOFTMAX),
    ("BiasDropout", {"x": SHAPE, "b": [8]}, 1),
    ("BiasDropout", {"x": SHAPE, "b": [8], "res": SHAPE}, 2),
])
def test_fused_activations(op, inputs, per_element):
    r = ms(op, inputs, {"y": SHAPE})
    assert r.flops == per_element * NUMEL


def test_activation_table_values():
    assert ACTIVATIONS == {"Gelu": 5, "BiasGelu": 6, "FastGelu": 9, "QuickGelu": 6, "BiasAdd": 2,
                           "BiasSoftmax": 6, "BiasDropout": 1}


def test_bias_split_gelu():
    n, s, d = 2, 4, 6
    r = ms("BiasSplitGelu", {"x": [n, s, d], "b": [d]}, {"y": [n, s, d // 2]})
    assert r.flops == (2 + GELU + 1) * n * s * d // 2


# --- normalizations ------------------------------------------------------------------------

B, S, HID = 2, 5, 16
X = B * S * HID


@pytest.mark.parametrize("beta,bias", [(True, True), (False, False)])
def test_skip_layer_norm(beta, bias):
    ins = {"x": [B, S, HID], "skip": [B, S, HID], "gamma": [HID], "beta": [HID] if beta else None,
           "bias": [HID] if bias else None}
    r = ms("SkipLayerNormalization", ins, {"y": [B, S, HID]})
    assert r.family == "norm"
    assert r.flops == (1 + bias) * X + (LN_E + beta) * X + LN_R * B * S


def test_skip_simplified_layer_norm():
    r = ms("SkipSimplifiedLayerNormalization", {"x": [B, S, HID], "skip": [B, S, HID], "gamma": [HID],
                                                 "bias": [HID]}, {"y": [B, S, HID]})
    assert r.flops == 2 * X + RMS_E * X + RMS_R * B * S


def test_simplified_layer_norm_in_both_domains():
    r = ms("SimplifiedLayerNormalization", {"x": [B, S, HID], "g": [HID]}, {"y": [B, S, HID]}, axis=-1)
    assert r.flops == RMS_E * X + RMS_R * B * S
    # onnxruntime's fusion writes it in the default domain
    r2 = cost(single("SimplifiedLayerNormalization", {"x": [B, S, HID], "g": [HID]}, out_shapes={"y": [B, S, HID]},
                     out_dtype=F32, axis=-1, epsilon=1e-6))
    assert r2.status == "counted" and r2.domain == "" and r2.flops == r.flops


def test_ms_layer_norm_axis():
    r = ms("LayerNormalization", {"x": [B, S, HID], "g": [S, HID], "b": [S, HID]}, {"y": [B, S, HID]}, axis=1)
    assert r.flops == (LN_E + 1) * X + LN_R * B


@pytest.mark.parametrize("op", ["GroupNorm", "SkipGroupNorm"])
def test_group_norm_nhwc(op):
    n, h, w, c, g = 2, 4, 4, 8, 2
    ins = {"x": [n, h, w, c], "gamma": [c], "beta": [c]}
    if op == "SkipGroupNorm":
        ins.update({"skip": [n, h, w, c], "bias": [c]})
    r = ms(op, ins, {"y": [n, h, w, c]}, groups=g, activation=1, channels_last=1)
    adds = 2 if op == "SkipGroupNorm" else 0
    assert r.flops == (GROUP_NORM_E + adds + SILU) * n * h * w * c + GROUP_NORM_R * n * g


def test_embed_layer_norm_gathers_adds_and_norm():
    b, s, h, vocab, max_pos, types = 2, 7, 16, 1000, 128, 2
    ins = {"ids": ([b, s], I32), "seg": ([b, s], I32), "word": [vocab, h], "pos": [max_pos, h], "segemb": [types, h],
           "gamma": [h], "beta": [h], "mask": ([b, s], I32)}
    m = single("EmbedLayerNormalization", ins, ("y", "mask_index"), domain=MS,
               out_shapes={"y": [b, s, h], "mask_index": [b]}, out_dtype=F32)
    m.graph.output[1].type.tensor_type.elem_type = I32
    r = cost(m)
    assert r.status == "counted"
    x = b * s * h
    assert r.flops == 2 * x + (LN_E + 1) * x + LN_R * b * s  # word+pos+segment adds, LayerNorm with beta
    assert r.int_ops == b * s  # mask_index from the mask
    gathered = 4 * (b * s * h + b * s * h + min(b * s, types) * h)
    ids = 4 * 3 * b * s
    assert r.bytes_read == ids + gathered + 4 * 2 * h
    assert r.bytes_written == 4 * x + 4 * b


def test_qembed_layer_norm_dequantizes_the_gathered_rows_and_is_shaped_by_us():
    """quantize_dynamic's QEmbedLayerNormalization, no declared output shapes: shaped by the own
    shape function, costed as EmbedLayerNormalization plus a dequantize (with zero point) of each
    gathered element and of gamma and beta."""
    b, s, h, vocab, max_pos = 2, 7, 16, 1000, 128
    u8 = TensorProto.UINT8
    ins = {"ids": ([b, s], I32), "seg": None, "word": ([vocab, h], u8), "pos": ([max_pos, h], u8), "segemb": None,
           "gamma": ([h], u8), "beta": ([h], u8), "mask": ([b, s], I32)}
    for k in ("ws", "ps"):
        ins[k] = ([], F32)
    ins["ss"] = None
    for k in ("gs", "bs"):
        ins[k] = ([], F32)
    for k in ("wz", "pz"):
        ins[k] = ([], u8)
    ins["sz"] = None
    for k in ("gz", "bz"):
        ins[k] = ([], u8)
    r = cost(single("QEmbedLayerNormalization", ins, ("y", "mask_index"), domain=MS))
    assert r.status == "counted", r.note
    assert r.outputs[0].shape == (b, s, h) and r.outputs[1].shape == (b,)
    assert (r.outputs[0].dtype, r.outputs[1].dtype) == ("float32", "int32")
    x = b * s * h
    assert r.flops == DEQUANT_ZP * (2 * x + 2 * h) + 1 * x + (LN_E + 1) * x + LN_R * b * s
    assert r.int_ops == b * s
    ids, scales, zps = 4 * b * s, 4 * 4, 1 * 4
    assert r.bytes_read == ids + 2 * b * s * h + 2 * h + 4 * b * s + scales + zps


# --- attention -----------------------------------------------------------------------------

def test_ms_attention_packed_qkv_projection():
    b, s, din, h = 2, 8, 32, 4
    hq = hk = hv = din
    r = ms("Attention", {"x": [b, s, din], "w": [din, hq + hk + hv], "bias": [hq + hk + hv],
                         "mask": ([b, s], I32)}, {"y": [b, s, hv]}, num_heads=h, unidirectional=1)
    proj = b * s * din * (hq + hk + hv)
    macs, ops = core(b, h, s, s, hq // h, hv // h, per_score_extra=2)  # mask_index, unidirectional
    assert r.family == "attention"
    assert r.macs == proj + macs
    assert r.flops == 2 * proj + b * s * (hq + hk + hv) + ops


def test_ms_attention_qkv_hidden_sizes_and_past():
    b, s, din, h, p = 1, 1, 16, 2, 9
    hq, hk, hv = 16, 16, 8
    d = hq // h
    t = p + s
    r = ms("Attention", {"x": [b, s, din], "w": [din, hq + hk + hv], "bias": None, "mask": None,
                         "past": [2, b, h, p, d]}, {"y": [b, s, hv], "present": [2, b, h, t, d]},
           num_heads=h, qkv_hidden_sizes=[hq, hk, hv])
    proj = b * s * din * (hq + hk + hv)
    macs, ops = core(b, h, s, t, d, hv // h)
    assert r.macs == proj + macs and r.flops == 2 * proj + ops
    inputs = 4 * (b * s * din + din * (hq + hk + hv) + 2 * b * h * p * d)
    assert r.bytes_read == inputs + 4 * 2 * b * h * t * d


def test_qattention_integer_projection():
    b, s, din, h = 1, 4, 8, 2
    hidden = din
    ins = {"x": ([b, s, din], U8), "w": ([din, 3 * hidden], I8), "bias": [3 * hidden], "xs": [], "ws": [],
           "mask": None, "xzp": ([], U8), "wzp": ([], I8)}
    r = ms("QAttention", ins, {"y": [b, s, hidden]}, num_heads=h)
    proj = b * s * din * 3 * hidden
    macs, ops = core(b, h, s, s, hidden // h, hidden // h)
    assert r.macs == proj + macs
    assert r.int_ops == 2 * proj + b * s * din + din * 3 * hidden
    assert r.flops == 2 * b * s * 3 * hidden + ops


def test_multi_head_attention_separate_qkv_with_bias_and_past():
    b, s, h, d, p = 2, 3, 4, 8, 5
    t = p + s
    ins = {"q": [b, s, h * d], "k": [b, s, h * d], "v": [b, s, h * d], "bias": [3 * h * d],
           "kpm": ([b, s + p], I32), "ab": None, "pk": [b, h, p, d], "pv": [b, h, p, d]}
    r = ms("MultiHeadAttention", ins, {"y": [b, s, h * d], "present_k": [b, h, t, d], "present_v": [b, h, t, d]},
           num_heads=h)
    macs, ops = core(b, h, s, t, d, d, per_score_extra=1)
    assert r.macs == macs
    assert r.flops == ops + 3 * b * s * h * d
    assert r.bytes_read == 4 * (3 * b * s * h * d + 3 * h * d + 2 * b * h * p * d) + 4 * b * (s + p) \
        + 4 * 2 * b * h * t * d


def test_multi_head_attention_packed_qkv_and_cross_attention():
    b, s, h, d = 1, 6, 2, 4
    r = ms("MultiHeadAttention", {"qkv": [b, s, h, 3, d]}, {"y": [b, s, h * d]}, num_heads=h)
    assert (r.macs, r.flops) == core(b, h, s, s, d, d)
    skv, dv = 10, 6
    r = ms("MultiHeadAttention", {"q": [b, s, h * d], "k": [b, h, skv, d], "v": [b, h, skv, dv]},
           {"y": [b, s, h * dv]}, num_heads=h, unidirectional=1)
    assert (r.macs, r.flops) == core(b, h, s, skv, d, dv, per_score_extra=1)


def _gqa_inputs(b, s, hq, hkv, d, p, share=False, rotary=False, max_len=None):
    cache = max_len if share else p
    ins = {"q": ([b, s, hq * d], F16), "k": ([b, s, hkv * d], F16), "v": ([b, s, hkv * d], F16),
           "pk": ([b, hkv, cache, d], F16), "pv": ([b, hkv, cache, d], F16),
           "seqlens_k": ([b], I32), "total": ([], I32)}
    if rotary:
        ins.update({"cos": ([max_len, d // 2], F16), "sin": ([max_len, d // 2], F16)})
    return ins


def test_group_query_attention_with_past():
    b, s, hq, hkv, d, p = 1, 1, 8, 2, 16, 20
    t = p + s
    r = ms("GroupQueryAttention", _gqa_inputs(b, s, hq, hkv, d, p),
           {"y": [b, s, hq * d], "present_k": [b, hkv, t, d], "present_v": [b, hkv, t, d]}, dtype=F16,
           num_heads=hq, kv_num_heads=hkv, softcap=50.0)
    macs, ops = core(b, hq, s, t, d, d, per_score_extra=1 + SOFTCAP)  # causal by default
    assert r.exact
    assert (r.macs, r.flops) == (macs, ops)
    present = 2 * 2 * b * hkv * t * d
    assert r.bytes_read == 2 * (b * s * hq * d + 2 * b * s * hkv * d + 2 * b * hkv * p * d) + 4 * b + 4 + present


def test_group_query_attention_shared_buffer_and_rotary():
    b, s, hq, hkv, d, max_len = 1, 1, 4, 2, 8, 64
    ins = _gqa_inputs(b, s, hq, hkv, d, 0, share=True, rotary=True, max_len=max_len)
    outs = {"y": [b, s, hq * d], "present_k": [b, hkv, max_len, d], "present_v": [b, hkv, max_len, d]}
    r = ms("GroupQueryAttention", ins, outs, dtype=F16, num_heads=hq, kv_num_heads=hkv, do_rotary=1)
    macs, ops = core(b, hq, s, max_len, d, d, per_score_extra=1)
    assert not r.exact and "upper bound" in r.note
    assert r.macs == macs
    assert r.flops == ops + ROTARY * b * s * (hq + hkv) * d
    # a constant total_sequence_length makes it exact
    total = 17
    m = single("GroupQueryAttention", ins, tuple(outs), domain=MS, out_shapes=outs, out_dtype=F16,
               inits=[const("total", [], I32, total)], num_heads=hq, kv_num_heads=hkv)
    r = cost(m)
    assert r.exact and r.macs == core(b, hq, s, total, d, d)[0]


def test_ms_rotary_embedding():
    b, s, h, head, max_pos = 2, 5, 4, 8, 32
    r = ms("RotaryEmbedding", {"x": [b, s, h * head], "pos": ([b, s], I64), "cos": [max_pos, head // 2],
                               "sin": [max_pos, head // 2]}, {"y": [b, s, h * head]}, num_heads=h)
    assert r.flops == ROTARY * b * s * h * head
    assert r.bytes_read == 4 * b * s * h * head + 8 * b * s + 2 * 4 * b * s * head // 2


# --- quantized -----------------------------------------------------------------------------

@pytest.mark.parametrize("bits,zp", [(4, True), (8, False)])
def test_matmul_nbits(bits, zp):
    m_, k, nn, block = 3, 64, 8, 32
    k_blocks = k // block
    blob = block * bits // 8
    ins = {"a": [1, m_, k], "b": ([nn, k_blocks, blob], U8), "scales": [nn * k_blocks],
           "zp": ([nn * ((k_blocks * bits + 7) // 8)], U8) if zp else None}
    r = ms("MatMulNBits", ins, {"y": [1, m_, nn]}, K=k, N=nn, bits=bits, block_size=block)
    assert r.macs == m_ * nn * k
    assert r.flops == 2 * r.macs + BLOCK_DEQUANT * nn * k
    zp_bytes = nn * ((k_blocks * bits + 7) // 8) if zp else 0
    # packed weights are N·K·bits/8 bytes
    assert r.bytes_read == 4 * m_ * k + nn * k * bits // 8 + 4 * nn * k_blocks + zp_bytes


def test_matmul_integer_to_float():
    m_, k, nn = 4, 8, 5
    r = ms("MatMulIntegerToFloat", {"a": ([m_, k], U8), "b": ([k, nn], I8), "as": [], "bs": [nn],
                                    "azp": ([], U8), "bzp": None, "bias": [nn]}, {"y": [m_, nn]})
    assert r.macs == m_ * k * nn
    assert r.int_ops == 2 * r.macs + m_ * k
    assert r.flops == 2 * m_ * nn


def test_dynamic_quantize_matmul():
    m_, k, nn = 4, 8, 5
    r = ms("DynamicQuantizeMatMul", {"a": [m_, k], "b": ([k, nn], I8), "bs": [nn], "bzp": ([nn], I8)},
           {"y": [m_, nn]})
    a = m_ * k
    assert r.macs == m_ * k * nn
    assert r.int_ops == 2 * r.macs + a + k * nn
    assert r.flops == 7 * a + 7 + m_ * nn  # DynamicQuantizeLinear of A, then the output scale


@pytest.mark.parametrize("requant", [True, False])
def test_qgemm(requant):
    m_, k, nn = 3, 6, 4
    ins = {"a": ([m_, k], U8), "as": [], "azp": ([], U8), "b": ([nn, k], I8), "bs": [], "bzp": ([], I8),
           "c": ([nn], I32)}
    if requant:
        ins.update({"ys": [], "yzp": ([], U8)})
    r = ms("QGemm", ins, {"y": [m_, nn]}, dtype=U8 if requant else F32, transB=1)
    y = m_ * nn
    assert r.macs == m_ * nn * k
    assert r.int_ops == 2 * r.macs + m_ * k + nn * k + y  # zero-point subtracts, int32 C add
    assert r.flops == (REQUANT * y if requant else y)


def test_qlinear_conv_nhwc():
    n, c_in, c_out, k, h = 1, 4, 6, 3, 7
    ho = h - k + 1
    ins = {"x": ([n, h, h, c_in], U8), "xs": [], "xzp": ([], U8), "w": ([c_out, c_in, k, k], I8), "ws": [],
           "wzp": ([], I8), "ys": [], "yzp": ([], U8)}
    r = ms("QLinearConv", ins, {"y": [n, ho, ho, c_out]}, dtype=U8, channels_last=1, kernel_shape=[k, k])
    y = n * ho * ho * c_out
    assert r.macs == y * c_in * k * k
    # the ai.onnx QLinearConv cost: zero-point subtracts on every x and w element, requantize
    assert r.int_ops == 2 * r.macs + n * h * h * c_in + c_out * c_in * k * k
    assert r.flops == REQUANT * y


def test_quantization_helpers_and_tables():
    assert (dequant_ops(True), dequant_ops(False), quant_ops(True), quant_ops(False)) == (DEQUANT_ZP, DEQUANT,
                                                                                            QUANT_ZP, QUANT)
    assert BLOCK_DEQUANT_OPS == BLOCK_DEQUANT
    assert QLINEAR_ELEMENTWISE == {"QLinearAdd": ("Add", (2, 5), 7), "QLinearMul": ("Mul", (2, 5), 7),
                                   "QLinearSigmoid": ("Sigmoid", (2,), 4), "QLinearLeakyRelu": ("LeakyRelu", (2,), 4)}


@pytest.mark.parametrize("op,float_op_cost", [("QLinearAdd", 1), ("QLinearMul", 1), ("QLinearSigmoid", SIGMOID),
                                              ("QLinearLeakyRelu", LEAKY_RELU)])
def test_qlinear_elementwise(op, float_op_cost):
    shape = [2, 3, 4]
    numel = 24
    q = (shape, U8)
    if op in ("QLinearAdd", "QLinearMul"):
        ins = {"a": q, "as": [], "azp": ([], U8), "b": q, "bs": [], "bzp": None, "cs": [], "czp": ([], U8)}
        per = DEQUANT_ZP + DEQUANT + float_op_cost + QUANT_ZP
    else:
        ins = {"x": q, "xs": [], "xzp": ([], U8), "ys": [], "yzp": ([], U8)}
        per = DEQUANT_ZP + float_op_cost + QUANT_ZP
    r = ms(op, ins, {"y": shape}, dtype=U8)
    assert r.flops == per * numel and r.int_ops == 0


def test_qlinear_softmax_and_pools():
    q = ([1, 4, 6, 6], U8)
    qp = {"xs": [], "xzp": ([], U8), "ys": [], "yzp": ([], U8)}
    x = 4 * 36
    r = ms("QLinearSoftmax", {"x": q, **qp}, {"y": [1, 4, 6, 6]}, dtype=U8, axis=-1, opset=13)
    assert r.flops == (DEQUANT_ZP + SOFTMAX + QUANT_ZP) * x
    r = ms("QLinearGlobalAveragePool", {"x": q, **qp}, {"y": [1, 4, 1, 1]}, dtype=U8)
    assert r.flops == DEQUANT_ZP * x + 4 * 36 + QUANT_ZP * 4
    r = ms("QLinearAveragePool", {"x": q, **qp}, {"y": [1, 4, 3, 3]}, dtype=U8, kernel_shape=[2, 2], strides=[2, 2])
    y = 4 * 9
    assert r.flops == DEQUANT_ZP * x + y * 4 + QUANT_ZP * y


def test_qlinear_concat_copies_when_quantization_matches():
    shape_a, shape_b = [1, 2, 4], [1, 3, 4]
    ins = {"ys": [], "yzp": ([], U8), "a": (shape_a, U8), "as": [], "azp": ([], U8),
           "b": (shape_b, U8), "bs": [], "bzp": ([], U8)}
    inits = [const("ys", [], F32, 0.5), const("yzp", [], U8, 3), const("as", [], F32, 0.5), const("azp", [], U8, 3),
             const("bs", [], F32, 0.25), const("bzp", [], U8, 3)]
    m = single("QLinearConcat", ins, ("y",), domain=MS, out_shapes={"y": [1, 5, 4]}, out_dtype=U8, inits=inits, axis=1)
    r = cost(m)
    # a matches Y's scale and zero point: copied; b is requantized
    assert r.flops == (DEQUANT_ZP + QUANT_ZP) * 12
    assert r.bytes_written == 20


def test_ms_quantize_dequantize_linear():
    shape = [4, 5]
    r = ms("DequantizeLinear", {"x": (shape, I8), "s": [], "zp": ([], I8)}, {"y": shape})
    assert r.flops == DEQUANT_ZP * 20
    r = ms("QuantizeLinear", {"x": shape, "s": [], "zp": ([], U8)}, {"y": shape}, dtype=U8)
    assert r.flops == QUANT_ZP * 20


def test_gather_block_quantized():
    vocab, hidden, block, tokens = 100, 64, 32, 6
    ins = {"data": ([vocab, hidden // 2], U8), "idx": ([1, tokens], I64), "scales": [vocab, hidden // block]}
    r = ms("GatherBlockQuantized", ins, {"y": [1, tokens, hidden]}, bits=4, block_size=block, quantize_axis=1)
    y = tokens * hidden
    assert r.flops == BLOCK_DEQUANT * y  # uint8 data: implicit zero point
    assert r.bytes_read == 8 * tokens + tokens * hidden // 2 + 4 * tokens * hidden // block


def test_nhwc_max_pool_and_trilu():
    r = ms("NhwcMaxPool", {"x": ([1, 6, 6, 3], U8)}, {"y": [1, 3, 3, 3]}, dtype=U8, kernel_shape=[2, 2],
           strides=[2, 2])
    assert (r.int_ops, r.flops) == (27 * (4 - 1), 0)
    r = ms("Trilu", {"x": [3, 4]}, {"y": [3, 4]})
    assert (r.flops, r.bytes_read, r.bytes_written) == (0, 48, 48)


# --- shapes of com.microsoft ops: the engine's own shape functions ------------------------------

def test_output_shape_from_own_shape_function_not_onnxruntime():
    # No output shape declared: ONNX has no schema for com.microsoft ops, so the shape comes from
    # onnxperf's own shape function (onnxruntime's symbolic inference is a last fallback only).
    nodes = [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"], domain=MS, epsilon=1e-5),
             helper.make_node("Relu", ["y"], ["z"])]
    m = model(nodes, [vi("x", [B, S, HID]), vi("skip", [B, S, HID]), vi("gamma", [HID]), vi("beta", [HID])],
              [vi("z", None)], extra_opsets={MS: 1})
    a = onnxperf.analyze(m)
    sln, relu = a.main_nodes
    assert "onnxruntime-symbolic" not in a.shape_engines and "onnxperf" in a.shape_engines
    assert sln.outputs[0].shape == (B, S, HID)
    assert sln.status == "counted" and relu.status == "counted"
    assert sln.flops == X + (LN_E + 1) * X + LN_R * B * S
    assert relu.flops == X
