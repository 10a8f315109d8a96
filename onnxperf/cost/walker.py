"""Walks a graph in stable topological order and applies the cost rules.

Pure with respect to the graph: results are :class:`NodeCost` records keyed by node id,
kept apart from the networkx graph, so one loaded graph can be analyzed many times.

Statuses:

* ``counted``: a rule computed the cost;
* ``zero_by_design``: the op does no arithmetic and moves no data (views, metadata);
* ``unsupported``: no rule for this (domain, op type, opset): reported, never counted as zero;
* ``unknown_shape``: a rule exists but a shape it needs is not known (an unbound dim, or a
  dim that depends on data); ``blocking`` names the symbols.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import onnx

from onnxperf.cost import conventions
from onnxperf.base import dtypes
from onnxperf.base.frozen import record
from onnxperf.graph.loader import GraphIR, Initializer
from onnxperf.cost.ops import REGISTRY
from onnxperf.base.errors import RuleError
from onnxperf.shapes.loops import LoopTrips
from onnxperf.cost.ops.registry import EITHER, LOWER, UPPER, BadNode, NodeView, OpCost, RuleEntry, SubgraphCost, TensorView, combine_bounds
from onnxperf.ui.progress import advance
from onnxperf.shapes import validity
from onnxperf.shapes.tensor import Dim, TensorInfo

#: a main graph of at least this many nodes reports its cost walk to the progress, a chunk at a time
PROGRESS_CHUNK = 20_000

if TYPE_CHECKING:
    import numpy as np

COUNTED = "counted"
ZERO = "zero_by_design"
UNSUPPORTED = "unsupported"
UNKNOWN_SHAPE = "unknown_shape"
#: how the note of a node whose sizes are upper bounds begins (see :mod:`onnxperf.shapes.forward`); it goes
#: on with the ops that caused the bound: a data-dependent size (NonZero, NonMaxSuppression, TopK ...), an
#: If whose branches' shapes differ, a Loop whose trip count is an upper bound
BOUNDED_NOTE = "upper bound: a size here is the largest"


def bounded_note(origins) -> str:
    """``upper bound: a size here is the largest NonZero can produce``: the note of a node touching a
    tensor whose size is an upper bound, naming the op types that caused it."""
    return f"{BOUNDED_NOTE} {' and '.join(sorted(origins))} can produce"
RULE_ERROR = "rule_error"
STATUSES = (COUNTED, ZERO, UNSUPPORTED, UNKNOWN_SHAPE, RULE_ERROR)
#: statuses whose nodes are not costed: any of them makes the totals a lower bound
UNCOSTED = (UNKNOWN_SHAPE, UNSUPPORTED, RULE_ERROR)
#: how the note of a node with an attribute no runtime accepts begins (:mod:`onnxperf.shapes.validity`)
INVALID = "invalid attribute: "

#: raise a rule's exception (as :class:`~onnxperf.base.errors.RuleError`) instead of recording the node as
#: ``rule_error``: the test suite and ``--debug`` set it, so a bug in a rule fails loudly there
RAISE_RULE_ERRORS = False
SUPPORTED_DOMAINS = ("", "ai.onnx.ml", "com.microsoft")

#: element types whose constants count as parameters. int64 and bool constants hold shapes,
#: axes and indices by the ONNX spec's own typing, strings hold vocabularies: not weights.
_NON_PARAM_TYPES = {onnx.TensorProto.INT64, onnx.TensorProto.BOOL, onnx.TensorProto.STRING,
                    onnx.TensorProto.UNDEFINED}


@record
class TensorRef:
    name: str
    dtype: str
    shape: tuple[Dim, ...] | None


@record
class NodeCost:
    """The cost of one node. Units are in the field names; MACs and FLOPs are separate."""

    id: int
    scope: str  # "" for the main graph, "<node id>/<attribute>" path for subgraph bodies
    name: str
    op_type: str
    domain: str
    family: str
    rule_since: int | None
    status: str
    inputs: tuple[TensorRef | None, ...]
    outputs: tuple[TensorRef | None, ...]
    macs: int
    flops: int
    int_ops: int
    bytes_read: int
    bytes_written: int
    params: int
    exact: bool
    blocking: tuple[str, ...]
    note: str
    #: for an inexact figure, the side of the truth it is on when known: "upper", "lower" or "unknown"
    #: (both kinds in it); "" when exact or an estimate of no known side (see OpCost.bound)
    bound: str = ""

    @property
    def key(self) -> str:
        return f"{self.scope}/{self.id}" if self.scope else str(self.id)


#: families whose single-element constant operands are hyperparameters (eps, scale, exponent)
_SCALAR_OPERAND_FAMILIES = frozenset({"elementwise", "activation"})


def is_param(elem_type: int, numel: int, consumer_families: Iterable[str]) -> bool:
    """Does a constant tensor count as parameters? Not int64/bool/string tensors (shapes, axes,
    indices, vocabularies by the ONNX spec's typing), and not a single element whose every
    consumer is elementwise (an eps, a scale, an exponent written as a constant). A single-element
    Conv or MatMul weight is a parameter. See docs/conventions.md."""
    if elem_type in _NON_PARAM_TYPES:
        return False
    if numel <= 1:
        fams = set(consumer_families)
        return bool(fams) and not fams <= _SCALAR_OPERAND_FAMILIES
    return True


def family_of(node: onnx.NodeProto) -> str:
    """The op family of a node's newest rule ("misc" when it has none)."""
    entry = REGISTRY.lookup(node.domain or "", node.op_type, None)
    return entry.family if entry is not None else "misc"


@lru_cache(maxsize=4096)
def _schema_defaults(domain: str, op_type: str, opset: int) -> tuple[tuple[str, Any], ...]:
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # no schema for this domain or version (com.microsoft ops, new ops)
        return ()
    out = []
    for name, a in schema.attributes.items():
        dv = a.default_value
        if dv is not None and dv.type != onnx.AttributeProto.UNDEFINED:
            out.append((name, _attr_value(dv)))
    return tuple(out)


def _attr_value(a: onnx.AttributeProto) -> Any:
    if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        return None
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8", "replace") for x in v]
    if isinstance(v, onnx.TensorProto):
        return None  # tensors in attributes are not needed by any rule (Constant is zero-cost)
    return v


def _attrs(node: onnx.NodeProto, domain: str, opset: int) -> dict[str, Any]:
    attrs = dict(_schema_defaults(domain, node.op_type, opset))
    for a in node.attribute:
        v = _attr_value(a)
        if v is not None:
            attrs[a.name] = v
    return attrs


def _rule_name(entry: RuleEntry, convention: str) -> str:
    """``onnxperf.cost.ops.conv.conv (ai.onnx::Conv since 1)``, with the convention when not the default."""
    fn = entry.fn
    where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    conv = "" if convention == "default" else f", convention {convention}"
    return f"{where} ({entry.domain or 'ai.onnx'}::{entry.op_type} since {entry.since}{conv})"


class CostWalker:
    def __init__(self, tensors: dict[str, TensorInfo], opsets: dict[str, int], convention: str = "default",
                 bounded: dict[str, frozenset[str]] | None = None, values: dict[str, np.ndarray] | None = None,
                 trips: dict[str, LoopTrips] | None = None, sequences: Iterable[str] = ()):
        self.convention = convention
        #: names of sequence values: not tensors, so a rule reading one gets no view and is not blocked
        self.sequences = frozenset(sequences)
        #: Loop trip counts shape inference worked out, by node key
        self.trips = trips or {}
        self.tensors = tensors
        #: small values shape inference computed (shape arithmetic, trip counts): rules read them
        #: like constants (``NodeView.const``)
        self.values = values or {}
        #: tensors whose shape is an upper bound, with the op types that caused it: nodes touching one are
        #: upper bounds
        self.bounded = bounded or {}
        self.opsets = opsets
        self.records: list[NodeCost] = []
        self._refs: dict[str, TensorRef | None] = {"": None}
        self._views_cache: dict[str, tuple[TensorView | None, frozenset[str]]] = {}
        self._entries: dict[tuple[str, str], RuleEntry | None] = {}
        #: (domain, op type) -> (rule entry, family, rule since, the model's opset of the domain)
        self._kinds: dict[tuple[str, str], tuple[RuleEntry | None, str, int | None, int | None]] = {}
        self._const_dicts: dict[int, dict[str, Initializer]] = {}
        #: id(array) -> (array, its signature part): see :meth:`_value_sig`
        self._vsigs: dict[int, tuple[np.ndarray, tuple]] = {}
        #: node signature -> what the rule gave (see :meth:`_signature`)
        self._memo: dict[tuple, tuple[str, OpCost, frozenset[str], str, int, int]] = {}

    def _ref(self, name: str) -> TensorRef | None:
        """The tensor's record (None for an absent optional input), made once per name."""
        r = self._refs.get(name)
        if r is None and name:
            r = self._new_ref(name)
        return r

    def _new_ref(self, name: str, keep: bool = True) -> TensorRef:
        """A new record for the tensor ``name`` (not empty), kept for the nodes that read it
        unless ``keep`` is false."""
        ti = self.tensors.get(name)
        r = TensorRef(name, "undefined", None) if ti is None else TensorRef(name, dtypes.name(ti.elem_type), ti.shape)
        if keep:
            self._refs[name] = r
        return r

    def walk(self, g: GraphIR, scope: str = "", param_names: set[str] | None = None) -> list[NodeCost]:
        """Cost every node of ``g`` (and, recursively, its subgraphs); returns ``g``'s own records."""
        params = param_names  # collected only when asked for
        consts = self._consts_of(g)
        with_graphs = {k[0] for k in g.subgraphs} if g.subgraphs else ()
        node, records = self._node, self.records
        own: list[NodeCost] = []
        order = g.order
        # a large main graph reports its count to the progress shown (if any), a chunk at a time
        chunks = [order] if scope or len(order) < PROGRESS_CHUNK else \
            [order[i:i + PROGRESS_CHUNK] for i in range(0, len(order), PROGRESS_CHUNK)]
        done = 0
        for chunk in chunks:
            if len(chunks) > 1:
                advance(done, len(order), "nodes costed")
            for idx in chunk:  # a node's subgraph records go before it (appended while it is costed)
                rec = node(g, idx, scope, params, consts, with_graphs)
                own.append(rec)
                records.append(rec)
            done += len(chunk)
        return own

    def _subgraph_costs(self, g: GraphIR, idx: int, scope: str, params: set[str] | None) -> dict[str, SubgraphCost]:
        out = {}
        for (node_idx, attr), sub in g.subgraphs.items():
            if node_idx != idx:
                continue
            sub_scope = f"{scope + '/' if scope else ''}{idx}/{attr}"
            recs = self.walk(sub, sub_scope, params)
            nested = [r for r in self.records if r.scope.startswith(sub_scope + "/")]
            out[attr] = SubgraphCost(
                macs=sum(r.macs for r in recs), flops=sum(r.flops for r in recs),
                int_ops=sum(r.int_ops for r in recs), bytes_read=sum(r.bytes_read for r in recs),
                bytes_written=sum(r.bytes_written for r in recs), nodes=len(recs) + len(nested),
                uncosted_nodes=sum(r.status in UNCOSTED for r in recs + nested),
                upper_nodes=sum(r.bound in (UPPER, EITHER) for r in recs),
                lower_nodes=sum(r.bound in (LOWER, EITHER) for r in recs),
            )
        return out

    def _entry(self, domain: str, op_type: str) -> RuleEntry | None:
        key = (domain, op_type)
        try:
            return self._entries[key]
        except KeyError:
            pass
        opset = self.opsets.get(domain)
        # com.microsoft ops are versioned by onnxruntime, not by the model's opset import
        entry = self._entries[key] = REGISTRY.lookup(domain, op_type, opset if domain != "com.microsoft" else None) \
            if domain in SUPPORTED_DOMAINS else None
        return entry

    def _consts_of(self, g: GraphIR) -> dict[str, Initializer]:
        """Initializers and Constant outputs of ``g`` in one dict (an initializer wins a name clash,
        as in :meth:`GraphIR.const_value`)."""
        d = self._const_dicts.get(id(g))
        if d is None:
            # no copy of a big graph's initializers when it has no Constant node
            d = self._const_dicts[id(g)] = {**g.constants, **g.initializers} if g.constants else g.initializers
        return d

    def _node(self, g: GraphIR, idx: int, scope: str, params: set[str] | None, consts: dict[str, Initializer],
              with_graphs) -> NodeCost:
        op_type, domain, name = g.heads[idx]
        kind = self._kinds.get((domain, op_type))
        if kind is None:
            entry = self._entry(domain, op_type)
            kind = self._kinds[(domain, op_type)] = (entry, entry.family if entry is not None else "misc",
                                                      entry.since if entry is not None else None,
                                                      self.opsets.get(domain))
        entry, family, since, opset = kind
        in_names, out_names = g.io[idx]
        get, new = self._refs.get, self._new_ref
        # inputs were mostly seen before, as some node's output; a weight or a graph input is not:
        # its record is made for this node and not kept (most are read once; a record made
        # again holds the same values). Outputs are new (each tensor has one producer, walked
        # before its readers)
        outs = tuple([new(x) if x else None for x in out_names])
        node_params = 0
        values = []  # (input index, constant) pairs whose values rules may read
        computed = self.values
        ins_list = []
        for i, x in enumerate(in_names):
            r = get(x)
            ins_list.append(r if r is not None or not x else new(x, False))
            rec = consts.get(x)
            if rec is not None:
                numel = rec.numel
                # is_param's answer for every tensor but the few of one element or of a non-weight type
                if (numel > 1 and rec.elem_type not in _NON_PARAM_TYPES) or is_param(rec.elem_type, numel, (family,)):
                    node_params += numel
                    if params is not None:
                        params.add(x)
                if rec.value is not None and x:
                    values.append((i, rec))
            elif computed and x in computed:  # computed by shape inference (a trip count ...)
                values.append((i, computed[x]))
        ins = tuple(ins_list)
        subcosts = self._subgraph_costs(g, idx, scope, params) if idx in with_graphs else None

        if entry is None:
            if domain not in SUPPORTED_DOMAINS:
                why = f"domain {domain!r} is not supported"
            else:
                why = f"no cost rule for {domain or 'ai.onnx'}::{op_type} at opset {opset}"
            res = (UNSUPPORTED, 0, 0, 0, 0, 0, True, (), why, "")
        elif entry.fn is None:
            res = (ZERO, 0, 0, 0, 0, 0, True, (), entry.zero_reason, "")
        else:
            key = None if subcosts else self._signature(g, idx, entry, opset, ins, outs, values)
            res = self._memo.get(key) if key is not None else None
            if res is None:
                trips = self.trips.get(f"{scope}/{idx}" if scope else str(idx)) if op_type == "Loop" else None
                status, cost, blocking, note, br, bw = self._cost(g, idx, entry, domain, opset, subcosts or {},
                                                                  trips)
                res = (status, cost.macs, cost.flops, cost.int_ops, br, bw, cost.exact, tuple(sorted(blocking)),
                       note or cost.note, cost.bound)
                if key is not None and status not in (UNSUPPORTED, RULE_ERROR):  # their notes name the node
                    self._memo[key] = res
        if self.bounded and res[0] == COUNTED:
            bounded = self.bounded
            why = [bounded[x] for x in in_names + out_names if x in bounded]
            if why:
                res = res[:6] + (False, res[7], (res[8] + "; " if res[8] else "") + bounded_note(set().union(*why)),
                                 combine_bounds(res[9], UPPER))
        return NodeCost(idx, scope, name, op_type, domain, family, since, res[0], ins, outs, res[1], res[2], res[3],
                        res[4], res[5], node_params, res[6], res[7], res[8], res[9])

    def _signature(self, g: GraphIR, idx: int, entry: RuleEntry, opset: int | None,
                   ins: tuple[TensorRef | None, ...], outs: tuple[TensorRef | None, ...],
                   consts: list[tuple[int, Initializer]]) -> tuple:
        """What a rule's result depends on: the rule (so the op, domain and since-version), the
        model's opset, input and output dtypes and shapes (from the node's tensor records; a
        tensor of unknown type and rank is shaped and costed alike whether or not it has a record
        of its own), attributes and constant input values, never names. Nodes with equal
        signatures (the repeated layers of a network) get the rule's result once."""
        tensor_sig = (tuple([("",) if r is None else (r.dtype, r.shape) for r in ins]),
                      tuple([("",) if r is None else (r.dtype, r.shape) for r in outs]))
        values = tuple([(i, self._value_sig(getattr(rec, "value", rec))) for i, rec in consts]) if consts else ()
        akey = tuple([a.SerializeToString(deterministic=True) for a in g.nodes[idx].attribute]) \
            if idx in g.with_attrs else ()
        return (id(entry), opset, tensor_sig, values, akey)

    def _value_sig(self, v: np.ndarray) -> tuple:
        """A value's part of a signature (dtype, shape, bytes), made once per array: computed
        values are shared by the tensors of repeated blocks, and arrays are never written to."""
        hit = self._vsigs.get(id(v))
        if hit is None or hit[0] is not v:
            hit = self._vsigs[id(v)] = (v, (v.dtype.str, v.shape, v.tobytes()))
        return hit[1]

    def _cost(self, g: GraphIR, idx: int, entry: RuleEntry, domain: str, opset: int | None,
              subcosts: dict[str, SubgraphCost], trips: LoopTrips | None = None
              ) -> tuple[str, OpCost, frozenset[str], str, int, int]:
        """Apply ``entry``'s rule to node ``idx`` of ``g``: (status, cost, blocking dims, note,
        bytes read, bytes written)."""
        n = g.nodes[idx]
        why = validity.node_problem(n, domain, opset or 1)
        if why:  # no runtime runs it: its outputs are not shaped (onnxperf.shapes.validity)
            return UNKNOWN_SHAPE, OpCost(exact=False), frozenset(), INVALID + why, 0, 0
        in_names, out_names = g.io[idx]
        views_in, block_in = self._views(in_names)
        views_out, block_out = self._views(out_names)
        blocking = block_in | (set() if entry.outputs_may_be_unknown else block_out)
        if blocking:
            return (UNKNOWN_SHAPE, OpCost(exact=False), frozenset(blocking),
                    "shape depends on " + ", ".join(sorted(blocking)), 0, 0)
        consts = {}
        for i, x in enumerate(in_names):
            if x:
                v = g.const_value(x)
                if v is None and self.values:
                    v = self.values.get(x)
                if v is not None:
                    consts[i] = v
        view = NodeView(n.op_type, domain, n.name, opset or 1, views_in, views_out,
                        _attrs(n, domain, opset or 1), consts, subcosts, trips)
        try:
            cost = entry.fn(view)  # type: ignore[misc]
            # traffic always comes from the default cost; the convention re-expresses the arithmetic
            counted = conventions.apply(self.convention, entry, view, cost)
        except BadNode as exc:
            # the rule met a node it cannot cost as written (a malformed attribute, an absent
            # required input): the node is reported, not guessed
            return UNSUPPORTED, OpCost(), frozenset(), f"rule could not cost this node: {exc}", 0, 0
        except Exception as exc:  # anything else out of a rule is a bug in it: never an unsupported op
            err = RuleError(_rule_name(entry, self.convention), f"{idx} {n.op_type} {n.name!r}", exc)
            if RAISE_RULE_ERRORS:
                raise err from exc
            return RULE_ERROR, OpCost(exact=False), frozenset(), str(err), 0, 0
        br = cost.bytes_read if cost.bytes_read is not None else sum(t.nbytes for t in view.present_inputs)
        if cost.bytes_written is not None:
            bw = cost.bytes_written
        else:
            bw = sum(t.nbytes for t in view.present_outputs)
        # an unknown output makes the figure inexact unless the rule accounted for it itself
        exact = cost.exact and not (entry.outputs_may_be_unknown and block_out and cost.bytes_written is None)
        counted = OpCost(counted.macs, counted.flops, counted.int_ops, None, None, exact, cost.note,
                         cost.bound if not exact else "")
        return COUNTED, counted, frozenset(), "", br, bw

    def _view(self, x: str) -> tuple[TensorView | None, frozenset[str]]:
        hit = self._views_cache.get(x)
        if hit is None:
            ti = self.tensors.get(x)
            if ti is None and x in self.sequences:
                hit = (None, frozenset())
            elif ti is None or not ti.is_static:
                hit = (None, frozenset(ti.symbols() if ti is not None else {"?"}))
            else:
                hit = (TensorView(x, ti.elem_type, tuple(ti.shape)), frozenset())  # type: ignore[arg-type]
            self._views_cache[x] = hit
        return hit

    def _views(self, names) -> tuple[tuple[TensorView | None, ...], set[str]]:
        views: list[TensorView | None] = []
        blocking: set[str] = set()
        for x in names:
            if not x:
                views.append(None)
                continue
            v, b = self._view(x)
            views.append(v)
            blocking |= b
        return tuple(views), blocking

