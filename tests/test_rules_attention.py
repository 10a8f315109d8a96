"""Rules of the attention family (ai.onnx Attention, RotaryEmbedding, LinearAttention, SwiGLU,
CausalConvWithState), expected values derived from named dimensions."""

import onnx
import pytest
from onnx import TensorProto

from onnxperf.cost.ops.attention import ROTARY_OPS_PER_ELEMENT, SCALE_OPS, SOFTCAP_OPS, SOFTMAX_PER_ELEMENT, attention_core
from onnxperf.cost.ops.elementwise import SILU_PER_ELEMENT
from onnxperf.cost.ops.reduce import ROW_WISE

from .util import cost, single

F16 = TensorProto.FLOAT16

# ops per attention score, written out: 1 scaling multiply; softmax = max, sub, exp, sum, div;
# soft cap = divide, tanh, multiply; 1 per mask source
SCALE, SOFTMAX, SOFTCAP = 1, 5, 3
# rotary: each (x1, x2) pair becomes (cos·x1 − sin·x2, sin·x1 + cos·x2): 6 ops per 2 elements
ROTARY = 6 // 2
# SiLU = x·sigmoid(x): neg, exp, add, div, mul
SILU = 5


def _since(op):
    """The op's newest opset in the installed onnx; the test is skipped when onnx lacks it."""
    try:
        return onnx.defs.get_schema(op).since_version
    except onnx.defs.SchemaError:
        pytest.skip(f"onnx {onnx.__version__} has no {op}")


def test_softmax_cost_comes_from_the_softmax_rule():
    assert SOFTMAX_PER_ELEMENT == ROW_WISE["Softmax"][0] == SOFTMAX


def test_per_score_and_per_element_constants():
    assert (SCALE_OPS, SOFTCAP_OPS, ROTARY_OPS_PER_ELEMENT, SILU_PER_ELEMENT) == (SCALE, SOFTCAP, ROTARY, SILU)


def test_attention_4d_self_attention():
    b, h, s, d = 2, 4, 8, 16
    m = single("Attention", {"q": [b, h, s, d], "k": [b, h, s, d], "v": [b, h, s, d]}, opset=_since("Attention"))
    r = cost(m)
    assert r.status == "counted" and r.family == "attention" and r.exact
    assert r.outputs[0].shape == (b, h, s, d)
    scores = b * h * s * s
    assert r.macs == 2 * scores * d
    assert r.flops == 2 * r.macs + scores * (SCALE + SOFTMAX)
    assert r.bytes_read == 3 * 4 * b * h * s * d
    assert r.bytes_written == 4 * b * h * s * d


def test_attention_3d_gqa_causal_mask_softcap():
    b, hq, hkv, sq, skv, d, dv = 1, 8, 2, 4, 6, 8, 4
    m = single("Attention", {"q": [b, sq, hq * d], "k": [b, skv, hkv * d], "v": [b, skv, hkv * dv],
                             "mask": [sq, skv]},
               opset=_since("Attention"), q_num_heads=hq, kv_num_heads=hkv, is_causal=1, softcap=30.0)
    r = cost(m)
    assert r.outputs[0].shape == (b, sq, hq * dv)
    scores = b * hq * sq * skv
    assert r.macs == scores * (d + dv)  # every query head does its own products under GQA
    masks = 2  # attn_mask and the causal mask
    assert r.flops == 2 * r.macs + scores * (SCALE + SOFTCAP + masks + SOFTMAX)
    assert "full" in r.note and "causal" in r.note


def test_attention_past_present_kv_traffic():
    b, hq, hkv, s, p, d = 1, 4, 2, 1, 10, 8
    t = p + s
    m = single("Attention", {"q": ([b, hq, s, d], F16), "k": ([b, hkv, s, d], F16), "v": ([b, hkv, s, d], F16),
                             "mask": None, "pk": ([b, hkv, p, d], F16), "pv": ([b, hkv, p, d], F16)},
               ("y", "present_k", "present_v"), opset=_since("Attention"))
    r = cost(m)
    assert r.outputs[1].shape == (b, hkv, t, d)
    scores = b * hq * s * t
    assert r.macs == 2 * scores * d
    inputs = 2 * (b * hq * s * d + 2 * b * hkv * s * d + 2 * b * hkv * p * d)
    present = 2 * 2 * b * hkv * t * d
    assert r.bytes_read == inputs + present  # the core re-reads the concatenated cache
    assert r.bytes_written == 2 * b * hq * s * d + present


def test_attention_rule_covers_later_versions_with_window():
    b, h, s, d = 1, 2, 5, 4
    if _since("Attention") < 25:
        pytest.skip("sliding windows arrived with Attention-25")
    m = single("Attention", {"q": [b, h, s, d], "k": [b, h, s, d], "v": [b, h, s, d]},
               opset=_since("Attention"), left_window_size=2, right_window_size=0)
    r = cost(m)
    assert r.rule_since == 23
    scores = b * h * s * s
    assert r.flops == 2 * r.macs + scores * (SCALE + 1 + SOFTMAX)


def test_attention_core_helper():
    # 1 batch, 1 head, 2 queries, 3 keys, D = 4, Dv = 5: 6 scores of 4 + 5 MACs each
    assert attention_core(1, 1, 2, 3, 4, 5) == (54, 2 * 54 + 6 * 6)


@pytest.mark.parametrize("rot_dim", [0, 4])
def test_rotary_embedding_4d_with_position_ids(rot_dim):
    b, h, s, head, max_pos = 2, 3, 5, 8, 64
    rot = rot_dim or head
    m = single("RotaryEmbedding", {"x": [b, h, s, head], "cos": [max_pos, rot // 2], "sin": [max_pos, rot // 2],
                                   "pos": ([b, s], TensorProto.INT64)}, opset=_since("RotaryEmbedding"),
               rotary_embedding_dim=rot_dim)
    r = cost(m)
    assert r.status == "counted"
    assert r.flops == ROTARY * b * h * s * rot
    # only the gathered cache rows are read
    assert r.bytes_read == 4 * b * h * s * head + 8 * b * s + 2 * 4 * b * s * (rot // 2)


def test_rotary_embedding_3d_without_position_ids():
    b, h, s, head = 1, 4, 6, 8
    m = single("RotaryEmbedding", {"x": [b, s, h * head], "cos": [b, s, head // 2], "sin": [b, s, head // 2]},
               opset=_since("RotaryEmbedding"), num_heads=h)
    r = cost(m)
    assert r.flops == ROTARY * b * s * h * head
    assert r.bytes_read == 4 * (b * s * h * head + 2 * b * s * head // 2)


@pytest.mark.parametrize("rule_name", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention(rule_name):
    b, t, hq, hkv, dk, dv = 2, 3, 4, 2, 8, 4
    ins = {"q": [b, t, hq * dk], "k": [b, t, hkv * dk], "v": [b, t, hkv * dv], "state": [b, hkv, dk, dv],
           "decay": [b, t, hkv * dk] if "gated" in rule_name else None,
           "beta": [b, t, hkv] if "delta" in rule_name else None}
    m = single("LinearAttention", ins, ("y", "present"), opset=_since("LinearAttention"),
               q_num_heads=hq, kv_num_heads=hkv, update_rule=rule_name)
    r = cost(m)
    assert r.status == "counted"
    # per token, recurrent form:
    update = hkv * dk * dv      # k ⊗ v added into the state S (MACs)
    readout = hq * dk * dv      # q^T·S (MACs)
    scaling = hq * dv           # output scaling multiplies
    gate = hkv * dk + hkv * dk * dv   # exp of the decay (its last dim per token), exp(g)·S
    correction = hkv * dk * dv  # S^T·k (MACs)
    beta = 2 * hkv * dv         # v − S^T·k, β·(…)
    expected = {  # (MACs, FLOPs) per token
        "linear": (update + readout, 2 * (update + readout) + scaling),
        "gated": (update + readout, 2 * (update + readout) + scaling + gate),
        "delta": (update + readout + correction, 2 * (update + readout + correction) + scaling + beta),
        "gated_delta": (update + readout + correction,
                        2 * (update + readout + correction) + scaling + gate + beta),
    }
    assert expected["gated_delta"] == (256, 624)  # dims 2, 3, 4, 2, 8, 4 worked by hand
    macs, flops = expected[rule_name]
    assert r.macs == b * t * macs
    assert r.flops == b * t * flops


@pytest.mark.parametrize("alpha,per_element", [(1.0, SILU + 1), (0.5, SILU + 1 + 1)])
def test_swiglu(alpha, per_element):
    # Swish_alpha(A)·B: SiLU, the alpha multiply unless alpha is 1, and the product with B
    shape = [2, 3, 8]
    r = cost(single("SwiGLU", {"a": shape, "b": shape}, opset=_since("SwiGLU"), alpha=alpha))
    assert r.status == "counted"
    assert r.flops == per_element * 2 * 3 * 8


@pytest.mark.parametrize("act,bias", [("none", False), ("silu", True)])
def test_causal_conv_with_state(act, bias):
    b, c, length, k = 2, 6, 5, 4
    ins = {"x": [b, c, length], "w": [c, 1, k], "bias": [c] if bias else None, "state": [b, c, k - 1]}
    m = single("CausalConvWithState", ins, ("y", "present"), opset=_since("CausalConvWithState"), activation=act)
    r = cost(m)
    assert r.status == "counted" and r.family == "conv"
    macs = b * c * length * k
    assert r.macs == macs
    act_ops = SILU * b * c * length if act != "none" else 0
    assert r.flops == 2 * macs + (b * c * length if bias else 0) + act_ops


def test_attention_float16_counts_flops():
    b, h, s, d = 1, 1, 2, 2
    r = cost(single("Attention", {"q": ([b, h, s, d], F16), "k": ([b, h, s, d], F16), "v": ([b, h, s, d], F16)},
                    opset=_since("Attention")))
    assert r.flops > 0 and r.int_ops == 0
    assert r.bytes_read == 3 * 2 * b * h * s * d
