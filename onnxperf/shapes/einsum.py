"""Einsum's labels and output shape: what an equation says of its operands' dims (shared by the shape
rules and the cost rule of :mod:`onnxperf.cost.ops.matmul`)."""

from __future__ import annotations


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def valid_equation(equation: str) -> bool:
    """What the ONNX spec allows: comma-separated terms of letters, at most one ellipsis each, an
    optional ``->`` and an output of letters that appear on the left (and the ellipsis)."""
    if not isinstance(equation, str):
        return False
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if "->" in rhs:
        return False
    left: set[str] = set()
    for term in lhs.split(","):
        if term.count("...") > 1:
            return False
        letters = term.replace("...", "", 1)
        if not set(letters) <= _LETTERS:
            return False
        left |= set(letters)
    if arrow:
        out = rhs.replace("...", "", 1)
        if rhs.count("...") > 1 or not set(out) <= left or len(set(out)) != len(out):
            return False
    return True


def einsum_labels(equation: str, shapes: list[tuple[int, ...]]
                  ) -> tuple[list[list[str]], set[str], dict[str, int]]:
    """(labels of each operand, output labels, size of each label). Ellipsis dims are named
    by position and broadcast; implicit mode (no ``->``) keeps the labels that appear once."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not valid_equation(equation) or len(terms) != len(shapes):
        raise ValueError(f"invalid einsum equation {equation!r} for {len(shapes)} operands")
    sizes: dict[str, int] = {}
    labelled: list[list[str]] = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            pre, post = term.split("...")
            n_ell = len(shape) - len(pre) - len(post)
            labels = list(pre) + [f"…{n_ell - i}" for i in range(n_ell)] + list(post)
        else:
            labels = list(term)
        if len(labels) != len(shape):
            raise ValueError(f"einsum term {term!r} does not match an operand of rank {len(shape)}")
        for lab, dim in zip(labels, shape):
            sizes[lab] = max(sizes.get(lab, 1), int(dim))
        labelled.append(labels)
    ellipsis = {lab for labels in labelled for lab in labels if lab.startswith("…")}
    if not arrow:
        counts: dict[str, int] = {}
        for labels in labelled:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        out_labels = {lab for lab, c in counts.items() if c == 1} | ellipsis
    else:
        out_labels = set(rhs.replace("...", "")) | ellipsis
    return labelled, out_labels, sizes




def einsum_output_shape(equation: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The output shape of an einsum: explicit mode follows the right-hand side; implicit mode
    (no ``->``) puts the broadcast ellipsis dims first, then the labels that appear once, in
    alphabetical order (the ONNX spec, as numpy)."""
    labelled, out_labels, sizes = einsum_labels(equation, shapes)
    n_ell = max((sum(lab.startswith("…") for lab in labels) for labels in labelled), default=0)
    ell = [sizes[f"…{n_ell - i}"] for i in range(n_ell)]
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if arrow:
        pre, _, post = rhs.partition("...") if "..." in rhs else (rhs, "", "")
        return (*(sizes[c] for c in pre), *(ell if "..." in rhs else ()), *(sizes[c] for c in post))
    return (*ell, *(sizes[c] for c in sorted(lab for lab in out_labels if not lab.startswith("…"))))


__all__ = ["einsum_labels", "einsum_output_shape", "valid_equation"]
