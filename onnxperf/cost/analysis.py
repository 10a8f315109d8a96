"""The costs of a model, :class:`Costs`, and :func:`cost_analysis`, which makes them.

:class:`Costs` holds the model's facts, shapes, per-node costs, totals and coverage, made here from the
shapes and the cost rules. The one result every output reads, :class:`onnxperf.analysis.result.Analysis`,
is these costs with the deployment figures the request asked for (memory, the execution plan on a spec,
the largest fit, the precision what-if, the LLM section, the bottleneck groups), which the layers above
make (:mod:`onnxperf.analysis.compose`). Frozen: one loaded model can be analyzed many times with other
bindings; nothing is written onto the graph.
"""

from __future__ import annotations

import contextlib
import gc
import numbers
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any

import onnx

from onnxperf import __version__
from onnxperf.base import dtypes
from onnxperf.cost.conventions import CONVENTIONS
from onnxperf.cost.request import Request
from onnxperf.cost.walker import _NON_PARAM_TYPES, BOUNDED_NOTE, COUNTED, RULE_ERROR, STATUSES, UNCOSTED, UNKNOWN_SHAPE, UNSUPPORTED, ZERO, CostWalker, NodeCost, TensorRef, is_param
from onnxperf.base.errors import OptionError
from onnxperf.graph.loader import GraphIR, LoadedModel, load
from onnxperf.cost.ops import REGISTRY
from onnxperf.shapes.sequences import SequenceInfo
from onnxperf.shapes.infer import ShapeResult, infer, input_dim_names
from onnxperf.shapes.tensor import TensorInfo
from onnxperf.ui.jsonrows import dumps, node_rows

SCHEMA = "onnxperf.analysis/1"
#: the cost figures of :class:`Totals` that are None (unknown) where nothing of them was counted
FIGURES = ("macs", "flops", "int_ops", "bytes_read", "bytes_written")


@dataclass(frozen=True)
class ModelInfo:
    path: str | None
    file_size_bytes: int | None
    producer_name: str
    producer_version: str
    ir_version: int
    opsets: tuple[tuple[str, int], ...]
    graph_name: str
    inputs: tuple[TensorRef, ...]
    outputs: tuple[TensorRef, ...]
    nodes: int
    nodes_in_subgraphs: int
    initializers: int
    inlined_functions: int
    missing_external_files: tuple[str, ...]


@dataclass(frozen=True)
class Totals:
    """Whole-model figures: sums over main-graph nodes (control-flow nodes carry their bodies).

    The cost figures (``macs``, ``flops``, ``int_ops``, ``bytes_read``, ``bytes_written``) are None,
    *unknown*, where nothing of the figure was counted while something was left out: a sum of 0 under
    ``bound`` ``lower`` or ``unknown`` (the one MatMul of a model not costed: its MACs are not 0, they
    are unknown). A sum of 0 that is exact (a graph of Relu has 0 MACs) or an upper bound stays 0, and
    a non-zero sum stays a number, with ``bound`` saying on which side of the truth it is. Decided
    here, once, however the totals are made (a :func:`dataclasses.replace` too): every renderer and
    every formula reads the None (JSON ``null``, text ``unknown``), none of them decides it again."""

    macs: int | None
    flops: int | None
    int_ops: int | None
    bytes_read: int | None
    bytes_written: int | None
    params: int
    param_bytes: int
    param_bytes_by_dtype: tuple[tuple[str, int], ...]
    params_by_dtype: tuple[tuple[str, int], ...]
    #: False when some node is not costed (unsupported or unknown shape) or only partly (a loop whose
    #: trip count is unknown counts one run): every cost figure (MACs, FLOPs, integer ops, bytes) then
    #: leaves something out
    complete: bool = True
    #: uncosted nodes by op type (``domain::op`` outside the default domain), subgraphs included
    uncosted: tuple[tuple[str, int], ...] = ()
    #: the same, by status: ((``unknown_shape`` | ``unsupported``, ((op, count), ...)), ...)
    uncosted_by_status: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    #: which side of the truth the cost figures are on: ``exact``; ``lower`` (something left out);
    #: ``upper`` (a size replaced by the largest the model can produce: a data-dependent op's output,
    #: the costlier If branch, a Loop's M when its cond may stop it sooner); ``unknown`` (both)
    bound: str = "exact"
    #: the nodes that put an upper bound in place of a size, by op type (``NonZero`` ×3, ``Loop`` ×1)
    upper_bounded: tuple[tuple[str, int], ...] = ()
    #: the nodes counted only in part, by op type (a Loop whose trip count is unknown: one run)
    lower_bounded: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        for name in FIGURES:
            object.__setattr__(self, name, self._figure(getattr(self, name)))

    def _figure(self, x: int | None) -> int | None:
        """``x`` as this total reports it: None (unknown) when it is 0 (or None) and a lower bound
        (``bound`` ``lower`` or ``unknown``): nothing of it was counted and something was left out."""
        return None if not x and self.bound in ("lower", "unknown") else x

    @property
    def side(self) -> str:
        """``bound`` for a figure that is not exact (``lower``, ``upper``, ``unknown``), else ``""``:
        what the renderers print beside a total (``≥``, ``≤``, ``~``)."""
        return "" if self.bound == "exact" else self.bound

    @property
    def bytes_total(self) -> int | None:
        """``bytes_read + bytes_written``; None (unknown) when both are unknown. One unknown beside a
        counted other is a lower bound of nothing, so the sum is the other's figure, on the same side
        of the truth as every figure of these totals (``bound``); 0 only where 0 is the truth."""
        if self.bytes_read is None and self.bytes_written is None:
            return None
        return self._figure((self.bytes_read or 0) + (self.bytes_written or 0))

    @property
    def intensity_flops_per_byte(self) -> float | None:
        """``flops / bytes_total``; None when nothing moves, when either is unknown, or when the totals
        are not exact (a ratio of two lower bounds, or of two upper bounds, is no bound at all)."""
        b = self.bytes_total
        return None if not b or self.flops is None or self.bound != "exact" else self.flops / b

    @property
    def uncosted_nodes(self) -> int:
        return sum(k for _, k in self.uncosted)


@dataclass(frozen=True)
class OpTypeRow:
    domain: str
    op_type: str
    count: int
    macs: int
    flops: int
    int_ops: int
    bytes_read: int
    bytes_written: int
    params: int
    statuses: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Coverage:
    nodes: int
    counted: int
    zero_by_design: int
    unsupported: int
    unknown_shape: int
    #: nodes whose cost comes from an exact rule (counted and exact, or zero by design)
    exact_nodes: int
    #: FLOPs from exact rules / all FLOPs; None when some node is not costed (the whole is then
    #: unknown, so no share of it is known: never reads as 100%) or when there are no FLOPs at all
    flops_exact_share: float | None
    unsupported_op_types: tuple[tuple[str, int], ...]
    #: graph-input dims left unbound that some node's cost depends on
    dims_to_bind: tuple[str, ...]
    #: other symbols (data-dependent or unresolved dims) that block some node; ``?`` stands for
    #: a dim or rank with no name at all
    unresolved_symbols: tuple[str, ...]
    #: where shapes were lost: op types (with counts) of the nodes whose inputs all have known
    #: shapes but some output does not (data-dependent sizes, ops shape inference cannot follow)
    shapes_lost_at: tuple[tuple[str, int], ...] = ()
    #: the first such node, as ``#key op 'name'``, to look at in a viewer
    first_lost_at: str | None = None
    #: graph inputs with an unknown rank or a dim without a name: only --input-shape binds them
    inputs_to_shape: tuple[str, ...] = ()
    #: nodes whose cost rule raised (a bug in the rule, see :class:`onnxperf.base.errors.RuleError`)
    rule_errors: int = 0
    #: op types (with counts) of those nodes
    rule_error_op_types: tuple[tuple[str, int], ...] = ()

    @property
    def node_share_exact(self) -> float:
        return 1.0 if self.nodes == 0 else self.exact_nodes / self.nodes

    @property
    def complete(self) -> bool:
        return self.unsupported == 0 and self.unknown_shape == 0 and self.rule_errors == 0


@dataclass(frozen=True)
class Costs:
    """The costs of a model at one request's bindings: shapes, per-node MACs/FLOPs/bytes/params, totals,
    coverage. What the layers above predict from (memory, the execution plan, the insights); the result
    a command prints, with those added, is :class:`onnxperf.analysis.result.Analysis`, a ``Costs`` too."""

    model: ModelInfo
    convention: str
    dims: tuple[tuple[str, int], ...]
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...]
    free_dims: tuple[str, ...]
    totals: Totals
    by_op_type: tuple[OpTypeRow, ...]
    coverage: Coverage
    nodes: tuple[NodeCost, ...]
    notes: tuple[str, ...]
    shape_engines: tuple[str, ...]
    loaded: LoadedModel | None = field(default=None, compare=False, repr=False)
    tensors: dict[str, TensorInfo] | None = field(default=None, compare=False, repr=False)
    #: sequence values (not tensors): element type and shape, length (:mod:`onnxperf.shapes.sequences`)
    sequences: dict[str, SequenceInfo] | None = field(default=None, compare=False, repr=False)
    #: the branch each If takes where its cond is known (``then_branch``/``else_branch``), by node key
    branches: dict[str, str] | None = field(default=None, compare=False, repr=False)

    @property
    def main_nodes(self) -> tuple[NodeCost, ...]:
        return tuple(n for n in self.nodes if not n.scope)

    def with_nodes(self, nodes: tuple[NodeCost, ...], figures: tuple[str, ...] = ("bytes_read", "bytes_written"),
                   **fields: Any) -> Costs:
        """These costs with ``nodes`` (the same nodes, re-expressed) in place of their own: each total named
        in ``figures`` summed again over the main-graph nodes (an unknown total stays unknown), the other
        totals as ``fields`` set them, and the per-op-type rows made again; ``fields`` may also replace
        ``model`` and ``tensors``."""
        t = self.totals
        main = [n for n in nodes if not n.scope]
        sums = {f: None if getattr(t, f) is None else sum(getattr(n, f) for n in main) for f in figures}
        extra = {k: fields.pop(k) for k in ("model", "tensors") if k in fields}
        return replace(self, nodes=tuple(nodes), totals=replace(t, **sums, **fields),
                       by_op_type=_by_op_type(tuple(nodes)), **extra)

    @property
    def batch(self) -> int:
        """Items per inference, for throughput: the value bound to a dim named like a batch, else the
        first input's leading dim when it is known, else 1."""
        for name, value in self.dims:
            if "batch" in name.lower():
                return max(int(value), 1)
        if self.model.inputs and self.model.inputs[0].shape and isinstance(self.model.inputs[0].shape[0], int):
            return max(int(self.model.inputs[0].shape[0]), 1)
        return 1

    def __repr__(self) -> str:
        """One line, not every node: the model, the bindings and the totals."""
        t = self.totals
        mark = {"lower": "≥", "upper": "≤", "unknown": "~"}.get(t.bound, "")

        def fig(x: int | None) -> str:  # unknown is not zero (:class:`Totals`)
            return "unknown" if x is None else f"{mark}{x:,}"

        return (f"{type(self).__name__}({(self.model.path or self.model.graph_name)!r}, dims={dict(self.dims)}, "
                f"macs={fig(t.macs)}, flops={fig(t.flops)}, params={t.params:,}, nodes={len(self.nodes):,}"
                + (f", {t.bound} bound" if t.bound != "exact" else "") + ")")

    def top_nodes(self, k: int = 10, key: str = "flops") -> list[NodeCost]:
        """The k main-graph nodes with the largest ``key``, ties broken by file order."""
        nodes = [n for n in self.main_nodes if getattr(n, key) > 0]
        return sorted(nodes, key=lambda n: (-getattr(n, key), n.id))[:k]

    def to_dict(self, encoded_rows: bool = False) -> dict[str, Any]:
        """The cost sections of the JSON contract (schema ``onnxperf.analysis/1``, :func:`to_dict`)."""
        return to_dict(self, encoded_rows)

    def to_json(self) -> str:
        """The JSON contract as text: indented, one node per line (as ``summary --format json``)."""
        return dumps(self.to_dict(encoded_rows=True))


def _tref(t: TensorRef | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"name": t.name, "dtype": t.dtype, "shape": None if t.shape is None else list(t.shape)}


def _node_dict(n: NodeCost, tref=_tref) -> dict[str, Any]:
    """A node's JSON record. ``tref``: the tensor encoder (a memoizing one when many nodes share
    their tensors, as every producer shares its output with its consumers)."""
    total = n.bytes_read + n.bytes_written
    return {
        "id": n.id, "key": n.key, "scope": n.scope, "name": n.name, "op_type": n.op_type, "domain": n.domain,
        "family": n.family, "rule_since": n.rule_since, "status": n.status, "exact": n.exact,
        "macs": n.macs, "flops": n.flops, "int_ops": n.int_ops, "bytes_read": n.bytes_read,
        "bytes_written": n.bytes_written, "params": n.params,
        "intensity_flops_per_byte": None if total == 0 else n.flops / total,
        "inputs": [tref(t) for t in n.inputs], "outputs": [tref(t) for t in n.outputs],
        "blocking": list(n.blocking), "note": n.note, "bound": n.bound or None,
    }


def _shared_tref():
    """A :func:`_tref` that builds each tensor's record once (records are not modified after)."""
    seen: dict[int, tuple[TensorRef, dict[str, Any]]] = {}

    def tref(t: TensorRef | None) -> dict[str, Any] | None:
        if t is None:
            return None
        hit = seen.get(id(t))
        if hit is None or hit[0] is not t:
            hit = seen[id(t)] = (t, _tref(t))
        return hit[1]
    return tref


def _encoded_nodes(nodes):
    tref = _shared_tref()
    return node_rows(nodes, lambda n: _node_dict(n, tref))


def to_dict(a: Costs, encoded_rows: bool = False) -> dict[str, Any]:
    """The JSON contract (schema ``onnxperf.analysis/1``): plain types, stable key order.
    ``encoded_rows``: the node records as JSON text already (:func:`onnxperf.ui.jsonrows.node_rows`,
    for writing JSON; the text is what the dicts would give)."""
    m = a.model
    t = a.totals
    c = a.coverage
    return {
        "schema": SCHEMA,
        "onnxperf_version": __version__,
        "convention": a.convention,
        "model": {
            "path": m.path, "file_size_bytes": m.file_size_bytes,
            "producer_name": m.producer_name, "producer_version": m.producer_version,
            "ir_version": m.ir_version, "opsets": {k or "ai.onnx": v for k, v in m.opsets},
            "graph_name": m.graph_name,
            "inputs": [_tref(x) for x in m.inputs], "outputs": [_tref(x) for x in m.outputs],
            "nodes": m.nodes, "nodes_in_subgraphs": m.nodes_in_subgraphs,
            "initializers": m.initializers, "inlined_functions": m.inlined_functions,
            "missing_external_files": list(m.missing_external_files),
        },
        "bindings": {"dims": dict(a.dims), "input_shapes": {k: list(v) for k, v in a.input_shapes},
                     "free_dims": list(a.free_dims)},
        "totals": {
            "macs": t.macs, "flops": t.flops, "int_ops": t.int_ops,
            "bytes_read": t.bytes_read, "bytes_written": t.bytes_written,
            "intensity_flops_per_byte": t.intensity_flops_per_byte,
            "params": t.params, "param_bytes": t.param_bytes,
            "params_by_dtype": dict(t.params_by_dtype), "param_bytes_by_dtype": dict(t.param_bytes_by_dtype),
            "complete": t.complete, "uncosted": dict(t.uncosted),
            "uncosted_by_status": {st: dict(ops) for st, ops in t.uncosted_by_status},
            "bound": t.bound, "upper_bounded": dict(t.upper_bounded), "lower_bounded": dict(t.lower_bounded),
        },
        "coverage": {
            "nodes": c.nodes, "counted": c.counted, "zero_by_design": c.zero_by_design,
            "unsupported": c.unsupported, "unknown_shape": c.unknown_shape,
            "exact_nodes": c.exact_nodes, "node_share_exact": c.node_share_exact,
            "flops_exact_share": c.flops_exact_share,
            "unsupported_op_types": dict(c.unsupported_op_types),
            "dims_to_bind": list(c.dims_to_bind), "unresolved_symbols": list(c.unresolved_symbols),
            "shapes_lost_at": dict(c.shapes_lost_at), "first_lost_at": c.first_lost_at,
            "inputs_to_shape": list(c.inputs_to_shape),
            "rule_errors": c.rule_errors, "rule_error_op_types": dict(c.rule_error_op_types),
        },
        "by_op_type": [asdict(r) | {"statuses": dict(r.statuses)} for r in a.by_op_type],
        "nodes": _encoded_nodes(a.nodes) if encoded_rows else [
            _node_dict(n, tref) for tref in (_shared_tref(),) for n in a.nodes],
        "notes": list(a.notes),
        "shape_engines": list(a.shape_engines),
    }


def _walk_params(g: GraphIR, seen: dict[str, tuple[int, int]]) -> None:
    # consumer families matter only for single-element tensors (see is_param): gather them for those
    recs = list(g.initializers.values()) + list(g.constants.values())
    small = {rec.name for rec in recs if rec.numel <= 1}
    consumers: dict[str, list[str]] = {}
    if small:
        families: dict[tuple[str, str], str] = {}
        for (in_names, _), (op_type, domain, _) in zip(g.io, g.heads):
            for x in in_names:
                if x in small:
                    fam = families.get((domain, op_type))
                    if fam is None:
                        entry = REGISTRY.lookup(domain, op_type, None)
                        fam = families[(domain, op_type)] = entry.family if entry is not None else "misc"
                    consumers.setdefault(x, []).append(fam)
    for rec in recs:
        et, numel = rec.elem_type, rec.numel
        # is_param's answer, asked only for the few of one element or of a non-weight type
        if rec.name not in seen and ((numel > 1 and et not in _NON_PARAM_TYPES)
                                     or is_param(et, numel, consumers.get(rec.name, ("misc",)))):
            seen[rec.name] = (et, numel)
    for sub in g.subgraphs.values():
        _walk_params(sub, seen)


def _params(g: GraphIR) -> tuple[int, int, dict[str, int], dict[str, int]]:
    seen: dict[str, tuple[int, int]] = {}
    _walk_params(g, seen)
    by_dtype_bytes: dict[str, int] = {}
    by_dtype_count: dict[str, int] = {}
    # the weights of repeated blocks share (type, size): each pair's bytes are computed once
    for (et, numel), k in Counter(seen.values()).items():
        nm = dtypes.name(et)
        by_dtype_bytes[nm] = by_dtype_bytes.get(nm, 0) + k * dtypes.nbytes(et, numel)
        by_dtype_count[nm] = by_dtype_count.get(nm, 0) + k * numel
    return (sum(by_dtype_count.values()), sum(by_dtype_bytes.values()),
            dict(sorted(by_dtype_bytes.items())), dict(sorted(by_dtype_count.items())))


def _count_sub_nodes(g: GraphIR) -> int:
    return sum(len(s.nodes) + _count_sub_nodes(s) for s in g.subgraphs.values())


def _by_op_type(nodes: tuple[NodeCost, ...]) -> tuple[OpTypeRow, ...]:
    acc: dict[tuple[str, str], list[Any]] = {}
    for n in nodes:
        if n.scope:
            continue
        r = acc.get((n.domain, n.op_type))
        if r is None:
            r = acc[(n.domain, n.op_type)] = [0, 0, 0, 0, 0, 0, 0, {}]
        r[0] += 1
        r[1] += n.macs
        r[2] += n.flops
        r[3] += n.int_ops
        r[4] += n.bytes_read
        r[5] += n.bytes_written
        r[6] += n.params
        r[7][n.status] = r[7].get(n.status, 0) + 1
    rows = [OpTypeRow(d, op, *v[:7], tuple(sorted(v[7].items()))) for (d, op), v in acc.items()]
    return tuple(sorted(rows, key=lambda r: (-r.flops, -(r.bytes_read + r.bytes_written), r.domain, r.op_type)))


def _label(n: NodeCost) -> str:
    return f"{n.domain}::{n.op_type}" if n.domain else n.op_type


def _static(t: TensorRef | None) -> bool:
    return t is None or (t.shape is not None and all(isinstance(d, int) for d in t.shape))


def _coverage(nodes: tuple[NodeCost, ...], free_dims: list[str], inputs: tuple[TensorRef, ...]) -> Coverage:
    status = {s: 0 for s in STATUSES}
    unsupported: dict[str, int] = {}
    failed: dict[str, int] = {}
    blocking: set[str] = set()
    lost: dict[str, int] = {}
    first_lost = None
    exact_nodes = 0
    flops = exact_flops = 0
    # whether a shape is static, by the shape tuple (the tensors of repeated blocks share theirs)
    shape_static: dict[int, tuple[Any, bool]] = {}

    def static(t: TensorRef | None) -> bool:
        if t is None:
            return True
        sh = t.shape
        hit = shape_static.get(id(sh))
        if hit is None or hit[0] is not sh:
            hit = shape_static[id(sh)] = (sh, sh is not None and all(isinstance(d, int) for d in sh))
        return hit[1]

    for n in nodes:
        st = n.status
        status[st] += 1
        if st == UNSUPPORTED:
            unsupported[_label(n)] = unsupported.get(_label(n), 0) + 1
        elif st == RULE_ERROR:
            failed[_label(n)] = failed.get(_label(n), 0) + 1
        if st == UNKNOWN_SHAPE:
            blocking.update(n.blocking)
        if st == ZERO or (st == COUNTED and n.exact):
            exact_nodes += 1
        for o in n.outputs:
            if not static(o):
                if all(static(i) for i in n.inputs):
                    lost[_label(n)] = lost.get(_label(n), 0) + 1
                    if first_lost is None:
                        first_lost = f"#{n.key} {_label(n)} {n.name!r}"
                break
        if not n.scope:
            flops += n.flops
            if n.exact:
                exact_flops += n.flops
    complete = not any(status[st] for st in UNCOSTED)
    # no share of an unknown whole, and none of nothing: a graph without FLOPs is not "100% exact"
    share = None if not complete or flops == 0 else exact_flops / flops
    to_bind = tuple(d for d in free_dims if d in blocking)
    other = tuple(sorted(blocking - set(free_dims)))
    unnamed = tuple(t.name for t in inputs if t.shape is None or any(d is None for d in t.shape))
    return Coverage(len(nodes), status[COUNTED], status[ZERO], status[UNSUPPORTED], status[UNKNOWN_SHAPE],
                    exact_nodes, share, tuple(sorted(unsupported.items())), to_bind, other,
                    tuple(sorted(lost.items(), key=lambda kv: (-kv[1], kv[0]))) if not complete else (),
                    first_lost if not complete else None, unnamed if blocking else (), status[RULE_ERROR],
                    tuple(sorted(failed.items())))


_CONTROL = frozenset({"If", "Loop", "Scan", "SequenceMap"})


def _bound_sources(nodes: tuple[NodeCost, ...], sr: ShapeResult) -> tuple[tuple[tuple[str, int], ...],
                                                                         tuple[tuple[str, int], ...]]:
    """The nodes that are the cause of an upper bound, and those counted only in part, by op type.

    An upper bound starts at a node shape inference names (a data-dependent op, an If whose branches'
    shapes differ, a Loop whose trip count is an upper bound) or at a control-flow node whose own
    choice is one (the costlier If branch); the nodes downstream only follow it. A control-flow node
    counted in part (a loop run once for an unknown count) is a cause of a lower bound when its bodies
    hold no node left out themselves (those are counted as not costed)."""
    # per body scope: whether some node in it (or nested deeper) is an upper bound / left out
    upper_in: set[str] = set()
    lower_in: set[str] = set()
    for n in nodes:
        if not n.scope:
            continue
        if n.bound in ("upper", "unknown"):
            upper_in.add(n.scope)
        if n.bound in ("lower", "unknown") or n.status in UNCOSTED:
            lower_in.add(n.scope)

    def inside(key: str, scopes: set[str]) -> bool:
        prefix = key + "/"
        return any(sc.startswith(prefix) for sc in scopes)

    upper: dict[str, int] = {}
    lower: dict[str, int] = {}
    for n in nodes:
        if not n.bound:
            continue
        label = _label(n)
        if n.bound in ("upper", "unknown"):
            own = n.key in sr.bound_sources or (n.op_type in _CONTROL and not n.domain and not inside(n.key, upper_in)
                                                and not any(t is not None and t.name in sr.bounded for t in n.inputs))
            if own:
                upper[label] = upper.get(label, 0) + 1
        if n.bound in ("lower", "unknown") and n.op_type in _CONTROL and not n.domain and not inside(n.key, lower_in):
            lower[label] = lower.get(label, 0) + 1
    return tuple(sorted(upper.items())), tuple(sorted(lower.items()))


def _uncosted(nodes: tuple[NodeCost, ...]) -> tuple[tuple[tuple[str, int], ...], tuple]:
    """Uncosted nodes (subgraphs included) by op type, and by status then op type; sorted by name."""
    by_op: dict[str, int] = {}
    by_status: dict[str, dict[str, int]] = {}
    for n in nodes:
        if n.status in UNCOSTED:
            label = _label(n)
            by_op[label] = by_op.get(label, 0) + 1
            s = by_status.setdefault(n.status, {})
            s[label] = s.get(label, 0) + 1
    return (tuple(sorted(by_op.items())),
            tuple((st, tuple(sorted(by_status[st].items()))) for st in UNCOSTED if st in by_status))


_DIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: dims are joined by ``,``, ``x``, or ``X`` between two numbers (``1X3X224``)
_SEP = re.compile(r",|x|(?<=\d)X(?=\d)")


def parse_shape(text: str) -> tuple[int | str, ...]:
    """``1x3x224x224`` (or ``1,3,224,224``) -> (1, 3, 224, 224); a dim may be a name that ``--dim``
    binds (``batchx3x224x224`` -> ("batch", 3, 224, 224)): a static export swept by batch.
    A lowercase ``x`` always separates dims, so a name cannot hold one (``max_len``: write ``MAX_LEN``)."""
    parts = [p.strip() for p in _SEP.split(text)] if text.strip() else []
    dims: list[int | str] = []
    for p in parts:
        if _DIM_NAME.fullmatch(p):
            dims.append(p)
            continue
        try:
            dims.append(int(p))
        except ValueError:
            raise OptionError(f"bad shape {text!r}: expected integers (or dim names) joined by 'x', "
                              "e.g. 1x3x224x224 or batchx3x224x224") from None
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise OptionError(f"bad shape {text!r}: dims must be non-negative")
    return tuple(dims)


def cost_analysis(model: str | os.PathLike | onnx.ModelProto | LoadedModel, dims: dict[str, int] | None = None,
                  input_shapes: dict[str, tuple[int, ...] | str] | None = None,
                  convention: str = "default", default_batch: bool = False) -> Costs:
    """The costs of a model: shapes, per-node MACs/FLOPs/bytes/params, totals and coverage (the
    deployment fields of the result left empty: :func:`onnxperf.analysis.compose` fills them).

    ``dims`` binds symbolic input dims by name (``{"batch": 8}``); ``input_shapes`` replaces
    whole input shapes (``{"input": (1, 3, 224, 224)}`` or ``"1x3x224x224"``; a dim may be a name
    that ``dims`` binds). A dim a model's inputs lack is left out with a note; ``default_batch``
    binds an unbound batch dim to 1 with a note (:func:`onnxperf.shapes.infer.binding_notes`)."""
    if convention not in CONVENTIONS:
        raise OptionError(f"unknown convention {convention!r} (choose from {', '.join(CONVENTIONS)})")
    for name, value in (dims or {}).items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
            raise OptionError(f"dim {name}={value!r}: a dim must be bound to a positive integer")
    with _gc_paused():
        return _analyze(model, dims, input_shapes, convention, default_batch)


def costs(request: Request, empty_dims: bool = False) -> Costs:
    """:func:`cost_analysis` of what ``request`` names (its model, dims, input shapes, convention and
    default batch): the one way a derived run (a sweep point, a validated batch, a decode context, a
    largest-fit probe) gets its costs, so none of the request is dropped on the way. ``empty_dims``:
    a dim may be bound to 0 (a decode step's empty cache), which the public entry points refuse."""
    if empty_dims:
        if request.convention not in CONVENTIONS:
            raise OptionError(f"unknown convention {request.convention!r} (choose from {', '.join(CONVENTIONS)})")
        with _gc_paused():
            return _analyze(request.model, dict(request.dims), dict(request.input_shapes), request.convention,
                            request.default_batch)
    return cost_analysis(request.model, dims=dict(request.dims), input_shapes=dict(request.input_shapes),
                         convention=request.convention, default_batch=request.default_batch)


@contextlib.contextmanager
def _gc_paused():
    """Pause CPython's cyclic garbage collector while a model is analyzed.

    Analysis allocates many small, long-lived, acyclic objects (records, tuples, dicts); each
    generation-2 collection scans every live object, so on large graphs collections grow with the
    graph and cost ~20% of the time (30,000 nodes: 1.7 s -> 1.36 s). Reference counting still frees
    everything that is not cyclic; the collector is switched back on afterwards if it was on (a
    call running in another thread at the same time may find it off and leave it to this one)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _analyze(model, dims, input_shapes, convention: str, default_batch: bool = False) -> Costs:
    loaded = model if isinstance(model, LoadedModel) else load(model)
    shapes_in = {k: (parse_shape(v) if isinstance(v, str) else tuple(x if isinstance(x, str) else int(x) for x in v))
                 for k, v in (input_shapes or {}).items()}
    sr: ShapeResult = infer(loaded, dims or {}, shapes_in, default_batch)
    walker = CostWalker(sr.tensors, loaded.opsets, convention, bounded=sr.bounded, values=sr.values, trips=sr.trips,
                        sequences=sr.sequences)
    walker.walk(loaded.graph)
    nodes = tuple(walker.records)
    del walker  # its per-tensor tables (a million-node graph: hundreds of MB) are not needed past here
    main = [n for n in nodes if not n.scope]
    params, param_bytes, bytes_by_dtype, count_by_dtype = _params(loaded.graph)
    uncosted, uncosted_by_status = _uncosted(nodes)
    macs = flops = int_ops = bytes_read = bytes_written = n_bounded = 0
    upper_side = False
    for n in main:  # one pass: sums over a million nodes are memory-bound
        macs += n.macs
        flops += n.flops
        int_ops += n.int_ops
        bytes_read += n.bytes_read
        bytes_written += n.bytes_written
        if n.bound:
            if n.bound != "lower":
                upper_side = True
            if n.note and BOUNDED_NOTE in n.note:
                n_bounded += 1
    upper_src, lower_src = _bound_sources(nodes, sr) if sr.bounded or sr.trips or sr.bound_sources or any(
        n.bound for n in nodes) else ((), ())
    lower_side = bool(uncosted or lower_src)
    totals = Totals(
        macs=macs, flops=flops, int_ops=int_ops, bytes_read=bytes_read, bytes_written=bytes_written, params=params,
        param_bytes=param_bytes, param_bytes_by_dtype=tuple(bytes_by_dtype.items()),
        params_by_dtype=tuple(count_by_dtype.items()), complete=not lower_side, uncosted=uncosted,
        uncosted_by_status=uncosted_by_status,
        bound="unknown" if lower_side and upper_side else "lower" if lower_side else "upper" if upper_side
        else "exact", upper_bounded=upper_src, lower_bounded=lower_src,
    )
    notes = list(sr.notes) + newer_than_onnx_notes(loaded) + loaded.external_data_problems
    if n_bounded:
        why = sorted({op for ops in sr.bounded.values() for op in ops})
        notes.append(f"{n_bounded} node(s) follow a size that is an upper bound (the largest {' and '.join(why)} "
                     "can produce): their cost is an upper bound")
    if loaded.missing_external_files:
        notes.append("external weight file(s) not found (not needed for analysis): "
                     + ", ".join(loaded.missing_external_files))
    for n in main:
        if n.op_type in ("If", "Loop", "Scan") and n.note:
            notes.append(f"{n.op_type} node {n.id} {n.name!r}: {n.note}")
    info = _model_info(loaded, sr)
    return Costs(
        model=info, convention=convention, dims=tuple(sorted(sr.bound.items())),
        input_shapes=tuple(sorted(shapes_in.items())), free_dims=tuple(sr.free_dims),
        totals=totals, by_op_type=_by_op_type(nodes), coverage=_coverage(nodes, sr.free_dims, info.inputs),
        nodes=nodes, notes=tuple(notes), shape_engines=tuple(sr.engines), loaded=loaded, tensors=sr.tensors,
        sequences=sr.sequences, branches=sr.branches,
    )


@lru_cache(maxsize=1)
def known_opsets() -> dict[str, int]:
    """The newest opset of each domain that the installed onnx package has schemas for."""
    out: dict[str, int] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        d = "" if schema.domain in ("", "ai.onnx") else schema.domain
        out[d] = max(out.get(d, 0), int(schema.since_version))
    out[""] = max(out.get("", 0), onnx.defs.onnx_opset_version())
    return out


def newer_than_onnx_notes(loaded: LoadedModel) -> list[str]:
    """Notes for an IR version or opset newer than the installed onnx knows.

    Analysis goes on rather than failing: cost rules are looked up at or below the model's
    opset and ONNX shape inference uses the newest schema it has, so such a model is costed as
    if it used the newest known version of each op. That is right for every op whose meaning
    did not change since, and the note says that it is an assumption."""
    notes = []
    release = onnx.helper.VERSION_TABLE[-1]  # (onnx, IR, ai.onnx, ai.onnx.ml, ai.onnx.training)
    cheap = {"": max(release[2], onnx.defs.onnx_opset_version()), "ai.onnx.ml": release[3]}
    for domain, version in sorted(loaded.opsets.items()):
        # the full schema scan costs ~8 ms: only for onnx's own other domains (ai.onnx.preview...)
        newest = cheap[domain] if domain in cheap else (
            known_opsets().get(domain) if domain.startswith("ai.onnx") else None)
        if newest is not None and version > newest:
            notes.append(f"opset {domain or 'ai.onnx'} {version} is newer than the installed onnx {onnx.__version__} "
                         f"knows ({newest}): ops are costed and shaped as in opset {newest}")
    if loaded.proto.ir_version > onnx.IR_VERSION:
        notes.append(f"IR version {loaded.proto.ir_version} is newer than the installed onnx {onnx.__version__} "
                     f"knows ({onnx.IR_VERSION})")
    return notes


def _model_info(loaded: LoadedModel, sr: ShapeResult) -> ModelInfo:
    p = loaded.proto
    inits = loaded.graph.initializers

    def ref(name: str) -> TensorRef:
        ti = sr.tensors.get(name)
        if ti is None:
            return TensorRef(name, "undefined", None)
        return TensorRef(name, dtypes.name(ti.elem_type), ti.shape)

    return ModelInfo(
        path=None if loaded.path is None else str(loaded.path),
        file_size_bytes=loaded.file_size_bytes,
        producer_name=p.producer_name, producer_version=p.producer_version,
        ir_version=int(p.ir_version), opsets=tuple(sorted(loaded.opsets.items())),
        graph_name=p.graph.name,
        inputs=tuple(ref(vi.name) for vi in p.graph.input if vi.name not in inits),
        outputs=tuple(ref(vi.name) for vi in p.graph.output),
        nodes=len(loaded.graph.nodes), nodes_in_subgraphs=_count_sub_nodes(loaded.graph),
        initializers=len(inits), inlined_functions=loaded.inlined_functions,
        missing_external_files=tuple(loaded.missing_external_files),
    )


__all__ = ["Costs", "cost_analysis", "costs", "input_dim_names", "parse_shape", "SCHEMA"]
