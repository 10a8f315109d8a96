"""onnxruntime contrib ops (domain com.microsoft) that its graph optimizers emit: fused
conv/gemm/matmul, fused activations and bias ops, normalizations, embedding.

Attention-like contrib ops are in :mod:`.ms_contrib_attention`, quantized ones in
:mod:`.ms_contrib_quant`. com.microsoft ops are looked up with the model's opset ignored
(onnxruntime versions them itself), so every rule here is registered with since=1.

Every figure reuses the ai.onnx tables: per-element costs from
:data:`.elementwise.PER_ELEMENT`, normalizations from :data:`.norm.NORM`, softmax from
:data:`.reduce.ROW_WISE`, pools from :data:`.pool.POOL`; a fused op costs the sum of the ops
it fuses. Attributes have no schema defaults here: each rule gives its own.
"""

from __future__ import annotations

from onnxperf.cost.ops.conv import conv_macs
from onnxperf.cost.ops.elementwise import GELU_PER_ELEMENT, GELU_TANH_PER_ELEMENT, PER_ELEMENT, SILU_PER_ELEMENT
from onnxperf.cost.ops.matmul import gemm
from onnxperf.cost.ops.movement import movement
from onnxperf.cost.ops.norm import LAYER_NORM_BIAS, NORM
from onnxperf.cost.ops.pool import POOL
from onnxperf.cost.ops.reduce import ROW_WISE
from onnxperf.cost.ops.registry import BadNode, MS, NodeView, OpCost, Rule, arith, axis_of, prod, register, rule

_ACT = {k.lower(): v for k, v in PER_ELEMENT.items()}


def fused_activation_cost(name: str | None) -> int:
    """Ops per element of a fused ``activation`` attribute (Relu, Tanh, Sigmoid, LeakyRelu,
    Clip, HardSigmoid ...: the PER_ELEMENT cost of the op of that name); none costs 0."""
    if not name or str(name).lower() in ("", "identity", "none"):
        return 0
    try:
        return _ACT[str(name).lower()]
    except KeyError:
        raise BadNode(f"unknown fused activation {name!r}") from None


# --- fused conv / gemm / matmul ------------------------------------------------------------

def fused_conv(n: NodeView) -> OpCost:
    """FusedConv, NhwcFusedConv (X, W, B, Z) and NhwcConv (X, W, B): a Conv (NCHW or NHWC
    alike: MACs = Y·(C_in/G)·K, Y the output elements, = N·C_out·O), then + bias, + Z (the
    fused residual add) and the ``activation`` attribute's per-element cost on Y.
    FLOPs = 2·MACs + Y·(bias + Z + activation)."""
    x, w, y = n.inp(0), n.inp(1), n.out(0)
    macs = conv_macs(x.shape, w.shape, y.shape)  # = prod(Y) · prod(W[1:]) for any layout
    per = (1 if n.has_input(2) else 0) + (1 if n.has_input(3) else 0) + fused_activation_cost(n.attr("activation"))
    return arith(2 * macs + per * y.numel, y.elem_type, macs=macs)


def fused_gemm(n: NodeView) -> OpCost:
    """FusedGemm: Gemm (transA, transB, alpha, beta as ai.onnx Gemm) + the ``activation``
    attribute's per-element cost on the M×N output."""
    base = gemm(n)
    y = n.out(0)
    act = fused_activation_cost(n.attr("activation")) * y.numel
    return arith(base.flops + base.int_ops + act, n.inp(0).elem_type, macs=base.macs)


def fused_matmul(n: NodeView) -> OpCost:
    """FusedMatMul / TransposeMatMul / FusedMatMulActivation: Y = alpha·op(A)·op(B) with
    transA/transB (last two dims) and transBatchA/transBatchB (dim 0 moved behind the batch
    dims). K = A's contracted dim: A.shape[-1], or with transA A.shape[0] (transBatchA) or
    A.shape[-2]. MACs = Y·K; FLOPs = 2·MACs + Y (alpha ≠ 1) + Y·activation."""
    a, y = n.inp(0), n.out(0)
    if n.attr("transA", 0):
        k = a.shape[0] if n.attr("transBatchA", 0) else a.shape[-2]
    else:
        k = a.shape[-1]
    macs = y.numel * k
    extra = (y.numel if n.attr("alpha", 1.0) != 1.0 else 0)
    extra += fused_activation_cost(n.attr("activation")) * y.numel
    return arith(2 * macs + extra, a.elem_type, macs=macs)


def gemm_fast_gelu(n: NodeView) -> OpCost:
    """GemmFastGelu (X, W, bias): MatMul + bias + FastGelu (tanh form, 9 ops):
    MACs = Y·K; FLOPs = 2·MACs + Y·(bias + 9)."""
    x, y = n.inp(0), n.out(0)
    macs = y.numel * x.shape[-1]
    per = (1 if n.has_input(2) else 0) + GELU_TANH_PER_ELEMENT
    return arith(2 * macs + per * y.numel, x.elem_type, macs=macs)


def matmul_integer16(n: NodeView) -> OpCost:
    """MatMulInteger16: MACs = Y·K on int16 data; int ops = 2·MACs."""
    a, y = n.inp(0), n.out(0)
    macs = y.numel * a.shape[-1]
    return OpCost(macs=macs, int_ops=2 * macs)


register(["FusedConv", "NhwcFusedConv", "NhwcConv"], fused_conv, family="conv", domain=MS)
register("FusedGemm", fused_gemm, family="matmul", domain=MS)
register(["FusedMatMul", "TransposeMatMul", "FusedMatMulActivation"], fused_matmul, family="matmul", domain=MS)
register("GemmFastGelu", gemm_fast_gelu, family="matmul", domain=MS)
register("MatMulInteger16", matmul_integer16, family="matmul", domain=MS)


# --- fused activations and bias ops ----------------------------------------------------------

#: ops per output element: (bias adds and other fused elementwise work, activation part).
#: BiasGelu = A + B, then Gelu (erf form); FastGelu = Gelu tanh form (+ bias when given);
#: QuickGelu = x·sigmoid(alpha·x), alpha 1.702 by default: SiLU and the multiply by alpha;
#: BiasAdd = X + bias + skip;
#: BiasSoftmax = softmax(data + bias); BiasDropout = data + bias (+ residual), dropout as
#: at inference (identity, like ai.onnx Dropout).
ACTIVATIONS: dict[str, int] = {
    "Gelu": GELU_PER_ELEMENT,
    "BiasGelu": PER_ELEMENT["Add"] + GELU_PER_ELEMENT,
    "FastGelu": GELU_TANH_PER_ELEMENT,
    "QuickGelu": SILU_PER_ELEMENT + PER_ELEMENT["Mul"],
    "BiasAdd": 2 * PER_ELEMENT["Add"],
    "BiasSoftmax": PER_ELEMENT["Add"] + ROW_WISE["Softmax"][0],
    "BiasDropout": PER_ELEMENT["Add"],
}

#: inputs whose presence adds one add per output element
_OPTIONAL_ADDS = {"FastGelu": (1,), "BiasDropout": (2,)}


def _fused_elementwise_rule(per_elem: int, optional_adds: tuple[int, ...]) -> Rule:
    def fused_elementwise(n: NodeView) -> OpCost:
        """Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd, BiasSoftmax, BiasDropout:
        ops = Y·k, k from :data:`ACTIVATIONS`, + Y for an optional bias (FastGelu) or
        residual (BiasDropout). BiasDropout is costed at inference (dropout is the identity);
        its mask output, when present, is written (default traffic)."""
        y = n.out(0)
        k = per_elem + sum(1 for i in optional_adds if n.has_input(i))
        return arith(k * y.numel, n.inp(0).elem_type)

    return fused_elementwise


def bias_split_gelu(n: NodeView) -> OpCost:
    """BiasSplitGelu (X [N, S, D], bias [D]) -> Y [N, S, D/2]: X + bias (2·Y adds), Gelu
    on the right half (5·Y), times the left half (Y): 8 ops per output element."""
    y = n.out(0)
    return arith((2 * PER_ELEMENT["Add"] + GELU_PER_ELEMENT + PER_ELEMENT["Mul"]) * y.numel, n.inp(0).elem_type)


for _op, _k in ACTIVATIONS.items():
    register(_op, _fused_elementwise_rule(_k, _OPTIONAL_ADDS.get(_op, ())), family="activation", domain=MS)
register("BiasSplitGelu", bias_split_gelu, family="activation", domain=MS)
register("Trilu", movement, family="movement", domain=MS)


# --- normalizations ------------------------------------------------------------------------

def _norm_ops(x_numel: int, rows: int, *, rms: bool, bias: bool, adds_before: int = 0) -> int:
    e, r = NORM["RMSNormalization" if rms else "LayerNormalization"]
    if bias and not rms:
        e += LAYER_NORM_BIAS
    return (e + adds_before) * x_numel + r * rows


def _rows(n: NodeView) -> int:
    x = n.inp(0)
    return prod(x.shape[:axis_of(n.attr("axis", -1), x.rank)])


def _layer_norm_rule(rms: bool) -> Rule:
    def layer_norm(n: NodeView) -> OpCost:
        """LayerNormalization (com.microsoft) and SimplifiedLayerNormalization (RMS norm, in
        com.microsoft and, as onnxruntime's fusion writes it, in the default domain): over
        shape[axis:] (axis default −1), rows = prod(shape[:axis]); the ai.onnx
        LayerNormalization / RMSNormalization costs: 6·X (+X with a bias) + 5·rows, or
        4·X + 4·rows."""
        x = n.inp(0)
        return arith(_norm_ops(x.numel, _rows(n), rms=rms, bias=not rms and n.has_input(2)), x.elem_type)

    return layer_norm


def _skip_layer_norm_rule(rms: bool) -> Rule:
    bias_idx = 3 if rms else 4

    def skip_layer_norm(n: NodeView) -> OpCost:
        """SkipLayerNormalization (input, skip, gamma, beta, bias) and
        SkipSimplifiedLayerNormalization (input, skip, gamma, bias): s = input + skip (+ bias),
        then LayerNormalization (with beta) or RMS norm over the last dim:
        ops = (1 + bias)·X + norm(X, rows = X / hidden)."""
        x = n.inp(0)
        adds = 1 + (1 if n.has_input(bias_idx) else 0)
        rows = x.numel // x.shape[-1] if x.shape[-1] else 0
        ops = _norm_ops(x.numel, rows, rms=rms, bias=not rms and n.has_input(3), adds_before=adds)
        return arith(ops, x.elem_type)

    return skip_layer_norm


def _group_norm_rule(skip: bool) -> Rule:
    def group_norm(n: NodeView) -> OpCost:
        """GroupNorm (X, gamma, beta) and SkipGroupNorm (X, gamma, beta, skip, bias), NHWC by
        default (``channels_last`` 1): groups = N·``groups``; ops = 7·X + 5·N·G (the ai.onnx
        GroupNormalization cost), + X·(1 + bias) for SkipGroupNorm's adds, + 5·X for
        ``activation`` 1 (SiLU = x·sigmoid(x))."""
        x = n.inp(0)
        e, r = NORM["GroupNormalization"]
        groups = int(n.attr("groups", 0))
        if groups <= 0:
            raise BadNode("GroupNorm needs a positive groups attribute")
        if skip:
            e += 1 + (1 if n.has_input(4) else 0)
        if n.attr("activation", 0):
            e += SILU_PER_ELEMENT
        return arith(e * x.numel + r * x.shape[0] * groups, x.elem_type)

    return group_norm


def embed_layer_norm(n: NodeView) -> OpCost:
    """EmbedLayerNormalization (input_ids [B, S], segment_ids, word_embedding [V, H],
    position_embedding, segment_embedding, gamma, beta, mask, position_ids): three gathers,
    word + position (+ segment) adds, LayerNormalization with bias over H, and, with a mask,
    one int op per mask element to count the mask_index.
    FLOPs = (1 + segment)·X + 7·X + 5·B·S, X = B·S·H.
    Bytes read: the ids, the mask, gamma, beta and only the gathered embedding rows
    (B·S rows of each table, at most the table)."""
    tokens, x, seg, ops = embedding_norm_ops(n)
    c = arith(ops, n.out(0).elem_type)
    read = embedding_reads(n, tokens, whole=(0, 1, 5, 6, 7, 8))
    mask_ops = n.inp(7).numel if n.has_input(7) else 0
    return OpCost(flops=c.flops, int_ops=c.int_ops + mask_ops, bytes_read=read)


def embedding_norm_ops(n: NodeView) -> tuple[int, int, bool, int]:
    """(tokens B·S, elements X = B·S·H, whether a segment embedding is added, the ops of the adds
    and the LayerNormalization with bias) of an embedding layer norm: input_ids at 0, the word
    table [V, H] at 2, segment ids and table at 1 and 4."""
    tokens = n.inp(0).numel
    x = tokens * n.inp(2).shape[-1]
    seg = n.has_input(4) and n.has_input(1)
    return tokens, x, seg, _norm_ops(x, tokens, rms=False, bias=True, adds_before=1 + (1 if seg else 0))


def embedding_reads(n: NodeView, tokens: int, whole: tuple[int, ...], tables: tuple[int, ...] = (2, 3, 4)) -> int:
    """Bytes an embedding layer norm reads: the inputs ``whole`` entirely, and of each table in
    ``tables`` only the rows its ``tokens`` gather (at most the table)."""
    read = sum(n.inp(i).nbytes for i in whole if n.has_input(i))
    for i in tables:
        if n.has_input(i):
            t = n.inp(i)
            read += min(t.nbytes, tokens * (t.nbytes // t.shape[0])) if t.shape[0] else 0
    return read


register("LayerNormalization", _layer_norm_rule(rms=False), family="norm", domain=MS)
register("SimplifiedLayerNormalization", _layer_norm_rule(rms=True), family="norm", domain=MS)
register("SimplifiedLayerNormalization", _layer_norm_rule(rms=True), family="norm")
register("SkipLayerNormalization", _skip_layer_norm_rule(rms=False), family="norm", domain=MS)
register("SkipSimplifiedLayerNormalization", _skip_layer_norm_rule(rms=True), family="norm", domain=MS)
register("GroupNorm", _group_norm_rule(skip=False), family="norm", domain=MS)
register("SkipGroupNorm", _group_norm_rule(skip=True), family="norm", domain=MS)
register("EmbedLayerNormalization", embed_layer_norm, family="norm", domain=MS)


# --- pooling -------------------------------------------------------------------------------

@rule("NhwcMaxPool", family="pool", domain=MS)
def nhwc_max_pool(n: NodeView) -> OpCost:
    """NhwcMaxPool (uint8/int8, NHWC): the ai.onnx MaxPool cost, K − 1 compares per output
    element (K = prod(kernel_shape)); integer data makes them int ops."""
    a, b = POOL["MaxPool"]
    k = prod(n.attr("kernel_shape") or [])
    return arith(n.out(0).numel * (a * k + b) if k else 0, n.inp(0).elem_type)
