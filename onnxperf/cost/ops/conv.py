"""Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv (ai.onnx).

Notation: N batch, C_in/C_out channels, G groups, K = prod(kernel dims),
O = prod(output spatial dims), I = prod(input spatial dims).
"""

from __future__ import annotations

from onnxperf.cost.ops.quant import REQUANT_OPS
from onnxperf.cost.ops.registry import NodeView, OpCost, arith, prod, rule


def conv_macs(x_shape: tuple[int, ...], w_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> int:
    """MACs of a direct convolution: ``N * C_out * O * (C_in / G) * K``.

    ``w_shape`` is ``[C_out, C_in/G, k1, k2, ...]`` so ``(C_in/G) * K == prod(w_shape[1:])``.
    Padding is not subtracted: every output position does a full kernel of MACs, as cuDNN
    and onnxruntime's im2col path do (torch and fvcore count the same).
    """
    n, c_out = y_shape[0], y_shape[1]
    return n * c_out * prod(y_shape[2:]) * prod(w_shape[1:])


@rule("Conv", family="conv")
def conv(n: NodeView) -> OpCost:
    """Conv: MACs = N·C_out·O·(C_in/G)·K; FLOPs = 2·MACs + (N·C_out·O if bias).

    Worked example (docs/conventions.md): 1×3×500×500 input, 2 filters 3×7×7, stride 2,
    pad 3 -> 1×2×250×250, 18,375,000 MACs, 36,750,000 FLOPs.
    """
    x, w, y = n.inp(0), n.inp(1), n.out(0)
    macs = conv_macs(x.shape, w.shape, y.shape)
    bias = y.numel if n.has_input(2) else 0
    return arith(2 * macs + bias, y.elem_type, macs=macs)


@rule("ConvTranspose", family="conv")
def conv_transpose(n: NodeView) -> OpCost:
    """ConvTranspose: every input element is scattered through a kernel:
    MACs = N·C_in·I·(C_out/G)·K, where ``w`` is ``[C_in, C_out/G, k...]`` so
    ``(C_out/G)·K == prod(w[1:])``; FLOPs = 2·MACs + (N·C_out·O if bias)."""
    x, w, y = n.inp(0), n.inp(1), n.out(0)
    macs = x.shape[0] * x.shape[1] * prod(x.shape[2:]) * prod(w.shape[1:])
    bias = y.numel if n.has_input(2) else 0
    return arith(2 * macs + bias, y.elem_type, macs=macs)


@rule("DeformConv", family="conv")
def deform_conv(n: NodeView) -> OpCost:
    """DeformConv: the convolution's MACs, plus bilinear sampling of every kernel tap:
    each of the N·O·C_in·K sampled values costs 4 reads weighted by 4 MACs (treated as
    3 adds + 4 muls = 7 FLOPs) and, with a mask, 1 more multiply.
    FLOPs = 2·MACs + N·O·C_in·K·(7 + mask) + bias."""
    x, w, y = n.inp(0), n.inp(1), n.out(0)
    macs = conv_macs(x.shape, w.shape, y.shape)
    k = prod(w.shape[2:])
    samples = y.shape[0] * prod(y.shape[2:]) * x.shape[1] * k
    mask = 1 if n.has_input(4) else 0
    bias = y.numel if n.has_input(3) else 0
    return arith(2 * macs + samples * (7 + mask) + bias, y.elem_type, macs=macs)


@rule("ConvInteger", family="conv")
def conv_integer(n: NodeView) -> OpCost:
    """ConvInteger (int8/uint8 in, int32 out): MACs as Conv; int ops = 2·MACs, plus one
    subtract per input and weight element when zero points are given. No FLOPs."""
    x, w, y = n.inp(0), n.inp(1), n.out(0)
    macs = conv_macs(x.shape, w.shape, y.shape)
    zp = (x.numel if n.has_input(2) else 0) + (w.numel if n.has_input(3) else 0)
    return OpCost(macs=macs, int_ops=2 * macs + zp)


@rule("QLinearConv", family="conv")
def qlinear_conv(n: NodeView) -> OpCost:
    """QLinearConv: inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, bias].
    MACs as Conv on integers; int ops = 2·MACs + one zero-point subtract per element of x
    and of w (as ConvInteger; the zero points are required inputs here) + bias adds;
    requantizing each output costs REQUANT_OPS = 5 FLOPs (quant.py: scale multiply, round,
    zero-point add, saturate)."""
    x, w, y = n.inp(0), n.inp(3), n.out(0)
    macs = conv_macs(x.shape, w.shape, y.shape)
    bias = y.numel if n.has_input(8) else 0
    return OpCost(macs=macs, int_ops=2 * macs + x.numel + w.numel + bias, flops=REQUANT_OPS * y.numel)
