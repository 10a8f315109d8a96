"""Shapes of every tensor, with symbolic dims bound by the user.

Order of trust:

0. when every graph-input dim is bound: the forward pass alone (:func:`_static_first`), each node
   shaped by a fast shape function (:mod:`onnxperf.shapes.static`, which gives what ONNX's inference
   of that node gives) or by its computed value; at the first node it cannot shape, it gives way to
   the steps below and its result is dropped;
1. ``onnx.shape_inference.infer_shapes(..., data_prop=True)`` on the loaded model, prepared in
   place (weights never read or copied) with graph inputs that carry the user's bindings
   (``--dim``, ``--input-shape``);
2. the forward pass (:mod:`onnxperf.shapes.forward`): one walk in topological order that gives
   every node ONNX left unshaped its computed value (:mod:`onnxperf.shapes.values`), a fast shape
   function or ONNX's inference of that node with the known values of its inputs, or the engine's
   own shape function (:mod:`onnxperf.shapes.rules`), so a gap never spreads downstream; derived dim
   names are evaluated and data-dependent sizes get upper bounds;
3. only where gaps remain, onnxruntime's symbolic shape inference on a weight-free skeleton (it
   crashes on some graphs: the crash is caught, recorded as a note, and analysis goes on), then
   the forward pass again. A shape nothing resolves stays unknown and the nodes that need it are
   reported ``unknown_shape``. Nothing is silently set to 1 or 0.

A dim is an ``int`` (known), a ``str`` (a symbol, e.g. ``batch`` or an expression that
onnxruntime produced such as ``2*seq``) or ``None`` (unknown).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field

import numpy as np
import onnx

from onnxperf.base.errors import DimBindingError
from onnxperf.base.suggest import did_you_mean
from onnxperf.shapes.loops import LoopTrips
from onnxperf.shapes.sequences import SequenceInfo
from onnxperf.shapes.values import EVALUATORS, evaluate
from onnxperf.graph.loader import GraphIR, LoadedModel
from onnxperf.shapes.forward import Forward, Unshaped, forward
from onnxperf.shapes.tensor import Dim, TensorInfo, _knownness, info_of

@dataclass
class ShapeResult:
    tensors: dict[str, TensorInfo]
    #: the user's bindings, as applied
    bound: dict[str, int]
    input_shapes: dict[str, tuple[int, ...]]
    #: symbolic dims of the graph inputs that the user left unbound, in first-seen order
    free_dims: list[str]
    notes: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    #: tensors whose static shape is an upper bound, each with the op types that caused it: a
    #: data-dependent size (NonZero, NonMaxSuppression, TopK by a computed k, ...), an If whose
    #: branches differ, a Loop whose trip count is an upper bound (see :mod:`onnxperf.shapes.forward`)
    bounded: dict[str, frozenset[str]] = field(default_factory=dict)
    #: small values computed from the bound shapes (shape arithmetic, trip counts, pads ...)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    #: the trip count of every Loop, by node key (:attr:`onnxperf.cost.walker.NodeCost.key`)
    trips: dict[str, LoopTrips] = field(default_factory=dict)
    #: keys of the nodes that put an upper bound in place of a size (NonZero ..., If, Loop)
    bound_sources: frozenset[str] = frozenset()
    #: sequence values (not tensors): element type and shape, length (:mod:`onnxperf.shapes.sequences`)
    sequences: dict[str, SequenceInfo] = field(default_factory=dict)
    #: the branch each If takes where its cond is known (``then_branch``/``else_branch``), by node key
    branches: dict[str, str] = field(default_factory=dict)


def input_dim_names(loaded: LoadedModel) -> list[str]:
    """Symbolic dim names of the graph inputs (initializers excluded), in first-seen order."""
    names: list[str] = []
    inits = loaded.graph.initializers
    for vi in loaded.proto.graph.input:
        if vi.name in inits:
            continue
        ti = info_of(vi)
        for d in (ti.shape or ()) if ti else ():
            if isinstance(d, str) and d not in names:
                names.append(d)
    return names


#: com.microsoft fused op -> (plain ai.onnx op with the same output shape, inputs it keeps)
_FUSED_AS = {"FusedConv": ("Conv", 3), "NhwcFusedConv": None, "FusedGemm": ("Gemm", 3)}
_FUSED_AS = {k: v for k, v in _FUSED_AS.items() if v is not None}


def _unfused(node: onnx.NodeProto) -> onnx.NodeProto:
    """The plain op a fused node computes before its elementwise activation (shape only)."""
    op, n_inputs = _FUSED_AS[node.op_type]
    keep = [a for a in node.attribute if not a.name.startswith("activation")]
    out = onnx.helper.make_node(op, list(node.input)[:n_inputs], list(node.output)[:1], name=node.name)
    out.attribute.extend(keep)
    return out


def skeleton(loaded: LoadedModel) -> onnx.ModelProto:
    """A copy of the model without weight bytes: every initializer that is external, or too
    large to matter for shape computations, becomes a typed graph input instead."""
    src = loaded.proto
    m = onnx.ModelProto()
    m.ir_version = src.ir_version
    m.opset_import.extend(src.opset_import)
    m.producer_name = src.producer_name
    m.producer_version = src.producer_version
    g = m.graph
    sg = src.graph
    g.name = sg.name
    # com.microsoft fused ops that neither ONNX nor onnxruntime's symbolic inference shape:
    # their output shape is that of the plain op they fuse (the activation is elementwise).
    # Constant nodes whose value is external or was not read become typed graph inputs:
    # inference needs only their type and shape, and onnxruntime's symbolic inference would
    # otherwise try to read their bytes.
    for node in sg.node:
        rec = loaded.graph.constants.get(node.output[0]) if node.op_type == "Constant" and node.output else None
        if rec is not None and rec.value is None and node.domain in ("", "ai.onnx"):
            g.input.append(onnx.helper.make_tensor_value_info(rec.name, rec.elem_type, list(rec.dims)))
        elif node.domain == "com.microsoft" and node.op_type in _FUSED_AS:
            g.node.append(_unfused(node))
        else:
            g.node.append(node)
    init_names = set()
    for t in sg.initializer:
        init_names.add(t.name)
        rec = loaded.graph.initializers[t.name]
        if rec.value is not None and not rec.external:
            g.initializer.append(t)
        elif rec.value is not None:  # small external tensor, read safely by the loader
            g.initializer.append(onnx.numpy_helper.from_array(rec.value, t.name))
        else:
            g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    for vi in sg.input:
        if vi.name not in init_names:
            g.input.append(vi)
    # declared inputs come first, in file order, for readability of the skeleton
    declared = [vi.name for vi in sg.input if vi.name not in init_names]
    order = {name: i for i, name in enumerate(declared)}
    ins = sorted(g.input, key=lambda vi: order.get(vi.name, len(order)))
    del g.input[:]
    g.input.extend(ins)
    g.output.extend(sg.output)
    g.value_info.extend(sg.value_info)
    return m


#: the largest value a dim can be bound to: ONNX stores dims as int64
MAX_BOUND_DIM = (1 << 63) - 1


def _bind(m: onnx.ModelProto, loaded: LoadedModel, dims: dict[str, int],
          input_shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """Apply bindings to the skeleton's graph inputs in place; returns the free dims left."""
    for name, value in dims.items():  # names the model lacks were left out before (binding_notes)
        if not isinstance(value, int) or value < 0:
            raise DimBindingError(f"--dim {name}={value}: a dim must be a non-negative integer")
        if value > MAX_BOUND_DIM:
            raise DimBindingError(f"--dim {name}={value}: larger than an ONNX dim can hold (int64, at most {MAX_BOUND_DIM})")
    real_inputs = {vi.name: vi for vi in m.graph.input if vi.name not in loaded.graph.initializers}
    for name, shape in input_shapes.items():
        vi = real_inputs.get(name)
        if vi is None:
            avail = ", ".join(real_inputs) or "none"
            raise DimBindingError(f"--input-shape {name}: the model has no input named {name!r} (inputs: {avail})")
        if any(isinstance(d, bool) or not isinstance(d, (int, str)) or (isinstance(d, int) and d < 0) for d in shape):
            raise DimBindingError(f"--input-shape {name}: dims must be non-negative integers or names")
        if any(isinstance(d, int) and d > MAX_BOUND_DIM for d in shape):
            raise DimBindingError(f"--input-shape {name}: a dim is larger than an ONNX dim can hold (int64)")
        tt = vi.type.tensor_type
        if tt.HasField("shape") and len(tt.shape.dim) != len(shape):
            raise DimBindingError(
                f"--input-shape {name}: rank {len(shape)} given, the model declares rank {len(tt.shape.dim)}")
        del tt.shape.dim[:]
        for d in shape:
            if isinstance(d, str):
                tt.shape.dim.add().dim_param = d
            else:
                tt.shape.dim.add().dim_value = d
    free: list[str] = []
    for vi in real_inputs.values():
        tt = vi.type.tensor_type
        for d in tt.shape.dim:
            if d.HasField("dim_param") and d.dim_param:
                if d.dim_param in dims:
                    d.dim_value = dims[d.dim_param]  # clears dim_param (oneof)
                elif d.dim_param not in free:
                    free.append(d.dim_param)
    return free


def _collect(g: onnx.GraphProto, out: dict[str, TensorInfo],
             cache: dict[bytes, tuple[int, tuple[Dim, ...] | None, bool] | None] | None = None,
             nested: bool = True) -> int:
    """Add what ``g`` (and its subgraphs) says of each tensor to ``out`` where it is better known
    than what ``out`` has; returns how many tensors gained. ``nested=False``: the caller knows
    ``g`` has no subgraphs (the loader found none), so its nodes are not scanned for them."""
    gained = 0
    cache = {} if cache is None else cache
    for seq in (g.input, g.output, g.value_info):
        for vi in seq:
            name = vi.name
            cur = out.get(name)
            if cur is not None and cur.elem_type and cur.is_static:
                continue  # nothing can be better known: skip reading the proto
            ti = info_of(vi, cache)
            if ti is None:
                continue
            if cur is None or _knownness(ti) > _knownness(cur):
                out[name] = ti
                gained += 1
    if not nested:
        return gained
    for n in g.node:
        if not n.attribute:
            continue
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                gained += _collect(a.g, out, cache)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    gained += _collect(sub, out, cache)
    return gained


def _gaps(g: GraphIR, tensors: dict[str, TensorInfo], free: set[str], seqs: dict | None = None) -> int:
    """Node outputs of the main graph whose shape is missing or unknown beyond free dims (a sequence
    value the forward pass followed is not a gap)."""
    n_gaps = 0
    for _, outs in g.io:
        for o in outs:
            if not o or (seqs and o in seqs):
                continue
            ti = tensors.get(o)
            if ti is None or ti.shape is None or (not ti.is_static and not ti.symbols() <= free):
                n_gaps += 1
    return n_gaps


#: the most elements ONNX's data propagation may build for one tensor (see _InPlace.hide_large_values)
RANGE_CAP = 1 << 20
#: the domain a hidden node gets for ONNX's whole-graph pass: no schema, so nothing is propagated
_HIDDEN_DOMAIN = "onnxperf.hidden"


class _InPlace:
    """The loaded proto made ready for ONNX's inference *in place*, restored on exit.

    Copying a model with inline weights would cost a copy of every weight; instead the few
    things inference needs are changed on the proto and put back afterwards (so a loaded model
    can be analyzed again with other bindings): small external shape constants inlined from the
    values the loader read safely, fused com.microsoft ops replaced by the plain op they fuse,
    and large amplifiers hidden from ONNX's data propagation (:meth:`hide_large_values`). Graph inputs
    are saved here and bound by :func:`_bind`."""

    def __init__(self, loaded: LoadedModel):
        self.loaded = loaded
        self.proto = loaded.proto
        self._inputs: list[onnx.ValueInfoProto] = []
        self._inits: dict[int, onnx.TensorProto] = {}
        self._nodes: dict[int, onnx.NodeProto] = {}
        self._hidden_opset = False

    def __enter__(self) -> _InPlace:
        loaded, g = self.loaded, self.proto.graph
        self._inputs = [_copy(vi) for vi in g.input]
        try:
            if any(rec.external and rec.value is not None for rec in loaded.graph.initializers.values()):
                for i, t in enumerate(g.initializer):
                    if t.data_location == onnx.TensorProto.EXTERNAL:
                        rec = loaded.graph.initializers.get(t.name)
                        if rec is not None and rec.value is not None:
                            self._inits[i] = _copy(t)
                            t.CopyFrom(onnx.numpy_helper.from_array(rec.value, t.name))
            for i, (op_type, domain, _) in enumerate(loaded.graph.heads):
                if domain == "com.microsoft" and op_type in _FUSED_AS:
                    node = g.node[i]
                    self._nodes[i] = _copy(node)
                    node.CopyFrom(_unfused(node))
        except BaseException:
            self._restore()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        g = self.proto.graph
        del g.input[:]
        g.input.extend(self._inputs)
        for i, t in self._inits.items():
            g.initializer[i].CopyFrom(t)
        for i, node in self._nodes.items():
            g.node[i].CopyFrom(node)
        if self._hidden_opset:
            kept = [o for o in self.proto.opset_import if o.domain != _HIDDEN_DOMAIN]
            del self.proto.opset_import[:]
            self.proto.opset_import.extend(kept)
            self._hidden_opset = False

    def hide_large_values(self) -> list[str]:
        """Keep ONNX's data propagation from materializing a huge tensor. It builds the values of every
        tensor it can compute, as a list of dims (~150 bytes an element): a Range, ConstantOfShape,
        Expand, Tile or Pad that *amplifies* a small size into a large output, and everything computed
        from it (``ConstantOfShape([10^10]) -> Add``: 49 s and 3.4 GiB before ``std::bad_alloc``;
        ``Range(0, 10**15, 1)``: 20 GB). The sizes those ops would build are worked out first from what
        ONNX's propagation also knows (constants, the shapes of the graph inputs as bound, and the
        shape arithmetic on them, :mod:`onnxperf.shapes.values`); an amplifier whose output holds more
        than :data:`RANGE_CAP` elements, or whose size is not known while a graph input dim exceeds the
        cap, becomes, for ONNX's whole-graph pass only, an op it does not know; the forward pass shapes
        it afterwards without materializing anything. Returns one note per hidden node."""
        g, graph = self.proto.graph, self.loaded.graph
        shapes: dict[str, tuple[int, ...]] = {}
        for vi in g.input:
            dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else ()
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape") and \
                    all(d.HasField("dim_value") for d in dims):
                shapes[vi.name] = tuple(int(d.dim_value) for d in dims)
        big_input = any(d > RANGE_CAP for shp in shapes.values() for d in shp) or any(
            d.HasField("dim_value") and d.dim_value > RANGE_CAP for vi in g.input for d in vi.type.tensor_type.shape.dim)
        values: dict[str, np.ndarray] = {}
        for name, rec in {**graph.constants, **graph.initializers}.items():
            shapes.setdefault(name, tuple(rec.dims))
            if rec.value is not None:
                values[name] = rec.value
        opset = self.loaded.opsets.get("", 1)
        notes = []
        with np.errstate(all="raise"):
            for i in graph.order:
                op_type, domain, name = graph.heads[i]
                if domain != "" or i in self._nodes:
                    continue
                ins, outs = graph.io[i]
                if op_type in _AMPLIFIERS:
                    n = _amplified(op_type, ins, values, shapes, graph.nodes[i])
                    if (n is not None and n > RANGE_CAP) or (n is None and big_input):
                        self._hide(i)
                        notes.append(f"{op_type} node {i} {name!r}: its output may hold more than {RANGE_CAP:,} "
                                     "elements; shaped without computing its values")
                        continue
                if not outs or not outs[0]:
                    continue
                if op_type in ("Shape", "Size"):
                    shp = shapes.get(ins[0]) if ins else None
                    out = None if shp is None else evaluate(graph.nodes[i], op_type, [], opset, shp)
                elif op_type in EVALUATORS and len(outs) == 1 and ins and all(not x or x in values for x in ins):
                    out = evaluate(graph.nodes[i], op_type, [values[x] if x else None for x in ins], opset)
                else:
                    continue
                if out is not None:
                    values[outs[0]] = out
                    shapes[outs[0]] = tuple(out.shape)
        return notes

    def _hide(self, i: int) -> None:
        g = self.proto.graph
        self._nodes[i] = _copy(g.node[i])
        g.node[i].domain = _HIDDEN_DOMAIN
        if not self._hidden_opset:
            self.proto.opset_import.add(domain=_HIDDEN_DOMAIN, version=1)
            self._hidden_opset = True


#: ops whose output size is set by an input's value: a small size can make a huge output
_AMPLIFIERS = frozenset({"Range", "ConstantOfShape", "Expand", "Tile", "Pad"})


def _amplified(op: str, ins, values: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]],
               node: onnx.NodeProto) -> int | None:
    """Elements of an amplifier's output as far as the known values tell (at least that many for an
    Expand or a Tile whose input's size is not known), None when its size input is not known."""

    def val(k: int) -> np.ndarray | None:
        return values.get(ins[k]) if k < len(ins) and ins[k] else None

    def numel(shape) -> int:
        n = 1
        for d in shape:
            n *= max(int(d), 0)
        return n

    try:
        if op == "Range":
            vs = [val(k) for k in range(3)]
            if any(v is None or v.size != 1 for v in vs):
                return None
            start, limit, delta = (float(v.reshape(-1)[0]) for v in vs)
            return int(min(max(0.0, (limit - start) / delta), 2.0 ** 63)) if delta else 2 ** 63
        if op == "ConstantOfShape":
            v = val(0)
            return None if v is None else numel(v.reshape(-1))
        if op in ("Expand", "Tile"):
            v = val(1)
            if v is None:
                return None
            src = shapes.get(ins[0]) if ins and ins[0] else None
            if op == "Tile":
                return numel(v.reshape(-1)) * (numel(src) if src is not None else 1)
            dims = [int(d) for d in v.reshape(-1)]
            if src is None:
                return numel(dims)
            rank = max(len(src), len(dims))
            a = (1,) * (rank - len(src)) + tuple(src)
            b = (1,) * (rank - len(dims)) + tuple(dims)
            return numel(max(x, y) for x, y in zip(a, b))
        if op == "Pad":
            src = shapes.get(ins[0]) if ins and ins[0] else None
            pads = val(1) if len(ins) > 1 and ins[1] else None
            if pads is None:
                attr = next((a for a in node.attribute if a.name == "pads"), None)
                pads = None if attr is None else np.array(list(attr.ints))
            if src is None or pads is None or pads.size != 2 * len(src):
                return None
            p = [int(x) for x in pads.reshape(-1)]
            return numel(d + p[k] + p[k + len(src)] for k, d in enumerate(src))
    except (TypeError, ValueError, OverflowError):
        return 2 ** 63
    return None


def _copy(msg):
    out = type(msg)()
    out.CopyFrom(msg)
    return out


#: dim names taken for the batch whatever their position (compared in lower case)
BATCH_NAMES = ("batch", "batch_size", "n")
#: leading dims that are not a batch even when every input starts with them (lower case, substrings)
_NOT_BATCH = ("seq", "len", "time", "step", "token", "past", "total", "width", "height", "channel")


def batch_dim(loaded: LoadedModel, dims: dict[str, int],
              input_shapes: dict[str, tuple[int | str, ...]] | None = None) -> str | None:
    """The unbound dim that stands for the batch, or None: a symbolic input dim named ``batch``,
    ``batch_size`` or ``N`` (any case), else the leading dim that every graph input (initializers
    aside) shares by name, unless that name says it is a length (``seq``, ``past``, ``time`` ...).
    Inputs whose whole shape ``input_shapes`` replaces are read as replaced."""
    inits = loaded.graph.initializers
    shapes: list[tuple] = []
    for vi in loaded.proto.graph.input:
        if vi.name in inits:
            continue
        if input_shapes and vi.name in input_shapes:
            shapes.append(tuple(input_shapes[vi.name]))
            continue
        ti = info_of(vi)
        shapes.append(tuple(ti.shape) if ti is not None and ti.shape is not None else ())
    names = [d for s in shapes for d in s if isinstance(d, str) and d not in dims]
    for want in BATCH_NAMES:
        for d in names:
            if d.lower() == want:
                return d
    leading = {s[0] if s else None for s in shapes}
    if len(leading) == 1:
        (d,) = leading
        if isinstance(d, str) and d and d not in dims and not any(w in d.lower() for w in _NOT_BATCH):
            return d
    return None


def is_binding_note(note: str) -> bool:
    """Whether ``note`` is one :func:`binding_notes` wrote (the CLI repeats those on stderr)."""
    return note.startswith(("--dim ", "unbound batch dim "))


def _resolve_shapes(input_shapes: dict[str, tuple[int | str, ...]], dims: dict[str, int]
                    ) -> dict[str, tuple[int | str, ...]]:
    """Whole input shapes with their named dims (``batchx3x224x224``) bound where ``dims`` binds them."""
    return {k: tuple(dims.get(d, d) if isinstance(d, str) else d for d in v) for k, v in input_shapes.items()}


def binding_notes(loaded: LoadedModel, dims: dict[str, int], input_shapes: dict[str, tuple[int | str, ...]],
                  default_batch: bool = False) -> tuple[dict[str, int], list[str]]:
    """The bindings that apply to this model, and a note for each one that does not.

    A ``--dim`` whose name no input dim of this model has is left out, with a note naming the dims
    the model has (a loop over many models with ``--dim batch=1`` goes on through static exports).
    ``default_batch``: the batch dim (:func:`batch_dim`) left unbound is bound to 1, with a note
    saying so and how to change it."""
    known = input_dim_names(loaded)
    for shape in input_shapes.values():
        known += [d for d in shape if isinstance(d, str) and d not in known]
    applied: dict[str, int] = {}
    notes: list[str] = []
    for name, value in dims.items():
        if name in known:
            applied[name] = value
        else:
            avail = ", ".join(known) or "none"
            notes.append(f"--dim {name}={value} not applied: the model's inputs have no dim named {name!r}"
                         f"{did_you_mean(name, known)} (symbolic dims: {avail})")
    if default_batch:
        b = batch_dim(loaded, applied, input_shapes)
        if b is not None:
            applied[b] = 1
            notes.append(f"unbound batch dim {b!r} set to 1; pass --dim {b}=N for another batch")
    return applied, notes


def infer(loaded: LoadedModel, dims: dict[str, int] | None = None,
          input_shapes: dict[str, tuple[int | str, ...]] | None = None, default_batch: bool = False) -> ShapeResult:
    """Resolve every tensor's shape under the given bindings (see :func:`binding_notes` for the
    bindings a model lacks and ``default_batch``). A whole input shape may name dims
    (``("batch", 3, 224, 224)``): ``dims`` binds them, else they stay symbolic."""
    input_shapes = {k: tuple(v) for k, v in (input_shapes or {}).items()}
    dims, bind_notes = binding_notes(loaded, dict(dims or {}), input_shapes, default_batch)
    input_shapes = _resolve_shapes(input_shapes, dims)
    result = _infer(loaded, dims, input_shapes)
    result.notes[:0] = bind_notes
    return result


def _infer(loaded: LoadedModel, dims: dict[str, int], input_shapes: dict[str, tuple[int | str, ...]]) -> ShapeResult:
    notes: list[str] = []
    engines: list[str] = []
    tensors: dict[str, TensorInfo] = {}
    values: dict[str, np.ndarray] = {}
    bounded: dict[str, frozenset[str]] = {}
    bound = _bound_names(loaded, dims, input_shapes)
    with _InPlace(loaded) as work:
        free = _bind(work.proto, loaded, dims, input_shapes)
        free_set = set(free)
        notes.extend(work.hide_large_values())
        if not free and not notes:
            quick = _static_first(loaded, work.proto.graph, bound)
            if quick is not None:
                return ShapeResult(quick.tensors, dims, input_shapes, free, notes, ["onnxperf"],
                                   dict(quick.bounded), quick.values, quick.trips, frozenset(quick.bound_sources))
        inferred = None
        try:
            inferred = onnx.shape_inference.infer_shapes(work.proto, check_type=False, strict_mode=False,
                                                         data_prop=True)
            engines.append("onnx")
        except Exception as exc:  # the checker refuses some graphs; go on without it
            text = str(exc).strip()
            notes.append(f"onnx shape inference failed: {text.splitlines()[0][:200] if text else type(exc).__name__}")
        nested = bool(loaded.graph.subgraphs)
        _collect(inferred.graph if inferred is not None else work.proto.graph, tensors, nested=nested)
        del inferred
        for name, rec in loaded.graph.initializers.items():
            tensors[name] = TensorInfo.of(name, rec.elem_type, rec.dims, True)
        _add_constants(loaded.graph, tensors)
    trips: dict[str, LoopTrips] = {}
    sources: set[str] = set()
    seqs: dict[str, SequenceInfo] = {}
    branches: dict[str, str] = {}
    if _forward(loaded, tensors, free_set, bound, values, bounded, trips, sources, seqs, branches):
        engines.append("onnxperf")
    gaps = _gaps(loaded.graph, tensors, free_set, seqs)
    if gaps:
        # onnxruntime's symbolic inference reads initializer and Constant values: it gets the
        # weight-free skeleton, built only now that it is needed
        sk = skeleton(loaded)
        _bind(sk, loaded, dims, input_shapes)
        ort = _ort_symbolic(sk, notes)
        if ort is not None:
            engines.append("onnxruntime-symbolic")
            ort_tensors: dict[str, TensorInfo] = {}
            _collect(ort.graph, ort_tensors, nested=nested)
            for name, ti in ort_tensors.items():
                cur = tensors.get(name)
                if _knownness(ti) > _knownness(cur):
                    if cur is not None and cur.elem_type and not ti.elem_type:
                        ti = TensorInfo(name, cur.elem_type, ti.shape)
                    tensors[name] = ti
            _forward(loaded, tensors, free_set, bound, values, bounded, trips, sources, seqs, branches)
    return ShapeResult(tensors, dims, input_shapes, free, notes, engines, bounded, values, trips,
                       frozenset(sources), seqs, branches)


def _static_first(loaded: LoadedModel, g: onnx.GraphProto, bound: dict[str, int]):
    """The forward pass alone, before (and instead of) ONNX's whole-graph pass, for a graph
    without subgraphs whose inputs are all static once bound: every node shaped by the fast static
    shape functions (:mod:`onnxperf.shapes.static`) or by its computed value. Those give what ONNX's
    inference of each node gives (tests compare them), so the result is the whole-graph
    pipeline's, at a fraction of the cost on transformer graphs, where ONNX's pass stops early and
    the pass below would shape most nodes one by one anyway. Returns the forward state, or None
    at the first node that needs ONNX (an op without a fast function, a symbolic dim), and
    :func:`infer` goes the usual way."""
    tensors: dict[str, TensorInfo] = {}
    cache: dict = {}
    inits = loaded.graph.initializers
    for vi in g.input:
        if vi.name in inits:
            continue
        ti = info_of(vi, cache)
        if ti is None or not ti.elem_type or not ti.is_static:
            return None
        tensors[vi.name] = ti
    for name, rec in inits.items():
        tensors[name] = TensorInfo.of(name, rec.elem_type, rec.dims, True)
    _add_constants(loaded.graph, tensors)
    fw = Forward(loaded, tensors, set(), bound, {}, static_only=True)
    try:
        fw.run(loaded.graph)
    except Unshaped:
        return None
    if not _all_known(loaded.graph, tensors, set()):
        return None
    return fw


def _bound_names(loaded: LoadedModel, dims: dict[str, int], input_shapes: dict[str, tuple[int, ...]]
                 ) -> dict[str, int]:
    """Every dim name with a value: the ``--dim`` bindings, and the names an ``--input-shape``
    fixes (the declared ``dim_param`` at each position of that input)."""
    bound = dict(dims)
    if input_shapes:
        for vi in loaded.proto.graph.input:
            shape = input_shapes.get(vi.name)
            if shape is None:
                continue
            for d, v in zip(vi.type.tensor_type.shape.dim, shape):
                if d.HasField("dim_param") and d.dim_param and d.dim_param not in bound and isinstance(v, int):
                    bound[d.dim_param] = v
    return bound


def _all_known(g: GraphIR, tensors: dict[str, TensorInfo], free: set[str]) -> bool:
    """Every node output of ``g`` has an element type and a shape whose dims are numbers or free
    (unbound) symbols."""
    for _, outs in g.io:
        for o in outs:
            if not o:
                continue
            ti = tensors.get(o)
            if ti is None or not ti.elem_type or ti.shape is None:
                return False
            if not ti.is_static and (None in ti.shape or not ti.symbols() <= free):
                return False
    return True


def _forward(loaded: LoadedModel, tensors: dict[str, TensorInfo], free: set[str], bound: dict[str, int],
             values: dict[str, np.ndarray], bounded: dict[str, frozenset[str]], trips: dict[str, LoopTrips],
             sources: set[str], seqs: dict[str, SequenceInfo], branches: dict[str, str]) -> bool:
    """The forward pass (:mod:`onnxperf.shapes.forward`): True when it gained anything; ``values``,
    ``bounded``, ``trips`` and ``sources`` (the bound sources) gain what it computed."""
    if not loaded.graph.subgraphs and _all_known(loaded.graph, tensors, free):
        return False  # nothing to fill (most CNN exports): the walk would only confirm it
    fw = forward(loaded, tensors, free, bound, values, bounded)
    values.update(fw.values)
    bounded.update(fw.bounded)
    trips.update(fw.trips)
    sources |= fw.bound_sources
    seqs.update(fw.seqs)
    branches.update(fw.branches)
    return fw.gained > 0


def _add_constants(graph, tensors: dict[str, TensorInfo]) -> None:
    for name, rec in graph.constants.items():
        tensors.setdefault(name, TensorInfo.of(name, rec.elem_type, rec.dims, True))
    for sub in graph.subgraphs.values():
        for name, rec in sub.initializers.items():
            tensors[name] = TensorInfo.of(name, rec.elem_type, rec.dims, True)
        _add_constants(sub, tensors)


def _ort_symbolic(sk: onnx.ModelProto, notes: list[str]) -> onnx.ModelProto | None:
    """onnxruntime's symbolic shape inference, step by step.

    ``SymbolicShapeInference.infer_shapes`` would save ``sym_shape_infer_temp.onnx`` into the
    current directory and raise when its inference is incomplete; its steps are run here instead,
    so nothing is written and a partial result is kept."""
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    except Exception:  # onnxruntime missing or broken: ONNX's result stands
        notes.append("onnxruntime symbolic shape inference unavailable")
        return None
    opset = next((o.version for o in sk.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 7:
        notes.append("onnxruntime symbolic shape inference needs opset 7 or newer")
        return None
    hazard = _ort_hazard(sk)
    if hazard:
        notes.append(f"onnxruntime symbolic shape inference skipped: {hazard}")
        return None
    sink = io.StringIO()
    import logging

    log = logging.getLogger("onnxruntime.tools.symbolic_shape_infer")
    old_level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        # numpy integer overflow inside its arithmetic (dims near 2^63) would wrap silently into
        # wrong shapes: make it raise, and the whole result is dropped with a note
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), np.errstate(over="raise"):
            sym = _guarded(SymbolicShapeInference)(2**31 - 1, True, False, 0)
            sym._preprocess(sk)
            complete = False
            passes = 0
            # onnxruntime reruns until no guessed dim changes; on some malformed graphs (an
            # undefined input type) it never settles, so the passes are bounded
            while sym.run_ and passes < MAX_ORT_PASSES:
                complete = sym._infer_impl()
                passes += 1
            if sym.run_:
                complete = False
                notes.append(f"onnxruntime symbolic shape inference did not settle in {MAX_ORT_PASSES} passes")
            sym._update_output_from_vi()
        if not complete:
            notes.append("onnxruntime symbolic shape inference was incomplete; its partial result is used")
        return sym.out_mp_
    except (Exception, RecursionError) as exc:  # third-party code on untrusted input: a note, never a crash
        # its exception is about its own code ("'NoneType' object is not iterable"), not the model:
        # the note says what it means for the result; --debug logs the exception
        logging.getLogger(__name__).debug("onnxruntime symbolic shape inference raised %s: %s",
                                          type(exc).__name__, exc)
        notes.append("onnxruntime's symbolic shape inference could not run on this graph: its result is not used "
                     "(ONNX's inference and onnxperf's own rules shape the model)")
        return None
    finally:
        log.setLevel(old_level)


#: onnxruntime's symbolic inference reruns while it keeps guessing dims: at most this many passes
MAX_ORT_PASSES = 8
#: onnxruntime's symbolic inference makes one sympy symbol per output dim when a shape tensor's
#: values are unknown, so a declared length becomes a rank. No runtime handles ranks near this.
MAX_RANK = 1024
#: ... and materializes the int64 output of a ConstantOfShape whose shape it knows: never more
#: than this many elements (larger outputs get their shape, not their values).
MAX_MATERIALIZED_ELEMENTS = 1 << 16

#: (op type, input position of a tensor whose length is the output rank)
_RANK_FROM_LENGTH = {"Reshape": 1, "ConstantOfShape": 0, "Expand": 1}


class _Refused(Exception):
    """onnxruntime's inference would build something unbounded from a declared size."""


def _ort_hazard(sk: onnx.ModelProto) -> str | None:
    """Why onnxruntime's symbolic inference must not run on this skeleton, if it must not:
    a shape tensor whose declared length (a rank to be) is beyond :data:`MAX_RANK`, or a
    ``PythonOp`` declaring such output ranks. Checked on the declared shapes, before any run."""
    lengths: dict[str, int] = {}
    for vi in list(sk.graph.input) + list(sk.graph.value_info):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) == 1 and dims[0].HasField("dim_value"):
            lengths[vi.name] = int(dims[0].dim_value)
    for t in sk.graph.initializer:
        if len(t.dims) == 1:
            lengths[t.name] = int(t.dims[0])

    def walk(g: onnx.GraphProto) -> str | None:
        for n in g.node:
            pos = _RANK_FROM_LENGTH.get(n.op_type)
            if pos is not None and len(n.input) > pos and lengths.get(n.input[pos], 0) > MAX_RANK:
                return (f"{n.op_type} node {n.name!r} takes its output rank from tensor {n.input[pos]!r} "
                        f"of declared length {lengths[n.input[pos]]:,} (over {MAX_RANK})")
            for a in n.attribute:
                if a.name == "output_tensor_ranks" and any(r > MAX_RANK or r < 0 for r in a.ints):
                    return f"{n.op_type} node {n.name!r} declares output ranks beyond {MAX_RANK}"
                if a.type == onnx.AttributeProto.GRAPH:
                    why = walk(a.g)
                    if why:
                        return why
                for sub in a.graphs:
                    why = walk(sub)
                    if why:
                        return why
        return None

    return walk(sk.graph)


def _guarded(base: type) -> type:
    """A subclass of onnxruntime's ``SymbolicShapeInference`` that refuses to build unbounded
    things from declared sizes: ranks beyond :data:`MAX_RANK` raise :class:`_Refused` (the
    caller records a note), and large ConstantOfShape outputs keep their shape, not values."""

    class Guarded(base):  # type: ignore[misc, valid-type]
        def _new_symbolic_shape(self, rank, node, out_idx=0):
            if not isinstance(rank, int) or rank < 0 or rank > MAX_RANK:
                raise _Refused(f"{node.op_type} node {node.name!r}: output rank {rank} is beyond {MAX_RANK}")
            return super()._new_symbolic_shape(rank, node, out_idx)

        def _infer_ConstantOfShape(self, node):  # noqa: N802
            values = self._get_int_or_float_values(node)[0]
            if values is not None:
                values = values if isinstance(values, list) else [values]
                try:
                    numel = 1
                    for v in values:
                        numel *= int(v)
                except (TypeError, ValueError):
                    numel = None  # symbolic: onnxruntime computes no values
                if numel is not None and (numel > MAX_MATERIALIZED_ELEMENTS or numel < 0):
                    vi = self.known_vi_[node.output[0]]
                    vi.CopyFrom(onnx.helper.make_tensor_value_info(
                        node.output[0], vi.type.tensor_type.elem_type, [max(int(v), 0) for v in values]))
                    return
            return super()._infer_ConstantOfShape(node)

    return Guarded
