"""Why two exports of one network cost differently: a registry of explanation detectors.

Each detector is a pure function of a :class:`Context` (the baseline ``a``, the other model ``b`` and
their :class:`~onnxperf.products.compare.align.Alignment`) that returns :class:`Explanation` records, each naming
the nodes it is about on each side with their cost. Detectors are registered once, in the order the
report lists them (a second registration of one id raises); every detector runs on every comparison,
and one that finds nothing is still listed as checked, so "no decomposed activations" is a finding too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from onnxperf.products.compare.align import CHANGED, INSERTED, REMOVED, SAME, Alignment, Signature
from onnxperf.patterns.matchers import ACTIVATIONS, bias_input, bn_after, domain_nodes, float_casts, foldable, inner_pads, layout_transposes, out_channels, output_heads, output_of, pad_text, prod, quant_nodes, separate_pads
from onnxperf.patterns.side import Cost, Side


@dataclass(frozen=True)
class Context:
    a: Side
    b: Side
    alignment: Alignment


@dataclass(frozen=True)
class Explanation:
    """One named cause of difference. ``a``/``b``: summed cost of the nodes it names on each side
    (``nodes_a``/``nodes_b`` are node ids); ``side``: where those nodes are."""

    id: str
    title: str
    side: str
    a: Cost
    b: Cost
    detail: str
    items: tuple[str, ...] = ()
    nodes_a: tuple[int, ...] = ()
    nodes_b: tuple[int, ...] = ()

    def _of_side(self, metric: str) -> int:
        return {"a": getattr(self.a, metric), "b": getattr(self.b, metric)}.get(
            self.side, getattr(self.a, metric) + getattr(self.b, metric))

    @property
    def node_count(self) -> int:
        return self._of_side("nodes")

    @property
    def macs(self) -> int:
        return self._of_side("macs")

    @property
    def flops(self) -> int:
        return self._of_side("flops")

    @property
    def bytes(self) -> int:
        return self._of_side("bytes")

    @property
    def params(self) -> int:
        return self._of_side("params")

    def delta(self, metric: str) -> int:
        """Contribution to (other − baseline) of ``metric`` (nodes, macs, flops, bytes, params)."""
        return getattr(self.b, metric) - getattr(self.a, metric)

    def to_dict(self) -> dict:
        return {
            "id": self.id, "title": self.title, "side": self.side, "node_count": self.node_count,
            "macs": self.macs, "flops": self.flops, "bytes": self.bytes, "params": self.params,
            "a": self.a.to_dict(), "b": self.b.to_dict(),
            "delta": {k: self.delta(k) for k in ("nodes", "macs", "flops", "bytes", "params")},
            "detail": self.detail, "items": list(self.items),
            "nodes_a": list(self.nodes_a), "nodes_b": list(self.nodes_b),
        }


Detect = Callable[[Context], list[Explanation]]


@dataclass(frozen=True)
class Detector:
    id: str
    title: str
    fn: Detect = field(repr=False)


DETECTORS: dict[str, Detector] = {}


def detector(id_: str, title: str) -> Callable[[Detect], Detect]:
    """Register a detector under ``id_`` (unique) with the title shown when it finds nothing."""

    def deco(fn: Detect) -> Detect:
        if id_ in DETECTORS:
            raise ValueError(f"explanation detector {id_!r} is registered twice "
                             f"({DETECTORS[id_].fn.__module__}.{DETECTORS[id_].fn.__name__} and {fn.__name__})")
        DETECTORS[id_] = Detector(id_, title, fn)
        return fn

    return deco


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    found: int  # explanations this detector returned


def explain(ctx: Context) -> tuple[list[Explanation], list[Check]]:
    """Run every registered detector, in registration order."""
    out: list[Explanation] = []
    checks: list[Check] = []
    for d in DETECTORS.values():
        found = d.fn(ctx)
        out += found
        checks.append(Check(d.id, d.title, len(found)))
    return out, checks


# --------------------------------------------------------------------------------------- helpers

def _side_of(na: int, nb: int) -> str:
    return "both" if na and nb else ("a" if na else "b")


def _make(id_: str, title: str, ctx: Context, nodes_a, nodes_b, detail: str, items=(),
          cost_a: Cost | None = None, cost_b: Cost | None = None) -> Explanation:
    na, nb = tuple(sorted(set(nodes_a))), tuple(sorted(set(nodes_b)))
    ca = ctx.a.cost_of(na) if cost_a is None else cost_a
    cb = ctx.b.cost_of(nb) if cost_b is None else cost_b
    return Explanation(id_, title, _side_of(ca.nodes, cb.nodes), ca, cb, detail, tuple(items), na, nb)


def _n(x: int) -> str:
    return f"{x:,}"


def _signed(x: int) -> str:
    return f"{x:+,}" if x else "0"


def _si(x: float) -> str:
    for scale, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.4g} {p}"
    return f"{x:g}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


_BN_WORDS = {"node": "a BatchNormalization node", "mul_add": "kept as Mul + Add by per-channel constants",
             "mul": "kept as a per-channel Mul", "none": "folded into the node (no BN op)"}


def _pairs(ctx: Context, kinds=(SAME, CHANGED)):
    return [p for p in ctx.alignment.pairs if p.kind in kinds]


def _sig_a(ctx: Context, nid: int) -> Signature:
    return ctx.alignment.sig_a[nid]


def _sig_b(ctx: Context, nid: int) -> Signature:
    return ctx.alignment.sig_b[nid]


# ------------------------------------------------------------------------------ architecture

def _moved_groups(ctx: Context) -> list[list]:
    """Per block, the changed pairs whose stride changed, when the block has both a conv whose
    stride grew and one whose stride shrank: the downsampling moved from one conv to another."""
    by_block: dict[int, list] = {}
    for p in ctx.alignment.pairs:
        if p.kind == CHANGED and "stride" in p.changes:
            by_block.setdefault(p.block, []).append(p)
    out = []
    for blk in sorted(by_block):
        ps = by_block[blk]
        grew = [p for p in ps if prod(_sig_b(ctx, p.b).stride) > prod(_sig_a(ctx, p.a).stride)]
        shrank = [p for p in ps if prod(_sig_b(ctx, p.b).stride) < prod(_sig_a(ctx, p.a).stride)]
        if grew and shrank:
            out.append(ps)
    return out


def _stride(s: Signature) -> str:
    return "×".join(str(x) for x in s.stride) if len(set(s.stride)) > 1 else str(s.stride[0] if s.stride else 1)


@detector("stride_moved", "Downsampling stride moved to another conv of the block (e.g. ResNet v1 vs v1.5)")
def stride_moved(ctx: Context) -> list[Explanation]:
    groups = _moved_groups(ctx)
    if not groups:
        return []
    items: list[str] = []
    na: list[int] = []
    nb: list[int] = []
    earlier: list[bool] = []
    for ps in groups:
        blk = ctx.alignment.blocks[ps[0].block]
        src = [p for p in ps if prod(_sig_b(ctx, p.b).stride) < prod(_sig_a(ctx, p.a).stride)]
        dst = [p for p in ps if prod(_sig_b(ctx, p.b).stride) > prod(_sig_a(ctx, p.a).stride)]
        ma = sum(ctx.a.costs[p.a].macs for p in ps)
        mb = sum(ctx.b.costs[p.b].macs for p in ps)
        where = " ↔ ".join(x for x in (blk.label_a, blk.label_b) if x) or f"block {blk.index}"
        moves = "; ".join(
            f"stride {_stride(_sig_a(ctx, s.a))} moved from {_sig_a(ctx, s.a).label(stride=False)} to "
            f"{_sig_a(ctx, d.a).label(stride=False)}" for s, d in zip(src, dst))
        per = ", ".join(f"{_sig_a(ctx, p.a).label(stride=False)} {_n(ctx.a.costs[p.a].macs)} → "
                        f"{_n(ctx.b.costs[p.b].macs)}" for p in ps)
        items.append(f"block {blk.index} ({where}): {moves}; MACs {per}; block Δ {_signed(mb - ma)} MACs")
        na += [p.a for p in ps]
        nb += [p.b for p in ps]
        earlier.append(ps.index(dst[0]) < ps.index(src[0]))
    e = _make("stride_moved", "Stride moved between the convs of a downsampling block", ctx, na, nb, "", items)
    when = "earlier" if all(earlier) else ("later" if not any(earlier) else "elsewhere")
    detail = (f"In {_plural(len(groups), 'block')} the same convs (kernel and channels) downsample at a different "
              f"place: B strides {when} in the block than A, so the convs in between run at another resolution "
              f"(as ResNet-50 v1, Keras' design, strides in the first 1×1 conv and v1.5, torchvision's, in the 3×3). "
              f"An architecture difference, not an export artefact: {_signed(e.delta('macs'))} MACs "
              f"({_si(e.a.macs)} → {_si(e.b.macs)} over these {e.a.nodes} conv pairs).")
    return [replace(e, side="both", detail=detail)]


_SHAPE_FIELDS = ("kind", "kernel", "c_in", "c_out", "group", "stride", "dilation", "macs", "kv_heads")


def _fmt_field(s: Signature, f: str) -> str:
    v = getattr(s, f)
    if isinstance(v, tuple):
        return "×".join(str(x) for x in v) or "-"
    return _n(v) if isinstance(v, int) else str(v)


@detector("changed_shape", "Aligned heavy nodes with another kernel, channel count, group, stride or size")
def changed_shape(ctx: Context) -> list[Explanation]:
    moved = {id(p) for g in _moved_groups(ctx) for p in g}
    ps = [p for p in ctx.alignment.pairs if p.kind == CHANGED and id(p) not in moved
          and any(f in _SHAPE_FIELDS for f in p.changes)]
    if not ps:
        return []
    items = []
    for p in ps:
        sa, sb = _sig_a(ctx, p.a), _sig_b(ctx, p.b)
        what = ", ".join(f"{f.replace('_', ' ')} {_fmt_field(sa, f)} → {_fmt_field(sb, f)}"
                         for f in p.changes if f in _SHAPE_FIELDS)
        items.append(f"block {p.block}: {ctx.a.name(p.a) or sa.label()} ↔ {ctx.b.name(p.b) or sb.label()}: {what}")
    kinds = Counter(f for p in ps for f in p.changes if f in _SHAPE_FIELDS and f != "macs")
    e = _make("changed_shape", "Heavy nodes that differ in shape", ctx, [p.a for p in ps], [p.b for p in ps], "",
              items)
    what = ", ".join(f"{k.replace('_', ' ')} ×{v}" for k, v in sorted(kinds.items())) or "size only"
    detail = (f"{_plural(len(ps), 'aligned pair')} compute the same role with a different shape ({what}): "
              f"{_signed(e.delta('macs'))} MACs. A different architecture or input size, not an export artefact.")
    return [replace(e, side="both", detail=detail)]


@detector("only_one_side", "Heavy nodes with no counterpart (inserted or removed)")
def only_one_side(ctx: Context) -> list[Explanation]:
    ins = [p for p in ctx.alignment.pairs if p.kind == INSERTED]
    rem = [p for p in ctx.alignment.pairs if p.kind == REMOVED]
    if not ins and not rem:
        return []
    items = [f"block {p.block}: only in A: {_sig_a(ctx, p.a).label()} {ctx.a.name(p.a)!r}" for p in rem]
    items += [f"block {p.block}: only in B: {_sig_b(ctx, p.b).label()} {ctx.b.name(p.b)!r}" for p in ins]
    e = _make("only_one_side", "Heavy nodes on one side only", ctx, [p.a for p in rem], [p.b for p in ins], "",
              items)
    detail = (f"{_plural(len(rem), 'heavy node')} of A and {len(ins)} of B have no counterpart of the same family "
              f"with compatible channels: {_signed(e.delta('macs'))} MACs.")
    return [replace(e, detail=detail)]


# ------------------------------------------------------------------------------- export artefacts

@detector("layout_transpose", "NHWC↔NCHW layout Transposes (inserted by tf2onnx and similar converters)")
def layout_transpose(ctx: Context) -> list[Explanation]:
    ta, tb = layout_transposes(ctx.a), layout_transposes(ctx.b)
    if len(ta) == len(tb):
        return []
    items = []
    for label, side, ts in (("A", ctx.a, ta), ("B", ctx.b, tb)):
        for nid, kind in ts:
            x = side.node(nid).input[0]
            where = "graph input " + repr(x) if x in side.graph.inputs else "tensor " + repr(x)
            users = ", ".join(sorted({side.op(u) for u in side.users(output_of(side, nid))})) or "graph output"
            c = side.costs[nid]
            items.append(f"{label}: Transpose {side.name(nid)!r} {kind} of {where} "
                         f"{list(side.shape(x) or ())} before {users}: {_n(c.bytes_read + c.bytes_written)} B moved")
    e = _make("layout_transpose", "Layout Transposes (NHWC ↔ NCHW)", ctx, [n for n, _ in ta], [n for n, _ in tb], "",
              items)
    more = "B" if len(tb) > len(ta) else "A"
    detail = (f"{more} converts between channels-last and channels-first layouts with "
              f"{_plural(max(len(ta), len(tb)) - min(len(ta), len(tb)), 'extra Transpose')} (A {len(ta)}, B {len(tb)}): "
              "no arithmetic, but every element is read and written once more.")
    return [replace(e, detail=detail)]


@detector("batchnorm", "BatchNorm folded into the Conv on one side, not on the other")
def batchnorm(ctx: Context) -> list[Explanation]:
    groups: dict[tuple[str, str], list] = {}
    for p in _pairs(ctx):
        if ctx.a.costs[p.a].family not in ("conv", "matmul"):
            continue
        ka, sa_nodes = bn_after(ctx.a, p.a)
        kb, sb_nodes = bn_after(ctx.b, p.b)
        if ka != kb:
            groups.setdefault((ka, kb), []).append((p, sa_nodes, sb_nodes))
    out = []
    for (ka, kb), rows in sorted(groups.items()):
        na = [n for _, xs, _ in rows for n in xs]
        nb = [n for _, _, ys in rows for n in ys]
        kinds = Counter(_conv_kind(_sig_a(ctx, p.a)) for p, _, _ in rows)
        ops_a = Counter(ctx.a.op(n) for n in na)
        ops_b = Counter(ctx.b.op(n) for n in nb)
        chans = sum(out_channels(ctx.a, p.a) or 0 for p, _, _ in rows)
        e = _make("batchnorm", "", ctx, na, nb, "")
        items = [f"{_plural(len(rows), 'aligned Conv/Gemm pair')} "
                 f"({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}), {_n(chans)} channels in all",
                 f"A: BatchNorm {_BN_WORDS[ka]}" + (f": {_fmt_ops(ops_a)}, {_n(e.a.params)} params" if na else ""),
                 f"B: BatchNorm {_BN_WORDS[kb]}" + (f": {_fmt_ops(ops_b)}, {_n(e.b.params)} params" if nb else "")]
        folded = "A" if ka == "none" else ("B" if kb == "none" else None)
        title = (f"BatchNorm folded into the Conv on {folded}, {_BN_WORDS[kb if folded == 'A' else ka]} on "
                 f"{'B' if folded == 'A' else 'A'}") if folded else f"BatchNorm {_BN_WORDS[ka]} on A, {_BN_WORDS[kb]} on B"
        extra = "B" if e.b.nodes >= e.a.nodes else "A"
        detail = (f"{_plural(abs(e.b.nodes - e.a.nodes), 'extra node')} on {extra}: {_signed(e.delta('flops'))} FLOPs, "
                  f"{_signed(e.delta('bytes'))} B of memory traffic and {_signed(e.delta('params'))} params "
                  "(scale and shift kept per channel instead of merged into the weights and bias). "
                  "Folding is exact in inference: the arithmetic of the convs is the same.")
        out.append(replace(e, title=title, detail=detail, items=tuple(items)))
    return out


def _conv_kind(s: Signature) -> str:
    if s.family != "conv":
        return s.op_type
    return "depthwise" if s.group > 1 and s.group == s.c_in == s.c_out else "regular"


def _fmt_ops(c: Counter) -> str:
    return " + ".join(f"{op} ×{k}" for op, k in sorted(c.items()))


def _bias_cost(side: Side, nids) -> Cost:
    flops = bytes_ = params = 0
    for nid in nids:
        b = bias_input(side, nid)
        rec = side.const(b) if b else None
        ys = side.shape(output_of(side, nid))
        if ys and all(isinstance(d, int) for d in ys):
            flops += prod(ys)
        if rec is not None:
            bytes_ += rec.nbytes
            params += rec.numel
    return Cost(len(list(nids)), 0, flops, bytes_, params)


@detector("bias", "Conv/Gemm bias present on one side only")
def bias(ctx: Context) -> list[Explanation]:
    only_a, only_b = [], []
    for p in _pairs(ctx):
        ba, bb = bias_input(ctx.a, p.a), bias_input(ctx.b, p.b)
        if ba == "" or bb == "":
            continue
        if ba and not bb:
            only_a.append(p)
        elif bb and not ba:
            only_b.append(p)
    if not only_a and not only_b:
        return []
    ca, cb = _bias_cost(ctx.a, [p.a for p in only_a]), _bias_cost(ctx.b, [p.b for p in only_b])
    items = []
    for label, ps, other, opick in (("A", only_a, ctx.b, "b"), ("B", only_b, ctx.a, "a")):
        if not ps:
            continue
        shift = Counter(bn_after(other, getattr(p, opick))[0] for p in ps)
        kinds = Counter(_conv_kind(_sig_a(ctx, p.a)) for p in ps)
        items.append(f"{label} only: {_plural(len(ps), 'node')} ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))})"
                     f" carry a bias ({_n((ca if label == 'A' else cb).params)} params); on the other side "
                     + ", ".join(f"{v} have BatchNorm {_BN_WORDS[k]}" for k, v in sorted(shift.items())))
    detail = ("The bias add costs one FLOP per output element, inside the node. Where the other side keeps an "
              "unfolded BatchNorm, its Add supplies the shift that the bias holds here.")
    return [Explanation("bias", "Bias inside the Conv/Gemm on one side only", _side_of(ca.nodes, cb.nodes), ca, cb,
                        detail, tuple(items), tuple(sorted(p.a for p in only_a)), tuple(sorted(p.b for p in only_b)))]


@detector("decomposed_activation", "Activations decomposed into several ops (GELU as Erf/Mul/Add, HardSwish, "
                                   "Swish as Sigmoid·x, Mish)")
def decomposed_activation(ctx: Context) -> list[Explanation]:
    out = []
    for name, fused_ops, match in ACTIVATIONS:
        ma, mb = match(ctx.a), match(ctx.b)
        if not ma and not mb:
            continue
        fa = Counter(ctx.a.op(n) for n in ctx.a.order if ctx.a.op(n) in fused_ops)
        fb = Counter(ctx.b.op(n) for n in ctx.b.order if ctx.b.op(n) in fused_ops)
        items = []
        for label, ms, side, fused in (("A", ma, ctx.a, fa), ("B", mb, ctx.b, fb)):
            if ms:
                ops = Counter(side.op(n) for m in ms for n in m)
                c = side.cost_of({n for m in ms for n in m})
                items.append(f"{label}: {len(ms)} × {name} as {_fmt_ops(ops)} ({c.nodes} nodes, {_n(c.flops)} FLOPs, "
                             f"{_n(c.bytes)} B)")
            else:
                items.append(f"{label}: no decomposed form" + (f"; fused ops: {_fmt_ops(fused)}" if fused else ""))
        e = _make("decomposed_activation", f"{name} decomposed into elementwise ops", ctx,
                  [n for m in ma for n in m], [n for m in mb for n in m], "", items)
        detail = ("The same function written as several elementwise nodes: each reads and writes the whole tensor, "
                  "so memory traffic grows with the node count unless the runtime fuses them. "
                  f"A {len(ma)}, B {len(mb)} occurrences; Δ {_signed(e.delta('bytes'))} B, {_signed(e.delta('flops'))} FLOPs.")
        out.append(replace(e, detail=detail))
    return out


@detector("pad_separate", "Pad as a separate node vs padding inside the Conv/pool")
def pad_separate(ctx: Context) -> list[Explanation]:
    pa, pb = separate_pads(ctx.a), separate_pads(ctx.b)
    if len(pa) == len(pb):
        return []
    items = [f"A: {pad_text(ctx.a, n)}" for n in pa] + [f"B: {pad_text(ctx.b, n)}" for n in pb]
    items.append(f"Convs/pools padding inside the node: A {inner_pads(ctx.a)}, B {inner_pads(ctx.b)}")
    e = _make("pad_separate", "Pad as a separate node", ctx, pa, pb, "", items)
    detail = ("A separate Pad copies its whole input into a larger tensor that the next node reads again; padding "
              "inside the Conv/pool costs no memory traffic. Asymmetric padding (TensorFlow 'same' with stride 2 pads "
              "bottom/right only) cannot be written as Conv pads by every exporter. A zero Pad before MaxPool equals "
              "MaxPool's own padding only on non-negative input (after a ReLU). "
              f"Δ {_signed(e.delta('bytes'))} B.")
    return [replace(e, detail=detail)]


@detector("gemm_split", "Dense layer as MatMul + Add on one side, one Gemm on the other")
def gemm_split(ctx: Context) -> list[Explanation]:
    na, nb, items = [], [], []
    for p in _pairs(ctx):
        oa, ob = ctx.a.op(p.a), ctx.b.op(p.b)
        if {oa, ob} != {"Gemm", "MatMul"}:
            continue
        for side, nid, acc in ((ctx.a, p.a, na), (ctx.b, p.b, nb)):
            acc.append(nid)
            if side.op(nid) == "MatMul":
                u = side.single_user(nid)
                if u is not None and side.op(u) == "Add" and any(side.is_const(t) for t in side.node(u).input):
                    acc.append(u)
        items.append(f"{_sig_a(ctx, p.a).label()} {ctx.a.name(p.a)!r} ↔ {_sig_b(ctx, p.b).label()} {ctx.b.name(p.b)!r}")
    if not na:
        return []
    e = _make("gemm_split", "Dense layer: Gemm vs MatMul + Add", ctx, na, nb, "", items)
    detail = (f"Same MACs; the split form adds a node that re-reads the output to add the bias "
              f"(A {_plural(e.a.nodes, 'node')}, B {e.b.nodes}; Δ {_signed(e.delta('bytes'))} B).")
    return [replace(e, detail=detail)]


@detector("output_activation", "Output activation (Softmax/Sigmoid) on one side only")
def output_activation(ctx: Context) -> list[Explanation]:
    ha, hb = output_heads(ctx.a), output_heads(ctx.b)
    if len(ha) == len(hb):
        return []
    items = [f"A: {ctx.a.op(n)} {ctx.a.name(n)!r} produces output {output_of(ctx.a, n)!r}" for n in ha]
    items += [f"B: {ctx.b.op(n)} {ctx.b.name(n)!r} produces output {output_of(ctx.b, n)!r}" for n in hb]
    e = _make("output_activation", "Output activation on one side only", ctx, ha, hb, "", items)
    more = "B" if len(hb) > len(ha) else "A"
    detail = (f"{more} returns probabilities where the other returns logits (Keras applications end in a Softmax "
              f"layer; torchvision models return logits): the outputs differ in meaning, not only in cost.")
    return [replace(e, detail=detail)]


@detector("constant_nodes", "Constants stored as Constant nodes rather than initializers")
def constant_nodes(ctx: Context) -> list[Explanation]:
    ca = [n for n in ctx.a.order if ctx.a.op(n) == "Constant"]
    cb = [n for n in ctx.b.order if ctx.b.op(n) == "Constant"]
    if len(ca) == len(cb):
        return []
    users = []
    for label, side, cs in (("A", ctx.a, ca), ("B", ctx.b, cb)):
        if cs:
            ops = Counter(side.op(u) for c in cs for u in side.users(output_of(side, c)))
            users.append(f"{label}: {len(cs)} Constant nodes, read by {_fmt_ops(ops)}")
    e = _make("constant_nodes", "Constant nodes", ctx, ca, cb, "", users)
    detail = ("Values written as Constant nodes instead of initializers (the PyTorch exporter writes scalars such "
              "as Clip bounds this way): node count only, no arithmetic and no traffic once the model is loaded.")
    return [replace(e, detail=detail)]


@detector("shape_subgraph", "Constants not folded: shape and constant-only subgraphs")
def shape_subgraph(ctx: Context) -> list[Explanation]:
    fa, fb = foldable(ctx.a), foldable(ctx.b)
    if len(fa) == len(fb):
        return []
    items = []
    for label, side, fs in (("A", ctx.a, fa), ("B", ctx.b, fb)):
        if fs:
            items.append(f"{label}: {len(fs)} foldable nodes: {_fmt_ops(Counter(side.op(n) for n in fs))}")
    e = _make("shape_subgraph", "Unfolded constant subgraphs", ctx, fa, fb, "", items)
    detail = ("Nodes whose inputs are all constants, or Shape/Size of a tensor whose shape is fully known with the "
              "bound dims: the exporter left them for the runtime to compute (a folded export, or onnxruntime's "
              "graph optimizer, removes them). Each is a kernel launch; few bytes.")
    return [replace(e, detail=detail)]


@detector("opset", "Different opset imports")
def opset(ctx: Context) -> list[Explanation]:
    oa = dict(ctx.a.analysis.model.opsets)
    ob = dict(ctx.b.analysis.model.opsets)
    if oa == ob:
        return []
    items, na, nb = [], [], []
    for d in sorted(set(oa) | set(ob)):
        va, vb = oa.get(d), ob.get(d)
        if va == vb:
            continue
        ua, ub = domain_nodes(ctx.a, d), domain_nodes(ctx.b, d)
        name = d or "ai.onnx"
        items.append(f"{name}: A {va if va is not None else '—'} ({len(ua)} nodes), "
                     f"B {vb if vb is not None else '—'} ({len(ub)} nodes)"
                     + (" — imported but unused" if (va is None and not ub) or (vb is None and not ua) else ""))
        if va is not None and vb is not None:
            na += ua
            nb += ub
    e = _make("opset", "Opset imports differ", ctx, na, nb, "", items, cost_a=Cost(len(na)), cost_b=Cost(len(nb)))
    detail = ("Different opsets may change an op's semantics or let an exporter use a fused op (LayerNormalization "
              "from 17, Gelu from 20); a domain imported but used by no node changes nothing.")
    return [replace(e, detail=detail)]


@detector("dtype", "Different dtypes (weights, inputs/outputs, float casts)")
def dtype(ctx: Context) -> list[Explanation]:
    ta, tb = ctx.a.analysis.totals, ctx.b.analysis.totals
    pa, pb = dict(ta.params_by_dtype), dict(tb.params_by_dtype)
    io_a = [(t.name, t.dtype) for t in ctx.a.analysis.model.inputs + ctx.a.analysis.model.outputs]
    io_b = [(t.name, t.dtype) for t in ctx.b.analysis.model.inputs + ctx.b.analysis.model.outputs]
    ca, cb = float_casts(ctx.a), float_casts(ctx.b)
    dts_a, dts_b = sorted({d for _, d in io_a}), sorted({d for _, d in io_b})
    if set(pa) == set(pb) and dts_a == dts_b and len(ca) == len(cb):
        return []
    items = [f"weights: A {_dt(pa)}; B {_dt(pb)}",
             f"inputs/outputs: A {', '.join(dts_a)}; B {', '.join(dts_b)}"]
    if ca or cb:
        items.append(f"float↔float Casts: A {len(ca)}, B {len(cb)}")
    e = _make("dtype", "Dtypes differ", ctx, ca, cb, "", items,
              cost_a=ctx.a.cost_of(ca) + Cost(0, 0, 0, ta.param_bytes, 0),
              cost_b=ctx.b.cost_of(cb) + Cost(0, 0, 0, tb.param_bytes, 0))
    detail = ("Narrower types halve weight and activation bytes and use other peak rates; Casts between float types "
              "mark mixed-precision boundaries. Bytes here: weight bytes plus the Casts' traffic.")
    return [replace(e, side="both", detail=detail)]


def _dt(d: dict) -> str:
    return ", ".join(f"{k} {_n(v)}" for k, v in sorted(d.items())) or "none"


@detector("quantization", "Quantization (QDQ pairs, QLinear*/Integer ops)")
def quantization(ctx: Context) -> list[Explanation]:
    qa, qb = quant_nodes(ctx.a), quant_nodes(ctx.b)
    if Counter(ctx.a.op(n) for n in qa) == Counter(ctx.b.op(n) for n in qb):
        return []
    items = []
    for label, side, qs in (("A", ctx.a, qa), ("B", ctx.b, qb)):
        ops = Counter(side.op(n) for n in qs)
        fmt = ("QDQ" if ops.get("QuantizeLinear") or ops.get("DequantizeLinear") else "") + \
              (" + QLinear/Integer ops" if any(o not in ("QuantizeLinear", "DequantizeLinear") for o in ops) else "")
        items.append(f"{label}: {_fmt_ops(ops) if ops else 'none (float model)'}"
                     + (f" — {fmt.strip(' +')}" if ops else ""))
    e = _make("quantization", "Quantization differs", ctx, qa, qb, "", items)
    detail = ("Quantize/Dequantize nodes move data between integer and float; integer kernels read a quarter "
              "of the float bytes. The figures count integer ops apart from FLOPs.")
    return [replace(e, detail=detail)]


__all__ = ["Check", "Context", "DETECTORS", "Detector", "Explanation", "detector", "explain"]
