"""Broadcast loops: the spans an elementwise kernel with broadcasting runs over on onnxruntime's CPU.

onnxruntime's binary elementwise kernels (Add, Mul, ..., QLinearAdd, QLinearMul) walk the output in
*spans*: the longest innermost run of output dims along which each input either varies with the output or
stays the same, so one call of the inner loop covers it; a broadcast that changes inside that run ends the
span. ``x[1, C, H, W] · s[1, C, 1, 1]`` (a squeeze-excite scale) has spans of H·W elements, C of them;
``x[1, H, W, C] · s[1, 1, 1, C]`` (the same in NHWC, as Keras exports it) spans of C elements, H·W of them;
``x[1, 224, 224, 3] + m[3]`` (an input normalization) 50,176 spans of 3. Each span costs a call and its
loop setup, whatever its length: on this VM (onnxruntime 1.32, one thread) 16-27 ns per span of 3-32
elements, so the NHWC normalization takes 1.45 ms where the same Add without broadcasting takes 0.08
(benchmarks/results/broadcast.md).

:func:`spans` counts them from the shapes; calibration measures one span (``broadcast.span_s``,
:func:`onnxperf.products.calibration.run.broadcast_span`) and the roofline adds ``spans × span_s`` to each
node that runs its own broadcast kernel. onnxruntime's QLinearAdd / QLinearMul set up their requantization
on every call: their span is measured apart (``broadcast.qlinear.span_s``: 31 ns here, a float Add's 11).

**Channels last.** In a graph with a QLinearConv onnxruntime's CPU provider runs the quantized ops
channels-last (its NhwcTransformer: QLinearConv with ``channels_last``, the layout carried through the
QLinear elementwise ops, pools and activations between them, Transposes only where the chain starts and
ends). A squeeze-excite scale ``QLinearMul(x[1, C, H, W], s[1, C, 1, 1])`` then runs as x[1, H, W, C] ·
s[1, 1, 1, C]: H·W spans of C, not C spans of H·W (EfficientNet-B0's first one, C = 32 at 112 × 112:
494 µs against 139 µs in NCHW, one thread here). :func:`node_spans` counts a 4-D QLinear binary op of
such a graph in NHWC (``channels_last``).
"""

from __future__ import annotations

from collections.abc import Sequence

from onnxperf.predict.tensors import static_shape

#: default-domain ops whose CPU kernels loop over broadcast spans (their inputs: all)
BROADCAST_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Equal", "Less", "Greater",
                           "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "Where"})
#: onnxruntime's quantized binary ops: inputs A and B (0 and 3)
QLINEAR_BINARY = frozenset({"QLinearAdd", "QLinearMul"})


def spans(out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]]) -> int:
    """The spans of an elementwise kernel with output ``out_shape`` and inputs ``in_shapes`` (module
    docstring): the inputs right-aligned on the output, dims of size 1 in the output skipped, from the
    innermost dim outwards each dim's pattern is which inputs vary along it (size equal to the output's);
    the span is the product of the innermost run of dims with the innermost dim's pattern and
    ``spans = numel(out) / span``: 1 when every dim has that pattern (no broadcast, or one input a
    scalar)."""
    rank = len(out_shape)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
    numel = 1
    for d in out_shape:
        numel *= int(d)
    run, pattern = 1, None
    for d in reversed(range(rank)):
        o = int(out_shape[d])
        if o == 1:
            continue
        p = tuple(s[d] == o for s in padded)
        if pattern is None:
            pattern = p
        elif p != pattern:
            return numel // run if run else 0
        run *= o
    return 1


#: ops whose presence makes onnxruntime's CPU provider run a graph's quantized ops channels-last
NHWC_ROOTS = frozenset({"QLinearConv"})
#: the span cost keys: a float elementwise kernel's, a QLinear binary op's (falling back to the first)
SPAN_KEY = "broadcast.span_s"
QLINEAR_SPAN_KEY = "broadcast.qlinear.span_s"


def is_qlinear_binary(n) -> bool:
    return n.op_type in QLINEAR_BINARY and n.domain == "com.microsoft" and len(n.inputs) > 3


def channels_last(nodes) -> bool:
    """Does onnxruntime run this graph's quantized ops channels-last (a QLinearConv in it: module text)?"""
    return any(n.op_type in NHWC_ROOTS and not n.scope for n in nodes)


def _nhwc(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    s = (1,) * (rank - len(shape)) + shape
    return (s[0], s[2], s[3], s[1])


def node_spans(n, nhwc: bool = False) -> int:
    """:func:`spans` of a node of :data:`BROADCAST_OPS` (default domain) or :data:`QLINEAR_BINARY`
    (com.microsoft), 0 for any other node or one whose shapes are not all known. ``nhwc``: the graph runs
    its quantized ops channels-last (:func:`channels_last`): a 4-D QLinear binary op is counted on its
    shapes in NHWC order."""
    if n.op_type in BROADCAST_OPS and not n.domain:
        ins = [t for t in n.inputs if t is not None]
    elif is_qlinear_binary(n):
        ins = [n.inputs[0], n.inputs[3]]
    else:
        return 0
    out = static_shape(n.outputs[0]) if n.outputs else None
    shapes = [static_shape(t) for t in ins]
    if out is None or len(shapes) < 2 or any(s is None or len(s) > len(out) for s in shapes):
        return 0
    if nhwc and is_qlinear_binary(n) and len(out) == 4:
        return spans(_nhwc(out, 4), [_nhwc(s, 4) for s in shapes])
    return spans(out, shapes)


__all__ = ["BROADCAST_OPS", "QLINEAR_BINARY", "QLINEAR_SPAN_KEY", "SPAN_KEY", "channels_last", "is_qlinear_binary",
           "node_spans", "spans"]
