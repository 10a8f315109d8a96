"""Running the calibration suite (:mod:`onnxperf.calibrate`) through onnxruntime on this machine."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from ..analysis import analyze
from ..calibrate import Case, Sample, calibrated, fit_efficiency, suite
from .inputs import make_inputs
from .mapping import map_groups
from .runner import run_session


@dataclass(frozen=True)
class CalibrationResult:
    base_spec: object
    spec: object  # the calibrated spec
    samples: tuple[Sample, ...]
    efficiency: dict


def sample_case(case: Case, spec, workdir: Path, *, runs: int, warmup: int, threads: int | None, opt: str) -> Sample:
    """Measure one suite model and set its kernel time beside its plain roofline terms."""
    path = workdir / f"{case.name}.onnx"
    onnx.save(case.model, str(path))
    a = analyze(path)
    rr = run_session(path, make_inputs(a, seed=0), runs=runs, warmup=warmup, threads=threads, opt=opt,
                     profile=True)
    mapping = map_groups(a.loaded, rr.optimized_model, rr.node_timings)
    peak = spec.peak_for("float32")
    bw = spec.memory_bandwidth_bytes_per_s
    compute_s = sum(n.flops for n in a.main_nodes) / peak + sum(n.int_ops for n in a.main_nodes) / spec.peak_for("int32")
    memory_s = sum(n.bytes_read + n.bytes_written for n in a.main_nodes) / bw
    # all kernel time the runtime spent on this op, layout reorders included
    return Sample(case.name, case.family, compute_s, memory_s, mapping.measured_s_per_run)


def run_calibration(spec, *, runs: int = 10, warmup: int = 3, threads: int | None = None, opt: str = "all",
                    scale: float = 1.0, only: set[str] | None = None,
                    progress: Callable[[str], None] | None = None) -> CalibrationResult:
    cases = [c for c in suite(scale) if only is None or c.name in only]
    samples = []
    with tempfile.TemporaryDirectory(prefix="onnxperf-calibrate-") as tmp:
        for i, case in enumerate(cases, 1):
            if progress:
                progress(f"calibrating {i}/{len(cases)}: {case.name}")
            samples.append(sample_case(case, spec, Path(tmp), runs=runs, warmup=warmup, threads=threads, opt=opt))
    eff = {k: v for k, v in fit_efficiency(samples).items() if v > 0}
    if opt in ("extended", "all"):
        # onnxruntime fuses activations and residual adds into the conv/matmul before them at these
        # levels (ConvActivationFusion, NCHWc Conv+Sum, Gemm+activation): predictions model it
        eff["fusion.epilogue"] = 1.0
    return CalibrationResult(spec, calibrated(spec, eff), tuple(samples), eff)


def calibration_table(result: CalibrationResult) -> str:
    """Measured vs roofline per suite op, then the fitted efficiencies."""
    lines = [f"Calibration on {result.base_spec.id}: measured kernel time vs plain roofline", "",
             f"  {'case':<20}{'family':<16}{'bound':<9}{'roofline':>11}{'measured':>11}{'attained':>10}"]
    for s in result.samples:
        att = s.plain_s / s.measured_s if s.measured_s else 0.0
        lines.append(f"  {s.case:<20}{s.family:<16}{'compute' if s.compute_bound else 'memory':<9}"
                     f"{s.plain_s * 1e6:>9.1f}µs{s.measured_s * 1e6:>9.1f}µs{att:>10.1%}")
    lines += ["", "Fitted efficiencies (share of the roof attained; overhead per executed node):"]
    for k, v in sorted(result.efficiency.items()):
        lines.append(f"  {k:<24}{v:.4g}" + (" s" if k == "overhead_s" else ""))
    return "\n".join(lines) + "\n"
