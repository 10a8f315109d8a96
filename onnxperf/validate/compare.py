"""``onnxperf validate``: run the model in onnxruntime and set measured times beside predictions.

Flow: analyze (shapes must be static) -> a runnable copy if weights are missing
(``random_weights``) -> inputs -> onnxruntime in a child process with profiling -> measured
kernels mapped to groups of original nodes -> per group, predicted (sum of its nodes' roofline
times) vs measured; end to end, predicted latency vs the mean measured latency. Figures are
given for the plain roofline and, when the spec is calibrated, for the calibrated one.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..accuracy import ErrorFigures, error_figures
from ..analysis import Analysis, analyze
from ..errors import OptionError
from ..memory import liveness
from ..roofline import RooflineResult, roofline
from .inputs import make_inputs
from .mapping import Mapping, map_groups
from .runner import LatencyStats, RunResult, latency_stats, run_session
from .weights import missing_weights, with_random_weights


@dataclass(frozen=True)
class GroupResult:
    original_node_ids: tuple[int, ...]
    original_op_types: tuple[str, ...]
    measured_names: tuple[str, ...]
    measured_op_types: tuple[str, ...]
    measured_s: float
    predicted_s: float
    predicted_calibrated_s: float | None
    folded: bool
    flops: int
    bytes: int


@dataclass(frozen=True)
class BatchPoint:
    batch: int
    measured: LatencyStats
    predicted_s: float
    predicted_calibrated_s: float | None
    total_memory_bytes: int


@dataclass(frozen=True)
class Validation:
    hardware: str
    calibrated: bool
    opt: str
    threads: int | None
    providers: tuple[str, ...]
    ort_version: str
    batch: int
    latency: LatencyStats
    predicted_latency_s: float
    predicted_calibrated_latency_s: float | None
    measured_kernels_s: float
    unmapped_s: float
    groups: tuple[GroupResult, ...]
    plain: ErrorFigures
    calibrated_figures: ErrorFigures | None
    batches: tuple[BatchPoint, ...]
    knee_batch: int | None
    notes: tuple[str, ...]

    def node_measured_s(self, plain: RooflineResult) -> dict[int, float]:
        """Measured time per original main-graph node: a group's time is shared among its nodes in
        proportion to their plain predicted times (evenly when none is predicted)."""
        pred = {int(n.key): (n.time_s or 0.0) for n in plain.nodes}
        out: dict[int, float] = {}
        for g in self.groups:
            ids = g.original_node_ids
            total = sum(pred.get(i, 0.0) for i in ids)
            for i in ids:
                out[i] = g.measured_s * (pred.get(i, 0.0) / total if total > 0 else 1 / len(ids))
        return out

    def to_dict(self) -> dict[str, Any]:
        def stats(s: LatencyStats) -> dict[str, Any]:
            return dataclasses.asdict(s)

        return {
            "schema": "onnxperf.validation/1",
            "hardware": self.hardware, "calibrated": self.calibrated, "opt": self.opt, "threads": self.threads,
            "providers": list(self.providers), "onnxruntime_version": self.ort_version, "batch": self.batch,
            "measured_latency": stats(self.latency),
            "predicted_latency_s": self.predicted_latency_s,
            "predicted_calibrated_latency_s": self.predicted_calibrated_latency_s,
            "measured_kernels_s": self.measured_kernels_s, "unmapped_s": self.unmapped_s,
            "error_plain": self.plain.to_dict(),
            "error_calibrated": None if self.calibrated_figures is None else self.calibrated_figures.to_dict(),
            "groups": [dataclasses.asdict(g) for g in self.groups],
            "batches": [{"batch": b.batch, "measured": stats(b.measured), "predicted_s": b.predicted_s,
                         "predicted_calibrated_s": b.predicted_calibrated_s,
                         "total_memory_bytes": b.total_memory_bytes} for b in self.batches],
            "knee_batch": self.knee_batch,
            "notes": list(self.notes),
        }


def _plain(spec):
    return dataclasses.replace(spec, efficiency={}) if getattr(spec, "efficiency", None) else spec


def _group_results(a: Analysis, mapping: Mapping, plain: RooflineResult,
                   cal: RooflineResult | None) -> tuple[GroupResult, ...]:
    t_plain = {int(n.key): (n.time_s or 0.0) for n in plain.nodes}
    t_cal = {int(n.key): (n.time_s or 0.0) for n in cal.nodes} if cal else None
    by_id = {n.id: n for n in a.main_nodes}
    out = []
    for g in mapping.groups:
        ids = tuple(g.original_node_ids)
        out.append(GroupResult(
            original_node_ids=ids, original_op_types=tuple(by_id[i].op_type for i in ids if i in by_id),
            measured_names=tuple(g.measured_names), measured_op_types=tuple(g.op_types),
            measured_s=g.measured_s_per_run, predicted_s=sum(t_plain.get(i, 0.0) for i in ids),
            predicted_calibrated_s=None if t_cal is None else sum(t_cal.get(i, 0.0) for i in ids),
            folded=g.folded, flops=sum(by_id[i].flops + by_id[i].int_ops for i in ids if i in by_id),
            bytes=sum(by_id[i].bytes_read + by_id[i].bytes_written for i in ids if i in by_id),
        ))
    return tuple(out)


def _figures(groups: tuple[GroupResult, ...], calibrated: bool, e2e_pred: float, e2e_meas: float) -> ErrorFigures:
    live = [g for g in groups if not g.folded and g.measured_s > 0]
    pred = [(g.predicted_calibrated_s if calibrated else g.predicted_s) or 0.0 for g in live]
    f = error_figures(pred, [g.measured_s for g in live])
    # the end-to-end error compares the model's predicted latency with the measured run latency
    return dataclasses.replace(f, predicted_total_s=e2e_pred, measured_total_s=e2e_meas,
                               end_to_end_error=(e2e_pred - e2e_meas) / e2e_meas if e2e_meas else None)


def runnable_copy(path: Path, random_weights: bool, workdir: Path) -> tuple[Path, list[str]]:
    """The model itself, or a copy with random weights when its weight files are missing."""
    missing = missing_weights(path)
    if not missing:
        return path, []
    if not random_weights:
        raise OptionError(f"{path}: external weight file(s) missing ({', '.join(missing)}); pass --random-weights "
                          "to run with random weights of the analyzed shapes and dtypes")
    out = workdir / path.name
    with_random_weights(path, out)
    return out, [f"weights missing ({', '.join(missing)}): ran with random weights"]


def validate(model: str | Path, spec, *, dims: dict[str, int] | None = None, input_shapes=None,
             runs: int = 10, warmup: int = 3, threads: int | None = None, opt: str = "all", seed: int = 0,
             random_weights: bool = False, timeout_s: float = 300, batches: list[int] | None = None,
             batch_dim: str = "batch", max_memory_bytes: int = 4 << 30, progress: bool | None = None) -> Validation:
    path = Path(model)
    a = analyze(path, dims=dims, input_shapes=input_shapes)
    if a.coverage.unknown_shape:
        raise OptionError(f"{path}: {a.coverage.unknown_shape} nodes have unknown shapes; bind "
                          + ", ".join(a.coverage.dims_to_bind or a.coverage.unresolved_symbols) + " with --dim")
    plain_spec = _plain(spec)
    is_cal = bool(getattr(spec, "efficiency", None))
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="onnxperf-validate-") as tmp:
        run_path, n = runnable_copy(path, random_weights, Path(tmp))
        notes += n
        inputs = make_inputs(a, seed=seed, max_bytes=max_memory_bytes)
        rr: RunResult = run_session(run_path, inputs, runs=runs, warmup=warmup, threads=threads, opt=opt,
                                    profile=True, timeout_s=timeout_s, seed=seed, progress=progress)
        notes += list(rr.notes)
        mapping = map_groups(a.loaded, rr.optimized_model, rr.node_timings)
        from ..summary import batch_of

        batch = batch_of(a)
        stats = latency_stats(rr.latencies_s, batch=batch)
        if stats.spread_warning:
            notes.append(stats.spread_warning)
        rl_plain = roofline(a, plain_spec)
        rl_cal = roofline(a, spec) if is_cal else None
        groups = _group_results(a, mapping, rl_plain, rl_cal)
        points, knee = (), None
        if batches:
            points, knee, more = _batch_sweep(path, run_path, a, spec, plain_spec, is_cal, batches, batch_dim, dims,
                                              runs, warmup, threads, opt, seed, timeout_s, max_memory_bytes, progress)
            notes += more
    meas = stats.mean_s
    return Validation(
        hardware=spec.id, calibrated=is_cal, opt=opt, threads=threads, providers=tuple(rr.providers),
        ort_version=rr.ort_version, batch=batch, latency=stats, predicted_latency_s=rl_plain.latency_s,
        predicted_calibrated_latency_s=rl_cal.latency_s if rl_cal else None,
        measured_kernels_s=mapping.measured_s_per_run, unmapped_s=mapping.unmapped_s_per_run, groups=groups,
        plain=_figures(groups, False, rl_plain.latency_s, meas),
        calibrated_figures=_figures(groups, True, rl_cal.latency_s, meas) if rl_cal else None,
        batches=points, knee_batch=knee, notes=tuple(notes),
    )


def _batch_sweep(path, run_path, a, spec, plain_spec, is_cal, batches, batch_dim, dims, runs, warmup, threads,
                 opt, seed, timeout_s, max_memory_bytes, progress):
    if batch_dim not in a.free_dims and batch_dim not in dict(a.dims):
        raise OptionError(f"--batch: the model has no symbolic dim named {batch_dim!r} "
                          f"(symbolic dims: {', '.join(a.free_dims) or 'none'})")
    points = []
    notes = []
    for b in batches:
        ab = analyze(a.loaded, dims={**(dims or {}), batch_dim: b})
        mem = liveness(ab)
        if mem.total_bytes > max_memory_bytes:
            notes.append(f"--batch {b}: predicted memory {mem.total_bytes / 2**30:.2f} GiB exceeds the "
                         f"{max_memory_bytes / 2**30:.2f} GiB limit; stopped there")
            break
        rr = run_session(run_path, make_inputs(ab, seed=seed, max_bytes=max_memory_bytes), runs=runs,
                         warmup=warmup, threads=threads, opt=opt, profile=False, timeout_s=timeout_s, seed=seed,
                         progress=progress)
        points.append(BatchPoint(b, latency_stats(rr.latencies_s, batch=b), roofline(ab, plain_spec).latency_s,
                                 roofline(ab, spec).latency_s if is_cal else None, mem.total_bytes))
    knee = None
    for prev, cur in zip(points, points[1:]):
        if cur.measured.throughput_per_s < prev.measured.throughput_per_s * 1.10:
            knee = prev.batch
            break
    return tuple(points), knee, notes
