"""Aligning the compute-heavy nodes of two graphs (Conv, Gemm/MatMul, attention, norms, RNNs).

Each heavy node gets a :class:`Signature` (family, kind, kernel, channels in and out, group, stride,
dilation, MACs) read from weight shapes and attributes, so it does not depend on node names or on the
activation layout (an NHWC export transposes once and then runs the same NCHW convs: channels come
from the weights, never from a guess about which axis holds them).

Alignment, in execution order:

1. ``difflib.SequenceMatcher`` over exact signatures anchors the runs that are identical;
2. between two anchors, a small Needleman-Wunsch pairs what is left, scoring a pair by how much of
   the signature agrees (same family required; same channels with another stride, kernel or size
   is a *changed* pair; nothing in common is a removal plus an insertion);
3. an unpaired norm whose input comes straight from a paired Conv/Gemm is *fused*: the other side
   folded it into that node (BatchNormalization folded into the Conv).

Blocks: the baseline is cut after every merge (an Add, Sum or Concat of two computed tensors: the
end of a residual block) and every pooling op, so a report can say block by block where the cost moves.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields

from onnxperf.patterns.side import Side

#: op families whose nodes are aligned
HEAVY_FAMILIES = ("conv", "matmul", "attention", "norm", "rnn")

SAME, CHANGED, INSERTED, REMOVED, FUSED = "same", "changed", "inserted", "removed", "fused"
KINDS = (SAME, CHANGED, INSERTED, REMOVED, FUSED)

#: Needleman-Wunsch scores: a gap, and pairs by agreement (None: never paired)
GAP = -1.0
#: regions larger than this many cells are paired in order instead (quadratic time otherwise)
NW_MAX_CELLS = 250_000

_MERGE_OPS = frozenset({"Add", "Sum", "Concat"})
_CONVT = frozenset({"ConvTranspose"})


@dataclass(frozen=True)
class Signature:
    """What makes two heavy nodes "the same computation", independent of names and layout. For attention
    ``group`` is the number of query heads and ``kv_heads`` that of key/value heads (GQA when fewer);
    ``kv_heads`` is None for the other families."""

    family: str
    kind: str  # conv, conv_transpose, linear (constant weight), matmul (two activations), norm op, ...
    op_type: str
    kernel: tuple[int, ...]
    c_in: int | None
    c_out: int | None
    group: int
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    macs: int
    kv_heads: int | None = None

    @property
    def key(self) -> tuple:
        """Exact-match key: every field but the op type's spelling (Gemm and MatMul compute alike)."""
        return (self.family, self.kind, self.kernel, self.c_in, self.c_out, self.group, self.stride,
                self.dilation, self.macs, self.kv_heads)

    def label(self, stride: bool = True) -> str:
        """``Conv 3×3 128→128 /2``, ``Conv dw 3×3 96 /2``, ``Gemm 2048→1000``, ``BatchNormalization 64``
        (``stride=False`` leaves the stride out)."""
        parts = [self.op_type]
        if self.family == "conv":
            if self.group > 1 and self.group == self.c_in == self.c_out:
                parts.append("dw")
            if self.kernel:
                parts.append("×".join(str(k) for k in self.kernel))
            if self.group > 1 and self.group == self.c_in == self.c_out:
                parts.append(str(self.c_out))
            else:
                parts.append(f"{_q(self.c_in)}→{_q(self.c_out)}")
                if self.group > 1:
                    parts.append(f"g{self.group}")
            if stride and any(s != 1 for s in self.stride):
                parts.append("/" + "×".join(str(s) for s in self.stride) if len(set(self.stride)) > 1
                             else f"/{self.stride[0]}")
            if any(d != 1 for d in self.dilation):
                parts.append("d" + "×".join(str(d) for d in self.dilation))
        elif self.family in ("matmul", "attention", "rnn"):
            parts.append(f"{_q(self.c_in)}→{_q(self.c_out)}")
            if self.family == "attention" and self.group > 1:
                parts.append(f"h{self.group}")
            if self.family == "attention" and self.kv_heads is not None and self.kv_heads != self.group:
                parts.append(f"kv{self.kv_heads}")
        elif self.c_in is not None:
            parts.append(str(self.c_in))
        return " ".join(parts)

    def differences(self, other: "Signature") -> tuple[str, ...]:
        """Fields that differ, in declaration order (``op_type`` included)."""
        return tuple(f.name for f in fields(self) if f.name != "family"
                     and getattr(self, f.name) != getattr(other, f.name))

    def to_dict(self) -> dict:
        return {"family": self.family, "kind": self.kind, "op_type": self.op_type, "kernel": list(self.kernel),
                "c_in": self.c_in, "c_out": self.c_out, "group": self.group, "stride": list(self.stride),
                "dilation": list(self.dilation), "macs": self.macs, "kv_heads": self.kv_heads, "label": self.label()}


def _q(x: int | None) -> str:
    return "?" if x is None else str(x)


def _ints(v, n: int, default: int) -> tuple[int, ...]:
    if v is None:
        return (default,) * n
    return tuple(int(x) for x in v)


def _dim(shape: tuple | None, axis: int) -> int | None:
    if not shape:
        return None
    try:
        d = shape[axis]
    except IndexError:
        return None
    return d if isinstance(d, int) else None


def signature(side: Side, nid: int) -> Signature:
    """The signature of heavy node ``nid`` of ``side``."""
    node = side.node(nid)
    cost = side.costs[nid]
    fam = cost.family
    at = side.attrs(nid)
    ins = list(node.input)
    x = ins[0] if ins else ""
    w = ins[1] if len(ins) > 1 else ""
    y = node.output[0] if node.output else ""
    xs, ws, ys = side.shape(x), side.shape(w), side.shape(y)
    op = node.op_type
    if fam == "conv":
        group = int(at.get("group", 1))
        # QLinearConv / ConvInteger keep the weight further along: the first 4-D constant input
        wt = next((t for t in ins[1:] if side.is_const(t) and len(side.shape(t) or ()) >= 3), w)
        ws = side.shape(wt)
        kernel = tuple(int(k) for k in ws[2:]) if ws and len(ws) >= 3 and all(isinstance(k, int) for k in ws[2:]) \
            else _ints(at.get("kernel_shape"), 0, 1)
        n = len(kernel) or max(len(xs or ()) - 2, 0)
        if op in _CONVT:
            c_in, c_out = _dim(ws, 0), (None if _dim(ws, 1) is None else _dim(ws, 1) * group)
        else:
            c_out = _dim(ws, 0)
            c_in = None if _dim(ws, 1) is None else _dim(ws, 1) * group
        if c_in is None:
            c_in = _dim(xs, -1 if op.startswith("Nhwc") else 1)
        if c_out is None:
            c_out = _dim(ys, -1 if op.startswith("Nhwc") else 1)
        return Signature(fam, "conv_transpose" if op in _CONVT else "conv", op, kernel, c_in, c_out, group,
                         _ints(at.get("strides"), n, 1), _ints(at.get("dilations"), n, 1), cost.macs)
    if fam == "matmul":
        const_w = any(side.is_const(t) for t in ins[:2])
        k = _dim(xs, -1)
        if op == "Gemm" and at.get("transA"):
            k = _dim(xs, 0)
        n_out = _dim(ys, -1)
        return Signature(fam, "linear" if const_w else "matmul", op, (), k, n_out, 1, (), (), cost.macs)
    if fam == "norm":
        scale = ins[1] if len(ins) > 1 and ins[1] else ""
        ss = side.shape(scale)
        c = None
        if ss:
            c = 1
            for d in ss:
                c = c * d if isinstance(d, int) and c is not None else None
        if c is None:
            c = _dim(xs, 1 if op in ("BatchNormalization", "InstanceNormalization", "GroupNormalization") else -1)
        return Signature(fam, op, op, (), c, c, int(at.get("num_groups", 1)), (), (), cost.macs)
    if fam == "attention":
        hq, hkv = _attention_heads(at, xs, side.shape(ins[1]) if len(ins) > 1 and ins[1] else None)
        return Signature(fam, op, op, (), _width(xs), _width(ys), hq, (), (), cost.macs, hkv)
    if fam == "rnn":
        return Signature(fam, op, op, (), _dim(xs, -1), at.get("hidden_size"), 1, (), (), cost.macs)
    return Signature(fam, op, op, (), None, None, 1, (), (), cost.macs)


def _width(shape: tuple | None) -> int | None:
    """The model width of an attention tensor: the last axis of [B, S, H·D], H·D of [B, H, S, D]."""
    if shape and len(shape) == 4:
        h, d = _dim(shape, 1), _dim(shape, 3)
        return None if h is None or d is None else h * d
    return _dim(shape, -1)


def _attention_heads(at: dict, q: tuple | None, k: tuple | None) -> tuple[int, int | None]:
    """(query heads, key/value heads) of an attention node: ``q_num_heads``/``kv_num_heads`` (ai.onnx
    Attention, opset 23, 3-D inputs), ``num_heads``/``kv_num_heads`` (com.microsoft), else the head
    axis of 4-D Q [B, Hq, S, D] and K [B, Hkv, S, D]; 1 and None when nothing says."""
    def given(name: str) -> int | None:  # a malformed attribute (a float, a list) says nothing
        v = at.get(name)
        return v if isinstance(v, int) and v > 0 else None

    hq = given("q_num_heads") or given("num_heads") or (_dim(q, 1) if q and len(q) == 4 else None) or 1
    hkv = given("kv_num_heads") or (_dim(k, 1) if k and len(k) == 4 else None)
    return hq, hkv


def heavy_nodes(side: Side) -> list[int]:
    """Main-graph nodes of the heavy families, in execution order."""
    return [i for i in side.order if side.costs[i].family in HEAVY_FAMILIES]


def pair_score(x: Signature, y: Signature) -> float | None:
    """How well two signatures pair up: 3 identical, 2 same channels (stride, kernel or size changed),
    0.5 one side of the channels shared; None when they should never be paired."""
    if x.family != y.family:
        return None
    if x.key == y.key:
        return 3.0 if x.op_type == y.op_type else 2.5
    if x.kind == y.kind and (x.c_in, x.c_out, x.group) == (y.c_in, y.c_out, y.group):
        return 2.0
    if x.c_in == y.c_in or x.c_out == y.c_out:
        return 0.5
    return None


def needleman_wunsch(xs: list[Signature], ys: list[Signature]) -> list[tuple[int | None, int | None]]:
    """Global alignment of two short signature lists: index pairs, ``None`` for a gap. Ties prefer a
    pair; between a removal and an insertion at one place, the removal is listed first."""
    n, m = len(xs), len(ys)
    if n * m > NW_MAX_CELLS:
        return _in_order(xs, ys)
    neg = float("-inf")
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]  # 1 diagonal, 2 up (removed), 3 left (inserted)
    for i in range(1, n + 1):
        score[i][0], move[i][0] = i * GAP, 2
    for j in range(1, m + 1):
        score[0][j], move[0][j] = j * GAP, 3
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = pair_score(xs[i - 1], ys[j - 1])
            diag = neg if s is None else score[i - 1][j - 1] + s
            up = score[i - 1][j] + GAP
            left = score[i][j - 1] + GAP
            best = max(diag, up, left)
            score[i][j] = best
            move[i][j] = 1 if diag == best else (3 if left == best else 2)
    out: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        mv = move[i][j]
        if mv == 1:
            out.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif mv == 2:
            out.append((i - 1, None))
            i -= 1
        else:
            out.append((None, j - 1))
            j -= 1
    return out[::-1]


def _in_order(xs: list[Signature], ys: list[Signature]) -> list[tuple[int | None, int | None]]:
    """Fallback for huge gaps: walk both lists, pairing when the next two are pairable."""
    out: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        if pair_score(xs[i], ys[j]) is not None:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif len(xs) - i >= len(ys) - j:
            out.append((i, None))
            i += 1
        else:
            out.append((None, j))
            j += 1
    out += [(k, None) for k in range(i, len(xs))] + [(None, k) for k in range(j, len(ys))]
    return out


def align_signatures(xs: list[Signature], ys: list[Signature]) -> list[tuple[int | None, int | None]]:
    """Anchor identical runs with SequenceMatcher, then Needleman-Wunsch between the anchors."""
    sm = difflib.SequenceMatcher(None, [x.key for x in xs], [y.key for y in ys], autojunk=False)
    out: list[tuple[int | None, int | None]] = []
    i = j = 0
    for blk in sm.get_matching_blocks():  # the last one is the (len, len, 0) sentinel
        for a_, b_ in needleman_wunsch(xs[i:blk.a], ys[j:blk.b]):
            out.append((None if a_ is None else i + a_, None if b_ is None else j + b_))
        out += [(blk.a + k, blk.b + k) for k in range(blk.size)]
        i, j = blk.a + blk.size, blk.b + blk.size
    return out


@dataclass(frozen=True)
class Pair:
    """One row of the alignment. ``a``/``b`` are node ids (``None`` on the side that lacks it);
    ``into`` is, for a fused node, the node of the other side that absorbed it."""

    kind: str
    a: int | None
    b: int | None
    changes: tuple[str, ...] = ()
    into: int | None = None
    block: int = 0


@dataclass(frozen=True)
class Block:
    index: int
    label_a: str
    label_b: str
    pairs: tuple[int, ...]  # indices into Alignment.pairs


@dataclass(frozen=True)
class Alignment:
    sig_a: dict[int, Signature]
    sig_b: dict[int, Signature]
    pairs: tuple[Pair, ...]
    blocks: tuple[Block, ...]

    def count(self, kind: str) -> int:
        return sum(1 for p in self.pairs if p.kind == kind)


def _fused_into(side: Side, nid: int, partner: dict[int, int]) -> int | None:
    """If norm ``nid`` reads the output of a paired node, that node's partner (it absorbed the norm)."""
    if side.costs[nid].family != "norm":
        return None
    acts = side.activation_inputs(nid)
    src = side.producer(acts[0]) if acts else None
    return partner.get(src) if src is not None else None


def _block_ids(side: Side, nodes: list[int]) -> dict[int, int]:
    """Heavy node -> block number: a block ends after a merge (Add/Sum/Concat of two computed
    tensors) or a pooling node. Blocks without heavy nodes are skipped in the numbering."""
    wanted = set(nodes)
    raw: dict[int, int] = {}
    cut = 0
    for nid in side.order:
        if nid in wanted:
            raw[nid] = cut
        node = side.node(nid)
        merge = node.op_type in _MERGE_OPS and len({side.producer(t) for t in side.activation_inputs(nid)}) >= 2
        if merge or side.costs[nid].family == "pool":
            cut += 1
    renum = {c: k for k, c in enumerate(sorted(set(raw.values())))}
    return {n: renum[c] for n, c in raw.items()}


def block_label(names: list[str], model_prefix: str) -> str:
    """The name prefix shared by a block's nodes (minus the prefix shared by the whole model), cut at
    a separator: ``/layer2/layer2.0/conv1/Conv`` + ``/layer2/layer2.0/conv2/Conv`` -> ``layer2/layer2.0``;
    a numbered run keeps its range: ``/features/features.0/..`` .. ``/features/features.3/..`` ->
    ``features/features.0–3``."""
    names = [n for n in names if n]
    if not names:
        return ""
    pre = _cut(_common(names))
    if len(pre) <= len(model_prefix):
        return ""
    label = pre[len(model_prefix):]
    if pre.endswith("."):
        first, last = (n[len(pre):].split("/", 1)[0] for n in (names[0], names[-1]))
        if first[:1].isdigit() and last[:1].isdigit() and first != last:
            return label.strip("/") + f"{first}–{last}"
    return label.strip("/._-:")


def _common(names: list[str]) -> str:
    """The longest common prefix ("" for no names: a model whose nodes are all unnamed)."""
    if not names:
        return ""
    lo, hi = min(names), max(names)
    k = 0
    while k < min(len(lo), len(hi)) and lo[k] == hi[k]:
        k += 1
    return lo[:k]


def _cut(prefix: str) -> str:
    """A prefix cut back to its last separator (a whole name component)."""
    for k in range(len(prefix) - 1, -1, -1):
        if prefix[k] in "/._-:":
            return prefix[: k + 1]
    return ""


def align(a: Side, b: Side) -> Alignment:
    """Align the heavy nodes of ``b`` to those of the baseline ``a``."""
    na, nb = heavy_nodes(a), heavy_nodes(b)
    sa = {n: signature(a, n) for n in na}
    sb = {n: signature(b, n) for n in nb}
    raw = align_signatures([sa[n] for n in na], [sb[n] for n in nb])
    pa = {na[i]: nb[j] for i, j in raw if i is not None and j is not None}
    pb = {v: k for k, v in pa.items()}
    blocks_a = _block_ids(a, na)
    pairs: list[Pair] = []
    block = 0
    for i, j in raw:
        x = None if i is None else na[i]
        y = None if j is None else nb[j]
        if x is not None:
            block = blocks_a[x]
        if x is not None and y is not None:
            diff = sa[x].differences(sb[y])
            pairs.append(Pair(SAME if not diff else CHANGED, x, y, diff, None, block))
        elif x is not None:
            into = _fused_into(a, x, pa)
            pairs.append(Pair(FUSED if into is not None else REMOVED, x, None, (), into, block))
        else:
            into = _fused_into(b, y, pb)
            pairs.append(Pair(FUSED if into is not None else INSERTED, None, y, (), into, block))
    prefix_a = _cut(_common([a.name(n) for n in na if a.name(n)])) if na else ""
    prefix_b = _cut(_common([b.name(n) for n in nb if b.name(n)])) if nb else ""
    blocks: list[Block] = []
    for k in sorted({p.block for p in pairs}):
        idx = tuple(i for i, p in enumerate(pairs) if p.block == k)
        la = block_label([a.name(pairs[i].a) for i in idx if pairs[i].a is not None], prefix_a)
        lb = block_label([b.name(pairs[i].b) for i in idx if pairs[i].b is not None], prefix_b)
        blocks.append(Block(len(blocks), la, lb, idx))
    renum = {i: bl.index for bl in blocks for i in bl.pairs}
    pairs = [Pair(p.kind, p.a, p.b, p.changes, p.into, renum[i]) for i, p in enumerate(pairs)]
    return Alignment(sa, sb, tuple(pairs), tuple(blocks))
