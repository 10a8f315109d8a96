"""Memory: model size, activation liveness over the execution order, the largest batch that fits.

Liveness model (main graph, in the stable topological order of the analysis):

* an activation tensor (a graph input or a node output; never an initializer or a Constant's
  value, which are weights) occupies its bytes from the step of its producer (graph inputs: step 0)
  through the step of its last consumer; graph outputs live to the end;
* at step *i* the live set contains node *i*'s inputs and outputs together (a kernel reads its
  inputs while it writes its outputs);
* the outputs of view ops that runtimes alias (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
  Dropout at inference: zero by design, or a rule that moves no byte) share their input's buffer:
  they extend its lifetime and add no bytes;
* "preallocated" is the sum of every distinct activation buffer: what a runtime that gives each
  tensor its own buffer would hold;
* while an If, Loop or Scan runs, its body's own tensors are live too: at that node's step the peak of
  the body's liveness (the same model, over the body's order; nested bodies inside it in turn) is
  added: the branch an If takes where its cond is known, else the larger branch; one run of a loop
  body (a run's tensors are freed or reused by the next). Body tensors count in "preallocated" once.

Unknown tensor sizes are never taken as zero: they are counted, and the figures marked partial.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Mapping
from typing import Any
from array import array
from itertools import accumulate, islice

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError
from onnxperf.base.formula import NotPolynomialError, fit, fit_many, largest_int
from onnxperf.cost.analysis import Costs, parse_shape
from onnxperf.cost.request import Request
from onnxperf.graph.loader import LoadedModel, load
from onnxperf.predict.precision import priced
from onnxperf.shapes.infer import input_dim_names
from onnxperf.predict.bodies import BodyIndex, is_control
from onnxperf.cost.walker import COUNTED, ZERO

#: zero-by-design ops whose (first) output is a view of their first input
ALIAS_OPS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"})


@dataclass(frozen=True)
class MemoryResult:
    weight_bytes: int
    weight_bytes_fp16: int
    weight_bytes_int8: int
    preallocated_bytes: int
    peak_bytes: int
    #: index into the execution order, and the node's key/name, where the peak happens
    peak_step: int | None
    peak_node_key: str | None
    peak_node_name: str | None
    #: live activation bytes at each step of the execution order
    timeline: tuple[int, ...]
    #: activation tensors whose size is unknown (unbound or unresolved dims)
    unknown_tensors: int
    #: some sizes are upper bounds (the largest a data-dependent op, an If or a Loop can produce)
    upper: bool = False

    @property
    def total_bytes(self) -> int:
        """Weights + dynamic activation peak: what must fit in device memory."""
        return self.weight_bytes + self.peak_bytes

    @property
    def complete(self) -> bool:
        return self.unknown_tensors == 0

    @property
    def side(self) -> str:
        """``lower`` with tensors of unknown size, ``upper`` with sizes that are upper bounds, ``unknown``
        with both, ``""`` when every size is exact."""
        lower = self.unknown_tensors > 0
        return "unknown" if lower and self.upper else "lower" if lower else "upper" if self.upper else ""

    def to_dict(self) -> dict[str, Any]:
        """The ``memory`` section of the JSON contract."""
        return {
            "weight_bytes": self.weight_bytes, "weight_bytes_if_fp16": self.weight_bytes_fp16,
            "weight_bytes_if_int8": self.weight_bytes_int8, "activation_preallocated_bytes": self.preallocated_bytes,
            "activation_peak_bytes": self.peak_bytes, "peak_step": self.peak_step, "peak_node_key": self.peak_node_key,
            "peak_node_name": self.peak_node_name, "total_bytes": self.total_bytes,
            "unknown_tensors": self.unknown_tensors, "complete": self.complete, "bound": self.side or "exact",
            "timeline_bytes": list(self.timeline),
        }


def _weights_as(a: Costs, bits: int) -> int:
    """Parameter bytes if the floating-point weights were stored with ``bits`` bits."""
    total = 0
    for name, count in a.totals.params_by_dtype:
        if name in ("float32", "float64", "float16", "bfloat16"):
            total += (count * bits + 7) // 8
        else:
            total += dict(a.totals.param_bytes_by_dtype)[name]
    return total


def liveness(a: Costs, shared: Mapping[str, tuple[str, bool]] | None = None) -> MemoryResult:
    """Activation liveness over the analysis's execution order (see module docstring). ``shared``: node
    outputs that the runtime keeps in the buffer of one of that node's inputs (output -> (input, grows)),
    the buffer grown to the output's size where ``grows`` (a KV cache kept in place:
    :func:`onnxperf.predict.serving.shared_buffers`)."""
    nodes = a.main_nodes
    tensors = a.tensors or {}
    lm = a.loaded
    inits = lm.graph.initializers if lm is not None else {}
    consts = lm.graph.constants if lm is not None else {}
    # buffers are numbered in the order they appear; each tensor with one maps to its number
    # (an alias to its root's); a tensor without one (a weight, a tensor nothing produced) is absent
    buffer_of: dict[str, int] = {}
    size: list[int | None] = []
    # steps as machine integers: no int object per buffer (a million-node graph: ~60 MB)
    first = array("q")
    last = array("q")
    bits = dtypes.bits
    get_ti = tensors.get
    # id(shape) -> (shape, element type, bytes): the tensors of repeated blocks share a shape tuple
    sized: dict[int, tuple[Any, int, int | None]] = {}

    seqs = a.sequences or {}

    def tensor_bytes(name: str) -> int | None:
        ti = get_ti(name)
        if ti is None and name in seqs:
            return sequence_bytes(seqs[name])
        if ti is None or not ti.is_static:
            return None
        if getattr(ti, "bits", None) is not None or getattr(ti, "scaled", False):
            return ti.nbytes  # a block-scaled precision what-if (fp4: 4.5 bits), one device's share of a tensor
        shape, et = ti.shape, ti.elem_type
        hit = sized.get(id(shape))
        if hit is None or hit[0] is not shape or hit[1] != et:
            hit = sized[id(shape)] = (shape, et, None if bits(et) is None else dtypes.nbytes(et, ti.numel))
        return hit[2]

    def new_buffer(name: str, step: int) -> None:
        buffer_of[name] = len(size)
        size.append(tensor_bytes(name))
        first.append(step)
        last.append(step)

    n_steps = len(nodes)
    for ref in a.model.inputs:
        if ref.name not in buffer_of:  # a name listed twice is one buffer
            new_buffer(ref.name, 0)
    get = buffer_of.get
    # steps only grow, so a buffer's last use is the latest step that reads it
    for step, n in enumerate(nodes):
        for ref in n.inputs:
            if ref is not None:
                b = get(ref.name)
                if b is not None:  # else a weight, or a tensor nothing produced (it has no buffer)
                    last[b] = step
        op_type = n.op_type
        # a view: zero by design, or (Dropout at inference from opset 12) a rule that moves no byte
        alias = op_type in ALIAS_OPS and (n.status == ZERO or (
            n.status == COUNTED and n.bytes_read == 0 and n.flops == 0 and n.int_ops == 0))
        if alias:
            x = n.inputs[0] if n.inputs else None
            alias = x is not None and x.name not in inits and x.name not in consts
        if op_type == "Constant" and not alias:
            continue
        kept = ()
        if shared:
            kept = [ref.name for ref in n.outputs
                    if ref is not None and ref.name in shared and get(shared[ref.name][0]) is not None]
            for name in kept:
                src, grows = shared[name]
                b = buffer_of[name] = buffer_of[src]
                grown = tensor_bytes(name) if grows else None
                if size[b] is not None and grown is not None and grown > size[b]:
                    size[b] = grown
        # (a node's outputs are never weights: the loader refuses a tensor defined twice, and the
        # outputs of Constant nodes, the graph's other weights, were skipped just above)
        for j, ref in enumerate(n.outputs):
            if ref is None:
                continue
            name = ref.name
            if name in kept:
                continue
            if alias and j == 0:
                b = get(n.inputs[0].name)  # type: ignore[union-attr]
                if b is not None:
                    buffer_of[name] = b
                else:
                    buffer_of.pop(name, None)
                continue
            if op_type == "Constant":
                continue
            new_buffer(name, step)
    for ref in a.model.outputs:
        b = get(ref.name)
        if b is not None:
            last[b] = n_steps - 1 if n_steps else 0
    buffer_of.clear()  # before the sweep: the peak of a large graph's analysis is about here

    # sweep: +size at first step, -size after last step
    delta = [0] * (n_steps + 1)
    unknown = 0
    prealloc = 0
    for s, start, end in zip(size, first, last):
        if s is None:
            unknown += 1
            continue
        prealloc += s
        delta[start] += s
        delta[end + 1] -= s
    del first, last, size
    # the working set of control-flow bodies at their node's step
    bodies = _Bodies(a) if a.model.nodes_in_subgraphs else None
    if bodies is not None:
        for step, n in enumerate(nodes):
            if is_control(n):
                delta[step] += bodies.peak(n)
                delta[step + 1] -= bodies.peak(n)
        unknown += bodies.unknown
        prealloc += bodies.allocated
    # live bytes repeat from block to block: one int object per distinct value
    distinct: dict[int, int] = {}
    timeline = tuple([distinct.setdefault(v, v) for v in islice(accumulate(delta), n_steps)])
    del delta, distinct
    peak = max(timeline, default=0)
    peak_step = timeline.index(peak) if timeline else None
    pn = nodes[peak_step] if peak_step is not None else None
    return MemoryResult(
        weight_bytes=a.totals.param_bytes, weight_bytes_fp16=_weights_as(a, 16), weight_bytes_int8=_weights_as(a, 8),
        preallocated_bytes=prealloc, peak_bytes=peak, peak_step=peak_step,
        peak_node_key=pn.key if pn else None, peak_node_name=pn.name if pn else None,
        timeline=timeline, unknown_tensors=unknown, upper=a.totals.bound in ("upper", "unknown"),
    )




def sequence_bytes(seq) -> int | None:
    """The bytes of a sequence value: its length times its elements' bytes (0 when empty), None when
    either is not known."""
    if seq.length == 0:
        return 0
    shape = seq.elem_shape
    if seq.length is None or shape is None or not all(isinstance(d, int) for d in shape) \
            or dtypes.bits(seq.elem_type) is None:
        return None
    n = 1
    for d in shape:
        n *= d
    return seq.length * dtypes.nbytes(seq.elem_type, n)


class _Bodies:
    """The working set of every control-flow body of an analysis: the peak of each body's liveness, the
    body tensors of unknown size, and the bytes of every body tensor (each counted once)."""

    def __init__(self, a: Costs):
        self.index = BodyIndex(a)
        self.by_scope = self.index.by_scope
        self.tensors = a.tensors or {}
        self.sequences = a.sequences or {}
        self.unknown = 0
        self.allocated = 0
        self._sized: dict[str, int | None] = {}
        self._peaks: dict[str, int] = {}
        self._scope_peaks: dict[str, int] = {}
        for sc in self.by_scope:  # every body tensor counted once, whichever branch is taken
            for n in self.by_scope[sc]:
                for r in n.outputs:
                    if r is not None:
                        self._size(r.name)

    def _size(self, name: str) -> int | None:
        if name in self._sized:
            return self._sized[name]
        ti = self.tensors.get(name)
        if ti is None and name in self.sequences:
            b = sequence_bytes(self.sequences[name])
        else:
            b = None if ti is None or not ti.is_static or dtypes.bits(ti.elem_type) is None else \
                dtypes.nbytes(ti.elem_type, ti.numel)
        self._sized[name] = b
        if b is None:
            self.unknown += 1
        else:
            self.allocated += b
        return b

    def peak(self, n) -> int:
        """The bytes the bodies of control-flow node ``n`` hold at their peak while it runs."""
        hit = self._peaks.get(n.key)
        if hit is None:
            hit = self._peaks[n.key] = max((self._scope_peak(sc) for sc in self.index.scopes(n)), default=0)
        return hit

    def _scope_peak(self, scope: str) -> int:
        hit = self._scope_peaks.get(scope)
        if hit is not None:
            return hit
        recs = self.by_scope.get(scope, [])
        buffer: dict[str, int] = {}
        spans: list[list[int]] = []  # [first, last, bytes]
        for step, n in enumerate(recs):
            for r in n.inputs:
                b = buffer.get(r.name) if r is not None else None
                if b is not None:
                    spans[b][1] = step
            if n.op_type in ALIAS_OPS and n.status == ZERO and n.inputs and n.inputs[0] is not None \
                    and n.inputs[0].name in buffer and n.outputs and n.outputs[0] is not None:
                buffer[n.outputs[0].name] = buffer[n.inputs[0].name]
                continue
            for r in n.outputs:
                if r is not None:
                    buffer[r.name] = len(spans)
                    spans.append([step, step, self._size(r.name) or 0])
        end = len(recs)
        consumed = {r.name for n in recs for r in n.inputs if r is not None}
        delta = [0] * (end + 1)
        for name, b in buffer.items():
            if name not in consumed:  # a body output (or unused): live to the body's end
                spans[b][1] = end - 1
        for first, last, size in spans:
            delta[first] += size
            delta[last + 1] -= size
        for step, n in enumerate(recs):
            if is_control(n):
                extra = self.peak(n)
                delta[step] += extra
                delta[step + 1] -= extra
        peak = max(islice(accumulate(delta), end), default=0)
        self._scope_peaks[scope] = peak
        return peak


@dataclass(frozen=True)
class LargestFit:
    """The largest value of ``dim`` whose weights + activation peak fit ``budget_bytes``."""

    dim: str
    budget_bytes: int
    value: int | None  # None: even 1 does not fit
    total_bytes: int | None  # weights + peak at ``value``
    next_total_bytes: int | None  # at value + 1 (over the budget)
    #: exact polynomial of the total in ``dim``, when it is one (it is for almost every model)
    formula: object | None
    method: str  # "polynomial" or "search"
    #: why the answer stops short of what the budget allows (the model's shapes stop resolving)
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "dim": self.dim, "budget_bytes": self.budget_bytes, "value": self.value, "total_bytes": self.total_bytes,
            "next_total_bytes": self.next_total_bytes, "method": self.method, "note": self.note,
            "total_bytes_formula": None if self.formula is None else self.formula.to_dict(),
        }


@dataclass(frozen=True)
class DeviceFit:
    """Whether the run fits the memory of the device the spec names: weights + activation peak against
    its capacity. ``fits``: True, False, or None when the total is a lower bound below the capacity
    (some sizes unknown: it may not fit); ``largest``: when it does not fit, the largest value of the
    request's memory dim that does (None when the model has no such dim)."""

    hardware: str
    capacity_bytes: int
    total_bytes: int
    fits: bool | None
    largest: LargestFit | None = None

    def to_dict(self) -> dict:
        return {"hardware": self.hardware, "capacity_bytes": self.capacity_bytes, "total_bytes": self.total_bytes,
                "fits": self.fits, "largest": None if self.largest is None else self.largest.to_dict()}


def device_fit(request: Request, mem: MemoryResult, spec) -> DeviceFit | None:
    """:class:`DeviceFit` of ``mem`` (the memory of ``request``'s analysis) on ``spec``; None for a spec
    without a memory capacity (a CPU server's depends on its configuration)."""
    cap = getattr(spec, "memory_capacity_bytes", None)
    if not cap:
        return None
    total = mem.total_bytes
    fits = total <= cap if mem.complete else (False if total > cap else None)
    largest = None
    if fits is False:
        try:
            largest = largest_fitting(replace(request, memory_budget=cap))
        except OptionError:  # no dim to grow (a static export): the answer is the model as it is
            largest = None
    return DeviceFit(getattr(spec, "id", "?"), cap, total, fits, largest)


def largest_fitting(request: Request, limit: int = 1 << 40) -> LargestFit:
    """Largest ``request.memory_dim`` such that weights + dynamic activation peak ≤ ``request.memory_budget``,
    every other part of the request as asked (its dims, input shapes, convention, and its precision:
    every floating-point tensor at that width, :func:`onnxperf.predict.precision.what_if`).

    Every step's live bytes are fitted as exact polynomials in the dim from a few analyses
    (:func:`onnxperf.base.formula.fit_many`), so the search runs on arithmetic, not on the model; the
    answer is then confirmed by analyzing at it and one above it. Where a step is not polynomial
    in the dim, a bisection over analyses is used instead (slower, same answer).
    """
    dim, budget_bytes = request.memory_dim, request.memory_budget
    loaded = request.model if isinstance(request.model, LoadedModel) else load(request.model)
    shapes = dict(request.input_shapes)
    named = input_dim_names(loaded) + [d for v in shapes.values() if not isinstance(v, str) for d in v
                                       if isinstance(d, str)]
    named += [d for v in shapes.values() if isinstance(v, str) for d in parse_shape(v) if isinstance(d, str)]
    if dim not in named:
        raise OptionError(f"--memory: the model's inputs have no dim named {dim!r} to grow (symbolic dims: "
                          f"{', '.join(named) or 'none'}); choose one with --memory-dim, or name one in an "
                          "input shape: --input-shape INPUT=batchx3x224x224")
    base = replace(request, model=loaded)

    def analyze(d: dict[str, int]) -> Costs:
        return priced(base.at(**d))

    def complete_total(d: int) -> int | None:
        mem = liveness(analyze({dim: d}))
        return mem.total_bytes if mem.complete else None

    def total_at(d: int) -> int:
        mem = liveness(analyze({dim: d}))
        if not mem.complete:
            raise OptionError(f"--memory: {mem.unknown_tensors} tensor sizes stay unknown with {dim}={d}; "
                              "bind the other dims first")
        return mem.total_bytes

    def vector_at(d: dict[str, int]) -> list[int]:
        mem = liveness(analyze(d))
        if not mem.complete:
            raise OptionError(f"--memory: {mem.unknown_tensors} tensor sizes stay unknown with {dim}={d[dim]}; "
                              "bind the other dims first")
        return [mem.weight_bytes, *mem.timeline]

    def fits_analyzed(d: int) -> bool:
        t = complete_total(d)
        return t is not None and t <= budget_bytes

    polys = fit_many(vector_at, [dim], degree=3)
    if all(p is not None for p in polys):
        weights, steps = polys[0], polys[1:]

        def fits(d: int) -> bool:
            return weights({dim: d}) + max((p({dim: d}) for p in steps), default=0) <= budget_bytes

        value = largest_int(fits, 1, limit)
        method = "polynomial"
        if value is not None and not fits_analyzed(value):
            # the polynomial holds where it was fitted; past some value the model's own shapes stop
            # (a position table of 512 rows, a fixed reshape): search on analyses below it
            value = largest_int(fits_analyzed, 1, value)
            method = "polynomial, capped by analysis"
    else:
        value = largest_int(fits_analyzed, 1, min(limit, 1 << 20))
        method = "search"
    formula = None
    try:
        formula = fit(lambda b: total_at(b[dim]), [dim], degree=3, what="total memory")
    except NotPolynomialError:  # the total is a max over steps: often, not always, one polynomial
        formula = None
    if value is None:
        return LargestFit(dim, budget_bytes, None, None, total_at(1), formula, method)
    at = total_at(value)
    nxt = complete_total(value + 1) if value < limit else None
    note = ""
    if value < limit and nxt is None:
        note = (f"{dim}={value + 1:,} leaves tensor sizes unknown (the model's shapes stop at {dim}={value:,}): "
                f"the largest {dim} the model takes, not the budget, sets the answer")
    return LargestFit(dim, budget_bytes, value, at, nxt, formula, method, note)

