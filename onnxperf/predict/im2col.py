"""The im2col runs of onnxruntime's 8-bit convolution on the CPU: a cost its arithmetic does not show.

onnxruntime's CPU QLinearConv runs channels-last (its NhwcTransformer: :mod:`onnxperf.predict.broadcast`)
and, unless the kernel is 1x1 at stride 1 without padding, first gathers its input into a column buffer:
for every output pixel and every kernel position, one contiguous run of the group's C_in / group
channels (C_in bytes of uint8). Each run costs a copy call whatever its length, so a convolution with
few input channels pays for its runs, not its bytes: ResNet's 7x7 stem over 3 channels (112 x 112
outputs x 49 positions = 614,656 runs of 3 bytes) took 911 µs on the 2-core VM (onnxruntime 1.32, two
threads) where a 3x3 convolution of 64 channels with the same 118 M MACs (28,224 runs of 64 bytes) took
301 µs; the difference is 0.98 ns per run.

    runs = N · groups · H_out · W_out · k_H · k_W      (0 for a 1x1 kernel whose output is its input's size)

A depthwise convolution (one input channel per group) runs onnxruntime's own depthwise kernel, without
the buffer: 0. A QDQ export's float Conv that onnxruntime runs as a QLinearConv (its DequantizeLinear /
QuantizeLinear neighbours fused: ``roofline.fusions``) gathers the same runs. Calibration measures the cost of one run (``conv.int8.run_s``, fitted with the 8-bit
convolutions' share of the peak: :mod:`onnxperf.products.calibration.fit`); the roofline adds
``runs × run_s`` to each QLinearConv's arithmetic time.
"""

from __future__ import annotations

#: the spec key: the time of one run (seconds)
RUN_KEY = "conv.int8.run_s"
#: the ops that gather their input into a column buffer of runs (default domain: NCHW in the graph), and
#: their weight's input index
IM2COL_OPS = {"QLinearConv": 3}
#: a float Conv that runs as a QLinearConv (a QDQ export's): its weight's input index
AS_QLINEAR = {"Conv": 1}


def _dims(t) -> tuple[int, ...] | None:
    if t is None or t.shape is None or not all(isinstance(d, int) and d > 0 for d in t.shape):
        return None
    return tuple(t.shape)


def im2col_runs(n, as_qlinear: bool = False) -> int:
    """The runs of a default-domain QLinearConv node (module docstring), or with ``as_qlinear`` of a Conv
    that runs as one; 0 for any other node, a depthwise or pointwise one, or one whose shapes are not all
    known. Inputs: x [N, C_in, *spatial] (0), w [C_out, C_in / groups, *kernel] (QLinearConv: 3, Conv:
    1); output y [N, C_out, *spatial_out]."""
    w_at = IM2COL_OPS.get(n.op_type, AS_QLINEAR.get(n.op_type) if as_qlinear else None)
    if w_at is None or n.domain or len(n.inputs) <= w_at or not n.outputs:
        return 0
    x, w, y = _dims(n.inputs[0]), _dims(n.inputs[w_at]), _dims(n.outputs[0])
    if x is None or w is None or y is None or len(x) != len(w) or len(y) != len(x) or len(x) < 3:
        return 0
    if x[1] % w[1]:
        return 0
    groups = x[1] // w[1]
    if w[1] == 1 and groups > 1:  # depthwise: its own kernel
        return 0
    kernel, out = w[2:], y[2:]
    if all(k == 1 for k in kernel) and out == x[2:]:  # pointwise: the input is the GEMM's operand
        return 0
    runs = y[0] * groups
    for d in out + kernel:
        runs *= d
    return runs


__all__ = ["AS_QLINEAR", "IM2COL_OPS", "RUN_KEY", "im2col_runs"]
