"""Element types: size in bits, names, and whether arithmetic on them is floating point.

One table, keyed by ``onnx.TensorProto`` element type, used by every module that turns
element counts into bytes.
"""

from __future__ import annotations

from functools import lru_cache

from onnx import TensorProto as _T

#: bits per element; STRING has no fixed size (None).
_BITS: dict[int, int | None] = {
    _T.FLOAT: 32, _T.UINT8: 8, _T.INT8: 8, _T.UINT16: 16, _T.INT16: 16, _T.INT32: 32,
    _T.INT64: 64, _T.STRING: None, _T.BOOL: 8, _T.FLOAT16: 16, _T.DOUBLE: 64,
    _T.UINT32: 32, _T.UINT64: 64, _T.COMPLEX64: 64, _T.COMPLEX128: 128, _T.BFLOAT16: 16,
}
for _name, _bits in (
    ("FLOAT8E4M3FN", 8), ("FLOAT8E4M3FNUZ", 8), ("FLOAT8E5M2", 8), ("FLOAT8E5M2FNUZ", 8),
    ("UINT4", 4), ("INT4", 4), ("FLOAT4E2M1", 4), ("FLOAT8E8M0", 8), ("UINT2", 2), ("INT2", 2),
):
    if hasattr(_T, _name):
        _BITS[getattr(_T, _name)] = _bits

#: every element type onnx defines (UNDEFINED, 0, excluded)
_NAMES = frozenset(v for v in _T.DataType.values() if v)

_FLOATING = {
    _T.FLOAT, _T.FLOAT16, _T.DOUBLE, _T.BFLOAT16, _T.COMPLEX64, _T.COMPLEX128,
    *(getattr(_T, n) for n in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                               "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(_T, n)),
}


def bits(elem_type: int) -> int | None:
    """Bits per element, or None when unknown or variable (strings, undefined)."""
    return _BITS.get(elem_type)


def nbytes(elem_type: int, numel: int) -> int:
    """Bytes taken by ``numel`` elements, rounded up to whole bytes for sub-byte types.

    Unknown element sizes (strings, undefined type) count as 0 bytes; callers that care
    check :func:`bits` first.
    """
    b = _BITS.get(elem_type)
    if b is None:
        return 0
    return (numel * b + 7) // 8


def is_float(elem_type: int) -> bool:
    """True for floating-point (and complex) element types: arithmetic on them is FLOPs."""
    return elem_type in _FLOATING


def known(elem_type) -> bool:
    """True for an element type ONNX defines (a number a file may hold is not one: ``Cast(to=10**12)``)."""
    return elem_type.__class__ is int and elem_type in _NAMES


@lru_cache(maxsize=1024)
def name(elem_type: int) -> str:
    """Lower-case short name: ``float32``, ``int8``, ``bfloat16`` ... (cached: one call per tensor);
    ``undefined`` for 0 and for a number ONNX gives no type (what a hostile file may hold)."""
    if not known(elem_type):
        return "undefined"
    raw = _T.DataType.Name(elem_type).lower()
    return {"float": "float32", "double": "float64", "float16": "float16"}.get(raw, raw)


@lru_cache(maxsize=None)
def elem_type(short_name: str) -> int:
    """The ``onnx.TensorProto`` element type of a :func:`name` (``float32`` -> FLOAT); 0 when unknown."""
    for t in _BITS:
        if name(t) == short_name:
            return t
    return 0
