"""How many threads onnxruntime's CPU kernel of a node runs on: the kernels that decide it themselves, by
their own cost model, run small inputs on one thread however many the session has.

onnxruntime's intra-op thread pool splits a loop of n units only when Eigen's cost model says the work pays
for the threads (``ThreadPool::ParallelFor``, ``Eigen::TensorCostModel::numThreads``): with the kernel's
declared cost per unit (bytes loaded ``l``, bytes stored ``s``, compute cycles ``c``),

    cycles = n · (l · 11/64 + s · 11/64 + c),   threads = clamp(⌊(cycles − 100,000) / 100,000 + 0.9⌋, 1, P)

(11/64: an L2 hit per 64-byte line; 100,000 cycles the start-up and per-thread cost), P the pool's degree
of parallelism (the session's intra-op threads; onnxruntime's default is one per physical core). A loop of
one unit never splits. So a kernel of cost (1, 1, 1) per element goes parallel at 156,280 elements:

* QLinearSigmoid, QLinearLeakyRelu (``QLinearLookupBase``): per element (1, 1, 1);
* QLinearAdd, QLinearMul whose output is one span (no broadcast, or a scalar input;
  :func:`onnxperf.predict.broadcast.node_spans`): per element (1, 1, 1) (``ParallelizeSingleSpan``: the
  larger input element size, the output's, a unit cost of 1). With a broadcast that makes several spans
  they run on **one thread** whatever the size (``BroadcastLooper`` splits only a single span; the float
  ops have a parallel path for spans, these do not): a squeeze-excite scale;
* QLinearGlobalAveragePool: channels-first, per channel of an image of H·W (H·W, 1, 8·H·W) over N·C units;
  channels-last (as onnxruntime runs it in a graph with a QLinearConv, its NHWC transformer), per image
  (H·W·C, C, 8·H·W·C) over N units: one thread at batch 1;
* Gather (``GatherCopyData``): one memcpy of a block of B bytes (the dims after the axis) per unit, over
  M·N units (M the dims before the axis, N the indices), at a declared cost of (0, 0, B): a Gather of one
  index on the outermost axis (a fused q/k/v tensor split into q, k and v) is one unit and runs on **one
  thread** whatever its size; an embedding lookup of 128 rows of 3 KiB splits.

Measured on the 2-core VM (onnxruntime 1.32, profiled kernel time, default threads against one thread): a
QLinearSigmoid of 150,016 elements took 41 µs at default threads and 39 at one, of 163,840 elements 29.5
and 43; QLinearMul and QLinearAdd split at the same size; a broadcast QLinearMul of 1 Mi elements took 199
µs at default threads and 196 at one (benchmarks/results/ort_threads.md, ``python
benchmarks/ort_threads.py``). In EfficientNet-B0's QOperator export the 23 QLinearSigmoids and 30
QLinearMuls between 33 Ki and 150 Ki elements ran on one thread, each about twice its two-thread time. A
float Gather of one index from [3, 1, 12, 197, 64] on axis 0 (ViT-B/16's q/k/v split) took 19 µs at default
threads and 17 at one; of [1024, 4, 256] on axis 1 (1,024 units of 1 KiB) 20 and 36.

QLinearConv and the float kernels are not modelled here: their kernels split their work whenever the pool
has threads (a depthwise QLinearConv of 28,224 multiply-adds per image ran 1.9x faster at two threads than
at one), which is what the calibrated efficiencies already are.
"""

from __future__ import annotations

import math

from onnxperf.base import dtypes
from onnxperf.predict.broadcast import is_qlinear_binary, node_spans
from onnxperf.predict.tensors import static_shape

#: Eigen's cost model (``TensorCostModel``): cycles per byte loaded or stored (an L2 hit per 64-byte line)
LOAD_CYCLES = STORE_CYCLES = 11 / 64
#: Eigen's cost model: the cycles one parallel region costs to start, and each thread it adds
STARTUP_CYCLES = PER_THREAD_CYCLES = 100_000
#: the element-wise QLinear kernels that split their elements by Eigen's cost model, cost (1, 1, 1) each
LOOKUP_OPS = frozenset({"QLinearSigmoid", "QLinearLeakyRelu"})
MS = "com.microsoft"
#: a calibrated spec's degree of parallelism of onnxruntime's intra-op pool (the threads it was calibrated at)
THREADS_KEY = "runtime.threads"


def cost_threads(units: int, loaded: float, stored: float, cycles: float, pool: int) -> int:
    """The threads onnxruntime's ``ThreadPool::ParallelFor`` uses for ``units`` units of work, each loading
    ``loaded`` bytes, storing ``stored`` and computing ``cycles`` (module docstring): 1 for one unit or a
    pool of one, else ⌊(n · (l·11/64 + s·11/64 + c) − 100,000) / 100,000 + 0.9⌋ within [1, ``pool``]."""
    if units <= 1 or pool <= 1:
        return 1
    total = units * (loaded * LOAD_CYCLES + stored * STORE_CYCLES + cycles)
    return max(1, min(pool, math.floor((total - STARTUP_CYCLES) / PER_THREAD_CYCLES + 0.9)))


def spec_pool(spec) -> int | None:
    """The pool a CPU spec was calibrated at (``runtime.threads``) when it has more than one thread, else None
    (a spec without it, or a GPU kernel model's: nothing here applies)."""
    eff = getattr(spec, "efficiency", None) or {}
    pool = float(eff.get(THREADS_KEY, 0))
    return int(pool) if pool > 1 and float(eff.get("fusion.gpu", 0)) < 1 else None


def kernel_threads(n, pool: int, nhwc: bool = False, channels_last: bool = False,
                   axis: int | None = None) -> int | None:
    """The threads the onnxruntime CPU kernel of node ``n`` runs on in a pool of ``pool`` threads, for the
    kernels that choose it by their own cost model (module docstring); None for any other node, or one
    whose shapes are not all known (it takes the pool's threads, as calibrated). ``nhwc``: the graph runs
    its quantized ops channels-last (:func:`onnxperf.predict.broadcast.channels_last`); ``channels_last``: the
    node's own attribute of that name is set (its input is already [N, H, W, C]); ``axis``: a Gather's
    (:func:`gather_axes`; None: not known, and the Gather is not modelled)."""
    if n.op_type == "Gather" and not n.domain:
        return gather_threads(n, axis, pool)
    if n.domain != MS or not n.outputs:
        return None
    out = static_shape(n.outputs[0])
    if out is None:
        return None
    numel = math.prod(out)
    if n.op_type in LOOKUP_OPS:
        return cost_threads(numel, 1, 1, 1, pool)
    if is_qlinear_binary(n):
        spans = node_spans(n, nhwc)
        if spans == 0:
            return None
        return 1 if spans > 1 else cost_threads(numel, 1, 1, 1, pool)
    if n.op_type == "QLinearGlobalAveragePool" and n.inputs:
        x = static_shape(n.inputs[0])
        if x is None or len(x) < 3:
            return None
        if channels_last or nhwc:
            c, image = (x[-1], math.prod(x[1:-1])) if channels_last else (x[1], math.prod(x[2:]))
            return cost_threads(x[0], image * c, c, 8 * image * c, pool)
        image = math.prod(x[2:])
        return cost_threads(x[0] * x[1], image, 1, 8 * image, pool)
    return None


def gather_threads(n, axis: int | None, pool: int) -> int | None:
    """The threads of onnxruntime's Gather on data [d_0 .. d_r-1] at ``axis`` a with indices of N elements:
    M·N units (M = d_0 ·..· d_a-1), each a memcpy of a block of B = d_a+1 ·..· d_r-1 · element-size bytes,
    declared at (0, 0, B): ``cost_threads(M·N, 0, 0, B, pool)``; None when a shape or the axis is not known."""
    if axis is None or len(n.inputs) < 2 or n.inputs[0] is None or n.inputs[1] is None:
        return None
    data, idx = static_shape(n.inputs[0]), static_shape(n.inputs[1])
    if data is None or idx is None:
        return None
    a = axis + len(data) if axis < 0 else axis
    if not 0 <= a < len(data):
        return None
    block = dtypes.nbytes(dtypes.elem_type(n.inputs[0].dtype), math.prod(data[a + 1:]))
    return cost_threads(math.prod(data[:a]) * math.prod(idx), 0, 0, block, pool)


def gather_axes(a) -> dict[str, int]:
    """Node key -> the ``axis`` attribute of each main-graph Gather of an analysis (0 where it has none), from the
    loaded file; empty without one (every Gather then takes the pool's threads)."""
    loaded = getattr(a, "loaded", None)
    if loaded is None:
        return {}
    g = loaded.graph
    return {n.key: next((at.i for at in g.nodes[n.id].attribute if at.name == "axis"), 0)
            for n in a.main_nodes if n.op_type == "Gather" and not n.domain}


def channels_last_attrs(a) -> frozenset[str]:
    """Keys of the main-graph nodes whose own ``channels_last`` attribute is set (a QLinearGlobalAveragePool of a
    channels-last export: :func:`kernel_threads`' ``channels_last``), from the loaded file; empty without one."""
    loaded = getattr(a, "loaded", None)
    if loaded is None:
        return frozenset()
    g = loaded.graph
    return frozenset(n.key for n in a.main_nodes if n.op_type == "QLinearGlobalAveragePool" and any(
        at.name == "channels_last" and at.i for at in g.nodes[n.id].attribute))


__all__ = ["LOOKUP_OPS", "THREADS_KEY", "channels_last_attrs", "cost_threads", "gather_axes", "gather_threads",
           "kernel_threads", "spec_pool"]
