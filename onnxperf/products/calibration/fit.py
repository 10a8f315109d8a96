"""The calibration fit: how much of the roofline each op family attains on this machine.

A fixed suite of small models (:mod:`.suite`; never the model being validated), each made of
independent copies of one op, runs through onnxruntime (:mod:`.run`); each op's measured kernel
time (median over the timed runs, averaged over the copies) is set against its plain roofline
terms, and the fit gives, per family f, a compute efficiency e_c,f and a memory efficiency e_m,f:

    t ≈ max(c, m) + α·min(c, m) + o,   c = W / (e_c,f · π),  m = Q / (e_m,f · β)

* o_k: the median profiled kernel time of the suite's tiny ops (a few hundred elements), whose
  roofline time is negligible: the floor of a profiled kernel, taken off before fitting;
* e_m,f: median over the family's memory-bound samples of (Q/β) / (t − o_k);
* e_c,f: median over its compute-bound samples of (W/π) / (t − o_k); a transcendental function's
  own family (``op.Erf``, ``op.Sigmoid``, ...: :func:`compute_fitted`) is fitted on its arithmetic
  alone, bound or not, and ``transcendental.compute`` is the median of those;
* a family without samples of one kind takes the median over all families (``default.*``);
* α_f (``<family>.overlap``): how much of the lesser of the two times is *not* hidden under the
  greater (a conv whose weights are large pays for reading them on top of its arithmetic): the
  one of 0, 0.05, ..., 1 that predicts the family's samples best (:func:`fit_efficiency`);
* r_f (``<family>.run_s``, the 8-bit convolutions': ``conv.int8.run_s``): the cost of one im2col run
  (:mod:`onnxperf.predict.im2col`), where the family's samples have them: :func:`fit_runs` separates it
  from the arithmetic, and the family's efficiencies are fitted on the samples with R·r taken off.

The spec's ``overhead_s`` (o, per executed node) and ``overhead_run_s`` (per run) are measured
apart, end to end with the profiler off (:func:`onnxperf.products.calibration.run.dispatch_overhead`);
:func:`fit_efficiency` alone reports o_k as ``overhead_s``.

Efficiencies are clipped to [0.005, 1]: calibration only ever lowers the roof. A suite case can
beat the DRAM roof (its one op re-reads the same few MiB, back to back, from the last-level
cache), but a real model's ops do not run that way: on a Zen 4 VM (benchmarks/results/accuracy.md)
the suite's small depthwise conv attained 179% of the memory roof while MobileNetV2's depthwise
convs took 91% of their plain roofline time (2.44 ms measured, 2.69 ms plain): efficiencies above 1
made every model's calibrated latency too fast (median |error| 17%, worst -30%); capped at the roof,
the same day, median 7%, worst -13%. The cost: MaxPool, whose suite case does enjoy the cache in a
model too, is predicted ~2x slow, and ResNet-50's node-time rank correlation fell from 0.92 to 0.85.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace
from onnxperf.predict.recurrence import CELL_KEY, STEP_KEY, STREAM_KEY, Steps
from onnxperf.predict.roofline import FITTED_ON_ARITHMETIC, TRANSCENDENTAL
from onnxperf.products.validate.runner import Probe

@dataclass(frozen=True)
class Sample:
    """One measured op of the suite with its plain roofline terms."""

    case: str
    family: str
    compute_s: float  # W / π
    memory_s: float  # Q / β
    measured_s: float
    nbytes: float = 0.0  # bytes one copy moves (its cost rule's)
    gemm_s: float = 0.0  # of compute_s, a recurrent op's input projection (run as a GEMM: rnn_gemm_flops)
    #: the machine's state while it was measured (the probes around its runs), None when not probed
    state: Probe | None = None
    #: its traffic is main memory's (the cache-aware roofline puts most of its bytes there), not a cache's
    dram: bool = True
    #: the im2col runs one copy makes (:func:`onnxperf.predict.im2col.im2col_runs`)
    im2col: float = 0.0
    #: the threads its kernel chose by onnxruntime's own cost model
    #: (:func:`onnxperf.predict.ort_threads.kernel_threads`; None: all of the pool's): its compute and memory
    #: terms are already scaled by P/k, and it pays the pool's dispatch only when k > 1
    threads: int | None = None

    @property
    def plain_s(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def compute_bound(self) -> bool:
        return self.compute_s >= self.memory_s


_CLIP = (0.005, 1.0)
#: cases whose roofline time is negligible: their measured time is the dispatch overhead
TINY = frozenset({"add_tiny", "relu_tiny"})
#: mid-size memory-bound cases (256 KiB tensors): onnxruntime runs them on its thread pool, whose
#: dispatch costs more than a single-threaded op's; they fit ``overhead_parallel_s``, nothing else
MID = frozenset({"add_64k", "relu_64k", "softmax_64k", "transpose_64k", "layernorm_64k"})
#: a node moving at least this many bytes pays ``overhead_parallel_s``: onnxruntime's elementwise
#: kernels go parallel between these sizes (this 2-core VM: an Add of 16 Ki floats, 192 KiB moved,
#: 6 µs profiled; of 64 Ki floats, 768 KiB, 14 µs, of which 3.5 µs is its traffic at L2/L3 speed;
#: of 256 elements, 4 µs)
PARALLEL_MIN_BYTES = 256 * 1024


def _clip(x: float) -> float:
    return min(max(x, _CLIP[0]), _CLIP[1])


#: candidate overlaps of compute and memory time tried by the fit: 0, 0.05, ..., 1
OVERLAPS = tuple(i / 20 for i in range(21))


def fit_efficiency(samples: Iterable[Sample]) -> dict[str, float]:
    """The efficiency table of a calibrated spec (see the module docstring).

    Per family, for each overlap α in :data:`OVERLAPS` the family's efficiencies are fitted
    (medians, the lesser term taken off at α), its samples are predicted with them, and the α with
    the least sum of squared log errors wins (the smaller one on a tie: a family whose samples
    cannot tell keeps the pure roofline, α = 0). α = 1 adds compute and memory time."""
    samples = list(samples)
    tiny = [s.measured_s for s in samples if s.case in TINY]
    overhead = statistics.median(tiny) if tiny else 0.0
    fit = [s for s in samples if s.case not in TINY | MID and s.measured_s > 0]
    mid = [s for s in samples if s.case in MID and s.measured_s > 0]
    out = _fit_families(fit, overhead)
    if mid:
        # what a mid-size op takes beyond the single-threaded dispatch and its fitted roofline time
        extra = [s.measured_s - overhead - predict(s, out, out.get(f"{s.family}.overlap", 0.0), 0.0) for s in mid]
        parallel = max(0.0, statistics.median(extra))
        if parallel > 0:
            out["overhead_parallel_s"] = parallel
            out["parallel_min_bytes"] = float(PARALLEL_MIN_BYTES)
            # refit with it taken off the cases that pay it too
            big = {s.case for s in fit if (s.threads > 1 if s.threads is not None else s.nbytes >= PARALLEL_MIN_BYTES)}
            out = _fit_families(fit, overhead, {c: parallel for c in big})
            out["overhead_parallel_s"] = parallel
            out["parallel_min_bytes"] = float(PARALLEL_MIN_BYTES)
    return dict(sorted(out.items()))


#: the families whose kernels are what a peak is measured with (dense products): the roof the others are
#: fitted under (:func:`roof_ratio`)
ROOF_FAMILIES = ("conv", "matmul")


def roof_ratio(samples: Iterable[Sample]) -> float:
    """How far the suite's dense products ran above the spec's peak: the largest over :data:`ROOF_FAMILIES`
    of the median over the family's compute-bound samples of (W/π) / (t − o_k) (o_k as in
    :func:`fit_efficiency`, no overlap), and 1 when none is above it.

    Above 1 the peak is not the machine's roof: it was probed in a slower moment than the calibration's
    reference state (on the 2-core VM a probe's 4096³ sgemm gave 147 GFLOP/s where an hour before it gave
    245, and the suite's convolutions then attained 104-118% of it), or the runtime's kernels outrun the
    probe's library. Clipped at 1 (:data:`_CLIP`), every convolution and matrix product would be predicted
    that much slow; the calibration raises the peaks by this ratio instead (:func:`raised_peaks`)."""
    samples = list(samples)
    tiny = [s.measured_s for s in samples if s.case in TINY]
    overhead = statistics.median(tiny) if tiny else 0.0
    best = 1.0
    for fam in ROOF_FAMILIES:
        shares = [s.compute_s / max(s.measured_s - overhead, s.measured_s * 0.1) for s in samples
                  if s.family == fam and s.compute_bound and s.measured_s > 0 and s.case not in TINY | MID]
        if shares:
            best = max(best, statistics.median(shares))
    return best


def raised_peaks(spec, ratio: float):
    """``spec`` with every peak times ``ratio`` (:func:`roof_ratio`), each peak's source saying so."""
    why = (f"raised x{ratio:.3f} by hw calibrate: the suite's dense products ran that much above the peak "
           "in the calibration's reference state")
    peaks = {k: v * ratio for k, v in spec.peak_flops_per_s.items()}
    sources = dict(spec.sources)
    for k in peaks:
        sources[k] = f"{sources[k]}; {why}" if sources.get(k) else why
    return replace(spec, peak_flops_per_s=peaks, sources=sources)


def compute_fitted(family: str) -> bool:
    """A family fitted on its arithmetic whatever its plain roofline's bound: ``op.<Op>`` of a
    transcendental function or another kernel whose time follows its element count
    (:data:`onnxperf.predict.roofline.FITTED_ON_ARITHMETIC`). erf_1m is memory-bound on
    the roofline (1 FLOP per element by the convention, 8 bytes), yet onnxruntime evaluates a
    polynomial per element and takes 6x its memory time; fitted as a share of the memory roof, the
    same op in a model, whose data sits in a faster cache level or rides inside a fused GELU,
    came out 2-6x fast (BERT's Erf nodes: 39 µs measured, 16 predicted)."""

    return family.startswith("op.") and family[3:] in FITTED_ON_ARITHMETIC


def fit_runs(samples: list[Sample], overhead: float, extra: dict[str, float] | None = None) -> float:
    """The cost r of one im2col run from a family's samples, with its arithmetic's rate u = 1 / (e_c·π):
    least relative squares of

        t_i − o_i ≈ c_i·u + R_i·r      (c_i = W_i / π, R_i the sample's runs, u, r ≥ 0)

    over the compute-bound samples (the 8-bit convolutions: a 1x1 case without runs, a 3x3 one with few, a
    3-channel stem with many). 0 when they cannot tell the two apart (no two samples whose R / c differ)."""
    rows = [(s.compute_s, s.im2col, max(s.measured_s - overhead - (extra or {}).get(s.case, 0.0), s.measured_s * 0.1))
            for s in samples if s.compute_bound and s.measured_s > 0]
    if len({round(r / c, 12) for c, r, _ in rows if c > 0}) < 2:
        return 0.0
    # minimise Σ ((c·u + R·r) / t − 1)²: the 2x2 normal equations of the rows (c / t, R / t) against 1
    a = [(c / t, r / t) for c, r, t in rows]
    s11 = sum(x * x for x, _ in a)
    s12 = sum(x * y for x, y in a)
    s22 = sum(y * y for _, y in a)
    b1 = sum(x for x, _ in a)
    b2 = sum(y for _, y in a)
    det = s11 * s22 - s12 * s12
    if det <= 0:
        return 0.0
    r = (s11 * b2 - s12 * b1) / det
    return max(r, 0.0)


def _fit_families(fit: list[Sample], overhead: float, extra: dict[str, float] | None = None) -> dict[str, float]:
    """Per-family efficiencies and overlaps (:func:`fit_efficiency`); ``extra``: a case's dispatch
    beyond ``overhead`` (the parallel one). A :func:`compute_fitted` family gets ``.compute`` (the
    median of W/π over its time) and ``.overlap`` 0; ``transcendental.*`` is the median of those
    families, for the transcendental functions the suite lacks; they stay out of ``default.*``."""

    extra = extra or {}
    out: dict[str, float] = {"overhead_s": overhead}
    ratios: dict[str, list[float]] = {"compute": [], "memory": []}
    transcendental: list[float] = []
    for fam in sorted({s.family for s in fit}):
        mine = [s for s in fit if s.family == fam]
        if any(s.gemm_s for s in mine):
            # a recurrent op's input projection runs as a GEMM at the matrix products' efficiency (fitted
            # before: "matmul" sorts first); the family is fitted on the rest, its recurrence
            e_mm = out.get("matmul.compute", 1.0)
            mine = [replace(s, compute_s=s.compute_s - s.gemm_s, measured_s=max(s.measured_s - s.gemm_s / e_mm,
                                                                                s.measured_s * 0.1), gemm_s=0.0)
                    for s in mine]
        if any(s.im2col for s in mine):
            run_s = fit_runs(mine, overhead, extra)
            if run_s > 0:
                out[f"{fam}.run_s"] = run_s
                mine = [replace(s, measured_s=max(s.measured_s - s.im2col * run_s, s.measured_s * 0.1), im2col=0.0)
                        for s in mine]
        if compute_fitted(fam):
            vals = [s.compute_s / max(s.measured_s - overhead - extra.get(s.case, 0.0), s.measured_s * 0.1)
                    for s in mine]
            out[f"{fam}.compute"] = _clip(statistics.median(vals))
            out[f"{fam}.overlap"] = 0.0
            if fam[3:] in TRANSCENDENTAL:
                transcendental.append(out[f"{fam}.compute"])
            continue
        best: tuple[float, float, dict[str, list[float]]] | None = None
        for alpha in OVERLAPS:
            r = _ratios(mine, overhead, alpha, extra)
            eff = {f"{fam}.{k}": _clip(statistics.median(v)) for k, v in r.items() if v}
            err = sum(math.log(predict(s, eff, alpha, overhead + extra.get(s.case, 0.0)) / s.measured_s) ** 2
                      for s in mine)
            if best is None or err < best[0] - 1e-9 * max(1.0, best[0]):
                best = (err, alpha, r)
        _, alpha, r = best
        for kind, vals in r.items():
            if vals:
                out[f"{fam}.{kind}"] = _clip(statistics.median(vals))
                ratios[kind] += vals
        if alpha > 0:
            out[f"{fam}.overlap"] = alpha
    if transcendental:
        out["transcendental.compute"] = statistics.median(transcendental)
        out["transcendental.overlap"] = 0.0
    out["default.compute"] = _clip(statistics.median(ratios["compute"])) if ratios["compute"] else 1.0
    out["default.memory"] = _clip(statistics.median(ratios["memory"])) if ratios["memory"] else 1.0
    return out


def _ratios(samples: list[Sample], overhead: float, alpha: float,
            extra: dict[str, float] | None = None) -> dict[str, list[float]]:
    """Attained share of the roof per sample, by the kind of its bound, at overlap α."""
    out: dict[str, list[float]] = {"compute": [], "memory": []}
    for s in samples:
        o = overhead + (extra or {}).get(s.case, 0.0)
        t = max(s.measured_s - o, s.measured_s * 0.1)
        term, lesser = (s.compute_s, s.memory_s) if s.compute_bound else (s.memory_s, s.compute_s)
        t = max(t - alpha * lesser, t * 0.1)
        out["compute" if s.compute_bound else "memory"].append(term / t)
    return out


def predict(s: Sample, eff: dict[str, float], alpha: float, overhead: float) -> float:
    """A sample's time under fitted efficiencies: max(c', m') + α·min(c', m') + o (as the roofline)."""
    c = s.compute_s / eff.get(f"{s.family}.compute", eff.get("default.compute", 1.0))
    c += s.im2col * eff.get(f"{s.family}.run_s", 0.0)
    m = s.memory_s / eff.get(f"{s.family}.memory", eff.get("default.memory", 1.0))
    if compute_fitted(s.family):
        return max(c, m) + overhead
    # the lesser term at its family's efficiency when fitted, else at the roof (as in _ratios)
    return max(c, m) + alpha * min(c, m) + overhead


@dataclass(frozen=True)
class StepSample:
    """One timed LSTM of the step cases: its recurrence (:class:`~onnxperf.predict.recurrence.Steps`), its
    measured kernel time, and the part of it that is not its steps (the input projection at the matrix
    products' fitted rate, and the profiled kernel's floor)."""

    case: str
    steps: Steps
    measured_s: float
    fixed_s: float


#: the stream rates β tried by :func:`fit_steps`: 1 GB/s to 1 TB/s, 40 per decade
STREAM_RATES = tuple(10 ** (9 + i / 40) for i in range(121))


def fit_steps(samples: Iterable[StepSample], core_flops_per_s: float) -> dict[str, float]:
    """The LSTM step constants (:mod:`onnxperf.predict.recurrence`) from timed LSTMs: each sample's time per step

        y = (t − fixed) / S ≈ max(B / β, F / φ) + U·c + [pool]·s      (φ = ``core_flops_per_s``; c, s ≥ 0)

    For each β of :data:`STREAM_RATES`, c and s by least relative squares (a negative one set to 0 and the
    other refitted); the β whose fit has the least sum of squared log errors wins. Empty when fewer than three
    samples have a positive time per step, or no fit predicts every sample a positive time."""
    rows = []
    for smp in samples:
        st = smp.steps
        y = (smp.measured_s - smp.fixed_s) / st.steps if st.steps else 0.0
        if y > 0:
            rows.append((st, y))
    if len(rows) < 3:
        return {}
    best: tuple[float, float, float, float] | None = None
    for beta in STREAM_RATES:
        base = [max(st.stream_bytes / beta, st.step_flops / core_flops_per_s) for st, _ in rows]
        # (y − base) / y ≈ c·U/y + s·pool/y: least squares of the relative residual
        a = [(st.cell_units / y, (1.0 if st.pool_steps else 0.0) / y, (y - b) / y) for (st, y), b in zip(rows, base)]
        c, s = _two_nonneg(a)
        pred = [b + st.cell_units * c + (s if st.pool_steps else 0.0) for (st, _), b in zip(rows, base)]
        if min(pred) <= 0:
            continue
        err = sum(math.log(p / y) ** 2 for p, (_, y) in zip(pred, rows))
        if best is None or err < best[0] - 1e-12:
            best = (err, beta, c, s)
    if best is None:
        return {}
    _, beta, c, s = best
    return {STREAM_KEY: beta, CELL_KEY: c, STEP_KEY: s}


def fit_gru_cell(sample: StepSample, core_flops_per_s: float, stream_bytes_per_s: float, step_s: float) -> float:
    """A GRU's cell constant from one timed GRU, β and s held at the LSTMs' (:func:`fit_steps`):

        c_gru = (y − max(B / β, F / φ) − [pool]·s) / U,   y = (t − fixed) / S

    (``step_s`` s for each of the step's hand-offs: a GRU's two). 0 where that leaves nothing."""
    st = sample.steps
    if not st.steps or not st.cell_units:
        return 0.0
    y = (sample.measured_s - sample.fixed_s) / st.steps
    rest = y - max(st.stream_bytes / stream_bytes_per_s, st.step_flops / core_flops_per_s) \
        - st.pool_steps / st.steps * step_s
    return max(rest / st.cell_units, 0.0)


def _two_nonneg(rows: list[tuple[float, float, float]]) -> tuple[float, float]:
    """(x1, x2) ≥ 0 minimising Σ (x1·a1 + x2·a2 − b)² over ``rows`` (a1, a2, b): the unconstrained solution
    when both are ≥ 0, else the better of the two one-variable fits (each clipped at 0)."""
    s11 = sum(r[0] * r[0] for r in rows)
    s12 = sum(r[0] * r[1] for r in rows)
    s22 = sum(r[1] * r[1] for r in rows)
    b1 = sum(r[0] * r[2] for r in rows)
    b2 = sum(r[1] * r[2] for r in rows)
    det = s11 * s22 - s12 * s12
    if det > 0:
        x1, x2 = (s22 * b1 - s12 * b2) / det, (s11 * b2 - s12 * b1) / det
        if x1 >= 0 and x2 >= 0:
            return x1, x2
    one = [(max(b1 / s11, 0.0) if s11 else 0.0, 0.0), (0.0, max(b2 / s22, 0.0) if s22 else 0.0)]

    def sse(x):
        return sum((x[0] * a1 + x[1] * a2 - b) ** 2 for a1, a2, b in rows)
    return min(one, key=sse)


def calibrated(spec, efficiency: dict[str, float]):
    """A copy of ``spec`` carrying the fitted efficiencies, its id suffixed ``-calibrated``."""
    return replace(spec, id=f"{spec.id}-calibrated" if not spec.id.endswith("-calibrated") else spec.id,
                   efficiency=dict(efficiency), efficiency_sources={})
