"""JSON text for large analyses: indented like ``json.dumps(indent=2)`` down to the tables, and
each table row (a dict inside a list: a node, an op type, a tensor) on one line of its own.

Rows stay greppable and diffable line by line, the file is about a third of the fully indented
one, and the rows are written by the C encoder: with ``indent`` set the standard library falls back
to its pure-Python encoder (~0.2 s for the 6,000 nodes of a Swin-T, more than half its analysis).
Same data, key order and determinism as before; only the whitespace differs."""

from __future__ import annotations

import json
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def _not_json(o: Any) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _row_encoder():
    """One value as compact JSON text (``", "`` and ``": "`` separators, non-ASCII kept): the C
    encoder made once, not once per row as ``JSONEncoder.encode`` makes it."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the standard library's encoder
        return json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
    enc = make(None, _not_json, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(enc(value, 0))


_ROW = _row_encoder()


def dumps(obj: Any) -> str:
    """``obj`` as JSON text with a final newline (see the module docstring)."""
    return _dump(obj, "") + "\n"


def _dump(x: Any, pad: str) -> str:
    if isinstance(x, dict):
        if not x:
            return "{}"
        inner = pad + "  "
        return "{\n" + ",\n".join(f"{inner}{_ROW(str(k) if not isinstance(k, str) else k)}: {_dump(v, inner)}"
                                  for k, v in x.items()) + "\n" + pad + "}"
    if isinstance(x, (list, tuple)):
        if not x:
            return "[]"
        if all(isinstance(v, _SCALARS) for v in x):
            return _ROW(x)
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + (_ROW(v) if isinstance(v, dict) else _dump(v, inner)) for v in x) \
            + "\n" + pad + "]"
    return _ROW(x)
