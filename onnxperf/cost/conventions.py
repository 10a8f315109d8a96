"""Counting conventions: what MACs and FLOPs mean, and how other tools count.

* ``default`` (onnxperf): a MAC is one multiply-accumulate of matmul-like or conv work; a
  FLOP is one floating-point operation: 2 per MAC plus every elementwise, reduction,
  normalization and activation op, with the per-element costs of docs/conventions.md.
* ``torch``: ``torch.utils.flop_counter.FlopCounterMode`` as it counts on the CPU: 2 FLOPs per
  multiply-add of the kernels it has a formula for (mm, addmm, bmm, baddbmm, convolution,
  scaled-dot-product attention), nothing else.
* ``fvcore``: ``fvcore.nn.FlopCountAnalysis``: one "flop" per multiply-add of conv, matmul,
  linear and einsum, fixed per-element counts for the norms, 2-D upsampling, 2-D adaptive
  average pooling and grid sampling, nothing else.
* ``tf``: the TF profiler's ``float_ops``
  (``tf.compat.v1.profiler.profile(graph, options=ProfileOptionBuilder.float_operation())``) on
  the TensorFlow graph tf2onnx converted: the ``@ops.RegisterStatistics(op, "flops")`` functions
  of ``tensorflow/python/ops/nn_ops.py`` and ``tensorflow/python/profiler/internal/flops_registry.py``,
  each ONNX op counted as the TF op tf2onnx writes it from; ops without such a function count 0.

What each convention counts, per op family and per op, is the table :data:`TABLES` below, one
:class:`Counting` (a formula and its description) per entry; docs/conventions.md shows it
(``python -m onnxperf.cost.conventions`` prints the section, ``--update`` rewrites it), and
``tests/test_conventions_tools.py`` and ``tests/test_conventions_tf.py`` check it against the
tools themselves on the models of ``models/conventions/`` and ``models/conventions/keras/``. Memory traffic is the same under every convention.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from onnxperf.cost.convention_names import CONVENTIONS
from onnxperf.cost.ops.registry import FAMILIES, REGISTRY, NodeView, OpCost, RuleEntry, prod


def _cost(macs: int = 0, flops: int = 0, exact: bool = True) -> OpCost:
    return OpCost(macs=macs, flops=flops, exact=exact)


@dataclass(frozen=True)
class Counting:
    """How one convention counts an op: ``fn(node, default cost) -> cost`` and the sentence
    docs/conventions.md prints for it."""

    text: str
    fn: Callable[[NodeView, OpCost], OpCost]


@dataclass(frozen=True)
class Convention:
    """A tool's way of counting: per op family, with per-op exceptions (keyed by the op type in
    the default domain, ``domain::op`` elsewhere); an op in neither counts 0."""

    name: str
    source: str
    unit: str
    macs_field: str
    families: dict[str, Counting]
    ops: dict[str, Counting] = field(default_factory=dict)

    def counting(self, entry: RuleEntry) -> Counting | None:
        key = entry.op_type if entry.domain in ("", "ai.onnx") else f"{entry.domain}::{entry.op_type}"
        found = self.ops.get(key)
        return found if found is not None else self.families.get(entry.family)


# ---------------------------------------------------------------------------------- formulas

def _zero(n: NodeView, cost: OpCost) -> OpCost:
    """Not counted."""
    return _cost(exact=cost.exact)


def _bodies(n: NodeView, cost: OpCost) -> OpCost:
    """The control-flow node's cost as its rule gave it: the sum, over every run of a body, of the
    body's nodes, each already counted under this convention by the walker (re-expressing the sum
    again would count the body's work twice or, for a family the convention leaves out, not at all)."""
    return _cost(macs=cost.macs, flops=cost.flops, exact=cost.exact)


#: how every convention counts If, Loop, Scan and SequenceMap: as the framework counts the ops
#: each run of the body executes (torch's FlopCounterMode and fvcore see every iteration's kernels)
_CONTROL_FLOW = Counting("each run of a body (the branch taken, trips × the loop body): its ops counted as "
                         "in the main graph", _bodies)


def _per_mac(flops_per_mac: int) -> Callable[[NodeView, OpCost], OpCost]:
    def per_mac(n: NodeView, cost: OpCost) -> OpCost:
        return _cost(cost.macs, flops_per_mac * cost.macs, cost.exact)

    return per_mac


def _unit_constant(n: NodeView, i: int) -> bool:
    """Input ``i`` is a constant of ones: how the exporters write a norm without an affine weight
    (torch's ``weight=None``)."""
    v = n.const(i)
    return v is not None and v.size > 0 and bool((v == 1).all())


def _affine(n: NodeView) -> bool:
    """The norm has an affine weight (fvcore's ``has_affine``): its scale input is present and
    not a constant of ones."""
    return n.has_input(1) and not _unit_constant(n, 1)


def _fvcore_norm(n: NodeView, cost: OpCost) -> OpCost:
    """fvcore's ``norm_flop_counter``: 5 per input element with an affine weight, 4 without."""
    return _cost(flops=n.inp(0).numel * (5 if _affine(n) else 4), exact=cost.exact)


def _fvcore_batch_norm(n: NodeView, cost: OpCost) -> OpCost:
    """fvcore's ``batchnorm_flop_jit``: training uses the norm counter (5 / 4 per element);
    inference 2 per element with an affine weight, 1 without."""
    training = bool(n.attr("training_mode", 0)) if n.opset >= 14 else len(n.outputs) > 1
    if training:
        return _fvcore_norm(n, cost)
    return _cost(flops=n.inp(0).numel * (2 if _affine(n) else 1), exact=cost.exact)


#: fvcore's upsampling handlers: only 2-D (4-D tensors): ``upsample_nearest2d`` 1 and
#: ``upsample_bilinear2d`` 4 per output element; bicubic, antialiased, 1-D and 3-D upsampling
#: have no handler.
_FVCORE_UPSAMPLE_2D = {"nearest": 1, "linear": 4, "bilinear": 4}


def _fvcore_resize(n: NodeView, cost: OpCost) -> OpCost:
    x = n.inp(0)
    mode = n.attr("mode", "nearest")
    per = _FVCORE_UPSAMPLE_2D.get(mode, 0) if x.rank == 4 and not n.attr("antialias", 0) else 0
    return _cost(flops=n.out(0).numel * per, exact=cost.exact)


def _fvcore_global_average_pool(n: NodeView, cost: OpCost) -> OpCost:
    x = n.inp(0)
    return _cost(flops=x.numel if x.rank == 4 else 0, exact=cost.exact)


def _fvcore_grid_sample(n: NodeView, cost: OpCost) -> OpCost:
    return _cost(flops=4 * n.out(0).numel, exact=cost.exact)


def _fvcore_matmul(n: NodeView, cost: OpCost) -> OpCost:
    """fvcore's ``matmul_flop_jit``: elements of A × the last dim of B (a batch that only B has
    is not counted)."""
    a, b = n.inp(0), n.inp(1)
    if b.rank < 2:
        return _cost(cost.macs, cost.macs, cost.exact)
    macs = prod(a.shape) * b.shape[-1]
    return _cost(macs, macs, cost.exact)


def fvcore_einsum_macs(equation: str, shapes: list[tuple[int, ...]]) -> int:
    """fvcore's ``einsum_flop_jit``: letters renamed in order of appearance; ``abc,abd->acd`` and
    ``abc,adc->adb`` are batched matmuls; any other equation costs half the "optimized FLOP count"
    of ``numpy.einsum_path(..., optimize="optimal")`` (numpy counts a multiply and an add)."""
    import numpy as np

    eq = equation.replace(" ", "")
    letters = OrderedDict((c, 0) for c in eq if c.isalpha()).keys()
    eq = eq.translate({ord(c): 97 + i for i, c in enumerate(letters)})
    if eq == "abc,abd->acd":
        n_, c, t = shapes[0]
        return n_ * c * t * shapes[-1][-1]
    if eq == "abc,adc->adb":
        n_, t, g = shapes[0]
        return n_ * t * g * shapes[-1][1]
    views = [np.broadcast_to(np.zeros((), dtype=np.float64), s) for s in shapes]  # shapes only, no memory
    report = np.einsum_path(eq, *views, optimize="optimal")[1]
    for line in report.split("\n"):
        if "optimized flop" in line.lower():
            return int(np.floor(float(line.split(":")[-1]) / 2))
    raise ValueError(f"numpy.einsum_path gave no flop count for {equation!r}")


def _fvcore_einsum(n: NodeView, cost: OpCost) -> OpCost:
    macs = fvcore_einsum_macs(n.attr("equation", ""), [t.shape for t in n.present_inputs])
    return _cost(macs, macs, cost.exact)


# ---------------------------------------------------------------------------------- the table

_NOT_COUNTED = "0"

TORCH = Convention(
    name="torch",
    source="`torch.utils.flop_counter.FlopCounterMode` (CPU, default backends)",
    unit="FLOP (2 per multiply-add)",
    macs_field="half the FLOPs: the multiply-adds counted",
    families={
        "conv": Counting("2 per MAC, no bias (`aten.convolution`)", _per_mac(2)),
        "matmul": Counting("2 per MAC, no bias (`aten.mm`, `addmm`, `bmm`, `baddbmm`; torch.einsum runs as "
                           "bmm after summing out the labels only one operand has, as onnxperf's Einsum rule)",
                           _per_mac(2)),
        "attention": Counting("2 per MAC of the projections and attention products", _per_mac(2)),
        "rnn": Counting("2 per MAC of the gate products (on CPU GRU and RNN run as one `addmm` per step)",
                        _per_mac(2)),
        "control_flow": _CONTROL_FLOW,
    },
    ops={
        "Det": Counting("0: `linalg.det` is an LU factorization, no formula", _zero),
        "LSTM": Counting("0: on CPU torch runs LSTM as one oneDNN kernel without a formula (with "
                         "`torch.backends.mkldnn.flags(enabled=False)` it runs as addmm: 2 per MAC)", _zero),
    },
)

FVCORE = Convention(
    name="fvcore",
    source="`fvcore.nn.FlopCountAnalysis`",
    unit="MAC (fvcore calls one multiply-add a flop)",
    macs_field="the multiply-adds of conv, matmul, einsum and attention (= the flops there)",
    families={
        "conv": Counting("1 per MAC, no bias (`aten::_convolution`)", _per_mac(1)),
        "matmul": Counting("1 per MAC, no bias (`aten::addmm`, `linear`, `bmm`)", _per_mac(1)),
        "attention": Counting("1 per MAC of the projections and attention products", _per_mac(1)),
        "rnn": Counting("0: no handler for `aten::lstm`, `gru`, `rnn_tanh`, `rnn_relu`", _zero),
        "control_flow": _CONTROL_FLOW,
    },
    ops={
        "MatMul": Counting("elements of A × columns of B (`aten::matmul`: a batch only B has is not "
                           "counted)", _fvcore_matmul),
        "Einsum": Counting("`abc,abd->acd` and `abc,adc->adb` as bmm; otherwise half of "
                           "`numpy.einsum_path(optimize=\"optimal\")`'s FLOP count", _fvcore_einsum),
        "Det": Counting("0: no handler for `aten::linalg_det`", _zero),
        "BatchNormalization": Counting("inference 2 per element (1 with a unit scale: no affine weight); "
                                       "training 5 (4)", _fvcore_batch_norm),
        "LayerNormalization": Counting("5 per element (4 with a unit scale: no affine weight)", _fvcore_norm),
        "GroupNormalization": Counting("5 per element (4 with a unit scale: no affine weight)", _fvcore_norm),
        "InstanceNormalization": Counting("5 per element (4 with a unit scale: no affine weight)", _fvcore_norm),
        "Resize": Counting("4-D only: nearest 1, linear 4 per output element (`upsample_nearest2d`, "
                           "`upsample_bilinear2d`); 1-D, 3-D, cubic, antialiased: 0", _fvcore_resize),
        "Upsample": Counting("as Resize", _fvcore_resize),
        "GlobalAveragePool": Counting("4-D only: 1 per input element (`adaptive_avg_pool2d`); 1-D, 3-D: 0",
                                      _fvcore_global_average_pool),
        "GridSample": Counting("4 per output element (`aten::grid_sampler`, bilinear assumed)",
                               _fvcore_grid_sample),
    },
)

# ---------------------------------------------------------------------------------- tf

def _tf_conv(n: NodeView, cost: OpCost) -> OpCost:
    """TF's ``Conv2D``, ``Conv3D``, ``DepthwiseConv2dNative``: output elements × the kernel's
    spatial size × its input depth × 2 (2 per MAC, grouped and depthwise included); a bias
    (``BiasAdd``, which tf2onnx fuses into the Conv) 1 per output element."""
    bias = n.out(0).numel if n.has_input(2) else 0
    return _cost(cost.macs, 2 * cost.macs + bias, cost.exact)


def _tf_conv_transpose(n: NodeView, cost: OpCost) -> OpCost:
    """TF's ``Conv2DBackpropInput`` (Conv1DTranspose runs as it too):
    ``int(2 · numel(Y) · numel(W) / (C_out · prod(strides)))``, float division then truncation,
    as the profiler does; it equals 2 per MAC only where Y's spatial size is X's times the stride
    (padding "same"). ``Conv3DBackpropInputV2`` has no function: 0 on 5-D tensors. A bias 1 per
    output element."""
    y, w = n.out(0), n.inp(1)
    bias = y.numel if n.has_input(2) else 0
    if y.rank > 4:
        return _cost(flops=bias, exact=cost.exact)
    strides = n.attr("strides") or [1] * (y.rank - 2)
    flops = int(2 * y.numel * w.numel / (y.shape[1] * prod(strides)))
    return _cost(flops // 2, flops + bias, cost.exact)


def _tf_matmul(n: NodeView, cost: OpCost) -> OpCost:
    """TF's ``MatMul`` and ``BatchMatMulV2``: k × output elements × 2 (2 per MAC); Gemm's C
    (the ``BiasAdd`` tf2onnx fuses into it) 1 per output element."""
    bias = n.out(0).numel if n.op_type == "Gemm" and n.has_input(2) else 0
    return _cost(cost.macs, 2 * cost.macs + bias, cost.exact)


def _tf_pool(n: NodeView, cost: OpCost) -> OpCost:
    """TF's ``MaxPool``/``AvgPool`` (1-D pooling runs as them): kernel area × output elements;
    ``MaxPool3D``/``AvgPool3D`` have no function: 0 on 5-D tensors."""
    y = n.out(0)
    if y.rank > 4:
        return _cost(exact=cost.exact)
    return _cost(flops=prod(n.attr("kernel_shape")) * y.numel, exact=cost.exact)


#: ONNX op -> (TF op it is written from, FLOPs per element, counted on the output's ("out") or
#: input 0's ("in") elements). Floating-point outputs only: the profiler's functions never look at
#: the element type, but on static shapes the TF graph's integer (shape) arithmetic is folded
#: before tf2onnx converts it; what integer arithmetic an exported graph holds, tf2onnx wrote.
_TF_PER_ELEMENT: dict[str, tuple[str, int, str]] = {
    "Add": ("AddV2/BiasAdd", 1, "out"), "Sub": ("Sub", 1, "out"), "Mul": ("Mul", 1, "out"),
    "Div": ("RealDiv", 1, "out"), "Pow": ("Pow", 1, "out"),
    "Greater": ("Greater", 1, "out"), "Less": ("Less", 1, "out"), "Equal": ("Equal", 1, "out"),
    "GreaterOrEqual": ("GreaterEqual", 1, "out"), "LessOrEqual": ("LessEqual", 1, "out"),
    "Neg": ("Neg", 1, "in"), "Reciprocal": ("Reciprocal", 1, "in"), "Log": ("Log", 1, "in"),
    "Sqrt": ("the half of Rsqrt, 2, which tf2onnx writes as Sqrt and Reciprocal", 1, "in"),
}


def _tf_elementwise(n: NodeView, cost: OpCost) -> OpCost:
    if not n.out(0).is_float:
        return _cost(exact=cost.exact)
    if n.op_type in ("Sum", "Max", "Min"):  # AddN, Maximum, Minimum: (inputs − 1) per element
        return _cost(flops=(len(n.present_inputs) - 1) * n.out(0).numel, exact=cost.exact)
    found = _TF_PER_ELEMENT.get(n.op_type)
    if found is None:
        return _cost(exact=cost.exact)
    _, per, on = found
    return _cost(flops=per * (n.out(0) if on == "out" else n.inp(0)).numel, exact=cost.exact)


def _tf_reduce(n: NodeView, cost: OpCost) -> OpCost:
    """TF's reduction counter, in·reduce + out·(finalize − reduce): ``Mean`` (1, 1) gives the
    input's elements, ``Sum``, ``ArgMax``, ``ArgMin`` (1, 0) input − output elements."""
    x, y = n.inp(0), n.out(0)
    if n.op_type in ("ReduceMean", "GlobalAveragePool"):
        return _cost(flops=x.numel, exact=cost.exact)
    return _cost(flops=x.numel - y.numel, exact=cost.exact)


def _tf_softmax(n: NodeView, cost: OpCost) -> OpCost:
    return _cost(flops=5 * n.inp(0).numel, exact=cost.exact)


_TF_ELEMENTWISE_TEXT = ("1 per output element: Add (`AddV2`, `BiasAdd`), Sub, Mul, Div (`RealDiv`), Pow and the "
                        "comparisons; Sum, Max, Min (`AddN`, `Maximum`, `Minimum`): inputs − 1 per output "
                        "element; 1 per input element: Neg, Reciprocal, Log, Sqrt (`Rsqrt` is 2, which tf2onnx "
                        "writes as Sqrt and Reciprocal: a TF `Sqrt`, which has no function, is 0 there and 1 "
                        "here); every other op (Exp, Abs, Erf, Where, ...) 0. Floating-point outputs only: the "
                        "integer (shape) arithmetic of an exported graph is tf2onnx's, the TF graph's is folded")

TF = Convention(
    name="tf",
    source="TF profiler `float_ops` (`tf.compat.v1.profiler.profile`, `ProfileOptionBuilder.float_operation()`) "
           "on the graph tf2onnx converted; each ONNX op counted as the TF op tf2onnx writes it from",
    unit="FLOP (2 per multiply-add)",
    macs_field="half the FLOPs of conv and matmul (without bias)",
    families={
        "conv": Counting("2 per MAC (`Conv2D`, `Conv3D`, `DepthwiseConv2dNative`; 1-D convs run as `Conv2D`), "
                         "bias 1 per output element (`BiasAdd`)", _tf_conv),
        "matmul": Counting("2 per MAC (`MatMul`, `BatchMatMulV2`), Gemm's C 1 per output element (`BiasAdd`)",
                           _tf_matmul),
        "elementwise": Counting(_TF_ELEMENTWISE_TEXT, _tf_elementwise),
        "activation": Counting("0: `Relu`, `Relu6`, `Elu`, `Selu`, `Sigmoid`, `Tanh`, `Softplus`, ... have no "
                               "function (Keras' gelu and swish are decomposed: their Mul, Add and Pow count "
                               "as elementwise ops)", _zero),
        "reduce": Counting("ReduceMean 1 per input element (`Mean`); ReduceSum, ArgMax, ArgMin input − output "
                           "elements (`Sum`, `ArgMax`, `ArgMin`); others (`Max`, `Min`, `Prod`) 0", _zero),
        "rnn": Counting("0: the Keras recurrent layers run as a `While` loop whose body the profiler counts once "
                        "and partly (shapes unknown inside); unrolled (`unroll=True`) they export as Gemm, "
                        "MatMul and elementwise ops, counted as such", _zero),
        "control_flow": Counting("each run of a body (the branch taken, trips × the loop body): its ops counted "
                                 "as in the main graph, as TF executes them (the profiler itself counts a `While` "
                                 "body once, whatever the trip count)", _bodies),
    },
    ops={
        "ConvTranspose": Counting("`Conv2DBackpropInput`: int(2·numel(Y)·numel(W) / (C_out·prod(strides))), 2 per "
                                  "MAC only with padding \"same\"; 0 on 5-D (`Conv3DBackpropInputV2` has no "
                                  "function); bias 1 per output element", _tf_conv_transpose),
        "Einsum": Counting("0: TF's `Einsum` has no function (tf2onnx writes most as MatMul: see `tf_einsum`; "
                           "Keras' EinsumDense runs as `BatchMatMulV2`)", _zero),
        "Det": Counting("0: `MatrixDeterminant` has no function", _zero),
        "ReduceMean": Counting("1 per input element (`Mean`)", _tf_reduce),
        "ReduceSum": Counting("input − output elements (`Sum`)", _tf_reduce),
        "ArgMax": Counting("input − output elements", _tf_reduce),
        "ArgMin": Counting("input − output elements", _tf_reduce),
        "GlobalAveragePool": Counting("1 per input element (`Mean`, which tf2onnx writes as GlobalAveragePool)",
                                      _tf_reduce),
        "MaxPool": Counting("kernel area × output elements (`MaxPool`); 5-D: 0", _tf_pool),
        "AveragePool": Counting("kernel area × output elements (`AvgPool`); 5-D: 0", _tf_pool),
        "Softmax": Counting("5 per element (`Softmax`)", _tf_softmax),
    },
)

TABLES: dict[str, Convention] = {"torch": TORCH, "fvcore": FVCORE, "tf": TF}

#: Where an ONNX graph cannot carry what the PyTorch tool saw: the convention then gives another
#: figure than the tool, and the fixtures of ``models/conventions/`` say which and why.
ONNX_LIMITS: dict[str, str] = {
    "sdpa_cpu": "torch: on CPU FlopCounterMode sees `scaled_dot_product_attention` run as "
                "`_scaled_dot_product_flash_attention_for_cpu`, which has no formula (0); the exporter writes "
                "the two attention products as MatMul, which the torch convention counts at 2 per MAC, as "
                "FlopCounterMode counts the math backend (`sdpa_kernel(SDPBackend.MATH)`) and the CUDA kernels",
    "sdpa_fvcore": "fvcore: no handler for `aten::scaled_dot_product_attention` (0); the legacy exporter writes "
                   "the two attention products as MatMul, which the fvcore convention counts (1 per MAC)",
    "adaptive_avg_pool": "fvcore: the exporter writes AdaptiveAvgPool2d to an output larger than 1×1 as a plain "
                         "AveragePool (kernel = stride), which reads as nn.AvgPool2d (not counted) where fvcore "
                         "counts `adaptive_avg_pool2d` (1 per input element)",
    "group_norm_17": "fvcore: at opset 17 the legacy exporter writes GroupNorm as InstanceNormalization with a unit "
                     "scale (4 per element) then Mul and Add (not counted), where fvcore counts "
                     "`aten::group_norm` with its affine weight (5 per element)",
    "batch_norm_folded": "fvcore: the legacy exporter folds an inference BatchNorm that follows a Conv into the "
                         "Conv's weights; fvcore counts the BatchNorm (2 per element), the ONNX graph has none",
    "unit_weight": "fvcore: a norm whose affine weight is exactly 1 everywhere (a freshly initialized one) reads "
                   "as a norm without affine weight (4 per element instead of 5), as the exporters write "
                   "`weight=None` as a constant of ones",
    "tf_einsum": "tf: Keras' MultiHeadAttention computes its scores and context with `tf.einsum`, whose `Einsum` "
                 "nodes the profiler counts 0 (no function); tf2onnx writes them as MatMul, which the tf convention "
                 "counts at 2 per MAC, as the profiler counts the `BatchMatMulV2` of the projections",
    "tf_const_folded": "tf: tf2onnx first runs grappler's constant folding on the TF graph: nodes computed from "
                       "constants only become initializers (a Keras BatchNormalization's per-channel "
                       "`rsqrt(variance + eps) * gamma` and `beta - mean * scale`; UpSampling's int32 shape Mul; an "
                       "unrolled RNN's first recurrent MatMul on its zero initial state, and the add of that zero). "
                       "The profiler counts those nodes on the frozen graph; the ONNX graph has none of them",
}


def apply(convention: str, entry: RuleEntry, n: NodeView, cost: OpCost) -> OpCost:
    """Re-express a rule's default cost under ``convention``. Bytes are never changed
    (the walker keeps the traffic from the default cost)."""
    if convention == "default":
        return cost
    table = TABLES.get(convention)
    if table is None:
        raise ValueError(f"unknown convention {convention!r} (choose from {', '.join(CONVENTIONS)})")
    counting = table.counting(entry)
    return _zero(n, cost) if counting is None else counting.fn(n, cost)


# ---------------------------------------------------------------------------------- docs

BEGIN = "<!-- BEGIN generated by `python -m onnxperf.cost.conventions` -->"
END = "<!-- END generated -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def conventions_markdown() -> str:
    """The section of docs/conventions.md generated from :data:`TABLES` and :data:`ONNX_LIMITS`."""
    names = list(TABLES)
    head = "| | `default` (onnxperf) | " + " | ".join(f"`{c}`" for c in names) + " |"
    lines = [BEGIN, head, "|---|---|" + "---|" * len(names)]
    lines.append("| source | this page, [rules.md](rules.md) | "
                 + " | ".join(_cell(TABLES[c].source) for c in names) + " |")
    lines.append("| unit of FLOPs | FLOP | " + " | ".join(_cell(TABLES[c].unit) for c in names) + " |")
    lines.append("| MACs field | every multiply-accumulate | "
                 + " | ".join(_cell(TABLES[c].macs_field) for c in names) + " |")
    others = []
    for fam in FAMILIES:
        rows = [(fam, [TABLES[c].families.get(fam) for c in names])]
        ops = sorted({op for c in names for op, k in TABLES[c].ops.items() if _family_of(op) == fam})
        rows += [(f"{fam}: {op}", [TABLES[c].ops.get(op) for c in names]) for op in ops]
        if all(k is None for _, ks in rows for k in ks):
            others.append(fam)
            continue
        for label, _ in rows:
            cells = [_cell_for(TABLES[c], fam, op_label=label if ": " in label else None) for c in names]
            lines.append(f"| {label} | per [rules.md](rules.md) | " + " | ".join(cells) + " |")
    lines.append(f"| every other family ({', '.join(others)}) | per [rules.md](rules.md) | "
                 + " | ".join(_NOT_COUNTED for _ in names) + " |")
    lines += ["", "Where an ONNX graph cannot carry what the tool saw (the fixtures of "
              "`models/conventions/` and `models/conventions/keras/` that differ from the tool, and why):", ""]
    lines += [f"- `{key}`: {text}" for key, text in ONNX_LIMITS.items()]
    lines.append(END)
    return "\n".join(lines) + "\n"


def _cell_for(conv: Convention, family: str, op_label: str | None) -> str:
    if op_label is None:
        k = conv.families.get(family)
        return _cell(k.text) if k is not None else _NOT_COUNTED
    op = op_label.split(": ", 1)[1]
    k = conv.ops.get(op)
    if k is not None:
        return _cell(k.text)
    return "as the family" if conv.families.get(family) is not None else _NOT_COUNTED


def _family_of(op_key: str) -> str:
    domain, _, op = op_key.rpartition("::")
    entry = REGISTRY.lookup(domain, op, None)
    return entry.family if entry is not None else "misc"


def updated_page(text: str) -> str:
    """``text`` (docs/conventions.md) with its generated section replaced by the current one."""
    start, end = text.index(BEGIN), text.index(END) + len(END) + 1
    return text[:start] + conventions_markdown() + text[end:]


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--update"]:
        from pathlib import Path

        page = Path(__file__).resolve().parent.parent / "docs" / "conventions.md"
        page.write_text(updated_page(page.read_text()))
    else:
        print(conventions_markdown(), end="")
