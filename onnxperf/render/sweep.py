"""Renderers of a :class:`~onnxperf.sweep.SweepResult`: text, json, csv."""

from __future__ import annotations

import csv
import io
import json

from ..sweep import KNEE_GAIN, SweepResult
from .numbers import binary_bytes, clean, pct, seconds, si

_LABELS = {"macs": "MACs", "flops": "FLOPs", "bytes": "Bytes", "activation_peak_bytes": "Activation peak",
           "total_memory_bytes": "Total memory"}


def render_text(s: SweepResult) -> str:
    dims = list(s.dims)
    head = "".join(f"{d:>10}" for d in dims) + f"{'MACs':>11}{'FLOPs':>11}{'bytes':>11}{'FLOP/B':>8}{'act.peak':>11}{'total mem':>11}"
    if s.hardware:
        head += f"{'latency':>11}{'items/s':>10}{'compute':>9}"
    lines = [f"Sweep of {clean(s.model, 100)}" + (f" on {s.hardware}" if s.hardware else "")
             + ("   fixed: " + " ".join(f"{k}={v}" for k, v in s.fixed) if s.fixed else ""), "", head]
    for r in s.rows:
        vals = dict(r.values)
        i = "-" if r.intensity is None else f"{r.intensity:.3g}"
        line = "".join(f"{vals[d]:>10}" for d in dims) + (f"{si(r.macs):>11}{si(r.flops):>11}"
               f"{binary_bytes(r.bytes):>11}{i:>8}{binary_bytes(r.activation_peak_bytes):>11}{binary_bytes(r.total_memory_bytes):>11}")
        if s.hardware:
            line += f"{seconds(r.latency_s):>11}{si(r.throughput_per_s):>10}{pct(r.compute_bound_share):>9}"
        lines.append(line + ("" if r.complete else "  (partial)"))
    if s.knee:
        lines += ["", "Throughput stops rising at " + ", ".join(f"{k}={v}" for k, v in s.knee)
                  + f" (no larger value gains more than {KNEE_GAIN:.0%})"]
    if s.formulas:
        lines += ["", "Formulas (exact, fitted and checked off the fit points)"]
        for name, p, why in s.formulas:
            lines.append(f"  {_LABELS[name]:<16}= {p.format()}" if p is not None else f"  {_LABELS[name]:<16}: {why}")
    return "\n".join(lines) + "\n"


def render_json(s: SweepResult) -> str:
    return json.dumps(s.to_dict(), indent=2, ensure_ascii=False) + "\n"


def render_csv(s: SweepResult) -> str:
    d = s.to_dict()
    buf = io.StringIO()
    cols = list(s.dims) + ["macs", "flops", "int_ops", "bytes", "intensity", "activation_peak_bytes",
                           "total_memory_bytes", "latency_s", "throughput_per_s", "compute_bound_share", "complete"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in d["rows"]:
        w.writerow(["" if row[c] is None else row[c] for c in cols])
    return buf.getvalue()


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv}
