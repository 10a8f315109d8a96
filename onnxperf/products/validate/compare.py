"""``onnxperf validate``: run the model in onnxruntime and set measured times beside predictions.

Flow: analyze (shapes must be static) -> a runnable copy if weights are missing
(``random_weights``) -> inputs -> onnxruntime in a child process with profiling -> measured
kernels mapped to groups of original nodes -> per group, predicted (sum of its nodes' roofline
times) vs measured; end to end, predicted latency vs the mean measured latency. Figures are
given for the plain roofline and, when the spec is calibrated, for the calibrated one.

Rates, per group and per node: ``achieved_flops_per_s`` = flops / measured_s,
``achieved_bytes_per_s`` = bytes / measured_s, and ``roofline_share`` = predicted_s / measured_s
(plain roofline), the share of the roofline's attainable rate the kernels reached (1: at the
roof; above 1: faster than the roof, as cache-resident data can be). All three are None where
nothing was measured (a folded group, a node that shares its group).

Per-node rows: every original main-graph node, with its plain and calibrated predictions and the
index of its group in ``Validation.groups``. A measured time is given only to a node that forms a
group of its own (``sole``): the profiler measured the fused kernel, not its pieces, so a shared
group's time is not apportioned here (read it on the group).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from onnxperf.products.accuracy import ErrorFigures, error_figures
from onnxperf.analysis.result import Analysis
from onnxperf.cost.analysis import costs
from onnxperf.cost.request import Request
from onnxperf.shapes.infer import is_binding_note
from onnxperf.hardware.spec import uncalibrated
from onnxperf.base.errors import OptionError
from onnxperf.predict.memory import liveness
from onnxperf.ui.numbers import binary_bytes, seconds
from onnxperf.predict.roofline import RooflineResult, roofline
from onnxperf.products.sweep import KNEE_GAIN, knee_index
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.products.validate.machine import gpu_node_times, mismatch, threads_mismatch
from onnxperf.products.validate.mapping import Mapping, map_groups
from onnxperf.products.validate.profile import inserted_casts
from onnxperf.insights.llm.recognize import NotRecognized, recognize
from onnxperf.products.validate.runner import DEFAULT_PROVIDERS, RUNTIME_HEADROOM_BYTES, LatencyStats, RunResult, check_provider, latency_stats, run_session
from onnxperf.products.validate.state import (PROBE_LABELS, UNSTABLE, StateFigures, calm_share, reference_warning,
                                              state_figures)
from onnxperf.products.validate.weights import missing_weights, with_random_weights


def _dropped_kinds(state: StateFigures) -> str:
    """Why the dropped windows were dropped, counted: "3 on a contended host, 1 starved of CPU or stolen"."""
    other = state.dropped - state.contended
    kinds = ([f"{state.contended} on a contended host"] if state.contended else []) + (
        [f"{other} starved of CPU or stolen"] if other else [])
    return ", ".join(kinds)


def _per_s(amount: float, measured_s: float | None) -> float | None:
    return amount / measured_s if measured_s else None


class _Rates:
    """Achieved rates and share of the roofline, from ``flops``, ``bytes``, ``measured_s`` and
    ``predicted_s`` (see the module docstring); None where nothing was measured."""

    flops: int
    bytes: int
    measured_s: float | None
    predicted_s: float

    @property
    def achieved_flops_per_s(self) -> float | None:
        return _per_s(self.flops, self.measured_s)

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return _per_s(self.bytes, self.measured_s)

    @property
    def roofline_share(self) -> float | None:
        return _per_s(self.predicted_s, self.measured_s)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"achieved_flops_per_s": self.achieved_flops_per_s,
                                           "achieved_bytes_per_s": self.achieved_bytes_per_s,
                                           "roofline_share": self.roofline_share}


@dataclass(frozen=True)
class GroupResult(_Rates):
    """Original nodes that ran as some measured kernels; ``flops`` counts floating-point and
    integer operations of its nodes, ``bytes`` their reads and writes (the roofline's terms)."""

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
class NodeResult(_Rates):
    """One original main-graph node. ``group``: index of its group in ``Validation.groups``;
    ``sole``: the node is its group's only member, and only then is ``measured_s`` given."""

    key: str
    name: str
    op_type: str
    group: int
    sole: bool
    measured_s: float | None
    predicted_s: float
    predicted_calibrated_s: float | None
    flops: int
    bytes: int


@dataclass(frozen=True)
class DecodePoint:
    """One decode step of a decoder LLM at ``context`` tokens (past = context − new): measured
    beside the predictions (``--decode-context``)."""

    context: int
    batch: int
    measured: LatencyStats
    predicted_s: float
    predicted_calibrated_s: float | None

    @property
    def measured_tokens_per_s(self) -> float | None:
        return _per_s(self.batch, self.measured.mean_s)

    @property
    def error(self) -> float | None:
        """(predicted − measured) / measured of the calibrated prediction, else the plain one."""
        pred = self.predicted_calibrated_s if self.predicted_calibrated_s is not None else self.predicted_s
        m = self.measured.mean_s
        return None if not m else (pred - m) / m


@dataclass(frozen=True)
class BatchPoint:
    batch: int
    measured: LatencyStats
    predicted_s: float
    predicted_calibrated_s: float | None
    total_memory_bytes: int

    @property
    def predicted_throughput_per_s(self) -> float | None:
        return _per_s(self.batch, self.predicted_s)

    @property
    def predicted_calibrated_throughput_per_s(self) -> float | None:
        return None if self.predicted_calibrated_s is None else _per_s(self.batch, self.predicted_calibrated_s)


def knee(throughputs: Sequence[tuple[int, float | None]], gain: float = KNEE_GAIN) -> int | None:
    """The batch where throughput stops rising: the smallest batch that no later (larger) batch
    beats in throughput by more than ``gain`` (10%). One noisy dip does not end the search: a later
    batch that rises again moves the knee past it.

    ``throughputs``: (batch, items/s), in any order ("later" is "larger"). None when there are
    fewer than two points, a throughput is unknown, or only the last batch qualifies, which then
    beat the one before it by more than ``gain``: throughput was still rising at the end of the
    sweep."""
    if len(throughputs) < 2 or any(t is None for _, t in throughputs):
        return None
    pts = sorted(throughputs)
    at = knee_index([t for _, t in pts], gain)
    return None if at == len(pts) - 1 else pts[at][0]


def batch_knees(points: Sequence[BatchPoint]) -> tuple[int | None, int | None, int | None]:
    """:func:`knee` of the measured, the plain predicted and the calibrated predicted throughputs."""
    return (knee([(p.batch, p.measured.throughput_per_s) for p in points]),
            knee([(p.batch, p.predicted_throughput_per_s) for p in points]),
            knee([(p.batch, p.predicted_calibrated_throughput_per_s) for p in points]))


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
    #: measured knee of the --batch sweep (see :func:`knee`), and the knees the predictions give
    knee_batch: int | None
    notes: tuple[str, ...]
    nodes: tuple[NodeResult, ...] = ()
    predicted_knee_batch: int | None = None
    predicted_calibrated_knee_batch: int | None = None
    #: the execution provider asked for (``providers``: those the session used, in order)
    provider: str = DEFAULT_PROVIDERS[0]
    #: a decoder LLM's decode step at several contexts (``--decode-context``)
    decode: tuple[DecodePoint, ...] = ()
    #: what makes the error figures doubtful: a spec of another machine (:mod:`.machine`), a
    #: measurement that varies a lot between runs
    warnings: tuple[str, ...] = ()
    #: the machine's state in blocks between probes, and the state-normalized error (:mod:`.state`)
    state: StateFigures | None = None
    #: Casts onnxruntime inserted at session creation (float16 nodes without a float16 kernel on the provider
    #: run on float kernels between them: :func:`.profile.inserted_casts`) and their measured time per run;
    #: the prediction prices the graph as written
    inserted_casts: int = 0
    inserted_cast_s: float = 0.0
    #: what the per-node measured times are: "kernel" (the CPU provider: each node's compute) or "host" (a GPU
    #: provider: each node's launch on the host), and whether the run was bound by those launches (None on
    #: the CPU): :func:`.machine.gpu_node_times`
    node_times: str = "kernel"
    host_bound: bool | None = None

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
            "provider": self.provider, "providers": list(self.providers), "onnxruntime_version": self.ort_version,
            "batch": self.batch,
            "measured_latency": stats(self.latency),
            "predicted_latency_s": self.predicted_latency_s,
            "predicted_calibrated_latency_s": self.predicted_calibrated_latency_s,
            "measured_kernels_s": self.measured_kernels_s, "unmapped_s": self.unmapped_s,
            "error_plain": self.plain.to_dict(),
            "error_calibrated": None if self.calibrated_figures is None else self.calibrated_figures.to_dict(),
            # groups in file order of their first node, nodes in file order: the same run gives the same layout
            "groups": [g.to_dict() for g in self.groups],
            "nodes": [n.to_dict() for n in sorted(self.nodes, key=lambda n: _key_order(n.key))],
            "batches": [{"batch": b.batch, "measured": stats(b.measured), "predicted_s": b.predicted_s,
                         "predicted_calibrated_s": b.predicted_calibrated_s,
                         "total_memory_bytes": b.total_memory_bytes} for b in self.batches],
            "decode": [{"context": d.context, "batch": d.batch, "measured": stats(d.measured),
                        "measured_tokens_per_s": d.measured_tokens_per_s, "predicted_s": d.predicted_s,
                        "predicted_calibrated_s": d.predicted_calibrated_s, "error": d.error} for d in self.decode],
            "knee_batch": self.knee_batch, "predicted_knee_batch": self.predicted_knee_batch,
            "predicted_calibrated_knee_batch": self.predicted_calibrated_knee_batch,
            "warnings": list(self.warnings),
            "inserted_casts": self.inserted_casts, "inserted_cast_s": self.inserted_cast_s,
            "node_times": self.node_times, "host_bound": self.host_bound,
            "notes": list(self.notes),
            "state": None if self.state is None else self.state.to_dict(),
        }


def _key_order(key: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in key.split("/"))


def profiler_cost_s(spec) -> float:
    """What onnxruntime's profiler adds to each kernel it records, as calibration measured it: the
    profiled floor of a kernel less the end-to-end one (``overhead_profiled_s`` - ``overhead_s``), 0
    for a spec without them. Per-kernel comparisons add it to the prediction (the measured times
    carry it); end-to-end latencies are timed with the profiler off and never get it."""
    eff = getattr(spec, "efficiency", None) or {}
    return max(0.0, float(eff.get("overhead_profiled_s", 0.0)) - float(eff.get("overhead_s", 0.0)))


def _group_results(a: Analysis, mapping: Mapping, plain: RooflineResult,
                   cal: RooflineResult | None, profiler_s: float = 0.0) -> tuple[GroupResult, ...]:
    t_plain = {int(n.key): (n.time_s or 0.0) for n in plain.nodes}
    t_cal = {int(n.key): (n.time_s or 0.0) for n in cal.nodes} if cal else None
    by_id = {n.id: n for n in a.main_nodes}
    out = []
    for g in sorted(mapping.groups, key=lambda g: g.original_node_ids):
        ids = tuple(g.original_node_ids)
        kernels = 0 if g.folded else len(g.measured_names)
        out.append(GroupResult(
            original_node_ids=ids, original_op_types=tuple(by_id[i].op_type for i in ids if i in by_id),
            measured_names=tuple(g.measured_names), measured_op_types=tuple(g.op_types),
            measured_s=g.measured_s_per_run, predicted_s=sum(t_plain.get(i, 0.0) for i in ids),
            predicted_calibrated_s=None if t_cal is None else
            sum(t_cal.get(i, 0.0) for i in ids) + kernels * profiler_s,
            folded=g.folded, flops=sum(by_id[i].flops + by_id[i].int_ops for i in ids if i in by_id),
            bytes=sum(by_id[i].bytes_read + by_id[i].bytes_written for i in ids if i in by_id),
        ))
    return tuple(out)


def _node_results(a: Analysis, groups: tuple[GroupResult, ...], plain: RooflineResult,
                  cal: RooflineResult | None) -> tuple[NodeResult, ...]:
    t_plain = {int(n.key): (n.time_s or 0.0) for n in plain.nodes}
    t_cal = {int(n.key): (n.time_s or 0.0) for n in cal.nodes} if cal else None
    group_of = {i: k for k, g in enumerate(groups) for i in g.original_node_ids}
    out = []
    for n in sorted(a.main_nodes, key=lambda n: n.id):
        k = group_of[n.id]
        sole = len(groups[k].original_node_ids) == 1
        out.append(NodeResult(
            key=n.key, name=n.name, op_type=n.op_type, group=k, sole=sole,
            measured_s=groups[k].measured_s if sole else None, predicted_s=t_plain.get(n.id, 0.0),
            predicted_calibrated_s=None if t_cal is None else t_cal.get(n.id, 0.0),
            flops=n.flops + n.int_ops, bytes=n.bytes_read + n.bytes_written))
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


def validate(request: Request, spec, *, runs: int = 10, warmup: int = 3, threads: int | None = None, opt: str = "all", seed: int = 0,
             random_weights: bool = False, timeout_s: float = 300, batches: list[int] | None = None,
             batch_dim: str = "batch", max_memory_bytes: int = 4 << 30, progress: bool | None = None,
             provider: str = DEFAULT_PROVIDERS[0], decode_contexts: list[int] | None = None,
             blocks: int = 5) -> Validation:
    """Measure ``request.model`` (a path) at ``request``'s bindings in onnxruntime on ``provider`` (checked against the providers this
    onnxruntime has; CPU stays the fallback for nodes the provider lacks) beside the predictions.

    ``max_memory_bytes`` bounds the generated inputs (checked before they are allocated) and each
    ``--batch`` point's predicted memory (weights + peak activations): the sweep stops before the
    first batch over it. onnxruntime's own allocations in the main run are not bounded by it.
    Every measured point is the request with its dim bound (a ``--batch`` value, a ``--decode-context``),
    its input shapes and other dims kept. ``request.default_batch``: an unbound batch dim is bound to 1
    (:func:`onnxperf.shapes.infer.binding_notes`), and the notes of the bindings as applied lead the
    validation's notes. ``blocks``: the timed runs in that many blocks between probes of the machine's state
    (:mod:`.state`: windows starved of CPU dropped, the error normalized to each window's state, a noise
    band); 1 runs them in one go."""
    providers = check_provider(provider)
    path = Path(request.model)
    a = costs(request)
    request = replace(request, model=a.loaded, dims=dict(a.dims))
    if a.coverage.unknown_shape:
        raise OptionError(f"{path}: {a.coverage.unknown_shape} nodes have unknown shapes; bind "
                          + ", ".join(a.coverage.dims_to_bind or a.coverage.unresolved_symbols) + " with --dim")
    step = _decoder_step(a) if decode_contexts else None  # refused before anything runs
    plain_spec = uncalibrated(spec)
    is_cal = bool(getattr(spec, "efficiency", None))
    notes: list[str] = [n for n in a.notes if is_binding_note(n)]
    with tempfile.TemporaryDirectory(prefix="onnxperf-validate-") as tmp:
        run_path, n = runnable_copy(path, random_weights, Path(tmp))
        notes += n
        inputs = make_inputs(a, seed=seed, max_bytes=max_memory_bytes)
        rr: RunResult = run_session(run_path, inputs, runs=runs, warmup=warmup, threads=threads, opt=opt,
                                    profile=True, timeout_s=timeout_s, seed=seed, progress=progress,
                                    providers=providers, memory_limit_bytes=child_memory_limit(max_memory_bytes,
                                                                                               providers),
                                    blocks=blocks if providers[0] == DEFAULT_PROVIDERS[0] else 1,
                                    calm_share=calm_share(spec))
        notes += list(rr.notes)
        mapping = map_groups(a.loaded, rr.optimized_model, rr.node_timings)
        batch = a.batch
        stats = latency_stats(rr.latencies_s, batch=batch)
        warnings = mismatch(spec, tuple(rr.providers) or tuple(providers))
        pool_said = threads_mismatch(spec, threads) if providers[0] == DEFAULT_PROVIDERS[0] else None
        if pool_said:
            warnings.append(pool_said)
        if stats.spread_warning:
            warnings.append(stats.spread_warning)
        node_times, host_bound, said = gpu_node_times(tuple(rr.providers) or tuple(providers),
                                                      mapping.measured_s_per_run, stats.mean_s)
        warnings += said
        n_casts, cast_s = inserted_casts(rr.node_timings)
        if n_casts:
            warnings.append(f"onnxruntime inserted {n_casts} Cast{'s' if n_casts > 1 else ''} ({seconds(cast_s)} per "
                            f"run measured): float16 nodes without a float16 kernel on {rr.providers[0] if rr.providers else provider} run on "
                            "float kernels between them, at float32 width; the prediction prices the graph as written "
                            "(float16 bytes, no Casts) and misses that work")
        rl_plain = roofline(a, plain_spec)
        rl_cal = roofline(a, spec) if is_cal else None
        state = state_figures(rr.windows, spec if is_cal else plain_spec, lambda s: roofline(a, s).latency_s,
                              (rl_cal or rl_plain).latency_s)
        if state is not None and state.unstable:
            warnings.append(f"machine unstable: the {PROBE_LABELS[state.control]} probe moved "
                            f"{state.control_drift:.0%} between blocks (over {UNSTABLE:.0%}): the error figures depend on the moment")
        far = reference_warning(state.drift) if state is not None else None
        if far:
            warnings.append(far)
        if state is not None and state.dropped and state.kept:
            notes.append(f"{state.dropped} of {len(state.windows)} blocks dropped ({_dropped_kinds(state)}): "
                         "the state figures use the others")
        elif state is not None and state.dropped:
            warnings.append(f"every block dropped ({_dropped_kinds(state)}): no state-normalized verdict; the raw "
                            "figures are of a busy machine: run again later")
        groups = _group_results(a, mapping, rl_plain, rl_cal, profiler_cost_s(spec))
        points: tuple[BatchPoint, ...] = ()
        if batches:
            points, more = _batch_sweep(run_path, a, request, spec, plain_spec, is_cal, batches, batch_dim, runs,
                                        warmup, threads, opt, seed, timeout_s, max_memory_bytes, progress, providers)
            notes += more
        knees = batch_knees(points)
        decode: tuple[DecodePoint, ...] = ()
        if decode_contexts:
            decode, more = _decode_sweep(run_path, a, request, step, spec, plain_spec, is_cal, decode_contexts, runs,
                                         warmup, threads, opt, seed, timeout_s, max_memory_bytes, progress, providers)
            notes += more
    meas = stats.mean_s
    return Validation(
        hardware=spec.id, calibrated=is_cal, opt=opt, threads=threads, providers=tuple(rr.providers),
        ort_version=rr.ort_version, batch=batch, latency=stats, predicted_latency_s=rl_plain.latency_s,
        predicted_calibrated_latency_s=rl_cal.latency_s if rl_cal else None,
        measured_kernels_s=mapping.measured_s_per_run, unmapped_s=mapping.unmapped_s_per_run, groups=groups,
        plain=_figures(groups, False, rl_plain.latency_s, meas),
        calibrated_figures=_figures(groups, True, rl_cal.latency_s, meas) if rl_cal else None,
        batches=points, knee_batch=knees[0], notes=tuple(notes), nodes=_node_results(a, groups, rl_plain, rl_cal),
        predicted_knee_batch=knees[1], predicted_calibrated_knee_batch=knees[2], provider=provider,
        decode=decode, warnings=tuple(warnings), state=state, inserted_casts=n_casts, inserted_cast_s=cast_s,
        node_times=node_times, host_bound=host_bound,
    )


def child_memory_limit(max_memory_bytes: int, providers) -> int | None:
    """The onnxruntime child's address-space cap: ``--max-memory`` plus the runtime's own
    headroom. CPU only: a GPU provider reserves address space far beyond what it uses."""
    if providers and any(p != "CPUExecutionProvider" for p in providers):
        return None
    return max_memory_bytes + RUNTIME_HEADROOM_BYTES


def _batch_sweep(run_path, a, request, spec, plain_spec, is_cal, batches, batch_dim, runs, warmup, threads,
                 opt, seed, timeout_s, max_memory_bytes, progress, providers):
    """One unprofiled session per batch, in the order given; stops before the first batch whose
    predicted memory (weights + peak activations) exceeds ``max_memory_bytes``."""
    if batch_dim not in a.free_dims and batch_dim not in dict(a.dims):
        raise OptionError(f"--batch: the model has no symbolic dim named {batch_dim!r} "
                          f"(symbolic dims: {', '.join(a.free_dims) or 'none'})")
    points = []
    notes = []
    for b in batches:
        ab = costs(request.at(**{batch_dim: b}))
        mem = liveness(ab)
        if mem.total_bytes > max_memory_bytes:
            notes.append(f"--batch sweep stopped before batch {b}: its predicted memory "
                         f"{binary_bytes(mem.total_bytes)} ({mem.total_bytes} bytes) exceeds --max-memory "
                         f"{binary_bytes(max_memory_bytes)} ({max_memory_bytes} bytes)")
            break
        rr = run_session(run_path, make_inputs(ab, seed=seed, max_bytes=max_memory_bytes), runs=runs,
                         warmup=warmup, threads=threads, opt=opt, profile=False, timeout_s=timeout_s, seed=seed,
                         progress=progress, providers=providers,
                         memory_limit_bytes=child_memory_limit(max_memory_bytes, providers))
        points.append(BatchPoint(b, latency_stats(rr.latencies_s, batch=b), roofline(ab, plain_spec).latency_s,
                                 roofline(ab, spec).latency_s if is_cal else None, mem.total_bytes))
    return tuple(points), notes


def _decoder_step(a: Analysis):
    try:
        return recognize(a.loaded)
    except NotRecognized as exc:
        raise OptionError(f"--decode-context: not a decoder step with a KV cache: {exc}") from None


def _decode_sweep(run_path, a, request, step, spec, plain_spec, is_cal, contexts, runs, warmup, threads, opt,
                  seed, timeout_s, max_memory_bytes, progress, providers):
    """One unprofiled session per context: the decode step bound to past = context − new (and
    total = context), the batch as bound; stops before the first context whose predicted memory
    exceeds ``max_memory_bytes``."""
    new = step.new if isinstance(step.new, int) else 1
    batch = dict(a.dims).get(step.batch, 1) if isinstance(step.batch, str) else step.batch or 1
    points, notes = [], []
    for c in contexts:
        if c < new:
            raise OptionError(f"--decode-context {c}: a step adds {new} tokens, so the context is at least {new}")
        if c - new == 0:
            raise OptionError(f"--decode-context {c}: an empty cache (past 0) cannot be bound; use a context above {new}")
        ac = costs(request.at(**step.bindings(batch, c - new, new)))
        mem = liveness(ac)
        if mem.total_bytes > max_memory_bytes:
            notes.append(f"--decode-context sweep stopped before context {c}: its predicted memory "
                         f"{binary_bytes(mem.total_bytes)} exceeds --max-memory {binary_bytes(max_memory_bytes)}")
            break
        rr = run_session(run_path, make_inputs(ac, seed=seed, max_bytes=max_memory_bytes), runs=runs,
                         warmup=warmup, threads=threads, opt=opt, profile=False, timeout_s=timeout_s, seed=seed,
                         progress=progress, providers=providers,
                         memory_limit_bytes=child_memory_limit(max_memory_bytes, providers))
        points.append(DecodePoint(c, batch, latency_stats(rr.latencies_s, batch=batch),
                                  roofline(ac, plain_spec).latency_s,
                                  roofline(ac, spec).latency_s if is_cal else None))
    return tuple(points), notes
