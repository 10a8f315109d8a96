"""Renderers of a :class:`~onnxperf.products.sweep.SweepResult`: text, json, csv."""

from __future__ import annotations

import csv
import io
import json

from onnxperf.products.sweep import KNEE_GAIN, SweepResult
from onnxperf.insights.partial import op_counts
from onnxperf.predict.plan import LIMITER_WORDS
from onnxperf.ui.numbers import binary_bytes, clean, lower_bound, pct, seconds, si, upper_bound

_LABELS = {"macs": "MACs", "flops": "FLOPs", "bytes": "Bytes", "activation_peak_bytes": "Activation peak",
           "total_memory_bytes": "Total memory"}


def render_text(s: SweepResult) -> str:
    dims = list(s.dims)
    head = "".join(f"{d:>10}" for d in dims) + f"{'MACs':>11}{'FLOPs':>11}{'bytes':>11}{'FLOP/B':>8}{'act.peak':>11}{'total mem':>11}"
    if s.hardware:
        head += f"{'latency':>11}{'items/s':>10}  {'limited by':<14}"
    if s.memory_budget is not None:
        head += f"{'fits':>6}"
    lines = [f"Sweep of {clean(s.model, 100)}" + (f" on {s.hardware}" if s.hardware else "")
             + ("   fixed: " + " ".join(f"{k}={v}" for k, v in s.fixed) if s.fixed else "")
             + (f"   precision: {s.precision} (what-if)" if s.precision else ""), "", head.rstrip()]
    partial_rows = []
    for r in s.rows:
        vals = dict(r.values)
        cp, mp = r.cost_side, r.memory_side
        i = ("?" if cp else "-") if r.intensity is None else f"{r.intensity:.3g}"

        def lb(text: str, x, part: str) -> str:
            return lower_bound(text, x, part, short=True)

        line = "".join(f"{vals[d]:>10}" for d in dims) + (
            f"{lb(si(r.macs), r.macs, cp):>11}{lb(si(r.flops), r.flops, cp):>11}{lb(binary_bytes(r.bytes), r.bytes, cp):>11}"
            f"{i:>8}{lb(binary_bytes(r.activation_peak_bytes), r.activation_peak_bytes, mp):>11}"
            f"{lb(binary_bytes(r.total_memory_bytes), r.total_memory_bytes, mp):>11}")
        if s.hardware:
            limit = "?" if r.limiter is None else f"{LIMITER_WORDS.get(r.limiter, r.limiter)} {pct(r.limiter_share)}"
            line += (f"{lb(seconds(r.latency_s), r.latency_s, cp):>11}"
                     f"{upper_bound(si(r.throughput_per_s), r.throughput_per_s, cp, short=True):>10}  {limit:<14}")
        if s.memory_budget is not None:
            line += f"{'?' if r.fits_memory is None else ('yes' if r.fits_memory else 'no'):>6}"
        lines.append(line.rstrip() + ("" if r.complete and not r.upper else "  (partial)" if not r.complete else
                             "  (upper bound)"))
        if not r.complete or r.upper:
            partial_rows.append(r)
    if partial_rows:
        lines += ["", "(partial): a lower bound (≥; throughput ≤), or ? where nothing is known; unknown is not 0"
                  if any(not r.complete for r in partial_rows) else
                  "(upper bound): at most (≤; throughput ≥): a size or a count the data decides is at its largest"]
        for r in partial_rows:
            why = []
            if r.uncosted:
                why.append(f"{r.uncosted_nodes:,} nodes not costed ({op_counts(r.uncosted, 4)})")
            if r.cost_side in ("lower", "unknown") and not r.uncosted:
                why.append("a loop counted in part (its trip count is unknown: one run)")
            if r.upper:
                why.append(f"upper bound: {op_counts(r.upper, 4)}")
            if r.unknown_size_tensors:
                why.append(f"{r.unknown_size_tensors:,} tensors of unknown size")
            if r.lost_at:
                why.append(f"shapes lost first at {clean(r.lost_at, 80)} (a value past the model's limits?)")
            # op types and domains come from the model: control characters and bidi overrides escaped
            lines.append("  " + " ".join(f"{k}={v}" for k, v in r.values) + ": " + clean("; ".join(why), 1000))
    if s.hardware and s.latency_plain:
        lines += ["", "Latency: a plain roofline (every node at its roof, every tensor through main memory, no launch "
                  "overhead, no fusion): an estimate, not a bound; its knee comes early, with no overhead to amortize"]
    if s.memory_budget is not None:
        f = s.largest
        lines += ["", f"Memory budget {binary_bytes(s.memory_budget)} (weights + activation peak): "
                  + ("no value fits" if f is None or f.value is None else
                     f"the largest {f.dim} that fits is {f.value:,} (needs {binary_bytes(f.total_bytes)})")]
    if s.notes:
        lines += ["", *(f"Note: {clean(n, 1000)}" for n in s.notes)]
    if s.knee:
        lines += ["", "Throughput stops rising at " + ", ".join(f"{k}={v}" for k, v in s.knee)
                  + f" (no larger value gains more than {KNEE_GAIN:.0%})"]
    if s.formulas:
        lines += ["", "Formulas (exact, fitted and checked off the fit points"
                  + (f"; they hold where {' and '.join(s.dims)} {'is a multiple' if len(s.dims) == 1 else 'are multiples'}"
                     f" of {s.formula_step}, as the swept values are)" if s.formula_step > 1 else ")")]
        for name, p, why in s.formulas:
            lines.append(f"  {_LABELS[name]:<16}= {p.format()}" if p is not None else f"  {_LABELS[name]:<16}: {why}")
    return "\n".join(lines) + "\n"


def render_json(s: SweepResult) -> str:
    return json.dumps(s.to_dict(), indent=2, ensure_ascii=False) + "\n"


def render_csv(s: SweepResult) -> str:
    d = s.to_dict()
    buf = io.StringIO()
    cols = list(s.dims) + ["macs", "flops", "int_ops", "bytes", "intensity", "activation_peak_bytes",
                           "total_memory_bytes", "latency_s", "throughput_per_s", "compute_bound_share", "limiter",
                           "limiter_share", "complete",
                           "uncosted_nodes", "unknown_size_tensors"] + (["fits_memory"] if s.memory_budget is not None else [])
    cost_cols = {"macs", "flops", "int_ops", "bytes", "latency_s"}
    mem_cols = {"activation_peak_bytes", "total_memory_bytes"}
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in d["rows"]:
        # a partial figure is a lower bound; one with nothing known is an empty cell, never 0
        def cell(c):
            v = row[c]
            unknown = not v and ((c in cost_cols and row["uncosted_nodes"])
                                 or (c in mem_cols and row["unknown_size_tensors"]))
            return "" if v is None or unknown else v
        w.writerow([cell(c) for c in cols])
    return buf.getvalue()


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv}
