"""Matrix products and matmul-like linear algebra: MatMul, Gemm, MatMulInteger,
QLinearMatMul, Einsum, Det (ai.onnx).

Batch dims broadcast as numpy does (``numpy.broadcast_shapes``), never by hand.
"""

from __future__ import annotations

import numpy as np

from onnxperf.base import dtypes
from onnxperf.cost.ops.quant import REQUANT_OPS
from onnxperf.shapes.einsum import einsum_labels, einsum_output_shape
from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, arith, prod, rule


def matmul_macs(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> int:
    """MACs of ``numpy.matmul(a, b)``: ``prod(batch) · M · N · K``.

    1-D operands are promoted as numpy does (a: [K] -> [1,K]; b: [K] -> [K,1]); batch dims
    broadcast with ``numpy.broadcast_shapes``.
    """
    a = (1, *a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b = (*b_shape, 1) if len(b_shape) == 1 else tuple(b_shape)
    m, k = a[-2], a[-1]
    n = b[-1]
    batch = np.broadcast_shapes(a[:-2], b[:-2]) if (len(a) > 2 or len(b) > 2) else ()
    return prod(batch) * m * n * k


@rule("MatMul", family="matmul")
def matmul(n: NodeView) -> OpCost:
    """MatMul: MACs = prod(batch)·M·N·K; FLOPs = 2·MACs."""
    macs = matmul_macs(n.inp(0).shape, n.inp(1).shape)
    return arith(2 * macs, n.inp(0).elem_type, macs=macs)


@rule("Gemm", family="matmul")
def gemm(n: NodeView) -> OpCost:
    """Gemm: Y = alpha·A'·B' + beta·C with A' = [M,K], B' = [K,N].
    MACs = M·N·K; FLOPs = 2·MACs + M·N (alpha ≠ 1) + M·N (C given: add) + M·N (beta ≠ 1, C given)."""
    a, b = n.inp(0), n.inp(1)
    m, k = (a.shape[1], a.shape[0]) if n.attr("transA", 0) else (a.shape[0], a.shape[1])
    nn = b.shape[0] if n.attr("transB", 0) else b.shape[1]
    macs = m * nn * k
    mn = m * nn
    extra = (mn if n.attr("alpha", 1.0) != 1.0 else 0)
    if n.has_input(2):
        extra += mn + (mn if n.attr("beta", 1.0) != 1.0 else 0)
    return arith(2 * macs + extra, a.elem_type, macs=macs)


@rule("MatMulInteger", family="matmul")
def matmul_integer(n: NodeView) -> OpCost:
    """MatMulInteger: MACs as MatMul; int ops = 2·MACs + one subtract per element of A and B
    when their zero points are given. No FLOPs."""
    a, b = n.inp(0), n.inp(1)
    macs = matmul_macs(a.shape, b.shape)
    zp = (a.numel if n.has_input(2) else 0) + (b.numel if n.has_input(3) else 0)
    return OpCost(macs=macs, int_ops=2 * macs + zp)


@rule("QLinearMatMul", family="matmul")
def qlinear_matmul(n: NodeView) -> OpCost:
    """QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): MACs as MatMul on
    integers; int ops = 2·MACs + one zero-point subtract per element of A and of B (as
    MatMulInteger; the zero points are required inputs here); requantizing each output
    costs REQUANT_OPS = 5 FLOPs (quant.py: scale multiply, round, zero-point add, saturate)."""
    a, b, y = n.inp(0), n.inp(3), n.out(0)
    macs = matmul_macs(a.shape, b.shape)
    return OpCost(macs=macs, int_ops=2 * macs + a.numel + b.numel, flops=REQUANT_OPS * y.numel)


def einsum_cost(equation: str, shapes: list[tuple[int, ...]]) -> tuple[int, int]:
    """(MACs, other ops) of an einsum: labels only one operand has are summed out first, then
    the operands are multiplied pairwise, left to right (as onnxruntime and torch.einsum do).

    Summing out: a label that one operand holds and neither the output nor any other operand
    has is not a contraction, it is a sum over that operand alone: ops = prod(sizes of the
    operand's distinct labels) − prod(sizes of those it keeps) adds (``ij,k->i``: I·J − I adds
    for j, K − 1 for k). Diagonals (``ii->i``) are gathers (0 ops); a lone operand costs only
    this step (``ij->`` = I·J − 1; a transpose ``ij->ji`` = 0).
    A pairwise step that contracts a label (one that neither the output nor a later operand
    has) is matmul work: MACs = the product of the sizes of every label of either operand.
    A step that contracts nothing (an outer product ``i,j->ij``, a Hadamard product
    ``ij,ij->ij``, the ``i`` by scalar product left of ``ij,k->i``) is elementwise: 1 multiply
    per product element, no MACs.
    """
    labelled, out_labels, sizes = einsum_labels(equation, shapes)
    if not labelled:
        return 0, 0
    owners: dict[str, int] = {}
    for labels in labelled:
        for lab in set(labels):
            owners[lab] = owners.get(lab, 0) + 1
    macs = ops = 0
    reduced = []
    for labels in labelled:
        distinct = list(dict.fromkeys(labels))
        kept = [lab for lab in distinct if lab in out_labels or owners[lab] > 1]
        if len(kept) < len(distinct):
            ops += max(prod(sizes[lab] for lab in distinct) - prod(sizes[lab] for lab in kept), 0)
        reduced.append(kept)
    acc = reduced[0]
    for i, nxt in enumerate(reduced[1:], start=1):
        union = list(dict.fromkeys(acc + nxt))
        later = {lab for labels in reduced[i + 1:] for lab in labels}
        kept = [lab for lab in union if lab in out_labels or lab in later]
        products = prod(sizes[lab] for lab in union)
        if len(kept) < len(union):
            macs += products
        else:
            ops += products
        acc = kept
    return macs, ops


def einsum_macs(equation: str, shapes: list[tuple[int, ...]]) -> int:
    """MACs of :func:`einsum_cost`."""
    return einsum_cost(equation, shapes)[0]


@rule("Einsum", family="matmul", outputs_may_be_unknown=True)
def einsum(n: NodeView) -> OpCost:
    """Einsum: labels only one operand has summed out first (1 add per element summed out,
    diagonals free), then pairwise, left to right (:func:`einsum_cost`): MACs of the contracting
    steps, FLOPs = 2·MACs + the adds of the sums + 1 per product element of the steps that
    contract nothing (outer and Hadamard products). Needs only the input shapes: when shape
    inference left the output unknown (an implicit output with an ellipsis), bytes written are
    those of :func:`einsum_output_shape`."""
    shapes = [t.shape for t in n.present_inputs]
    equation = n.attr("equation", "")
    try:
        macs, ops = einsum_cost(equation, shapes)
    except ValueError as exc:  # an equation the ONNX spec does not allow: no runtime runs it
        raise BadNode(str(exc)) from exc
    written = None
    if not n.has_output(0):
        written = dtypes.nbytes(n.inp(0).elem_type, prod(einsum_output_shape(equation, shapes)))
    return arith(2 * macs + ops, n.inp(0).elem_type, macs=macs, bytes_written=written)


def det_ops(m: int) -> tuple[int, int]:
    """(MACs, ops) of the determinant of one M×M matrix by LU with partial pivoting.

    Eliminating column j leaves a (M−1−j)² trailing block: with r = M − 1 − j it costs
    r pivot compares, r divides (the multipliers) and r² multiply-subtracts (MACs, 2 ops
    each); the determinant is then the product of the M diagonal entries (M − 1 multiplies).
    MACs = Σ r², ops = Σ (2r + 2r²) + (M − 1), r = 1 .. M−1.
    """
    if m <= 1:
        return 0, 0
    sq = (m - 1) * m * (2 * m - 1) // 6
    lin = (m - 1) * m // 2
    return sq, 2 * lin + 2 * sq + (m - 1)


@rule("Det", family="matmul")
def det(n: NodeView) -> OpCost:
    """Det of X [*, M, M]: batch = prod(*) matrices, each costing :func:`det_ops` (LU with
    partial pivoting, matmul-like work: about M³/3 MACs, (2/3)·M³ FLOPs; the row swaps are
    data movement, not counted)."""
    x = n.inp(0)
    batch = prod(x.shape[:-2])
    macs, ops = det_ops(x.shape[-1])
    return arith(batch * ops, x.elem_type, macs=batch * macs)
