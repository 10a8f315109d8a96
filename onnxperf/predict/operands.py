"""Transposes a GEMM reads through: the one place the rule is written.

A Transpose that swaps the last two axes of its input (``perm`` = 0, 1, ..., r-1, r-2; absent ``perm`` on a
2-D input) and whose output only MatMul / Gemm nodes read (and no graph output is) runs no kernel of its
own on the runtimes onnxperf models: the GEMM reads its operand transposed. onnxruntime's
MatMulTransposeFusion makes the pair a FusedMatMul with ``transB`` (``transA``) on every provider; cuBLAS
and CUTLASS take a transpose flag; TensorRT's MatrixMultiply layer a ``kTRANSPOSE`` operation. Attention's
scores Q·Kᵀ as the exporters write them are the common case: on onnxruntime's CUDA provider (an H200) a
Llama decode step runs no Transpose kernel for K (benchmarks/results/ort_cuda.md); on its CPU provider the
same pair runs as one FusedMatMul.

Not when the Transpose's input comes from another Transpose, directly or through ops a transpose passes
through (Gather, Split, Slice, Squeeze, Unsqueeze, Identity: :data:`PASSED`): onnxruntime's transpose
optimizer first moves the earlier one down and merges the two into a permutation that is no longer a
swap of the last two axes, which no GEMM flag reads (Swin-T's ``qkv.permute(2, 0, 3, 1, 4)[1]`` then
``k.transpose(-2, -1)``: onnxruntime makes no FusedMatMul of its 12, where it makes one of each of a
Llama or GPT-2 decode step's 4).
"""

from __future__ import annotations

from onnxperf.cost.walker import COUNTED
from onnxperf.predict.tensors import links

#: GEMMs that read an operand transposed for free (a flag, or FusedMatMul's transA/transB)
TRANSPOSING_READERS = frozenset({"MatMul", "Gemm", "FusedMatMul"})
#: ops onnxruntime's transpose optimizer moves a Transpose through (to merge it with a later one)
PASSED = frozenset({"Gather", "Split", "Slice", "Squeeze", "Unsqueeze", "Identity"})


def _perm(proto, rank: int) -> list[int]:
    """A Transpose node's ``perm`` (absent: the axes reversed)."""
    for at in proto.attribute:
        if at.name == "perm":
            return list(at.ints)
    return list(range(rank))[::-1]


def transposed_operands(a) -> frozenset[str]:
    """Keys of the main-graph Transposes a GEMM reads through (module text)."""
    if a.loaded is None:
        return frozenset()
    protos = a.loaded.graph.nodes
    graph_outputs = {o.name for o in a.model.outputs}
    producer, readers = links(a.main_nodes)

    def after_a_transpose(name: str) -> bool:
        p = producer.get(name)
        while p is not None and p.op_type in PASSED and p.inputs and p.inputs[0] is not None:
            p = producer.get(p.inputs[0].name)
        return p is not None and p.op_type == "Transpose"

    out = set()
    for n in a.main_nodes:
        if n.op_type != "Transpose" or n.domain or n.status != COUNTED or not n.inputs or n.inputs[0] is None \
                or not n.outputs or n.outputs[0] is None:
            continue
        shape, name = n.inputs[0].shape, n.outputs[0].name
        if shape is None or len(shape) < 2 or name in graph_outputs:
            continue
        r = len(shape)
        if _perm(protos[n.id], r) != [*range(r - 2), r - 1, r - 2]:
            continue
        users = readers.get(name, ())
        if users and all(u.op_type in TRANSPOSING_READERS for u in users) and not after_a_transpose(n.inputs[0].name):
            out.add(n.key)
    return frozenset(out)
