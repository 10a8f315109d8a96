"""Renderers of a :class:`~onnxperf.validate.compare.Validation`: text and json."""

from __future__ import annotations

import json

from ..validate.compare import Validation
from .numbers import clean, pct, seconds, si

TOP = 12


def _fig_line(label: str, f) -> str:
    if f is None:
        return f"  {label:<11} (no calibration in the spec: run `onnxperf hw calibrate -o spec.toml`, then --hw spec.toml)"
    e2e = "?" if f.end_to_end_error is None else f"{f.end_to_end_error:+.1%}"
    rho = "?" if f.spearman is None else f"{f.spearman:.3f}"
    return (f"  {label:<11} predicted {seconds(f.predicted_total_s):>9}  end-to-end error {e2e:>7}   per node: "
            f"median |error| {pct(f.median_ape)}, within ±10% {pct(f.within_10)}, within ±25% {pct(f.within_25)} "
            f"(holding {pct(f.within_25_time)} of the time), rank correlation {rho}  (n={f.n})")


def render_text(v: Validation, names: dict[int, str] | None = None) -> str:
    names = names or {}
    s = v.latency
    lines = [f"Validation with onnxruntime {v.ort_version} ({', '.join(v.providers)}), opt={v.opt}, "
             f"threads={v.threads or 'default'}, batch {v.batch}, hardware {v.hardware}", "",
             f"Measured   mean {seconds(s.mean_s)}  p50 {seconds(s.p50_s)}  p90 {seconds(s.p90_s)}  "
             f"p99 {seconds(s.p99_s)}  min {seconds(s.min_s)}  cv {s.cv:.3f}  throughput {si(s.throughput_per_s)}/s  "
             f"(n={s.n})",
             f"           kernels {seconds(v.measured_kernels_s)} per run, of which unmapped {seconds(v.unmapped_s)}",
             _fig_line("Plain", v.plain), _fig_line("Calibrated", v.calibrated_figures), "",
             f"Top {TOP} groups by measured time"]
    lines.append(f"  {'original nodes':<44}{'ran as':<26}{'measured':>10}{'predicted':>11}"
                 + (f"{'calibrated':>11}" if v.calibrated else ""))
    for g in sorted(v.groups, key=lambda g: (-g.measured_s, g.original_node_ids))[:TOP]:
        label = ", ".join(f"#{i} {clean(names.get(i, ''), 20)}".strip() for i in g.original_node_ids[:2])
        if len(g.original_node_ids) > 2:
            label += f" +{len(g.original_node_ids) - 2}"
        ran = clean("+".join(dict.fromkeys(g.measured_op_types)) or "-", 25)
        lines.append(f"  {clean(label, 43):<44}{ran:<26}{seconds(g.measured_s):>10}{seconds(g.predicted_s):>11}"
                     + (f"{seconds(g.predicted_calibrated_s):>11}" if v.calibrated else ""))
    if v.batches:
        lines += ["", f"  {'batch':>6}{'mean':>11}{'p90':>11}{'items/s':>10}{'predicted':>11}"
                  + (f"{'calibrated':>11}" if v.calibrated else "") + f"{'memory':>10}"]
        for b in v.batches:
            lines.append(f"  {b.batch:>6}{seconds(b.measured.mean_s):>11}{seconds(b.measured.p90_s):>11}"
                         f"{si(b.measured.throughput_per_s):>10}{seconds(b.predicted_s):>11}"
                         + (f"{seconds(b.predicted_calibrated_s):>11}" if v.calibrated else "")
                         + f"{b.total_memory_bytes / 2**20:>8.0f}Mi")
        if v.knee_batch is not None:
            lines.append(f"  Measured throughput stops rising (gain < 10%) after batch {v.knee_batch}")
    for n in v.notes:
        lines.append("Note       " + clean(n, 300))
    return "\n".join(lines) + "\n"


def render_json(v: Validation, names: dict[int, str] | None = None) -> str:
    return json.dumps(v.to_dict(), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json}
