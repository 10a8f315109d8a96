"""Shape functions of the ``com.microsoft`` ops that have a cost rule (onnxruntime's contrib ops,
as its graph optimizers and quantization tools write them). ONNX has no schema for them, so its
inference stops at the first one and everything downstream would stay unknown.

Each follows the op's definition in onnxruntime (``contrib_ops/*_defs.cc``): input and output
layouts are in each function's docstring. See :mod:`onnxperf.shapes.rules` for the calling
convention. A test checks that every com.microsoft cost rule has a function here.
"""

from __future__ import annotations

from onnxperf.shapes.rules import B, F, I32, MS, U8, Dim, Out, Rule, Shape, ShapeCtx, broadcast, conv_spatial, dim_add, dim_div, dim_mul, matmul_shape


def _same(c: ShapeCtx) -> list[Out]:
    """Every output like input 0 (elementwise ops, activations, fused bias ops)."""
    return [(c.type(0), c.shape(0))] + [None] * (c.n_outputs - 1)


def _scalar(c: ShapeCtx, i: int) -> int | None:
    v = c.value(i)
    if v is None or v.size != 1:
        return None
    return int(v.reshape(-1)[0])


# ------------------------------------------------------------------ attention


def _attention(c: ShapeCtx) -> list[Out]:
    """Attention: input [B, S, Din], weights [Din, Hq+Hk+Hv], ..., past [2, B, H, P, D] ->
    output [B, S, Hv], present [2, B, H, P+S, D] (``qkv_hidden_sizes``, default three equal parts;
    with ``past_present_share_buffer`` present has past's length)."""
    x, w = c.shape(0), c.shape(1)
    if x is None or len(x) != 3:
        return [None] * c.n_outputs
    sizes = c.attr("qkv_hidden_sizes")
    hv: Dim = int(sizes[2]) if sizes else (dim_div(w[1], 3) if w is not None and len(w) == 2 else None)
    out: list[Out] = [(c.type(0), (x[0], x[1], hv))]
    if c.n_outputs > 1:
        past = c.shape(4) if c.has(4) else None
        if past is not None and len(past) == 5:
            length = past[3] if c.attr("past_present_share_buffer", 0) else dim_add(past[3], x[1])
            out.append((c.type(0), (2, x[0], past[2], length, past[4])))
        else:
            h = int(c.attr("num_heads", 0)) or None
            d = dim_div(int(sizes[0]) if sizes else dim_div(w[1], 3) if w is not None else None, h) if h else None
            out.append((c.type(0), (2, x[0], h, x[1], d)) if h else None)
    return out + [None] * (c.n_outputs - len(out))


def _qattention(c: ShapeCtx) -> list[Out]:
    """QAttention: input [B, S, Din] (u)int8, weight [Din, 3H] (u)int8, bias [3H] float, input_scale,
    weight_scale, mask_index, input_zp, weight_zp, past [2, B, N, P, D] -> output [B, S, H] float
    (the bias' type), present [2, B, N, P+S, D]."""
    x, w = c.shape(0), c.shape(1)
    ft = c.type(2) or c.type(3) or F
    if x is None or len(x) != 3:
        return [None] * c.n_outputs
    h = dim_div(w[1], 3) if w is not None and len(w) == 2 else None
    out: list[Out] = [(ft, (x[0], x[1], h))]
    if c.n_outputs > 1:
        past = c.shape(8) if c.has(8) else None
        out.append((ft, (2, x[0], past[2], dim_add(past[3], x[1]), past[4]))
                   if past is not None and len(past) == 5 else None)
    return out


def _mha(c: ShapeCtx) -> list[Out]:
    """MultiHeadAttention: query [B, S, D] (or packed QKV [B, S, N, 3, H]), key [B, L, D] or
    [B, N, L, H] (or packed KV [B, L, N, 2, H]), value [B, L, Dv] or [B, N, L, Hv], ..., past_key /
    past_value [B, N, P, H] -> output [B, S, Dv], present_key [B, N, P+L, H], present_value."""
    q, k, v = c.shape(0), c.shape(1) if c.has(1) else None, c.shape(2) if c.has(2) else None
    n = int(c.attr("num_heads", 0)) or None
    if q is None:
        return [None] * c.n_outputs
    b, s = q[0], q[1]
    if len(q) == 5:  # packed QKV [B, S, N, 3, H]
        dv, length, hk, hv = dim_mul(q[2], q[4]), s, q[4], q[4]
    elif k is not None and len(k) == 5:  # packed KV [B, L, N, 2, H]
        dv, length, hk, hv = dim_mul(k[2], k[4]), k[1], k[4], k[4]
    elif v is not None and len(v) == 3:
        dv, length = v[2], v[1]
        hk = dim_div(k[2], n) if k is not None and n else None
        hv = dim_div(v[2], n) if n else None
    elif v is not None and len(v) == 4:  # already split into heads: [B, N, L, H] (past folded in)
        dv, length, hk, hv = dim_mul(v[1], v[3]), v[2], k[3] if k is not None else None, v[3]
    else:
        return [None] * c.n_outputs
    out: list[Out] = [(c.type(0), (b, s, dv))]
    past = c.shape(6) if c.has(6) else None
    total = dim_add(past[2], length) if past is not None and len(past) == 4 else length
    if v is not None and len(v) == 4:
        total = length
    for j, hd in ((1, hk), (2, hv)):
        if j < c.n_outputs:
            out.append((c.type(0), (b, n, total, hd)))
    return out + [None] * (c.n_outputs - len(out))


def _gqa(c: ShapeCtx) -> list[Out]:
    """GroupQueryAttention: query [B, S, Hq·D] (or packed [B, S, (Hq+2·Hkv)·D] without key/value),
    past_key / past_value [B, Hkv, P, D], ..., total_sequence_length (scalar) -> output
    [B, S, Hq·D], present_key / present_value [B, Hkv, T, D] with T = max(P, total_sequence_length)
    (onnxruntime's rule: a shared buffer keeps its length), or P + S when the total is not a
    constant."""
    q = c.shape(0)
    hq, hkv = int(c.attr("num_heads", 0)), int(c.attr("kv_num_heads", 0))
    if q is None or len(q) != 3 or not hq:
        return [None] * c.n_outputs
    b, s = q[0], q[1]
    d = dim_div(q[2], hq) if c.has(1) else dim_div(q[2], hq + 2 * hkv)
    out: list[Out] = [(c.type(0), (b, s, dim_mul(d, hq)))]
    past = c.shape(3) if c.has(3) else None
    total = _scalar(c, 6)
    p = past[2] if past is not None and len(past) == 4 else 0 if not c.has(3) else None
    if total is not None:
        t: Dim = max(total, p) if isinstance(p, int) else None if p is None else total
    else:
        t = dim_add(p, s)
    for j in (1, 2):
        if j < c.n_outputs:
            out.append((c.type(0), (b, hkv, t, d)))
    return out + [None] * (c.n_outputs - len(out))


# ------------------------------------------------------------------ normalization


def _moments(x: Shape | None, axis: int) -> Shape | None:
    """The mean / inverse-std output of a normalization over the axes from ``axis`` on."""
    if x is None:
        return None
    a = axis + len(x) if axis < 0 else axis
    return tuple(x[:a]) + (1,) * (len(x) - a)


def _layer_norm(c: ShapeCtx) -> list[Out]:
    """LayerNormalization / SimplifiedLayerNormalization: Y like X; mean and inv_std_var are X's
    shape with the normalized axes (from ``axis``, default -1) set to 1, float."""
    x = c.shape(0)
    m = _moments(x, int(c.attr("axis", -1)))
    return [(c.type(0), x)] + [(F, m)] * (c.n_outputs - 1)


def _skip_layer_norm(c: ShapeCtx) -> list[Out]:
    """SkipLayerNormalization (and the Simplified form): output like input [B, S, H] (or [T, H]);
    mean, inv_std_var [B, S, 1] float; input_skip_bias_sum like input."""
    x = c.shape(0)
    out: list[Out] = [(c.type(0), x)]
    for j in range(1, c.n_outputs):
        out.append((F, _moments(x, -1)) if j < 3 else (c.type(0), x))
    return out


def _embed_layer_norm(c: ShapeCtx) -> list[Out]:
    """EmbedLayerNormalization: input_ids [B, S], segment_ids, word_embedding [V, H], ... ->
    output [B, S, H] (the embedding's type), mask_index [B] int32, embedding_sum [B, S, H]."""
    ids, emb = c.shape(0), c.shape(2)
    if ids is None or len(ids) != 2:
        return [None] * c.n_outputs
    h = emb[1] if emb is not None and len(emb) == 2 else None
    et = c.type(2) or F
    out: list[Out] = [(et, (ids[0], ids[1], h)), (I32, (ids[0],)), (et, (ids[0], ids[1], h))]
    return out[:c.n_outputs]


def _qembed_layer_norm(c: ShapeCtx) -> list[Out]:
    """QEmbedLayerNormalization: as EmbedLayerNormalization, the output in the word scale's type
    (input 8): output [B, S, H] float, mask_index [B] int32."""
    ids, emb = c.shape(0), c.shape(2)
    if ids is None or len(ids) != 2:
        return [None] * c.n_outputs
    h = emb[1] if emb is not None and len(emb) == 2 else None
    out: list[Out] = [(c.type(8) or F, (ids[0], ids[1], h)), (I32, (ids[0],))]
    return out[:c.n_outputs]


# ------------------------------------------------------------------ convolution, matmul, gemm


def _nhwc_conv(c: ShapeCtx) -> list[Out]:
    """NhwcConv / NhwcFusedConv: X [N, H, W, C], W [M, C/group, kH, kW] -> [N, H', W', M]."""
    x, w = c.shape(0), c.shape(1)
    if x is None or w is None or len(x) < 3:
        return [None]
    kernel = list(c.attr("kernel_shape") or w[2:])
    spatial = conv_spatial(x[1:-1], kernel, c.attrs)
    return [(c.type(0), (x[0], *spatial, w[0]))]


def _fused_conv(c: ShapeCtx) -> list[Out]:
    """FusedConv: Conv (NCHW) followed by an activation: X [N, C, *S], W [M, C/g, *k] -> [N, M, *S']."""
    x, w = c.shape(0), c.shape(1)
    if x is None or w is None or len(x) < 3:
        return [None]
    kernel = list(c.attr("kernel_shape") or w[2:])
    return [(c.type(0), (x[0], w[0], *conv_spatial(x[2:], kernel, c.attrs)))]


def _fused_matmul(c: ShapeCtx) -> list[Out]:
    """FusedMatMul / TransposeMatMul: alpha·op(A) @ op(B), op transposing the last two dims when
    ``transA`` / ``transB`` (``transBatchA/B`` move the batch dims; shapes of those are left
    unknown)."""
    a, b = c.shape(0), c.shape(1)
    if a is None or b is None or c.attr("transBatchA", 0) or c.attr("transBatchB", 0):
        return [None]
    if c.attr("transA", 0) and len(a) >= 2:
        a = tuple(a[:-2]) + (a[-1], a[-2])
    if c.attr("transB", 0) and len(b) >= 2:
        b = tuple(b[:-2]) + (b[-1], b[-2])
    return [(c.type(0), matmul_shape(a, b))]


def _gemm_shape(a: Shape | None, b: Shape | None, ta: int, tb: int) -> Shape | None:
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    return (a[1] if ta else a[0], b[0] if tb else b[1])


def _fused_gemm(c: ShapeCtx) -> list[Out]:
    """FusedGemm: Gemm [M, K] x [K, N] (``transA``/``transB``) then an activation -> [M, N]."""
    return [(c.type(0), _gemm_shape(c.shape(0), c.shape(1), c.attr("transA", 0), c.attr("transB", 0)))]


def _qgemm(c: ShapeCtx) -> list[Out]:
    """QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp -> [M, N]: float without y_scale,
    else y_zero_point's type."""
    shape = _gemm_shape(c.shape(0), c.shape(3), c.attr("transA", 0), c.attr("transB", 0))
    t = (c.type(8) or c.type(0)) if c.has(7) else (c.type(1) or F)
    return [(t, shape)]


def _matmul_typed(a: int, b: int, elem: int | None = None, type_from: int | None = None) -> Rule:
    """matmul of inputs ``a`` and ``b``; output type ``elem`` or that of input ``type_from``."""
    def run(c: ShapeCtx) -> list[Out]:
        t = elem if elem is not None else (c.type(type_from) if type_from is not None else c.type(0))
        return [(t or F, matmul_shape(c.shape(a), c.shape(b)))]
    return run


def _matmul_nbits(c: ShapeCtx) -> list[Out]:
    """MatMulNBits: A [..., K] @ packed B (N = attribute ``N``) -> [..., N], A's type."""
    a = c.shape(0)
    n = c.attr("N")
    if a is None or n is None:
        return [None]
    return [(c.type(0), tuple(a[:-1]) + (int(n),))]


def _gemm_fast_gelu(c: ShapeCtx) -> list[Out]:
    """GemmFastGelu: X [..., K] @ W [K, N] (+ bias) then FastGelu -> [..., N]."""
    return [(c.type(0), matmul_shape(c.shape(0), c.shape(1)))]


def _gather_block_quantized(c: ShapeCtx) -> list[Out]:
    """GatherBlockQuantized: data (uint8 packing 8/bits values per byte, or int4/uint4), indices,
    scales -> indices' shape in place of ``gather_axis`` of the unpacked data; the scales' type."""
    data, idx = c.shape(0), c.shape(1)
    if data is None or idx is None:
        return [None]
    bits = int(c.attr("bits", 4))
    unpacked = list(data)
    if c.type(0) == U8 and bits < 8 and unpacked:
        unpacked[-1] = dim_mul(unpacked[-1], 8 // bits)
    axis = int(c.attr("gather_axis", 0))
    axis = axis + len(unpacked) if axis < 0 else axis
    return [(c.type(2) or F, tuple(unpacked[:axis]) + tuple(idx) + tuple(unpacked[axis + 1:]))]


# ------------------------------------------------------------------ quantized (QOperator) ops


def _qlinear_binary(c: ShapeCtx) -> list[Out]:
    """QLinearAdd / QLinearMul: A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp -> broadcast(A, B),
    A's (u)int8 type."""
    return [(c.type(0), broadcast(c.shape(0), c.shape(3)))]


def _qlinear_concat(c: ShapeCtx) -> list[Out]:
    """QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input -> the X concatenated on
    ``axis``, Y_zp's type."""
    xs = [c.shape(i) for i in range(2, len(c.shapes), 3)]
    if not xs or any(x is None for x in xs) or len({len(x) for x in xs}) != 1:
        return [None]
    rank = len(xs[0])
    axis = int(c.attr("axis", 0))
    axis = axis + rank if axis < 0 else axis
    out: list[Dim] = []
    for i in range(rank):
        if i == axis:
            total: Dim = 0
            for x in xs:
                total = dim_add(total, x[i])
            out.append(total)
        else:
            out.append(broadcast(*[(x[i],) for x in xs])[0])  # type: ignore[index]
    return [(c.type(1) or c.type(2), tuple(out))]


def _pool_nchw(x: Shape | None, c: ShapeCtx, channels_last: bool, global_pool: bool) -> Shape | None:
    if x is None or len(x) < 3:
        return None
    spatial = x[1:-1] if channels_last else x[2:]
    ch = x[-1] if channels_last else x[1]
    if global_pool:
        new = [1] * len(spatial)
    else:
        new = conv_spatial(spatial, list(c.attr("kernel_shape") or []), c.attrs)
    return (x[0], *new, ch) if channels_last else (x[0], ch, *new)


def _qlinear_pool(global_pool: bool) -> Rule:
    """QLinearAveragePool / QLinearGlobalAveragePool: X, x_scale, x_zp, y_scale, y_zp -> pooled X
    (NCHW, or NHWC with ``channels_last``)."""
    def run(c: ShapeCtx) -> list[Out]:
        return [(c.type(0), _pool_nchw(c.shape(0), c, bool(c.attr("channels_last", 0)), global_pool))]
    return run


def _nhwc_max_pool(c: ShapeCtx) -> list[Out]:
    """NhwcMaxPool: [N, H, W, C] -> [N, H', W', C]."""
    return [(c.type(0), _pool_nchw(c.shape(0), c, True, False))]


def _qlinear_conv(c: ShapeCtx) -> list[Out]:
    """QLinearConv (com.microsoft): x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B -> conv of
    x by w [M, C/g, *k], NCHW or NHWC (``channels_last``); y_zero_point's type."""
    x, w = c.shape(0), c.shape(3)
    if x is None or w is None or len(x) < 3:
        return [None]
    kernel = list(c.attr("kernel_shape") or w[2:])
    t = c.type(7) or c.type(0)
    if c.attr("channels_last", 0):
        return [(t, (x[0], *conv_spatial(x[1:-1], kernel, c.attrs), w[0]))]
    return [(t, (x[0], w[0], *conv_spatial(x[2:], kernel, c.attrs)))]


def _quantize(c: ShapeCtx) -> list[Out]:
    """QuantizeLinear (com.microsoft): like x, in y_zero_point's type (uint8 without one)."""
    return [(c.type(2) if c.has(2) and c.type(2) else U8, c.shape(0))]


def _dequantize(c: ShapeCtx) -> list[Out]:
    """DequantizeLinear (com.microsoft): like x, in x_scale's type."""
    return [(c.type(1) or F, c.shape(0))]


def _bias_dropout(c: ShapeCtx) -> list[Out]:
    """BiasDropout: output like data, mask bool like data."""
    return [(c.type(0), c.shape(0)), (B, c.shape(0))][:c.n_outputs]


def _bias_split_gelu(c: ShapeCtx) -> list[Out]:
    """BiasSplitGelu: X [N, HW, D] + bias [D], split in halves, one gated by the other's Gelu ->
    [N, HW, D/2]."""
    x = c.shape(0)
    if x is None or not x:
        return [None]
    return [(c.type(0), tuple(x[:-1]) + (dim_div(x[-1], 2),))]


def _skip_group_norm(c: ShapeCtx) -> list[Out]:
    """SkipGroupNorm: Y like X (NHWC), S (X + skip + bias) like X."""
    return [(c.type(0), c.shape(0))] * c.n_outputs


RULES: dict[tuple[str, str], Rule] = {
    (MS, "Attention"): _attention,
    (MS, "QAttention"): _qattention,
    (MS, "MultiHeadAttention"): _mha,
    (MS, "GroupQueryAttention"): _gqa,
    (MS, "RotaryEmbedding"): _same,
    (MS, "LayerNormalization"): _layer_norm,
    (MS, "SimplifiedLayerNormalization"): _layer_norm,
    ("", "SimplifiedLayerNormalization"): _layer_norm,
    (MS, "SkipLayerNormalization"): _skip_layer_norm,
    (MS, "SkipSimplifiedLayerNormalization"): _skip_layer_norm,
    (MS, "EmbedLayerNormalization"): _embed_layer_norm,
    (MS, "QEmbedLayerNormalization"): _qembed_layer_norm,
    (MS, "GroupNorm"): _same,
    (MS, "SkipGroupNorm"): _skip_group_norm,
    (MS, "FusedConv"): _fused_conv,
    (MS, "NhwcConv"): _nhwc_conv,
    (MS, "NhwcFusedConv"): _nhwc_conv,
    (MS, "FusedGemm"): _fused_gemm,
    (MS, "FusedMatMul"): _fused_matmul,
    (MS, "TransposeMatMul"): _fused_matmul,
    (MS, "FusedMatMulActivation"): _fused_matmul,
    (MS, "GemmFastGelu"): _gemm_fast_gelu,
    (MS, "MatMulInteger16"): _matmul_typed(0, 1, elem=I32),
    (MS, "MatMulIntegerToFloat"): _matmul_typed(0, 1, type_from=2),
    (MS, "DynamicQuantizeMatMul"): _matmul_typed(0, 1, type_from=0),
    (MS, "MatMulNBits"): _matmul_nbits,
    (MS, "GatherBlockQuantized"): _gather_block_quantized,
    (MS, "QGemm"): _qgemm,
    (MS, "QLinearConv"): _qlinear_conv,
    (MS, "QuantizeLinear"): _quantize,
    (MS, "DequantizeLinear"): _dequantize,
    (MS, "QLinearAdd"): _qlinear_binary,
    (MS, "QLinearMul"): _qlinear_binary,
    (MS, "QLinearLeakyRelu"): _same,
    (MS, "QLinearSigmoid"): _same,
    (MS, "QLinearSoftmax"): _same,
    (MS, "QLinearAveragePool"): _qlinear_pool(global_pool=False),
    (MS, "QLinearGlobalAveragePool"): _qlinear_pool(global_pool=True),
    (MS, "QLinearConcat"): _qlinear_concat,
    (MS, "NhwcMaxPool"): _nhwc_max_pool,
    (MS, "FastGelu"): _same,
    (MS, "Gelu"): _same,
    (MS, "QuickGelu"): _same,
    (MS, "BiasGelu"): _same,
    (MS, "BiasAdd"): _same,
    (MS, "BiasSoftmax"): _same,
    (MS, "BiasDropout"): _bias_dropout,
    (MS, "BiasSplitGelu"): _bias_split_gelu,
    (MS, "Trilu"): _same,
}
