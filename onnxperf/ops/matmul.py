"""Matrix products: MatMul, Gemm, MatMulInteger, QLinearMatMul, Einsum (ai.onnx).

Batch dims broadcast as numpy does (``numpy.broadcast_shapes``), never by hand.
"""

from __future__ import annotations

import numpy as np

from .registry import NodeView, OpCost, arith, prod, rule


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
    integers, int ops = 2·MACs + Y (zero-point add); requantizing costs 2 FLOPs per output."""
    a, b, y = n.inp(0), n.inp(3), n.out(0)
    macs = matmul_macs(a.shape, b.shape)
    return OpCost(macs=macs, int_ops=2 * macs + y.numel, flops=2 * y.numel)


def einsum_macs(equation: str, shapes: list[tuple[int, ...]]) -> int:
    """MACs of an einsum evaluated pairwise, left to right (as onnxruntime does): each
    contraction of operands costs the product of the sizes of every index that appears in
    either operand. A single-operand einsum (a transpose, trace or sum) costs no MACs.

    Ellipsis dims are named by position and broadcast.
    """
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    sizes: dict[str, int] = {}
    labelled: list[list[str]] = []
    for term, shape in zip(terms, shapes):
        labels: list[str] = []
        if "..." in term:
            pre, post = term.split("...")
            n_ell = len(shape) - len(pre) - len(post)
            labels = list(pre) + [f"…{len(shape) - len(pre) - len(post) - i}" for i in range(n_ell)] + list(post)
        else:
            labels = list(term)
        for lab, dim in zip(labels, shape):
            sizes[lab] = max(sizes.get(lab, 1), int(dim))
        labelled.append(labels)
    if not rhs and "->" not in eq:
        counts: dict[str, int] = {}
        for labels in labelled:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        out_labels = {lab for lab, c in counts.items() if c == 1 or lab.startswith("…")}
    else:
        out_labels = set(rhs.replace("...", "")) | {lab for labels in labelled for lab in labels if lab.startswith("…")}
    if len(labelled) < 2:
        return 0
    macs = 0
    acc = labelled[0]
    for i, nxt in enumerate(labelled[1:], start=1):
        union = list(dict.fromkeys(acc + nxt))
        macs += prod(sizes[lab] for lab in union)
        later = {lab for labels in labelled[i + 1:] for lab in labels}
        acc = [lab for lab in union if lab in out_labels or lab in later]
    return macs


@rule("Einsum", family="matmul")
def einsum(n: NodeView) -> OpCost:
    """Einsum: MACs from :func:`einsum_macs` (pairwise contraction, left to right);
    FLOPs = 2·MACs, or, for a single operand, one add per input element reduced."""
    shapes = [t.shape for t in n.present_inputs]
    macs = einsum_macs(n.attr("equation", ""), shapes)
    if macs == 0:
        x = n.inp(0)
        return arith(max(x.numel - n.out(0).numel, 0), x.elem_type)
    return arith(2 * macs, n.inp(0).elem_type, macs=macs)
