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
node that runs its own broadcast kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _static(t) -> tuple[int, ...] | None:
    if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return None
    return tuple(t.shape)


def node_spans(n) -> int:
    """:func:`spans` of a node of :data:`BROADCAST_OPS` (default domain) or :data:`QLINEAR_BINARY`
    (com.microsoft), 0 for any other node or one whose shapes are not all known."""
    if n.op_type in BROADCAST_OPS and not n.domain:
        ins = [t for t in n.inputs if t is not None]
    elif n.op_type in QLINEAR_BINARY and n.domain == "com.microsoft" and len(n.inputs) > 3:
        ins = [n.inputs[0], n.inputs[3]]
    else:
        return 0
    out = _static(n.outputs[0]) if n.outputs else None
    shapes = [_static(t) for t in ins]
    if out is None or len(shapes) < 2 or any(s is None or len(s) > len(out) for s in shapes):
        return 0
    return spans(out, shapes)


__all__ = ["BROADCAST_OPS", "QLINEAR_BINARY", "node_spans", "spans"]
