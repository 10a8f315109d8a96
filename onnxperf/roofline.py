"""The roofline model: pure functions, then their application to an analysis.

A platform has a peak compute rate π (per dtype) and a memory bandwidth β. A node doing W
operations on Q bytes has intensity I = W / Q; it attains min(π, I·β); its time is
max(W/π, Q/β) and it is compute-bound when W/π ≥ Q/β, i.e. when I ≥ π/β (the ridge point).

Ops with no arithmetic that move data (Transpose, Concat, Gather ...) are memory-bound and take
Q/β, not zero. Nodes run one after another, so the predicted latency is the sum of node times.
A calibrated spec (``efficiency``, fitted by ``onnxperf hw calibrate``) says how much of the roofs
each op family attains on that machine and what a node costs to dispatch:

    t = max(W / (e_c,f · π), Q / (e_m,f · β)) + o

with keys ``<family>.compute`` (e_c), ``<family>.memory`` (e_m), ``default.compute``,
``default.memory`` and ``overhead_s`` (o, per executed node). A plain spec has none: e = 1, o = 0.

A calibrated spec may also say ``fusion.epilogue = 1``: the runtime it was calibrated on fuses an
elementwise epilogue (an activation, a residual Add) into the conv or matmul that produces its input,
as onnxruntime's optimizers do. Such an epilogue then costs its arithmetic only, plus reading its
other inputs (the residual); its dispatch and the round trip of the fused tensor are gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .analysis import Analysis
from .cost import COUNTED, ZERO, NodeCost

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


def compute_dtype(inputs) -> str:
    """The dtype that picks the peak: the first floating-point input (an fp16 model uses the
    fp16 peak), else the first 8-bit-or-smaller integer input (int8 peak), else int32."""
    names = [t.dtype for t in inputs if t is not None]
    for n in names:
        if n in _FLOAT_NAMES or n.startswith("float8"):
            return n
    for n in names:
        if n in ("int8", "uint8", "int4", "uint4"):
            return n
    return "int32" if names else "float32"


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
class RooflineResult:
    spec_id: str
    ridge_fp32: float
    nodes: tuple[NodeRoofline, ...]
    latency_s: float
    #: nodes whose time is unknown (unsupported or unknown shapes): latency is partial
    unknown_nodes: int
    compute_bound_time_s: float
    memory_bound_time_s: float
    by_op_type: tuple[tuple[str, int, float, float], ...]  # (op type, count, time, share)

    def throughput_per_s(self, batch: int = 1) -> float | None:
        return None if self.latency_s <= 0 else batch / self.latency_s


def efficiencies(spec: Spec, family: str) -> tuple[float, float, float]:
    """(compute efficiency, memory efficiency, per-node overhead in s) for an op family."""
    eff = getattr(spec, "efficiency", None) or {}
    e_c = float(eff.get(f"{family}.compute", eff.get("default.compute", 1.0)))
    e_m = float(eff.get(f"{family}.memory", eff.get("default.memory", 1.0)))
    return e_c, e_m, float(eff.get("overhead_s", 0.0))


#: ops that no runtime executes as a kernel (folded at load): no dispatch overhead
_NOT_EXECUTED = frozenset({"Constant"})


def node_roofline(n, spec: Spec) -> NodeRoofline:
    """Roofline of one NodeCost: integer ops use the integer peak, FLOPs the float one."""
    dtype = compute_dtype(n.inputs)
    nbytes = n.bytes_read + n.bytes_written
    e_c, e_m, overhead = efficiencies(spec, n.family)
    if n.op_type in _NOT_EXECUTED:
        overhead = 0.0
    bw = spec.memory_bandwidth_bytes_per_s * e_m
    if n.status not in (COUNTED, ZERO):
        return NodeRoofline(n.key, n.op_type, n.family, dtype, 0, 0, None, 0.0, 0.0, NONE, None, None)
    float_peak = spec.peak_for(dtype if dtype in _FLOAT_NAMES or dtype.startswith("float8") else "float32") * e_c
    int_peak = spec.peak_for(dtype if not (dtype in _FLOAT_NAMES or dtype.startswith("float8")) else "int32") * e_c
    ops = n.flops + n.int_ops
    # time of the arithmetic: FLOPs at the float peak plus integer ops at the integer peak
    compute_s = (n.flops / float_peak if n.flops else 0.0) + (n.int_ops / int_peak if n.int_ops else 0.0)
    memory_s = nbytes / bw if nbytes else 0.0
    t = max(compute_s, memory_s) + overhead
    # the peak that this mix of operations runs at (for intensity/attainable figures)
    peak = ops / compute_s if compute_s > 0 else (float_peak if n.int_ops == 0 else int_peak)
    i = intensity(ops, nbytes)
    b = NONE if (ops == 0 and nbytes == 0) else (COMPUTE if compute_s >= memory_s else MEMORY)
    return NodeRoofline(n.key, n.op_type, n.family, dtype, ops, nbytes, i, peak, attainable(peak, bw, i), b, t, None)


#: elementwise ops a runtime fuses into the conv/matmul producing their input
EPILOGUE_OPS = frozenset({"Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Add",
                          "Sum", "Mul", "Gelu", "Elu", "Selu", "Softplus", "Swish", "Mish", "PRelu", "ThresholdedRelu"})
_EPILOGUE_PRODUCERS = frozenset({"conv", "matmul"})


def epilogues(a: Analysis) -> dict[str, str]:
    """Main-graph nodes that fuse as epilogues: node key -> the name of the fused input tensor.

    A node qualifies when its op is in :data:`EPILOGUE_OPS` and one of its inputs is produced by a
    conv/matmul node (or by another epilogue) and read by this node alone."""
    nodes = a.main_nodes
    producer: dict[str, NodeCost] = {}
    consumers: dict[str, int] = {}
    for n in nodes:
        for o in n.outputs:
            if o is not None:
                producer[o.name] = n
        for i in n.inputs:
            if i is not None:
                consumers[i.name] = consumers.get(i.name, 0) + 1
    graph_outputs = {o.name for o in a.model.outputs}
    out: dict[str, str] = {}
    for n in nodes:
        if n.op_type not in EPILOGUE_OPS or n.domain or n.status != COUNTED:
            continue
        for i in n.inputs:
            if i is None or consumers.get(i.name) != 1 or i.name in graph_outputs:
                continue
            p = producer.get(i.name)
            if p is not None and (p.family in _EPILOGUE_PRODUCERS or p.key in out):
                out[n.key] = i.name
                break
    return out


def _as_epilogue(r: NodeRoofline, n, fused_input: str, spec: Spec) -> NodeRoofline:
    """An epilogue's roofline: arithmetic at the compute roof, plus reading its other inputs."""
    e_c, e_m, _ = efficiencies(spec, n.family)
    other = sum(t_bytes for t_name, t_bytes in _input_bytes(n) if t_name != fused_input)
    mem_s = other / (spec.memory_bandwidth_bytes_per_s * e_m) if other else 0.0
    comp_s = r.ops / (r.peak_ops_per_s) if r.ops and r.peak_ops_per_s else 0.0
    t = max(comp_s, mem_s)
    return NodeRoofline(r.key, r.op_type, r.family, r.dtype, r.ops, other, intensity(r.ops, other), r.peak_ops_per_s,
                        attainable(r.peak_ops_per_s, spec.memory_bandwidth_bytes_per_s * e_m, intensity(r.ops, other)),
                        COMPUTE if comp_s >= mem_s else MEMORY, t, None)


def _input_bytes(n) -> list[tuple[str, int]]:
    from . import dtypes

    out = []
    for i in n.inputs:
        if i is None or i.shape is None or not all(isinstance(d, int) for d in i.shape):
            continue
        numel = 1
        for d in i.shape:
            numel *= d
        out.append((i.name, dtypes.nbytes(_elem(i.dtype), numel)))
    return out


def _elem(dtype_name: str) -> int:
    import onnx

    name = {"float32": "FLOAT", "float64": "DOUBLE"}.get(dtype_name, dtype_name.upper())
    return getattr(onnx.TensorProto, name, 0)


def roofline(a: Analysis, spec: Spec) -> RooflineResult:
    """Per-node and whole-model roofline of an analysis on a hardware spec."""
    raw = [node_roofline(n, spec) for n in a.main_nodes]
    eff = getattr(spec, "efficiency", None) or {}
    if float(eff.get("fusion.epilogue", 0)) >= 1:
        fused = epilogues(a)
        raw = [(_as_epilogue(r, n, fused[n.key], spec) if n.key in fused and r.time_s is not None else r)
               for r, n in zip(raw, a.main_nodes)]
    latency = sum(r.time_s for r in raw if r.time_s is not None)
    nodes = tuple(
        NodeRoofline(**{**r.__dict__, "share": (None if r.time_s is None or latency == 0 else r.time_s / latency)})
        for r in raw)
    acc: dict[str, list[float]] = {}
    for r in nodes:
        if r.time_s is None:
            continue
        v = acc.setdefault(r.op_type, [0, 0.0])
        v[0] += 1
        v[1] += r.time_s
    by_op = tuple(sorted(((op, int(c), t, (t / latency if latency else 0.0)) for op, (c, t) in acc.items()),
                         key=lambda x: (-x[2], x[0])))
    return RooflineResult(
        spec_id=spec.id, ridge_fp32=ridge_point(spec.peak_for("float32"), spec.memory_bandwidth_bytes_per_s),
        nodes=nodes, latency_s=latency, unknown_nodes=sum(r.time_s is None for r in nodes),
        compute_bound_time_s=sum(r.time_s for r in nodes if r.bound == COMPUTE and r.time_s),
        memory_bound_time_s=sum(r.time_s for r in nodes if r.bound == MEMORY and r.time_s),
        by_op_type=by_op,
    )
