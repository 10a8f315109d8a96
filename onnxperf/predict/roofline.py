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
from dataclasses import dataclass, field
from typing import Any, Protocol

from onnxperf.base import dtypes
from onnxperf.cost.analysis import Analysis
from onnxperf.predict.bodies import BodyIndex, is_control
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.graph.folding import foldable_nodes
from onnxperf.predict.folding import folded
from onnxperf.predict.gpu_kernels import kernel_plan
from onnxperf.predict.reuse import level_bytes
from onnxperf.predict.tensors import links, tensor_bytes

COMPUTE = "compute"
MEMORY = "memory"
NONE = "none"  # zero by design: no work


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


@dataclass(frozen=True)
class OpTypeRoofline:
    """The roofline of all timed nodes of one op type: their summed operations, bytes and times.
    ``intensity`` = ops / bytes; ``ops_per_s`` = ops / time (the rate the predictions imply);
    ``bound`` = the bound that holds most of the op type's time."""

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


@dataclass(frozen=True)
class RooflineResult:
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
    #: a plain roofline (a spec with no efficiencies, dispatch overheads or fusions): every node at
    #: its roof with nothing between them, so the latency is a lower bound (throughput an upper one)
    lower_bound: bool = False
    #: the GPU kernel model (a spec with ``fusion.gpu``): kernels launched, and each fusion it
    #: assumed as (what, nodes); None for other specs
    kernels: int | None = None
    assumed: tuple[tuple[str, int], ...] = ()
    #: the cache-aware roofline (a spec with memory levels): (level, bytes charged there), innermost
    #: first, main memory last; empty for a DRAM-only spec
    bytes_by_level: tuple[tuple[str, float], ...] = ()
    #: what the spec's ``fusion.*`` keys made of the graph, as this prediction applied it (None where
    #: the key is off): the folded node keys, onnxruntime's CPU fusions, the GPU kernel plan. Kept so
    #: readers of the prediction (bottlenecks, the trace) need not work them out again; not figures
    folded_keys: frozenset[str] | None = field(default=None, compare=False, repr=False)
    fusion_model: Any = field(default=None, compare=False, repr=False)
    plan: Any = field(default=None, compare=False, repr=False)
    #: the side of the costs this prediction rests on (:attr:`onnxperf.cost.analysis.Totals.side`): a node
    #: of a body left out, a loop counted in part, a size replaced by its upper bound
    cost_side: str = ""

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

    def throughput_per_s(self, batch: int = 1) -> float | None:
        return None if self.latency_s <= 0 else batch / self.latency_s

    def to_dict(self, batch: int = 1, hardware: str | None = None) -> dict[str, Any]:
        """The ``roofline`` section of the JSON contract, for ``batch`` items a run on ``hardware``
        (the spec's id as given; the prediction's own by default)."""
        return {
            "hardware": hardware or self.spec_id,
            "ridge_fp32_flops_per_byte": self.ridge_fp32,
            "latency_s": self.latency_s, "latency_is_lower_bound": self.lower_bound, "batch": batch,
            "throughput_items_per_s": self.throughput_per_s(batch),
            "unknown_nodes": self.unknown_nodes, "complete": self.complete, "bound": self.side or "exact",
            "compute_bound_time_s": self.compute_bound_time_s, "memory_bound_time_s": self.memory_bound_time_s,
            "run_overhead_s": self.run_overhead_s,
            "bytes_by_level": [{"level": k, "bytes": v} for k, v in self.bytes_by_level] or None,
            "gpu_kernel_model": None if self.kernels is None else {
                "kernels": self.kernels, "assumed": [{"what": w, "nodes": n} for w, n in self.assumed],
                "not_assumed": ["fused attention", "transpose elimination", "horizontal GEMM fusion"]},
            "by_op_type": [{"op_type": o.op_type, "count": o.count, "ops": o.ops, "bytes": o.bytes,
                            "intensity": o.intensity, "time_s": o.time_s, "share": o.share,
                            "ops_per_s": o.ops_per_s, "bound": o.bound,
                            "compute_bound_time_s": o.compute_bound_time_s,
                            "memory_bound_time_s": o.memory_bound_time_s} for o in self.by_op_type],
            "nodes": [{"key": n.key, "dtype": n.dtype, "ops": n.ops, "bytes": n.bytes, "intensity": n.intensity,
                       "peak_ops_per_s": n.peak_ops_per_s, "attainable_ops_per_s": n.attainable_ops_per_s,
                       "bound": n.bound, "time_s": n.time_s, "share": n.share} for n in self.nodes],
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
#: ops that take another's per-op key: BiasGelu is a bias Add and onnxruntime's Gelu kernel
_SAME_AS = {"BiasGelu": "Gelu"}


def families(family: str, integer: bool = False, depthwise: bool = False, op: str | None = None) -> tuple[str, ...]:
    """The efficiency keys' family names for a node, most specific first: a depthwise convolution
    (one input channel per group) and 8-bit integer arithmetic are calibrated apart where the suite
    has them (``conv.depthwise.int8``, ``conv.depthwise``, ``conv.int8``, then ``conv``). An op the
    suite measures on its own (a transcendental function, onnxruntime's SkipLayerNormalization) has
    keys ``op.<Op>.*`` looked up first, and a :data:`TRANSCENDENTAL` one without them
    ``transcendental.*``."""
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
    out.append(family)
    return tuple(out)


def efficiencies(spec: Spec, family: str, nbytes: float = 0.0, integer: bool = False,
                 depthwise: bool = False, op: str | None = None) -> tuple[float, float, float]:
    """(compute efficiency, memory efficiency, per-node overhead in s) for an op family; a node moving
    at least ``parallel_min_bytes`` (``nbytes``) also pays ``overhead_parallel_s`` (the runtime's
    thread-pool dispatch, fitted by calibration). ``integer``: the node's arithmetic is 8-bit integer
    (QLinearConv, MatMulInteger ...); ``depthwise``: a depthwise convolution: their own keys first,
    where calibration fitted them (:func:`families`); ``op``: the node's op type (a transcendental
    function's own keys)."""
    eff = getattr(spec, "efficiency", None) or {}
    fams = families(family, integer, depthwise, op)
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


def node_roofline(n, spec: Spec, float_key: str | None = None, op: str | None = None) -> NodeRoofline:
    """Roofline of one NodeCost: integer ops use the integer peak, FLOPs the float one
    (``float_key``: the peak of a ``--precision`` what-if for every floating-point operation;
    ``op``: the per-op efficiency key to use instead of the node's op type, :func:`op_keys`)."""
    dtype = compute_dtype(n.inputs)
    if float_key is not None and n.flops:
        dtype = float_key
    nbytes = n.bytes_read + n.bytes_written
    kind = _kind(n, op)
    e_c, e_m, overhead = efficiencies(spec, n.family, nbytes, *kind)
    if n.op_type in _NOT_EXECUTED:
        overhead = 0.0
    bw = spec.memory_bandwidth_bytes_per_s * e_m
    if n.status not in (COUNTED, ZERO):
        return NodeRoofline(n.key, n.op_type, n.family, dtype, 0, 0, None, 0.0, 0.0, NONE, None, None)
    float_peak = spec.peak_for(float_key if float_key is not None else
                               dtype if dtype in _FLOAT_NAMES or dtype.startswith("float8") else "float32") * e_c
    idt = int_dtype(n.inputs)
    int_peak = spec.peak_for(idt) * e_c
    if n.int_ops > n.flops:
        dtype = idt  # the node is integer arithmetic on this data (QLinear*, *Integer)
    ops = n.flops + n.int_ops
    # time of the arithmetic: FLOPs at the float peak plus integer ops at the integer peak
    compute_s = (n.flops / float_peak if n.flops else 0.0) + (n.int_ops / int_peak if n.int_ops else 0.0)
    memory_s = nbytes / bw if nbytes else 0.0
    t = max(compute_s, memory_s) + overlap(spec, n.family, *kind) * min(compute_s, memory_s) + overhead
    # the peak that this mix of operations runs at (for intensity/attainable figures)
    peak = ops / compute_s if compute_s > 0 else (float_peak if n.int_ops == 0 else int_peak)
    i = intensity(ops, nbytes)
    b = NONE if (ops == 0 and nbytes == 0) else (COMPUTE if compute_s >= memory_s else MEMORY)
    return NodeRoofline(n.key, n.op_type, n.family, dtype, ops, nbytes, i, peak, attainable(peak, bw, i), b, t, None)


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
    QLinearConv's; the Adds, the DequantizeLinear and QuantizeLinear are ``inside`` it and take none."""

    epilogue: dict[str, frozenset[str]]
    absorbed: frozenset[str]
    runs_as: dict[str, tuple[str, int, int, str | None]] = field(default_factory=dict)
    inside: frozenset[str] = frozenset()


def epilogues(a: Analysis) -> dict[str, frozenset[str]]:
    """Main-graph nodes that run inside the kernel before them (:func:`fusions`)."""
    return fusions(a).epilogue


def fusions(a: Analysis) -> Fusions:
    """onnxruntime's CPU fusions found in ``a`` (see :data:`FUSED_ACTIVATIONS` for the patterns).

    A fused input must be read by the fusing node alone and not be a graph output; a chain
    (Conv -> Mul -> Add -> Relu) is followed link by link, each link checked against what its root
    still accepts. GELU written out (x/√2 -> Erf -> +1 -> ·x -> ·0.5, and the bias Add before it)
    runs as one kernel (GeluFusion, BiasGeluFusion): its first node keeps its traffic, the others
    cost their arithmetic."""
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
    for ln, adds in _skip_layer_norms(a, nodes, producer, users, consts, graph_outputs):
        if any(x.key in epi or x.key in absorbed for x in (ln, *adds)):
            continue
        inner = {x.outputs[0].name for x in adds}
        read = {t.name: t for x in (*adds, ln) for t in x.inputs if t is not None and t.name not in inner}
        nbytes = sum(tensor_bytes(t) for t in read.values()) + ln.bytes_written
        runs_as[ln.key] = ("SkipLayerNormalization", nbytes, sum(x.flops + x.int_ops for x in (ln, *adds)), None)
        inside |= {x.key for x in adds}
    return Fusions(epi, frozenset(absorbed), runs_as, frozenset(inside))


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


def _skip_layer_norms(a: Analysis, nodes, producer, users, consts, graph_outputs):
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


def _zero_pad(a: Analysis, n, consts: set[str]) -> bool:
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


def _constant_names(a: Analysis) -> set[str]:
    if a.loaded is None:
        return set()
    g = a.loaded.graph
    return ({k for k in g.initializers if k not in set(g.inputs)} | set(g.constants))


def _as_fused_kernel(r: NodeRoofline, n, op: str, nbytes: int, ops: int, int_dtype: str | None,
                     spec: Spec) -> NodeRoofline:
    """The roofline of the fused kernel ``op`` that runs ``n`` and the nodes inside it: its
    operations and bytes at ``op``'s efficiencies (``op.<Op>.*``, then the family's; an 8-bit
    kernel, ``int_dtype``, at the integer peak and ``<family>.int8.*``), bytes at main-memory
    bandwidth,

        t = max(c, m) + α·min(c, m) + o,   c = W / (e_c · π),  m = Q / (e_m · β)"""
    integer, depthwise, own = _kind(n)
    if int_dtype is not None:
        integer = True
        e_c, e_m, overhead = efficiencies(spec, n.family, nbytes, integer, depthwise, op)
        peak = spec.peak_for(int_dtype) * e_c
    else:
        e_c, e_m, overhead = efficiencies(spec, n.family, nbytes, integer, depthwise, op)
        # the roof itself, from the node's own roofline (its peak is the roof times its own e_c)
        peak = r.peak_ops_per_s / efficiencies(spec, n.family, 0.0, integer, depthwise, own)[0] * e_c
    bw = spec.memory_bandwidth_bytes_per_s * e_m
    comp_s = ops / peak if ops else 0.0
    mem_s = nbytes / bw if nbytes else 0.0
    t = max(comp_s, mem_s) + overlap(spec, n.family, integer, depthwise, op) * min(comp_s, mem_s) + overhead
    i = intensity(ops, nbytes)
    return NodeRoofline(r.key, r.op_type, r.family, int_dtype or r.dtype, ops, nbytes, i, peak,
                        attainable(peak, bw, i), COMPUTE if comp_s >= mem_s else MEMORY, t, None)


def _as_epilogue(r: NodeRoofline, n, free: frozenset[str], spec: Spec) -> NodeRoofline:
    """An epilogue's roofline: arithmetic at the compute roof, plus reading its inputs other than
    ``free`` (those the kernel already holds)."""
    e_c, e_m, _ = efficiencies(spec, n.family, 0.0, *_kind(n))
    other = sum(t_bytes for t_name, t_bytes in _input_bytes(n) if t_name not in free)
    mem_s = other / (spec.memory_bandwidth_bytes_per_s * e_m) if other else 0.0
    comp_s = r.ops / (r.peak_ops_per_s) if r.ops and r.peak_ops_per_s else 0.0
    t = max(comp_s, mem_s)
    return NodeRoofline(r.key, r.op_type, r.family, r.dtype, r.ops, other, intensity(r.ops, other), r.peak_ops_per_s,
                        attainable(r.peak_ops_per_s, spec.memory_bandwidth_bytes_per_s * e_m, intensity(r.ops, other)),
                        COMPUTE if comp_s >= mem_s else MEMORY, t, None)


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

    def __init__(self, a: Analysis, spec: Spec, key: str | None, fold: bool = False, gpu: bool = False):
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
        self._times: dict[tuple[str, bool], tuple[float, float, float, int]] = {}
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

    def _scope(self, scope: str, cached: bool = False) -> tuple[float, float, float, int]:
        """(time, compute-bound time, memory-bound time, kernels) of one run of a body; ``cached``: a run
        after the first, its working set in the cache level that holds it (if one does)."""
        hit = self._times.get((scope, cached))
        if hit is None:
            level = self._level(scope) if cached else None
            t = c = m = 0.0
            k = 0
            for n in self.by_scope.get(scope, ()):
                if n.key in self.folded:
                    continue
                r = node_roofline(n, self.spec, self.key)
                if r.time_s is None:
                    continue
                if is_control(n):
                    r, inner = self._timed(r, n)
                    k += inner
                elif r.time_s > 0:
                    k += 1
                    if level is not None:
                        per_level = [0.0] * len(self.bandwidths)
                        per_level[level] = float(r.bytes)
                        r = _at_levels(r, n, per_level, self.bandwidths, self.spec)
                t += r.time_s
                c += r.time_s if r.bound == COMPUTE else 0.0
                m += r.time_s if r.bound == MEMORY else 0.0
            hit = self._times[(scope, cached)] = (t, c, m, k)
        return hit

    def timed(self, r: NodeRoofline, n) -> NodeRoofline:
        """``r`` (a main-graph control node's own roofline row) with the time of its bodies."""
        r, kernels = self._timed(r, n)
        self.launched += max(kernels - 1, 0)
        return r

    def _timed(self, r: NodeRoofline, n) -> tuple[NodeRoofline, int]:
        scopes = self.index.scopes(n)
        if not scopes:
            return r, 1
        sums = {sc: (sum(b.flops for b in self.by_scope[sc]), sum(b.bytes_written for b in self.by_scope[sc]))
                for sc in scopes}
        if n.op_type == "If":
            # the branch taken; else the one the cost counts (the costlier), else the slower
            chosen = scopes if len(scopes) == 1 else [sc for sc in scopes if sums[sc] == (n.flops, n.bytes_written)]
            scope = max(chosen or scopes, key=lambda sc: self._scope(sc)[0])
            runs = 1
        else:
            scope = scopes[0]
            flops, written = sums[scope]
            runs = n.bytes_written // written if written else (n.flops // flops if flops else 1)
        t, c, m, k = self._scope(scope)
        if runs > 1:
            t2, c2, m2, _ = self._scope(scope, cached=True)
            t, c, m = t + (runs - 1) * t2, c + (runs - 1) * c2, m + (runs - 1) * m2
        else:
            t, c, m = t * runs, c * runs, m * runs
        bound = r.bound if t == 0 else (COMPUTE if c >= m else MEMORY)
        return NodeRoofline(**{**r.__dict__, "time_s": t, "bound": bound}), k * runs


def _as_folded(r: NodeRoofline) -> NodeRoofline:
    """A node computed at load time: nothing left to run."""
    return NodeRoofline(r.key, r.op_type, r.family, r.dtype, r.ops, r.bytes, r.intensity, r.peak_ops_per_s,
                        r.attainable_ops_per_s, NONE, 0.0, None)


def _input_bytes(n) -> list[tuple[str, int]]:
    """(name, bytes) of each input whose size is known."""
    return [(i.name, tensor_bytes(i)) for i in n.inputs
            if i is not None and i.shape is not None and all(isinstance(d, int) for d in i.shape)]


#: the per-op key of a Transpose that onnxruntime's CPU kernel copies element by element
ELTWISE_TRANSPOSE = "Transpose.eltwise"


def op_keys(a: Analysis) -> dict[str, str]:
    """Main-graph nodes whose per-op efficiency key is not their op type: a Transpose that moves the
    innermost axis and is not a single axis moved (onnxruntime's DoTransposeEltWise, one element at
    a time: MaxViT's 6-D window partitions, perm (0,5,1,3,2,4), take 170-200 µs for 400 KB where a
    (0,2,1,3) takes 10) looks up ``op.Transpose.eltwise.*``; the others ``op.Transpose.*``."""
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
    return out


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


def roofline(a: Analysis, spec: Spec, precision=None) -> RooflineResult:
    """Per-node and whole-model roofline of an analysis on a hardware spec; ``precision``
    (:class:`onnxperf.predict.precision.Precision`, with ``a`` its :func:`~onnxperf.predict.precision.what_if`):
    floating-point arithmetic at that precision's peak."""
    key = precision.peak_key if precision is not None else None
    eff = getattr(spec, "efficiency", None) or {}
    ops = op_keys(a) if eff else {}
    raw = [node_roofline(n, spec, key, ops.get(n.key)) for n in a.main_nodes]
    levels = tuple(getattr(spec, "memory_levels", ()) or ())
    by_level: tuple[tuple[str, float], ...] = ()
    if levels:
        lb = level_bytes(a, tuple(lv.capacity_bytes for lv in levels))
        bws = tuple(lv.bandwidth_bytes_per_s for lv in levels) + (spec.memory_bandwidth_bytes_per_s,)
        raw = [_at_levels(r, n, lb.get(n.key), bws, spec, ops.get(n.key)) for r, n in zip(raw, a.main_nodes)]
        names = tuple(lv.name for lv in levels) + ("DRAM",)
        by_level = tuple((nm, sum(v[k] for v in lb.values())) for k, nm in enumerate(names))
    gone = fu = None
    if float(eff.get("fusion.constant_folding", 0)) >= 1:
        gone = folded(a)
        raw = [(_as_folded(r) if r.key in gone and r.time_s is not None else r) for r in raw]
    if float(eff.get("fusion.epilogue", 0)) >= 1:
        fu = fusions(a)
        raw = [(_as_folded(r) if (n.key in fu.absorbed or n.key in fu.inside) and r.time_s is not None else
                _as_epilogue(r, n, fu.epilogue[n.key], spec) if n.key in fu.epilogue and r.time_s is not None else
                _as_fused_kernel(r, n, *fu.runs_as[n.key], spec) if n.key in fu.runs_as and r.time_s is not None
                else r)
               for r, n in zip(raw, a.main_nodes)]
    plan = None
    if float(eff.get("fusion.gpu", 0)) >= 1:
        plan = kernel_plan(a)
        raw = _as_kernels(raw, a.main_nodes, plan, spec)
    body_kernels = 0
    if a.model.nodes_in_subgraphs:
        fold = float(eff.get("fusion.constant_folding", 0)) >= 1 or float(eff.get("fusion.gpu", 0)) >= 1
        bodies = _Bodies(a, spec, key, fold, gpu=float(eff.get("fusion.gpu", 0)) >= 1)
        raw = [bodies.timed(r, n) if is_control(n) and r.time_s is not None else r
               for r, n in zip(raw, a.main_nodes)]
        body_kernels = bodies.launched
    run_overhead = float(eff.get("overhead_run_s", 0.0))
    kernels = sum(r.time_s for r in raw if r.time_s is not None)
    latency = kernels + run_overhead
    nodes = tuple(
        NodeRoofline(**{**r.__dict__, "share": (None if r.time_s is None or kernels == 0 else r.time_s / kernels)})
        for r in raw)
    by_op = _by_op_type(nodes, kernels)
    return RooflineResult(
        spec_id=spec.id, ridge_fp32=ridge_point(spec.peak_for("float32"), spec.memory_bandwidth_bytes_per_s),
        nodes=nodes, latency_s=latency, unknown_nodes=sum(r.time_s is None for r in nodes),
        compute_bound_time_s=sum(r.time_s for r in nodes if r.bound == COMPUTE and r.time_s),
        memory_bound_time_s=sum(r.time_s for r in nodes if r.bound == MEMORY and r.time_s),
        by_op_type=by_op, run_overhead_s=run_overhead, lower_bound=not eff,
        kernels=None if plan is None else plan.kernel_count + body_kernels,
        assumed=() if plan is None else plan.assumed,
        bytes_by_level=by_level, folded_keys=None if gone is None else frozenset(gone), fusion_model=fu, plan=plan,
        cost_side=a.totals.side,
    )


def _at_levels(r: NodeRoofline, n, per_level, bandwidths: tuple[float, ...], spec: Spec,
               op: str | None = None) -> NodeRoofline:
    """A node's roofline on the cache-aware roofline (:mod:`onnxperf.predict.reuse`): its bytes at each level
    over that level's bandwidth,

        m = Σ_k b_k / (e_m · β_k),   t = max(c, m) + α·min(c, m) + o

    with c, e_m, α and o as in :func:`node_roofline`."""
    if per_level is None or r.time_s is None:
        return r
    kind = _kind(n, op)
    e_c, e_m, overhead = efficiencies(spec, n.family, r.bytes, *kind)
    if n.op_type in _NOT_EXECUTED:
        overhead = 0.0
    comp_s = r.ops / r.peak_ops_per_s if r.ops and r.peak_ops_per_s else 0.0
    mem_s = sum(b / (bw * e_m) for b, bw in zip(per_level, bandwidths) if b)
    t = max(comp_s, mem_s) + overlap(spec, n.family, *kind) * min(comp_s, mem_s) + overhead
    nbytes = r.bytes
    b = NONE if (r.ops == 0 and nbytes == 0) else (COMPUTE if comp_s >= mem_s else MEMORY)
    eff_bw = nbytes / mem_s if mem_s > 0 else bandwidths[-1] * e_m
    return NodeRoofline(r.key, r.op_type, r.family, r.dtype, r.ops, nbytes, r.intensity, r.peak_ops_per_s,
                        attainable(r.peak_ops_per_s, eff_bw, r.intensity), b, t, None)


#: a matrix product with this many output rows or fewer runs as a GEMV / split-K kernel (:func:`fill`)
GEMV_ROWS = 16
#: op families whose kernels are tiled over their output (GEMM, convolution)
_TILED = frozenset({"conv", "matmul"})


def fill(n, spec: Spec) -> float:
    """The share of a GPU's arithmetic rate that a GEMM or convolution kernel attains for its size
    (1 for other kernels, and for a spec without ``gpu.sms``):

        fill = N / (N + S·k),   N = the kernel's output elements, S = ``gpu.sms``, k = ``gpu.outputs_per_sm``

    Half the rate when the output is S·k elements, rising towards 1 as it grows: a small output is
    few tiles, too few to give every streaming multiprocessor work and hide its latency (NVIDIA's
    "Matrix Multiplication Background" guide: tile and wave quantization). A batch-1 ResNet-50's last
    stage (7x7x2048 outputs) gets a fifth of an A100 this way. Arithmetic time is divided by it.
    A matrix product with at most :data:`GEMV_ROWS` output rows (a decode step's projections) is
    exempt: GPU libraries run it as a GEMV / split-K kernel that spreads its weights over every SM
    and stays memory-bound."""
    eff = getattr(spec, "efficiency", None) or {}
    sms = float(eff.get("gpu.sms", 0) or 0)
    per_sm = float(eff.get("gpu.outputs_per_sm", 0) or 0)
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


def _as_kernels(raw: list[NodeRoofline], nodes, plan, spec: Spec) -> list[NodeRoofline]:
    """Node rooflines under a GPU kernel plan (:mod:`onnxperf.predict.gpu_kernels`): a node pays the
    launch overhead only when it starts a kernel; it reads only the tensors its kernel has not
    computed or read already, and writes only the tensors that leave its kernel:

        t = max(c, m) + α·min(c, m) + o·[starts a kernel],   m = (read' + written') / (e_m·β)

    with c its arithmetic at the family's attainable compute (as :func:`node_roofline`)."""
    seen: dict[str, set[str]] = {}  # kernel -> tensors its members have read
    out = []
    for r, n in zip(raw, nodes):
        if n.key in plan.free:
            out.append(_as_folded(r) if r.time_s is not None else r)
            continue
        if r.time_s is None:
            out.append(r)
            continue
        kernel = plan.kernel.get(n.key, n.key)
        read = seen.setdefault(kernel, set())
        skip_in = 0
        for i in n.inputs:
            if i is None:
                continue
            name = plan.real(i.name)
            if name in plan.on_chip or name in read:
                skip_in += tensor_bytes(i)
            read.add(name)
        skip_out = sum(tensor_bytes(o) for o in n.outputs if o is not None and o.name in plan.on_chip)
        nbytes = max(0, n.bytes_read - skip_in) + max(0, n.bytes_written - skip_out)
        e_c, e_m, overhead = efficiencies(spec, n.family)
        bw = spec.memory_bandwidth_bytes_per_s * e_m
        comp_s = r.ops / r.peak_ops_per_s if r.ops and r.peak_ops_per_s else 0.0
        if n.key in plan.launches:
            comp_s /= fill(n, spec)
        mem_s = nbytes / bw if nbytes else 0.0
        t = max(comp_s, mem_s) + overlap(spec, n.family) * min(comp_s, mem_s) + (
            overhead if n.key in plan.launches else 0.0)
        i = intensity(r.ops, nbytes)
        b = NONE if (r.ops == 0 and nbytes == 0) else (COMPUTE if comp_s >= mem_s else MEMORY)
        out.append(NodeRoofline(r.key, r.op_type, r.family, r.dtype, r.ops, nbytes, i, r.peak_ops_per_s,
                                attainable(r.peak_ops_per_s, bw, i), b, t, None))
    return out


def _by_op_type(nodes: tuple[NodeRoofline, ...], kernels: float) -> tuple[OpTypeRoofline, ...]:
    acc: dict[str, list] = {}
    for r in nodes:
        if r.time_s is None:
            continue
        v = acc.setdefault(r.op_type, [0, 0, 0, 0.0, 0.0, 0.0])
        v[0] += 1
        v[1] += r.ops
        v[2] += r.bytes
        v[3] += r.time_s
        v[4] += r.time_s if r.bound == COMPUTE else 0.0
        v[5] += r.time_s if r.bound == MEMORY else 0.0
    rows = []
    for op, (count, ops, nbytes, t, tc, tm) in acc.items():
        b = NONE if tc == 0 and tm == 0 else (COMPUTE if tc >= tm else MEMORY)
        rows.append(OpTypeRoofline(op, count, ops, nbytes, intensity(ops, nbytes), t, t / kernels if kernels else 0.0,
                                   ops / t if t > 0 else None, tc, tm, b))
    return tuple(sorted(rows, key=lambda x: (-x.time_s, x.op_type)))
