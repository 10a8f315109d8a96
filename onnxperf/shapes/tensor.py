"""The type of one tensor as the shape engines know it: its element type and shape (a dim is an ``int``
when known, a ``str`` for a symbol such as ``batch`` or an expression such as ``2*seq``, ``None`` when
unknown), and how a type annotation of the model reads as one."""

from __future__ import annotations

import re

import onnx

from onnxperf.base import dtypes
from onnxperf.base.frozen import getter

Dim = int | str | None

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]*")


class TensorInfo(tuple):
    """A tensor's element type and shape. ``shape`` is None when even the rank is unknown.

    An immutable record (a tuple subclass: one per tensor of the graph, so it is kept small and
    quick to build, see :func:`onnxperf.base.frozen.record`), with :attr:`is_static` computed once."""

    __slots__ = ()
    _fields = ("name", "elem_type", "shape", "is_static")

    def __new__(cls, name: str, elem_type: int, shape: tuple[Dim, ...] | None) -> TensorInfo:
        return tuple.__new__(cls, (name, elem_type, shape,
                                   shape is not None and all(isinstance(d, int) for d in shape)))

    name = getter(0)
    elem_type = getter(1)
    shape = getter(2)
    is_static = getter(3, "Every dim a known integer.")

    @classmethod
    def of(cls, name: str, elem_type: int, shape: tuple[Dim, ...] | None, static: bool) -> TensorInfo:
        """A TensorInfo whose :attr:`is_static` the caller already knows: shapes read from a type
        cache or from initializer dims skip the per-tensor check."""
        return tuple.__new__(cls, (name, elem_type, shape, static))

    def __repr__(self) -> str:
        return f"TensorInfo(name={self[0]!r}, elem_type={self[1]!r}, shape={self[2]!r})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and tuple.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __getnewargs__(self):
        return tuple(self)[:3]

    @property
    def numel(self) -> int:
        """Element count; only valid for static shapes (exact Python int, never overflows)."""
        n = 1
        for d in self.shape or ():
            n *= d  # type: ignore[operator]
        return n

    @property
    def nbytes(self) -> int:
        return dtypes.nbytes(self.elem_type, self.numel)

    def symbols(self) -> set[str]:
        """Names of the symbols this shape still depends on (``?`` for an unknown dim or rank)."""
        if self.shape is None:
            return {"?"}
        out: set[str] = set()
        for d in self.shape:
            if d is None:
                out.add("?")
            elif isinstance(d, str):
                names = [m for m in _IDENT.findall(d) if not m.isdigit()]
                out.update(names or ["?"])
        return out


_KNOWN_TYPES = frozenset(onnx.TensorProto.DataType.values())


def info_of(vi: onnx.ValueInfoProto, cache: dict[bytes, tuple[int, tuple[Dim, ...] | None, bool] | None] | None = None
             ) -> TensorInfo | None:
    """What a ValueInfoProto says of its tensor (None for non-tensor types). ``cache`` maps a
    serialized TypeProto to its (element type, shape): the tensors of a network share a few
    types, and one serialization costs a tenth of reading the type field by field."""
    t = vi.type
    if cache is not None:
        key = t.SerializeToString()
        hit = cache.get(key, False)
        if hit is False:
            hit = cache[key] = _type_of(t)
    else:
        hit = _type_of(t)
    return None if hit is None else TensorInfo.of(vi.name, *hit)


def _type_of(t: onnx.TypeProto) -> tuple[int, tuple[Dim, ...] | None, bool] | None:
    """(element type, shape, whether the shape is static) of a tensor type; None otherwise."""
    if not t.HasField("tensor_type"):
        if t.HasField("sparse_tensor_type"):
            tt = t.sparse_tensor_type
        else:
            return None
    else:
        tt = t.tensor_type
    if tt.HasField("shape"):
        shape = []
        for d in tt.shape.dim:
            kind = d.WhichOneof("value")
            if kind == "dim_value":
                # a negative declared dim (some converters write -1 for "dynamic") is not a size
                shape.append(int(d.dim_value) if d.dim_value >= 0 else None)
            else:
                shape.append(d.dim_param if kind == "dim_param" and d.dim_param else None)
        shape_t: tuple[Dim, ...] | None = tuple(shape)
    else:
        shape_t = None
    et = tt.elem_type
    static = shape_t is not None and all(isinstance(d, int) for d in shape_t)
    return int(et) if et in _KNOWN_TYPES else 0, shape_t, static  # not an ONNX type: undefined


def _knownness(ti: TensorInfo | None) -> tuple[int, int, int]:
    if ti is None:
        return (-1, 0, 0)
    if ti.shape is None:
        return (0, 0, int(ti.elem_type != 0))
    return (1, sum(isinstance(d, int) for d in ti.shape) - sum(d is None for d in ti.shape),
            int(ti.elem_type != 0))


__all__ = ["Dim", "TensorInfo", "info_of"]
