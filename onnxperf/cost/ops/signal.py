"""Signal processing: DFT, STFT, the window generators and MelWeightMatrix (ai.onnx, since 17).

FFT convention: a complex transform of length N costs ``5·N·log2 N`` real FLOPs, the
standard radix-2 FFT count (N/2·log2 N butterflies of one complex multiply, 6 FLOPs, and two
complex adds, 4 FLOPs), used for every N (FFTW's "mflops" convention), rounded to an
integer. Real input is counted as a full complex transform (a real-input FFT can do about
half the work); onnxruntime runs radix-2 for powers of two and Bluestein's algorithm
(several FFTs of length ≥ 2N) otherwise, so for other lengths this undercounts its work.
"""

from __future__ import annotations

import math

from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, axis_of, prod, rule, scalar

#: real FLOPs per point per log2 of the length, for one complex FFT of length N.
FFT_FLOPS_PER_POINT_LOG2 = 5

#: window generators (Hann, Hamming, Blackman share one ONNX function body, a generalized
#: cosine window). Per element: Range (1 add), angle (mul), 2·angle (mul), 2 cos, 2 mul by
#: coefficients, sub, add = 9; scalar setup (Sub, Sub, Mul, Mul, Add, Div) = 6.
WINDOW_PER_ELEMENT = 9
WINDOW_FIXED_OPS = 6

#: MelWeightMatrix: per mel edge (num_mel_bins + 2 of them): mel = lo + step·i (2),
#: hz = 700·(10^(mel/2595) − 1) (4), bin = floor((dft_length + 1)·hz / rate) (3) = 9 ops;
#: per triangle weight: a subtract and a divide (2), each frequency bin lying in at most two
#: overlapping triangles.
MEL_OPS_PER_EDGE = 9
MEL_OPS_PER_WEIGHT = 2


def fft_flops(length: int) -> int:
    """Real FLOPs of one complex FFT of ``length`` points: 5·N·log2 N (0 for N ≤ 1)."""
    if length <= 1:
        return 0
    return round(FFT_FLOPS_PER_POINT_LOG2 * length * math.log2(length))


def _dft(n: NodeView, axis: int) -> OpCost:
    x, y = n.inp(0), n.out(0)
    axis = axis_of(axis, x.rank)
    length = scalar(n.const(1))
    exact = True
    if length is None:
        if not n.has_input(1):
            length = x.shape[axis]
        elif not n.attr("onesided"):
            length = y.shape[axis]
        else:  # onesided output keeps N//2 + 1 bins: N is 2(M - 1) or 2M - 1
            length, exact = 2 * (y.shape[axis] - 1), False
    transforms = prod(x.shape[:-1]) // x.shape[axis] if x.shape[axis] else 0
    scale = 2 * length if n.attr("inverse") else 0
    return OpCost(flops=transforms * (fft_flops(length) + scale), exact=exact)


@rule("DFT", family="signal", since=17)
def dft_17(n: NodeView) -> OpCost:
    """DFT (opset 17, ``axis`` attribute, default 1): input [batch, d1, ..., dk, 1|2].
    T = prod(input dims but the last) / input[axis] transforms of length N (``dft_length``
    when given and constant, else the input's size along ``axis``):
    FLOPs = T·(5·N·log2 N + (2N if inverse: the 1/N scaling of real and imaginary parts))."""
    return _dft(n, int(n.attr("axis")))


@rule("DFT", family="signal", since=20)
def dft_20(n: NodeView) -> OpCost:
    """DFT (opset 20): as opset 17, the axis now an optional constant input (default −2)."""
    axis = scalar(n.const(2)) if n.has_input(2) else -2
    if axis is None:
        raise BadNode("DFT axis input is not a constant")
    return _dft(n, axis)


@rule("STFT", family="signal", since=17)
def stft(n: NodeView) -> OpCost:
    """STFT: signal [B, L, 1|2], output [B, F, bins, 2]. Each of the B·F frames is windowed
    (N multiplies, 2N for complex signal, when a window is given) and transformed by an FFT
    of length N = frame_length (constant input, else the window's length):
    FLOPs = B·F·(5·N·log2 N + window multiplies). Overlapping frames re-read the signal;
    traffic stays the default (signal read once)."""
    x, y = n.inp(0), n.out(0)
    length = scalar(n.const(3))
    exact = True
    if length is None and n.has_input(2):
        length = n.inp(2).shape[0]
    if length is None:
        bins = y.shape[2]
        length, exact = (2 * (bins - 1), False) if n.attr("onesided") else (bins, True)
    frames = y.shape[0] * y.shape[1]
    window = length * x.shape[-1] if n.has_input(2) else 0
    return OpCost(flops=frames * (fft_flops(length) + window), exact=exact)


@rule(["HannWindow", "HammingWindow", "BlackmanWindow"], family="signal", since=17)
def window(n: NodeView) -> OpCost:
    """Hann/Hamming/BlackmanWindow: by their shared ONNX function (computed in float, then
    cast), FLOPs = 9·size + 6. No input data beyond the scalar size."""
    return OpCost(flops=WINDOW_PER_ELEMENT * n.out(0).numel + WINDOW_FIXED_OPS)


@rule("MelWeightMatrix", family="signal", since=17)
def mel_weight_matrix(n: NodeView) -> OpCost:
    """MelWeightMatrix: output [F, M] with F = floor(dft_length/2) + 1 frequency bins and M mel
    bins. FLOPs = 9·(M + 2) (mel edges) + 2·2·F (a ramp weight for each bin in at most two
    triangles), an upper bound (bins outside [lower, upper] edge get no weight): inexact.
    The zeros of the matrix are written (default traffic)."""
    f, m = n.out(0).shape
    return OpCost(flops=MEL_OPS_PER_EDGE * (m + 2) + MEL_OPS_PER_WEIGHT * 2 * f, exact=False,
                  note="upper bound: every frequency bin in two triangles")
