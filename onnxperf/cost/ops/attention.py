"""Attention and its companions (ai.onnx): Attention (opset 23), RotaryEmbedding (23),
LinearAttention (27), CausalConvWithState (27), SwiGLU (28).

Notation: B batch, Hq query heads, Hkv key/value heads (GQA when Hkv < Hq), Sq query
length, Skv new key/value length, P past length, T = P + Skv total key length, D query/key
head size, Dv value head size. A *score* is one of the B·Hq·Sq·T entries of Q·K^T.

The attention core (:func:`attention_core`, shared with the com.microsoft attention ops):

* MACs = B·Hq·Sq·T·D (Q·K^T) + B·Hq·Sq·T·Dv (P·V); every query head does its own
  products, so GQA changes traffic, not MACs;
* per score: 1 scaling multiply, :data:`SOFTCAP_OPS` with a soft cap, 1 op per mask source
  (an additive mask, a boolean mask's select, the causal mask, a padding or window mask),
  and the softmax's per-element cost (:data:`SOFTMAX_PER_ELEMENT`, from the Softmax rule);
* causal attention is counted over the full Sq×T square: kernels without block sparsity
  compute the masked half and discard it. Flash-style kernels that skip masked blocks do
  about half the work of the Q·K^T and P·V products.
"""

from __future__ import annotations

from onnxperf.cost.ops.elementwise import PER_ELEMENT, SILU_PER_ELEMENT, swish_per_element
from onnxperf.cost.ops.reduce import ROW_WISE
from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, TensorView, arith, rule

#: ops per attention score of the softmax: the Softmax rule's per-element cost
SOFTMAX_PER_ELEMENT = ROW_WISE["Softmax"][0]
#: scaling Q·K^T: 1 multiply per score (the spec scales Q and K by sqrt(scale) instead; kernels
#: scale the scores)
SCALE_OPS = 1
#: softcap·tanh(x / softcap): divide, tanh, multiply
SOFTCAP_OPS = 3
#: ops per rotated element of a rotary embedding: each (x1, x2) pair becomes
#: (cos·x1 − sin·x2, sin·x1 + cos·x2): 4 multiplies and 2 adds per pair
ROTARY_OPS_PER_ELEMENT = 3


def attention_core(b: int, hq: int, sq: int, t: int, d: int, dv: int, *, masks: int = 0,
                   softcap: bool = False) -> tuple[int, int]:
    """(MACs, ops) of scaled dot-product attention over the full Sq×T score square:
    MACs = B·Hq·Sq·T·(D + Dv); ops = 2·MACs + scores·(scale + softcap + masks + softmax)."""
    scores = b * hq * sq * t
    macs = scores * (d + dv)
    per_score = SCALE_OPS + (SOFTCAP_OPS if softcap else 0) + masks + SOFTMAX_PER_ELEMENT
    return macs, 2 * macs + scores * per_score


def _heads(n: NodeView, name: str) -> int:
    h = n.attr(name)
    if not h:
        raise BadNode(f"3-D inputs need the {name} attribute")
    return int(h)


@rule("Attention", family="attention", since=23)
def attention(n: NodeView) -> OpCost:
    """Attention (Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen).
    4-D: Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv]; 3-D: [B, S, H·D] with
    q_num_heads/kv_num_heads. T = P + Skv with P from past_key [B, Hkv, P, D].
    MACs = B·Hq·Sq·T·(D + Dv); FLOPs = 2·MACs + B·Hq·Sq·T·(1 scale + 3 softcap if set +
    1 per mask source among attn_mask, is_causal, nonpad_kv_seqlen and a sliding window +
    5 softmax). Causal: the full square is counted (see the module docstring).
    Bytes: every input and output once (the KV concat reads past_key/past_value and K/V and
    writes present_key/present_value), plus one re-read of present_key/present_value by the
    attention core when a past is given. With nonpad_kv_seqlen the padded keys are still
    counted (exact=False)."""
    q, k, v = n.inp(0), n.inp(1), n.inp(2)
    if q.rank == 4:
        b, hq, sq, d = q.shape
        skv, dv = k.shape[2], v.shape[3]
    else:
        hq, hkv = _heads(n, "q_num_heads"), _heads(n, "kv_num_heads")
        b, sq, d = q.shape[0], q.shape[1], q.shape[2] // hq
        skv, dv = k.shape[1], v.shape[2] // hkv
    past = n.inp(4).shape[2] if n.has_input(4) else 0
    t = past + skv
    masks = sum((n.has_input(3), bool(n.attr("is_causal", 0)), n.has_input(6),
                 n.attr("left_window_size", -1) >= 0 or n.attr("right_window_size", -1) >= 0))
    softcap = bool(n.attr("softcap", 0.0))
    macs, ops = attention_core(b, hq, sq, t, d, dv, masks=masks, softcap=softcap)
    bytes_read = None
    if past and n.has_output(1) and n.has_output(2):
        bytes_read = sum(x.nbytes for x in n.present_inputs) + n.out(1).nbytes + n.out(2).nbytes
    notes = []
    if n.attr("is_causal", 0):
        notes.append("causal: the full Sq×T square is counted, masked half included")
    exact = not n.has_input(6)
    if not exact:
        notes.append("nonpad_kv_seqlen: padded keys are counted as if attended")
    return arith(ops, q.elem_type, macs=macs, bytes_read=bytes_read, exact=exact, note="; ".join(notes))


def rotary_cost(x: TensorView, cos: TensorView, sin: TensorView, head_size: int, rotary_dim: int,
                cache_rows: int | None, extra_read: int = 0) -> OpCost:
    """RoPE on X: ops = 3 per rotated element = 3·(X / head_size)·rotary_dim (elements past
    rotary_dim are copied). Bytes read: X, ``extra_read`` (position ids) and, when the
    caches are indexed by position, only the ``cache_rows`` gathered rows of each cache (at
    most the whole cache); with ``cache_rows`` None, the whole caches."""
    if head_size <= 0 or x.numel % head_size:
        raise BadNode(f"head size {head_size} does not divide the input {x.shape}")
    rot = rotary_dim or head_size
    ops = ROTARY_OPS_PER_ELEMENT * (x.numel // head_size) * rot
    read = x.nbytes + extra_read
    for c in (cos, sin):
        if cache_rows is None or c.rank == 0 or c.shape[0] == 0:
            read += c.nbytes
        else:
            read += min(c.nbytes, cache_rows * (c.nbytes // c.shape[0]))
    return arith(ops, x.elem_type, bytes_read=read)


@rule("RotaryEmbedding", family="attention", since=23)
def rotary_embedding(n: NodeView) -> OpCost:
    """RotaryEmbedding (X, cos_cache, sin_cache, position_ids): X is [B, H, S, head_size] or
    [B, S, H·head_size] with num_heads; rotary_dim = rotary_embedding_dim or head_size.
    FLOPs = 3·B·H·S·rotary_dim (interleaving changes nothing). Bytes read: X, position_ids
    and, with position_ids, only the B·S gathered rows of each cache; without, the caches."""
    x = n.inp(0)
    head = x.shape[3] if x.rank == 4 else x.shape[2] // _heads(n, "num_heads")
    pos = n.inp(3) if n.has_input(3) else None
    return rotary_cost(x, n.inp(1), n.inp(2), head, int(n.attr("rotary_embedding_dim", 0) or 0),
                       None if pos is None else pos.numel, 0 if pos is None else pos.nbytes)


#: LinearAttention update rules: (decayed state, delta correction)
_LINEAR_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True),
                 "gated_delta": (True, True)}


@rule("LinearAttention", family="attention", since=27)
def linear_attention(n: NodeView) -> OpCost:
    """LinearAttention (query [B, T, Hq·dk], key [B, T, Hkv·dk], value [B, T, Hkv·dv],
    past_state, decay, beta), counted in its recurrent form, per token:

    * state update k ⊗ v added into S: Hkv·dk·dv MACs; output q^T·S: Hq·dk·dv MACs, and
      Hq·dv scaling multiplies;
    * gated rules: exp of the decay (decay's last dim per token) and exp(g)·S (Hkv·dk·dv
      multiplies);
    * delta rules: S^T·k (Hkv·dk·dv MACs), v − S^T·k and β·(…) (2·Hkv·dv ops).

    MACs and ops are multiplied by B·T. Chunk-parallel kernels reorganise this work.
    """
    q, k, v = n.inp(0), n.inp(1), n.inp(2)
    hq, hkv = _heads(n, "q_num_heads"), _heads(n, "kv_num_heads")
    b, t = q.shape[0], q.shape[1]
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    rule_name = n.attr("update_rule", "gated_delta")
    if rule_name not in _LINEAR_RULES:
        raise BadNode(f"unknown update_rule {rule_name!r}")
    gated, delta = _LINEAR_RULES[rule_name]
    state = hkv * dk * dv
    macs = state + hq * dk * dv + (state if delta else 0)
    ops = 2 * macs + hq * dv
    if gated:
        decay_per_token = n.inp(4).shape[2] if n.has_input(4) else hkv
        ops += decay_per_token * PER_ELEMENT["Exp"] + state
    if delta:
        ops += 2 * hkv * dv
    return arith(b * t * ops, q.elem_type, macs=b * t * macs)


@rule("SwiGLU", family="activation", since=28)
def swiglu(n: NodeView) -> OpCost:
    """SwiGLU: Y = Swish_alpha(A)·B: Swish (5 ops per element with alpha = 1, the default,
    6 otherwise: the elementwise Swish rule's) and a multiply: 6 (or 7) ops per output element."""
    y = n.out(0)
    k = swish_per_element(n.attr("alpha", 1.0)) + PER_ELEMENT["Mul"]
    return arith(k * y.numel, n.inp(0).elem_type)


@rule("CausalConvWithState", family="conv", since=27)
def causal_conv_with_state(n: NodeView) -> OpCost:
    """CausalConvWithState (input [B, C, L], weight [C, 1, k], bias, past_state): a depthwise
    causal conv1d. MACs = B·C·L·k; FLOPs = 2·MACs + B·C·L (bias) + B·C·L·5 (activation
    'silu'/'swish': x·sigmoid(x)). Copying the carry state is traffic only."""
    x, w = n.inp(0), n.inp(1)
    out = x.numel
    macs = out * w.shape[-1]
    act = str(n.attr("activation", "none")).lower()
    if act not in ("none", "silu", "swish"):
        raise BadNode(f"unknown activation {act!r}")
    ops = 2 * macs + (out if n.has_input(2) else 0) + (SILU_PER_ELEMENT * out if act != "none" else 0)
    return arith(ops, x.elem_type, macs=macs)
