"""Decoder-LLM error bands per GPU class (``band.llm.*``), from the rows ``benchmarks/llm_realism.py`` compared.

    python benchmarks/llm_realism.py && python benchmarks/llm_bands.py [--write]

The presets' kernel-model constants are fitted on CNN and BERT rows (``benchmarks/gpu_realism.py``), but
for the share of the fp8 / fp4 peak a GEMM attains (``matmul.fp8.compute``), fitted on half of the TensorRT-LLM
rows at that precision (``benchmarks/llm_realism.py --fit-low``): those rows (the ``fitted`` column) are left
out, so every row a band is made of is held out. Per class of
``benchmarks/gpu_realism.py`` (``CLASSES``), over the compared rows of a tuned serving runtime
(TensorRT-LLM and vLLM as tables write them; llama.cpp's kernels attain less and its rows describe that runtime, not the GPU)
and of the metrics a decode step predicts (batch-1 decode, batched throughput, idle time to first
token; the serving rows carry queueing the model does not have), the ratio measured / predicted
time (``ratio`` of the table: predicted / published throughput, or published / predicted latency)
gives P10, P90 and the count. ``--write`` puts them in every preset of the class as
``band.llm.p10``, ``band.llm.p90``, ``band.llm.points`` with their source; a class without rows
gets none (its outputs say so).

It reads the "Every compared row" table of ``benchmarks/results/llm_realism.md`` (columns: gen, model,
device, precision, runtime, metric, B, in/out, predicted as, published, predicted, ratio, ...).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from gpu_realism import CLASS_OF, CLASSES, PRESETS, pct, set_table  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "llm_realism.md"
RUNTIMES = ("tensorrt-llm", "vllm")
METRICS = ("decode, batch 1", "batched throughput", "TTFT (idle)")


def rows(text: str) -> list[dict]:
    """The compared rows of the results file."""
    i = text.index("## Every compared row")
    lines = [ln for ln in text[i:].split("\n") if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(head):
            continue
        out.append(dict(zip(head, cells)))
    return out


def _device(cell: str) -> str:
    return re.sub(r"[*\s].*$", "", cell)


def bands(rs: list[dict]) -> dict[str, dict]:
    acc: dict[str, list[float]] = {}
    devices: dict[str, set] = {}
    for r in rs:
        if r["runtime"] not in RUNTIMES or not any(r["metric"] == m or r["metric"].startswith(m + " (")
                                                   for m in METRICS):
            continue
        if r.get("fitted", "-") != "-":
            continue  # a constant was fitted on it: in sample
        cls = CLASS_OF.get(_device(r["device"]))
        if cls is None:
            continue
        try:
            ratio = float(r["ratio"])
        except ValueError:
            continue
        acc.setdefault(cls, []).append(ratio)
        devices.setdefault(cls, set()).add(_device(r["device"]))
    return {c: {"p10": round(pct(v, 10), 2), "p90": round(pct(v, 90), 2), "points": len(v),
                "median": statistics.median(v), "devices": sorted(devices[c])} for c, v in sorted(acc.items())}


def source(cls: str, b: dict, date: str) -> str:
    return (f"measured / predicted time on the {b['points']} published decoder rows of the {cls} class "
            f"({', '.join(b['devices'])}; {', '.join(RUNTIMES)}; {', '.join(METRICS)}; "
            "benchmarks/published/llm_inference.json), all held out (the constants are fitted on CNN and BERT "
            "rows, and the rows matmul.fp8.compute was fitted on are left out); P10 and P90 by "
            f"benchmarks/llm_bands.py from benchmarks/results/llm_realism.md, {date}")


def write(b: dict[str, dict], date: str) -> list[str]:
    changed = []
    for cls, presets in CLASSES.items():
        for p in presets:
            path = PRESETS / f"{p}.toml"
            text = path.read_text()
            new = "\n".join(ln for ln in text.split("\n") if not re.match(r'^"band\.llm\.(p10|p90|points)"\s*=', ln))
            if cls in b:
                x = b[cls]
                new = set_table(new, "efficiency", {"band.llm.p10": f"{x['p10']:g}", "band.llm.p90": f"{x['p90']:g}",
                                                    "band.llm.points": str(x["points"])})
                src = json.dumps(source(cls, x, date))
                new = set_table(new, "efficiency_sources", {"band.llm.p10": src, "band.llm.p90": src,
                                                            "band.llm.points": src})
            if new != text:
                path.write_text(new)
                changed.append(p)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write the bands into the presets")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args(argv)
    b = bands(rows(RESULTS.read_text()))
    for cls, x in b.items():
        print(f"{cls}: P10 {x['p10']}, P90 {x['p90']}, median {x['median']:.2f} on {x['points']} rows ({', '.join(x['devices'])})")
    if args.write:
        print("changed:", ", ".join(write(b, args.date)) or "nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
