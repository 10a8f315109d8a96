"""The roofline model: pure functions, then their application to an analysis.

A platform has a peak compute rate π (per dtype) and a memory bandwidth β. A node doing W
operations on Q bytes has intensity I = W / Q; it attains min(π, I·β); its time is
max(W/π, Q/β) and it is compute-bound when W/π ≥ Q/β, i.e. when I ≥ π/β (the ridge point).

Ops with no arithmetic that move data (Transpose, Concat, Gather ...) are memory-bound and take
Q/β, not zero. Nodes run one after another, so the predicted latency is the sum of node times.
A calibrated spec (``efficiency``, fitted by ``onnxperf hw calibrate``) says how much of the roofs
each op family attains on that machine and what a node costs to dispatch:

    t = max(c, m) + α·min(c, m) + o,   c = W / (e_c,f · π),  m = Q / (e_m,f · β)

with keys ``<family>.compute`` (e_c), ``<family>.memory`` (e_m), ``default.compute``,
``default.memory``, ``<family>.overlap`` (α: 0 when compute and memory overlap fully, as in the
plain roofline; 1 when they add up) and ``overhead_s`` (o, per executed node; a node moving at least
``parallel_min_bytes`` adds ``overhead_parallel_s``, the dispatch of the runtime's thread pool), and
the latency adds ``overhead_run_s`` once per run (the runtime's own work around the nodes). A plain
spec has none: e = 1, o = 0. A spec with memory levels charges each byte at its level's bandwidth
(the cache-aware roofline, :mod:`onnxperf.predict.reuse`).

A calibrated spec may also say ``fusion.epilogue = 1``: the runtime it was calibrated on fuses an
elementwise epilogue (an activation, a residual Add) into the conv or matmul that produces its input,
as onnxruntime's optimizers do. Such an epilogue then costs its arithmetic only, plus reading its
other inputs (the residual); its dispatch and the round trip of the fused tensor are gone. Which
ops fuse into which is onnxruntime's CPU provider's list (:func:`epilogues`).

``fusion.constant_folding = 1``: the runtime computes at load time every node that depends on
constants only (and ``Shape`` of a tensor whose shape is known): such nodes take no time
(:mod:`onnxperf.graph.folding`). Both are set by calibration at optimization levels that do them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from onnxperf.base import dtypes
from onnxperf.cost.analysis import Costs
from onnxperf.cost.subnormal import underflows
from onnxperf.predict.bodies import BodyIndex, is_control
from onnxperf.predict.broadcast import QLINEAR_SPAN_KEY, SPAN_KEY, channels_last, is_qlinear_binary, node_spans
from onnxperf.predict.im2col import RUN_KEY, im2col_runs
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.graph.folding import foldable_nodes
from onnxperf.predict.folding import folded
from onnxperf.predict.float_kernels import at_float32, float_kernels
from onnxperf.predict.gpu_kernels import NOT_ASSUMED, kernel_plan
from onnxperf.predict.operands import transposed_operands
from onnxperf.predict.ort_threads import channels_last_attrs, gather_axes, kernel_threads, spec_pool
from onnxperf.predict.plan import (COMPUTE, DISPATCH, FILL, LIMITERS, MEMORY, NONE, OWN, Placement, dominant, limiter,
                                   placements)
from onnxperf.predict.recurrence import calibrated as steps_calibrated, cell_s, layouts, recurrence_steps, step_s
from onnxperf.predict.reuse import level_bytes_and_rw
from onnxperf.predict.tensors import links, tensor_bytes
from onnxperf.predict.unique_dq import dq_copies



class Spec(Protocol):
    id: str
    memory_bandwidth_bytes_per_s: float
    efficiency: Any

    def peak_for(self, dtype: str) -> float: ...


def intensity(ops: float, nbytes: float) -> float | None:
    """Operations per byte; None when no byte moves."""
    return None if nbytes <= 0 else ops / nbytes


def ridge_point(peak_ops_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """π/β: the intensity above which a kernel is compute-bound."""
    return peak_ops_per_s / bandwidth_bytes_per_s


def attainable(peak_ops_per_s: float, bandwidth_bytes_per_s: float, i: float | None) -> float:
    """min(π, I·β); a node that moves no bytes attains the peak."""
    return peak_ops_per_s if i is None else min(peak_ops_per_s, i * bandwidth_bytes_per_s)


def node_time(ops: float, nbytes: float, peak_ops_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """max(W/π, Q/β) seconds."""
    return max(ops / peak_ops_per_s if ops else 0.0, nbytes / bandwidth_bytes_per_s if nbytes else 0.0)


def bound(ops: float, nbytes: float, peak_ops_per_s: float, bandwidth_bytes_per_s: float) -> str:
    if ops == 0 and nbytes == 0:
        return NONE
    return COMPUTE if ops / peak_ops_per_s >= nbytes / bandwidth_bytes_per_s else MEMORY


_FLOAT_NAMES = ("float32", "float16", "bfloat16", "float64")


_NARROW_INTS = ("int8", "uint8", "int4", "uint4")


def compute_dtype(inputs) -> str:
    """The dtype that picks the float peak: the first floating-point input (an fp16 model uses
    the fp16 peak), else the first 8-bit-or-smaller integer input (int8 peak), else int32."""
    names = [t.dtype for t in inputs if t is not None]
    for n in names:
        if n in _FLOAT_NAMES or n.startswith("float8"):
            return n
    return int_dtype(inputs) if names else "float32"


def int_dtype(inputs) -> str:
    """The dtype that picks the integer peak: the first 8-bit-or-smaller integer input, whether
    or not float inputs are present too (QLinearMatMul and QLinearConv take float scales beside
    their uint8/int8 data; DynamicQuantizeMatMul a float activation beside int8 weights), else int32."""
    for t in inputs:
        if t is not None and t.dtype in _NARROW_INTS:
            return t.dtype
    return "int32"


@dataclass(frozen=True)
class NodeRoofline:
    """One row of the execution plan (:mod:`onnxperf.predict.plan`): how the runtime runs a main-graph node
    and what its predicted time is made of.

    ``ops`` W and ``bytes`` Q are what the prediction charges the node (Q: the bytes its kernel moves
    through memory, less what a fusion keeps on chip; the node that starts a GPU kernel carries its
    members' bytes and time, :func:`_as_kernels`); ``intensity`` = W / Q. ``peak_ops_per_s`` is the
    named peak π of ``dtype`` on the spec (no efficiency applied), ``bandwidth_bytes_per_s`` β the
    bandwidth of the roof its bytes are charged at, ``attainable_ops_per_s`` = min(π, I·β) its roof,
    ``attained_ops_per_s`` = W / t and ``peak_share`` = W / t / π. ``compute_s``, ``memory_s`` and
    ``dispatch_s`` are the parts of t (``fill``: the GPU fill that divides the arithmetic of a tiled
    kernel, 1 elsewhere); ``bound`` is its limiter (:func:`onnxperf.predict.plan.limiter`); ``runs``,
    ``kernel``, ``how`` and ``runs_as`` its :class:`~onnxperf.predict.plan.Placement`; ``level`` the memory
    level its memory time mostly goes to (None on a spec without cache levels); ``written`` the part of
    ``bytes`` its kernel writes (the GPU kernel model; 0 elsewhere); ``assist_s`` the part of
    ``compute_s`` that is microcode assists on subnormal values (:func:`_with_assists`; 0 elsewhere);
    ``span_s`` the part of ``dispatch_s`` that is its broadcast loop's spans (:func:`_with_spans`); ``threads``
    the threads its kernel runs on where the runtime chooses them by its own cost model and the spec says how
    many the runtime has (:func:`_with_threads`; None elsewhere: all of them); ``copies`` the kernels the runtime
    runs for the node (:func:`_with_copies`: a DequantizeLinear with several readers; 1 elsewhere), which its
    ``ops``, ``bytes`` and times include; ``steps`` the steps of an LSTM or GRU timed step by step (:func:`_with_steps`;
    0 elsewhere)."""

    key: str
    op_type: str
    family: str
    dtype: str
    ops: int
    bytes: int
    intensity: float | None
    peak_ops_per_s: float
    attainable_ops_per_s: float
    bound: str
    time_s: float | None  # None when the node's cost is unknown
    share: float | None
    compute_s: float = 0.0
    memory_s: float = 0.0
    dispatch_s: float = 0.0
    fill: float = 1.0
    bandwidth_bytes_per_s: float = 0.0
    level: str | None = None
    #: of ``bytes``, those written (the GPU kernel model's: what leaves its kernel)
    written: int = 0
    attained_ops_per_s: float | None = None
    peak_share: float | None = None
    runs: str = OWN
    kernel: str | None = None
    how: str | None = None
    runs_as: str | None = None
    assist_s: float = 0.0
    span_s: float = 0.0
    threads: int | None = None
    copies: int = 1
    #: the steps a recurrence runs one after another where the plan times it step by step (:func:`_with_steps`)
    steps: int = 0
    #: of one such step on the thread that sets it: R's stream B/β, the product F/φ, the cells U·c and the
    #: hand-offs through the pool (seconds; the step takes max of the first two plus the others), else None
    step_parts: tuple[float, float, float, float] | None = None


_ROW_FIELDS = frozenset(f.name for f in fields(NodeRoofline))


def _row(r: NodeRoofline, **changes) -> NodeRoofline:
    """``dataclasses.replace(r, **changes)`` without its per-call introspection (a row has no ``__post_init__``
    and every field is an init field): several times faster, and a decoder's LLM figures replace rows tens of
    thousands of times (the plan of each of its 17 sampled prefill steps), a fifth of ``summary --llm``'s time on
    a GPU spec."""
    if not changes.keys() <= _ROW_FIELDS:
        raise TypeError(f"NodeRoofline has no field {sorted(changes.keys() - _ROW_FIELDS)}")
    new = object.__new__(NodeRoofline)
    new.__dict__.update(r.__dict__)
    new.__dict__.update(changes)
    return new


@dataclass(frozen=True)
class OpTypeRoofline:
    """The roofline of all timed nodes of one op type: their summed operations, bytes and times.
    ``intensity`` = ops / bytes; ``ops_per_s`` = ops / time (the rate the predictions imply);
    ``bound`` = the limiter that holds most of the op type's time (:func:`onnxperf.predict.plan.dominant`)."""

    op_type: str
    count: int
    ops: int
    bytes: int
    intensity: float | None
    time_s: float
    share: float
    ops_per_s: float | None
    compute_bound_time_s: float
    memory_bound_time_s: float
    bound: str
    fill_bound_time_s: float = 0.0
    dispatch_bound_time_s: float = 0.0


@dataclass(frozen=True)
class Band:
    """The error band of a device class: measured time / predicted time on held-out published points,
    its 10th and 90th percentiles (``band.p10``, ``band.p90``) over ``band.points`` of them; a predicted
    time t is then ``t·p10 .. t·p90`` ("3.2 ms, −20%/+35% on 40 published points")."""

    p10: float
    p90: float
    points: int
    source: str

    def around(self, t: float | None) -> tuple[float, float] | None:
        return None if t is None else (t * self.p10, t * self.p90)

    def text(self) -> str:
        """``−20%/+35% on 40 published points``."""
        return f"{(self.p10 - 1) * 100:+.0f}%/{(self.p90 - 1) * 100:+.0f}% on {self.points:,} published points"

    def to_dict(self, t: float | None) -> dict[str, Any]:
        low, high = self.around(t) or (None, None)
        return {"low_s": low, "high_s": high, "ratio_p10": self.p10, "ratio_p90": self.p90, "points": self.points,
                "text": self.text(), "source": self.source}


def band_of(spec: Spec | None, kind: str = "") -> Band | None:
    """The spec's error band (its ``band.p10``, ``band.p90`` and ``band.points`` efficiency figures with
    their source; ``kind="llm"``: ``band.llm.*``, measured on decoder LLMs), None when it has none."""
    eff = getattr(spec, "efficiency", None) or {}
    pre = f"band.{kind}." if kind else "band."
    keys = (pre + "p10", pre + "p90", pre + "points")
    if not set(keys) <= set(eff):
        return None
    src = (getattr(spec, "efficiency_sources", None) or {}).get(keys[0], "")
    return Band(float(eff[keys[0]]), float(eff[keys[1]]), int(eff[keys[2]]), src)


@dataclass(frozen=True)
class RooflineResult:
    """The execution plan of an analysis on a spec at a precision (:mod:`onnxperf.predict.plan`): one row per
    main-graph node, the latency, and the time each limiter holds. Made once (:func:`roofline`); every
    output reads it."""

    spec_id: str
    ridge_fp32: float
    nodes: tuple[NodeRoofline, ...]
    latency_s: float
    #: nodes whose time is unknown (unsupported or unknown shapes): latency is partial
    unknown_nodes: int
    compute_bound_time_s: float
    memory_bound_time_s: float
    #: per op type, largest predicted time first; share = of the summed node time
    by_op_type: tuple[OpTypeRoofline, ...]
    #: per-run cost of the runtime beyond its nodes (a calibrated spec's ``overhead_run_s``);
    #: ``latency_s`` = the sum of node times + this
    run_overhead_s: float = 0.0
    #: whether the latency is a lower bound on time. No prediction here is one: a plain roofline (a spec
    #: with no efficiencies, dispatch overheads or fusions: every node at its roof, every tensor through
    #: main memory) was called one until published CPU runs came in at 0.27-5.5x of it
    #: (benchmarks/results/cpu_realism.md: runtimes fuse and keep activations in cache); the bound is
    #: ``compute_floor_s``. Kept in the JSON (``latency_is_lower_bound``: false) for tools that read it
    lower_bound: bool = False
    #: the GPU kernel model (a spec with ``fusion.gpu``): kernels launched, and each fusion it
    #: assumed as (what, nodes); None for other specs
    kernels: int | None = None
    assumed: tuple[tuple[str, int], ...] = ()
    #: what the GPU kernel model does not assume (:data:`onnxperf.predict.gpu_kernels.NOT_ASSUMED`); empty for other specs
    not_assumed: tuple[str, ...] = ()
    #: the cache-aware roofline (a spec with memory levels): (level, bytes charged there), innermost
    #: first, main memory last; empty for a DRAM-only spec
    bytes_by_level: tuple[tuple[str, float], ...] = ()
    #: the side of the costs this prediction rests on (:attr:`onnxperf.cost.analysis.Totals.side`): a node
    #: of a body left out, a loop counted in part, a size replaced by its upper bound
    cost_side: str = ""
    #: time of the nodes limited by the GPU's fill, and by their dispatch overhead (the other limiters:
    #: ``compute_bound_time_s``, ``memory_bound_time_s``)
    fill_bound_time_s: float = 0.0
    dispatch_bound_time_s: float = 0.0
    #: which prediction this is: "plain roofline", "GPU kernel model", "calibrated, onnxruntime's CPU
    #: fusions", "calibrated"
    prediction: str = "plain roofline"
    #: the error band of this device class (:class:`Band`, from the spec's ``band.*`` figures): what the
    #: held-out published measurements were against the prediction; None where nobody measured
    band: "Band | None" = None
    #: a plain roofline (no efficiencies, overheads or fusions): an estimate, not a bound
    plain: bool = False
    #: the arithmetic alone at the named peaks, Σ ops / peak over the nodes: a lower bound on time (at
    #: the spec's peaks: a clock above the one they assume beats it)
    compute_floor_s: float = 0.0
    #: Softmax nodes whose input was too large (or too shapeless) to evaluate for subnormal values, on a spec
    #: that prices assists: any assists they take are not in the latency (:mod:`onnxperf.cost.subnormal`)
    assists_unknown: int = 0
    #: float16 nodes onnxruntime's CPU provider runs on float kernels (:mod:`.float_kernels`), the Casts it
    #: inserts around them, and those Casts' predicted time (in their nodes' times)
    float_kernel_nodes: int = 0
    inserted_casts: int = 0
    inserted_cast_s: float = 0.0
    #: the threads of the runtime's intra-op pool the spec was calibrated at (``runtime.threads``), where the
    #: plan models kernels that run on fewer (:func:`_with_threads`); None elsewhere
    runtime_threads: int | None = None

    @property
    def latency_band(self) -> tuple[float, float] | None:
        """(low, high) seconds: the latency times the band's ratios (None without a band)."""
        return None if self.band is None else self.band.around(self.latency_s)

    @property
    def side(self) -> str:
        """Which side of the truth the latency is on, beyond the model of the hardware: ``lower`` when a
        node has no time or the costs leave something out, ``upper`` when the costs are upper bounds,
        ``unknown`` for both; ``""`` when the costs are exact."""
        lower = bool(self.unknown_nodes) or self.cost_side in ("lower", "unknown")
        upper = self.cost_side in ("upper", "unknown")
        return "unknown" if lower and upper else "lower" if lower else "upper" if upper else ""

    @property
    def complete(self) -> bool:
        """Nothing left out of the latency (it may still be an upper bound: see :attr:`side`)."""
        return self.side not in ("lower", "unknown")

    @property
    def node_time_s(self) -> float:
        """The summed node times: the latency less the per-run overhead."""
        return self.latency_s - self.run_overhead_s

    @property
    def span_s(self) -> float:
        """The part of the node times that is broadcast loops' spans (:func:`_with_spans`)."""
        return sum(r.span_s for r in self.nodes)

    @property
    def assist_s(self) -> float:
        """The part of the node times that is microcode assists on subnormal values (:func:`_with_assists`)."""
        return sum(r.assist_s for r in self.nodes)

    @property
    def narrow_nodes(self) -> tuple[NodeRoofline, ...]:
        """The rows whose kernel runs on fewer threads than the runtime's pool (:func:`_with_threads`)."""
        pool = self.runtime_threads or 0
        return tuple(r for r in self.nodes if r.threads is not None and r.threads < pool and r.time_s)

    @property
    def narrow_s(self) -> float:
        """The part of the node times in kernels on fewer threads than the pool (:attr:`narrow_nodes`)."""
        return sum(r.time_s for r in self.narrow_nodes)

    def time_by_bound(self) -> dict[str, float]:
        """Limiter -> the node time it holds (:data:`onnxperf.predict.plan.LIMITERS`, in order)."""
        return {COMPUTE: self.compute_bound_time_s, FILL: self.fill_bound_time_s, MEMORY: self.memory_bound_time_s,
                DISPATCH: self.dispatch_bound_time_s}

    def throughput_per_s(self, batch: int = 1) -> float | None:
        return None if self.latency_s <= 0 else batch / self.latency_s

    def to_dict(self, batch: int = 1, hardware: str | None = None) -> dict[str, Any]:
        """The ``roofline`` section of the JSON contract, for ``batch`` items a run on ``hardware``
        (the spec's id as given; the prediction's own by default)."""
        return {
            "hardware": hardware or self.spec_id, "prediction": self.prediction,
            "ridge_fp32_flops_per_byte": self.ridge_fp32,
            "latency_s": self.latency_s, "latency_is_lower_bound": self.lower_bound, "plain_roofline": self.plain,
            "compute_floor_s": self.compute_floor_s,
            "latency_band": None if self.band is None else self.band.to_dict(self.latency_s), "batch": batch,
            "throughput_items_per_s": self.throughput_per_s(batch),
            "unknown_nodes": self.unknown_nodes, "complete": self.complete, "bound": self.side or "exact",
            "compute_bound_time_s": self.compute_bound_time_s, "memory_bound_time_s": self.memory_bound_time_s,
            "fill_bound_time_s": self.fill_bound_time_s, "dispatch_bound_time_s": self.dispatch_bound_time_s,
            "run_overhead_s": self.run_overhead_s, "subnormal_assist_s": self.assist_s,
            "subnormal_not_evaluated": self.assists_unknown,
            "broadcast_span_s": self.span_s,
            "runtime_threads": self.runtime_threads, "narrow_kernel_s": self.narrow_s,
            "float16_on_float_kernels": self.float_kernel_nodes, "inserted_casts": self.inserted_casts,
            "inserted_cast_s": self.inserted_cast_s,
            "bytes_by_level": [{"level": k, "bytes": v} for k, v in self.bytes_by_level] or None,
            "gpu_kernel_model": None if self.kernels is None else {
                "kernels": self.kernels, "assumed": [{"what": w, "nodes": n} for w, n in self.assumed],
                "not_assumed": list(self.not_assumed)},
            "by_op_type": [{"op_type": o.op_type, "count": o.count, "ops": o.ops, "bytes": o.bytes,
                            "intensity": o.intensity, "time_s": o.time_s, "share": o.share,
                            "ops_per_s": o.ops_per_s, "bound": o.bound,
                            "compute_bound_time_s": o.compute_bound_time_s,
                            "memory_bound_time_s": o.memory_bound_time_s,
                            "fill_bound_time_s": o.fill_bound_time_s,
                            "dispatch_bound_time_s": o.dispatch_bound_time_s} for o in self.by_op_type],
            "nodes": [{"key": n.key, "dtype": n.dtype, "ops": n.ops, "bytes": n.bytes, "intensity": n.intensity,
                       "peak_ops_per_s": n.peak_ops_per_s, "attainable_ops_per_s": n.attainable_ops_per_s,
                       "attained_ops_per_s": n.attained_ops_per_s, "peak_share": n.peak_share,
                       "bound": n.bound, "time_s": n.time_s, "share": n.share,
                       "compute_s": n.compute_s, "memory_s": n.memory_s, "dispatch_s": n.dispatch_s, "fill": n.fill,
                       "runs": n.runs, "kernel": n.kernel, "threads": n.threads, "copies": n.copies}
                      for n in self.nodes],
        }


#: elementwise functions a CPU evaluates by a polynomial or a series per element (erf, exp, tanh,
#: the exponentials of a sigmoid or a softmax): their kernels are bound by that arithmetic, which the
#: FLOP convention counts as 1-9 operations per element (docs/conventions.md), not by their bytes.
#: A calibrated spec fits each one's share of the compute roof apart where the suite has it
#: (``op.<Op>.compute``), the others at the median of those (``transcendental.compute``)
TRANSCENDENTAL = frozenset({
    "Erf", "Exp", "Log", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Sin", "Cos", "Tan", "Asin", "Acos",
    "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus", "Elu", "Selu", "Celu", "Mish", "Swish",
    "Gelu", "BiasGelu", "FastGelu", "QuickGelu"})
#: kernels whose time follows their element count at any cache level, fitted on their arithmetic
#: like the transcendental functions: onnxruntime 1.32's CPU SkipLayerNormalization takes ~2.5 ns
#: per element from 128x256 to 512x768, its bilinear Resize ~0.4 ns per output element (LR-ASPP's
#: 21x520x520 upsampling: 2.3 ms, 19x its bytes at L3 bandwidth), its QLinearSoftmax ~1.4 ns per element
FITTED_ON_ARITHMETIC = TRANSCENDENTAL | {"SkipLayerNormalization", "Resize", "QLinearSoftmax"}
#: ops that take another's per-op key: BiasGelu is a bias Add and onnxruntime's Gelu kernel; QuickGelu
#: (x · sigmoid(α·x)) costs what a Sigmoid does per element (onnxruntime 1.32 here: 0.35 and 0.32 ns)
_SAME_AS = {"BiasGelu": "Gelu", "QuickGelu": "Sigmoid"}


#: float peaks whose arithmetic has efficiency keys of its own (``matmul.fp8.compute``): an fp8 or fp4 GEMM
#: attains a smaller share of its peak than an fp16 one (the Hopper and Ada fits on published TensorRT-LLM
#: rows, benchmarks/results/llm_realism.md)
LOW_PRECISION_PEAKS = frozenset({"fp8", "fp4"})


def low_precision(spec: Spec, float_dtype: str) -> str | None:
    """``fp8`` or ``fp4`` where float arithmetic in ``float_dtype`` (a dtype name or a peak key) runs at
    that peak of ``spec`` (after its fallbacks: fp4 on a device without an fp4 peak runs at fp8's), else None."""
    resolve = getattr(spec, "resolve_peak", None)
    if resolve is None:
        return None
    basis = resolve(float_dtype)[1]
    return basis if basis in LOW_PRECISION_PEAKS else None


def families(family: str, integer: bool = False, depthwise: bool = False, op: str | None = None,
             precision: str | None = None) -> tuple[str, ...]:
    """The efficiency keys' family names for a node, most specific first: a depthwise convolution
    (one input channel per group) and 8-bit integer arithmetic are calibrated apart where the suite
    has them (``conv.depthwise.int8``, ``conv.depthwise``, ``conv.int8``, then ``conv``). An op the
    suite measures on its own (a transcendental function, onnxruntime's SkipLayerNormalization) has
    keys ``op.<Op>.*`` looked up first, and a :data:`TRANSCENDENTAL` one without them
    ``transcendental.*``. Float arithmetic at an fp8 or fp4 peak (``precision``, :func:`low_precision`)
    looks up ``<family>.fp8.*`` / ``<family>.fp4.*`` before the family's own keys."""
    out = []
    if op:
        out.append(f"op.{_SAME_AS.get(op, op)}")
    if op in TRANSCENDENTAL:
        out.append("transcendental")
    if depthwise:
        out += [f"{family}.depthwise.int8"] if integer else []
        out.append(f"{family}.depthwise")
    if integer:
        out.append(f"{family}.int8")
    elif precision in LOW_PRECISION_PEAKS:
        out.append(f"{family}.{precision}")
    out.append(family)
    return tuple(out)


def pool_bytes(n) -> int:
    """The bytes a node moves as the CPU thread-pool threshold (``parallel_min_bytes``) reads them: float16
    tensors at float32 width. onnxruntime's CPU kernels compute float16 as float (a float16 kernel converts
    each element; the others run on the float kernel, :mod:`.float_kernels`) and its thread pool splits a
    kernel by its work per element, so a float16 SkipLayerNormalization is parallel where its float32 twin is."""
    return sum(at_float32(n))


def efficiencies(spec: Spec, family: str, nbytes: float = 0.0, integer: bool = False,
                 depthwise: bool = False, op: str | None = None,
                 precision: str | None = None) -> tuple[float, float, float]:
    """(compute efficiency, memory efficiency, per-node overhead in s) for an op family; a node moving
    at least ``parallel_min_bytes`` (``nbytes``: :func:`pool_bytes`) also pays ``overhead_parallel_s`` (the runtime's
    thread-pool dispatch, fitted by calibration). ``integer``: the node's arithmetic is 8-bit integer
    (QLinearConv, MatMulInteger ...); ``depthwise``: a depthwise convolution: their own keys first,
    where calibration fitted them (:func:`families`); ``op``: the node's op type (a transcendental
    function's own keys); ``precision``: float arithmetic at an fp8 or fp4 peak (:func:`families`)."""
    eff = getattr(spec, "efficiency", None) or {}
    fams = families(family, integer, depthwise, op, precision)
    e_c = float(next((eff[f"{f}.compute"] for f in fams if f"{f}.compute" in eff), eff.get("default.compute", 1.0)))
    e_m = float(next((eff[f"{f}.memory"] for f in fams if f"{f}.memory" in eff), eff.get("default.memory", 1.0)))
    o = float(eff.get("overhead_s", 0.0))
    if "overhead_parallel_s" in eff and nbytes >= float(eff.get("parallel_min_bytes", math.inf)):
        o += float(eff["overhead_parallel_s"])
    return e_c, e_m, o


def overlap(spec: Spec, family: str, integer: bool = False, depthwise: bool = False, op: str | None = None) -> float:
    """α of a calibrated spec for an op family: the share of the lesser of compute and memory
    time that is not hidden under the greater (``<family>.overlap``, else ``overlap``, else 0)."""
    eff = getattr(spec, "efficiency", None) or {}
    for f in families(family, integer, depthwise, op):
        if f"{f}.overlap" in eff:
            return float(eff[f"{f}.overlap"])
    return float(eff.get("overlap", 0.0))


#: weight input of each convolution op (its shape's dim 1 is input channels per group)
_CONV_WEIGHT = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3, "FusedConv": 1, "NhwcConv": 1}


def is_depthwise(n) -> bool:
    """A convolution with one input channel per group and more than one channel (MobileNet's,
    EfficientNet's 3x3 / 5x5 depthwise convs): a kernel class of its own."""
    w = _CONV_WEIGHT.get(n.op_type)
    if w is None or len(n.inputs) <= w or n.inputs[w] is None or n.inputs[0] is None:
        return False
    ws, xs = n.inputs[w].shape, n.inputs[0].shape
    return bool(ws and xs and len(ws) >= 3 and len(xs) >= 3 and ws[1] == 1 and isinstance(xs[1], int) and xs[1] > 1)


def _kind(n, op: str | None = None) -> tuple[bool, bool, str]:
    """(integer, depthwise, per-op key) of a node, for :func:`efficiencies` and :func:`overlap`: the
    key is ``op`` where :func:`op_keys` gives one, else the op type."""
    return n.int_ops > n.flops, is_depthwise(n), op or n.op_type


#: ops that no runtime executes as a kernel (folded at load): no dispatch overhead
_NOT_EXECUTED = frozenset({"Constant"})
#: recurrent ops whose input projection runs as one GEMM over every step (:func:`rnn_gemm_flops`)
_RECURRENT = frozenset({"LSTM", "GRU", "RNN"})


def rnn_gemm_flops(n) -> int:
    """The FLOPs of a recurrent op's input projection X·Wᵀ over all its steps, which runtimes run as one
    GEMM before the recurrence (onnxruntime's CPU LSTM / GRU / RNN: one MLAS GEMM of [seq·N, I] by
    [I, G·H] per direction; cuDNN alike), the rest being the steps' recurrent products and cells:

        2·seq·N·dirs·G·H·I = 2 · numel(X) · numel(W) / I,   X [seq, N, I], W [dirs, G·H, I]

    0 for other ops or where a shape is not known (:mod:`onnxperf.cost.ops.rnn` has the notation)."""
    if n.op_type not in _RECURRENT or len(n.inputs) < 2 or n.inputs[0] is None or n.inputs[1] is None:
        return 0
    xs, ws = n.inputs[0].shape, n.inputs[1].shape
    if not xs or not ws or not all(isinstance(d, int) and d > 0 for d in (*xs, *ws)):
        return 0
    return 2 * _numel(xs) * _numel(ws) // xs[-1]


def integer_named(flops: float, int_ops: float, float_peak: float, int_peak: float) -> bool:
    """Whether a node's named peak (and dtype) is its integer arithmetic's: it has integer ops, and no FLOPs,
    or a faster integer peak, or as fast a one and more integer ops than FLOPs."""
    return bool(int_ops) and (not flops or int_peak > float_peak or (int_peak == float_peak and int_ops > flops))


def node_roofline(n, spec: Spec, float_key: str | None = None, op: str | None = None) -> NodeRoofline:
    """Roofline of one NodeCost on its own: integer ops at the integer peak, FLOPs at the float one
    (``float_key``: the peak of a ``--precision`` what-if for every floating-point operation; ``op``:
    the per-op efficiency key to use instead of the node's op type, :func:`op_keys`),

        t = max(c, m) + α·min(c, m) + o,   c = W_f / (e_c·π_f) + W_i / (e_c·π_i),   m = Q / (e_m·β)

    The named peak is the peak of the dtype its arithmetic runs in (the faster of the two when it
    has both kinds). A recurrent op's input projection (:func:`rnn_gemm_flops`, W_g of its W_f) runs
    as a GEMM, at the matrix-product efficiency: c = W_g / (e_matmul·π_f) + (W_f − W_g) / (e_c·π_f) + ...
    (its recurrence, the step-by-step products and cells, at its own family's). Float arithmetic at an fp8
    or fp4 peak takes e_c and e_matmul from that precision's keys where the spec has them
    (``matmul.fp8.compute``: :func:`families`)."""
    dtype = compute_dtype(n.inputs)
    nbytes = n.bytes_read + n.bytes_written
    kind = _kind(n, op)
    fdt = float_key if float_key is not None else dtype if dtype in _FLOAT_NAMES or dtype.startswith("float8") \
        else "float32"
    low = low_precision(spec, fdt) if n.flops else None
    e_c, e_m, overhead = efficiencies(spec, n.family, pool_bytes(n), *kind, precision=low)
    if n.op_type in _NOT_EXECUTED:
        overhead = 0.0
    dram = spec.memory_bandwidth_bytes_per_s
    if n.status not in (COUNTED, ZERO):
        return NodeRoofline(n.key, n.op_type, n.family, dtype, 0, 0, None, 0.0, 0.0, NONE, None, None,
                            bandwidth_bytes_per_s=dram)
    float_peak = spec.peak_for(fdt)
    idt = int_dtype(n.inputs)
    int_peak = spec.peak_for(idt)
    # time of the arithmetic: FLOPs at the float peak plus integer ops at the integer peak
    gemm = min(rnn_gemm_flops(n), n.flops or 0)
    e_mm = efficiencies(spec, "matmul", precision=low)[0] if gemm else e_c
    compute_s = (gemm / (float_peak * e_mm) + (n.flops - gemm) / (float_peak * e_c) if n.flops else 0.0) \
        + (n.int_ops / (int_peak * e_c) if n.int_ops else 0.0)
    memory_s = nbytes / (dram * e_m) if nbytes else 0.0
    t = max(compute_s, memory_s) + overlap(spec, n.family, *kind) * min(compute_s, memory_s) + overhead
    if integer_named(n.flops, n.int_ops, float_peak, int_peak):
        dtype, peak = idt, int_peak  # the node is integer arithmetic on this data (QLinear*, *Integer)
    elif n.flops:
        dtype, peak = fdt, float_peak
    else:
        peak = float_peak  # no arithmetic: its roof is the float one, its dtype its data's
    ops = n.flops + n.int_ops
    return NodeRoofline(n.key, n.op_type, n.family, dtype, ops, nbytes, intensity(ops, nbytes), peak, 0.0, NONE, t,
                        None, compute_s=compute_s, memory_s=memory_s, dispatch_s=overhead, bandwidth_bytes_per_s=dram)


#: activations that onnxruntime's CPU provider fuses into the Conv or Gemm before them
#: (ConvActivationFusion, GemmActivationFusion, the NCHWc transformer)
FUSED_ACTIVATIONS = frozenset({"Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid"})
#: what fuses into each producer op: Conv takes one Add/Sum (a residual or bias, NCHWc Conv+Sum)
#: and then one activation; Gemm one activation; MatMul a multiply or divide by a scalar constant
#: (MatMulScaleFusion -> FusedMatMul), and when its operands are 2-D an Add of a constant bias
#: (MatMulAddFusion -> Gemm) and then one activation. onnxruntime does not fuse an Add into a
#: batched MatMul (the bias Add of a transformer stays a kernel of its own).
_ADDS = frozenset({"Add", "Sum"})
_SCALES = frozenset({"Mul", "Div"})


def _is_scalar(t) -> bool:
    return t is not None and t.shape is not None and all(isinstance(d, int) for d in t.shape) \
        and _numel(t.shape) == 1


def _numel(shape) -> int:
    k = 1
    for d in shape:
        k *= d
    return k


@dataclass(frozen=True)
class Fusions:
    """What a runtime's graph optimizer does to a model, as the roofline of a calibrated spec sees it.

    ``epilogue``: node key -> the input tensors it no longer reads from memory (they are computed
    in the same kernel, just before); the node costs its arithmetic plus its other inputs, and no
    dispatch. ``absorbed``: nodes folded into a neighbour's weights or attributes when the model
    loads (a constant Mul/Add/BatchNormalization after a Conv, a zero Pad before a Conv or pool):
    no time at all. ``runs_as``: node key -> (the fused op whose kernel runs it, the kernel's bytes,
    its operations, the integer type of its arithmetic or None): a LayerNormalization whose residual
    Adds onnxruntime folds into SkipLayerNormalization carries that kernel's time, a QDQ Conv the
    QLinearConv's; the Adds, the DequantizeLinear and QuantizeLinear are ``inside`` it and take none.
    ``copies``: node key -> the kernels onnxruntime runs for it where that is more than one (a
    DequantizeLinear with several readers, :mod:`onnxperf.predict.unique_dq`)."""

    epilogue: dict[str, frozenset[str]]
    absorbed: frozenset[str]
    runs_as: dict[str, tuple[str, int, int, str | None]] = field(default_factory=dict)
    inside: frozenset[str] = frozenset()
    copies: dict[str, int] = field(default_factory=dict)


def epilogues(a: Costs) -> dict[str, frozenset[str]]:
    """Main-graph nodes that run inside the kernel before them (:func:`fusions`)."""
    return fusions(a).epilogue


def fusions(a: Costs) -> Fusions:
    """onnxruntime's CPU fusions found in ``a`` (see :data:`FUSED_ACTIVATIONS` for the patterns).

    A fused input must be read by the fusing node alone and not be a graph output; a chain
    (Conv -> Mul -> Add -> Relu) is followed link by link, each link checked against what its root
    still accepts. GELU written out (x/√2 -> Erf -> +1 -> ·x -> ·0.5, and the bias Add before it)
    runs as one kernel (GeluFusion, BiasGeluFusion): its first node keeps its traffic, the others
    cost their arithmetic. A Transpose of the last two axes that only GEMMs read is absorbed
    (MatMulTransposeFusion: FusedMatMul reads it transposed, :mod:`onnxperf.predict.operands`)."""
    nodes = a.main_nodes
    producer, users = links(nodes)
    graph_outputs = {o.name for o in a.model.outputs}
    consts = _constant_names(a)

    def sole_user(name: str) -> bool:
        return len(users.get(name, ())) == 1 and name not in graph_outputs

    # node key -> (root op, what the chain has taken so far)
    state: dict[str, tuple[str, frozenset[str]]] = {}
    for n in nodes:
        if n.op_type in ("Conv", "Gemm", "MatMul") and not n.domain and n.status == COUNTED:
            two_d = n.op_type == "MatMul" and all(i is not None and i.shape is not None and len(i.shape) == 2
                                                  for i in n.inputs[:2])
            state[n.key] = ("Gemm" if two_d else n.op_type, frozenset())
    epi: dict[str, frozenset[str]] = {}
    absorbed: set[str] = set()
    for n in nodes:
        if n.domain or n.status != COUNTED:
            continue
        if n.op_type == "Pad" and _zero_pad(a, n, consts) and n.outputs and n.outputs[0] is not None \
                and sole_user(n.outputs[0].name) \
                and users[n.outputs[0].name][0].op_type in ("Conv", "MaxPool", "AveragePool"):
            absorbed.add(n.key)  # PadFusion: the padding moves into the consumer's pads
            continue
        for i in n.inputs:
            if i is None or not sole_user(i.name):
                continue
            p = producer.get(i.name)
            if p is None or p.key not in state:
                continue
            root, taken = state[p.key]
            others = [x for x in n.inputs if x is not None and x.name != i.name]
            kind = _epilogue_kind(root, taken, n.op_type, others, consts)
            if kind is None:
                continue
            if kind == "fold":
                absorbed.add(n.key)
            else:
                epi[n.key] = frozenset({i.name})
            state[n.key] = (root, taken | {kind})
            break
    # MatMulTransposeFusion: a Transpose of the last two axes read only by GEMMs becomes FusedMatMul's transB
    absorbed |= transposed_operands(a) - set(epi)
    value = a.loaded.graph.const_value if a.loaded is not None else (lambda name: None)
    for members, free in _gelu_islands(nodes, producer, users, consts, graph_outputs, value):
        for m in members:
            if m.key not in epi and m.key not in absorbed:
                epi[m.key] = frozenset(x.name for x in m.inputs if x is not None and x.name in free)
    runs_as: dict[str, tuple[str, int, int, str | None]] = {}
    inside: set[str] = set()
    for conv, around, nbytes, idt in _qdq_convs(nodes, producer, users, consts, graph_outputs):
        if any(x.key in epi or x.key in absorbed or x.key in inside for x in (conv, *around)):
            continue
        runs_as[conv.key] = ("QLinearConv", nbytes, conv.flops + conv.int_ops, idt)
        inside |= {x.key for x in around}
    for mul, around, nbytes in _quick_gelus(nodes, producer, users, consts, graph_outputs, value):
        if any(x.key in epi or x.key in absorbed or x.key in inside or x.key in runs_as for x in (mul, *around)):
            continue
        runs_as[mul.key] = ("QuickGelu", nbytes, sum(x.flops + x.int_ops for x in (mul, *around)), None)
        inside |= {x.key for x in around}
    for mul, around, nbytes in _rms_norms(nodes, producer, users, consts, graph_outputs):
        if any(x.key in epi or x.key in absorbed or x.key in inside or x.key in runs_as for x in (mul, *around)):
            continue
        runs_as[mul.key] = ("SimplifiedLayerNormalization", nbytes, sum(x.flops + x.int_ops for x in (mul, *around)),
                            None)
        inside |= {x.key for x in around}
    for ln, adds in _skip_layer_norms(a, nodes, producer, users, consts, graph_outputs):
        if any(x.key in epi or x.key in absorbed for x in (ln, *adds)):
            continue
        inner = {x.outputs[0].name for x in adds}
        read = {t.name: t for x in (*adds, ln) for t in x.inputs if t is not None and t.name not in inner}
        nbytes = sum(tensor_bytes(t) for t in read.values()) + ln.bytes_written
        runs_as[ln.key] = ("SkipLayerNormalization", nbytes, sum(x.flops + x.int_ops for x in (ln, *adds)), None)
        inside |= {x.key for x in adds}
    copies = {k: c for k, c in dq_copies(nodes, graph_outputs).items()
              if k not in epi and k not in absorbed and k not in inside and k not in runs_as}
    return Fusions(epi, frozenset(absorbed), runs_as, frozenset(inside), copies)


_Q8 = frozenset({"int8", "uint8"})


def _qdq_convs(nodes, producer, users, consts, graph_outputs):
    """(Conv, its DequantizeLinear/QuantizeLinear nodes, the QLinearConv's bytes, its integer type)
    of each ``DQ(x), DQ(w) [, DQ(bias)] -> Conv -> Q`` that onnxruntime's QDQ transformer turns into
    one QLinearConv: 8-bit data and constant 8-bit weights (an int32 bias), and every DequantizeLinear
    and the Conv read by that node alone. A DequantizeLinear shared with another reader (a residual
    block's input, read by its first conv and its Add) keeps the conv in float: on a QDQ ResNet-18,
    onnxruntime 1.32 made QLinearConv of the 9 convs with their own DequantizeLinear and left the 8
    whose input is shared (tests/test_fusions_ort.py)."""
    def sole_dq(t, const: bool):
        if t is None or t.name in graph_outputs or len(users.get(t.name, ())) != 1:
            return None
        dq = producer.get(t.name)
        if dq is None or dq.op_type != "DequantizeLinear" or dq.domain or not dq.inputs or dq.inputs[0] is None:
            return None
        if const and dq.inputs[0].name not in consts:
            return None
        return dq
    out = []
    for conv in nodes:
        if conv.op_type != "Conv" or conv.domain or len(conv.inputs) < 2 or not conv.outputs or conv.outputs[0] is None:
            continue
        dqx, dqw = sole_dq(conv.inputs[0], False), sole_dq(conv.inputs[1], True)
        if dqx is None or dqw is None or dqx.inputs[0].dtype not in _Q8 or dqw.inputs[0].dtype not in _Q8:
            continue
        around = [dqx, dqw]
        if len(conv.inputs) > 2 and conv.inputs[2] is not None:
            dqb = sole_dq(conv.inputs[2], True)
            if dqb is None or dqb.inputs[0].dtype != "int32":
                continue
            around.append(dqb)
        y = conv.outputs[0]
        q = users.get(y.name, ())
        if y.name in graph_outputs or len(q) != 1 or q[0].op_type != "QuantizeLinear" or q[0].domain \
                or not q[0].outputs or q[0].outputs[0] is None or q[0].outputs[0].dtype not in _Q8:
            continue
        around.append(q[0])
        nbytes = sum(tensor_bytes(d.inputs[0]) for d in around[:-1]) + tensor_bytes(q[0].outputs[0])
        out.append((conv, around, nbytes, dqx.inputs[0].dtype))
    return out


_LN_FLOATS = frozenset({"float32", "float16", "bfloat16"})


def _quick_gelus(nodes, producer, users, consts, graph_outputs, value):
    """(Mul, the nodes before it, the kernel's bytes) of each SiLU that onnxruntime's QuickGeluFusion makes
    one QuickGelu kernel: ``x · Sigmoid(x)`` (SiLU, swish: EfficientNet's activation), or
    ``x · Sigmoid(α·x)`` with α a scalar constant, the Sigmoid (and the α Mul) read by the Mul alone, x
    float. The kernel reads x once and writes the product: its bytes are those two tensors' (checked on
    onnxruntime 1.32: EfficientNet-B0's 49 SiLUs run as QuickGelu, at ~0.35 ns per element here where a
    Sigmoid alone takes ~0.32-0.39 and the two unfused took 0.7)."""
    out = []

    def sole(t, node) -> bool:
        return t is not None and t.name not in graph_outputs and [u.key for u in users.get(t.name, ())] == [node.key]

    for mul in nodes:
        if mul.op_type != "Mul" or mul.domain or len(mul.inputs) != 2 or any(t is None for t in mul.inputs) \
                or not mul.outputs or mul.outputs[0] is None:
            continue
        for side in (0, 1):
            x, s_t = mul.inputs[1 - side], mul.inputs[side]
            sig = producer.get(s_t.name)
            if sig is None or sig.op_type != "Sigmoid" or sig.domain or not sole(s_t, mul) or x.dtype not in _GELU_FLOATS \
                    or not sig.inputs or sig.inputs[0] is None:
                continue
            around = [sig]
            if sig.inputs[0].name != x.name:  # x · Sigmoid(α·x)
                scale = producer.get(sig.inputs[0].name)
                if scale is None or scale.op_type != "Mul" or scale.domain or not sole(sig.inputs[0], sig) \
                        or len(scale.inputs) != 2 or x.name not in {t.name for t in scale.inputs if t is not None}:
                    continue
                alpha = [t for t in scale.inputs if t is not None and t.name != x.name]
                v = value(alpha[0].name) if len(alpha) == 1 and alpha[0].name in consts else None
                if v is None or v.size != 1:
                    continue
                around.append(scale)
            out.append((mul, around, tensor_bytes(x) + tensor_bytes(mul.outputs[0])))
            break
    return out


def _rms_norms(nodes, producer, users, consts, graph_outputs):
    """(last Mul, the nodes before it, the kernel's bytes) of each RMSNorm written out that onnxruntime's
    SimplifiedLayerNormFusion makes one SimplifiedLayerNormalization kernel (T5's and Llama's norm):

        v = ReduceMean(Pow(x, 2), last axis);  s = Sqrt(Add(v, ε));
        y = Mul(Div(x, s), γ)   or   y = Mul(Mul(x, Div(1, s)), γ)        (either order in each Mul)

    x optionally a Cast of the input (the exporter's ``.to(float32)``, inside the kernel when nothing else
    reads it), a Cast before the γ Mul (Llama's ``.to(dtype)``), every intermediate read by the next node
    alone, ε and γ constants. The kernel reads x (and γ) and writes y (checked on onnxruntime
    1.32: the corpus T5's 22 norms run as SimplifiedLayerNormalization, 59 µs each at [128, 512] here
    where the seven nodes were predicted 136)."""
    out = []

    def sole(t, node) -> bool:
        return t is not None and t.name not in graph_outputs and [u.key for u in users.get(t.name, ())] == [node.key]

    def only_user(t):
        us = users.get(t.name, ()) if t is not None and t.name not in graph_outputs else ()
        return us[0] if len(us) == 1 else None

    def other(n, name):
        rest = [t for t in n.inputs if t is not None and t.name != name]
        return rest[0] if len(rest) == 1 and len(n.inputs) == 2 else None

    for rm in nodes:
        if rm.op_type != "ReduceMean" or rm.domain or not rm.inputs or rm.inputs[0] is None or not rm.outputs:
            continue
        pw = producer.get(rm.inputs[0].name)
        if pw is None or pw.op_type != "Pow" or pw.domain or not sole(rm.inputs[0], rm) or pw.inputs[0] is None:
            continue
        x = pw.inputs[0]
        add = only_user(rm.outputs[0])
        if add is None or add.op_type != "Add" or other(add, rm.outputs[0].name) is None \
                or other(add, rm.outputs[0].name).name not in consts:
            continue
        sq = only_user(add.outputs[0])
        if sq is None or sq.op_type != "Sqrt":
            continue
        div = only_user(sq.outputs[0])
        if div is None or div.op_type != "Div" or len(div.inputs) != 2 or div.inputs[1] is None \
                or div.inputs[1].name != sq.outputs[0].name or div.inputs[0] is None:
            continue
        members = [pw, rm, add, sq, div]
        if div.inputs[0].name == x.name:  # Div(x, s)
            normed = div
        else:  # Mul(x, Div(1, s))
            if div.inputs[0].name not in consts:
                continue
            m1 = only_user(div.outputs[0])
            if m1 is None or m1.op_type != "Mul" or other(m1, div.outputs[0].name) is None \
                    or other(m1, div.outputs[0].name).name != x.name:
                continue
            members.append(m1)
            normed = m1
        reader = normed  # the node that reads x to normalize it
        last = only_user(normed.outputs[0])
        if last is not None and last.op_type == "Cast" and not last.domain and last.outputs and last.outputs[0] is not None:
            members.append(last)  # Llama's .to(input dtype) before the weight
            normed, last = last, only_user(last.outputs[0])
        gamma = other(last, normed.outputs[0].name) if last is not None and last.op_type == "Mul" else None
        if gamma is None or gamma.name not in consts or any(m.domain for m in members):
            continue
        # x read by the Pow and the normalizing node alone: a Cast producing it goes inside too
        cast = producer.get(x.name)
        src = x
        if cast is not None and cast.op_type == "Cast" and not cast.domain and cast.inputs and cast.inputs[0] is not None \
                and sorted(u.key for u in users.get(x.name, ())) == sorted({pw.key, reader.key}) \
                and x.name not in graph_outputs:
            members.insert(0, cast)
            src = cast.inputs[0]
        if last.outputs[0] is None:
            continue
        out.append((last, members, tensor_bytes(src) + tensor_bytes(gamma) + tensor_bytes(last.outputs[0])))
    return out


def _skip_layer_norms(a: Costs, nodes, producer, users, consts, graph_outputs):
    """(LayerNormalization, its Adds) that onnxruntime's SkipLayerNormFusion makes one
    SkipLayerNormalization: ``Add(x, skip) -> LayerNormalization`` where the Add's inputs are both 3-D
    of the same dims in the model *file* (equal values, or the same symbolic name: checked on
    onnxruntime 1.32, which fuses [batch, seq, H] + [batch, seq, H] but not [1, seq, H] + [batch,
    seq, H] nor 2-D or 4-D inputs), read once; with a bias Add (a 1-D constant of H) before either
    input (its formats 1 and 2)."""
    cands = []
    for ln in nodes:
        if ln.op_type != "LayerNormalization" or ln.domain or not ln.inputs or ln.inputs[0] is None:
            continue
        add1 = producer.get(ln.inputs[0].name)
        if add1 is None or add1.op_type != "Add" or add1.domain or len(add1.inputs) != 2 \
                or any(t is None or t.dtype not in _LN_FLOATS for t in (*add1.inputs, ln.inputs[0])) \
                or [u.key for u in users.get(ln.inputs[0].name, ())] != [ln.key] or ln.inputs[0].name in graph_outputs:
            continue
        cands.append((ln, add1))
    if not cands:
        return []
    shapes = a.loaded.file_shapes if a.loaded is not None else {}
    out = []
    for ln, add1 in cands:
        s0, s1 = (shapes.get(t.name) for t in add1.inputs)
        if s0 is None or s1 is None or len(s0) != 3 or len(s1) != 3 or \
                any(d is None or d == "" or d != e for d, e in zip(s0, s1)):
            continue
        adds = [add1]
        for side in (0, 1):  # format 1 (bias Add before input 0), then format 2 (before input 1)
            add2 = producer.get(add1.inputs[side].name)
            t = add1.inputs[side].name
            if add2 is None or add2.op_type != "Add" or add2.domain or len(add2.inputs) != 2 or \
                    [u.key for u in users.get(t, ())] != [add1.key] or t in graph_outputs:
                continue
            x, bias = add2.inputs
            sx, sb = shapes.get(x.name) if x is not None else None, shapes.get(bias.name) if bias is not None else None
            if bias is not None and bias.name in consts and sx is not None and sb is not None and len(sx) == 3 \
                    and len(sb) == 1 and isinstance(sx[2], int) and sx[2] == sb[0]:
                adds.append(add2)
                break
        out.append((ln, adds))
    return out


def _zero_pad(a: Costs, n, consts: set[str]) -> bool:
    """A constant-mode Pad with constant pads and a zero (or absent) fill value."""
    if a.loaded is None or n.scope:
        return False
    g = a.loaded.graph
    node = g.nodes[n.id]
    mode = next((at.s for at in node.attribute if at.name == "mode"), b"constant")
    if mode != b"constant":
        return False
    ins = list(node.input)
    if len(ins) >= 2 and ins[1] and ins[1] not in consts:
        return False
    if len(ins) >= 3 and ins[2]:
        v = g.const_value(ins[2])
        return v is not None and v.size == 1 and float(v.reshape(-1)[0]) == 0.0
    value = next((at.f for at in node.attribute if at.name == "value"), 0.0)
    return value == 0.0


#: (value, tolerance) of the constants onnxruntime's GeluFusion checks: atol 1e-8 + rtol 1e-5 of
#: the value (optimizer_utils::IsInitializerWithExpectedValue), so BERT's 1.4142099618911743 is √2
_GELU_SQRT2, _GELU_ONE, _GELU_HALF = 2 ** 0.5, 1.0, 0.5
_GELU_FLOATS = frozenset({"float32", "float16", "float64"})


def _gelu_islands(nodes, producer, users, consts, graph_outputs, value):
    """(members after the first, tensors they get for free) of each written-out GELU that
    onnxruntime's GeluFusion turns into one Gelu kernel: exactly its two patterns,

        x/√2 -> Erf -> +1 -> ·(x·0.5)        (pattern 1: the half on x)
        x/√2 -> Erf -> +1 -> ·x -> ·0.5      (pattern 2: the half last)

    with those constants (within its tolerance), float inputs, and every intermediate read once. Other
    spellings run node by node and are charged so (checked on onnxruntime 1.32: ``0.5·(1+erf)``
    before ``·x``, as the dynamo exporter writes it, and ``x·(1/√2)`` instead of ``x/√2``). A bias
    Add (a constant) before it is BiasGeluFusion: the Add keeps the traffic, the GELU rides on it."""

    def sole(t) -> list:
        """The one node reading ``t`` (empty when it is read by more, or is a graph output)."""
        if t is None or t.name in graph_outputs:
            return []
        us = users.get(t.name, ())
        return list(us) if len(us) == 1 else []

    def is_const(t, want: float) -> bool:
        if t is None or t.name not in consts:
            return False
        v = value(t.name)
        if v is None or v.size != 1:
            return False
        f = float(v.reshape(-1)[0])
        return abs(f - want) <= 1e-8 + 1e-5 * abs(want)

    def other(n, t_name: str):
        """``n``'s input that is not ``t_name`` (a binary op), or None."""
        rest = [t for t in n.inputs if t is not None and t.name != t_name]
        return rest[0] if len(rest) == 1 and len(n.inputs) == 2 else None

    out = []
    for div in nodes:
        if div.op_type != "Div" or div.domain or len(div.inputs) != 2 or div.inputs[0] is None \
                or not is_const(div.inputs[1], _GELU_SQRT2) or div.inputs[0].dtype not in _GELU_FLOATS:
            continue
        x = div.inputs[0].name
        erf = sole(div.outputs[0])
        if not erf or erf[0].op_type != "Erf":
            continue
        add = sole(erf[0].outputs[0])
        if not add or add[0].op_type != "Add" or not is_const(other(add[0], erf[0].outputs[0].name), _GELU_ONE):
            continue
        mul = sole(add[0].outputs[0])
        # the node that reads 1 + erf: a Mul by x·0.5 (pattern 1) or by x (pattern 2)
        if not mul or mul[0].op_type != "Mul":
            continue
        mul = mul[0]
        by = other(mul, add[0].outputs[0].name)
        if by is None:
            continue
        half = producer.get(by.name)
        if by.name == x:  # pattern 2: then · 0.5
            last = sole(mul.outputs[0])
            if not last or last[0].op_type != "Mul" or not is_const(other(last[0], mul.outputs[0].name), _GELU_HALF):
                continue
            island = [div, erf[0], add[0], mul, last[0]]
        elif half is not None and half.op_type == "Mul" and sole(by) and \
                other(half, x) is not None and is_const(other(half, x), _GELU_HALF):
            island = [div, erf[0], add[0], half, mul]  # pattern 1
        else:
            continue
        keys = {m.key for m in island}
        inner = {o.name for m in island for o in m.outputs if o is not None} - set(_last_outputs(island, users,
                                                                                                   graph_outputs))
        members = [m for m in nodes if m.key in keys]
        # the first member keeps its traffic (read x, write one tensor: the fused kernel's) ...
        rest = members[1:]
        bias = producer.get(x)
        if bias is not None and bias.op_type == "Add" and all(u.key in keys for u in users.get(x, ())) \
                and x not in graph_outputs and any(t is not None and t.name in consts for t in bias.inputs):
            rest = members  # ... or, for BiasGelu, the bias Add does and the whole GELU rides on it
        out.append((rest, inner | {x}))
    return out


def _last_outputs(members, users, graph_outputs) -> set[str]:
    """Outputs of ``members`` that leave the group (read outside it, or graph outputs)."""
    keys = {m.key for m in members}
    return {o.name for m in members for o in m.outputs
            if o is not None and (o.name in graph_outputs or any(u.key not in keys for u in users.get(o.name, ())))}


def _epilogue_kind(root: str, taken: frozenset[str], op: str, others, consts: set[str]) -> str | None:
    """What ``op`` adds to a chain rooted at ``root`` that has already ``taken`` some links, or None
    when onnxruntime does not fuse it there."""
    if "act" in taken:
        return None
    if root == "Conv" and not taken - {"fold"} and all(x.name in consts for x in others) and others and (
            op in ("Mul", "Div", "Add", "Sub") and _per_channel_or_scalar(others[0]) or op == "BatchNormalization"):
        return "fold"  # ConvMulFusion, ConvAddFusion, ConvBNFusion: into the weights and bias at load
    if op in FUSED_ACTIVATIONS and root in ("Conv", "Gemm"):
        return "act"
    if op in _ADDS and root == "Conv" and not taken - {"fold"}:
        return "add"
    if op == "Add" and root == "Gemm" and not taken and all(x.name in consts for x in others):
        return "add"
    if op in _SCALES and root == "MatMul" and not taken and len(others) == 1 and _is_scalar(others[0]) \
            and others[0].name in consts:
        return "scale"
    return None


def _per_channel_or_scalar(t) -> bool:
    """A constant that broadcasts per output channel of an NCHW conv: [C,1,1], [1,C,1,1], [1] or []."""
    if t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return False
    dims = list(t.shape)
    return _numel(dims) == 1 or (len(dims) >= 3 and all(d == 1 for d in dims[-2:]) and all(d == 1 for d in dims[:-3]))


def _constant_names(a: Costs) -> set[str]:
    if a.loaded is None:
        return set()
    g = a.loaded.graph
    return ({k for k in g.initializers if k not in set(g.inputs)} | set(g.constants))


#: the op family a fused kernel is timed as when it is not its host node's (the host of a fused RMSNorm is
#: its last Mul, an elementwise node; the kernel is a normalization)
_FUSED_FAMILY = {"SimplifiedLayerNormalization": "norm"}


def _as_fused_kernel(r: NodeRoofline, n, op: str, nbytes: int, ops: int, int_dtype: str | None,
                     spec: Spec) -> NodeRoofline:
    """The roofline of the fused kernel ``op`` that runs ``n`` and the nodes inside it: its
    operations and bytes at ``op``'s efficiencies (``op.<Op>.*``, then the family's; an 8-bit
    kernel, ``int_dtype``, at the integer peak and ``<family>.int8.*``), bytes at main-memory
    bandwidth,

        t = max(c, m) + α·min(c, m) + o,   c = W / (e_c · π),  m = Q / (e_m · β)"""
    integer, depthwise, _ = _kind(n)
    family = _FUSED_FAMILY.get(op, n.family)
    peak, dtype = (spec.peak_for(int_dtype), int_dtype) if int_dtype is not None else (r.peak_ops_per_s, r.dtype)
    own = n.bytes_read + n.bytes_written
    pool = nbytes * pool_bytes(n) / own if own else nbytes  # float16 at float32 width, as :func:`pool_bytes`
    e_c, e_m, overhead = efficiencies(spec, family, pool, integer or int_dtype is not None, depthwise, op)
    comp_s = ops / (peak * e_c) if ops else 0.0
    mem_s = nbytes / (spec.memory_bandwidth_bytes_per_s * e_m) if nbytes else 0.0
    t = max(comp_s, mem_s) + overlap(spec, family, integer or int_dtype is not None, depthwise, op) * min(
        comp_s, mem_s) + overhead
    return _row(r, dtype=dtype, ops=ops, bytes=nbytes, intensity=intensity(ops, nbytes), peak_ops_per_s=peak,
                   time_s=t, compute_s=comp_s, memory_s=mem_s, dispatch_s=overhead)


def _as_epilogue(r: NodeRoofline, n, free: frozenset[str], spec: Spec) -> NodeRoofline:
    """An epilogue's roofline: arithmetic at the compute roof, plus reading its inputs other than
    ``free`` (those the kernel already holds); no dispatch of its own."""
    e_m = efficiencies(spec, n.family, 0.0, *_kind(n))[1]
    other = sum(t_bytes for t_name, t_bytes in _input_bytes(n) if t_name not in free)
    mem_s = other / (spec.memory_bandwidth_bytes_per_s * e_m) if other else 0.0
    return _row(r, bytes=other, intensity=intensity(r.ops, other), time_s=max(r.compute_s, mem_s),
                   memory_s=mem_s, dispatch_s=0.0)


class _Bodies:
    """The time of a control-flow node: each node of its bodies timed as a main-graph node is (its
    roofline, dispatch overhead and efficiencies included: a loop body's kernels are launched every run),
    summed over the body, times the runs its cost counts (the trip count, the scanned length; an If's
    branch once). A body node without a time adds nothing (the costs already say the figure is partial).
    Without this a Loop was timed as one kernel moving all its bodies' bytes.

    On a spec with cache levels, a body whose working set (the distinct tensors its nodes read and write,
    weights included) fits a level reads it from there on every run after the first: a recurrent cell's
    weights stay in cache from one step to the next,

        t = t_run(main memory) + (runs − 1) · t_run(the innermost level that holds the working set)"""

    def __init__(self, a: Costs, spec: Spec, key: str | None, fold: bool = False, gpu: bool = False):
        self.spec, self.key = spec, key
        self.index = BodyIndex(a)
        self.by_scope = self.index.by_scope
        #: body nodes a runtime folds at load (constant inputs; with a GPU engine, Shape of a static
        #: tensor too), as it folds the main graph's: they take no time
        self.folded: set[str] = set()
        if fold and a.loaded is not None:
            shapes = {t.name: t.shape for n in a.nodes if n.scope for t in (*n.inputs, *n.outputs) if t is not None}

            def static(name: str) -> bool:
                shape = shapes.get(name)
                return shape is not None and all(isinstance(d, int) for d in shape)

            def walk(g, scope: str) -> None:
                for (idx, attr), sub in g.subgraphs.items():
                    inner = f"{scope}/{idx}/{attr}" if scope else f"{idx}/{attr}"
                    self.folded.update(f"{inner}/{i}" for i in foldable_nodes(sub, static if gpu else None))
                    walk(sub, inner)
            walk(a.loaded.graph, "")
        levels = tuple(getattr(spec, "memory_levels", ()) or ())
        self.capacities = tuple(lv.capacity_bytes for lv in levels)
        self.bandwidths = tuple(lv.bandwidth_bytes_per_s for lv in levels) + (spec.memory_bandwidth_bytes_per_s,)
        self.names = tuple(lv.name for lv in levels) + ("DRAM",)
        self._times: dict[tuple[str, bool], _Run] = {}
        #: kernels the bodies launch beyond their control nodes' own one (every run's, each body node one)
        self.launched = 0

    def _level(self, scope: str) -> int | None:
        """The innermost cache level that holds the body's working set, None when none does."""
        if not self.capacities:
            return None
        seen: dict[str, int] = {}
        for n in self.by_scope.get(scope, ()):
            for t in (*n.inputs, *n.outputs):
                if t is not None and t.name not in seen and t.shape is not None \
                        and all(isinstance(d, int) for d in t.shape):
                    seen[t.name] = dtypes.nbytes(dtypes.elem_type(t.dtype), math.prod(t.shape))
        size = sum(seen.values())
        return next((k for k, cap in enumerate(self.capacities) if size <= cap), None)

    def _scope(self, scope: str, cached: bool = False) -> _Run:
        """One run of a body; ``cached``: a run after the first, its working set in the cache level that
        holds it (if one does)."""
        hit = self._times.get((scope, cached))
        if hit is None:
            level = self._level(scope) if cached else None
            run = _Run()
            for n in self.by_scope.get(scope, ()):
                if n.key in self.folded:
                    continue
                r = node_roofline(n, self.spec, self.key)
                if r.time_s is None:
                    continue
                if is_control(n):
                    r, inner = self._timed(r, n)
                    run.kernels += inner
                    run.add(r, inner_bound=True)
                    continue
                if r.time_s > 0:
                    run.kernels += 1
                    if level is not None:
                        per_level = [0.0] * len(self.bandwidths)
                        per_level[level] = float(r.bytes)
                        r = _at_levels(r, n, per_level, self.bandwidths, self.names, self.spec)
                run.add(r)
            hit = self._times[(scope, cached)] = run
        return hit

    def timed(self, r: NodeRoofline, n) -> NodeRoofline:
        """``r`` (a main-graph control node's own roofline row) with the time of its bodies."""
        r, kernels = self._timed(r, n)
        self.launched += max(kernels - 1, 0)
        return r

    def _timed(self, r: NodeRoofline, n) -> tuple[NodeRoofline, int]:
        """The control node's row: its bodies' time, parts and time by limiter, over the runs its cost
        counts; its bound the limiter holding most of that time."""
        scopes = self.index.scopes(n)
        if not scopes:
            return r, 1
        sums = {sc: (sum(b.flops for b in self.by_scope[sc]), sum(b.bytes_written for b in self.by_scope[sc]))
                for sc in scopes}
        if n.op_type == "If":
            # the branch taken; else the one the cost counts (the costlier), else the slower
            chosen = scopes if len(scopes) == 1 else [sc for sc in scopes if sums[sc] == (n.flops, n.bytes_written)]
            scope = max(chosen or scopes, key=lambda sc: self._scope(sc).time_s)
            runs = 1
        else:
            scope = scopes[0]
            flops, written = sums[scope]
            runs = n.bytes_written // written if written else (n.flops // flops if flops else 1)
        first = self._scope(scope)
        total = first.times(1)
        if runs > 1:
            total = total.plus(self._scope(scope, cached=True).times(runs - 1))
        elif runs != 1:
            total = first.times(runs)
        if total.time_s == 0:
            return _as_folded(r), first.kernels * runs
        return _row(r, time_s=total.time_s, compute_s=total.compute_s, memory_s=total.memory_s,
                       dispatch_s=total.dispatch_s, bound=dominant(total.by_limiter),
                       bandwidth_bytes_per_s=max(r.bandwidth_bytes_per_s, total.bandwidth)), first.kernels * runs


class _Run:
    """The summed rows of one run of a body: time, its parts, time by limiter, the fastest bandwidth
    any of its bytes are charged at, and the kernels it launches."""

    def __init__(self) -> None:
        self.time_s = self.compute_s = self.memory_s = self.dispatch_s = self.bandwidth = 0.0
        self.by_limiter: dict[str, float] = {}
        self.kernels = 0

    def add(self, r: NodeRoofline, inner_bound: bool = False) -> None:
        """Add a body node's row (``inner_bound``: a control node, whose bound is already its bodies')."""
        self.time_s += r.time_s
        self.compute_s += r.compute_s
        self.memory_s += r.memory_s
        self.dispatch_s += r.dispatch_s
        self.bandwidth = max(self.bandwidth, r.bandwidth_bytes_per_s)
        b = r.bound if inner_bound else limiter(r.time_s, r.compute_s, r.memory_s, r.dispatch_s, r.fill)
        if b in LIMITERS:
            self.by_limiter[b] = self.by_limiter.get(b, 0.0) + r.time_s

    def times(self, k: float) -> _Run:
        out = _Run()
        out.time_s, out.compute_s, out.memory_s, out.dispatch_s = (
            self.time_s * k, self.compute_s * k, self.memory_s * k, self.dispatch_s * k)
        out.bandwidth, out.kernels = self.bandwidth, self.kernels
        out.by_limiter = {b: t * k for b, t in self.by_limiter.items()}
        return out

    def plus(self, other: _Run) -> _Run:
        out = _Run()
        out.time_s, out.compute_s = self.time_s + other.time_s, self.compute_s + other.compute_s
        out.memory_s, out.dispatch_s = self.memory_s + other.memory_s, self.dispatch_s + other.dispatch_s
        out.bandwidth, out.kernels = max(self.bandwidth, other.bandwidth), self.kernels
        out.by_limiter = {b: self.by_limiter.get(b, 0.0) + other.by_limiter.get(b, 0.0)
                          for b in {*self.by_limiter, *other.by_limiter}}
        return out


def _as_folded(r: NodeRoofline) -> NodeRoofline:
    """A node computed at load time, or run inside another node's kernel at no cost of its own:
    nothing left to run."""
    return _row(r, time_s=0.0, compute_s=0.0, memory_s=0.0, dispatch_s=0.0)


def _input_bytes(n) -> list[tuple[str, int]]:
    """(name, bytes) of each input whose size is known."""
    return [(i.name, tensor_bytes(i)) for i in n.inputs
            if i is not None and i.shape is not None and all(isinstance(d, int) for d in i.shape)]


#: the per-op key of a Transpose that onnxruntime's CPU kernel copies element by element
ELTWISE_TRANSPOSE = "Transpose.eltwise"
#: the per-op key of a float Conv whose weight is computed at run time (a QDQ model's DequantizeLinear,
#: which onnxruntime does not fold): the NCHWc layout transformer wants a constant weight, so the conv
#: runs in NCHW (FusedConv, im2col + SGEMM) at ~2/3 of the NCHWc conv's rate (calibration's
#: ``conv3x3_64_dq_weight``: ``op.Conv.nchw.*``; ResNet-18 QDQ's float convs: 1.4 ms where the fp32
#: export's same convs take 0.9)
RUNTIME_WEIGHT_CONV = "Conv.nchw"
#: the per-op key of an Expand that broadcasts its innermost dim from 1: onnxruntime copies each input
#: element to its place and doubles it out, ~70 ns per input element here whatever the width (8 to 128),
#: where a broadcast of an outer dim copies whole rows (Swin V2-T's [64, 3, 64, 1] -> [64, 3, 64, 32]:
#: 1 ms for 1.6 MB); calibration's ``expand_inner_x32`` fits ``op.Expand.inner.*``
INNER_EXPAND = "Expand.inner"
#: the per-op key of an 8-bit matrix product whose B operand is computed at run time (a QOperator
#: attention's q·kᵀ and attn·v): MLAS packs B every run and loops over the batch: QOperator ViT-B/16's
#: [12, 197, 64] x [12, 64, 197] ran at 120-140 Gop/s where its weight products ran at 620-710;
#: calibration's ``qlinearmatmul_bmm_16x128`` fits ``op.MatMul.int8.dynamic.*``
DYNAMIC_INT8_MATMUL = "MatMul.int8.dynamic"
#: B's input index of the 8-bit matrix products
_INT8_MATMUL_B = {"QLinearMatMul": 3, "MatMulInteger": 1}


def op_keys(a: Costs) -> dict[str, str]:
    """Main-graph nodes whose per-op efficiency key is not their op type: a Transpose that moves the
    innermost axis and is not a single axis moved (onnxruntime's DoTransposeEltWise, one element at
    a time: MaxViT's 6-D window partitions, perm (0,5,1,3,2,4), take 170-200 µs for 400 KB where a
    (0,2,1,3) takes 10) looks up ``op.Transpose.eltwise.*``; the others ``op.Transpose.*``. A float,
    not depthwise Conv whose weight is neither a constant nor folded at load looks up
    ``op.Conv.nchw.*`` (:data:`RUNTIME_WEIGHT_CONV`), then ``conv.*``; an Expand broadcasting its innermost
    dim ``op.Expand.inner.*`` (:data:`INNER_EXPAND`); an 8-bit matrix product whose B is computed at run
    time ``op.MatMul.int8.dynamic.*`` (:data:`DYNAMIC_INT8_MATMUL`)."""
    if a.loaded is None:
        return {}
    g = a.loaded.graph
    out = {}
    for n in a.main_nodes:
        if n.op_type != "Transpose" or n.domain or n.scope:
            continue
        node = g.nodes[n.id]
        perm = next((list(at.ints) for at in node.attribute if at.name == "perm"), None)
        if perm is None and n.inputs and n.inputs[0] is not None and n.inputs[0].shape is not None:
            perm = list(range(len(n.inputs[0].shape)))[::-1]  # the default: reverse every axis
        if perm and _eltwise_perm(perm):
            out[n.key] = ELTWISE_TRANSPOSE
    for n in a.main_nodes:
        if n.op_type == "Expand" and not n.domain and not n.scope and _inner_broadcast(n):
            out[n.key] = INNER_EXPAND
    consts = _constant_names(a)
    lazy: list = []  # (folded keys, producers), made on the first question

    def computed(t) -> bool:
        """``t`` is computed at every run: neither a constant nor the output of a node folded at load."""
        if t is None or t.name in consts:
            return False
        if not lazy:
            lazy.append((folded(a), links(a.main_nodes)[0]))
        gone, producer = lazy[0]
        p = producer.get(t.name)
        return p is None or p.key not in gone

    for n in a.main_nodes:
        b_at = _INT8_MATMUL_B.get(n.op_type)  # an 8-bit product of two computed tensors (a quantized attention)
        if b_at is not None and not n.scope and len(n.inputs) > b_at and computed(n.inputs[b_at]):
            out[n.key] = DYNAMIC_INT8_MATMUL
        elif n.op_type == "Conv" and not n.domain and not n.scope and len(n.inputs) >= 2 and not is_depthwise(n) \
                and not n.int_ops and computed(n.inputs[1]):
            out[n.key] = RUNTIME_WEIGHT_CONV
    return out


def _inner_broadcast(n) -> bool:
    """An Expand whose innermost output dim is broadcast from 1 (Swin V2's [64, 3, 64, 1] -> [64, 3, 64, 32])."""
    x = n.inputs[0] if n.inputs else None
    y = n.outputs[0] if n.outputs else None
    if x is None or y is None or not x.shape or not y.shape:
        return False
    xi, yi = x.shape[-1], y.shape[-1]
    return (len(x.shape) <= len(y.shape) and isinstance(xi, int) and isinstance(yi, int) and xi == 1 and yi > 1)


def _eltwise_perm(perm: list[int]) -> bool:
    """The innermost axis moves, and the permutation is not one axis moved elsewhere (those
    onnxruntime copies by rows: (0,2,1) of a 3-D tensor)."""
    rank = len(perm)
    if rank < 2 or perm[-1] == rank - 1:
        return False
    ident = list(range(rank))
    for i in range(rank):
        rest = ident[:i] + ident[i + 1:]
        for j in range(rank):
            if rest[:j] + [i] + rest[j:] == perm:
                return False
    return True


def roofline(a: Costs, spec: Spec, precision=None) -> RooflineResult:
    """The execution plan of an analysis on a hardware spec (:mod:`onnxperf.predict.plan`): per node its
    placement, the parts of its predicted time, its limiter and its rate against the named peak, and
    the latency; ``precision`` (:class:`onnxperf.predict.precision.Precision`, with ``a`` its
    :func:`~onnxperf.predict.precision.what_if`): floating-point arithmetic at that precision's peak."""
    key = precision.peak_key if precision is not None else None
    eff = getattr(spec, "efficiency", None) or {}
    ops = op_keys(a) if eff else {}
    nodes = a.main_nodes
    raw = [node_roofline(n, spec, key, ops.get(n.key)) for n in nodes]
    levels = tuple(getattr(spec, "memory_levels", ()) or ())
    by_level: tuple[tuple[str, float], ...] = ()
    at_levels = None
    if levels:
        both, rw = level_bytes_and_rw(a, tuple(lv.capacity_bytes for lv in levels),
                                      gpu=float(eff.get("fusion.gpu", 0)) >= 1,
                                      writes_held=float(eff.get("gpu.l2_writes", 0)) >= 1)
        lb = {k: tuple(r + w for r, w in zip(*v)) for k, v in rw.items()} if float(eff.get("fusion.gpu", 0)) >= 1 \
            else both
        bws = tuple(lv.bandwidth_bytes_per_s for lv in levels) + (spec.memory_bandwidth_bytes_per_s,)
        names = tuple(lv.name for lv in levels) + ("DRAM",)
        raw = [_at_levels(r, n, lb.get(n.key), bws, names, spec, ops.get(n.key)) for r, n in zip(raw, nodes)]
        by_level = tuple((nm, sum(v[k] for v in lb.values())) for k, nm in enumerate(names))
        at_levels = (rw, bws, names)
    pool = spec_pool(spec)
    if pool is not None:
        raw = _with_threads(raw, nodes, spec, pool, ops, channels_last_attrs(a), gather_axes(a))
        if steps_calibrated(spec) is not None:
            raw = _with_steps(raw, nodes, spec, pool, layouts(a))
    gone = fu = plan = None
    assists_unknown = 0
    fk: dict = {}
    cast_s = 0.0
    if float(eff.get("fusion.constant_folding", 0)) >= 1:
        gone = folded(a)
        raw = [(_as_folded(r) if r.key in gone and r.time_s is not None else r) for r in raw]
    if float(eff.get("fusion.epilogue", 0)) >= 1:
        fu = fusions(a)
        raw = [(_as_folded(r) if (n.key in fu.absorbed or n.key in fu.inside) and r.time_s is not None else
                _as_epilogue(r, n, fu.epilogue[n.key], spec) if n.key in fu.epilogue and r.time_s is not None else
                _as_fused_kernel(r, n, *fu.runs_as[n.key], spec) if n.key in fu.runs_as and r.time_s is not None
                else r)
               for r, n in zip(raw, nodes)]
        raw = _with_copies(raw, fu.copies)
    if float(eff.get("fusion.gpu", 0)) >= 1:
        plan = kernel_plan(a)
        raw = _as_kernels(raw, nodes, plan, spec, at_levels)
    else:
        if float(eff.get("subnormal.assist_s", 0)) > 0:
            uf = underflows(a)
            raw = _with_assists(raw, uf.assists_by_node(), float(eff["subnormal.assist_s"]))
            assists_unknown = len(uf.not_evaluated)
        if float(eff.get(SPAN_KEY, 0)) > 0:
            fused = set(gone or ()) | (set(fu.absorbed) | set(fu.inside) | set(fu.epilogue) | set(fu.runs_as)
                                       if fu is not None else set())
            raw = _with_spans(raw, nodes, fused, float(eff[SPAN_KEY]),
                              float(eff.get(QLINEAR_SPAN_KEY, 0)) or float(eff[SPAN_KEY]))
        if float(eff.get(RUN_KEY, 0)) > 0:
            qlinear = {k for k, v in fu.runs_as.items() if v[0] == "QLinearConv"} if fu is not None else set()
            raw = _with_runs(raw, nodes, float(eff[RUN_KEY]), qlinear)
        if float(eff.get("fusion.epilogue", 0)) >= 1:  # onnxruntime's CPU provider, as calibrated
            fk = float_kernels(a, lambda: _constant_names(a), set(gone or ()))
            if fk:
                raw, cast_s = _on_float_kernels(raw, nodes, fk, spec)
    body_kernels = 0
    controlled: set[str] = set()
    if a.model.nodes_in_subgraphs:
        fold = float(eff.get("fusion.constant_folding", 0)) >= 1 or float(eff.get("fusion.gpu", 0)) >= 1
        bodies = _Bodies(a, spec, key, fold, gpu=float(eff.get("fusion.gpu", 0)) >= 1)
        timed = []
        for r, n in zip(raw, nodes):
            if is_control(n) and r.time_s is not None and bodies.index.scopes(n):
                r = bodies.timed(r, n)
                controlled.add(n.key)
            timed.append(r)
        raw = timed
        body_kernels = bodies.launched
    run_overhead = float(eff.get("overhead_run_s", 0.0))
    kernels = sum(r.time_s for r in raw if r.time_s is not None)
    placed = placements(nodes, gone, fu, plan)
    rows = tuple(_finished(r, placed[r.key], kernels, r.key in controlled) for r in raw)
    by_bound = {b: sum(r.time_s for r in rows if r.bound == b and r.time_s) for b in LIMITERS}
    return RooflineResult(
        spec_id=spec.id, ridge_fp32=ridge_point(spec.peak_for("float32"), spec.memory_bandwidth_bytes_per_s),
        nodes=rows, latency_s=kernels + run_overhead, unknown_nodes=sum(r.time_s is None for r in rows),
        compute_bound_time_s=by_bound[COMPUTE], memory_bound_time_s=by_bound[MEMORY],
        by_op_type=_by_op_type(rows, kernels), run_overhead_s=run_overhead, lower_bound=False,
        plain=not eff, compute_floor_s=sum(r.ops / r.peak_ops_per_s for r in rows if r.ops and r.peak_ops_per_s),
        kernels=None if plan is None else plan.kernel_count + body_kernels,
        assumed=() if plan is None else plan.assumed, not_assumed=() if plan is None else NOT_ASSUMED,
        bytes_by_level=by_level, cost_side=a.totals.side,
        fill_bound_time_s=by_bound[FILL], dispatch_bound_time_s=by_bound[DISPATCH],
        prediction=("GPU kernel model" if plan is not None else "calibrated, onnxruntime's CPU fusions"
                    if fu is not None else "calibrated" if eff else "plain roofline"),
        band=band_of(spec), assists_unknown=assists_unknown, float_kernel_nodes=len(fk),
        inserted_casts=sum(len(f.casts) for f in fk.values()), inserted_cast_s=cast_s,
        runtime_threads=pool,
    )


def _with_threads(raw: list[NodeRoofline], nodes, spec: Spec, pool: int, ops: dict,
                  last: frozenset[str], axes: dict[str, int]) -> list[NodeRoofline]:
    """Rows of the kernels that choose their threads by onnxruntime's own cost model
    (:func:`onnxperf.predict.ort_threads.kernel_threads`), on a spec calibrated at ``pool`` threads
    (``runtime.threads``): a kernel on k of them takes its arithmetic and traffic P/k times as long as the
    calibrated efficiencies (fitted on kernels that used all P) say, and pays the thread pool's dispatch only
    when it splits,

        c' = c · P/k,   m' = m · P/k,   t' = max(c', m') + α·min(c', m') + o + [k > 1]·o_p

    (o ``overhead_s``, o_p ``overhead_parallel_s``, in place of the rule by bytes of :func:`efficiencies`).
    ``last``: the keys of nodes whose own ``channels_last`` attribute is set; ``axes``: each Gather's axis."""
    eff = getattr(spec, "efficiency", None) or {}
    nhwc = channels_last(nodes)
    base, parallel = float(eff.get("overhead_s", 0.0)), float(eff.get("overhead_parallel_s", 0.0))
    out = []
    for r, n in zip(raw, nodes):
        k = kernel_threads(n, pool, nhwc, n.key in last, axes.get(n.key)) if r.time_s is not None else None
        if k is None:
            out.append(r)
            continue
        c, m = r.compute_s * pool / k, r.memory_s * pool / k
        o = base + (parallel if k > 1 else 0.0)
        t = max(c, m) + overlap(spec, n.family, *_kind(n, ops.get(n.key))) * min(c, m) + o
        out.append(_row(r, time_s=t, compute_s=c, memory_s=m, dispatch_s=o, threads=k))
    return out


def _with_steps(raw: list[NodeRoofline], nodes, spec: Spec, pool: int, layout: dict[str, int]) -> list[NodeRoofline]:
    """Rows of the LSTMs and GRUs as onnxruntime's CPU kernels run them step by step
    (:mod:`onnxperf.predict.recurrence`), on a spec calibrated with the steps' constants (β, c, s): the input
    projection at the matrix products' rate, then every step on the thread that sets it,

        c' = W_g / (e_matmul·π) + S · (max(B / β, F / φ) + U·c),   φ = e_matmul·π / P
        o' = o + S_pool · s,   t = max(c', m) + α·min(c', m) + o'

    (S the steps, S_pool the hand-offs of their GEMMs through the pool, m the node's traffic as before)."""
    beta, cell, hand = steps_calibrated(spec)
    e_mm = efficiencies(spec, "matmul")[0]
    out = []
    for r, n in zip(raw, nodes):
        st = recurrence_steps(n, pool, layout.get(n.key, 0)) if r.time_s is not None and r.peak_ops_per_s else None
        if st is None:
            out.append(r)
            continue
        rate = e_mm * r.peak_ops_per_s
        c_cell = cell_s(spec, n.op_type, cell)
        c = min(rnn_gemm_flops(n), n.flops or 0) / rate + st.steps * step_s(st, rate / pool, beta, c_cell)
        o = r.dispatch_s + st.pool_steps * hand
        m = r.memory_s
        t = max(c, m) + overlap(spec, n.family, *_kind(n)) * min(c, m) + o
        parts = (st.stream_bytes / beta, st.step_flops / (rate / pool), st.cell_units * c_cell,
                 st.pool_steps * hand / st.steps if st.steps else 0.0)
        out.append(_row(r, time_s=t, compute_s=c, dispatch_s=o, steps=st.steps, step_parts=parts))
    return out


def _with_copies(raw: list[NodeRoofline], copies: dict[str, int]) -> list[NodeRoofline]:
    """Rows of the nodes onnxruntime runs k > 1 kernels for (``copies``, :mod:`onnxperf.predict.unique_dq`):
    each kernel does the node's whole work, so its operations, bytes and every part of its time are k times
    the node's,

        W' = k·W,   Q' = k·Q,   c' = k·c,   m' = k·m,   o' = k·o,   t' = k·t

    (its intensity, roof and share of peak unchanged)."""
    out = []
    for r in raw:
        k = copies.get(r.key, 1)
        if k == 1 or r.time_s is None:
            out.append(r)
            continue
        out.append(_row(r, ops=r.ops * k, bytes=r.bytes * k, written=r.written * k, time_s=r.time_s * k,
                           compute_s=r.compute_s * k, memory_s=r.memory_s * k, dispatch_s=r.dispatch_s * k,
                           assist_s=r.assist_s * k, span_s=r.span_s * k, copies=k))
    return out


def _with_assists(raw: list[NodeRoofline], assists: dict[str, int], assist_s: float) -> list[NodeRoofline]:
    """Rows with the time of their microcode assists on subnormal values added to their arithmetic: a
    Softmax whose masked exponentials underflow and the MatMul reading its subnormal probabilities
    (:mod:`onnxperf.cost.subnormal`, which counts the assisted vector operations A of each node),

        t' = t + A·a,   c' = c + A·a

    with a the spec's ``subnormal.assist_s``, the time of one assist at the runtime's thread count as
    calibration measures it (:func:`onnxperf.products.calibration.run.subnormal_assist`). A node that
    does not run (folded, inside another's kernel) takes none."""
    if not assists:
        return raw
    out = []
    for r in raw:
        k = assists.get(r.key, 0)
        if k and r.time_s is not None and r.time_s > 0:
            extra = k * assist_s
            r = _row(r, time_s=r.time_s + extra, compute_s=r.compute_s + extra, assist_s=extra)
        out.append(r)
    return out


def _on_float_kernels(raw: list[NodeRoofline], nodes, fk: dict, spec: Spec) -> tuple[list[NodeRoofline], float]:
    """float16 nodes that onnxruntime's CPU provider runs on the float kernel (:mod:`.float_kernels`): the
    node's memory time scaled to its bytes at float32 width (m' = m · Q'/Q), its time re-evaluated
    (t' = t − max(c, m) − α·min(c, m) + max(c, m') + α·min(c, m')), plus the Casts it brings, each of n
    elements one kernel moving 6n bytes at the movement family's memory share:
    t_cast = 6n / (e_m · β) + o. Returns the rows and the Casts' time in all."""
    _, e_mv, o = efficiencies(spec, "movement", 0.0, op="Cast")
    bw = spec.memory_bandwidth_bytes_per_s
    out = []
    casts_s = 0.0
    for r, n in zip(raw, nodes):
        f = fk.get(n.key)
        if f is None or not r.time_s:
            out.append(r)
            continue
        before = n.bytes_read + n.bytes_written
        k = (f.bytes_read + f.bytes_written) / before if before else 1.0
        c, m = r.compute_s, r.memory_s
        m2 = m * k
        a = overlap(spec, n.family, *_kind(n))
        t = r.time_s - max(c, m) - a * min(c, m) + max(c, m2) + a * min(c, m2)
        cast_bytes = sum(6 * x for x in f.casts)
        cast_m = cast_bytes / (bw * e_mv) if cast_bytes else 0.0
        cast_o = o * len(f.casts)
        nbytes = round(r.bytes * k) + cast_bytes
        out.append(_row(r, bytes=nbytes, intensity=intensity(r.ops, nbytes), memory_s=m2 + cast_m,
                           time_s=t + cast_m + cast_o, dispatch_s=r.dispatch_s + cast_o))
        casts_s += cast_m + cast_o
    return out, casts_s


def _with_spans(raw: list[NodeRoofline], nodes, fused: set[str], span_s: float,
                qspan_s: float) -> list[NodeRoofline]:
    """Rows with their broadcast loop's spans added to their overhead: an elementwise node that runs its
    own kernel over S > 1 spans (:func:`onnxperf.predict.broadcast.node_spans`; a QLinear binary op of a
    graph onnxruntime runs channels-last counted in NHWC),

        t' = t + S·s,   o' = o + S·s

    with s the spec's ``broadcast.span_s``, one span's call and setup as calibration measures it
    (:func:`onnxperf.products.calibration.run.broadcast_span`), for QLinearAdd / QLinearMul ``qspan_s``
    (``broadcast.qlinear.span_s``, else the float one). A node fused into another's kernel, or folded,
    loops over nothing of its own."""
    nhwc = channels_last(nodes)
    out = []
    for r, n in zip(raw, nodes):
        k = node_spans(n, nhwc) if r.key not in fused else 0
        if k > 1 and r.time_s is not None and r.time_s > 0:
            extra = k * (qspan_s if is_qlinear_binary(n) else span_s)
            r = _row(r, time_s=r.time_s + extra, dispatch_s=r.dispatch_s + extra, span_s=extra)
        out.append(r)
    return out


def _with_runs(raw: list[NodeRoofline], nodes, run_s: float, qlinear: set[str]) -> list[NodeRoofline]:
    """Rows with their im2col runs added to their arithmetic: a QLinearConv (or a Conv of ``qlinear``, run
    as one) that gathers its input into a column buffer of R runs (:func:`onnxperf.predict.im2col.im2col_runs`),

        t' = t + R·r,   c' = c + R·r

    with r the spec's ``conv.int8.run_s``, one run's copy as calibration fits it (the copies run inside
    the kernel, before its GEMM, not under its memory traffic)."""
    out = []
    for r, n in zip(raw, nodes):
        k = im2col_runs(n, n.key in qlinear)
        if k and r.time_s is not None and r.time_s > 0:
            extra = k * run_s
            r = _row(r, time_s=r.time_s + extra, compute_s=r.compute_s + extra)
        out.append(r)
    return out


def _finished(r: NodeRoofline, p: Placement, kernels: float, control: bool) -> NodeRoofline:
    """A row with the facts every output reads: its placement, limiter (a control node's: its bodies',
    already set), roof, attained rate, share of peak and share of the node time."""
    if r.time_s is None:
        return _row(r, runs=p.runs, kernel=p.kernel, how=p.how, runs_as=p.runs_as, bound=NONE)
    bound = r.bound if control else limiter(r.time_s, r.compute_s, r.memory_s, r.dispatch_s, r.fill)
    i = r.intensity
    roof = (min(r.peak_ops_per_s, i * r.bandwidth_bytes_per_s) if i is not None else
            r.peak_ops_per_s if r.ops else 0.0)
    attained = r.ops / r.time_s if r.time_s > 0 else None
    return _row(r, runs=p.runs, kernel=p.kernel, how=p.how, runs_as=p.runs_as, bound=bound,
                   attainable_ops_per_s=roof, attained_ops_per_s=attained,
                   peak_share=attained / r.peak_ops_per_s if attained is not None and r.peak_ops_per_s else None,
                   share=None if kernels == 0 else r.time_s / kernels)


def _at_levels(r: NodeRoofline, n, per_level, bandwidths: tuple[float, ...], names: tuple[str, ...], spec: Spec,
               op: str | None = None) -> NodeRoofline:
    """A node's roofline on the cache-aware roofline (:mod:`onnxperf.predict.reuse`): its bytes at each level
    over that level's bandwidth,

        m = Σ_k b_k / (e_m · β_k),   t = max(c, m) + α·min(c, m) + o

    with c, e_m, α and o as in :func:`node_roofline`. Its roof's bandwidth is the fastest level serving
    any of its bytes; its ``level`` the one its memory time mostly goes to."""
    if per_level is None or r.time_s is None:
        return r
    kind = _kind(n, op)
    e_m = efficiencies(spec, n.family, r.bytes, *kind)[1]
    parts = [(b / (bw * e_m), bw, name) for b, bw, name in zip(per_level, bandwidths, names) if b]
    mem_s = sum(p[0] for p in parts)
    t = max(r.compute_s, mem_s) + overlap(spec, n.family, *kind) * min(r.compute_s, mem_s) + r.dispatch_s
    return _row(r, time_s=t, memory_s=mem_s, bandwidth_bytes_per_s=max((p[1] for p in parts),
                                                                        default=r.bandwidth_bytes_per_s),
                   level=max(parts, key=lambda p: p[0])[2] if parts else None)


#: a matrix product with this many output rows or fewer runs as a GEMV / split-K kernel (:func:`fill`)
GEMV_ROWS = 16
#: op families whose kernels are tiled over their output (GEMM, convolution)
_TILED = frozenset({"conv", "matmul"})


def half_rate_outputs(spec: Spec, peak: float | None = None) -> float:
    """The output elements per SM at which a GEMM or convolution kernel attains half its rate, for a
    kernel whose arithmetic runs at ``peak`` (0 for a spec without the GPU's fill constants):

        k = gpu.outputs_per_sm · max(1, P / P_fp16),   P the kernel's peak, P_fp16 the tensor cores' fp16 rate

    ``gpu.outputs_per_sm`` is the figure at the fp16 tensor rate; a kernel at a faster rate (int8, fp8,
    fp4) needs that many times the outputs to fill the GPU. Fitted, not derived: on the published
    TensorRT rows (``benchmarks/gpu_realism.py``) the int8 ResNet-50 and BERT sweeps saturate at about
    twice the fp16 batch (an A100's int8 ResNet-50 at batch 1 was predicted 2.06x too fast with one
    constant for both), and scaling the constant this way lowers the Ampere class's fit error
    (rms log ratio 0.182 -> 0.150) with no constant added. A slower rate (tf32, fp32) keeps it: scaled
    down for them the A100's tf32 ResNet-50 rows at batch 1 went from 1.01 to 1.48x optimistic. P_fp16 is the
    spec's fp16 peak, or ``gpu.fp16_acc16_flops`` where it has one: a GeForce card's fp16 peak is the rate with
    fp32 accumulation, half the tensor cores' native fp16 rate, and taken as the reference it scaled an int8
    kernel's fill by 4x where every other GPU's is 2x (the RTX 4090's MLPerf ResNet-50 rows at batch 1 and 8
    0.43-0.62 of the published, 0.72-0.97 on the native rate)."""
    eff = getattr(spec, "efficiency", None) or {}
    per_sm = float(eff.get("gpu.outputs_per_sm", 0) or 0)
    ref = float(eff.get("gpu.fp16_acc16_flops", 0) or 0) or \
        float((getattr(spec, "peak_flops_per_s", None) or {}).get("fp16", 0) or 0)
    if per_sm <= 0:
        return 0.0
    return per_sm * max(1.0, peak / ref) if peak and ref > 0 else per_sm


def fill(n, spec: Spec, peak: float | None = None) -> float:
    """The share of a GPU's arithmetic rate that a GEMM or convolution kernel attains for its size
    (1 for other kernels, and for a spec without ``gpu.sms``):

        fill = N / (N + S·k),   N = the kernel's output elements, S = ``gpu.sms``, k = :func:`half_rate_outputs`

    Half the rate when the output is S·k elements, rising towards 1 as it grows: a small output is
    few tiles, too few to give every streaming multiprocessor work and hide its latency (NVIDIA's
    "Matrix Multiplication Background" guide: tile and wave quantization). A batch-1 ResNet-50's last
    stage (7x7x2048 outputs) gets a fifth of an A100 this way. Arithmetic time is divided by it.
    ``peak``: the peak the kernel's arithmetic runs at (k grows above the fp16 rate). A matrix
    product with at most :data:`GEMV_ROWS` output rows (a decode step's projections) is exempt: GPU
    libraries run it as a GEMV / split-K kernel that spreads its weights over every SM and stays
    memory-bound."""
    eff = getattr(spec, "efficiency", None) or {}
    sms = float(eff.get("gpu.sms", 0) or 0)
    per_sm = half_rate_outputs(spec, peak)
    if sms <= 0 or per_sm <= 0 or n.family not in _TILED or not n.outputs or n.outputs[0] is None:
        return 1.0
    shape = n.outputs[0].shape
    if shape is None or not all(isinstance(d, int) for d in shape):
        return 1.0
    out = 1
    for d in shape:
        out *= d
    if n.family == "matmul" and shape and shape[-1] and out // shape[-1] <= GEMV_ROWS:
        return 1.0  # a GEMV-like product streams its weights split along K over every SM
    return out / (out + sms * per_sm) if out > 0 else 1.0


def _as_kernels(raw: list[NodeRoofline], nodes, plan, spec: Spec, levels=None) -> list[NodeRoofline]:
    """Node rooflines under a GPU kernel plan (:mod:`onnxperf.predict.gpu_kernels`). Each member i of a
    kernel reads only the tensors its kernel has not computed or read already, and writes only the tensors
    that leave the kernel; the kernel overlaps its members' arithmetic with their memory traffic (a Conv's
    tensor-core work with the write its Relu / residual Add epilogue makes of the kernel's output) and pays
    the launch overhead once:

        t_K = max(Σ c_i / f_i, Σ m_i) + α·min(Σ c_i / f_i, Σ m_i) + o,   m_i = (read'_i + written'_i) / (e_m·β)

    with c_i a member's arithmetic at its family's attainable compute (as :func:`node_roofline`), f_i the
    fill of the member that launches the kernel (:func:`fill`, at its peak; 1 for the others), α and o the
    launching member's. The row of the node that starts the kernel carries t_K, its parts and every
    member's bytes (its ``ops`` stay its own, so its rate is its own arithmetic's); the other members run
    inside it at no time of their own, as onnxruntime's CPU fusions place theirs. (Summing the members'
    own max(c_i / f_i, m_i) instead priced a Conv + Relu at max(c, m_conv) + m_relu: 1.14-1.22x the
    overlapped time at large batch: ResNet-50 int8 on an L4 at batch 64, 10.0 against 8.5 ms.)

    With memory levels (``levels`` = (per node its bytes read and written at each level, bandwidths,
    names), innermost first, DRAM last: a GPU's L2), a member's reads are served by the levels in the
    proportions the reuse model gives the node's reads, its writes in those of its writes (all at DRAM for
    a GPU: :func:`onnxperf.predict.reuse.level_bytes_rw`):

        m_i = read'_i · Σ_k (r_k / Σ r) / (e_m·β_k) + written'_i · Σ_k (w_k / Σ w) / (e_m·β_k)"""
    rw, bws, names = levels if levels else ({}, (), ())
    charged = charged_bytes(nodes, plan, {r.key for r in raw if r.time_s is not None})
    parts_of: dict[str, _KernelParts] = {}
    out: list[NodeRoofline] = []
    carrier: dict[str, int] = {}  # kernel -> index in ``out`` of the row that carries its time
    for r, n in zip(raw, nodes):
        if n.key in plan.free:
            out.append(_as_folded(r) if r.time_s is not None else r)
            continue
        if r.time_s is None:
            out.append(r)
            continue
        kernel = plan.kernel.get(n.key, n.key)
        reads, written = charged[n.key]
        nbytes = reads + written
        _, e_m, overhead = efficiencies(spec, n.family)
        launches = n.key in plan.launches
        f = fill(n, spec, r.peak_ops_per_s) if launches else 1.0
        k = parts_of.setdefault(kernel, _KernelParts())
        k.compute_s += r.compute_s / f
        k.bytes += nbytes
        k.written += written
        split = rw.get(n.key)
        if nbytes and split:
            for q, per_level in ((reads, split[0]), (written, split[1])):
                total = sum(per_level)
                if q and total:
                    for b, beta, nm in zip(per_level, bws, names):
                        if b:
                            k.at(nm, beta, q * b / total / (beta * e_m))
                elif q:
                    k.at(names[-1], spec.memory_bandwidth_bytes_per_s, q / (spec.memory_bandwidth_bytes_per_s * e_m))
        elif nbytes:
            k.at(r.level, spec.memory_bandwidth_bytes_per_s, nbytes / (spec.memory_bandwidth_bytes_per_s * e_m))
        if launches or kernel not in carrier:
            if kernel in carrier:  # a launching member after a timed one: it carries the kernel instead
                out[carrier[kernel]] = _inside(out[carrier[kernel]])
            carrier[kernel] = len(out)
            k.fill, k.overhead = f, (overhead if launches else 0.0)
            k.alpha = overlap(spec, n.family)
            out.append(r)
        else:
            out.append(_inside(r))
    for kernel, i in carrier.items():
        r, k = out[i], parts_of[kernel]
        c, m = k.compute_s, k.memory_s
        bw, level = (max(k.bandwidth.values()), max(k.by_level, key=k.by_level.get)) if k.by_level else \
            (spec.memory_bandwidth_bytes_per_s, r.level)
        out[i] = _row(r, bytes=k.bytes, intensity=intensity(r.ops, k.bytes),
                         time_s=max(c, m) + k.alpha * min(c, m) + k.overhead, compute_s=c, memory_s=m,
                         dispatch_s=k.overhead, fill=k.fill, bandwidth_bytes_per_s=bw, level=level, written=k.written)
    return out


def charged_bytes(nodes, plan, timed: set[str] | frozenset[str] | None = None) -> dict[str, tuple[int, int]]:
    """Node key -> (R', W') of every node that runs under a GPU kernel plan (not ``plan.free``; in ``timed``
    where given): the bytes its kernel reads for it, less the tensors on chip and those a member before it
    read already, and the bytes it writes, less the tensors that stay on chip,

        R' = R − Σ_{inputs on chip or read by the kernel already} bytes,   W' = W − Σ_{outputs on chip} bytes

    (:func:`_as_kernels`; benchmarks/gpu_realism.py and llm_realism.py read it for their fast paths)."""
    seen: dict[str, set[str]] = {}  # kernel -> tensors its members have read
    out: dict[str, tuple[int, int]] = {}
    for n in nodes:
        if n.key in plan.free or (timed is not None and n.key not in timed):
            continue
        read = seen.setdefault(plan.kernel.get(n.key, n.key), set())
        skip_in = 0
        for i in n.inputs:
            if i is None:
                continue
            name = plan.real(i.name)
            if name in plan.on_chip or name in read:
                skip_in += tensor_bytes(i)
            read.add(name)
        skip_out = sum(tensor_bytes(o) for o in n.outputs if o is not None and o.name in plan.on_chip)
        out[n.key] = (max(0, n.bytes_read - skip_in), max(0, n.bytes_written - skip_out))
    return out


class _KernelParts:
    """One GPU kernel's summed parts over its members (:func:`_as_kernels`): arithmetic time (each member's
    over its fill), memory time by level and the fastest bandwidth charged at each, bytes, bytes written; the
    fill, launch overhead and α of the member that carries it."""

    def __init__(self) -> None:
        self.compute_s = 0.0
        self.bytes = self.written = 0
        self.by_level: dict[str | None, float] = {}
        self.bandwidth: dict[str | None, float] = {}
        self.fill, self.overhead, self.alpha = 1.0, 0.0, 0.0

    def at(self, level: str | None, bandwidth: float, seconds: float) -> None:
        self.by_level[level] = self.by_level.get(level, 0.0) + seconds
        self.bandwidth[level] = max(self.bandwidth.get(level, 0.0), bandwidth)

    @property
    def memory_s(self) -> float:
        return sum(self.by_level.values())


def _inside(r: NodeRoofline) -> NodeRoofline:
    """A member of a GPU kernel another member's row carries: no time, bytes or fill of its own."""
    return _row(_as_folded(r), bytes=0, intensity=intensity(r.ops, 0), written=0, fill=1.0)


def _by_op_type(nodes: tuple[NodeRoofline, ...], kernels: float) -> tuple[OpTypeRoofline, ...]:
    acc: dict[str, list] = {}
    for r in nodes:
        if r.time_s is None:
            continue
        v = acc.setdefault(r.op_type, [0, 0, 0, 0.0, {}])
        v[0] += 1
        v[1] += r.ops
        v[2] += r.bytes
        v[3] += r.time_s
        if r.bound in LIMITERS:
            v[4][r.bound] = v[4].get(r.bound, 0.0) + r.time_s
    rows = []
    for op, (count, ops, nbytes, t, by) in acc.items():
        rows.append(OpTypeRoofline(op, count, ops, nbytes, intensity(ops, nbytes), t, t / kernels if kernels else 0.0,
                                   ops / t if t > 0 else None, by.get(COMPUTE, 0.0), by.get(MEMORY, 0.0),
                                   dominant(by), by.get(FILL, 0.0), by.get(DISPATCH, 0.0)))
    return tuple(sorted(rows, key=lambda x: (-x.time_s, x.op_type)))
