"""Running the calibration suite (:mod:`.suite`) through onnxruntime on this machine, and the fit (:mod:`.fit`)."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import onnx

from onnxperf.cost.analysis import cost_analysis as analyze
from onnxperf.cost.subnormal import underflows
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.products.validate.machine import pool_threads
from onnxperf.products.validate.runner import Probe, measure_state, run_session
from onnxperf.products.validate.state import (CORE, DISPATCH, DRAM, HANDOFF_KEY, STATE_KEYS, shrunk, time_at,
                                              typical_state)
from onnxperf.products.calibration.fit import (MID, TINY, Sample, StepSample, calibrated, fit_efficiency,
                                               fit_gru_cell, fit_steps, raised_peaks, roof_ratio)
from onnxperf.predict.broadcast import channels_last, node_spans
from onnxperf.predict.ort_threads import THREADS_KEY, channels_last_attrs, gather_axes, kernel_threads
from onnxperf.predict.im2col import im2col_runs
from onnxperf.products.calibration.suite import (SUBNORMAL_MASK, Case, broadcast_case, recurrence_step_cases,
                                                 subnormal_case, suite, tiny_case)
from onnxperf.predict.recurrence import GRU_CELL_KEY, STEP_KEY, STREAM_KEY, layouts, recurrence_steps
from onnxperf.predict.reuse import level_bytes
from onnxperf.predict.roofline import efficiencies, int_dtype, rnn_gemm_flops
from onnxperf.products.calibration.fit import compute_fitted


@dataclass(frozen=True)
class CalibrationResult:
    base_spec: object
    spec: object  # the calibrated spec
    samples: tuple[Sample, ...]
    efficiency: dict
    #: the peaks' raise (:func:`~onnxperf.products.calibration.fit.roof_ratio`); 1: as given
    roof_ratio: float = 1.0


def case_threads(a, pool: int) -> int | None:
    """The threads the kernels of a suite model choose by onnxruntime's own cost model
    (:func:`onnxperf.predict.ort_threads.kernel_threads`; every copy is the same op), None when they take the pool's."""
    nhwc = channels_last(a.main_nodes)
    axes, last = gather_axes(a), channels_last_attrs(a)  # as the roofline reads them
    ks = {kernel_threads(n, pool, nhwc, n.key in last, axes.get(n.key)) for n in a.main_nodes}
    return ks.pop() if len(ks) == 1 else None


def sample_case(case: Case, spec, workdir: Path, *, runs: int, warmup: int, threads: int | None, opt: str,
                probe_state: bool = False) -> Sample:
    """Measure one suite model and set its kernel time beside its plain roofline terms (``probe_state``: with
    the machine's state while it ran, :attr:`Sample.state`). A kernel that runs on k of the pool's P threads
    (:func:`case_threads`) has its compute and memory terms scaled by P/k, as the prediction scales them."""
    path = workdir / f"{case.name}.onnx"
    if not path.exists():  # written once, measured in every pass
        onnx.save(case.model, str(path))
    a = analyze(path)
    rr = run_session(path, make_inputs(a, seed=0), runs=runs, warmup=warmup, threads=threads, opt=opt,
                     profile=True, keep_optimized=False, probe_state=probe_state)
    peak = spec.peak_for("float32")
    bw = spec.memory_bandwidth_bytes_per_s

    # integer ops at the peak of their width (int8 for QLinearConv / MatMulInteger), as the roofline does
    compute_s = sum(n.flops for n in a.main_nodes) / peak + sum(
        n.int_ops / spec.peak_for(int_dtype(n.inputs)) for n in a.main_nodes if n.int_ops)
    levels = tuple(getattr(spec, "memory_levels", ()) or ())
    dram = True
    if levels:  # the cache-aware roofline: each byte at the level that holds it (onnxperf.predict.reuse)

        bws = tuple(lv.bandwidth_bytes_per_s for lv in levels) + (bw,)
        per = level_bytes(a, tuple(lv.capacity_bytes for lv in levels))
        memory_s = sum(b / w for v in per.values() for b, w in zip(v, bws) if b)
        dram = 2 * sum(v[-1] for v in per.values()) >= sum(sum(v) for v in per.values())
    else:
        memory_s = sum(n.bytes_read + n.bytes_written for n in a.main_nodes) / bw
    k = case.copies
    nbytes = sum(n.bytes_read + n.bytes_written for n in a.main_nodes)
    gemm_s = sum(rnn_gemm_flops(n) for n in a.main_nodes) / peak
    measured = kernel_s(rr.node_timings, {n.op_type for n in case.model.graph.node})
    im2col = sum(im2col_runs(n) for n in a.main_nodes)
    pool = pool_threads(threads)
    used = case_threads(a, pool)
    slow = pool / used if used else 1.0
    return Sample(case.name, case.family, compute_s * slow / k, memory_s * slow / k, measured / k, nbytes / k,
                  gemm_s / k, rr.state, dram, im2col / k, used)


def kind_of(s: Sample) -> str:
    """What a suite case's time scales with when the machine's state changes (:func:`time_at`): the
    runtime's dispatch for the tiny and mid-size cases (their time is the runtime's own work), the core for
    a compute-bound case or one whose traffic stays in the caches, main memory for the rest."""
    if s.case in TINY | MID:
        return DISPATCH
    return CORE if s.compute_bound or not s.dram else DRAM


def kept(values: list[float], probed: bool) -> float:
    """The figure a calibration keeps of one quantity's passes: their median when each was brought to the
    reference state (``probed``), else the fastest.

    Unprobed, interference only ever adds time and the fastest pass is the machine's own speed. Brought
    to the reference, the passes differ by the probes' own noise as much as by the machine, and the
    fastest of five is the one whose probe erred most in its favour: on this VM the calibration that
    kept it predicted ResNet-18 about 20% fast in every state (benchmarks/results/state_probe.md)."""
    return statistics.median(values) if probed else min(values)


def at_reference(col: list[Sample], reference: Probe | None) -> Sample:
    """One case's passes as one sample: each pass's time brought to the ``reference`` state (:func:`time_at`, by
    :func:`kind_of`, from its state moved halfway to the reference, :func:`shrunk`: the reference is the median of the
    calibration's probes, and a probe's move from it is half the machine's), their median kept (:func:`kept`);
    unprobed, the fastest."""
    probed = reference is not None and all(s.state is not None for s in col)
    times = [time_at(s.measured_s, kind_of(s), shrunk(s.state, reference) if probed else s.state, reference)
             for s in col]
    return replace(col[0], measured_s=kept(times, probed), state=reference if probed else None)


#: layout conversions that onnxruntime puts at the edges of an NCHWc region: a one-op model pays
#: them around its op, a real model once at its inputs and outputs, so they are not the op's cost
BOUNDARY_OPS = frozenset({"ReorderInput", "ReorderOutput"})
#: the layout conversion onnxruntime's NHWC transformer puts around each QLinearConv (its int8 kernel runs
#: channels-last): a boundary too where the suite model itself has no Transpose. In a model a chain of
#: QLinearConvs stays channels-last between them (ResNet-18's QOperator export: 20 QLinearConvs, 2
#: Transposes); around a one-op case every copy pays two, 100 of the 3x3 case's 376 µs per copy on the
#: 2-core VM (benchmarks/results/accuracy.md), which the int8 conv share took for the conv's own time.
NHWC_BOUNDARY_OPS = frozenset({"Transpose"})


def kernel_s(timings, case_ops: frozenset[str] | set[str] | None = None) -> float:
    """Time per run of the suite model's own kernels (all copies of its op): the median over the timed runs (a shared
    machine gives the odd slow run, which a mean would fit into the efficiency), boundary
    layout reorders left out. ``case_ops``: the op types of the suite model as written; a Transpose that is not
    one of them is the runtime's layout boundary (:data:`NHWC_BOUNDARY_OPS`) and is left out too."""
    boundary = BOUNDARY_OPS | (NHWC_BOUNDARY_OPS - set(case_ops) if case_ops is not None else frozenset())
    return sum(t.typical_s_per_run for t in timings if t.op_type not in boundary)


def run_calibration(spec, *, runs: int = 10, warmup: int = 3, threads: int | None = None, opt: str = "all",
                    scale: float = 1.0, only: set[str] | None = None, repeats: int = 3, probed: bool = True,
                    progress: Callable[[str], None] | None = None) -> CalibrationResult:
    """Measure the suite on this machine and fit a calibrated copy of ``spec``.

    The suite is measured ``repeats`` times, pass after pass. Each pass runs in fresh processes, and on a
    shared machine a whole process can run slow: on the 2-core VM of benchmarks/results/accuracy.md the
    same onnxruntime session of MobileNetV2 takes 4.8 ms in one process and 7.5 ms in the next
    (single-threaded: 7.8 or 13 ms), in about one process out of three.

    **The state each time was measured in.** Every case runs between two probes of the machine's state
    (:class:`~onnxperf.products.validate.runner.Probe`); the reference stored in the spec (``state.*``,
    what ``validate`` scales the spec by) is each probe's median over them all, and every measured time
    is brought to it (:func:`time_at`) before the passes' median is kept (:func:`at_reference`,
    :func:`kept`; the fastest pass when a time has no probe): so the efficiencies and the reference
    describe the same machine, as validate's normalized error, a median over blocks, reads it. The
    dispatch overhead, a broadcast span and a subnormal assist likewise. On this VM the machine flips between two
    states every few seconds (a 256³ matrix product at 98 or 50 GFLOP/s, conv3x3_64 at 910 or 1,700
    µs): a calibration whose passes all caught the slow one, followed by a reference probe that caught
    the fast one, had every CNN predicted 40-55% slow, state-normalized too.

    ``probed=False`` (``hw calibrate --short``, a smoke test): no probe around each case or extra (three of
    about 0.25 s each, a rest included, around runs of a few ms: most of a short calibration's time), each time
    kept as measured, and the reference state measured once after the suite (:func:`measure_state`)."""
    cases = [c for c in suite(scale) if only is None or c.name in only]
    passes: list[list[Sample]] = []
    overheads: list[tuple[float, float]] = []
    assists: list[float | None] = []
    span_times: list[float | None] = []
    qspan_times: list[float | None] = []
    step_times: list[list[float]] = []
    step_cases = recurrence_step_cases()  # built once: timed in every pass, then fitted
    if only is not None and not any(c.name in only for c in step_cases):
        step_cases = []
    repeats = max(1, repeats)
    started = time.perf_counter()
    total = repeats * len(cases)
    with tempfile.TemporaryDirectory(prefix="onnxperf-calibrate-") as tmp:
        for rep in range(repeats):
            row = []
            for i, case in enumerate(cases, 1):
                if progress:
                    done = rep * len(cases) + i - 1
                    left = "" if not done else \
                        f", about {(time.perf_counter() - started) / done * (total - done):.0f} s left"
                    progress(f"calibrating {i}/{len(cases)}: {case.name}"
                             + (f" (pass {rep + 1}/{repeats})" if repeats > 1 else "") + left)
                row.append(sample_case(case, spec, Path(tmp), runs=runs, warmup=warmup, threads=threads, opt=opt,
                                       probe_state=probed))
            passes.append(row)
        # the machine's state when it was calibrated: validate scales the spec by its own probes against it
        state = typical_state([s.state for row in passes for s in row])
        if state is None:  # unprobed, or no case (``only`` matched none): the state measured apart
            if progress:
                progress("probing the machine's state (the reference validate normalizes against)")
            state = measure_state(Path(tmp), threads=threads)
        # every extra below is measured between probes and brought to ``state``: their passes' medians are kept
        for rep in range(repeats):
            kw = dict(runs=runs, warmup=warmup, threads=threads, opt=opt, reference=state if probed else None)
            if progress:
                progress("calibrating the runtime's overhead per node and per run"
                         + (f" (pass {rep + 1}/{repeats})" if repeats > 1 else ""))
            overheads.append(dispatch_overhead(Path(tmp), **kw))
            if progress:
                progress("calibrating the cost of a subnormal assist and of a broadcast span")
            assists.append(subnormal_assist(Path(tmp), **kw))
            span_times.append(broadcast_span(Path(tmp), **kw))
            qspan_times.append(broadcast_span(Path(tmp), quantized=True, **kw))
            if step_cases:
                if progress:
                    progress("calibrating an LSTM's and a GRU's steps")
                step_times.append(recurrence_step_times(Path(tmp), step_cases, **kw))
    samples = [at_reference(list(col), state) for col in zip(*passes)]
    ratio = roof_ratio(samples)
    base = spec
    if ratio > 1:  # the probe's peak below what the suite's dense products attained: the roof raised to it
        spec = raised_peaks(spec, ratio)
        samples = [replace(s, compute_s=s.compute_s / ratio, gemm_s=s.gemm_s / ratio) for s in samples]
    # the pass whose 64-node model ran in the median time brought to the reference
    ranked = sorted(overheads, key=lambda o: o[1] + 64 * o[0])
    per_node, per_run = ranked[(len(ranked) - 1) // 2]
    eff = {k: v for k, v in fit_efficiency(samples).items() if v > 0}
    if eff.get("overhead_s", 0) > per_node:
        # a kernel's floor as the profiler shows it (it records every kernel, at a cost): validate adds
        # the difference to the predictions it sets beside profiled kernel times, never to latencies
        eff["overhead_profiled_s"] = eff["overhead_s"]
    eff["overhead_s"] = per_node
    # the pool the suite ran on: a kernel that chooses fewer threads by its own cost model is predicted at P/k
    eff[THREADS_KEY] = float(pool_threads(threads))
    if per_run > 0:
        eff["overhead_run_s"] = per_run
    if opt in ("extended", "all"):
        # onnxruntime fuses activations and residual adds into the conv/matmul before them at these
        # levels (ConvActivationFusion, NCHWc Conv+Sum, Gemm+activation): predictions model it
        eff["fusion.epilogue"] = 1.0
    if opt != "disable":
        # constant folding (a basic-level pass) computes constant-only nodes, and the shape
        # arithmetic of a model with fixed dims, once at load time
        eff["fusion.constant_folding"] = 1.0
    measured = [x for x in assists if x is not None]
    if measured:  # as for every case (kept)
        eff["subnormal.assist_s"] = kept(measured, probed=True)
    for key, times in (("broadcast.span_s", span_times), ("broadcast.qlinear.span_s", qspan_times)):
        measured = [x for x in times if x is not None]
        if measured:
            eff[key] = kept(measured, probed=True)
    if step_times:  # each case's passes, as for every case (kept)
        fitted = fit_recurrence_steps(spec, eff, step_cases,
                                      [kept(list(col), probed=True) for col in zip(*step_times)], pool_threads(threads))
        eff.update({k: v for k, v in fitted.items() if v > 0})  # a spec holds no zero constant
    eff.update({key: getattr(state, field) for key, field in STATE_KEYS.items()})
    if state.handoff_flops_per_s is not None:
        eff[HANDOFF_KEY] = state.handoff_flops_per_s
    return CalibrationResult(base, calibrated(spec, eff), tuple(samples), eff, ratio)


def _at(t: float, kind: str, rr, reference: Probe | None) -> float:
    """``t``, measured by the run ``rr``, in the ``reference`` state (:func:`time_at`); as measured without one."""
    if reference is None or rr.state is None:
        return t
    return time_at(t, kind, shrunk(rr.state, reference), reference)


def recurrence_step_times(workdir: Path, cases: list[Case], *, runs: int, warmup: int, threads: int | None,
                          opt: str, reference: Probe | None = None) -> list[float]:
    """The profiled kernel time of each of ``cases`` (the LSTMs, then the GRU, of
    :func:`~onnxperf.products.calibration.suite.recurrence_step_cases`), in their order; ``reference``: each brought
    from the state it was measured in to that one (:func:`time_at`, the core's)."""
    out = []
    for case in cases:
        path = workdir / f"{case.name}.onnx"
        if not path.exists():
            onnx.save(case.model, str(path))
        rr = run_session(path, make_inputs(analyze(path), seed=0), runs=runs, warmup=warmup, threads=threads, opt=opt,
                         profile=True, keep_optimized=False, probe_state=reference is not None)
        out.append(_at(kernel_s(rr.node_timings), CORE, rr, reference))
    return out


def fit_recurrence_steps(spec, eff: dict[str, float], cases: list[Case], times: list[float],
                         pool: int) -> dict[str, float]:
    """The LSTM step constants (:func:`~onnxperf.products.calibration.fit.fit_steps`) from the measured ``times`` of
    the step cases: each case's input projection is taken off at the fitted matrix products' rate (e_matmul·π),
    with the profiled kernel's floor (``overhead_profiled_s``, else ``overhead_s``), and a step's product runs at
    one core's share of it, e_matmul·π / P. The LSTMs fit β, c and s; then the GRU its own c, with them held
    (:func:`~onnxperf.products.calibration.fit.fit_gru_cell`)."""
    rate = efficiencies(calibrated(spec, eff), "matmul")[0] * spec.peak_for("float32")  # as the roofline reads it
    floor = eff.get("overhead_profiled_s", eff.get("overhead_s", 0.0))
    samples = []
    for case, t in zip(cases, times):
        a = analyze(case.model)
        (n,) = a.main_nodes
        st = recurrence_steps(n, pool, layouts(a).get(n.key, 0))
        if st is not None:
            samples.append((n.op_type, StepSample(case.name, st, t, rnn_gemm_flops(n) / rate + floor)))
    core = rate / max(pool, 1)
    fitted = fit_steps([smp for op, smp in samples if op == "LSTM"], core)
    gru = [smp for op, smp in samples if op == "GRU"]
    if fitted and gru:
        fitted[GRU_CELL_KEY] = fit_gru_cell(gru[0], core, fitted[STREAM_KEY], fitted[STEP_KEY])
    return fitted


#: node counts of the two dispatch models (tiny independent Relus)
DISPATCH_COPIES = (8, 64)


def dispatch_overhead(workdir: Path, *, runs: int, warmup: int, threads: int | None, opt: str,
                      reference: Probe | None = None) -> tuple[float, float]:
    """(seconds per executed node, seconds per run) that the runtime spends beyond the kernels' work.

    Two models of k tiny Relus (16×16, so the arithmetic is nil), k = 8 and 64, are timed end to end
    with the profiler off (it adds several µs per node): the median latency L(k) = R + k·o gives
    o = (L(64) − L(8)) / 56 and R = L(8) − 8·o. These are the costs every node and every run of a
    real model pay, and what the profiled kernel time of a tiny op overstates. ``reference``: each latency
    brought from the state it was measured in to that one (:func:`time_at`, the runtime's dispatch)."""
    lat = {}
    for k in DISPATCH_COPIES:
        case = tiny_case(k)
        path = workdir / f"{case.name}.onnx"
        onnx.save(case.model, str(path))
        rr = run_session(path, make_inputs(analyze(path), seed=0), runs=max(5 * runs, 100), warmup=max(warmup, 10),
                         threads=threads, opt=opt, profile=False, probe_state=reference is not None)
        lat[k] = _at(statistics.median(rr.latencies_s), DISPATCH, rr, reference)
    lo, hi = DISPATCH_COPIES
    per_node = max((lat[hi] - lat[lo]) / (hi - lo), 0.0)
    return per_node, max(lat[lo] - lo * per_node, 0.0)


def subnormal_assist(workdir: Path, *, runs: int, warmup: int, threads: int | None, opt: str,
                     reference: Probe | None = None) -> float | None:
    """Seconds one assisted vector operation on a subnormal value costs (``subnormal.assist_s``), or None
    when the machine shows none (flush-to-zero hardware, or a difference within the noise).

    The masked-attention pair of :func:`~onnxperf.products.calibration.suite.subnormal_case` runs with
    the profiler on; its Softmax and MatMul kernels take t_0 with a mask of 0 and t_s with a mask of
    -95, whose probabilities are subnormal. With A the assisted operations that
    :func:`onnxperf.cost.subnormal.underflows` counts in the second (the Softmax's vectors and the
    MatMul's reads), the cost of one is (t_s - t_0) / A, at the runtime's own thread count: the figure
    the roofline multiplies the same count by. ``reference``: each time brought from the state it was
    measured in to that one (:func:`time_at`, the core's)."""
    times = {}
    count = 0
    for mask in (0.0, SUBNORMAL_MASK):
        case = subnormal_case(mask)
        path = workdir / f"{case.name}.onnx"
        onnx.save(case.model, str(path))
        a = analyze(path)
        if mask:
            count = sum(underflows(a).assists_by_node().values())
        rr = run_session(path, make_inputs(a, seed=0), runs=runs, warmup=warmup, threads=threads, opt=opt,
                         profile=True, keep_optimized=False, probe_state=reference is not None)
        times[mask] = _at(kernel_s(rr.node_timings), CORE, rr, reference)
    extra = times[SUBNORMAL_MASK] - times[0.0]
    if count <= 0 or extra <= 0.1 * times[0.0]:
        return None
    return extra / count


def broadcast_span(workdir: Path, *, runs: int, warmup: int, threads: int | None, opt: str,
                   quantized: bool = False, reference: Probe | None = None) -> float | None:
    """Seconds one span of a broadcast loop costs (``broadcast.span_s``, :mod:`onnxperf.predict.broadcast`;
    ``quantized``: of onnxruntime's QLinearMul, ``broadcast.qlinear.span_s``), or None when the broadcast case
    is no slower than its traffic says.

    The pair of :func:`~onnxperf.products.calibration.suite.broadcast_case` runs with the profiler on: t_1
    for ``x + b`` with b of x's shape (one span), t_S for b one row (S spans). The broadcast case moves Q_S
    bytes where the other moves Q_1, so its traffic takes t_1·Q_S/Q_1 and a span costs
    (t_S - t_1·Q_S/Q_1) / S, at the runtime's own thread count. A kernel that runs on k of the pool's P threads
    (:func:`case_threads`: onnxruntime's QLinearMul runs a broadcast of several spans on one) moves its bytes
    P/k times as slowly, so each Q is counted as Q·P/k. ``reference``: each time brought from the
    state it was measured in to that one (:func:`time_at`, the runtime's dispatch, by which validate scales a
    span's cost)."""
    times, moved = {}, {}
    count = 0
    pool = pool_threads(threads)
    for bcast in (False, True):
        case = broadcast_case(bcast, quantized=quantized)
        path = workdir / f"{case.name}.onnx"
        onnx.save(case.model, str(path))
        a = analyze(path)
        (node,) = a.main_nodes
        used = case_threads(a, pool)
        moved[bcast] = (node.bytes_read + node.bytes_written) * (pool / used if used else 1.0)
        if bcast:
            count = node_spans(node)
        rr = run_session(path, make_inputs(a, seed=0), runs=runs, warmup=warmup, threads=threads, opt=opt,
                         profile=True, keep_optimized=False, probe_state=reference is not None)
        times[bcast] = _at(kernel_s(rr.node_timings), DISPATCH, rr, reference)
    extra = times[True] - times[False] * moved[True] / moved[False]
    if count <= 1 or extra <= 0.1 * times[True]:
        return None
    return extra / count


def calibration_table(result: CalibrationResult) -> str:
    """Measured vs roofline per suite op, then the fitted efficiencies."""

    wc = max([20] + [len(s.case) + 2 for s in result.samples])
    wf = max([16] + [len(s.family) + 2 for s in result.samples])
    lines = [f"Calibration on {result.base_spec.id}: measured kernel time vs plain roofline", "",
             f"  {'case':<{wc}}{'family':<{wf}}{'bound':<9}{'roofline':>11}{'measured':>11}{'attained':>10}"]
    for s in result.samples:
        att = s.plain_s / s.measured_s if s.measured_s else 0.0
        lines.append(f"  {s.case:<{wc}}{s.family:<{wf}}{'compute' if s.compute_bound else 'memory':<9}"
                     f"{s.plain_s * 1e6:>9.1f}µs{s.measured_s * 1e6:>9.1f}µs{att:>10.1%}")
    if result.roof_ratio > 1:
        lines += ["", f"  The suite's dense products ran {result.roof_ratio - 1:.1%} above {result.base_spec.id}'s peak "
                  "(probed in a slower moment, or the runtime's kernels outrun the probe's): every peak is raised "
                  f"x{result.roof_ratio:.3f}, and the roofline column is at the raised peak."]
    arith = sorted({s.family for s in result.samples if compute_fitted(s.family)})
    if arith:
        lines += ["", f"  {', '.join(arith)} (kernels whose time follows their element count) are fitted on their arithmetic, "
                  "whatever the bound above."]
    lines += ["", "Fitted efficiencies (share of the roof attained), runtime overhead per executed node and per run:"]
    wk = max([24] + [len(k) + 2 for k in result.efficiency])
    for k, v in sorted(result.efficiency.items()):
        unit = " s" if (k.startswith("overhead") or k.endswith("_s")) and not k.endswith("_per_s") else ""
        lines.append(f"  {k:<{wk}}{v:.4g}" + unit)
    return "\n".join(lines) + "\n"
