"""How the runtime keeps a decoder's KV cache: as the exported graph moves it, or in place.

An exported decode step concatenates the past cache with the new token's keys and values every step
(``present = Concat(past, new)``), often copies it again (a ``Transpose``, a ``Cast``, the ``Expand``
that repeats grouped KV heads), and attention then reads the copy: the step moves about 3-4x the
cache (2x with a fused GroupQueryAttention that still writes a whole present). A serving runtime
(vLLM's paged cache, TensorRT-LLM, onnxruntime-genai with a shared past/present buffer) keeps the
cache in place: each step appends the new token and attention reads the cache once, as stored.

:func:`in_place` re-expresses a decode step's costs under that runtime model, node by node, from the
cache inputs (the past) the recognizer found:

* a ``Concat`` of a cache with the new token is the append: it reads the new token (the non-cache
  inputs) and writes what the cache grows by (the output's bytes less the cache's), no longer the
  whole cache;
* a data-movement op of the cache (``KV_MOVES``: Transpose, Cast, Reshape, Expand, Unsqueeze, a
  Concat of the cache alone ...)
  runs no work (fused attention reads the cache in its stored layout and repeats grouped heads by
  indexing); it becomes ``zero_by_design`` with the note :data:`MOVE_NOTE`;
* any other node reading the cache (the attention MatMuls, a fused attention op) reads it once as
  stored: its bytes read lose what a copy added (a cache repeated 4x for grouped heads is read once);
* a node that writes a present from a past it reads (a fused attention op with past/present) writes
  the new token only: the past is the same buffer.

MACs and FLOPs do not change (the arithmetic is the same); bytes do. Every figure stays a sum over
nodes, so the totals, the memory traffic split and the roofline read the re-expressed nodes.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnxperf.cost.analysis import Costs
from onnxperf.cost.walker import ZERO
from onnxperf.predict.kv_names import EXPORTED, IN_PLACE, KV_RUNTIME_TEXT, KV_RUNTIMES

#: data-movement ops whose outputs are the cache again (copied, cast, reordered, repeated)
KV_MOVES = frozenset({"Concat", "Cast", "Transpose", "Reshape", "Expand", "Unsqueeze", "Squeeze", "Identity",
                      "Tile", "Slice"})
APPEND_NOTE = "in-place KV cache: appends the new token (reads it, writes what the cache grows by)"
MOVE_NOTE = "in-place KV cache: no work, fused attention reads the cache as stored"
READ_NOTE = "in-place KV cache: reads the cache once, as stored"


def _node(n, bytes_read: int, bytes_written: int, status: str | None = None, note: str | None = None):
    """A copy of NodeCost ``n`` with new byte counts (and status and note)."""
    return n._replace(bytes_read=bytes_read, bytes_written=bytes_written, status=status or n.status,
                      note=note if note is not None else n.note)


def in_place(a: Costs, caches: Iterable[str]) -> Costs:
    """``a`` (a decode step) with its KV cache kept in place (see the module docstring); ``caches``:
    the past-cache graph inputs. Nodes inside subgraph bodies are kept as they are."""
    tensors = a.tensors or {}

    def size(name: str | None) -> int | None:
        ti = tensors.get(name) if name else None
        return ti.nbytes if ti is not None and ti.is_static else None

    #: cache tensor -> the bytes of the cache it is a copy or view of (what the runtime stores once)
    stored: dict[str, int] = {}
    pasts: set[str] = set()
    for c in caches:
        s = size(c)
        if s is not None:
            stored[c] = s
            pasts.add(c)
    changed: dict[int, object] = {}
    for n in a.main_nodes:
        names = [i.name if i is not None else None for i in n.inputs]
        derived = [x for x in names if x in stored]
        if not derived:
            continue
        outs = [o.name for o in n.outputs if o is not None]
        if not n.domain and n.op_type == "Concat" and len(derived) < sum(x is not None for x in names):
            new = sum(size(x) or 0 for x in names if x is not None and x not in stored)
            old = sum(stored[x] for x in derived)
            grown = 0
            for o in outs:
                s = size(o)
                if s is not None:
                    stored[o] = s
                    grown += max(s - old, 0)
            # the new token in (as computed), and appended in the cache's own element type
            changed[id(n)] = _node(n, new, grown, note=APPEND_NOTE)
        elif not n.domain and n.op_type in KV_MOVES and names and names[0] in stored:
            for o in outs:
                stored[o] = stored[names[0]]
            changed[id(n)] = _node(n, 0, 0, ZERO, MOVE_NOTE)
        else:
            extra = 0
            for x in set(derived):
                s = size(x)
                if s is not None and s > stored[x]:
                    extra += s - stored[x]
            read = max(n.bytes_read - extra, 0)
            written = n.bytes_written
            past_read = sum(stored[x] for x in set(derived) if x in pasts)
            if past_read and any(o for o in outs if size(o) is not None and size(o) >= past_read):
                written = max(written - past_read, 0)  # the present is the past's buffer, grown by one token
            if read != n.bytes_read or written != n.bytes_written:
                changed[id(n)] = _node(n, read, written, note=(n.note + "; " if n.note else "") + READ_NOTE)
    if not changed:
        return a
    return a.with_nodes(tuple(changed.get(id(n), n) for n in a.nodes))


def shared_buffers(a: Costs) -> dict[str, tuple[str, bool]]:
    """Output -> (the input whose buffer keeps it, whether the buffer grows to the output's size), for
    the nodes :func:`in_place` re-expressed: the append grows the cache's own buffer by the new token,
    a copy of the cache is the cache, never materialized (for
    :func:`onnxperf.predict.memory.liveness`: the cache is held once, not as past and present)."""
    tensors = a.tensors or {}
    out: dict[str, tuple[str, bool]] = {}
    for n in a.main_nodes:
        if n.note not in (APPEND_NOTE, MOVE_NOTE) or not n.outputs or n.outputs[0] is None:
            continue
        ins = [i.name for i in n.inputs if i is not None]
        if n.note == APPEND_NOTE:  # the cache among the inputs: the largest (the new token is one)
            src = max(ins, key=lambda x: tensors[x].nbytes if x in tensors and tensors[x].is_static else -1)
        else:
            src = ins[0]
        out[n.outputs[0].name] = (src, n.note == APPEND_NOTE)
    return out


__all__ = ["APPEND_NOTE", "MOVE_NOTE", "READ_NOTE", "EXPORTED", "IN_PLACE", "KV_MOVES", "KV_RUNTIMES", "KV_RUNTIME_TEXT", "in_place", "shared_buffers"]
