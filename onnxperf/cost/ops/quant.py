"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (ai.onnx).

Per-tensor, per-axis (since 13) and blocked (since 21) scales cost the same per element:
the scale and zero point are broadcast, read once (default traffic counts them). The
arithmetic is counted on the floating type involved (x for QuantizeLinear, y for
DequantizeLinear), so it is FLOPs for float inputs/outputs and int ops for int32 ones.

Per element (N = elements of x):

* QuantizeLinear ``y = saturate(round(x / scale) + zero_point)``, integer targets: divide,
  round, add zero point (only when given), saturate as min + max: 4 or 5 ops. Float
  targets (float8/float4, since 19/23): divide, add zero point (when given), and min + max
  only when ``saturate`` is 1; rounding is part of the conversion, not counted.
* DequantizeLinear ``y = (x - zero_point) * scale``: subtract (when a zero point is given)
  and multiply: 1 or 2 ops.
* DynamicQuantizeLinear: by its ONNX function, ReduceMin and ReduceMax (N − 1 compares
  each), 9 scalar ops for scale and zero point (Min, Max, Sub, Div, Div, Sub, Clip as 2,
  Round), then QuantizeLinear to uint8 with a zero point (5 per element): 7N + 7.

Requantizing an int32 accumulator to an 8-bit output (QLinearConv, QLinearMatMul and the
com.microsoft integer kernels) costs :data:`REQUANT_OPS` per output element: the accumulator
times the merged scale (x_scale·w_scale / y_scale, one multiply in place of QuantizeLinear's
divide), then round, zero-point add and saturate: QuantizeLinear to int8 with a zero point.
They are FLOPs, like QuantizeLinear's on its float input (the scaled value is a float).
"""

from __future__ import annotations

from onnx import TensorProto

from onnxperf.base import dtypes
from onnxperf.cost.ops.registry import NodeView, OpCost, arith, rule

#: named per-element steps, so the counts above are stated once.
QUANT_STEPS: dict[str, int] = {"divide": 1, "round": 1, "zero_point": 1, "saturate": 2, "scale": 1}

#: DynamicQuantizeLinear's scalar work (Min, Max, Sub, Div, Div, Sub, Clip = 2, Round).
DYNAMIC_QUANT_SCALAR_OPS = 9


def quantize_per_element(target_elem_type: int, has_zero_point: bool, saturate: bool = True) -> int:
    """Ops per element of QuantizeLinear for the given target type."""
    k = QUANT_STEPS["divide"] + (QUANT_STEPS["zero_point"] if has_zero_point else 0)
    if dtypes.is_float(target_elem_type):
        return k + (QUANT_STEPS["saturate"] if saturate else 0)
    return k + QUANT_STEPS["round"] + QUANT_STEPS["saturate"]


#: FLOPs per output element to requantize an int32 accumulator: scale multiply, round,
#: zero-point add, saturate (min, max), as QuantizeLinear to int8 with a zero point.
REQUANT_OPS = quantize_per_element(TensorProto.INT8, has_zero_point=True)


@rule("QuantizeLinear", family="quant", since=10)
def quantize_linear(n: NodeView) -> OpCost:
    """QuantizeLinear: ops = N × (divide + round + [zero point add] + saturate(2)) for integer
    targets, N × (divide + [zero point add] + [saturate(2) if saturate=1]) for float targets."""
    x, y = n.inp(0), n.out(0)
    k = quantize_per_element(y.elem_type, n.has_input(2), bool(n.attr("saturate", 1)))
    return arith(k * x.numel, x.elem_type)


@rule("DequantizeLinear", family="quant", since=10)
def dequantize_linear(n: NodeView) -> OpCost:
    """DequantizeLinear: ops = N × ([zero point subtract] + scale multiply), on y's type."""
    y = n.out(0)
    k = QUANT_STEPS["scale"] + (QUANT_STEPS["zero_point"] if n.has_input(2) else 0)
    return arith(k * n.inp(0).numel, y.elem_type)


@rule("DynamicQuantizeLinear", family="quant", since=11)
def dynamic_quantize_linear(n: NodeView) -> OpCost:
    """DynamicQuantizeLinear: 2(N − 1) compares for min and max, 9 scalar ops, and 5 per
    element to quantize: 7N + 7 ops. Traffic is the default (x read once); onnxruntime makes
    two passes over x (min/max, then quantize), so a tensor larger than cache is read twice."""
    x = n.inp(0)
    numel = x.numel
    k = quantize_per_element(n.out(0).elem_type, True)
    return arith(2 * max(numel - 1, 0) + DYNAMIC_QUANT_SCALAR_OPS + k * numel, x.elem_type)
