"""Bottlenecks grouped the way an engineer acts on them: by op type, by repeated block, by fusion
opportunity, each with its share of the predicted time and bytes and a one-line action.

Every figure comes from the roofline's per-node results (:class:`onnxperf.predict.roofline.RooflineResult`)
of the costs (:class:`~onnxperf.cost.analysis.Costs`) made with ``--hw``; nothing is predicted again. For a set S
of main-graph nodes:

    time(S)  = Σ t_n over n in S with a predicted time t_n
    share(S) = time(S) / T,        T = Σ t_n over every node = latency − per-run overhead
    bytes(S) = Σ q_n over n in S with t_n > 0 (q_n: the bytes the prediction charges the node;
               a node it runs no work for, folded or fused away, moves none)
    bytes_share(S) = bytes(S) / Σ q_n

so the op types' shares add up to 100% of the node time, the per-run overhead (a calibrated
spec's ``overhead_run_s``) is stated apart, and a node without a predicted time (no rule, unknown
shape) is counted and named, never taken as 0: every time is then a lower bound.

A node's bound is its limiter in the execution plan (:mod:`onnxperf.predict.plan`: compute, fill, memory or
dispatch, read off the prediction's row, never worked out again); a group's bound is the limiter that
holds most of its time (:func:`onnxperf.predict.plan.dominant`), as the roofline's own op-type rows have it.

Blocks are repeated layers: from node-name prefixes when the names carry a hierarchy (torch's
``/layer1/layer1.0/conv1/Conv``, tf2onnx's ``model/block_1/...`` and Keras' ``conv2_block1_1_conv``),
else from the graph (a block ends at each residual merge, with the ops after it up to the next
Conv/MatMul); blocks with the same op types (as a multiset) are one kind.

Fusion opportunities are patterns that runtimes fuse: elementwise ops right after a Conv/Gemm/MatMul
(its epilogue), normalizations and activations written out as primitive ops, layout Transposes,
attention written out (scores through memory, head Transposes). Each says whether the prediction
already assumes the fusion (the GPU kernel model of the GPU presets, onnxruntime's CPU fusions of a
calibrated spec: then its time is what is left) or charges it (then the saving is estimated from the
time the nodes take now). A node belongs to one opportunity at most, the most specific first.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import onnx.defs

from onnxperf.cost.analysis import Costs
from onnxperf.cost.walker import COUNTED
from onnxperf.insights.advice import verdict
from onnxperf.patterns.matchers import ACTIVATIONS, layout_transposes, scalar_value
from onnxperf.patterns.side import Side
from onnxperf.predict.gpu_kernels import is_pointwise
from onnxperf.predict.plan import COMPUTE, DISPATCH, FILL, LIMITERS, MEMORY, NONE, OWN, dominant
from onnxperf.predict.roofline import TRANSCENDENTAL, RooflineResult
from onnxperf.predict.tensors import _numel, links
from onnxperf.ui.numbers import pct, seconds

#: op families of the nodes whose output an epilogue rides on, and that split blocks
HEAVY_FAMILIES = frozenset({"conv", "matmul", "attention", "rnn"})
_SHAPE_OPS = frozenset({"Shape", "Size", "ConstantOfShape", "Range", "NonZero"})
_INT_TYPES = frozenset({"int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool"})
#: a tensor of integers this small is shape arithmetic, not data
_SHAPE_NUMEL = 16


# ----------------------------------------------------------------------------------- data model

@dataclass(frozen=True)
class OpTypeGroup:
    """The main-graph nodes of one op type (``uncosted`` of them without a predicted time)."""

    op_type: str
    domain: str
    nodes: int
    uncosted: int
    time_s: float
    share: float | None
    bytes: int
    bytes_share: float | None
    compute_s: float
    memory_s: float
    dispatch_s: float
    bound: str
    #: nodes the prediction runs inside another node's kernel, or runs no work for
    fused: int
    #: nodes that compute shapes (integer tensors of at most 16 elements, Shape, Range ...), and their time
    shape_nodes: int
    shape_s: float
    action: str
    #: time of its nodes limited by the GPU's fill (with compute_s, memory_s, dispatch_s: the four limiters)
    fill_s: float = 0.0


@dataclass(frozen=True)
class Block:
    name: str
    kind: int  # index into Bottlenecks.block_kinds
    first_key: str
    last_key: str
    nodes: int
    time_s: float
    share: float | None
    bytes: int
    bytes_share: float | None


@dataclass(frozen=True)
class BlockKind:
    """Blocks with the same op types: ``count`` of them, ``share_each`` = share / count (their
    shares range from ``share_min`` to ``share_max``)."""

    label: str
    ops: tuple[tuple[str, int], ...]
    count: int
    blocks: tuple[str, ...]
    time_s: float
    share: float | None
    share_each: float | None
    share_min: float | None
    share_max: float | None
    bytes: int
    bytes_share: float | None
    #: the op type with the most time in these blocks, and its share of their time
    top_op: str | None
    top_op_share: float | None
    action: str


@dataclass(frozen=True)
class Opportunity:
    """A fusion runtimes make, found ``islands`` times over ``nodes`` nodes. ``assumed``: ``yes``
    (the prediction already fuses every island: ``time_s`` is what is left), ``no`` (it charges
    every node) or ``partly``; ``saving_s``: the time fusing the charged islands saves, estimated as
    their time less what the fused kernel keeps (nothing for an epilogue, a layout Transpose or the
    ops around the attention MatMuls; the costliest member for a normalization or an activation
    written out)."""

    id: str
    title: str
    islands: int
    nodes: int
    keys: tuple[str, ...]
    ops: tuple[tuple[str, int], ...]
    time_s: float
    share: float | None
    bytes: int
    bytes_share: float | None
    assumed_islands: int
    assumed: str
    saving_s: float
    saving_share: float | None
    action: str


@dataclass(frozen=True)
class Uncosted:
    key: str
    name: str
    op_type: str
    status: str


@dataclass(frozen=True)
class Bottlenecks:
    hardware: str
    #: which prediction the times come from: plain roofline, GPU kernel model, CPU fusions, calibrated
    prediction: str
    latency_s: float
    node_time_s: float
    run_overhead_s: float
    bytes: int
    lower_bound: bool
    uncosted: tuple[Uncosted, ...]
    by_op_type: tuple[OpTypeGroup, ...]
    #: "names" (node-name prefixes), "structure" (residual merges) or "none"
    block_method: str
    blocks: tuple[Block, ...]
    block_kinds: tuple[BlockKind, ...]
    #: nodes in no block: (nodes, time_s, share, bytes, bytes_share)
    outside: tuple[int, float, float | None, int, float | None]
    opportunities: tuple[Opportunity, ...]
    notes: tuple[str, ...]
    #: two or three lines on the whole model: what is slow, why, what to change, how much it saves
    #: (:func:`onnxperf.insights.advice.verdict`)
    verdict: tuple[str, ...] = ()

    def to_dict(self, max_blocks: int | None = None, max_keys: int | None = None) -> dict[str, Any]:
        """Plain JSON types in a fixed order; ``max_blocks``: keep the blocks with the most time
        (in execution order) and the first names of each kind, the count of the others in
        ``blocks_left_out``; ``max_keys``: the
        first node keys of each opportunity, the count of the others in ``keys_left_out``."""
        d = _lists(asdict(self))
        blocks = d["blocks"]
        left = 0
        if max_blocks is not None and len(blocks) > max_blocks:
            keep = sorted(range(len(blocks)), key=lambda i: (-blocks[i]["time_s"], i))[:max_blocks]
            left = len(blocks) - max_blocks
            blocks = [blocks[i] for i in sorted(keep)]
        d["blocks"] = blocks
        d["blocks_left_out"] = left
        for k in d["block_kinds"]:
            names = k["blocks"]
            k["blocks"] = names[:max_blocks] if max_blocks is not None else names
            k["blocks_left_out"] = len(names) - len(k["blocks"])
        n, t, s, b, bs = self.outside
        d["outside"] = {"nodes": n, "time_s": t, "share": s, "bytes": b, "bytes_share": bs}
        for o in d["opportunities"]:
            keys = o["keys"]
            o["keys"] = keys[:max_keys] if max_keys is not None else keys
            o["keys_left_out"] = len(keys) - len(o["keys"])
        return d


def _lists(x: Any) -> Any:
    """``x`` with every tuple a list (JSON's types)."""
    if isinstance(x, dict):
        return {k: _lists(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_lists(v) for v in x]
    return x


# ------------------------------------------------------------------------------------ entry point

def bottlenecks(sm: Costs, rl: RooflineResult | None, spec: Any = None, precision: Any = None) -> Bottlenecks | None:
    """The bottleneck groups of the costs ``sm`` with their execution plan ``rl`` on ``spec`` (at
    ``precision``, the what-if the costs are for); None without a plan (no ``--hw``)."""
    if rl is None:
        return None
    nodes = sm.main_nodes
    ctx = _Context(sm, nodes, rl, spec, precision)
    notes = []
    unc = tuple(Uncosted(k, n.name, n.op_type, n.status) for n, k in zip(nodes, ctx.keys) if ctx.rows[k].time_s is None)
    if unc:
        ops = Counter(u.op_type for u in unc)
        notes.append(f"{len(unc)} node{'s' if len(unc) != 1 else ''} without a predicted time ("
                     + ", ".join(f"{op} ×{k}" for op, k in sorted(ops.items(), key=lambda x: (-x[1], x[0])))
                     + "): every time and share here is of the nodes predicted, a lower bound")
    by_op = _by_op_type(ctx)
    method, blocks, kinds, outside = _blocks(ctx, {g.op_type: g for g in by_op})
    opps = _opportunities(ctx, notes)
    return Bottlenecks(
        hardware=getattr(spec, "id", None) or rl.spec_id, prediction=rl.prediction, latency_s=rl.latency_s,
        node_time_s=ctx.total_s, run_overhead_s=rl.run_overhead_s, bytes=ctx.total_bytes,
        lower_bound=rl.lower_bound or bool(unc), uncosted=unc, by_op_type=by_op, block_method=method,
        blocks=blocks, block_kinds=kinds, outside=outside, opportunities=opps, notes=tuple(notes),
        verdict=verdict(sm, rl, spec, precision, by_op, opps))


class _Context:
    """What every grouping reads: nodes in execution order and their keys, their rows of the execution
    plan (time, bytes, limiter, placement: :data:`OWN`, :data:`INSIDE`, :data:`FREE`), and totals."""

    def __init__(self, sm, nodes, rl, spec, precision):
        self.sm, self.nodes, self.spec = sm, nodes, spec
        self.keys = [n.key for n in nodes]
        self.rows = {r.key: r for r in rl.nodes}
        self.treatment = {k: r.runs for k, r in self.rows.items()}
        self.t = {k: r.time_s or 0.0 for k, r in self.rows.items()}
        self.q = {k: r.bytes if r.time_s else 0 for k, r in self.rows.items()}
        self.total_s = sum(r.time_s for r in rl.nodes if r.time_s is not None)
        self.total_bytes = sum(self.q.values())
        self.prediction = rl.prediction
        self.precision = getattr(precision, "name", None)
        self.pos = {k: i for i, k in enumerate(self.keys)}
        self.shape = [_is_shape_node(n) for n in nodes]
        self.family: dict[str, str] = {}
        for n in nodes:
            self.family.setdefault(n.op_type, n.family)

    def time_of(self, key: str) -> float:
        return self.t[key]

    def bytes_of(self, key: str) -> int:
        return self.q[key]

    def share(self, t: float) -> float | None:
        return t / self.total_s if self.total_s else None

    def bytes_share(self, b: int) -> float | None:
        return b / self.total_bytes if self.total_bytes else None

    def bound(self, key: str) -> str | None:
        r = self.rows[key]
        return None if r.time_s is None else r.bound


def _ops(names) -> tuple[tuple[str, int], ...]:
    """(op type, count), most first, then by name."""
    return tuple(sorted(Counter(names).items(), key=lambda x: (-x[1], x[0])))


def ops_text(ops) -> str:
    """``Relu ×49, Add ×16``."""
    return ", ".join(f"{op} ×{k}" for op, k in ops)


# ------------------------------------------------------------------------------------- by op type

#: the action for an op category and the bound that holds most of its time ("*": any bound): a prefix and
#: clauses joined by "; "; a clause naming a precision the run already has (``{lower}``, ``{narrow}``,
#: ``{half}``: :func:`_precision_words`) is left out
_ACTIONS = {
    ("conv", COMPUTE): ("compute-bound", "{lower} raises the roof; fewer MACs (depthwise-separable or pruned convs) "
                                         "cut it"),
    ("conv", FILL): ("too small to fill the GPU", "a larger batch (--dim batch=N) or input gives every SM work"),
    ("conv", MEMORY): ("memory-bound", "a larger batch (--dim batch=N) reuses each weight more; {narrow}"),
    ("matmul", COMPUTE): ("compute-bound", "{lower} raises the roof (tensor cores); fewer operations (a smaller or "
                                           "pruned model) cut it"),
    ("matmul", FILL): ("too few rows to fill the GPU", "more rows per run (--dim batch=N, longer sequences) give "
                                                       "every SM work"),
    ("matmul", MEMORY): ("memory-bound on its weights", "more rows per run (--dim batch=N, longer sequences) or "
                                                        "{weights} weights"),
    ("attention", "*"): ("attention", "a fused kernel (FlashAttention, onnxruntime's MultiHeadAttention) keeps the "
                                      "scores on chip; {half} halves their bytes"),
    ("pointwise", MEMORY): ("memory-bound elementwise", "fuse into the producer (the conv/matmul epilogue) or into one "
                                                        "pointwise kernel"),
    ("pointwise", COMPUTE): ("bound by its arithmetic", "{half} doubles the roof; fusing it into the producer saves "
                                                        "its pass over memory"),
    ("transcendental", COMPUTE): ("bound by per-element arithmetic (a transcendental)",
                                  "an approximate or fused kernel (FastGelu, QuickGelu); {half} doubles the roof"),
    ("transcendental", MEMORY): ("memory-bound elementwise", "fuse into the producer (the conv/matmul epilogue) or "
                                                             "into one pointwise kernel"),
    ("norm", "*"): ("normalization", "fuse it with the residual Add before it (SkipLayerNormalization) or the op after "
                                     "it; {half} halves its bytes"),
    ("batchnorm", "*"): ("a BatchNorm left in the graph", "fold it into the conv before it (constant folding at "
                                                          "export, or the runtime's ConvBNFusion)"),
    ("softmax", "*"): ("the attention scores make a round trip through memory", "fused attention (FlashAttention, "
                                                                                 "onnxruntime's Attention) keeps them "
                                                                                 "on chip"),
    ("reduce", "*"): ("a reduction written out", "fuse it into the normalization or pooling it belongs to"),
    ("pool", MEMORY): ("memory-bound pooling", "fuse it into the conv before it; {half} halves its bytes"),
    ("pool", "*"): ("pooling", "fuse it into the conv before it; {half} halves its bytes"),
    ("transpose", "*"): ("pure data movement", "remove it (export in the layout the runtime uses; onnxruntime's "
                                               "transpose optimizer cancels pairs) or fold it into the consumer"),
    ("movement", "*"): ("data movement with no arithmetic", "write in place (concat into the consumer's buffer), make "
                                                            "it a view, or remove it"),
    ("gather", "*"): ("a lookup bound by the rows it moves", "{narrow}"),
    ("shape", "*"): ("shape arithmetic at every run", "constant-fold / simplify the graph (onnxsim) with the dims fixed"),
    ("cast", "*"): ("dtype conversions", "export in the precision you run, so no Cast is left"),
    ("resize", "*"): ("resampling", "nearest instead of linear, or fuse it into the next conv; {half} halves its "
                                    "bytes"),
    ("quant", "*"): ("(de)quantization around float ops", "run the op itself in int8 (QDQ fusion, QLinear*) so the "
                                                          "pair goes"),
    ("other", COMPUTE): ("compute-bound", "{lower} raises the roof; fewer operations cut it"),
    ("other", FILL): ("too small to fill the GPU", "a larger batch (--dim batch=N) gives every SM work"),
    ("other", MEMORY): ("memory-bound", "{narrow}; or fuse it with its neighbours"),
    ("other", "*"): ("", "fuse it with its neighbours or batch more (--dim batch=N)"),
    ("*", NONE): ("no work in this prediction (views, folded or fused away)", ""),
}
_CATEGORY_OF_OP = {"Softmax": "softmax", "LogSoftmax": "softmax", "Transpose": "transpose", "Cast": "cast",
                   "CastLike": "cast", "BatchNormalization": "batchnorm", **dict.fromkeys(_SHAPE_OPS, "shape")}
_CATEGORY_OF_FAMILY = {"conv": "conv", "matmul": "matmul", "attention": "attention", "elementwise": "pointwise",
                       "activation": "pointwise", "norm": "norm", "reduce": "reduce", "pool": "pool",
                       "movement": "movement", "gather_scatter": "gather", "resize": "resize", "quant": "quant"}


def _precision_words(precision: str | None) -> dict[str, str | None]:
    """What an action may offer at the ``--precision`` the run already has (None: as stored): a lower
    precision, narrower bytes, half the bytes, narrower weights; None where nothing lower is left."""
    if precision in ("int8",):
        return {"lower": None, "narrow": None, "half": None, "weights": "int4"}
    if precision in ("fp16", "bf16", "fp8"):
        return {"lower": "int8 (--precision int8)", "narrow": "int8 moves half of the bytes" if precision != "fp8"
                else None, "half": None, "weights": "int8/int4"}
    return {"lower": "lower precision (--precision fp16/int8)", "narrow": "fp16/int8 moves half/a quarter of the bytes",
            "half": "fp16", "weights": "int8/int4"}


def _say(key: tuple[str, str], precision: str | None) -> str:
    """The action ``key`` worded for the run's precision (:data:`_ACTIONS`)."""
    prefix, body = _ACTIONS[key]
    words = _precision_words(precision)
    clauses = []
    for clause in body.split("; ") if body else ():
        names = re.findall(r"{(\w+)}", clause)
        if all(words[x] is not None for x in names):
            clauses.append(clause.format(**{x: words[x] for x in names}))
    text = "; ".join(clauses) or ("" if not body else "fewer operations or bytes cut it")
    return f"{prefix}: {text}" if prefix and text else prefix or text


def action_for(op_type: str, family: str, bound: str, shape_share: float = 0.0, precision: str | None = None) -> str:
    """The one-line action for an op type whose time is mostly ``bound``; ``shape_share``: the share
    of its nodes that compute shapes (over half: it is shape arithmetic); ``precision``: the run's
    ``--precision`` (an action never offers the one it already has). Dispatch-bound: the per-node
    cost first, then what removes the node."""
    cat = "shape" if shape_share > 0.5 else _CATEGORY_OF_OP.get(
        op_type, "transcendental" if op_type in TRANSCENDENTAL else _CATEGORY_OF_FAMILY.get(family, "other"))
    if bound == NONE:
        return _say(("*", NONE), precision)
    if bound == DISPATCH:
        fix = _say((cat, "*") if (cat, "*") in _ACTIONS else ("other", "*"), precision)
        return "dispatch-bound (the per-node or launch cost outweighs the work): " + fix
    if bound == FILL and (cat, FILL) not in _ACTIONS:
        return _say(("other", FILL), precision)
    for k in ((cat, bound), (cat, "*"), ("other", bound)):
        if k in _ACTIONS:
            return _say(k, precision)
    return _say(("other", MEMORY), precision)


def _is_shape_node(n) -> bool:
    if n.op_type in _SHAPE_OPS:
        return True
    outs = [o for o in n.outputs if o is not None]
    return bool(outs) and all(o.dtype in _INT_TYPES and o.shape is not None and all(isinstance(d, int) for d in o.shape)
                              and math.prod(o.shape) <= _SHAPE_NUMEL for o in outs)


def _by_op_type(ctx: _Context) -> tuple[OpTypeGroup, ...]:
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for n, k, shape in zip(ctx.nodes, ctx.keys, ctx.shape):
        g = acc.setdefault((n.domain, n.op_type), {"family": n.family, "nodes": 0, "uncosted": 0, "t": 0.0, "b": 0,
                                                   **dict.fromkeys(LIMITERS, 0.0), "fused": 0, "shape": 0,
                                                   "shape_s": 0.0})
        g["nodes"] += 1
        g["shape"] += shape
        g["fused"] += ctx.treatment[k] != OWN
        b = ctx.bound(k)
        if b is None:
            g["uncosted"] += 1
            continue
        t = ctx.t[k]
        g["shape_s"] += t if shape else 0.0
        g["t"] += t
        g["b"] += ctx.q[k]
        if b in LIMITERS:
            g[b] += t
    out = []
    for (domain, op), g in acc.items():
        by = {k: g[k] for k in LIMITERS}
        bound = dominant(by)
        act = action_for(op, g["family"], bound, g["shape_s"] / g["t"] if g["t"] else g["shape"] / g["nodes"],
                         ctx.precision)
        if g["uncosted"] == g["nodes"]:  # nothing of it is known: not "no work"
            bound = "unknown"
            act = (f"not costed ({g['nodes']} node{'s' if g['nodes'] != 1 else ''} without a predicted time): "
                   "its time is unknown, and every total here is a lower bound")
        if g["fused"] == g["nodes"] and (bound != NONE or g["t"] == 0):
            act = (f"already fused: this prediction runs every {op} inside another node's kernel or not at all; "
                   + (f"the {seconds(g['t'])} left is their share of those kernels" if g["t"] else
                      "their work is in the rows of the nodes whose kernels run them"))
        elif g["fused"] and bound != NONE:
            act = f"{g['fused']} of {g['nodes']} run inside another kernel or not at all in this prediction; " + act
        timed = g["nodes"] > g["uncosted"]
        out.append(OpTypeGroup(op, domain, g["nodes"], g["uncosted"], g["t"], ctx.share(g["t"]) if timed else None,
                               g["b"], ctx.bytes_share(g["b"]) if timed else None, by[COMPUTE], by[MEMORY],
                               by[DISPATCH], bound, g["fused"], g["shape"], g["shape_s"], act, by[FILL]))
    return tuple(sorted(out, key=lambda x: (-x.time_s, x.uncosted == x.nodes, x.domain, x.op_type)))


# ----------------------------------------------------------------------------------------- blocks

#: a node-name prefix must put at least this share of the nodes in repeated blocks to be used
NAME_COVERAGE = 0.3
_TOKEN = re.compile(r"[^/_]+")


def _scope_tokens(name: str) -> list[tuple[str, int]]:
    """(token, its end in ``name``) of a node name's scope: the name less its last ``/`` part (the
    node's own name) split at ``/`` and ``_``; a name without ``/`` loses its last ``_`` part."""
    cut = name.rfind("/")
    if cut < 0:
        cut = name.rfind("_")
    return [(m.group(), m.end()) for m in _TOKEN.finditer(name, 0, max(cut, 0))]


def _signature(ctx: _Context, members: list[int]) -> frozenset:
    """What makes two blocks one kind: the op types of their nodes (a multiset), less Constants and
    shape arithmetic (which exporters place unevenly: the first layer computes the shapes the others
    reuse)."""
    return frozenset(Counter(ctx.nodes[i].op_type for i in members
                             if not ctx.shape[i] and ctx.nodes[i].op_type != "Constant").items())


def _name_groups(ctx: _Context) -> tuple[list[tuple[str, list[int]]], int]:
    """Blocks from name prefixes: the depth whose groups of two or more nodes put the most nodes in
    groups with a shared signature (ties: the shallower); (name, node indices) in execution order."""
    toks = [_scope_tokens(n.name) for n in ctx.nodes]
    words = [tuple(x for x, _ in t) for t in toks]
    real = [n.op_type != "Constant" for n in ctx.nodes]
    best: tuple[int, int, list] = (0, 0, [])
    for d in range(min(max((len(t) for t in toks), default=0), 12)):
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, w in enumerate(words):
            if len(w) > d:
                groups.setdefault(w[: d + 1], []).append(i)
        groups = {k: v for k, v in groups.items() if sum(real[i] for i in v) >= 2}
        if len(groups) < 2:
            continue
        sig = {k: _signature(ctx, v) for k, v in groups.items()}
        sigs = Counter(sig.values())
        covered = sum(len(v) for k, v in groups.items() if sigs[sig[k]] >= 2)
        if covered > best[0]:
            named = [(ctx.nodes[v[0]].name[: toks[v[0]][d][1]].lstrip("/"), v) for v in groups.values()]
            best = (covered, d, sorted(named, key=lambda x: x[1][0]))
    return best[2], best[0]


def _structure_groups(ctx: _Context) -> list[tuple[str, list[int]]]:
    """Blocks from the graph: a block ends at a residual merge (an Add/Sum of two computed tensors of
    the same size: outputs of nodes other than Constant, or graph inputs) and keeps the ops after it
    up to the next Conv/MatMul/attention/RNN node."""
    producer = links(ctx.nodes)[0]
    graph_inputs = {t.name for t in ctx.sm.model.inputs}
    out: list[list[int]] = [[]]
    merged = False
    for i, n in enumerate(ctx.nodes):
        if merged and n.family in HEAVY_FAMILIES and out[-1]:
            out.append([])
            merged = False
        out[-1].append(i)
        if n.op_type in ("Add", "Sum") and not n.domain:
            ins = [t for t in n.inputs if t is not None and (t.name in graph_inputs or (
                t.name in producer and producer[t.name].op_type != "Constant"))]
            sizes = {math.prod(t.shape) for t in ins if t.shape is not None and all(isinstance(d, int) for d in t.shape)}
            merged = merged or (len(ins) >= 2 and len(sizes) == 1)
    return [(f"#{ctx.keys[v[0]]}–#{ctx.keys[v[-1]]}", v) for v in out if v]


def _pattern(names: list[str]) -> str:
    """The block names with the numbers that differ between them as ``*``: ``layer*/layer*.*``."""
    parts = [re.split(r"(\d+)", s) for s in names]
    if len({len(p) for p in parts}) != 1 or len({tuple(p[::2]) for p in parts}) != 1:
        return names[0] + (" …" if len(names) > 1 else "")
    cols = list(zip(*parts))
    return "".join(c[0] if k % 2 == 0 or len(set(c)) == 1 else "*" for k, c in enumerate(cols))


def _blocks(ctx: _Context, op_groups: dict[str, OpTypeGroup]):
    groups, covered = _name_groups(ctx)
    method = "names"
    if covered < NAME_COVERAGE * sum(n.op_type != "Constant" for n in ctx.nodes):
        groups, method = _structure_groups(ctx), "structure"
    sig_of = [_signature(ctx, v) for _, v in groups]
    if not groups or max(Counter(sig_of).values()) < 2:
        nt, nb = sum(ctx.t.values()), ctx.total_bytes
        return "none", (), (), (len(ctx.nodes), nt, ctx.share(nt), nb, ctx.bytes_share(nb))
    by_sig: dict[frozenset, list[int]] = {}
    for j, s in enumerate(sig_of):
        by_sig.setdefault(s, []).append(j)
    keys = ctx.keys
    times = [sum(ctx.t[keys[i]] for i in v) for _, v in groups]
    nbytes = [sum(ctx.q[keys[i]] for i in v) for _, v in groups]
    kinds_raw = sorted(by_sig.items(), key=lambda kv: (len(kv[1]) < 2, -sum(times[j] for j in kv[1]), kv[1][0]))
    kind_of: dict[int, int] = {}
    kinds = []
    for k, (sig, members) in enumerate(kinds_raw):
        for j in members:
            kind_of[j] = k
        t = sum(times[j] for j in members)
        b = sum(nbytes[j] for j in members)
        per_op: Counter = Counter()
        for j in members:
            for i in groups[j][1]:
                per_op[ctx.nodes[i].op_type] += ctx.t[keys[i]]
        top = min(per_op, key=lambda op: (-per_op[op], op)) if per_op and t else None
        top_share = per_op[top] / t if top is not None else None
        shares = [ctx.share(times[j]) for j in members]
        names = [groups[j][0] for j in members]
        label = _pattern(names) if method == "names" else f"blocks like {names[0]}"
        count = len(members)
        if top is None:
            action = "no predicted time"
        else:
            g = op_groups[top]
            action = (f"{top} is {pct(top_share)} of {'each' if count > 1 else 'it'}: "
                      + action_for(top, ctx.family[top], g.bound, g.shape_s / g.time_s if g.time_s else 0.0, ctx.precision)
                      + (f"; a saving in one counts {count} times" if count > 1 else ""))
        kinds.append(BlockKind(label, tuple(sorted(sig, key=lambda x: (-x[1], x[0]))),
                               count, tuple(names), t, ctx.share(t),
                               None if ctx.share(t) is None else ctx.share(t) / count,
                               min(shares) if None not in shares else None, max(shares) if None not in shares else None,
                               b, ctx.bytes_share(b), top, top_share, action))
    blocks = tuple(Block(name, kind_of[j], keys[v[0]], keys[v[-1]], len(v), times[j],
                         ctx.share(times[j]), nbytes[j], ctx.bytes_share(nbytes[j]))
                   for j, (name, v) in enumerate(groups))
    inside = {i for _, v in groups for i in v}
    rest = [k for i, k in enumerate(keys) if i not in inside]
    rt = sum(ctx.t[k] for k in rest)
    rb = sum(ctx.q[k] for k in rest)
    if rest and all(ctx.bound(k) is None for k in rest):  # only uncosted nodes outside: unknown, not 0%
        return method, blocks, tuple(kinds), (len(rest), rt, None, rb, None)
    return method, blocks, tuple(kinds), (len(rest), rt, ctx.share(rt), rb, ctx.bytes_share(rb))

# ------------------------------------------------------------------------------ fusion opportunities

@dataclass(frozen=True)
class _Found:
    """What a detector found: islands of node keys, and facts its title and action use."""

    islands: list[list[str]]
    info: dict[str, Any]


class _Graph:
    """Read-only lookups the detectors share: producers and readers by tensor name, graph outputs,
    constants, and the comparison's :class:`~onnxperf.patterns.side.Side` for its pattern matchers."""

    def __init__(self, ctx: _Context):
        self.ctx = ctx
        self.side = Side(0, "", ctx.sm)
        self.producer, self.users = links(ctx.nodes)
        self.outputs = {o.name for o in ctx.sm.model.outputs}
        self.by_id = {n.id: n for n in ctx.nodes}

    def const(self, t) -> bool:
        return t is not None and self.side.is_const(t.name)

    def computed(self, n) -> list:
        """``n``'s inputs that are neither absent nor constant."""
        return [t for t in n.inputs if t is not None and not self.const(t)]

    def sole_user(self, n):
        outs = [o for o in n.outputs if o is not None]
        if len(outs) != 1 or outs[0].name in self.outputs:
            return None
        us = self.users.get(outs[0].name, ())
        return us[0] if len(us) == 1 else None


def _attention(g: _Graph) -> _Found:
    """Softmax between two MatMuls of computed operands (Q·Kᵀ and P·V), with the scale, mask and
    Softmax between them and the Transposes that split and merge the heads: the ops a fused
    attention kernel removes (the two MatMuls stay, counted under MatMul)."""
    out = []
    for s in g.ctx.nodes:
        if s.op_type != "Softmax" or s.domain or not s.inputs or s.inputs[0] is None:
            continue
        island, cur, qk = [s], s.inputs[0], None
        for _ in range(4):
            p = g.producer.get(cur.name)
            if p is None:
                break
            if p.op_type == "MatMul" and len(g.computed(p)) == 2:
                qk = p
                break
            nxt = [t for t in g.computed(p) if _numel(t) == _numel(p.outputs[0])] if is_pointwise(p) else []
            if not nxt:
                break
            island.append(p)
            cur = nxt[0]
        pv, cur = None, s
        for _ in range(3):
            u = g.sole_user(cur)
            if u is None:
                break
            if u.op_type == "MatMul" and len(g.computed(u)) == 2:
                pv = u
                break
            if u.op_type not in ("Dropout", "Cast", "Identity"):
                break
            island.append(u)
            cur = u
        if qk is None or pv is None:
            continue
        for t in (*qk.inputs, *pv.inputs):
            p = g.producer.get(t.name) if t is not None else None
            if p is not None and p.op_type == "Transpose":
                island.append(p)
        for o in pv.outputs:
            island += [u for u in g.users.get(o.name, ()) if u.op_type == "Transpose"] if o is not None else []
        out.append([n.key for n in island])
    return _Found(out, {})


def _norms(g: _Graph) -> _Found:
    """Normalizations written out: a ReduceMean of a square (Pow(d, 2) or d·d), d = x − ReduceMean(x)
    (LayerNorm) or x (RMSNorm), then eps, Sqrt, Reciprocal/Div up to the Div or Mul that reads d, and
    a constant scale and shift after it."""
    out, kinds = [], Counter()
    for v in g.ctx.nodes:
        if v.op_type != "ReduceMean" or v.domain or not v.inputs or v.inputs[0] is None:
            continue
        sq = g.producer.get(v.inputs[0].name)
        if sq is None or not sq.inputs or sq.inputs[0] is None:
            continue
        d = sq.inputs[0]
        is_square = (sq.op_type == "Pow" and len(sq.inputs) > 1 and _scalar(g, sq.inputs[1]) == 2.0) or (
            sq.op_type == "Mul" and len(sq.inputs) == 2 and sq.inputs[1] is not None and sq.inputs[1].name == d.name)
        if not is_square:
            continue
        island = [sq, v]
        centre = g.producer.get(d.name)
        layer = False
        if centre is not None and centre.op_type == "Sub" and len(centre.inputs) == 2 and None not in centre.inputs:
            mean = g.producer.get(centre.inputs[1].name)
            if mean is not None and mean.op_type == "ReduceMean" and mean.inputs and mean.inputs[0] is not None \
                    and mean.inputs[0].name == centre.inputs[0].name:
                island = [mean, centre, *island]
                layer = True
        cur, closed = v, False
        for _ in range(5):
            u = g.sole_user(cur)
            if u is None or u.op_type not in ("Add", "Sqrt", "Reciprocal", "Div", "Mul"):
                break
            island.append(u)
            cur = u
            if u.op_type in ("Div", "Mul") and any(t is not None and t.name == d.name for t in u.inputs):
                closed = True
                break
        if not closed:
            continue
        for op in ("Mul", "Add"):  # the affine scale and shift
            u = g.sole_user(cur)
            if u is not None and u.op_type == op and any(g.const(t) for t in u.inputs):
                island.append(u)
                cur = u
        kinds["LayerNorm" if layer else "RMSNorm"] += 1
        out.append([n.key for n in sorted(island, key=lambda n: g.ctx.pos[n.key])])
    return _Found(out, {"kinds": kinds})


def _scalar(g: _Graph, t) -> float | None:
    if t is None:
        return None
    return scalar_value(g.side, t.name)


def _activations(g: _Graph) -> _Found:
    """GELU (Erf and tanh forms), HardSwish, Swish/SiLU and Mish written out as primitive ops: the
    comparison's matchers (:data:`onnxperf.patterns.matchers.ACTIVATIONS`)."""
    out, kinds, seen = [], Counter(), set()
    for label, _fused_ops, match in ACTIVATIONS:
        for ids in match(g.side):
            keys = [g.by_id[i].key for i in ids if i in g.by_id and i not in seen]
            if len(keys) < 2:
                continue
            seen.update(ids)
            kinds[label.split(" (")[0]] += 1
            out.append(keys)
    return _Found(out, {"kinds": kinds})


def _layout(g: _Graph) -> _Found:
    """Transposes that change the layout around a conv or pooling: an NHWC↔NCHW permutation, or any
    Transpose whose input a conv/pool writes or whose output one reads."""
    perms = {nid for nid, _ in layout_transposes(g.side)}
    graph_inputs = {i.name for i in g.ctx.sm.model.inputs}  # once, not per Transpose
    has_conv = any(n.family == "conv" for n in g.ctx.nodes)
    out = []
    for n in g.ctx.nodes:
        if n.op_type != "Transpose" or not n.inputs or n.inputs[0] is None or not n.outputs or n.outputs[0] is None:
            continue
        p = g.producer.get(n.inputs[0].name)
        near = (p is not None and p.family in ("conv", "pool")) or any(
            u.family in ("conv", "pool") for u in g.users.get(n.outputs[0].name, ()))
        if near or (n.id in perms and (n.inputs[0].name in graph_inputs or n.outputs[0].name in g.outputs)
                    and has_conv):
            out.append([n.key])
    return _Found(out, {})


def _epilogues(g: _Graph) -> _Found:
    """Pointwise ops after a Conv/Gemm/MatMul, link by link, whose input that node (or an earlier
    link) writes, is read by pointwise ops alone and has the output's size: the epilogue a GPU
    runtime runs in the GEMM's kernel (:mod:`onnxperf.predict.gpu_kernels`), onnxruntime's CPU provider in
    part (an activation, a residual Add, a BatchNorm folded)."""
    roots = {n.key for n in g.ctx.nodes if n.family in ("conv", "matmul") and n.status == COUNTED}
    root_of: dict[str, str] = {}
    islands: dict[str, list[str]] = {}
    root_ops = Counter()
    for n in g.ctx.nodes:
        if n.key in roots or not is_pointwise(n) or not n.outputs or n.outputs[0] is None:
            continue
        for t in n.inputs:
            p = g.producer.get(t.name) if t is not None and t.name not in g.outputs else None
            r = None if p is None else (p.key if p.key in roots else root_of.get(p.key))
            if r is None or _numel(n.outputs[0]) is None or _numel(n.outputs[0]) != _numel(p.outputs[0]):
                continue
            if not all(is_pointwise(u) for u in g.users.get(t.name, ())):
                continue
            root_of[n.key] = r
            if r not in islands:
                root_ops[g.ctx.rows[r].op_type] += 1
            islands.setdefault(r, []).append(n.key)
            break
    return _Found(list(islands.values()), {"roots": root_ops})


#: (id, detector, fused kernel keeps: "none" or "max", own kernels an island keeps when fused), most
#: specific first: a node found by one is not offered to the next
_DETECTORS = (
    ("unfused_attention", _attention, "none", 0),
    ("unfused_norm", _norms, "max", 1),
    ("decomposed_activation", _activations, "max", 1),
    ("layout_transpose", _layout, "none", 0),
    ("epilogue", _epilogues, "none", 0),
)


def _opportunities(ctx: _Context, notes: list[str]) -> tuple[Opportunity, ...]:
    if ctx.sm.loaded is None:
        notes.append("fusion opportunities need the model's graph, which this analysis does not carry")
        return ()
    g = _Graph(ctx)
    claimed: set[str] = set()
    out = []
    for oid, detect, keep, ideal in _DETECTORS:
        found = detect(g)
        islands = []
        for isl in found.islands:
            isl = [k for k in dict.fromkeys(isl) if k not in claimed]
            if isl:
                claimed.update(isl)
                islands.append(isl)
        if islands:
            out.append(_opportunity(ctx, oid, islands, keep, ideal, found.info))
    return tuple(sorted(out, key=lambda o: (-o.time_s, o.id)))


def _opportunity(ctx: _Context, oid: str, islands: list[list[str]], keep: str, ideal: int,
                 info: dict[str, Any]) -> Opportunity:
    keys = tuple(k for isl in islands for k in isl)
    t = sum(ctx.time_of(k) for k in keys)
    b = sum(ctx.bytes_of(k) for k in keys)
    assumed = [sum(ctx.treatment[k] == OWN for k in isl) <= ideal for isl in islands]
    saving = sum(sum(ctx.time_of(k) for k in isl) - (max(ctx.time_of(k) for k in isl) if keep == "max" else 0.0)
                 for isl, done in zip(islands, assumed) if not done)
    n_assumed = sum(assumed)
    state = "yes" if n_assumed == len(islands) else "no" if not n_assumed else "partly"
    ops = _ops(ctx.rows[k].op_type for k in keys)
    stats = {"islands": len(islands), "nodes": len(keys), "time": t, "saving": saving, "assumed": n_assumed,
             "state": state, "ops": ops, "left": sum(ctx.time_of(k) for isl, done in zip(islands, assumed) if done
                                                      for k in isl)}
    title, action = _WORDS[oid](ctx, stats, info)
    return Opportunity(oid, title, len(islands), len(keys), keys, ops, t, ctx.share(t), b, ctx.bytes_share(b),
                       n_assumed, state, saving, ctx.share(saving), action)


def _fusing_spec(ctx: _Context) -> str:
    """A spec whose prediction models the runtime's fusions."""
    spec = ctx.spec
    sid = str(getattr(spec, "id", ""))
    if getattr(spec, "kind", "") == "gpu":
        return f"--hw {sid[:-len(':plain')]}" if sid.endswith(":plain") else "a GPU preset (--hw rtx3090, t4 ...)"
    return "a calibrated spec (onnxperf hw calibrate -o local.toml, then --hw local.toml)"


def _saving(ctx: _Context, s: dict) -> str:
    return f"{seconds(s['saving'])} ({pct(ctx.share(s['saving']))} of the node time)"


def _charged_part(ctx: _Context, s: dict, what: str) -> str:
    """The clause for islands the prediction charges (all, or the rest of a partly assumed set)."""
    if s["state"] == "partly":
        return (f"{s['assumed']} of {s['islands']} already fused in this prediction ({ctx.prediction}); "
                f"the other {s['islands'] - s['assumed']} are charged: {what} saves up to {_saving(ctx, s)}")
    return f"this prediction ({ctx.prediction}) charges them: {what} saves up to {_saving(ctx, s)}"


def _words_epilogue(ctx: _Context, s: dict, info: dict) -> tuple[str, str]:
    roots = "/".join(op for op, _ in info["roots"].most_common()) or "Conv/Gemm/MatMul"
    title = f"Elementwise right after a {roots} (its epilogue): {ops_text(s['ops'])}"
    if s["state"] == "yes":
        left = (f"the {seconds(s['time'])} left on them is the fused kernels' output write (the {roots} no longer "
                "writes its own)" if s["time"] else
                f"their traffic (the kernels' output write) is in the {roots} rows, overlapped with the arithmetic")
        return title, (f"already fused into the {roots} kernels in this prediction ({ctx.prediction}): {left}; "
                       "nothing to gain by hand")
    tail = "" if ctx.prediction != "plain roofline" else f"; {_fusing_spec(ctx)} models the fusion"
    return title, (f"GPU runtimes (TensorRT, onnxruntime's CUDA provider, XLA) run these inside the {roots} before "
                   "them (onnxruntime's CPU provider an activation, a residual Add after a Conv, a bias after a 2-D "
                   "MatMul); " + _charged_part(ctx, s, "fusing") + tail)


def _words_norm(ctx: _Context, s: dict, info: dict) -> tuple[str, str]:
    kinds = info["kinds"]
    title = ("Normalizations written out as primitive ops: "
             + ", ".join(f"{k} ×{v}" for k, v in sorted(kinds.items())) + f" ({ops_text(s['ops'])})")
    export = " or ".join(x for x in (
        f"opset ≥ {_first_opset('LayerNormalization')} gives LayerNormalization" if kinds.get("LayerNorm") else "",
        f"opset ≥ {_first_opset('RMSNormalization')} gives RMSNormalization" if kinds.get("RMSNorm") else "") if x)
    if s["state"] == "yes":
        return title, (f"already one kernel each in this prediction ({ctx.prediction}; {seconds(s['time'])} left); "
                       f"a runtime without that fusion runs {s['nodes'] // max(s['islands'], 1)} kernels each: "
                       f"export with {export} to be sure")
    return title, (f"export with {export}, or let onnxruntime's LayerNormFusion rewrite them at load; "
                   + _charged_part(ctx, s, "one kernel each"))


def _words_activation(ctx: _Context, s: dict, info: dict) -> tuple[str, str]:
    kinds = info["kinds"]
    title = ("Activations written out: " + ", ".join(f"{k} ×{v}" for k, v in sorted(kinds.items()))
             + f" ({ops_text(s['ops'])})")
    ops = {"GELU": "Gelu", "HardSwish": "HardSwish", "Swish/SiLU or HardSwish": "Swish", "Mish": "Mish"}
    export = ", ".join(f"{ops[k]} from opset {_first_opset(ops[k])}" for k in sorted(kinds) if k in ops)
    if s["state"] == "yes":
        return title, (f"already one kernel each in this prediction ({ctx.prediction}; {seconds(s['time'])} left); "
                       f"the fused op ({export}) makes it so on every runtime")
    return title, (f"export the fused op ({export}), or let the runtime fuse it (onnxruntime's GeluFusion, "
                   "TensorRT's pointwise fusion); " + _charged_part(ctx, s, "one kernel each"))


def _words_layout(ctx: _Context, s: dict, info: dict) -> tuple[str, str]:
    title = f"Layout Transposes around convs and pools: {ops_text(s['ops'])}"
    return title, ("they move every element with no arithmetic: export channels-first (tf2onnx --inputs-as-nchw) "
                   "or let onnxruntime's transpose optimizer cancel the pairs; "
                   + _charged_part(ctx, s, "removing them") if s["state"] != "yes" else
                   "already folded or fused in this prediction: nothing left to gain")


def _words_attention(ctx: _Context, s: dict, info: dict) -> tuple[str, str]:
    title = (f"Attention written out ({s['islands']}×): scores through memory, head Transposes "
             f"({ops_text(s['ops'])}; the MatMuls stay under MatMul)")
    return title, ("fused attention (onnxruntime's transformer optimizer → Attention/MultiHeadAttention, TensorRT's "
                   "MHA, FlashAttention) keeps the scores on chip and drops the head Transposes; "
                   + _charged_part(ctx, s, "fusing"))


_WORDS = {"epilogue": _words_epilogue, "unfused_norm": _words_norm, "decomposed_activation": _words_activation,
          "layout_transpose": _words_layout, "unfused_attention": _words_attention}


#: the first ai.onnx opset of the fused ops the actions name, where the installed onnx is older
#: than the op (onnx 1.17 has no RMSNormalization or Swish)
_FIRST_OPSET = {"LayerNormalization": 17, "Gelu": 20, "RMSNormalization": 23, "Swish": 24, "HardSwish": 14,
                "Mish": 18}


@functools.lru_cache(maxsize=None)
def _first_opset(op: str) -> int | str:
    """The first ai.onnx opset with ``op`` (from ONNX's own schemas, else :data:`_FIRST_OPSET`)."""
    versions = [s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and not s.domain]
    return min(versions) if versions else _FIRST_OPSET.get(op, "a newer one")


__all__ = ["Block", "BlockKind", "Bottlenecks", "OpTypeGroup", "Opportunity", "Uncosted", "action_for", "bottlenecks",
           "ops_text"]
