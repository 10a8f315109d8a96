"""How much the GPU kernel model's per-node sum exceeds a per-kernel overlap (a diagnostic, issue 29).

    python benchmarks/kernel_overlap.py

The kernel model (:func:`onnxperf.predict.roofline._as_kernels`) prices every member of a fused kernel on
its own and sums them: a Conv and the Relu in its epilogue cost max(c_conv, m_conv) + m_relu, the
epilogue's write (the kernel's output) never overlapping the GEMM's arithmetic. A kernel that overlaps
them costs max(Σ c, Σ m) + o over its members. This prints, per configuration, the predicted latency
both ways (presets as shipped) and their ratio: how pessimistic the sum is where a kernel's write is
large beside its arithmetic (low-bandwidth GPUs, int8, large batch). Nothing is changed; it sizes the fix.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.cost.analysis import cost_analysis  # noqa: E402
from onnxperf.hardware.files import load_preset  # noqa: E402
from onnxperf.predict import precision as P  # noqa: E402
from onnxperf.predict.gpu_kernels import kernel_plan  # noqa: E402
from onnxperf.predict.roofline import roofline  # noqa: E402

RESNET = ROOT / "models" / "resnet50_torch.onnx"
BERT = ROOT / "benchmarks" / "models" / "bert_base_legacy.onnx"
#: (model, device, precision, batch, sequence)
CONFIGS = (
    (RESNET, "l4", "int8", 64, None), (RESNET, "l4", "int8", 8, None), (RESNET, "a100-80gb", "int8", 64, None),
    (RESNET, "a100-80gb", "fp16", 1, None), (RESNET, "l40s", "fp16", 32, None), (BERT, "l40s", "fp16", 32, 384),
    (BERT, "l40s", "int8", 64, 384), (BERT, "t4", "fp16", 8, 128),
)


def both(a, spec, precision) -> tuple[float, float]:
    """(Σ node times, Σ over kernels of max(Σ c, Σ m) + Σ o) of an analysis on a GPU spec, seconds."""
    r = roofline(a, spec, precision)
    plan = kernel_plan(a)
    per: dict[str, list[float]] = {}
    for n, x in zip(a.main_nodes, r.nodes):
        if not x.time_s:
            continue
        k = per.setdefault(plan.kernel.get(n.key, n.key), [0.0, 0.0, 0.0])
        k[0] += x.compute_s
        k[1] += x.memory_s
        k[2] += x.dispatch_s
    return sum(x.time_s or 0.0 for x in r.nodes), sum(max(c, m) + o for c, m, o in per.values())


def main() -> int:
    print("| model | device | precision | batch | seq | per-node sum | per-kernel max | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for model, device, prec, batch, seq in CONFIGS:
        dims = {"batch": batch} if seq is None else {"batch": batch, "sequence": seq}
        p = P.get(prec)
        s, k = both(P.what_if(cost_analysis(str(model), dims=dims), p), load_preset(device), p)
        print(f"| {model.stem} | {device} | {prec} | {batch} | {seq or '-'} | {s * 1e3:.3f} ms | {k * 1e3:.3f} ms | "
              f"{s / k:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
