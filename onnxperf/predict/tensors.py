"""Small facts about the tensors and links of an analysis's nodes that the predictions share: a
tensor's bytes and elements (0 / None when its shape is not fully known), and who writes and reads
each tensor."""

from __future__ import annotations

from onnxperf.base import dtypes


def links(nodes) -> tuple[dict[str, object], dict[str, list]]:
    """(tensor name -> the node that writes it, tensor name -> the nodes that read it, in order)."""
    producer: dict[str, object] = {}
    users: dict[str, list] = {}
    for n in nodes:
        for o in n.outputs:
            if o is not None:
                producer[o.name] = n
        for i in n.inputs:
            if i is not None:
                users.setdefault(i.name, []).append(n)
    return producer, users


def tensor_bytes(t) -> int:
    """Bytes of a tensor with a fully known shape, else 0."""
    if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return 0
    numel = 1
    for d in t.shape:
        numel *= d
    return dtypes.nbytes(dtypes.elem_type(t.dtype), numel)


def static_shape(t) -> tuple[int, ...] | None:
    """A tensor's shape when every dim is known, else None."""
    if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return None
    return tuple(t.shape)


def _numel(t) -> int | None:
    if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return None
    k = 1
    for d in t.shape:
        k *= d
    return k


__all__ = ["links", "static_shape", "tensor_bytes"]
