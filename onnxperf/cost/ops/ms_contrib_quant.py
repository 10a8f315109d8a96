"""onnxruntime's quantized contrib ops (domain com.microsoft): weight-only quantized matmuls
(MatMulNBits, GatherBlockQuantized), integer matmuls with float outputs
(MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm), the NHWC QLinearConv, the QLinear*
elementwise/pool/softmax/concat wrappers, and the com.microsoft Quantize/DequantizeLinear.

Two conventions, each inherited from the ai.onnx rule of the same kind:

* matmul- and conv-like ops follow ai.onnx QLinearMatMul/QLinearConv/MatMulInteger
  (matmul.py, conv.py): integer MACs are int ops (2 per MAC), one int op per element of an
  integer operand whose zero point is given, and requantizing an output costs
  :data:`.quant.REQUANT_OPS` FLOPs (merged scale multiply, round, zero-point add, saturate:
  QuantizeLinear to int8); a float output costs 1 scale multiply (+ bias add);
* the QLinear wrappers of float ops follow ai.onnx Quantize/DequantizeLinear (quant.py):
  each input element is dequantized ((x − zp)·scale: 1 or 2 FLOPs), the float op costs its
  ai.onnx per-element cost, and each output is quantized (divide, round, zero-point add,
  saturate: 4 or 5 FLOPs). onnxruntime evaluates the unary ones (QLinearSigmoid,
  QLinearLeakyRelu) through a 256-entry lookup table; the count is the op's semantics.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from onnxperf.cost.ops.conv import qlinear_conv
from onnxperf.cost.ops.elementwise import PER_ELEMENT
from onnxperf.cost.ops.matmul import matmul_macs
from onnxperf.cost.ops.pool import POOL
from onnxperf.cost.ops.quant import DYNAMIC_QUANT_SCALAR_OPS, QUANT_STEPS, REQUANT_OPS, dequantize_linear, quantize_linear, quantize_per_element
from onnxperf.cost.ops.reduce import ROW_WISE
from onnxperf.cost.ops.registry import MS, NodeView, OpCost, Rule, axis_of, prod, register
from onnxperf.cost.ops.ms_contrib import embedding_norm_ops, embedding_reads

#: dequantizing a weight element of a block-quantized tensor: subtract the zero point
#: (explicit, or implicit 2^(bits−1) for packed unsigned formats) and multiply by the scale
BLOCK_DEQUANT_OPS = QUANT_STEPS["zero_point"] + QUANT_STEPS["scale"]


def dequant_ops(has_zero_point: bool) -> int:
    """FLOPs to dequantize one element: scale multiply, + zero-point subtract when given."""
    return QUANT_STEPS["scale"] + (QUANT_STEPS["zero_point"] if has_zero_point else 0)


def quant_ops(has_zero_point: bool) -> int:
    """FLOPs to quantize one float element to an 8-bit integer (divide, round, zero point,
    saturate), as ai.onnx QuantizeLinear."""
    return quantize_per_element(TensorProto.UINT8, has_zero_point)


# --- weight-only quantized matmul and gather -----------------------------------------------

def matmul_nbits(n: NodeView) -> OpCost:
    """MatMulNBits (A [..., K], B packed [N, k_blocks, blob], scales [N, k_blocks],
    zero_points, g_idx, bias; attributes K, N, bits, block_size): Y = A · dequant(B)^T.
    M = A / K rows; MACs = M·N·K; FLOPs = 2·MACs + 2·N·K (each weight dequantized once:
    zero-point subtract, scale multiply) + M·N (bias). Bytes read are the default: the
    packed weights are N·k_blocks·block_size·bits/8 bytes (N·K·bits/8 when block_size
    divides K) + scales + zero points. accuracy_level (int8 compute of A) is not modelled."""
    a = n.inp(0)
    k, nn = int(n.attr("K", a.shape[-1])), int(n.attr("N", n.out(0).shape[-1]))
    m = a.numel // k if k else 0
    macs = m * nn * k
    flops = 2 * macs + BLOCK_DEQUANT_OPS * nn * k + (m * nn if n.has_input(5) else 0)
    return OpCost(macs=macs, flops=flops)


def gather_block_quantized(n: NodeView) -> OpCost:
    """GatherBlockQuantized (data, indices, scales, zero_points): gathers rows, then
    dequantizes each output element: 2 FLOPs per output element (scale multiply and
    zero-point subtract, which uint8 data always has: 2^(bits−1) by default), 1 without a
    zero point for int4/uint4 data. Bytes read: indices + the gathered fraction of data,
    scales and zero points (output / rows of data), at most each whole tensor."""
    data, idx, y = n.inp(0), n.inp(1), n.out(0)
    zp = n.has_input(3) or data.elem_type == TensorProto.UINT8
    flops = dequant_ops(zp) * y.numel
    rows = data.shape[axis_of(n.attr("gather_axis", 0), data.rank)] if data.rank else 1
    read = idx.nbytes
    for i in (0, 2, 3):
        if n.has_input(i):
            t = n.inp(i)
            read += t.nbytes if not rows else min(t.nbytes, -(-t.nbytes * idx.numel // rows))
    return OpCost(flops=flops, bytes_read=read)


register("MatMulNBits", matmul_nbits, family="matmul", domain=MS)
register("GatherBlockQuantized", gather_block_quantized, family="gather_scatter", domain=MS)


# --- integer matmuls with float or requantized outputs -------------------------------------

def _zp_int_ops(n: NodeView, pairs: tuple[tuple[int, int], ...]) -> int:
    """One int op per element of an integer operand (index a) whose zero point (index z) is given."""
    return sum(n.inp(a).numel for a, z in pairs if n.has_input(z))


def matmul_integer_to_float(n: NodeView) -> OpCost:
    """MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias):
    MACs as MatMul; int ops = 2·MACs + zero-point subtracts (A, B elements when given);
    FLOPs = Y (scale multiply) + Y (bias)."""
    a, b, y = n.inp(0), n.inp(1), n.out(0)
    macs = matmul_macs(a.shape, b.shape)
    int_ops = 2 * macs + _zp_int_ops(n, ((0, 4), (1, 5)))
    return OpCost(macs=macs, int_ops=int_ops, flops=y.numel * (1 + (1 if n.has_input(6) else 0)))


def dynamic_quantize_matmul(n: NodeView) -> OpCost:
    """DynamicQuantizeMatMul (A float, B int8, b_scale, b_zero_point, bias): A is quantized
    to uint8 at run time (ai.onnx DynamicQuantizeLinear: 7·A + 7 FLOPs), then an integer
    matmul: int ops = 2·MACs + A (A's zero point, always present) + B (when b_zero_point is
    given); FLOPs += Y (scale multiply) + Y (bias)."""
    a, b, y = n.inp(0), n.inp(1), n.out(0)
    macs = matmul_macs(a.shape, b.shape)
    dq = 2 * max(a.numel - 1, 0) + DYNAMIC_QUANT_SCALAR_OPS + quant_ops(True) * a.numel
    flops = dq + y.numel * (1 + (1 if n.has_input(4) else 0))
    int_ops = 2 * macs + a.numel + (b.numel if n.has_input(3) else 0)
    return OpCost(macs=macs, int_ops=int_ops, flops=flops)


def qgemm(n: NodeView) -> OpCost:
    """QGemm (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp): MACs = M·N·K (transA,
    transB as Gemm); int ops = 2·MACs + zero-point subtracts (A, B elements when given) + Y
    (int32 C add); output: requantized with y_scale (REQUANT_OPS = 5 FLOPs per element), else
    float (1 FLOP: scale multiply, alpha folded in)."""
    a, b, y = n.inp(0), n.inp(3), n.out(0)
    m, k = (a.shape[1], a.shape[0]) if n.attr("transA", 0) else (a.shape[0], a.shape[1])
    nn = b.shape[0] if n.attr("transB", 0) else b.shape[1]
    macs = m * nn * k
    int_ops = 2 * macs + _zp_int_ops(n, ((0, 2), (3, 5))) + (y.numel if n.has_input(6) else 0)
    if n.has_input(7):
        return OpCost(macs=macs, int_ops=int_ops, flops=REQUANT_OPS * y.numel)
    return OpCost(macs=macs, int_ops=int_ops, flops=y.numel)


def qlinear_conv_ms(n: NodeView) -> OpCost:
    """QLinearConv (com.microsoft; NHWC with ``channels_last``): the ai.onnx QLinearConv
    cost (MACs = Y·(C_in/G)·K holds in either layout; int ops = 2·MACs + X + W (zero-point
    subtracts) + bias, FLOPs = 5·Y to requantize)."""
    return qlinear_conv(n)


register("MatMulIntegerToFloat", matmul_integer_to_float, family="matmul", domain=MS)
register("DynamicQuantizeMatMul", dynamic_quantize_matmul, family="matmul", domain=MS)
register("QGemm", qgemm, family="matmul", domain=MS)
register("QLinearConv", qlinear_conv_ms, family="conv", domain=MS)
register("QuantizeLinear", quantize_linear, family="quant", domain=MS)
register("DequantizeLinear", dequantize_linear, family="quant", domain=MS)


# --- QLinear wrappers of float ops -----------------------------------------------------------

#: elementwise QLinear ops: (float op whose PER_ELEMENT cost applies, zero-point input indices
#: of the quantized inputs, zero-point input index of the output)
QLINEAR_ELEMENTWISE: dict[str, tuple[str, tuple[int, ...], int]] = {
    "QLinearAdd": ("Add", (2, 5), 7),
    "QLinearMul": ("Mul", (2, 5), 7),
    "QLinearSigmoid": ("Sigmoid", (2,), 4),
    "QLinearLeakyRelu": ("LeakyRelu", (2,), 4),
}


def _qlinear_elementwise_rule(op: str, in_zps: tuple[int, ...], out_zp: int) -> Rule:
    def qlinear_elementwise(n: NodeView) -> OpCost:
        """QLinearAdd/Mul/Sigmoid/LeakyRelu: per output element, dequantize each quantized
        input (1 FLOP, +1 with its zero point), the float op (PER_ELEMENT: Add 1, Mul 1,
        Sigmoid 4, LeakyRelu 2), quantize the result (4 FLOPs, +1 with the output zero point)."""
        per = sum(dequant_ops(n.has_input(z)) for z in in_zps) + PER_ELEMENT[op] + quant_ops(n.has_input(out_zp))
        return OpCost(flops=per * n.out(0).numel)

    return qlinear_elementwise


def qlinear_softmax(n: NodeView) -> OpCost:
    """QLinearSoftmax (X, X_scale, x_zero_point, y_scale, y_zero_point): per element
    dequantize, softmax (5, the Softmax rule's cost), quantize."""
    per = dequant_ops(n.has_input(2)) + ROW_WISE["Softmax"][0] + quant_ops(n.has_input(4))
    return OpCost(flops=per * n.inp(0).numel)


def _qlinear_pool_rule(global_pool: bool) -> Rule:
    def qlinear_pool(n: NodeView) -> OpCost:
        """QLinearAveragePool / QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp):
        dequantize every input element, the ai.onnx AveragePool cost (K per output element:
        K − 1 adds and a divide; K = prod(kernel_shape), or the spatial size for the global
        pool), quantize every output element."""
        x, y = n.inp(0), n.out(0)
        a, b = POOL["AveragePool"]
        if global_pool:
            k = x.numel // y.numel if y.numel else 0
        else:
            k = prod(n.attr("kernel_shape") or [])
        flops = dequant_ops(n.has_input(2)) * x.numel + y.numel * (a * k + b) + quant_ops(n.has_input(4)) * y.numel
        return OpCost(flops=flops)

    return qlinear_pool


def _same_quant(n: NodeView, scale_idx: int, zp_idx: int) -> bool:
    """Are this input's scale and zero point constants equal to the output's?"""
    pairs = ((n.const(scale_idx), n.const(0)), (n.const(zp_idx), n.const(1)))
    return all(a is not None and b is not None and np.array_equal(a, b) for a, b in pairs)


def qlinear_concat(n: NodeView) -> OpCost:
    """QLinearConcat (Y_scale, Y_zero_point, then (X, scale, zero_point) per input): an input
    whose scale and zero point are constants equal to Y's is copied (0 FLOPs); any other is
    requantized: dequantize + quantize per element (2 + 5 FLOPs with zero points)."""
    flops = 0
    for i in range(2, len(n.inputs), 3):
        if not n.has_input(i) or _same_quant(n, i + 1, i + 2):
            continue
        flops += (dequant_ops(n.has_input(i + 2)) + quant_ops(n.has_input(1))) * n.inp(i).numel
    return OpCost(flops=flops)


for _op, (_float_op, _in_zps, _out_zp) in QLINEAR_ELEMENTWISE.items():
    register(_op, _qlinear_elementwise_rule(_float_op, _in_zps, _out_zp), family="quant", domain=MS)
register("QLinearSoftmax", qlinear_softmax, family="quant", domain=MS)
register("QLinearAveragePool", _qlinear_pool_rule(global_pool=False), family="pool", domain=MS)
register("QLinearGlobalAveragePool", _qlinear_pool_rule(global_pool=True), family="pool", domain=MS)
register("QLinearConcat", qlinear_concat, family="movement", domain=MS)


def qembed_layer_norm(n: NodeView) -> OpCost:
    """QEmbedLayerNormalization (onnxruntime's quantize_dynamic form of EmbedLayerNormalization:
    input_ids [B, S], segment_ids, word/position (u)int8 tables [V, H], segment table, gamma and
    beta (u)int8 [H], mask, then their scales and zero points): the gathered rows and gamma/beta
    are dequantized (:func:`dequant_ops` with a zero point per element), then EmbedLayerNormalization's
    arithmetic. FLOPs = dequant·(X·(2 + segment) + 2·H) + (1 + segment)·X + 7·X + 5·B·S,
    X = B·S·H. Bytes read: the ids, mask, scales, zero points, gamma, beta and only the gathered rows."""

    tokens, x, seg, ops = embedding_norm_ops(n)
    ops += dequant_ops(True) * (x * (2 + (1 if seg else 0)) + 2 * n.inp(2).shape[-1])
    read = embedding_reads(n, tokens, whole=(0, 1, 5, 6, 7) + tuple(range(8, 18)))
    mask_ops = n.inp(7).numel if n.has_input(7) else 0
    return OpCost(flops=ops, int_ops=mask_ops, bytes_read=read)


register("QEmbedLayerNormalization", qembed_layer_norm, family="norm", domain=MS)
