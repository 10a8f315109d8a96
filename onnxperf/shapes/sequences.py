"""Sequence values followed through a graph: element type, element shape and length.

ONNX sequences (``seq(tensor)``) carry no shape in a model's type annotations, and ONNX's inference
gives only their element type. A TorchScript export of ``tokens.append(t)`` in a scripted loop is a
``SequenceEmpty`` carried by a ``Loop`` whose body does ``SequenceInsert``, then a
``ConcatFromSequence`` after the loop: its output shape is the element shape times the number of
inserts, which the loop's trip count decides. These pure functions give what each sequence op makes
of the sequences and tensors it reads (the forward pass of :mod:`onnxperf.shapes.forward` applies
them in graph order; the Loop's carried sequences grow by the inserts of one run per iteration).

An element shape is a tuple of dims (``None`` where the elements disagree or it is not known); a
length is an int, or None when not known.
"""

from __future__ import annotations

from dataclasses import dataclass

Dim = int | str | None

#: the sequence ops this module shapes
SEQUENCE_OPS = frozenset({"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt",
                          "SequenceLength", "ConcatFromSequence", "SplitToSequence"})


@dataclass(frozen=True)
class SequenceInfo:
    """A sequence value: its elements' type and shape (None: rank unknown), and its length."""

    elem_type: int
    elem_shape: tuple[Dim, ...] | None
    length: int | None


def unify(a: tuple[Dim, ...] | None, b: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    """The shape that covers two elements: dims they agree on, None where they do not."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def construct(elems: list[tuple[int, tuple[Dim, ...] | None]]) -> SequenceInfo:
    """SequenceConstruct(t1, ..., tn): n elements."""
    shape = elems[0][1] if elems else None
    for _, s in elems[1:]:
        shape = unify(shape, s)
    return SequenceInfo(elems[0][0] if elems else 0, shape, len(elems))


def insert(seq: SequenceInfo, elem_type: int, shape: tuple[Dim, ...] | None) -> SequenceInfo:
    """SequenceInsert(seq, t[, pos]): one more element (the first sets the element shape)."""
    new_shape = shape if seq.length == 0 else unify(seq.elem_shape, shape)
    return SequenceInfo(seq.elem_type or elem_type, new_shape, None if seq.length is None else seq.length + 1)


def erase(seq: SequenceInfo) -> SequenceInfo:
    """SequenceErase(seq[, pos]): one element fewer."""
    return SequenceInfo(seq.elem_type, seq.elem_shape, None if not seq.length else seq.length - 1)


def concat(seq: SequenceInfo, axis: int, new_axis: bool) -> tuple[Dim, ...] | None:
    """ConcatFromSequence's output shape: the elements joined along ``axis`` (a new axis of the
    sequence's length with ``new_axis``), every element of the element shape."""
    s, n = seq.elem_shape, seq.length
    if s is None or n is None:
        return None
    rank = len(s) + (1 if new_axis else 0)
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        return None
    if new_axis:
        return s[:a] + (n,) + s[a:]
    d = s[a]
    return s[:a] + ((d * n) if isinstance(d, int) else None,) + s[a + 1:]


def split(shape: tuple[Dim, ...], elem_type: int, axis: int, keepdims: bool,
          split_value: list[int] | None, has_split: bool) -> SequenceInfo | None:
    """SplitToSequence(input[, split]): pieces of ``shape`` along ``axis``."""
    rank = len(shape)
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        return None
    d = shape[a]
    if not has_split:
        if not isinstance(d, int):
            return None
        piece = shape[:a] + ((1,) if keepdims else ()) + shape[a + 1:]
        return SequenceInfo(elem_type, piece, d)
    if split_value is None:
        return SequenceInfo(elem_type, shape[:a] + (None,) + shape[a + 1:], None)
    if len(split_value) == 1 and isinstance(d, int) and split_value[0] > 0:
        k = split_value[0]
        n = -(-d // k)
        dim = k if d % k == 0 else None
        return SequenceInfo(elem_type, shape[:a] + (dim,) + shape[a + 1:], n)
    dims = set(split_value)
    return SequenceInfo(elem_type, shape[:a] + ((dims.pop() if len(dims) == 1 else None),) + shape[a + 1:],
                        len(split_value))


def grown(start: SequenceInfo, after_one_run: SequenceInfo, trips: int | None) -> SequenceInfo:
    """A loop-carried sequence after ``trips`` runs of a body that takes ``start`` to
    ``after_one_run`` in one run (the same number of inserts every run)."""
    if trips is None or start.length is None or after_one_run.length is None:
        return SequenceInfo(after_one_run.elem_type or start.elem_type, after_one_run.elem_shape, None)
    step = after_one_run.length - start.length
    shape = after_one_run.elem_shape if start.length == 0 else unify(start.elem_shape, after_one_run.elem_shape)
    return SequenceInfo(after_one_run.elem_type or start.elem_type, shape if trips else start.elem_shape,
                        start.length + trips * step)


__all__ = ["SEQUENCE_OPS", "SequenceInfo", "concat", "construct", "erase", "grown", "insert", "split", "unify"]
