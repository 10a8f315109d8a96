"""Lints: a registry of small functions that look at an analysis and report what a reviewer would
flag before deployment. Each has an id (``OP001``), a default severity, a one-line summary and a
one-line fix; each finding names the nodes (or tensors) it concerns.

A lint function takes a :class:`LintContext` and returns :class:`Hit` records; the registry adds
the id, the configured severity and the default fix. Severities are set (or a lint turned off)
in the budget's ``[lints]`` table. Weights are never read from external files: the duplicate
check (OP007) compares only weights stored inside the ``.onnx`` file, whose bytes are already
in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import onnx

from onnxperf.base import dtypes
from onnxperf.cost.analysis import newer_than_onnx_notes
from onnxperf.cost.subnormal import underflows
from onnxperf.analysis.result import Analysis
from onnxperf.cost.walker import RULE_ERROR, UNKNOWN_SHAPE, UNSUPPORTED, NodeCost
from onnxperf.graph.folding import foldable_nodes
from onnxperf.graph.loader import GraphIR
from onnxperf.insights.partial import some, unresolved_cause
from onnxperf.predict.memory import MemoryResult
from onnxperf.ui.numbers import binary_bytes, seconds

SEVERITIES = ("error", "warning", "info")
LINT_LEVELS = SEVERITIES + ("off",)


@dataclass(frozen=True)
class LintConfig:
    """Severity overrides (``off`` disables a lint) and the thresholds some lints use."""

    levels: tuple[tuple[str, str], ...] = ()
    min_opset: int = 13
    large_constant_bytes: int = 1 << 20
    fp32_weights_min_bytes: int = 1 << 20
    duplicate_min_bytes: int = 1 << 10

    def level(self, lint_id: str, default: str) -> str:
        return dict(self.levels).get(lint_id, default)


@dataclass(frozen=True)
class NodeRef:
    """What a finding points at: a node (``kind="node"``, ``key`` as in the analysis), or a
    tensor (``kind="initializer"`` / ``"input"``, ``key`` its name)."""

    kind: str
    key: str
    name: str
    op_type: str = ""

    def label(self) -> str:
        if self.kind != "node":
            return f"{self.kind} {self.name!r}"
        return f"{self.op_type} {self.name!r}" if self.name else f"{self.op_type} #{self.key}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "key": self.key, "name": self.name, "op_type": self.op_type}


def node_ref(n: NodeCost) -> NodeRef:
    return NodeRef("node", n.key, n.name, f"{n.domain}::{n.op_type}" if n.domain else n.op_type)


@dataclass(frozen=True)
class Hit:
    """What a lint function returns: the registry turns it into a :class:`Finding`."""

    message: str
    nodes: tuple[NodeRef, ...] = ()
    fix: str | None = None  # overrides the lint's default fix


@dataclass(frozen=True)
class Finding:
    lint_id: str
    name: str
    severity: str
    message: str
    fix: str
    nodes: tuple[NodeRef, ...] = ()

    def to_dict(self) -> dict:
        return {"id": self.lint_id, "name": self.name, "severity": self.severity, "message": self.message,
                "fix": self.fix, "nodes": [n.to_dict() for n in self.nodes]}


@dataclass
class LintContext:
    analysis: Analysis
    memory: MemoryResult
    config: LintConfig = field(default_factory=LintConfig)

    @property
    def graph(self) -> GraphIR:
        assert self.analysis.loaded is not None  # analyses made by analyze() keep their model
        return self.analysis.loaded.graph


LintFn = Callable[[LintContext], Iterator[Hit]]


@dataclass(frozen=True)
class LintInfo:
    lint_id: str
    name: str
    severity: str
    summary: str
    fix: str
    fn: LintFn


#: lint id -> LintInfo, in id order. One registry; registering an id twice raises.
LINTS: dict[str, LintInfo] = {}


def lint(lint_id: str, name: str, *, severity: str, summary: str, fix: str) -> Callable[[LintFn], LintFn]:
    def deco(fn: LintFn) -> LintFn:
        if lint_id in LINTS:
            raise ValueError(f"lint {lint_id} registered twice")
        if severity not in SEVERITIES:
            raise ValueError(f"lint {lint_id}: bad severity {severity!r}")
        LINTS[lint_id] = LintInfo(lint_id, name, severity, summary, fix, fn)
        return fn

    return deco


def run_lints(ctx: LintContext) -> list[Finding]:
    """Every enabled lint, in id order; severities as configured."""
    out: list[Finding] = []
    for info in sorted(LINTS.values(), key=lambda i: i.lint_id):
        level = ctx.config.level(info.lint_id, info.severity)
        if level == "off":
            continue
        for hit in info.fn(ctx):
            out.append(Finding(info.lint_id, info.name, level, hit.message, hit.fix or info.fix, hit.nodes))
    return out


# ---------------------------------------------------------------- helpers

def _refs(nodes, limit: int = 50) -> tuple[NodeRef, ...]:
    return tuple(node_ref(n) for n in list(nodes)[:limit])


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def _walk_graphs(g: GraphIR, scope: str = "") -> Iterator[tuple[str, GraphIR]]:
    yield scope, g
    for (idx, attr), sub in g.subgraphs.items():
        yield from _walk_graphs(sub, f"{scope + '/' if scope else ''}{idx}/{attr}")


def _costs_by_key(a: Analysis) -> dict[str, NodeCost]:
    return {n.key: n for n in a.nodes}


def _key(scope: str, idx: int) -> str:
    return f"{scope}/{idx}" if scope else str(idx)


# ---------------------------------------------------------------- the lints

@lint("OP001", "unbound-dim", severity="warning",
      summary="a dynamic dim is left unbound (or cannot be resolved), so some nodes are not costed",
      fix="bind it with --dim NAME=N, or dims = { NAME = N } in the budget")
def unbound_dims(ctx: LintContext) -> Iterator[Hit]:
    a = ctx.analysis
    blocked = [n for n in a.nodes if n.status == UNKNOWN_SHAPE]
    for d in a.coverage.dims_to_bind:
        mine = [n for n in blocked if d in n.blocking]
        yield Hit(f"input dim {d!r} is unbound: {_plural(len(mine), 'node')} not costed (totals are partial)",
                  _refs(mine), f"bind it: --dim {d}=N, or dims = {{ {d} = N }} in the budget")
    if a.coverage.unresolved_symbols:
        syms = a.coverage.unresolved_symbols
        mine = [n for n in blocked if set(n.blocking) & set(syms)]
        cause, fix = unresolved_cause(a)
        yield Hit(f"{_plural(len(syms), 'dim')} ({some(list(syms))}) cannot be resolved statically: "
                  f"{_plural(len(mine), 'node')} not costed; likely cause: {cause}", _refs(mine),
                  f"{fix}; or accept partial totals")


@lint("OP002", "fp32-weights", severity="info",
      summary="large float32 weights that float16 would store in half the bytes",
      fix="convert the weights to float16 (onnxconverter_common.float16.convert_float_to_float16, "
          "keep_io_types=True) once accuracy is checked")
def fp32_weights(ctx: LintContext) -> Iterator[Hit]:
    a = ctx.analysis
    fp32 = dict(a.totals.param_bytes_by_dtype).get("float32", 0)
    if fp32 < ctx.config.fp32_weights_min_bytes or fp32 == 0:
        return
    holders = sorted((n for n in a.main_nodes if n.params and any(
        t is not None and t.dtype == "float32" for t in n.inputs)), key=lambda n: (-n.params, n.id))
    share = fp32 / a.totals.param_bytes if a.totals.param_bytes else 1.0
    yield Hit(f"{binary_bytes(fp32)} of float32 weights ({share:.0%} of the weights); as float16 they would "
              f"take {binary_bytes(fp32 // 2)} (values are not read: check the accuracy)", _refs(holders, 10))


def _perm(node: onnx.NodeProto, rank: int) -> tuple[int, ...] | None:
    for a in node.attribute:
        if a.name == "perm":
            p = tuple(int(x) for x in a.ints)
            return p if sorted(p) == list(range(rank)) else None
    return tuple(reversed(range(rank)))


def _consumers(g: GraphIR) -> dict[str, list[int | str]]:
    out: dict[str, list[int | str]] = {}
    for u, v, k in g.dag.edges(keys=True):
        out.setdefault(k, []).append(v)
    return out


@lint("OP003", "transpose-chain", severity="warning",
      summary="consecutive Transposes that cancel (or compose into one)",
      fix="remove the Transposes that cancel, or merge the chain into one Transpose")
def transpose_chains(ctx: LintContext) -> Iterator[Hit]:
    tensors = ctx.analysis.tensors or {}
    costs = _costs_by_key(ctx.analysis)
    for scope, g in _walk_graphs(ctx.graph):
        consumers = _consumers(g)

        def next_transpose(i: int) -> int | None:
            n = g.nodes[i]
            if len(n.output) != 1:
                return None
            users = consumers.get(n.output[0], [])
            if len(users) == 1 and isinstance(users[0], int) and g.nodes[users[0]].op_type == "Transpose" \
                    and g.nodes[users[0]].domain in ("", "ai.onnx"):
                return users[0]
            return None

        in_chain: set[int] = set()
        for i in g.order:
            n = g.nodes[i]
            if i in in_chain or n.op_type != "Transpose" or n.domain not in ("", "ai.onnx") or not n.input:
                continue
            chain = [i]
            while (j := next_transpose(chain[-1])) is not None and j not in chain:
                chain.append(j)
            in_chain.update(chain)
            if len(chain) < 2:
                continue
            ti = tensors.get(n.input[0])
            if ti is None or ti.shape is None:
                continue
            rank = len(ti.shape)
            composed: tuple[int, ...] | None = tuple(range(rank))
            for j in chain:
                p = _perm(g.nodes[j], rank)
                if p is None:
                    composed = None
                    break
                composed = tuple(composed[k] for k in p)  # type: ignore[index]
            if composed is None:
                continue
            refs = tuple(node_ref(costs[_key(scope, j)]) for j in chain if _key(scope, j) in costs)
            if composed == tuple(range(rank)):
                yield Hit(f"{len(chain)} consecutive Transposes cancel out (their composed perm is the identity)",
                          refs, "remove them: together they leave the tensor unchanged")
            else:
                yield Hit(f"{len(chain)} consecutive Transposes compose into one with perm {list(composed)}",
                          refs, f"merge them into one Transpose(perm={list(composed)})")


@lint("OP004", "constant-subgraph", severity="warning",
      summary="nodes that compute only from constants: foldable before deployment",
      fix="fold constants (onnxsim, onnxruntime's offline optimizer, or export with do_constant_folding=True)")
def constant_subgraphs(ctx: LintContext) -> Iterator[Hit]:
    g = ctx.graph
    costs = _costs_by_key(ctx.analysis)
    foldable = foldable_nodes(g)
    if foldable:
        counts: dict[str, int] = {}
        for i in foldable:
            counts[g.nodes[i].op_type] = counts.get(g.nodes[i].op_type, 0) + 1
        kinds = ", ".join(f"{op} ×{k}" for op, k in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
        refs = tuple(node_ref(costs[str(i)]) for i in foldable if str(i) in costs)
        k = len(foldable)
        yield Hit(f"{_plural(k, 'node')} compute{'s' if k == 1 else ''} only from constants ({kinds})", refs[:50])


@lint("OP005", "unused-initializer", severity="warning",
      summary="initializers that no node and no graph output uses",
      fix="remove them (onnxsim, or onnx.utils.extract_model); they still take file size")
def unused_initializers(ctx: LintContext) -> Iterator[Hit]:
    g = ctx.graph
    unused = [rec for name, rec in g.initializers.items() if g.dag.out_degree(f"initializer:{name}") == 0]
    if unused:
        size = sum(r.nbytes for r in unused)
        yield Hit(f"{_plural(len(unused), 'initializer')} never used ({binary_bytes(size)})",
                  tuple(NodeRef("initializer", r.name, r.name) for r in unused[:50]))


@lint("OP006", "dead-node", severity="warning",
      summary="nodes whose results reach no graph output",
      fix="remove them (onnxsim, or onnx.utils.extract_model); runtimes drop them, the file still carries them")
def dead_nodes(ctx: LintContext) -> Iterator[Hit]:
    g = ctx.graph
    costs = _costs_by_key(ctx.analysis)
    # one backward sweep from every graph output (subgraph bodies reach their node through the
    # edges the loader adds for the outer tensors they read)
    stack = [f"output:{name}" for name in g.outputs if g.dag.has_node(f"output:{name}")]
    live: set = set(stack)
    while stack:
        for u in g.dag.predecessors(stack.pop()):
            if u not in live:
                live.add(u)
                stack.append(u)
    dead = [i for i in g.order if i not in live]
    if dead:
        yield Hit(f"{_plural(len(dead), 'node')} contribute{'s' if len(dead) == 1 else ''} to no graph output",
                  tuple(node_ref(costs[str(i)]) for i in dead[:50] if str(i) in costs))


def _data_digest(t: onnx.TensorProto) -> str | None:
    """A digest of an inline tensor's values (None for external or data-free tensors)."""
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    if t.raw_data:
        return hashlib.sha256(t.raw_data).hexdigest()
    body = onnx.TensorProto()
    body.CopyFrom(t)
    body.name = ""
    body.doc_string = ""
    blob = body.SerializeToString()
    if len(blob) <= len(onnx.TensorProto(dims=t.dims, data_type=t.data_type).SerializeToString()):
        return None  # no values at all (weights stripped)
    return hashlib.sha256(blob).hexdigest()


@lint("OP007", "duplicate-initializer", severity="warning",
      summary="initializers holding identical values (inline weights only; external data is not read)",
      fix="keep one and point every consumer at it")
def duplicate_initializers(ctx: LintContext) -> Iterator[Hit]:
    proto = ctx.analysis.loaded.proto if ctx.analysis.loaded is not None else None
    if proto is None:
        return
    groups: dict[tuple, list[str]] = {}
    for t in proto.graph.initializer:
        rec = ctx.graph.initializers.get(t.name)
        if rec is None or rec.nbytes < max(ctx.config.duplicate_min_bytes, 1):
            continue
        digest = _data_digest(t)
        if digest is not None:
            groups.setdefault((t.data_type, tuple(t.dims), digest), []).append(t.name)
    for (_et, _dims, _d), names in groups.items():
        if len(names) > 1:
            size = ctx.graph.initializers[names[0]].nbytes
            yield Hit(f"{len(names)} initializers hold identical values ({binary_bytes(size)} each; "
                      f"{binary_bytes(size * (len(names) - 1))} to save)",
                      tuple(NodeRef("initializer", n, n) for n in names))


@lint("OP008", "old-opset", severity="warning",
      summary="the ai.onnx opset is older than the configured minimum ([lints] min_opset, default 13)",
      fix="convert it (onnx.version_converter.convert_version(model, 17)) or re-export with a newer opset_version")
def old_opset(ctx: LintContext) -> Iterator[Hit]:
    v = dict(ctx.analysis.model.opsets).get("")
    if v is not None and v < ctx.config.min_opset:
        yield Hit(f"ai.onnx opset {v} is older than {ctx.config.min_opset}")


def _by_op(ctx: LintContext, status: str) -> list[tuple[str, list[NodeCost]]]:
    """The nodes with ``status``, by op type (``domain::op`` outside the default domain), sorted."""
    by_label: dict[str, list[NodeCost]] = {}
    for n in ctx.analysis.nodes:
        if n.status == status:
            by_label.setdefault(f"{n.domain}::{n.op_type}" if n.domain else n.op_type, []).append(n)
    return sorted(by_label.items())


@lint("OP009", "unsupported-op", severity="warning",
      summary="ops with no cost rule: their cost is unknown and the totals are partial",
      fix="add a cost rule (see docs/rules.md), or accept partial totals (allow_partial = true)")
def unsupported_ops(ctx: LintContext) -> Iterator[Hit]:
    for label, nodes in _by_op(ctx, UNSUPPORTED):
        why = nodes[0].note or "no cost rule"
        yield Hit(f"{label} ×{len(nodes)}: cost unknown ({why})", _refs(nodes))


@lint("OP013", "rule-error", severity="error",
      summary="a cost rule failed on some nodes: a bug in onnxperf, their cost is unknown and the totals partial",
      fix="report it (with --debug's traceback); meanwhile accept partial totals (allow_partial = true)")
def rule_errors(ctx: LintContext) -> Iterator[Hit]:
    for label, nodes in _by_op(ctx, RULE_ERROR):
        yield Hit(f"{label} ×{len(nodes)}: {nodes[0].note}", _refs(nodes))


@lint("OP010", "large-constant", severity="warning",
      summary="Constant nodes holding large tensors inline in the graph ([lints] large_constant, default 1MiB)",
      fix="store the tensor as an initializer (it can then move to external data)")
def large_constants(ctx: LintContext) -> Iterator[Hit]:
    costs = _costs_by_key(ctx.analysis)
    for scope, g in _walk_graphs(ctx.graph):
        producer = {o: i for i, n in enumerate(g.nodes) for o in n.output if o}
        for name, rec in g.constants.items():
            if rec.external or rec.nbytes < ctx.config.large_constant_bytes:
                continue
            i = producer.get(name)
            ref = costs.get(_key(scope, i)) if i is not None else None
            yield Hit(f"Constant node holds {binary_bytes(rec.nbytes)} ({dtypes.name(rec.elem_type)} "
                      f"{list(rec.dims)}) inline in the graph", (node_ref(ref),) if ref else ())


@lint("OP011", "opset-newer-than-onnx", severity="warning",
      summary="the model's IR version or opset is newer than the installed onnx knows",
      fix="upgrade onnx (pip install -U onnx) so shapes and costs follow the model's own opset")
def newer_than_onnx(ctx: LintContext) -> Iterator[Hit]:
    if ctx.analysis.loaded is None:
        return
    for note in newer_than_onnx_notes(ctx.analysis.loaded):
        yield Hit(note)


@lint("OP014", "subnormal-softmax", severity="warning",
      summary="a Softmax writes subnormal probabilities (an additive mask between -104 and -87, such as -100): "
              "on x86 CPUs every instruction reading them takes a microcode assist",
      fix="mask with -1e4 or less (or -inf) so the masked probabilities round to zero, or run onnxruntime with the "
          "session option session.set_denormal_as_zero = 1 (flush-to-zero on the intra-op pool's worker threads, "
          "not the calling thread: most of the time goes, and with one thread nothing does)")
def subnormal_softmax(ctx: LintContext) -> Iterator[Hit]:
    found = [u for u in underflows(ctx.analysis).found if u.subnormal]
    if not found:
        return
    costs = _costs_by_key(ctx.analysis)
    readers = [k for u in found for k, _ in u.readers]
    rl = ctx.analysis.roofline
    took = "" if rl is None or not rl.assist_s else f"; {seconds(rl.assist_s)} of microcode assists on {rl.spec_id}"
    yield Hit(f"{_plural(len(found), 'Softmax node')} write {sum(u.subnormal for u in found):,} subnormal probabilities "
              f"(exp of x - max between -104 and -87) that {_plural(len(readers), 'MatMul node')} then "
              f"read{'s' if len(readers) == 1 else ''}{took}",
              _refs([costs[k] for k in [u.key for u in found] + readers if k in costs]))


@lint("OP012", "missing-external-data", severity="info",
      summary="external weight files are missing (analysis does not need them)",
      fix="nothing to do for the analysis; ship the weight files with the model")
def missing_external(ctx: LintContext) -> Iterator[Hit]:
    missing = ctx.analysis.model.missing_external_files
    if missing:
        yield Hit(f"external weight file(s) not found: {', '.join(missing[:10])}"
                  + (f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""))


__all__ = ["Finding", "Hit", "LINTS", "LINT_LEVELS", "LintConfig", "LintContext", "LintInfo", "NodeRef", "SEVERITIES",
           "lint", "node_ref", "run_lints"]
