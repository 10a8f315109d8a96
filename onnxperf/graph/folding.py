"""Nodes that a runtime computes once, when it loads the model (constant folding).

A node folds when it is deterministic, has no subgraph, and every input it has is a constant: an
initializer that cannot be fed at run time (one not also listed as a graph input), the output of
a ``Constant`` node, or the output of a node that folds. With ``static_shape`` given, ``Shape``
and ``Size`` of a tensor whose shape is fully known fold too, as onnxruntime's constant folding
does once the model's dims are fixed: the shape arithmetic that exporters emit (Shape → Gather →
Unsqueeze → Concat → Reshape) is then gone before the first run.

Used by the lint that flags foldable subgraphs (``check``, OP004, constants only) and by the
roofline of a spec calibrated on a runtime that folds (``fusion.constant_folding``).
"""

from __future__ import annotations

from collections.abc import Callable

from onnxperf.graph.loader import GraphIR

#: ops whose result on constant inputs is not a constant, or is kept unfolded on purpose
#: (QDQ quantization keeps DequantizeLinear on constant weights for the runtime to fuse)
NOT_FOLDABLE = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                          "Multinomial", "Bernoulli", "DequantizeLinear", "QuantizeLinear", "Constant",
                          "If", "Loop", "Scan", "SequenceEmpty"})
#: ops whose output depends only on the input's shape
SHAPE_OF = frozenset({"Shape", "Size"})


def foldable_nodes(g: GraphIR, static_shape: Callable[[str], bool] | None = None) -> list[int]:
    """Indices of the nodes of ``g`` that fold, in execution order (see the module docstring)."""
    overridable = set(g.inputs)  # an initializer also listed as a graph input can be fed at run time
    const = {name for name in g.initializers if name not in overridable} | set(g.constants)
    out: list[int] = []
    for i in g.order:
        n = g.nodes[i]
        present = [x for x in n.input if x]
        if not present or n.op_type in NOT_FOLDABLE or n.domain not in ("", "ai.onnx") \
                or any(k[0] == i for k in g.subgraphs):
            continue
        if all(x in const for x in present) or (
                static_shape is not None and n.op_type in SHAPE_OF and static_shape(present[0])):
            out.append(i)
            const.update(o for o in n.output if o)
    return out
