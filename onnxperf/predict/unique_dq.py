"""onnxruntime gives every reader of a DequantizeLinear its own copy of it.

Before any optimization level runs, ``InferenceSession::TransformGraph`` applies
``EnsureUniqueDQForNodeUnit`` (``onnxruntime/core/optimizer/qdq_transformer/ensure_unique_dq_for_node_unit.cc``;
off only with the session option ``session.disable_quant_qdq = 1``): a DequantizeLinear (ONNX domain, or
com.microsoft's) whose output feeds several node inputs is duplicated, so that each QDQ node unit has a
DequantizeLinear of its own. With e the input edges its output feeds in the main graph (a node reading it
twice counts twice) and g = 1 when the output is also a graph output (0 otherwise), onnxruntime runs

    k = e + g   DequantizeLinear kernels   (when e ≥ 2, or e ≥ 1 and g = 1; one otherwise)

each reading the quantized tensor and writing the whole float tensor: the first reader keeps the original
node unless the graph output needs it, every other edge gets a copy (``<name>/duplicated``,
``<name>/duplicated_token_N`` in the profile). Measured on onnxruntime 1.32 here: the ViT-B/16 QOperator export
runs 18 such copies (1.6 ms of 88 ms), the QDQ ResNet-18 8 (0.23 ms of 17 ms).

Later QDQ rewrites may absorb a copy into a quantized kernel (a copy feeding a Gather whose output is
requantized at the same scale, a QDQ Conv): the roofline models the QDQ Conv only
(:func:`onnxperf.predict.roofline.fusions`, whose DequantizeLinear nodes are read by the conv alone, k = 1),
so a copy that a drop rule removes is still counted (the ViT-B/16 QOperator export: 24 counted, 18 run).
"""

from __future__ import annotations

from onnxperf.predict.tensors import links

#: the (domain, op type) pairs onnxruntime's ``QDQ::MatchDQNode`` accepts
DQ_OPS = frozenset({("", "DequantizeLinear"), ("com.microsoft", "DequantizeLinear")})


def dq_copies(nodes, graph_outputs: frozenset[str] | set[str]) -> dict[str, int]:
    """Node key -> k, the DequantizeLinear kernels onnxruntime runs for it (module docstring), for every
    main-graph DequantizeLinear that runs more than one; ``nodes`` the main-graph nodes, ``graph_outputs``
    the names of the graph's outputs."""
    _, users = links(nodes)
    out: dict[str, int] = {}
    for n in nodes:
        if (n.domain or "", n.op_type) not in DQ_OPS or not n.outputs or n.outputs[0] is None:
            continue
        name = n.outputs[0].name
        edges = len(users.get(name, ()))
        k = edges + (1 if name in graph_outputs and edges else 0)
        if k > 1:
            out[n.key] = k
    return out


__all__ = ["DQ_OPS", "dq_copies"]
