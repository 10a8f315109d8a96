"""onnxruntime's attention contrib ops (domain com.microsoft): Attention (packed QKV
projection + attention), QAttention, MultiHeadAttention, GroupQueryAttention, RotaryEmbedding.

The attention core is :func:`.attention.attention_core` (the ai.onnx Attention rule's): MACs
= B·Hq·S·T·(D + Dv), and per score 1 scaling multiply, 1 op per mask source, 3 for a soft
cap and the softmax's 5, over the full S×T square (causal masking is not subtracted).
Notation as there: B batch, S new tokens, P past length, T = P + kv length, H heads (Hq,
Hkv with GQA), D and Dv head sizes.

KV cache traffic: every input and output is counted once (the concat of past and new keys
and values reads both and writes present); when a past is given, the core's read of
present_key/present_value (or present) is added to bytes_read. Where past and present share
one buffer of the maximum length (past_present_share_buffer), T is that length unless the
past length is a constant: an upper bound, exact=False.
"""

from __future__ import annotations

from onnxperf.cost.ops.attention import ROTARY_OPS_PER_ELEMENT, attention_core, rotary_cost
from onnxperf.cost.ops.ms_contrib_quant import dequant_ops, quant_ops
from onnxperf.cost.ops.norm import NORM
from onnxperf.cost.ops.registry import BadNode, MS, NodeView, OpCost, register, scalar


def _num_heads(n: NodeView, name: str = "num_heads") -> int:
    h = int(n.attr(name, 0) or 0)
    if h <= 0:
        raise BadNode(f"{n.op_type} needs a positive {name} attribute")
    return h


def _total_length(n: NodeView, past_len: int, s_new: int, present_len: int | None,
                  past_seq_idx: int) -> tuple[int, bool, str]:
    """(T, exact, note) from the past length, the new length and the present length."""
    if past_len and present_len == past_len and s_new:
        given = scalar(n.const(past_seq_idx)) if n.has_input(past_seq_idx) else None
        if given is not None:
            return given + s_new, True, ""
        return past_len, False, (f"past and present share one buffer of {past_len} positions: T counted as "
                                 f"{past_len} (an upper bound)")
    return past_len + s_new, True, ""


def _present_reread(n: NodeView, has_past: bool, outs: tuple[int, ...]) -> int | None:
    if not has_past or not all(n.has_output(i) for i in outs):
        return None
    return sum(t.nbytes for t in n.present_inputs) + sum(n.out(i).nbytes for i in outs)


def _cost(macs: int, flops: int, *, int_ops: int = 0, bytes_read: int | None = None, exact: bool = True,
          notes: list[str] | None = None) -> OpCost:
    return OpCost(macs=macs, flops=flops, int_ops=int_ops, bytes_read=bytes_read, exact=exact,
                  note="; ".join(x for x in (notes or []) if x))


def attention_ms(n: NodeView) -> OpCost:
    """Attention (input [B, S, Din], weights [Din, Hq+Hk+Hv], bias, mask_index, past
    [2, B, H, P, D], attention_bias, past_sequence_length): the packed QKV projection,
    MACs B·S·Din·(Hq+Hk+Hv) (+ B·S·(Hq+Hk+Hv) bias adds), then the attention core with
    D = Hq/H, Dv = Hv/H (``qkv_hidden_sizes``, default three equal parts), T = P + S; mask
    sources: mask_index, attention_bias, ``unidirectional``. ``do_rotary``: 3 ops per
    rotated element of Q and K (rotary_embedding_dim, default D)."""
    x, w = n.inp(0), n.inp(1)
    b, s, din = x.shape
    total = w.shape[1]
    h = _num_heads(n)
    sizes = list(n.attr("qkv_hidden_sizes") or [total // 3] * 3)
    if len(sizes) != 3 or sum(sizes) != total:
        raise BadNode(f"qkv_hidden_sizes {sizes} do not add up to the weights' {total} columns")
    d, dv = sizes[0] // h, sizes[2] // h
    proj = b * s * din * total
    flops = 2 * proj + (b * s * total if n.has_input(2) else 0)
    past_len = n.inp(4).shape[3] if n.has_input(4) else 0
    present_len = n.out(1).shape[3] if n.has_output(1) else None
    t, exact, note = _total_length(n, past_len, s, present_len, 6)
    masks = sum((n.has_input(3), n.has_input(5), bool(n.attr("unidirectional", 0))))
    core_macs, core_ops = attention_core(b, h, s, t, d, dv, masks=masks)
    if n.attr("do_rotary", 0):
        flops += ROTARY_OPS_PER_ELEMENT * 2 * b * s * h * int(n.attr("rotary_embedding_dim", 0) or d)
    return _cost(proj + core_macs, flops + core_ops, bytes_read=_present_reread(n, bool(past_len), (1,)),
                 exact=exact, notes=[note])


def qattention(n: NodeView) -> OpCost:
    """QAttention (input uint8 [B, S, Din], weight int8 [Din, 3·hidden], bias, input_scale,
    weight_scale, mask_index, input_zero_point, weight_zero_point, past): the integer QKV
    projection (int ops = 2·MACs + zero-point subtracts of input/weight elements when given),
    dequantized (1 FLOP per projected element) plus bias (1 FLOP), then the float attention
    core (D = Dv = hidden/H, T = P + S; masks: mask_index, ``unidirectional``)."""
    x, w = n.inp(0), n.inp(1)
    b, s, din = x.shape
    total = w.shape[1]
    h = _num_heads(n)
    d = total // 3 // h
    proj = b * s * din * total
    int_ops = 2 * proj + (x.numel if n.has_input(6) else 0) + (w.numel if n.has_input(7) else 0)
    flops = 2 * b * s * total
    past_len = n.inp(8).shape[3] if n.has_input(8) else 0
    t = past_len + s
    masks = sum((n.has_input(5), bool(n.attr("unidirectional", 0))))
    core_macs, core_ops = attention_core(b, h, s, t, d, d, masks=masks)
    return _cost(proj + core_macs, flops + core_ops, int_ops=int_ops,
                 bytes_read=_present_reread(n, bool(past_len), (1,)))


def multi_head_attention(n: NodeView) -> OpCost:
    """MultiHeadAttention (query, key, value, bias, key_padding_mask, attention_bias,
    past_key, past_value, past_sequence_length, cache_indirection). Shapes: query
    [B, S, H·D] or packed QKV [B, S, H, 3, D]; key [B, Skv, H·D], packed KV
    [B, Skv, H, 2, D] or precomputed [B, H, Skv, D] (then value [B, H, Skv, Dv]);
    T = P + Skv. No MACs of input projection (done upstream); bias adds on Q, and on K and V
    unless precomputed; mask sources: key_padding_mask, attention_bias, ``unidirectional``."""
    q = n.inp(0)
    h = _num_heads(n)
    kv_projected = True
    if q.rank == 5:
        b, s, _, _, d = q.shape
        skv, dv = s, d
    else:
        b, s = q.shape[0], q.shape[1]
        d = q.shape[2] // h
        k = n.inp(1)
        if k.rank == 5:
            skv, dv = k.shape[1], d
        elif k.rank == 4:
            skv, dv, kv_projected = k.shape[2], n.inp(2).shape[3], False
        else:
            skv, dv = k.shape[1], n.inp(2).shape[2] // h
    past_len = n.inp(6).shape[2] if n.has_input(6) else 0
    present_len = n.out(1).shape[2] if n.has_output(1) else None
    t, exact, note = _total_length(n, past_len, skv, present_len, 8)
    bias = 0
    if n.has_input(3):
        bias = b * s * h * d + (b * skv * h * (d + dv) if kv_projected else 0)
    masks = sum((n.has_input(4), n.has_input(5), bool(n.attr("unidirectional", 0))))
    macs, ops = attention_core(b, h, s, t, d, dv, masks=masks)
    return _cost(macs, ops + bias, bytes_read=_present_reread(n, bool(past_len), (1, 2)), exact=exact, notes=[note])


def group_query_attention(n: NodeView) -> OpCost:
    """GroupQueryAttention (query [B, S, Hq·D] or packed [B, S, (Hq+2·Hkv)·D], key, value,
    past_key/past_value [B, Hkv, P, D], seqlens_k, total_sequence_length, cos_cache,
    sin_cache, position_ids, attention_bias, head_sink, k_scale, v_scale, q_norm_weight,
    k_norm_weight). T: the constant total_sequence_length when known, else present_key's
    length (past + S, or the shared buffer's length: an upper bound). The attention core
    with Hq query heads; mask sources: ``causal`` (default 1), ``local_window_size`` ≥ 0,
    attention_bias; ``softcap``. Extras: ``do_rotary``: 3 ops per rotated element of Q and K
    (rotary dim = 2·cos_cache.shape[1]); q/k norm: the RMSNormalization cost per head;
    quantized KV cache (k_scale/v_scale): new K/V quantized, the cache dequantized on read.
    Not counted: head_sink / smooth_softmax (one add per softmax row)."""
    q = n.inp(0)
    hq, hkv = _num_heads(n), _num_heads(n, "kv_num_heads")
    b, s = q.shape[0], q.shape[1]
    d = q.shape[2] // (hq + 2 * hkv) if not n.has_input(1) else q.shape[2] // hq
    past_len = n.inp(3).shape[2] if n.has_input(3) else 0
    present_len = n.out(1).shape[2] if n.has_output(1) else None
    given = scalar(n.const(6)) if n.has_input(6) else None
    notes: list[str] = []
    if given is not None:
        t, exact = given, True
    elif present_len is not None:
        t = present_len
        exact = not (past_len and present_len == past_len)
        if not exact:
            notes.append(f"past and present share one buffer of {t} positions: T counted as {t} (an upper bound)")
    else:
        t, exact = past_len + s, True
    masks = sum((bool(n.attr("causal", 1)), int(n.attr("local_window_size", -1)) >= 0, n.has_input(10)))
    macs, ops = attention_core(b, hq, s, t, d, d, masks=masks, softcap=bool(n.attr("softcap", 0.0)))
    q_elems, kv_new = b * s * hq * d, b * s * hkv * d
    if n.attr("do_rotary", 0) and n.has_input(7):
        rot = 2 * n.inp(7).shape[1]
        ops += ROTARY_OPS_PER_ELEMENT * b * s * (hq + hkv) * rot
    if n.has_input(14) and n.has_input(15):
        e, r = NORM["RMSNormalization"]
        ops += e * (q_elems + kv_new) + r * b * s * (hq + hkv)
    if n.has_input(12) or n.has_input(13):
        ops += 2 * kv_new * quant_ops(False) + 2 * b * hkv * t * d * dequant_ops(False)
    return _cost(macs, ops, bytes_read=_present_reread(n, bool(past_len), (1, 2)), exact=exact, notes=notes)


def rotary_embedding_ms(n: NodeView) -> OpCost:
    """RotaryEmbedding (input, position_ids, cos_cache, sin_cache): input [B, S, H·head]
    (num_heads, else head = 2·cos_cache.shape[1]) or [B, H, S, head]; rotary dim =
    ``rotary_embedding_dim`` or head. FLOPs = 3 per rotated element; bytes read: input,
    position_ids and the cache rows used (B·S for 2-D position_ids, S for a start offset)."""
    x, pos, cos, sin = n.inp(0), n.inp(1), n.inp(2), n.inp(3)
    if x.rank == 4:
        head, s = x.shape[3], x.shape[2]
    else:
        heads = int(n.attr("num_heads", 0) or 0)
        head = x.shape[2] // heads if heads else 2 * cos.shape[1]
        s = x.shape[1]
    rows = pos.numel if pos.rank == 2 else s
    return rotary_cost(x, cos, sin, head, int(n.attr("rotary_embedding_dim", 0) or 0), rows, pos.nbytes)


register("Attention", attention_ms, family="attention", domain=MS)
register("QAttention", qattention, family="attention", domain=MS)
register("MultiHeadAttention", multi_head_attention, family="attention", domain=MS)
register("GroupQueryAttention", group_query_attention, family="attention", domain=MS)
register("RotaryEmbedding", rotary_embedding_ms, family="attention", domain=MS)
