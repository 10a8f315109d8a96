"""Is this graph a decoder step with a KV cache? Which inputs are the cache, in what layout, and
which dims are batch, new tokens and past length.

Evidence, strongest first, every piece said in :attr:`DecoderStep.evidence`:

1. a graph input read at a KV-cache slot of an attention op: com.microsoft GroupQueryAttention
   (past_key 3, past_value 4: [B, Hkv, P, D]), MultiHeadAttention (6, 7: [B, H, P, D]),
   DecoderMaskedMultiHeadAttention (5, 6), Attention (4: past [2, B, H, P, D]); ai.onnx
   Attention from opset 23 (4, 5: [B, Hkv, P, D]);
2. a graph input concatenated (directly, or after a Cast) with the new keys or values: the Concat
   axis is the past axis (transformers' eager and sdpa attention through both torch exporters);
3. the input's name (``past_key_values.3.key``, ``past.0.value``, ``cache_k``), with a symbolic dim
   that every such input shares (the past length).

The past dim is a symbol of the cache inputs; batch is the dim they share with the token input
(``input_ids`` [batch, new], or ``inputs_embeds`` [batch, new, hidden]); of the remaining static
axes the last is the head dim and the other the KV heads. A separate symbol for the total length
(``attention_mask`` [batch, total_sequence], the legacy exporter's way) is bound to past + new.
Where the graph leaves a role ambiguous the user names it (:class:`Overrides`).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError
from onnxperf.graph.loader import LoadedModel
from onnxperf.shapes.tensor import _type_of

Dim = int | str | None

#: (domain, op type) -> {input slot: (kind, past axis, layout of a 4-D/5-D cache)}
ATTENTION_SLOTS: dict[tuple[str, str], dict[int, tuple[str, int, tuple[str, ...]]]] = {
    ("com.microsoft", "GroupQueryAttention"): {
        3: ("key", 2, ("batch", "kv_heads", "past", "head_dim")),
        4: ("value", 2, ("batch", "kv_heads", "past", "head_dim"))},
    ("com.microsoft", "MultiHeadAttention"): {
        6: ("key", 2, ("batch", "kv_heads", "past", "head_dim")),
        7: ("value", 2, ("batch", "kv_heads", "past", "head_dim"))},
    ("com.microsoft", "DecoderMaskedMultiHeadAttention"): {
        5: ("key", 2, ("batch", "kv_heads", "past", "head_dim")),
        6: ("value", 2, ("batch", "kv_heads", "past", "head_dim"))},
    ("com.microsoft", "Attention"): {
        4: ("kv", 3, ("kv", "batch", "kv_heads", "past", "head_dim"))},
    ("", "Attention"): {
        4: ("key", 2, ("batch", "kv_heads", "past", "head_dim")),
        5: ("value", 2, ("batch", "kv_heads", "past", "head_dim"))},
}

#: (domain, op type) -> {past input slot: the output that is its present}
PRESENT_SLOTS: dict[tuple[str, str], dict[int, int]] = {
    ("com.microsoft", "GroupQueryAttention"): {3: 1, 4: 2},
    ("com.microsoft", "MultiHeadAttention"): {6: 1, 7: 2},
    ("com.microsoft", "DecoderMaskedMultiHeadAttention"): {5: 1, 6: 2},
    ("com.microsoft", "Attention"): {4: 1},
    ("", "Attention"): {4: 1, 5: 2},
}

_CACHE_NAME = re.compile(r"past|cache|key_values|pkv|\bkv\b|_kv_|kv_", re.IGNORECASE)
_KEY_NAME = re.compile(r"(^|[._/])(key|keys|k)($|[._/\d])|key_cache|k_cache|past_key(?!_values)", re.IGNORECASE)
_VALUE_NAME = re.compile(r"(^|[._/])(value|values|v)($|[._/\d])|value_cache|v_cache|past_value", re.IGNORECASE)
_TOKEN_NAMES = ("input_ids", "inputs_embeds", "tokens", "input")
ROLES = ("batch", "past", "new", "total")
_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
                onnx.TensorProto.DOUBLE, onnx.TensorProto.INT8, onnx.TensorProto.UINT8}


@dataclass(frozen=True)
class Overrides:
    """What the user names where the graph is ambiguous: dims by role (``batch``, ``past``,
    ``new``, ``total``) and the cache inputs (names or shell patterns)."""

    dims: tuple[tuple[str, str], ...] = ()
    caches: tuple[str, ...] = ()

    @classmethod
    def parse(cls, dim_items: list[str] | None, cache_items: list[str] | None) -> Overrides:
        dims = {}
        for item in dim_items or ():
            role, sep, name = item.partition("=")
            if not sep or role not in ROLES or not name:
                raise OptionError(f"--kv-dim {item!r}: expected ROLE=DIM with ROLE one of {', '.join(ROLES)} "
                                  "(e.g. past=past_sequence_length)")
            dims[role] = name
        return cls(tuple(sorted(dims.items())), tuple(cache_items or ()))


@dataclass(frozen=True)
class CacheTensor:
    """One KV-cache graph input."""

    name: str
    kind: str  # "key", "value", or "kv" (keys and values stacked on a leading axis of 2)
    layer: int | None  # the first number in the name, when there is one
    dtype: str
    shape: tuple[Dim, ...]  # as declared
    #: role of each axis: batch, kv_heads, past, head_dim, kv, or "width" (heads x head dim packed)
    layout: tuple[str, ...]
    #: bytes one token adds to this input, per sequence (the product of its non-batch, non-past dims)
    bytes_per_token: int | None
    #: the graph output that carries it forward (past + new), when one was matched
    present: str | None
    how: str  # the evidence: "GroupQueryAttention input 3", "Concat axis 2", "name"

    def _replace_bytes(self, per: int | None) -> CacheTensor:
        from dataclasses import replace

        return replace(self, bytes_per_token=per)


@dataclass(frozen=True)
class DecoderStep:
    caches: tuple[CacheTensor, ...]
    layers: int
    kv_heads: int | None
    head_dim: int | None
    kv_dtype: str
    #: dims by role: a symbol, or a static size (new tokens = 1 in a decode-only export)
    batch: Dim
    past: str
    new: Dim
    #: a separate symbol bound to past + new (the attention mask's length), if the graph has one
    total: str | None
    token_input: str | None
    #: how the cache is read: op types of its consumers ("Concat", "com.microsoft::GroupQueryAttention")
    attention: tuple[str, ...]
    evidence: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    #: the rows of a learned position table (a Gather of positions, not of tokens): contexts
    #: above it are outside what the model was built for; None when the graph has none (RoPE)
    max_context: int | None = None
    #: symbolic cache dims whose value the graph implies (onnxruntime-genai's ``kv_cache_dim``,
    #: the head size): (dim, value, how); bound for the figures unless the user binds them
    inferred: tuple[tuple[str, int, str], ...] = ()

    @property
    def kv_bytes_per_token(self) -> int | None:
        """KV-cache bytes one token adds, per sequence: the sum over the cache inputs."""
        per = [c.bytes_per_token for c in self.caches]
        return None if None in per else sum(per)  # type: ignore[arg-type]

    @property
    def prefill_capable(self) -> bool:
        """Does one run take many new tokens (a symbolic new-token dim)?"""
        return isinstance(self.new, str)

    def bindings(self, batch: int, past: int, new: int) -> dict[str, int]:
        """Graph dims for a step of ``new`` tokens on ``past`` cached ones, ``batch`` sequences."""
        out: dict[str, int] = {}
        if isinstance(self.batch, str):
            out[self.batch] = batch
        out[self.past] = past
        if isinstance(self.new, str):
            out[self.new] = new
        if self.total:
            out[self.total] = past + new
        return out


class NotRecognized(Exception):
    """Why a graph is not taken for a decoder step with a KV cache (no error: the section is left out)."""


def _declared(loaded: LoadedModel) -> dict[str, tuple[int, tuple[Dim, ...] | None]]:
    inits = set(loaded.graph.initializers)
    out = {}
    for vi in loaded.proto.graph.input:
        if vi.name in inits:
            continue
        t = _type_of(vi.type)
        if t is not None:
            out[vi.name] = (t[0], t[1])
    return out


def _declared_outputs(loaded: LoadedModel) -> dict[str, tuple[int, tuple[Dim, ...] | None]]:
    out = {}
    for vi in loaded.proto.graph.output:
        t = _type_of(vi.type)
        if t is not None:
            out[vi.name] = (t[0], t[1])
    return out


def _consumers(loaded: LoadedModel) -> dict[str, list[tuple[Any, int, int]]]:
    """tensor -> [(graph, node index, input slot)], the main graph's and every subgraph's nodes (an
    optimum-style merged decoder reads its cache inside an If's branches)."""
    out: dict[str, list[tuple[Any, int, int]]] = {}
    stack = [loaded.graph]
    while stack:
        g = stack.pop()
        for i, (ins, _) in enumerate(g.io):
            for k, x in enumerate(ins):
                if x:
                    out.setdefault(x, []).append((g, i, k))
        stack.extend(sub for _, sub in sorted(g.subgraphs.items(), key=lambda kv: kv[0], reverse=True))
    return out


def _attr_int(node: onnx.NodeProto, name: str, default: int) -> int:
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default


def _structural(loaded: LoadedModel, name: str, rank: int, consumers) -> tuple[str, int, tuple[str, ...] | None,
                                                                                  str, str | None] | None:
    """(kind, past axis, layout or None, evidence, op label) from how the graph reads ``name``."""
    frontier = [(name, "")]
    for _ in range(3):  # through a Cast or two (fp16 graphs with float32 cache inputs)
        nxt = []
        for tensor, via in frontier:
            for g, i, k in consumers.get(tensor, ()):
                op, domain, _ = g.heads[i]
                where = "" if g is loaded.graph else " (in a subgraph)"
                slots = ATTENTION_SLOTS.get((domain, op))
                if slots and k in slots:
                    kind, axis, layout = slots[k]
                    label = f"{domain}::{op}" if domain else op
                    if len(layout) != rank:
                        layout, axis = None, (axis if rank == len(slots[k][2]) else -1)
                    return kind, axis, layout, f"{label} input {k}{via}{where}", label
                if op == "Concat" and not domain:
                    axis = _attr_int(g.nodes[i], "axis", 0)
                    axis = axis + rank if axis < 0 else axis
                    if 0 <= axis < rank:
                        return "", axis, None, f"Concat axis {axis}{via}{where}", "Concat"
                if op == "Cast" and not domain:
                    nxt.append((g.io[i][1][0], f"{via} (after a Cast)"))
        frontier = nxt
    return None


def _layer_of(name: str) -> int | None:
    m = re.search(r"\d+", name)
    return int(m.group()) if m else None


def _kind_of(name: str) -> str:
    name = re.sub(r"key_values", "", name, flags=re.IGNORECASE)  # transformers' past_key_values.3.key
    if _KEY_NAME.search(name) and not _VALUE_NAME.search(name):
        return "key"
    if _VALUE_NAME.search(name) and not _KEY_NAME.search(name):
        return "value"
    return ""


def recognize(loaded: LoadedModel, overrides: Overrides | None = None) -> DecoderStep:
    """The decoder step of ``loaded``; :class:`NotRecognized` (with the reason) when it is not one."""
    ov = overrides or Overrides()
    roles = dict(ov.dims)
    declared = _declared(loaded)
    if not ov.caches and not any(e in _FLOAT_TYPES and s is not None and 3 <= len(s) <= 5
                                 for e, s in declared.values()):
        raise NotRecognized("no graph input of rank 3 to 5 with a float or 8-bit type (a KV cache's shape)")
    consumers = _consumers(loaded)

    # 1. candidate cache inputs and the evidence for each
    found: list[tuple[str, str, int, tuple[str, ...] | None, str, str | None]] = []
    for name, (elem, shape) in declared.items():
        if ov.caches:
            if not any(fnmatch.fnmatchcase(name, p) for p in ov.caches):
                continue
        elif elem not in _FLOAT_TYPES or shape is None or not 3 <= len(shape) <= 5:
            continue
        if shape is None:
            raise OptionError(f"--kv-cache: input {name!r} has no declared shape")
        st = _structural(loaded, name, len(shape), consumers)
        if st is not None:
            kind, axis, layout, how, label = st
            found.append((name, kind or _kind_of(name), axis, layout, how, label))
        elif ov.caches or _CACHE_NAME.search(name):
            found.append((name, _kind_of(name), -1, None, "its name" if not ov.caches else "named by --kv-cache",
                          None))
    if not found:
        raise NotRecognized("no graph input is read as a KV cache (by an attention op's past slot, a Concat "
                            "with the new keys/values, or a past/cache name)")
    structural = [f for f in found if f[5] is not None]

    # 2. the past dim: the symbol on the past axis (structural evidence), else the symbol all share
    past = roles.get("past")
    if past is None:
        votes: dict[str, int] = {}
        for name, _, axis, _, _, _ in found:
            shape = declared[name][1]
            if 0 <= axis < len(shape) and isinstance(shape[axis], str):
                votes[shape[axis]] = votes.get(shape[axis], 0) + 1
        if votes:
            past = max(sorted(votes), key=lambda s: votes[s])
        else:
            shared = None
            for name, *_ in found:
                syms = {d for d in declared[name][1] if isinstance(d, str)}
                shared = syms if shared is None else shared & syms
            token_syms = _token_syms(declared, {f[0] for f in found})
            cands = sorted((shared or set()) - token_syms)
            if len(cands) != 1:
                raise NotRecognized(
                    "the cache inputs' past length is ambiguous" + (f" (one of {', '.join(cands)})" if cands else
                                                                   " (they share no symbolic dim)")
                    + ": name it with --kv-dim past=DIM")
            past = cands[0]
    caches_named = [f for f in found if past in (declared[f[0]][1] or ())]
    if not caches_named:
        raise NotRecognized(f"no cache input has the past dim {past!r}")
    found = caches_named

    # 3. the token input: batch and new tokens
    token_input, tok_shape = _token_input(declared, {f[0] for f in found})
    batch = roles.get("batch")
    new: Dim = roles.get("new")
    if batch is None:
        batch = tok_shape[0] if tok_shape else None
    if new is None:
        new = tok_shape[1] if tok_shape and len(tok_shape) >= 2 else None
        if new is None and tok_shape is None:
            new = 1
    if isinstance(new, str) and new.isdigit():
        new = int(new)
    total = roles.get("total")
    if total is None:
        total = _total_symbol(declared, {f[0] for f in found}, token_input, {past, batch, new})

    # 4. each cache's layout and per-token bytes
    caches = []
    outputs = _declared_outputs(loaded)
    inferred: dict[str, tuple[int, str]] = {}
    for name, kind, axis, layout, how, label in found:
        shape = declared[name][1]
        if layout is not None and "head_dim" in layout and isinstance(shape[layout.index("head_dim")], str):
            sym = shape[layout.index("head_dim")]
            if sym not in inferred and sym not in roles.values():
                got = _head_size(loaded, name, consumers)
                if got is not None:
                    inferred[sym] = got
    for name, kind, axis, layout, how, label in sorted(found, key=lambda f: (_layer_of(f[0]) or 0, f[0])):
        elem, shape = declared[name]
        layout = layout if layout is not None else _layout(shape, past, batch)
        if kind == "" and layout and layout[0] == "kv":
            kind = "kv"
        shape = tuple(inferred[d][0] if isinstance(d, str) and d in inferred else d for d in shape)
        per = _bytes_per_token(elem, shape, layout)
        caches.append(CacheTensor(name, kind or "?", _layer_of(name), dtypes.name(elem), declared[name][1], layout, per,
                                  _present_of(loaded, name, shape, outputs, consumers), how))
    keys = [c for c in caches if c.kind in ("key", "kv")]
    layers = len(keys) if keys and all(c.kind in ("key", "value", "kv") for c in caches) else \
        max(1, len(caches) // 2)
    def resolved(c, role):
        d = c.shape[c.layout.index(role)]
        return inferred[d][0] if isinstance(d, str) and d in inferred else d
    heads = {resolved(c, "kv_heads") for c in caches if "kv_heads" in c.layout}
    hdims = {resolved(c, "head_dim") for c in caches if "head_dim" in c.layout}
    kv_dtypes = sorted({c.dtype for c in caches})
    attention = tuple(sorted({f[5] for f in found if f[5]}))
    evidence = [f"{len(caches)} cache inputs ({', '.join(sorted({c.how for c in caches}))})",
                f"past length = {past!r}" + (" (--kv-dim)" if "past" in roles else ""),
                f"batch = {batch!r}" + (" (--kv-dim)" if "batch" in roles else
                                        f" (dim 0 of {token_input!r})" if token_input else ""),
                f"new tokens = {new!r}" + (" (--kv-dim)" if "new" in roles else
                                           f" (dim 1 of {token_input!r})" if token_input else "")]
    if total:
        evidence.append(f"total length = {total!r}, bound to past + new" + (" (--kv-dim)" if "total" in roles else ""))
    notes = []
    for sym, (value, how) in sorted(inferred.items()):
        evidence.append(f"{sym} = {value} ({how})")
    max_context = _position_table(loaded, token_input)
    if max_context is not None:
        evidence.append(f"a learned position table of {max_context:,} rows: the context is at most {max_context:,}")
    if not structural:
        notes.append("the cache was recognized by its input names only: check the layout, or name the "
                     "inputs with --kv-cache and the dims with --kv-dim")
    if new is None:
        notes.append("the number of new tokens per step is unknown: name it with --kv-dim new=DIM (or a number)")
    return DecoderStep(tuple(caches), layers, heads.pop() if len(heads) == 1 and isinstance(next(iter(heads)), int)
                       else None, hdims.pop() if len(hdims) == 1 and isinstance(next(iter(hdims)), int) else None,
                       kv_dtypes[0] if len(kv_dtypes) == 1 else "/".join(kv_dtypes), batch, past,
                       new if new is not None else 1, total, token_input, attention, tuple(evidence), tuple(notes),
                       max_context, tuple((k, v, h) for k, (v, h) in sorted(inferred.items())))


_PASS_THROUGH = frozenset({"Reshape", "Cast", "Unsqueeze", "Squeeze", "Flatten", "Identity"})


def _head_size(loaded: LoadedModel, cache: str, consumers) -> tuple[int, str] | None:
    """The head size a fused attention op implies for a cache read at its past slot: its query
    width (the N of the MatMul or MatMulNBits that makes it, packed Q, K and V when its key input
    is absent) over num_heads (+ 2·kv_num_heads when packed). onnxruntime-genai names the head
    size of its caches ``kv_cache_dim``."""
    for g, i, k in consumers.get(cache, ()):
        op, domain, _ = g.heads[i]
        if domain != "com.microsoft" or op not in ("GroupQueryAttention", "MultiHeadAttention"):
            continue
        node = g.nodes[i]
        heads = _attr_int(node, "num_heads", 0)
        kv_heads = _attr_int(node, "kv_num_heads", heads)
        ins = g.io[i][0]
        packed = len(ins) < 2 or not ins[1]
        width = _out_width(g, ins[0]) if ins else None
        parts = heads + 2 * kv_heads if packed else heads
        if width and parts and width % parts == 0:
            what = "packed Q, K, V" if packed else "query"
            return width // parts, (f"the {what} width {width} over {parts} heads of {op}")
    return None


def _out_width(g, tensor: str) -> int | None:
    """The last dim a MatMul / MatMulNBits / Gemm gives ``tensor``, from its weight or its N."""
    for j, (ins, outs) in enumerate(g.io):
        if tensor not in outs:
            continue
        op = g.heads[j][0]
        if op == "MatMulNBits":
            n = _attr_int(g.nodes[j], "N", 0)
            return n or None
        if op in ("MatMul", "Gemm") and len(ins) > 1:
            w = g.initializers.get(ins[1])
            if w is not None and len(w.dims) == 2:
                return int(w.dims[0] if op == "Gemm" and _attr_int(g.nodes[j], "transB", 0) else w.dims[1])
        if op in ("Add",) and ins:  # a bias after the projection
            return _out_width(g, ins[0])
    return None


def _position_table(loaded: LoadedModel, token_input: str | None) -> int | None:
    """Rows of a learned position embedding: a Gather of a 2-D initializer whose indices do not
    come from the token input (through reshapes and casts). GPT-2's wpe [n_positions, hidden]."""
    g = loaded.graph
    producer = {o: i for i, (_, outs) in enumerate(g.io) for o in outs if o}
    rows = []
    for i, (op, domain, _) in enumerate(g.heads):
        if op != "Gather" or domain:
            continue
        ins = g.io[i][0]
        table = g.initializers.get(ins[0]) if ins else None
        if table is None or len(table.dims) != 2 or len(ins) < 2:
            continue
        x, steps = ins[1], 0
        while x != token_input and x in producer and steps < 6:
            j = producer[x]
            if g.heads[j][0] not in _PASS_THROUGH or not g.io[j][0]:
                break
            x, steps = g.io[j][0][0], steps + 1
        if x != token_input:
            rows.append(int(table.dims[0]))
    return min(rows) if rows else None


def _token_syms(declared, cache_names) -> set[str]:
    _, shape = _token_input(declared, cache_names)
    return {d for d in (shape or ()) if isinstance(d, str)}


def _token_input(declared, cache_names) -> tuple[str | None, tuple[Dim, ...] | None]:
    """The input that carries the new tokens: integer ids [batch, new] or embeddings [batch, new, hidden]."""
    ints = {onnx.TensorProto.INT64, onnx.TensorProto.INT32}
    cands = [(n, s) for n, (e, s) in declared.items() if n not in cache_names and s is not None and (
        (e in ints and len(s) == 2) or (e not in ints and len(s) == 3 and "embed" in n))]
    for pref in _TOKEN_NAMES:
        for n, s in cands:
            if n == pref:
                return n, s
    ids = [(n, s) for n, s in cands if "id" in n.lower() and "position" not in n.lower() and "type" not in n.lower()]
    if ids:
        return ids[0]
    return (cands[0] if cands else (None, None))


def _total_symbol(declared, cache_names, token_input, known) -> str | None:
    """A symbol of the attention mask (or another [batch, T] input) that is none of the known dims:
    the total length, past + new."""
    for n, (e, s) in declared.items():
        if n in cache_names or n == token_input or s is None or len(s) != 2 or "mask" not in n.lower():
            continue
        d = s[1]
        if isinstance(d, str) and d not in known and not re.search(r"[+\-*/ ]", d):
            return d
    return None


def _layout(shape: tuple[Dim, ...], past: str, batch: Dim) -> tuple[str, ...]:
    """Roles of the axes of a cache tensor from its dims: the past axis, the batch axis (the batch
    symbol, else the first axis other than a leading 2 of stacked K/V), then head dim last and
    KV heads before it."""
    rank = len(shape)
    roles = [""] * rank
    roles[shape.index(past)] = "past"
    start = 0
    if rank == 5 and shape[0] == 2:
        roles[0] = "kv"
        start = 1
    if isinstance(batch, str) and batch in shape:
        roles[shape.index(batch)] = "batch"
    else:
        for i in range(start, rank):
            if not roles[i]:
                roles[i] = "batch"
                break
    rest = [i for i in range(rank) if not roles[i]]
    if len(rest) == 1:
        roles[rest[0]] = "width"  # [batch, past, heads * head_dim]
    elif rest:
        roles[rest[-1]] = "head_dim"
        for i in rest[:-1]:
            roles[i] = "kv_heads"
    return tuple(roles)


def _bytes_per_token(elem: int, shape: tuple[Dim, ...], layout: tuple[str, ...]) -> int | None:
    numel = 1
    for d, role in zip(shape, layout):
        if role in ("batch", "past"):
            continue
        if not isinstance(d, int):
            return None
        numel *= d
    bits = dtypes.bits(elem)
    return None if bits is None else (numel * bits + 7) // 8


def _present_of(loaded: LoadedModel, name: str, shape, outputs, consumers) -> str | None:
    """The graph output that carries this cache forward: by name (past -> present), else the output
    of the same rank reached from it through a Concat or an attention op (and Casts)."""
    cand = name.replace("past_key_values", "present").replace("past", "present")
    if cand != name and cand in outputs:
        return cand
    frontier = {name}
    for _ in range(4):
        nxt = set()
        for tensor in sorted(frontier):
            for g, i, slot in consumers.get(tensor, ()):
                op = g.heads[i][0]
                out_slot = PRESENT_SLOTS.get((g.heads[i][1], op), {}).get(slot)
                if out_slot is not None:
                    outs = g.io[i][1]
                    o = outs[out_slot] if out_slot < len(outs) else ""
                    return o if o and o in outputs else None
                if op not in ("Concat", "Cast", "GroupQueryAttention", "MultiHeadAttention", "Attention",
                              "DecoderMaskedMultiHeadAttention"):
                    continue
                for o in g.io[i][1]:
                    if o in outputs and (outputs[o][1] is None or len(outputs[o][1]) == len(shape)):
                        return o
                    if o and op in ("Concat", "Cast"):
                        nxt.add(o)
        frontier = nxt
        if not frontier:
            break
    return None
