"""JSON text for large analyses: indented like ``json.dumps(indent=2)`` down to the tables, and
each table row (a dict inside a list: a node, an op type, a tensor) on one line of its own.

Rows stay greppable and diffable line by line, the file is about a third of the fully indented
one, and the rows are written by the C encoder: with ``indent`` set the standard library falls back
to its pure-Python encoder (~0.2 s for the 6,000 nodes of a Swin-T, more than half its analysis).
Same data, key order and determinism as before; only the whitespace differs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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


def iter_dumps(obj: Any, batch: int = 2048) -> Iterator[str]:
    """The text of :func:`dumps` in pieces, for writing without holding it whole: an
    :class:`Encoded` table is produced and laid out ``batch`` rows at a time (a million-node
    analysis is some hundreds of MB of JSON text)."""
    yield from _iter_dump(obj, "", batch)
    yield "\n"


def _iter_dump(x: Any, pad: str, batch: int) -> Iterator[str]:
    if isinstance(x, dict) and x:
        inner = pad + "  "
        sep = "{\n"
        for k, v in x.items():
            yield f"{sep}{inner}{_ROW(str(k) if not isinstance(k, str) else k)}: "
            yield from _iter_dump(v, inner, batch)
            sep = ",\n"
        yield "\n" + pad + "}"
    elif x.__class__ is Encoded and len(x):
        inner = pad + "  "
        sep = ",\n" + inner
        lead = "[\n" + inner
        rows: list[str] = []
        for row in x:
            rows.append(row)
            if len(rows) == batch:
                yield lead + sep.join(rows)
                lead, rows = sep, []
        if rows:
            yield lead + sep.join(rows)
        yield "\n" + pad + "]"
    else:
        yield _dump(x, pad)


def _dump(x: Any, pad: str) -> str:
    if isinstance(x, dict):
        if not x:
            return "{}"
        inner = pad + "  "
        return "{\n" + ",\n".join(f"{inner}{_ROW(str(k) if not isinstance(k, str) else k)}: {_dump(v, inner)}"
                                  for k, v in x.items()) + "\n" + pad + "}"
    if x.__class__ is Encoded:
        if not len(x):
            return "[]"
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + row for row in x) + "\n" + pad + "]"
    if isinstance(x, (list, tuple)):
        if not x:
            return "[]"
        if all(isinstance(v, _SCALARS) for v in x):
            return _ROW(x)
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + (_ROW(v) if isinstance(v, dict) else _dump(v, inner)) for v in x) \
            + "\n" + pad + "]"
    return _ROW(x)


class Encoded:
    """A table whose rows are JSON text already (one per line, as :func:`dumps` writes rows), made
    when iterated: :func:`dumps` and :func:`iter_dumps` lay them out without encoding them again."""

    def __init__(self, n: int, rows: Callable[[], Iterator[str]]):
        self._n = n
        self._rows = rows

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        return self._rows()


def _num(x: Any) -> str:
    """An int, float or None as the JSON encoder writes it (any other type: the encoder's error)."""
    if x.__class__ is int:
        return int.__repr__(x)
    if x is None:
        return "null"
    return _ROW(x)


#: tensor records kept for reuse by the node writer before it starts afresh (bounded memory)
_TENSOR_CACHE = 1 << 16


def node_rows(nodes, node_dict) -> Encoded:
    """The JSON text of each node record, equal to ``_ROW(node_dict(n))``, written straight from
    the :class:`~onnxperf.cost.walker.NodeCost` fields when the table is iterated: no dict per node, and a
    tensor's record encoded once for its producer and its (nearby) consumers (about 3x faster than
    the dicts through the C encoder on a 6,000-node Swin). ``node_dict`` serves any node whose
    fields are not the plain types this writer expects, and defines the key order (tests compare
    the two). ``nodes``: a sequence (its length is the table's)."""
    s = json.encoder.encode_basestring
    seen: dict[int, tuple[Any, str]] = {}
    #: id(shape) -> (shape, dtype, the record's text after the name): tensors of one shape mostly
    #: share the tuple, and their element type
    tails: dict[int, tuple[Any, Any, str]] = {}

    def tensor(t) -> str:
        if t is None:
            return "null"
        hit = seen.get(id(t))
        if hit is None or hit[0] is not t:
            shape, dtype = t.shape, t.dtype
            tail = tails.get(id(shape))
            if tail is None or tail[0] is not shape or tail[1] != dtype or dtype.__class__ is not str:
                if shape is None:
                    text = "null"
                else:
                    text = "[" + ", ".join(int.__repr__(d) if d.__class__ is int else s(d) if d.__class__ is str
                                           else "null" if d is None else _ROW(d) for d in shape) + "]"
                if len(tails) > _TENSOR_CACHE:
                    tails.clear()
                tail = tails[id(shape)] = (shape, dtype, f', "dtype": {s(dtype)}, "shape": {text}}}')
            hit = seen[id(t)] = (t, f'{{"name": {s(t.name)}{tail[2]}')
        return hit[1]

    kinds: dict[tuple, str] = {}
    costs: dict[tuple, tuple[str, str]] = {}
    int_, bool_, str_ = int, bool, str
    num = int.__repr__
    ratio = float.__repr__  # the encoder's text of a finite float (a ratio of two ints always is)

    def rows() -> Iterator[str]:
        for n in nodes:
            if len(seen) > _TENSOR_CACHE:  # the records a producer shares with its nearby consumers
                seen.clear()
            nid, macs, flops, int_ops = n.id, n.macs, n.flops, n.int_ops
            br, bw, params, exact, since, note = n.bytes_read, n.bytes_written, n.params, n.exact, n.rule_since, n.note
            bound = n.bound
            if not (nid.__class__ is int_ and macs.__class__ is int_ and flops.__class__ is int_
                    and int_ops.__class__ is int_ and br.__class__ is int_ and bw.__class__ is int_
                    and params.__class__ is int_ and exact.__class__ is bool_ and note.__class__ is str_
                    and bound.__class__ is str_ and (since is None or since.__class__ is int_)):
                yield _ROW(node_dict(n))
                continue
            total = br + bw
            op_type, domain, family, status, scope = n.op_type, n.domain, n.family, n.status, n.scope
            kind = (op_type, domain, family, since, status, exact)
            mid = kinds.get(kind)
            if mid is None:  # the few (op, domain, family, rule, status, exactness) of a graph
                mid = kinds[kind] = (
                    f'"op_type": {s(op_type)}, "domain": {s(domain)}, "family": {s(family)}, '
                    f'"rule_since": {_num(since)}, "status": {s(status)}, '
                    f'"exact": {"true" if exact else "false"}, ')
            blocking = n.blocking
            # the figures and the tail of a row repeat from block to block: their text is made once
            ckey = (mid, macs, flops, int_ops, br, bw, params, blocking, note, bound)
            hit = costs.get(ckey)
            if hit is None:
                if len(costs) > _TENSOR_CACHE:
                    costs.clear()
                hit = costs[ckey] = (
                    f'{mid}"macs": {num(macs)}, "flops": {num(flops)}, "int_ops": {num(int_ops)}, '
                    f'"bytes_read": {num(br)}, "bytes_written": {num(bw)}, "params": {num(params)}, '
                    f'"intensity_flops_per_byte": {"null" if total == 0 else ratio(flops / total)}, "inputs": [',
                    f'], "blocking": [{", ".join([s(b) for b in blocking]) if blocking else ""}], "note": {s(note)}, '
                    f'"bound": {s(bound) if bound else "null"}}}')
            yield (
                f'{{"id": {num(nid)}, "key": {s(n.key) if scope else f"{chr(34)}{num(nid)}{chr(34)}"}, '
                f'"scope": {s(scope) if scope else chr(34) * 2}, "name": {s(n.name)}, {hit[0]}'
                f'{", ".join([tensor(t) for t in n.inputs])}], '
                f'"outputs": [{", ".join([tensor(t) for t in n.outputs])}{hit[1]}')

    return Encoded(len(nodes), rows)
