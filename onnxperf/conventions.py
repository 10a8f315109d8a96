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

What each convention counts, per op family and per op, is the table :data:`TABLES` below, one
:class:`Counting` (a formula and its description) per entry; docs/conventions.md shows it
(``python -m onnxperf.conventions`` prints the section, ``--update`` rewrites it), and
``tests/test_conventions_tools.py`` checks it against the tools themselves on the models of
``models/conventions/``. Memory traffic is the same under every convention.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules are imported where a cost is re-expressed: the CLI's parser reads only the names
    from .ops.registry import NodeView, OpCost, RuleEntry

CONVENTIONS = ("default", "torch", "fvcore")


def _cost(macs: int = 0, flops: int = 0, exact: bool = True) -> OpCost:
    from .ops.registry import OpCost

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
    from .ops.registry import prod

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

TABLES: dict[str, Convention] = {"torch": TORCH, "fvcore": FVCORE}

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

BEGIN = "<!-- BEGIN generated by `python -m onnxperf.conventions` -->"
END = "<!-- END generated -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def conventions_markdown() -> str:
    """The section of docs/conventions.md generated from :data:`TABLES` and :data:`ONNX_LIMITS`."""
    from .ops.registry import FAMILIES

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
    lines += ["", "Where an ONNX graph cannot carry what the PyTorch tool saw (the fixtures of "
              "`models/conventions/` that differ from the tool, and why):", ""]
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
    from .ops.registry import REGISTRY

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
