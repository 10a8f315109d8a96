"""Text renderings of specs and probe results. Rows are built from the specs first; formatting only formats."""

from __future__ import annotations

import json
from collections.abc import Iterable

from onnxperf.ui.numbers import binary_bytes as _bytes
from onnxperf.hardware.runtimes import profiles
from onnxperf.hardware.spec import PEAK_KEYS, HardwareSpec

_GIB = 2 ** 30


def _rate(x: float) -> str:
    """Engineering units: 35.69 T, 960 G."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if x >= scale:
            return f"{x / scale:.4g} {prefix}"
    return f"{x:.4g} "


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def list_rows(specs: Iterable[HardwareSpec]) -> list[dict]:
    """One plain row per spec: effective peaks (with the figure each came from), memory, ridge points."""
    rows = []
    for s in specs:
        row = {"id": s.id, "kind": s.kind, "name": s.name}
        for dtype in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
            value, basis = s.resolve_peak(dtype)
            row[dtype] = value
            row[f"{dtype}_basis"] = basis
        row["memory_bandwidth_bytes_per_s"] = s.memory_bandwidth_bytes_per_s
        row["memory_capacity_bytes"] = s.memory_capacity_bytes
        row["ridge_fp32"] = s.ridge_point("fp32")
        row["ridge_fp16"] = s.ridge_point("fp16")
        rows.append(row)
    return rows


def list_text(specs: Iterable[HardwareSpec]) -> str:
    rows = list_rows(specs)

    def peak(r: dict, k: str) -> str:
        mark = "" if r[f"{k}_basis"] == k else "*"
        return f"{r[k] / 1e12:.2f}{mark}"

    body = [[r["id"], r["kind"], peak(r, "fp32"), peak(r, "tf32"), peak(r, "fp16"), peak(r, "bf16"), peak(r, "fp8"),
             peak(r, "int8"), f"{r['memory_bandwidth_bytes_per_s'] / 1e9:.1f}",
             "-" if r["memory_capacity_bytes"] is None else f"{r['memory_capacity_bytes'] / _GIB:g}",
             f"{r['ridge_fp32']:.1f}", r["name"]] for r in rows]
    header = ["id", "kind", "fp32 TFLOP/s", "tf32", "fp16", "bf16", "fp8", "int8 TOP/s", "GB/s", "GiB",
              "ridge fp32", "name"]
    lines = _table(header, body, right={2, 3, 4, 5, 6, 7, 8, 9, 10})
    lines += ["", "Dense peaks (TFLOP/s; int8 TOP/s), one column per --precision. * = no figure of its own: falls back "
              "(tf32 -> fp32, bf16 -> fp16 -> fp32, fp8 -> fp16 -> fp32, int8 -> fp16 -> fp32);",
              "ridge = FLOP per byte of memory traffic where compute and bandwidth balance. "
              "`onnxperf hw show ID` gives the sources.",
              f"Runtime profiles, appended to a GPU preset as ID:RUNTIME (`--hw a100-80gb:llama.cpp`): "
              f"{', '.join(sorted(profiles()))}; the presets as shipped describe TensorRT-class kernels."]
    return "\n".join(lines) + "\n"


def show_text(spec: HardwareSpec) -> str:
    lines = [f"{spec.id}: {spec.name}", f"kind: {spec.kind}", "", "dense peak (per second; int8/int4 are integer ops):"]
    rows = []
    for k in PEAK_KEYS:
        value, basis = spec.resolve_peak(k)
        unit = "OP/s" if k.startswith("int") else "FLOP/s"
        if basis == k:
            rows.append([k, f"{_rate(value)}{unit}", f"ridge {spec.ridge_point(k):.1f}", spec.sources.get(k, "")])
        else:
            rows.append([k, f"{_rate(value)}{unit}", f"ridge {spec.ridge_point(k):.1f}", f"(falls back to {basis})"])
    lines += ["  " + ln for ln in _table(["dtype", "peak", "FLOP/byte", "source"], rows, right={1})[2:]]
    lines += ["", f"memory bandwidth  {_rate(spec.memory_bandwidth_bytes_per_s)}B/s  "
                  f"{spec.sources.get('memory_bandwidth', '')}"]
    if spec.memory_capacity_bytes is None:
        lines.append("memory capacity   not given")
    else:
        lines.append(f"memory capacity   {spec.memory_capacity_bytes / _GIB:g} GiB "
                     f"({spec.memory_capacity_bytes:,} bytes)  {spec.sources.get('memory_capacity', '')}")
    link = spec.interconnect_bytes_per_s
    if link is not None:
        lines.append(f"interconnect      {_rate(link)}B/s per direction  {spec.sources.get('interconnect', '')}")
    if spec.memory_levels:
        lines += ["", "memory levels (cache-aware roofline; --hw ID:plain charges every byte at main memory):"]
        for lv in spec.memory_levels:
            lines.append(f"  {lv.name:<5} {_bytes(lv.capacity_bytes):>10}  {lv.bandwidth_bytes_per_s / 1e9:8.1f} GB/s  "
                         f"{lv.source}")
    if spec.efficiency:
        if "fusion.gpu" in spec.efficiency:
            lines += ["", "GPU kernel model (fusions, launch overhead, attainable fractions; docs/hw.md):"]
        else:
            lines += ["", "efficiency (calibrated):"]
        src = getattr(spec, "efficiency_sources", {}) or {}
        for k, v in sorted(spec.efficiency.items()):
            lines.append(f"  {k:<20} {v:<8g} {src.get(k, '')}".rstrip())
    if spec.notes:
        lines += ["", f"notes: {spec.notes}"]
    return "\n".join(lines) + "\n"


def to_json(obj: object) -> str:
    return json.dumps(obj, indent=2) + "\n"


def probe_text(result) -> str:
    """The probe's table: measured (best and median of the runs) next to theoretical."""
    cpu = result.cpu
    head = (f"onnxperf hw probe{' (short mode)' if result.short else ''}: {cpu.model}, {cpu.logical_cpus} logical "
            f"CPUs, {cpu.physical_cores} cores, {cpu.isa}; {result.threads} threads; {result.when}")
    rows = []
    for m in result.measurements:
        unit = m.unit
        theory = f"{_rate(m.theoretical)}{unit}" if m.theoretical else "n/a"
        ratio = f"{m.best / m.theoretical:.0%}" if m.theoretical else ""
        rows.append([m.label, f"{_rate(m.best)}{unit}", f"{_rate(m.median)}{unit}", theory, ratio, m.detail])
    lines = [head, ""]
    lines += _table(["figure", "best", "median", "theoretical", "best/theor.", "work per run"], rows,
                    right={1, 2, 3, 4})
    lines += ["", f"theoretical fp32: {cpu.theoretical_text()}"]
    ceiling = cpu.fp32_ceiling
    if ceiling is not None:
        lines.append(f"ceiling fp32 (a figure above it is refused): {_rate(ceiling[0])}FLOP/s = {ceiling[1]}")
    lines += [f"warning: {w}" for w in getattr(result, "warnings", ())]
    lines += [f"note: {n}" for n in (*cpu.assumptions, *result.notes)]
    s = result.spec
    lines += ["", f"spec {s.id}: fp32 {_rate(s.peak_flops_per_s['fp32'])}FLOP/s, bandwidth "
                  f"{_rate(s.memory_bandwidth_bytes_per_s)}B/s, ridge {s.ridge_point():.1f} FLOP/byte "
                  f"(-o FILE.toml writes it as a spec file, usable wherever a preset id is)"]
    return "\n".join(lines) + "\n"
