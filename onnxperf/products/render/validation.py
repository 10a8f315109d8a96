"""Renderers of a :class:`~onnxperf.products.validate.compare.Validation`: text and json."""

from __future__ import annotations

import json

from onnxperf.products.accuracy import large_error_warning
from onnxperf.products.validate.compare import KNEE_GAIN, Validation
from onnxperf.products.validate.state import CONTROLS, PROBE_LABELS, UNSTABLE
from onnxperf.ui.numbers import binary_bytes, clean, pct, seconds, si

TOP = 12


def _rate(x: float | None, unit: str) -> str:
    return "-" if x is None else si(x, unit)


def _knee(batch: int | None, v: Validation) -> str:
    if batch is not None:
        return f"batch {batch}"
    return f"not reached (still rising at batch {max(b.batch for b in v.batches)})" if len(v.batches) > 1 else "-"


def _fig_line(label: str, f, node_times: str = "kernel") -> str:
    if f is None:
        return f"  {label:<11} (no calibration in the spec: run `onnxperf hw calibrate -o spec.toml`, then --hw spec.toml)"
    e2e = "?" if f.end_to_end_error is None else f"{f.end_to_end_error:+.1%}"
    rho = "?" if f.spearman is None else f"{f.spearman:.3f}"
    per = "per node" if node_times == "kernel" else "per node (host launch times, not kernels)"
    return (f"  {label:<11} predicted {seconds(f.predicted_total_s):>9}  end-to-end error {e2e:>7}   {per}: "
            f"median |error| {pct(f.median_ape)}, within ±10% {pct(f.within_10)}, within ±25% {pct(f.within_25)} "
            f"(holding {pct(f.within_25_time)} of the time), rank correlation {rho}  (n={f.n})")


def _pct(x: float | None) -> str:
    return "?" if x is None else f"{x:+.1%}"


def state_lines(v: Validation) -> list[str]:
    """The machine's state over the blocks and the state-normalized error (:mod:`.state`)."""
    st = v.state
    if st is None:
        return []
    kept = st.kept
    band = (f"measured median {seconds(st.measured_median_s)}, P10-P90 {seconds(st.measured_p10_s)}-"
            f"{seconds(st.measured_p90_s)} over {len(kept)} blocks" if st.measured_median_s is not None else
            "no block kept")
    ci = ("" if st.error_interval is None else
          f", 95% interval {_pct(st.error_interval[0])} to {_pct(st.error_interval[1])}")
    verdict = {True: "outside the measured band: a miss of the model", False: "within the measured band",
               None: ""}[st.miss]
    out = [f"State      {band}; {st.dropped} dropped of {len(st.windows)}"
           + (f" ({st.contended} on a contended host)" if st.contended else ""),
           f"           error {_pct(st.raw_error)} raw, {_pct(st.normalized_error)} normalized to each block's state{ci}"
           + (f" ({verdict})" if verdict else ""),
           f"           reference state: {st.reference_source}"
           + ("" if st.drift is None else "; drift since calibration: bandwidth " + _pct(st.drift["triad_bytes_per_s"])
              + ", arithmetic " + _pct(st.drift["matmul_flops_per_s"]) + ", dispatch "
              + _pct(st.drift["dispatch_s_per_node"]))
           + ("" if not st.probe_moves else "; probes moved between blocks: "
              + ", ".join(f"{label} {st.probe_moves[f]:.0%}" for f, label in PROBE_LABELS.items()
                          if f in st.probe_moves))
           + (f" (machine unstable: {' or '.join(PROBE_LABELS[f] for f in CONTROLS)} moved over {UNSTABLE:.0%})"
              if st.unstable else "")]
    return out


def render_text(v: Validation, names: dict[int, str] | None = None) -> str:
    names = names or {}
    s = v.latency
    lines = [f"Validation with onnxruntime {v.ort_version} ({', '.join(v.providers)}), opt={v.opt}, "
             f"threads={v.threads or 'default'}, batch {v.batch}, hardware {v.hardware}", "",
             f"Measured   mean {seconds(s.mean_s)}  p50 {seconds(s.p50_s)}  p90 {seconds(s.p90_s)}  "
             f"p99 {seconds(s.p99_s)}  min {seconds(s.min_s)}  cv {s.cv:.3f}  throughput {si(s.throughput_per_s)}/s  "
             f"(n={s.n})",
             f"           {'kernels' if v.node_times == 'kernel' else 'node launches on the host'} "
             f"{seconds(v.measured_kernels_s)} per run, of which unmapped {seconds(v.unmapped_s)}"
             + (" (host-bound)" if v.host_bound else ""),
             _fig_line("Plain", v.plain, v.node_times), _fig_line("Calibrated", v.calibrated_figures, v.node_times),
             *state_lines(v), "",
             f"Top {TOP} groups by measured time (roofline: predicted / measured, the share of the roof reached)"]
    cal_head = f"{'calibrated':>11}" if v.calibrated else ""
    lines.append(f"  {'grp':>4} {'original nodes':<40}{'ran as':<22}{'measured':>10}{'predicted':>11}{cal_head}"
                 f"{'FLOP/s':>10}{'B/s':>10}{'roofline':>9}")
    ranked = sorted(enumerate(v.groups), key=lambda kg: (-kg[1].measured_s, kg[1].original_node_ids))
    for k, g in ranked[:TOP]:
        label = ", ".join(f"#{i} {clean(names.get(i, ''), 20)}".strip() for i in g.original_node_ids[:2])
        if len(g.original_node_ids) > 2:
            label += f" +{len(g.original_node_ids) - 2}"
        ran = clean("+".join(dict.fromkeys(g.measured_op_types)) or "-", 21)
        lines.append(f"  {k:>4} {clean(label, 39):<40}{ran:<22}{seconds(g.measured_s):>10}{seconds(g.predicted_s):>11}"
                     + (f"{seconds(g.predicted_calibrated_s):>11}" if v.calibrated else "")
                     + f"{_rate(g.achieved_flops_per_s, ''):>10}{_rate(g.achieved_bytes_per_s, ''):>10}"
                     f"{'-' if g.roofline_share is None else pct(g.roofline_share):>9}")
    if v.nodes:
        lines += ["", f"Top {TOP} nodes by predicted time (measured only where the node is its group's only member; "
                      "else see its group)",
                  f"  {'node':<36}{'op':<20}{'grp':>4}{'measured':>10}{'predicted':>11}{cal_head}"
                  f"{'FLOP/s':>10}{'B/s':>10}{'roofline':>9}"]
        for n in sorted(v.nodes, key=lambda n: (-n.predicted_s, n.key))[:TOP]:
            lines.append(f"  {clean(f'#{n.key} {n.name}'.strip(), 35):<36}{clean(n.op_type, 19):<20}{n.group:>4}"
                         f"{'-' if n.measured_s is None else seconds(n.measured_s):>10}{seconds(n.predicted_s):>11}"
                         + (f"{seconds(n.predicted_calibrated_s):>11}" if v.calibrated else "")
                         + f"{_rate(n.achieved_flops_per_s, ''):>10}{_rate(n.achieved_bytes_per_s, ''):>10}"
                         f"{'-' if n.roofline_share is None else pct(n.roofline_share):>9}")
    if v.batches:
        lines += ["", f"  {'batch':>6}{'mean':>11}{'p90':>11}{'items/s':>10}{'predicted':>11}"
                  + (f"{'calibrated':>11}" if v.calibrated else "") + f"{'memory':>11}"]
        for b in v.batches:
            lines.append(f"  {b.batch:>6}{seconds(b.measured.mean_s):>11}{seconds(b.measured.p90_s):>11}"
                         f"{si(b.measured.throughput_per_s):>10}{seconds(b.predicted_s):>11}"
                         + (f"{seconds(b.predicted_calibrated_s):>11}" if v.calibrated else "")
                         + f"{binary_bytes(b.total_memory_bytes):>11}")
        lines.append(f"  Throughput knee (smallest batch that no larger one beats by more than {KNEE_GAIN:.0%}): "
                     f"measured {_knee(v.knee_batch, v)}, predicted {_knee(v.predicted_knee_batch, v)}"
                     + (f", calibrated {_knee(v.predicted_calibrated_knee_batch, v)}" if v.calibrated else ""))
    if v.decode:
        lines += ["", "  Decode step by context (decoder LLM)",
                  f"  {'context':>8}{'mean':>11}{'p90':>11}{'tokens/s':>10}{'predicted':>11}"
                  + (f"{'calibrated':>11}" if v.calibrated else "") + f"{'error':>9}"]
        for d in v.decode:
            lines.append(f"  {d.context:>8}{seconds(d.measured.mean_s):>11}{seconds(d.measured.p90_s):>11}"
                         f"{si(d.measured_tokens_per_s):>10}{seconds(d.predicted_s):>11}"
                         + (f"{seconds(d.predicted_calibrated_s):>11}" if v.calibrated else "")
                         + f"{'-' if d.error is None else f'{d.error:+.1%}':>9}")
    for w in v.warnings:
        lines.append("Warning    " + clean(w, 400))

    f = v.calibrated_figures or v.plain  # the figures the end-to-end error above is read from
    big = large_error_warning(f.end_to_end_error, f.predicted_total_s, f.measured_total_s, v.calibrated)
    if big is not None:
        lines.append("Warning    " + clean(big, 400))
    for n in v.notes:
        lines.append("Note       " + clean(n, 300))
    return "\n".join(lines) + "\n"


def render_json(v: Validation, names: dict[int, str] | None = None) -> str:
    return json.dumps(v.to_dict(), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json}
