"""The forward pass: a fixed point of ONNX's per-node inference, own shape functions and value
evaluation, in one walk of the graph in topological order.

ONNX's whole-graph inference (run first, in :mod:`onnxperf.shapes.infer`) stops at the first node it
cannot shape (a ``com.microsoft`` op, an ``ai.onnx.ml`` op, a ``Pad`` by computed amounts) and
leaves everything downstream unknown, and it carries no values through most shape arithmetic.
This pass visits the nodes in order, and for every node an output of which is still missing,
rank-unknown or holds a dim that is neither a number nor a free (unbound) symbol:

1. values: a default-domain node whose inputs are all known small values is computed (numpy
   evaluators of :mod:`onnxperf.shapes.values`; any other default-domain op through onnx's reference
   evaluator, only when ONNX says its outputs are small integers). ``Shape``/``Size`` of a static
   tensor too. A computed output has an exact shape, and its value feeds the nodes below. Values are
   computed only where a node below can use them (:meth:`Forward._needed`), and once per distinct
   (op, attributes, input values): repeated blocks repeat their shape arithmetic;
2. ONNX's own inference of that node (what ``onnx.shape_inference.infer_node_outputs`` runs), with
   the known values of its inputs as data, so a ``Reshape``/``Pad``/``Slice`` by computed amounts is
   shaped;
3. own shape functions (:mod:`onnxperf.shapes.rules`) for what ONNX has no schema or function for;
4. data-dependent sizes (``NonZero``, ``NonMaxSuppression``, ``TopK`` by a computed k, ``Unique``,
   ``Compress``): where nothing above can tell, the largest size the op can produce
   (:data:`UPPER_BOUNDS`). Such a tensor, and every tensor computed from it, is recorded in
   :attr:`Forward.bounded`: the cost of a node that touches one is an upper bound, and says so.

Because every node is visited after all its inputs, what one step fills is used by every step
below it: no second whole-graph pass is needed. Derived dim names (``past + 1``, ``2*s0``), as the
dynamo exporter writes them, are evaluated from the bound dims (:func:`eval_dim`). Sizes are capped:
no value beyond :data:`onnxperf.shapes.values.MAX_ELEMENTS` elements is built here, each size checked
before anything is built (ONNX's own data propagation is kept from huge Ranges by
:meth:`onnxperf.shapes.infer._InPlace.hide_large_values`).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping

import numpy as np
import onnx

from onnxperf.shapes import own
from onnxperf.shapes import rules as shape_rules
from onnxperf.shapes import static as shape_static
from onnxperf.graph.loader import GraphIR, LoadedModel
from onnxperf.shapes import sequences
from onnxperf.shapes import validity
from onnxperf.shapes.loops import EXACT, UNKNOWN, UPPER, LoopTrips, run_loop
from onnxperf.shapes.sequences import SEQUENCE_OPS, SequenceInfo
from onnxperf.shapes.tensor import TensorInfo, _knownness, _type_of
from onnxperf.shapes.values import CONST_TYPES, EVALUATORS, MAX_ELEMENTS, evaluate

#: element types of the values the reference evaluator computes: shape arithmetic is integer
_SHAPE_TYPES = frozenset({onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.BOOL})

#: the largest absolute value a derived dim may take (beyond it the expression stays a symbol)
MAX_DIM = 1 << 62

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def eval_dim(expr: str, bound: Mapping[str, int]) -> int | None:
    """The value of a dim written as arithmetic of named dims (``past + 1``, ``2*s0``,
    ``floor(seq/2)``, ``max(a, b)``), with the names bound; None when a name is unbound, the
    expression is not plain integer arithmetic, a division is not exact, or the value is not a
    size. Parsed with :mod:`ast`, never executed."""
    if expr in bound:
        return bound[expr]
    if expr.isidentifier():  # a lone unbound name (``unk__3``, ``batch``): nothing to evaluate
        return None
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            return bound[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Div):  # sympy writes exact quotients with "/"
                if b == 0 or a % b:
                    raise ValueError("inexact division")
                return a // b
            fn = _BINOPS.get(type(n.op))
            if fn is None or (isinstance(n.op, (ast.FloorDiv, ast.Mod)) and b == 0):
                raise ValueError("operator")
            out = fn(a, b)
            if abs(out) > MAX_DIM:
                raise ValueError("too large")
            return out
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            name = n.func.id.lower()
            args = [n2 for n2 in n.args]
            if name in ("max", "min") and args:
                vals = [ev(a) for a in args]
                return max(vals) if name == "max" else min(vals)
            if name in ("floor", "ceiling", "ceil") and len(args) == 1 and isinstance(args[0], ast.BinOp) \
                    and isinstance(args[0].op, ast.Div):
                a, b = ev(args[0].left), ev(args[0].right)
                if b == 0:
                    raise ValueError("division by zero")
                return a // b if name == "floor" else -(-a // b)
        raise ValueError("not integer arithmetic")

    try:
        v = ev(tree.body)
    except (KeyError, ValueError, TypeError, RecursionError, OverflowError):
        return None
    return v if 0 <= v <= MAX_DIM else None


def _numel(shape) -> int | None:
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        n *= d
    return n


def _bound_nonzero(c: shape_rules.ShapeCtx) -> list:
    """NonZero(X): [rank(X), k] with k <= numel(X)."""
    x = c.shape(0)
    n = _numel(x) if x is not None else None
    return [(shape_rules.I64, (len(x), n))] if n is not None else [None]


def _bound_nms(c: shape_rules.ShapeCtx) -> list:
    """NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class m):
    [k, 3] with k <= B·C·min(m, N) (m = N when it is not a constant; 0 or absent selects none)."""
    boxes, scores = c.shape(0), c.shape(1)
    if boxes is None or scores is None or len(boxes) != 3 or len(scores) != 3:
        return [None]
    b, n, cls = boxes[0], boxes[1], scores[1]
    if not all(isinstance(d, int) for d in (b, n, cls)):
        return [None]
    m = c.value(2)
    per = n if m is None or m.size != 1 else max(0, min(int(m.reshape(-1)[0]), n))
    return [(shape_rules.I64, (b * cls * per, 3))]


def _bound_topk(c: shape_rules.ShapeCtx) -> list:
    """TopK(X, k) with k not a constant: k <= X's dim on ``axis``."""
    x = c.shape(0)
    if x is None or not x:
        return [None, None]
    axis = int(c.attr("axis", -1))
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x) or not isinstance(x[axis], int):
        return [None, None]
    return [(c.type(0), tuple(x)), (shape_rules.I64, tuple(x))]


def _bound_unique(c: shape_rules.ShapeCtx) -> list:
    """Unique(X): Y, indices, inverse_indices, counts with at most numel(X) (or X's dim on
    ``axis``) unique entries."""
    x = c.shape(0)
    if x is None:
        return [None] * 4
    axis = c.attr("axis")
    n = _numel(x)
    if n is None:
        return [None] * 4
    if axis is None:
        y: tuple = (n,)
        k = n
    else:
        a = int(axis) + len(x) if int(axis) < 0 else int(axis)
        k = x[a]
        y = tuple(x)
    inverse = (n,) if axis is None else (x[int(axis) + len(x) if int(axis) < 0 else int(axis)],)
    return [(c.type(0), y), (shape_rules.I64, (k,)), (shape_rules.I64, inverse), (shape_rules.I64, (k,))]


def _bound_compress(c: shape_rules.ShapeCtx) -> list:
    """Compress(X, condition [L]): at most min(L, X's dim on ``axis``) kept (min(L, numel(X))
    without an axis: X flattened)."""
    x, cond = c.shape(0), c.shape(1)
    if x is None:
        return [None]
    limit = cond[0] if cond is not None and len(cond) == 1 and isinstance(cond[0], int) else None
    axis = c.attr("axis")
    if axis is None:
        n = _numel(x)
        return [(c.type(0), (n if limit is None else min(n, limit),))] if n is not None else [None]
    a = int(axis) + len(x) if int(axis) < 0 else int(axis)
    if not 0 <= a < len(x) or not isinstance(x[a], int):
        return [None]
    dims = list(x)
    dims[a] = x[a] if limit is None else min(x[a], limit)
    return [(c.type(0), tuple(dims))]


#: ops whose output sizes depend on the input data: the largest output each can produce
UPPER_BOUNDS = {"NonZero": _bound_nonzero, "NonMaxSuppression": _bound_nms, "TopK": _bound_topk,
                "Unique": _bound_unique, "Compress": _bound_compress}


_MISSING = object()


def _key(scope: str, idx: int) -> str:
    """A node's key, as :attr:`onnxperf.cost.walker.NodeCost.key` writes it."""
    return f"{scope}/{idx}" if scope else str(idx)


def _defined_in(g: GraphIR) -> list[str]:
    """Every tensor ``g`` and the bodies nested in it define (inputs and node outputs)."""
    out = [x for x in g.inputs if x]
    out += [o for _, outs in g.io for o in outs if o]
    for sub in g.subgraphs.values():
        out += _defined_in(sub)
    return out


def _same_state(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(a[k].shape == b[k].shape and np.array_equal(a[k], b[k]) for k in a)


def _size_of(ti) -> int | None:
    """A tensor's element count, None when its shape is not static."""
    return None if ti is None or not ti.is_static else ti.numel


def _grew(first, last) -> bool:
    """The last run's tensor at least as large as the first run's (both static)."""
    a, b = _size_of(first), _size_of(last)
    return a is not None and b is not None and b >= a


def _attr_key(node: onnx.NodeProto) -> tuple[bytes, ...]:
    """A node's attributes as bytes: what, with the op and its inputs, decides its value."""
    return tuple(a.SerializeToString() for a in node.attribute) if len(node.attribute) else ()


class Unshaped(Exception):
    """Raised by a pass that may not ask ONNX (``Forward(..., static_only=True)``) at the first
    node it cannot shape: the caller falls back to the whole-graph pipeline."""


class Forward:
    """State of one forward pass over a (sub)graph: what it knows and what it computed."""

    def __init__(self, loaded: LoadedModel, tensors: dict, free: set[str], bound: Mapping[str, int],
                 values: dict[str, np.ndarray], fast_static: bool = True, static_only: bool = False):
        self.TensorInfo = TensorInfo
        self._knownness = _knownness
        self.loaded = loaded
        self.tensors = tensors
        self.free = free
        self.bound = dict(bound)
        self.values = values
        self.opset_imports = list(loaded.proto.opset_import)
        self.opsets = loaded.opsets
        self.ir_version = loaded.proto.ir_version or onnx.IR_VERSION
        self._schemas: dict[tuple[str, str], onnx.defs.OpSchema | None] = {}
        #: per tensor, its type and its known value serialized as ONNX's per-node inference takes them
        self._type_bytes: dict[str, bytes] = {}
        self._data_bytes: dict[str, bytes] = {}
        #: a serialized result type -> (element type, shape, static) as :func:`shapes._type_of` reads it
        self._parsed: dict[bytes, tuple | None] = {}
        self._opset_dict = {o.domain: o.version for o in self.opset_imports}
        self._dims: dict[str, int | str] = {}
        self.gained = 0
        self.computed = 0
        #: (op, attributes, input values) -> the value computed (values are never written to)
        self._memo: dict[tuple, np.ndarray | None] = {}
        #: id(array) -> (array, its part of a memo key): see :meth:`_sig`
        self._sigs: dict[int, tuple[np.ndarray, tuple]] = {}
        #: (op, attributes, input types and values) -> ONNX's output types, by output position
        self._node_memo: dict[tuple, list[bytes | None]] = {}
        #: (op, input shapes and types, attributes, output count) -> the fast static rule's answer,
        #: for the rules that read no input value (see :meth:`_static`)
        self._static_memo: dict[tuple, list | None] = {}
        #: id(graph) -> (graph, the names :meth:`value` finds a constant value for)
        self._valued_sets: dict[int, tuple[GraphIR, frozenset[str]]] = {}
        #: tensors whose (static) shape or value is an upper bound: they depend on a data-dependent size
        self.bounded: dict[str, frozenset[str]] = {}
        #: keys (as :attr:`onnxperf.cost.walker.NodeCost.key`) of the nodes that put an upper bound in place
        #: of a size: a data-dependent op (NonZero ...), an If whose branches' shapes differ, a Loop whose
        #: trip count is an upper bound
        self.bound_sources: set[str] = set()
        #: the trip count of every Loop walked, by node key
        self.trips: dict[str, LoopTrips] = {}
        #: sequence values: element type and shape, length (:mod:`onnxperf.shapes.sequences`)
        self.seqs: dict[str, SequenceInfo] = {}
        #: the branch an If takes (``then_branch`` / ``else_branch``) where its cond is known, by node key
        self.branches: dict[str, str] = {}
        #: never ask ONNX; raise :class:`Unshaped` at the first node left unshaped
        self.static_only = static_only
        self._opset = self.opsets.get("", 1)
        #: the fast path of step 2 (:mod:`onnxperf.shapes.static`) by op type; tests switch it off to compare
        self._static_rules = {} if not fast_static else {
            op: rule for op in (*shape_static.RULES, *shape_static.MULTI_OUTPUT)
            if (rule := shape_static.rule_for(op, self._opset)) is not None}

    # -------------------------------------------------------------- knowledge

    def dim(self, d):
        """A dim with derived names evaluated: an int where the expression's names are bound."""
        if d.__class__ is not str:
            return d
        hit = self._dims.get(d)
        if hit is None:
            v = eval_dim(d, self.bound)
            hit = self._dims[d] = d if v is None else v
        return hit

    def resolve_derived(self) -> int:
        """Replace, in every known tensor, the dims that are expressions of bound dims by their
        values; returns how many tensors changed."""
        if not self.bound:
            return 0
        changed = 0
        TI = self.TensorInfo
        for name, ti in list(self.tensors.items()):
            if ti.shape is None or ti.is_static:
                continue
            shape = tuple(self.dim(d) for d in ti.shape)
            if shape != ti.shape:
                self.tensors[name] = TI(name, ti.elem_type, shape)
                changed += 1
        return changed

    def complete(self, ti) -> bool:
        if ti is None or ti.shape is None or not ti.elem_type:
            return False
        if ti.is_static:
            return True
        for d in ti.shape:
            if d is None:
                return False
            if d.__class__ is str and not ti.symbols() <= self.free:
                return False
        return True

    def value(self, g: GraphIR, name: str) -> np.ndarray | None:
        v = self.values.get(name)
        if v is not None:
            return v
        v = g.const_value(name)
        if v is None and g is not self.loaded.graph:  # a body reading the main graph's constants
            v = self.loaded.graph.const_value(name)
        return v if v is not None and v.size <= MAX_ELEMENTS else None

    def _valued(self, g: GraphIR) -> frozenset[str]:
        """The constants of ``g`` (and, for a body, of the main graph) that :meth:`value` reads a
        value from: asking this set spares a million-node graph two lookups in its big tables per
        node. An initializer hides a Constant output of the same name, as in
        :meth:`GraphIR.const_value`."""
        hit = self._valued_sets.get(id(g))
        if hit is None or hit[0] is not g:
            names = {n for n, r in g.initializers.items() if r.value is not None and r.value.size <= MAX_ELEMENTS}
            names.update(n for n, r in g.constants.items() if n not in g.initializers and r.value is not None
                         and r.value.size <= MAX_ELEMENTS)
            if g is not self.loaded.graph:
                names |= self._valued(self.loaded.graph)
            hit = self._valued_sets[id(g)] = (g, frozenset(names))
        return hit[1]

    def _value_sig(self, g: GraphIR, name: str) -> tuple | None:
        v = self.value(g, name)
        return None if v is None else (v.dtype.str, v.shape, v.tobytes())

    def static(self, name: str) -> tuple[int, ...] | None:
        ti = self.tensors.get(name)
        if ti is None or ti.shape is None or not ti.is_static or any(d < 0 for d in ti.shape):
            return None
        return tuple(ti.shape)

    def _better(self, name: str, elem: int, shape) -> bool:
        """Record (elem, shape) for ``name`` where it is better known than what is there."""
        cur = self.tensors.get(name)
        if cur is None and elem and shape is not None and all(d.__class__ is int for d in shape):
            # nothing known yet, a static shape: nothing to merge or compare (most nodes of the
            # static-first pass)
            self.tensors[name] = self.TensorInfo.of(name, int(elem), tuple(shape), True)
            self.gained += 1
            return True
        _knownness = self._knownness
        if shape is not None:
            shape = tuple(self.dim(d) for d in shape)
        if cur is not None:
            if not elem:
                elem = cur.elem_type
            if shape is None:
                shape = cur.shape
            elif cur.shape is not None and len(cur.shape) == len(shape):
                # keep a number either side knows (ONNX's inferred dims can be surer than ours)
                shape = tuple(a if isinstance(a, int) else b for a, b in zip(shape, cur.shape))
        new = self.TensorInfo(name, int(elem or 0), shape)
        if cur is not None and _knownness(new) <= _knownness(cur):
            return False
        self.tensors[name] = new
        self._type_bytes.pop(name, None)
        self.gained += 1
        return True

    # -------------------------------------------------------------- the walk

    def _needed(self, g: GraphIR, with_graphs: set[int]) -> set[str]:
        """The tensors whose values this pass may need: inputs of a node ONNX left unshaped or of
        a control-flow node (its trip count, condition, and what its bodies read from outside),
        and, transitively, the inputs of the value ops that produce them. Values nothing below
        reads (shape arithmetic ONNX has already followed) are not computed."""
        heads, io, tensors = g.heads, g.io, self.tensors
        needed: set[str] = set()
        bodies: dict[int, list[str]] = {}
        for (i, _), sub in g.subgraphs.items():
            bodies.setdefault(i, []).extend(sub.outer_refs)
        for idx in reversed(g.order):
            in_names, out_names = io[idx]
            if idx in with_graphs:
                needed.update(in_names)
                needed.update(bodies.get(idx, ()))
            elif any(o and (o in needed or not self.complete(tensors.get(o))) for o in out_names):
                needed.update(in_names)
        return needed

    def run(self, g: GraphIR, scope: str = "") -> None:
        """Walk ``g`` (the main graph, or the body at ``scope``: ``"<node id>/<attribute>"`` paths as
        :attr:`onnxperf.cost.walker.NodeCost.scope` writes them)."""
        heads, io, nodes = g.heads, g.io, g.nodes
        with_graphs = {k[0] for k in g.subgraphs}
        tensors = self.tensors
        complete = self.complete
        values = self.values
        valued = self._valued(g)
        # the static-first pass starts from nothing: every node but a Constant wants its shape,
        # so which values are needed below does not change what it computes
        needed = set() if self.static_only else self._needed(g, with_graphs)
        with np.errstate(all="raise"):
            for idx in g.order:
                in_names, out_names = io[idx]
                op_type, domain, _ = heads[idx]
                outs = out_names if "" not in out_names else [o for o in out_names if o]
                if not outs:
                    continue
                if self.bounded:
                    why = [self.bounded[x] for x in in_names if x in self.bounded]
                    if why:
                        self._bound(outs, frozenset().union(*why))
                if idx in with_graphs:
                    self._control_flow(g, idx, nodes[idx], op_type, in_names, out_names, scope)
                    continue
                if op_type in SEQUENCE_OPS and domain == "":
                    self._sequence(g, idx, op_type, in_names, out_names)
                    continue
                if op_type in validity.CHECKED and validity.problem(op_type, shape_rules.attributes(nodes[idx])):
                    continue  # an attribute no runtime accepts (a stride of 0): not shaped; the walker names it
                want_shape = False
                fresh = True  # no output known at all yet (most nodes of the static-first pass)
                for o in outs:
                    ti = tensors.get(o)
                    if ti is not None:
                        fresh = False
                    if ti is None or not (ti.is_static and ti.elem_type) and not complete(ti):
                        want_shape = True
                        if not fresh:
                            break
                want_value = bool(domain == "" and in_names and outs[0] not in values
                                  and op_type != "Constant"  # its value is the loader's, when small enough to read
                                  and (want_shape or any(o in needed for o in outs)))
                if want_value and op_type not in ("Shape", "Size"):
                    for x in in_names:  # every input's value known
                        if x and x not in values and x not in valued:
                            want_value = False
                            break
                if not want_shape and not want_value:
                    continue
                node = nodes[idx] if want_value else None  # a node's proto is read only if needed
                if want_value and self._compute(g, node, op_type, in_names, outs):
                    continue
                shaped = want_shape and domain == "" and self._static(g, node, op_type, in_names, out_names, idx,
                                                                      fresh)
                if node is None and not shaped:
                    node = nodes[idx]
                if shaped:
                    pass  # shaped by the fast path: ONNX would say the same, slower
                elif want_shape and self.static_only:
                    # a data-dependent size (NonZero ...) gets the bound the usual way would give it
                    # (ONNX knows no more of it); anything else needs ONNX
                    if not (domain == "" and op_type in UPPER_BOUNDS
                            and self._own(g, node, in_names, out_names, UPPER_BOUNDS[op_type])
                            and all(self.complete(tensors.get(o)) for o in outs)):
                        raise Unshaped(idx)
                    self._bound(outs, frozenset((op_type,)))
                    self.bound_sources.add(_key(scope, idx))
                elif want_shape:
                    if domain in ("", "ai.onnx.ml", "ai.onnx.preview.training"):
                        self._onnx_node(g, node, domain, op_type, in_names)
                    if not all(self.complete(tensors.get(o)) for o in outs):
                        self._own(g, node, in_names, out_names)
                    if domain == "" and op_type in UPPER_BOUNDS and not all(
                            self.complete(tensors.get(o)) for o in outs):
                        if self._own(g, node, in_names, out_names, UPPER_BOUNDS[op_type]):
                            self._bound(outs, frozenset((op_type,)))
                            self.bound_sources.add(_key(scope, idx))
                if want_value and op_type not in EVALUATORS and op_type not in ("Shape", "Size"):
                    self._reference(g, node, op_type, in_names, outs)

    def _control_flow(self, g: GraphIR, idx: int, node: onnx.NodeProto, op_type: str, in_names, out_names,
                      scope: str = "") -> None:
        """The bodies of an If / Loop / Scan node walked like the main graph (outer-scope tensors
        known), then, for If, its outputs from the branches: the branch a constant condition takes,
        else dims both branches agree on, and where they differ the larger (an upper bound). A Loop's
        trip count is worked out first (:func:`onnxperf.shapes.loops.run_loop`), and its body is shaped with
        the values its iteration number and counters take on the first run."""
        bodies = {attr: sub for (i, attr), sub in g.subgraphs.items() if i == idx}
        key = _key(scope, idx)
        inner = f"{scope}/{idx}" if scope else str(idx)
        if op_type == "Loop" and "body" in bodies:
            self._loop(g, idx, in_names, out_names, bodies["body"], key, f"{inner}/body")
            bodies = {a: b for a, b in bodies.items() if a != "body"}
        for attr, sub in bodies.items():
            self.run(sub, f"{inner}/{attr}")
        if op_type != "If" or "then_branch" not in bodies or "else_branch" not in bodies:
            return
        then_b, else_b = bodies["then_branch"], bodies["else_branch"]
        cond = self.value(g, in_names[0]) if in_names else None
        taken = None
        if cond is not None and cond.size == 1:
            taken = then_b if bool(cond.reshape(-1)[0]) else else_b
            self.branches[key] = "then_branch" if taken is then_b else "else_branch"
        for j, name in enumerate(out_names):
            if not name or j >= len(then_b.outputs) or j >= len(else_b.outputs):
                continue
            a, b = self.tensors.get(then_b.outputs[j]), self.tensors.get(else_b.outputs[j])
            if taken is not None:
                chosen = self.tensors.get(taken.outputs[j])
                if chosen is not None:
                    self._better(name, chosen.elem_type, chosen.shape)
                    if taken.outputs[j] in self.bounded:
                        self._bound([name], self.bounded[taken.outputs[j]])
                    v = self.values.get(taken.outputs[j])
                    if v is not None and name not in self.values:
                        self._store(name, v)  # a branch that returns a shape value: its value flows on
                continue
            if a is None or b is None or a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
                continue
            dims, upper = [], False
            for x, y in zip(a.shape, b.shape):
                if x == y:
                    dims.append(x)
                elif isinstance(x, int) and isinstance(y, int):
                    dims.append(max(x, y))
                    upper = True
                else:
                    dims.append(None)
            self._better(name, a.elem_type or b.elem_type, tuple(dims))
            if upper:
                self.bound_sources.add(key)
            why = self.bounded.get(then_b.outputs[j], frozenset()) | self.bounded.get(else_b.outputs[j], frozenset())
            if upper or why:
                self._bound([name], why | ({"If"} if upper else set()))

    def _loop(self, g: GraphIR, idx: int, in_names, out_names, body: GraphIR, key: str, inner: str) -> None:
        """A Loop: its trip count, its body shaped with the iteration state of the first run (and
        checked against the last run's: a body whose shapes change from run to run is said so), then
        its outputs."""
        self._loop_inputs(g, in_names, body)
        has = [i < len(in_names) and bool(in_names[i]) for i in (0, 1)]
        m = self.value(g, in_names[0]) if has[0] else None
        c0 = self.value(g, in_names[1]) if has[1] else None
        initial = [self.value(g, x) if x else None for x in in_names[2:]]
        outer_tensors = self.tensors

        def outer_shape(x: str) -> tuple[int, ...] | None:
            ti = outer_tensors.get(x)
            return tuple(ti.shape) if ti is not None and ti.is_static else None

        lr = run_loop(body, m, has[0], c0, has[1], initial, lambda x: self.value(body, x), outer_shape,
                      self._opset)
        trips = lr.trips
        varied: list[str] = []
        if lr.last and not _same_state(lr.first, lr.last):
            # shape the body as on its last run, note the shapes, and forget them
            local = _defined_in(body)
            saved = {x: (self.tensors.get(x), self.values.get(x), self.bounded.get(x), self.seqs.get(x))
                     for x in local}
            self._set_state(body, lr.last)
            self.run(body, inner)
            last = {x: self.tensors.get(x) for x in local}
            for x, (ti, v, b, sq) in saved.items():
                self._forget(x, ti, v, b, sq)
            self._set_state(body, lr.first)
            self.run(body, inner)
            # a size that changes: a scalar counter becoming [1] (paddle2onnx) changes no cost
            varied = [x for x in local if _size_of(last[x]) != _size_of(self.tensors.get(x))]
        else:
            self._set_state(body, lr.first)
            self.run(body, inner)
        if varied:
            grew = all(_grew(self.tensors.get(x), last[x]) for x in varied)
            what = ", ".join(repr(x) for x in varied[:3]) + (f" and {len(varied) - 3} more" if len(varied) > 3 else "")
            trips = LoopTrips(trips.count, "lower" if grew and trips.bound == EXACT else UNKNOWN,
                              f"{trips.how}; the body's shapes change from run to run ({what}): counted at the "
                              f"first run's shapes" + (", a lower bound" if grew else ""))
        self.trips[key] = trips
        if trips.bound == UPPER:
            self.bound_sources.add(key)
        self._loop_outputs(g, in_names, out_names, body, trips)

    def _sequence(self, g: GraphIR, idx: int, op_type: str, in_names, out_names) -> None:
        """A sequence op: the sequence it makes (:mod:`onnxperf.shapes.sequences`), or the tensor it takes
        out of one (SequenceAt, SequenceLength's value, ConcatFromSequence)."""
        node = g.nodes[idx]
        attrs = shape_rules.attributes(node) if len(node.attribute) else {}
        seqs = self.seqs
        out = out_names[0] if out_names else ""
        src = seqs.get(in_names[0]) if in_names and in_names[0] else None

        def tensor(x: str) -> tuple[int, tuple | None]:
            ti = self.tensors.get(x)
            return (0, None) if ti is None else (ti.elem_type, ti.shape)

        if op_type == "SequenceEmpty":
            seqs[out] = SequenceInfo(int(attrs.get("dtype", onnx.TensorProto.FLOAT)), None, 0)
        elif op_type == "SequenceConstruct":
            seqs[out] = sequences.construct([tensor(x) for x in in_names if x])
        elif op_type == "SplitToSequence":
            et, shape = tensor(in_names[0])
            has_split = len(in_names) > 1 and bool(in_names[1])
            v = self.value(g, in_names[1]) if has_split else None
            info = None if shape is None else sequences.split(
                tuple(shape), et, int(attrs.get("axis", 0)), bool(attrs.get("keepdims", 1)),
                None if v is None else [int(x) for x in v.reshape(-1)], has_split)
            if info is not None:
                seqs[out] = info
        elif src is None:
            return
        elif op_type == "SequenceInsert" and len(in_names) > 1:
            seqs[out] = sequences.insert(src, *tensor(in_names[1]))
        elif op_type == "SequenceErase":
            seqs[out] = sequences.erase(src)
        elif op_type == "SequenceAt" and src.elem_shape is not None:
            self._better(out, src.elem_type, src.elem_shape)
        elif op_type == "SequenceLength" and src.length is not None and out not in self.values:
            self._store(out, np.array(src.length, dtype=np.int64))
        elif op_type == "ConcatFromSequence":
            shape = sequences.concat(src, int(attrs.get("axis", 0)), bool(attrs.get("new_axis", 0)))
            if shape is not None:
                self._better(out, src.elem_type, shape)

    def _bound(self, names, why: frozenset[str]) -> None:
        """Mark ``names`` as upper-bound sizes, caused by the ops ``why`` names."""
        for x in names:
            if x:
                self.bounded[x] = self.bounded.get(x, frozenset()) | why

    def _set_state(self, body: GraphIR, state: dict[str, np.ndarray]) -> None:
        """Give the body's iteration number and loop-carried inputs the values of one run."""
        for name, v in state.items():
            if name and name in body.inputs[:1] + body.inputs[2:]:
                self._store(name, v)

    def _forget(self, name: str, ti, value, bounded: frozenset[str] | None, seq: SequenceInfo | None) -> None:
        """Put back what was known of ``name`` before a trial walk of a body."""
        if seq is None:
            self.seqs.pop(name, None)
        else:
            self.seqs[name] = seq
        if ti is None:
            self.tensors.pop(name, None)
        else:
            self.tensors[name] = ti
        if value is None:
            self.values.pop(name, None)
        else:
            self.values[name] = value
        if bounded is None:
            self.bounded.pop(name, None)
        else:
            self.bounded[name] = bounded
        self._type_bytes.pop(name, None)
        self._data_bytes.pop(name, None)

    def _loop_outputs(self, g: GraphIR, in_names, out_names, body: GraphIR, trips: LoopTrips) -> None:
        """Loop's outputs: the loop-carried finals shaped like the body's carried outputs (when
        those keep the shape they came in with), the scan outputs [trips, *body's scan output]: exact
        when the trip count is, else an upper bound (or unknown when the count is)."""
        carried = max(len(in_names) - 2, 0)
        body_outs = body.outputs
        if len(body_outs) < 1 + carried:
            return
        for j in range(carried):
            if j >= len(out_names) or not out_names[j]:
                continue
            seq_start, seq_after = self.seqs.get(in_names[2 + j]), self.seqs.get(body_outs[1 + j])
            if seq_start is not None and seq_after is not None:
                self.seqs[out_names[j]] = sequences.grown(seq_start, seq_after, trips.count)
                continue
            src, start = self.tensors.get(body_outs[1 + j]), self.tensors.get(in_names[2 + j])
            if src is not None and src.shape is not None and (start is None or start.shape == src.shape):
                self._better(out_names[j], src.elem_type, src.shape)
                if body_outs[1 + j] in self.bounded:
                    self._bound([out_names[j]], self.bounded[body_outs[1 + j]])
        if trips.count is None:
            return
        for j in range(carried, len(out_names)):
            name, src_name = out_names[j], body_outs[1 + j] if 1 + j < len(body_outs) else None
            src = self.tensors.get(src_name) if src_name else None
            if not name or src is None or src.shape is None:
                continue
            self._better(name, src.elem_type, (trips.count, *src.shape))
            if trips.bound != EXACT or src_name in self.bounded:
                self._bound([name], self.bounded.get(src_name, frozenset())
                            | ({"Loop"} if trips.bound != EXACT else set()))

    def _loop_inputs(self, g: GraphIR, in_names, body: GraphIR | None) -> None:
        """Loop's body inputs: iteration number (int64 scalar), condition (bool scalar) and the
        loop-carried values, shaped like the node's inputs."""
        if body is None or len(body.inputs) < 2:
            return
        TI = self.TensorInfo
        self.tensors.setdefault(body.inputs[0], TI(body.inputs[0], onnx.TensorProto.INT64, ()))
        self.tensors.setdefault(body.inputs[1], TI(body.inputs[1], onnx.TensorProto.BOOL, ()))
        for x, y in zip(in_names[2:], body.inputs[2:]):
            if x in self.seqs:
                self.seqs[y] = self.seqs[x]
                continue
            ti = self.tensors.get(x)
            if ti is not None and not self.complete(self.tensors.get(y)):
                self._better(y, ti.elem_type, ti.shape)
            if x in self.bounded:
                self._bound([y], self.bounded[x])

    def _compute(self, g: GraphIR, node: onnx.NodeProto, op_type: str, in_names, outs) -> bool:
        """Step 1 with the numpy evaluators: True when the node's value (and so its shape) is known."""
        attrs = _attr_key(node)
        if op_type in ("Shape", "Size"):
            shape = self.static(in_names[0]) if in_names and in_names[0] else None
            if shape is None:
                return False
            key = (op_type, attrs, shape)
            out = self._memo.get(key, _MISSING)
            if out is _MISSING:
                out = self._memo[key] = evaluate(node, op_type, [], self.opsets.get("", 1), shape)
        elif op_type in EVALUATORS and len(outs) == 1:
            ins = [self.value(g, x) if x else None for x in in_names]
            if any(v is None for x, v in zip(in_names, ins) if x):
                return False
            # the repeated blocks of a network repeat their shape arithmetic on the same values
            sig = self._sig
            key = (op_type, attrs, tuple([None if v is None else sig(v) for v in ins]))
            out = self._memo.get(key, _MISSING)
            if out is _MISSING:
                out = self._memo[key] = evaluate(node, op_type, ins, self.opsets.get("", 1))
        else:
            return False
        if out is None:
            return False
        self._store(outs[0], out)
        return True

    def _sig(self, v: np.ndarray) -> tuple:
        """A value as part of a memo key (dtype, shape, bytes), made once per array: memoized
        results and the loader's repeated constants are shared arrays, never written to."""
        hit = self._sigs.get(id(v))
        if hit is None or hit[0] is not v:
            hit = self._sigs[id(v)] = (v, (v.dtype.str, v.shape, v.tobytes()))
        return hit[1]

    def _store(self, name: str, value: np.ndarray) -> None:
        self.values[name] = value
        self.computed += 1
        elem = CONST_TYPES.get(value.dtype) or onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
        cur = self.tensors.get(name)
        if cur is None or not cur.is_static or cur.shape != value.shape:
            self.tensors[name] = self.TensorInfo.of(name, int(cur.elem_type if cur is not None and cur.elem_type
                                                              else elem), tuple(int(d) for d in value.shape), True)
            self._type_bytes.pop(name, None)
            self.gained += 1

    def _reference(self, g: GraphIR, node: onnx.NodeProto, op_type: str, in_names, outs) -> None:
        """Step 1 for a default-domain op without a numpy evaluator (Pad, ScatterND, Trilu, CumSum,
        OneHot, ...): onnx's reference implementation, only when every input is a known value and
        ONNX's inference (step 2, already run) says each output is static and small."""
        if node.domain not in ("", "ai.onnx"):
            return
        ins = [self.value(g, x) if x else None for x in in_names]
        if any(v is None for x, v in zip(in_names, ins) if x):
            return
        for o in outs:
            shape = self.static(o)
            if shape is None or int(np.prod(shape, dtype=object)) > MAX_ELEMENTS:
                return
            ti = self.tensors.get(o)
            if ti is None or ti.elem_type not in _SHAPE_TYPES:
                return  # float data (rotary caches, quantized weights) never sets a shape here
        try:
            from onnx.reference import ReferenceEvaluator

            feeds = {x: v for x, v in zip(in_names, ins) if x}
            graph = onnx.helper.make_graph(
                [node], "value",
                [onnx.helper.make_tensor_value_info(x, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                 for x, v in feeds.items()],
                [onnx.helper.make_tensor_value_info(o, 0, None) for o in outs])
            model = onnx.helper.make_model(graph, opset_imports=self.opset_imports, ir_version=self.ir_version)
            results = ReferenceEvaluator(model).run(None, feeds)
        except Exception:  # the reference op refused: the node keeps its inferred shape, no value
            return
        for o, r in zip(outs, results):
            arr = np.asarray(r)
            if arr.dtype != object and arr.size <= MAX_ELEMENTS and self.static(o) == arr.shape:
                self.values[o] = arr
                self.computed += 1

    def _type_bytes_of(self, name: str) -> bytes | None:
        """The tensor's TypeProto, serialized (kept until the tensor is better known)."""
        tb = self._type_bytes.get(name)
        if tb is not None:
            return tb
        ti = self.tensors.get(name)
        if ti is None or not ti.elem_type:
            return None
        tp = onnx.TypeProto()
        tt = tp.tensor_type
        tt.elem_type = ti.elem_type
        if ti.shape is not None:
            sh = tt.shape
            sh.SetInParent()
            for d in ti.shape:
                dim = sh.dim.add()
                if d.__class__ is int:
                    dim.dim_value = d
                elif d.__class__ is str:
                    dim.dim_param = d
        tb = self._type_bytes[name] = tp.SerializeToString()
        return tb

    def _schema(self, domain: str, op_type: str) -> onnx.defs.OpSchema | None:
        key = (domain, op_type)
        if key not in self._schemas:
            try:
                s = onnx.defs.get_schema(op_type, self.opsets.get(domain, 1), domain)
                self._schemas[key] = s if s.has_type_and_shape_inference_function else None
            except Exception:
                self._schemas[key] = None
        return self._schemas[key]

    def _static(self, g: GraphIR, node: onnx.NodeProto | None, op_type: str, in_names, out_names,
                idx: int | None = None, fresh: bool = False) -> bool:
        """Step 2's fast path: :mod:`onnxperf.shapes.static` where every present input has an element
        type and a static shape; True when it shaped every output. ``node`` may be None (then read
        from ``g`` at ``idx`` only if it has attributes); ``fresh``: no output of it is known yet."""
        rule = self._static_rules.get(op_type)
        if rule is None:
            return False
        tensors = self.tensors
        shapes, types = [], []
        for x in in_names:
            if not x:
                shapes.append(None)
                types.append(0)
                continue
            ti = tensors.get(x)
            if ti is None or not ti.elem_type:
                return False
            shape = ti.shape
            if shape is None or not ti.is_static:
                return False
            shapes.append(shape)
            types.append(ti.elem_type)
        # a rule that reads no input value is a function of the op, the input shapes and types and
        # the attributes: repeated blocks ask it once, and their outputs share the shape tuples
        has_attrs = idx in g.with_attrs if node is None else len(node.attribute) > 0
        if has_attrs and node is None:
            node = g.nodes[idx]
        key = (op_type, tuple(shapes), tuple(types), _attr_key(node) if has_attrs else (), len(out_names))
        hit = self._static_memo.get(key)
        if hit is None:
            # (a memoized answer was for these very shapes: they passed this check then)
            if any(shape and min(shape) < 0 for shape in shapes):
                return False
            read = []

            def value(i: int) -> np.ndarray | None:
                read.append(i)
                return self.value(g, in_names[i]) if in_names[i] else None

            attrs = shape_rules.attributes(node) if has_attrs else {}
            res = shape_static.apply(rule, op_type, self._opset, tuple(shapes), types, attrs.get, value,
                                     len(out_names))
            fast = None
            if res is not None and len(res) == len(out_names) and all(
                    elem and shape is not None and all(d.__class__ is int for d in shape) for elem, shape in res):
                # every output typed and static: stored as they are (what :meth:`_better` does with a
                # new tensor), without the checks per tensor
                fast = [(int(elem), tuple(shape)) for elem, shape in res]
            hit = (res, fast)
            if not read:
                self._static_memo[key] = hit
        res, fast = hit
        if res is None or len(res) != len(out_names):
            return False
        better = self._better
        if fast is not None:
            of = self.TensorInfo.of
            for name, (elem, shape) in zip(out_names, fast):
                if name:
                    if fresh or tensors.get(name) is None:
                        tensors[name] = of(name, elem, shape, True)
                        self.gained += 1
                    else:
                        better(name, elem, shape)
            return True
        for name, (elem, shape) in zip(out_names, res):
            if name:
                better(name, elem, shape)
        return True

    def _onnx_node(self, g: GraphIR, node: onnx.NodeProto, domain: str, op_type: str, in_names) -> None:
        """Step 2: ONNX's inference of this one node, with known input values as data."""
        schema = self._schema(domain, op_type)
        if schema is None:
            return
        types: dict[str, bytes] = {}
        data: dict[str, bytes] = {}
        for x in in_names:
            if not x or x in types:
                continue
            tb = self._type_bytes_of(x)
            if tb is None:
                return
            types[x] = tb
            db = self._data_bytes.get(x)
            if db is None:
                v = self.value(g, x)
                if v is not None and v.dtype != object:
                    try:
                        db = self._data_bytes[x] = onnx.numpy_helper.from_array(v, x).SerializeToString()
                    except Exception:
                        db = None
            if db is not None:
                data[x] = db
        # the same op on the same input types and values gives the same output types (repeated
        # blocks): ONNX is asked once; its answer is kept by output position
        key = (domain, op_type, _attr_key(node),
               tuple((types.get(x), self._value_sig(g, x)) if x else None for x in in_names))
        by_pos = self._node_memo.get(key, _MISSING)
        if by_pos is _MISSING:
            try:
                # onnx.shape_inference.infer_node_outputs without its per-call re-serialization of
                # every input type and value (the forward pass keeps them serialized per tensor)
                result = schema._infer_node_outputs(node.SerializeToString(), types, data, {}, self._opset_dict,
                                                    self.ir_version)
            except Exception:  # ONNX refused the node (a type mismatch, a bad attribute): step 3 may tell
                result = {}
            by_pos = self._node_memo[key] = [result.get(o) if o else None for o in node.output]
        parsed_cache = self._parsed
        for name, tb in zip(node.output, by_pos):
            if not name or tb is None:
                continue
            parsed = parsed_cache.get(tb, False)
            if parsed is False:
                parsed = parsed_cache[tb] = _type_of(onnx.TypeProto.FromString(tb))
            if parsed is not None:
                self._better(name, parsed[0], parsed[1])

    def _own(self, g: GraphIR, node: onnx.NodeProto, in_names, out_names, rule=None) -> bool:
        """Step 3: :mod:`onnxperf.shapes.rules` (or ``rule``); True when it gained anything."""
        rule = rule or own.rule_for(node.domain, node.op_type)
        if rule is None:
            return False
        shapes, types, values = [], [], []
        for x in in_names:
            ti = self.tensors.get(x) if x else None
            shapes.append(ti.shape if ti is not None else None)
            types.append(ti.elem_type if ti is not None else 0)
            values.append(self.value(g, x) if x else None)
        ctx = shape_rules.ShapeCtx(node, tuple(shapes), tuple(types), tuple(values),
                                   shape_rules.attributes(node))
        try:
            outs = rule(ctx)
        except Exception:  # a shape function that cannot tell from these inputs
            return False
        gained = False
        for name, out in zip(out_names, outs or ()):
            if name and out is not None:
                gained = self._better(name, out[0], out[1]) or gained
        return gained


def forward(loaded: LoadedModel, tensors: dict, free: set[str], bound: Mapping[str, int],
            values: dict[str, np.ndarray] | None = None, bounded: dict[str, frozenset[str]] | None = None,
            fast_static: bool = True) -> Forward:
    """Run the forward pass over the main graph; the returned state says what it gained
    (``gained``), the values it knows (``values``) and the upper-bound tensors (``bounded``).
    ``fast_static=False`` asks ONNX for every node the fast path would shape (tests compare)."""
    fw = Forward(loaded, tensors, free, bound, dict(values or {}), fast_static)
    if bounded:
        fw.bounded.update(bounded)
    fw.resolve_derived()
    fw.run(loaded.graph)
    return fw


__all__ = ["MAX_DIM", "UPPER_BOUNDS", "Forward", "eval_dim", "forward"]
