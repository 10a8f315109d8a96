"""The kernels a GPU runtime runs for a graph: which nodes share a kernel, which tensors never leave it.

Every GPU inference runtime (TensorRT, onnxruntime's CUDA and TensorRT providers, torch.compile,
XLA) rewrites an exported graph before it runs it. A plain roofline charges every node its own
kernel and every tensor a round trip through device memory; on a GPU that is the largest error
there is (ResNet-50's Relu and residual Add nodes alone are a third of its plain-roofline time on
an RTX 3090). :func:`kernel_plan` models the fusions that all of them make, and says which it
assumed:

- **epilogue**: a Conv / ConvTranspose / MatMul / Gemm (float or quantized) takes the pointwise
  ops after it into its epilogue: bias, per-channel scale (a folded BatchNormalization), the
  activation, a residual Add (whose other operand it reads), an activation after that.
- **pointwise**: consecutive pointwise ops with no GEMM before them run as one kernel (TensorRT's
  PointWise fusion, XLA's loop fusion): GELU written out as Div/Erf/Add/Mul/Mul, a scale and mask.
- **normalization**: Softmax, LayerNormalization and the like, and a normalization written out
  (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), run as one kernel: a reduction
  joins a pointwise or normalization kernel, never a GEMM's epilogue (a row reduction spans tiles).
- **views and folding**: Reshape / Flatten / Squeeze / Unsqueeze / Identity and the other
  zero-cost views run no kernel; every node that depends only on constants and on shapes (with
  the dims bound, as an engine built for a shape profile has them) is computed when the engine
  is built.

- **transposed operands** (:mod:`onnxperf.predict.operands`): a Transpose that swaps the last two
  axes and is read only by MatMul / Gemm nodes runs no kernel: the GEMM reads its operand transposed.
  Attention's K-transpose is one: on onnxruntime's CUDA provider on an H200 a Llama decode step runs
  no Transpose kernel for it, where pricing it cost 8.3 ms of a 36 ms step
  (benchmarks/results/ort_cuda.md).

What it does not assume (:data:`NOT_ASSUMED`): fused multi-head attention (flash attention, TensorRT's
MHA plugins), layout-transpose elimination (a Transpose other than the above), GEMM horizontal fusion
(Q, K and V in one GEMM). Where a runtime
does those, the prediction is slow by their share (the benchmark `benchmarks/gpu_realism.py`
shows how much on BERT).

A tensor is *on-chip* (never written to or read from device memory) when its producer and all its
readers are in one kernel and it is not a graph output. Within a kernel a tensor read by several
members is read once.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxperf.cost.analysis import Costs
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.predict.folding import folded as folded_nodes
from onnxperf.predict.operands import transposed_operands
from onnxperf.predict.tensors import _numel, links

#: roots whose epilogue takes pointwise ops (float and quantized GEMM-like kernels)
GEMM_ROOTS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "FusedMatMul", "FusedConv", "FusedGemm",
                        "QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger", "MatMulNBits",
                        "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "GemmFastGelu"})
#: ops that reduce rows (a normalization or a reduction): one kernel each, joining pointwise kernels
ROW_OPS = frozenset({"Softmax", "LogSoftmax", "LayerNormalization", "SimplifiedLayerNormalization",
                     "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "RMSNormalization",
                     "GroupNormalization", "InstanceNormalization", "MeanVarianceNormalization", "LpNormalization",
                     "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                     "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
#: pointwise ops besides the elementwise and activation families
_POINTWISE_EXTRA = frozenset({"BatchNormalization", "Cast", "Where", "Clip", "Dropout", "QuantizeLinear",
                              "DequantizeLinear", "BiasGelu", "FastGelu", "QuickGelu", "BiasAdd"})
_NOT_POINTWISE = frozenset({"Softmax", "LogSoftmax", "Hardmax", "CumSum", "TopK"})

#: what the kernel model does not assume, as every output says it
NOT_ASSUMED = ("fused attention", "layout-transpose elimination", "horizontal GEMM fusion")

EPILOGUE = "epilogue"
POINTWISE = "pointwise"
NORMALIZATION = "normalization"

#: the wording of each assumption, as outputs show it
_SAY = {
    "epilogue": "pointwise op in the epilogue of a Conv/MatMul/Gemm",
    "residual": "residual Add in the epilogue of a Conv/MatMul/Gemm (reads its other operand)",
    "pointwise": "pointwise op fused with the pointwise op before it",
    "normalization": "op inside a normalization kernel (reduction + pointwise, or Softmax/LayerNorm)",
    "view": "view (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no kernel",
    "transposed": "Transpose of the last two axes read only by a MatMul/Gemm: read transposed by the GEMM, no kernel",
    "folded": "computed when the engine is built (constants and shapes)",
}


def is_pointwise(n) -> bool:
    """An op that computes each output element from the same-position elements of its inputs."""
    if n.op_type in _NOT_POINTWISE:
        return False
    return n.family in ("elementwise", "activation") or n.op_type in _POINTWISE_EXTRA


@dataclass(frozen=True)
class KernelPlan:
    """How a GPU runtime runs an analysis's main graph.

    ``kernel``: node key -> the key of the node that starts its kernel (absent: no kernel, see
    ``free``); ``launches``: the keys that start a kernel (one launch each); ``on_chip``: tensors
    that never touch device memory; ``free``: nodes that run nothing (views, built-time folding);
    ``assumed``: (what, how many nodes) for each fusion it assumed, in a fixed order."""

    kernel: dict[str, str]
    launches: frozenset[str]
    on_chip: frozenset[str]
    free: frozenset[str]
    assumed: tuple[tuple[str, int], ...]
    #: output of a view -> the tensor whose bytes it shows
    alias: dict[str, str]

    def real(self, name: str) -> str:
        return self.alias.get(name, name)

    @property
    def kernel_count(self) -> int:
        return len(self.launches)


def kernel_plan(a: Costs) -> KernelPlan:
    """Group the main graph's nodes into the kernels a GPU runtime runs (see the module text)."""
    nodes = a.main_nodes
    graph_outputs = {o.name for o in a.model.outputs}
    producer = links(nodes)[0]
    folded = folded_nodes(a, bound_shapes=True)
    free: set[str] = set()
    why: dict[str, str] = {}
    for n in nodes:
        if n.key in folded:
            free.add(n.key)
            why[n.key] = "folded"
        elif n.status == ZERO and n.macs == 0 and n.bytes_read == 0 and n.bytes_written == 0 and n.op_type != "Constant":
            free.add(n.key)
            why[n.key] = "view"
        elif n.op_type == "Constant":
            free.add(n.key)
    for key in transposed_operands(a) - free:
        free.add(key)
        why[key] = "transposed"
    # a view (or a transposed operand) passes its input through: follow it to the tensor that holds the bytes
    alias: dict[str, str] = {}
    for n in nodes:
        if why.get(n.key) in ("view", "transposed") and n.inputs and n.inputs[0] is not None:
            for o in n.outputs:
                if o is not None:
                    alias[o.name] = alias.get(n.inputs[0].name, n.inputs[0].name)

    def real(name: str) -> str:
        return alias.get(name, name)

    inits = set(a.loaded.graph.initializers) - set(a.loaded.graph.inputs) if a.loaded is not None else set()

    def constant(name: str) -> bool:
        p = producer.get(name)
        return name in inits or (p is not None and p.key in free and why.get(p.key) not in ("view", "transposed"))

    real_users: dict[str, list] = {}
    for n in nodes:
        if n.key in free:
            continue
        for i in n.inputs:
            if i is not None:
                real_users.setdefault(real(i.name), []).append(n)
    exported = {real(o) for o in graph_outputs}

    kernel: dict[str, str] = {}
    kind: dict[str, str] = {}  # kernel root key -> EPILOGUE / POINTWISE / NORMALIZATION / "other"
    for n in nodes:
        if n.key in free or n.status not in (COUNTED, ZERO):
            if n.key not in free:
                kernel[n.key] = n.key  # uncosted: a kernel of its own (its time stays unknown)
                kind[n.key] = "other"
            continue
        pw, row = is_pointwise(n), n.op_type in ROW_OPS
        joined = False
        if (pw or row) and n.outputs and n.outputs[0] is not None:
            for i in n.inputs:
                if i is None:
                    continue
                t = real(i.name)
                p = producer.get(t)
                if p is None or p.key not in kernel or t in exported:
                    continue
                root = kernel[p.key]
                k = kind[root]
                if pw and k == EPILOGUE:
                    # an epilogue writes the tile the GEMM computed: same number of elements
                    if _numel(n.outputs[0]) is None or _numel(n.outputs[0]) != _numel(p.outputs[0]):
                        continue
                elif not ((pw and k in (POINTWISE, NORMALIZATION)) or (row and k in (POINTWISE, NORMALIZATION))):
                    continue
                if not all(is_pointwise(u) or u.op_type in ROW_OPS for u in real_users.get(t, ())):
                    continue  # the tensor is written anyway for a reader that cannot fuse
                kernel[n.key] = root
                if k == EPILOGUE:
                    others = [x for x in n.inputs if x is not None and real(x.name) != t
                              and not constant(real(x.name)) and _numel(x) == _numel(n.outputs[0])]
                    why[n.key] = "residual" if others and n.op_type in ("Add", "Sum") else "epilogue"
                else:
                    why[n.key] = NORMALIZATION if (row or k == NORMALIZATION) else POINTWISE
                    if row and k == POINTWISE:
                        kind[root] = NORMALIZATION
                joined = True
                break
        if not joined:
            kernel[n.key] = n.key
            kind[n.key] = (EPILOGUE if n.op_type in GEMM_ROOTS else NORMALIZATION if row
                           else POINTWISE if pw else "other")
    # a normalization's pointwise members: say so
    for key, root in kernel.items():
        if key != root and kind[root] == NORMALIZATION and why.get(key) == POINTWISE:
            why[key] = NORMALIZATION
    on_chip = set()
    for name, p in producer.items():
        if p.key in free or name in exported or name in alias:
            continue
        readers = real_users.get(name, ())
        if readers and all(kernel.get(u.key) == kernel.get(p.key) for u in readers):
            on_chip.add(name)
    counts: dict[str, int] = {}
    for w in why.values():
        counts[w] = counts.get(w, 0) + 1
    assumed = tuple((_SAY[w], counts[w]) for w in _SAY if counts.get(w))
    launches = frozenset(k for k, r in kernel.items() if k == r)
    return KernelPlan(kernel, launches, frozenset(on_chip), frozenset(free), assumed, alias)
