"""Run a model in onnxruntime, in a child process with a time limit, and collect what was measured.

onnxruntime runs in a fresh interpreter (``python onnxperf/products/validate/_child.py JOBDIR``, inputs
passed in an ``.npz``), so a hang is killed at ``timeout_s`` and a crash (segfault, abort) ends the child,
never the caller; both become :class:`RuntimeRunError` with one line of explanation.

Latencies are wall-clock ``time.perf_counter()`` around each ``InferenceSession.run`` of the timed
runs (warm-up runs excluded). With ``profile=True`` they include the profiler's own overhead
(small per node, visible on models with many tiny nodes): measure with ``profile=False`` when the
latency itself is the figure of interest.

Artifacts: the profiler JSON and, when ``opt != "disable"``, the optimized graph as onnxruntime
saved it (weights in a side ``.data`` file) are written to ``workdir`` when the caller gives one
(``RunResult.profile_path`` / ``optimized_model_path`` then point there and stay), else to a
temporary folder removed before returning; either way ``RunResult.optimized_model`` holds the
optimized graph as a ModelProto loaded without its weights, which is all the mapping needs.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from onnxperf.base.errors import OnnxPerfError, OptionError
from onnxperf.products.validate.profile import NodeTiming, load_events, parse_profile, run_windows
from onnxperf.cost.analysis import cost_analysis as analyze
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.ui.progress import advance

OPT_LEVELS = ("disable", "basic", "extended", "all")
#: coefficient of variation of the timed runs above which the result is flagged as noisy
SPREAD_CV_THRESHOLD = 0.10
DEFAULT_PROVIDERS = ("CPUExecutionProvider",)
_CHILD = Path(__file__).with_name("_child.py")


class RuntimeRunError(OnnxPerfError):
    """onnxruntime failed, crashed or ran past its time limit (message: one line)."""

    exit_code = 2


@dataclass(frozen=True)
class RunResult:
    """What one measured session produced. Times in seconds; ``node_timings`` per timed run."""

    latencies_s: tuple[float, ...]
    node_timings: tuple[NodeTiming, ...]
    optimized_model_path: str | None
    providers: tuple[str, ...]
    ort_version: str
    #: intra-op threads asked for; None: onnxruntime's default (one per physical core)
    threads: int | None
    opt: str
    runs: int
    warmup: int
    profile_path: str | None = None
    optimized_model: onnx.ModelProto | None = field(default=None, compare=False, repr=False)
    #: caveats about the measurement (a truncated profile), one line each
    notes: tuple[str, ...] = ()
    #: wall-clock times of the profiled session's timed runs (``latencies_s`` are unprofiled)
    profiled_latencies_s: tuple[float, ...] = ()
    #: with ``blocks``: the timed runs in blocks, each between two probes of the machine's state
    windows: tuple["Window", ...] = ()
    #: with ``probe_state``: the probes before and after the timed runs the caller reads
    state_probes: tuple["Probe", ...] = ()

    @property
    def state(self) -> "Probe | None":
        """The machine's state during the timed runs (``probe_state``): the mean of the probes around them."""
        return Probe.mean(*self.state_probes) if self.state_probes else None


@dataclass(frozen=True)
class Probe:
    """The machine's state as the child measured it between blocks (:mod:`._child`, ``_Probe``): a triad's
    bandwidth beyond the last cache level, onnxruntime's rate on 256³ fp32 matrix products and its time per
    tiny node, both at the run's thread count; and the hand-off probe's rate (the same products, each followed
    by a Transpose: :func:`probe_handoff_model`), None where it was not measured (results from before it).
    The hand-off's share of the product's rate (:attr:`handoff_share`) tells a contended host (:mod:`.state`)."""

    triad_bytes_per_s: float
    matmul_flops_per_s: float
    dispatch_s_per_node: float
    handoff_flops_per_s: float | None = None

    @property
    def handoff_share(self) -> float | None:
        """The hand-off probe's rate over the matrix product's: about 0.90 on this project's VM when its two
        vCPUs run as usual, 0.66-0.74 when the host is contended
        (``benchmarks/results/slow_state_blocks.md``)."""
        if self.handoff_flops_per_s is None or self.matmul_flops_per_s <= 0:
            return None
        return self.handoff_flops_per_s / self.matmul_flops_per_s

    def to_dict(self) -> dict[str, float]:
        d = {"triad_bytes_per_s": self.triad_bytes_per_s, "matmul_flops_per_s": self.matmul_flops_per_s,
             "dispatch_s_per_node": self.dispatch_s_per_node}
        if self.handoff_flops_per_s is not None:
            d["handoff_flops_per_s"] = self.handoff_flops_per_s
        return d

    @staticmethod
    def median(*probes: "Probe") -> "Probe":
        """Each figure's median over ``probes`` (the hand-off's over those that have it)."""
        ho = [p.handoff_flops_per_s for p in probes if p.handoff_flops_per_s is not None]
        return Probe(*(float(np.median([getattr(p, f) for p in probes]))
                       for f in ("triad_bytes_per_s", "matmul_flops_per_s", "dispatch_s_per_node")),
                     float(np.median(ho)) if ho else None)

    @staticmethod
    def mean(*probes: "Probe") -> "Probe":
        """Each figure's mean over ``probes`` (the state of the runs between them)."""
        n = len(probes)
        ho = [p.handoff_flops_per_s for p in probes if p.handoff_flops_per_s is not None]
        return Probe(sum(p.triad_bytes_per_s for p in probes) / n, sum(p.matmul_flops_per_s for p in probes) / n,
                     sum(p.dispatch_s_per_node for p in probes) / n, sum(ho) / len(ho) if ho else None)


@dataclass(frozen=True)
class Window:
    """One block of timed runs with the probes around it, and how much CPU the block got: the process's
    CPU time (every thread) and the machine's steal time over the block's wall-clock time."""

    latencies_s: tuple[float, ...]
    before: Probe
    after: Probe
    wall_s: float
    cpu_s: float
    steal_s: float | None

    @property
    def state(self) -> Probe:
        """The state during the block: the mean of the probes before and after it."""
        return Probe.mean(self.before, self.after)


@dataclass(frozen=True)
class LatencyStats:
    mean_s: float
    p50_s: float
    p90_s: float
    p99_s: float
    min_s: float
    max_s: float
    #: coefficient of variation: sample standard deviation / mean (0 for a single run)
    cv: float
    #: samples per second: batch / mean_s
    throughput_per_s: float
    n: int

    @property
    def spread_warning(self) -> str | None:
        """A one-line warning when ``cv`` exceeds :data:`SPREAD_CV_THRESHOLD` (10 %), else None."""
        if self.cv <= SPREAD_CV_THRESHOLD:
            return None
        return (f"latency varies a lot between runs (cv {self.cv:.0%} > {SPREAD_CV_THRESHOLD:.0%}): "
                "use more runs, fix the thread count, or quiet the machine")


def latency_stats(latencies: Sequence[float], batch: int = 1) -> LatencyStats:
    """Summary of timed-run latencies; percentiles by linear interpolation (numpy's default)."""
    a = np.asarray(latencies, dtype=np.float64)
    if a.size == 0:
        raise OptionError("no latencies to summarize")
    mean = float(a.mean())
    cv = float(a.std(ddof=1) / mean) if a.size > 1 and mean > 0 else 0.0
    p50, p90, p99 = (float(x) for x in np.percentile(a, [50, 90, 99]))
    return LatencyStats(mean, p50, p90, p99, float(a.min()), float(a.max()), cv,
                        batch / mean if mean > 0 else math.inf, int(a.size))


def _first_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        low = ln.lower()
        if "error" in low or "exception" in low or "fail" in low or "abort" in low:
            return ln[:400]
    return lines[-1][:400] if lines else "no message"


class _Progress:
    """Reads ``progress DONE TOTAL`` lines from the child; draws a ``\\r`` line on a terminal."""

    def __init__(self, stream, show: bool):
        self.show = show
        self.drawn = False
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:

        for raw in stream:
            parts = raw.split()
            if len(parts) == 3 and parts[0] == "progress" and parts[1].isdigit() and parts[2].isdigit():
                advance(int(parts[1]), int(parts[2]), "runs")
            if self.show and len(parts) == 3 and parts[0] == "progress":
                sys.stderr.write(f"\ronnxruntime: run {parts[1]}/{parts[2]}")
                sys.stderr.flush()
                self.drawn = True

    def close(self) -> None:
        self.thread.join(timeout=1)
        if self.drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _timings(profile_path: str, runs: int, warmup: int) -> tuple[tuple[NodeTiming, ...], tuple[str, ...]]:
    """Node times of the timed runs. onnxruntime stops recording when its event buffer is full;
    then the runs that were recorded after the warm-up are used, and a note says so."""
    events = load_events(profile_path)
    recorded = len(run_windows(events))
    if recorded >= runs:
        return parse_profile(events, runs=runs), ()
    if recorded > warmup:
        return (parse_profile(events, runs=recorded - warmup),
                (f"the profile holds {recorded - warmup} of the {runs} timed runs (onnxruntime's event limit)",))
    return (), (f"the profile holds no timed run ({recorded} run(s) recorded): no per-node times",)


def _check_args(runs: int, warmup: int, threads: int | None, opt: str, timeout_s: float) -> None:
    if opt not in OPT_LEVELS:
        raise OptionError(f"unknown optimization level {opt!r} (choose from {', '.join(OPT_LEVELS)})")
    if runs < 1:
        raise OptionError(f"runs must be at least 1, not {runs}")
    if warmup < 0:
        raise OptionError(f"warmup must be 0 or more, not {warmup}")
    if threads is not None and threads < 1:
        raise OptionError(f"threads must be at least 1, not {threads}")
    if not timeout_s > 0:
        raise OptionError(f"timeout must be positive, not {timeout_s}")


def check_provider(name: str) -> tuple[str, ...]:
    """The providers list a session is given for execution provider ``name``: the provider, then
    CPU as the fallback for nodes it lacks. :class:`OptionError` (one line, listing what is
    available) when this onnxruntime has no such provider. Imports onnxruntime here, in the
    caller: asking for the list loads no device."""
    import onnxruntime

    available = list(onnxruntime.get_available_providers())
    if name not in available:
        raise OptionError(f"--provider {name!r}: not an execution provider of this onnxruntime "
                          f"{onnxruntime.__version__} (available: {', '.join(available)})")
    return tuple(dict.fromkeys([name, *DEFAULT_PROVIDERS]))


def _write_job(jobdir: Path, model: Path, inputs: Mapping[str, np.ndarray], job: dict) -> None:
    arrays = {f"i{k}": np.ascontiguousarray(v) for k, v in enumerate(inputs.values())}
    np.savez(jobdir / "inputs.npz", **arrays)
    (jobdir / "input_names.json").write_text(
        json.dumps({f"i{k}": name for k, name in enumerate(inputs)}), encoding="utf-8")
    (jobdir / "job.json").write_text(json.dumps(job | {"model": str(model)}), encoding="utf-8")


#: address space the child's interpreter, numpy and onnxruntime take before the model's own
#: memory (measured ~0.35 GiB on 2 cores; thread stacks grow it with the core count)
RUNTIME_HEADROOM_BYTES = 1 << 30

_OOM_MARKERS = ("bad_alloc", "MemoryError", "Failed to allocate memory", "Cannot allocate memory", "out of memory")


def _limit_address_space(limit: int):
    """A ``preexec_fn`` that caps the child's address space (POSIX), so a model that allocates
    more than it was allowed fails in the child instead of taking the machine's memory."""
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _run_child(jobdir: Path, timeout_s: float, show_progress: bool, what: str,
               memory_limit: int | None = None) -> None:
    stderr_path = jobdir / "stderr.txt"
    preexec = _limit_address_space(memory_limit) if memory_limit and os.name == "posix" else None
    with open(stderr_path, "wb") as err:
        # run as a script, not ``-m``: importing the onnxperf package would double the start time
        proc = subprocess.Popen([sys.executable, str(_CHILD), str(jobdir)], preexec_fn=preexec,
                                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
        progress = _Progress(proc.stdout, show_progress)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise RuntimeRunError(f"onnxruntime did not finish {what} within the {timeout_s:g} s time limit "
                                  "(child process killed)") from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            progress.close()
            if proc.stdout is not None:
                proc.stdout.close()
    if rc == 0:
        return
    error_file = jobdir / "error.json"
    stderr_text = stderr_path.read_text(encoding="utf-8", errors="replace")
    message = None
    if error_file.is_file():
        info = json.loads(error_file.read_text(encoding="utf-8"))
        message = f"{info.get('type', '')}: {info.get('error', 'no message')}"
    if memory_limit and any(m in (message or stderr_text) for m in _OOM_MARKERS):
        raise RuntimeRunError(
            f"onnxruntime ran out of the memory it is allowed: {memory_limit:,} bytes of address space "
            f"(--max-memory plus {RUNTIME_HEADROOM_BYTES >> 20} MiB for the runtime); raise --max-memory to run it")
    if message is not None:
        raise RuntimeRunError(f"onnxruntime failed: {info.get('error', 'no message')}")
    detail = _first_error_line(stderr_text)
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
        raise RuntimeRunError(f"onnxruntime crashed ({sig}): {detail}")
    raise RuntimeRunError(f"onnxruntime child exited with code {rc}: {detail}")


def run_session(model_path: str | os.PathLike, inputs: Mapping[str, np.ndarray] | None = None, *,
                runs: int = 10, warmup: int = 3, threads: int | None = None, opt: str = "all",
                profile: bool = True, timeout_s: float = 300, providers: Sequence[str] | None = None,
                seed: int = 0, workdir: str | os.PathLike | None = None,
                progress: bool | None = None, memory_limit_bytes: int | None = None,
                keep_optimized: bool = True, blocks: int = 1, probe_bytes: int = 64 << 20,
                probe_state: bool = False, calm_share: float | None = None) -> RunResult:
    """Run ``model_path`` ``warmup + runs`` times in a child onnxruntime process.

    ``keep_optimized``: have onnxruntime write the model it optimized (with its weights: as many bytes
    as the model's) so ``optimized_model`` can map measured kernels back to nodes; calibration, which
    needs only the times, turns it off.

    ``latencies_s`` are always timed with the profiler off (recording its events costs a few µs
    per node: 10-25% of a transformer's latency on a small CPU). With ``profile``, a second
    session with the profiler on runs ``warmup + runs`` more times for the per-node times; its
    wall-clock times are kept as ``profiled_latencies_s``.

    ``inputs`` maps graph input names to arrays; when None they come from
    :func:`~onnxperf.products.validate.inputs.make_inputs` on ``analyze(model_path)`` with ``seed`` (every
    input shape must then be static). ``providers`` defaults to CPU only. ``timeout_s`` bounds the
    whole child: start, session creation (graph optimization) and every run. ``progress``: a
    ``\\r`` line on stderr; None shows it when stderr is a terminal. ``memory_limit_bytes``
    caps the child's address space (``RLIMIT_AS``; give the model's budget plus
    :data:`RUNTIME_HEADROOM_BYTES`): a model that allocates more fails with a
    :class:`RuntimeRunError` that says so. ``blocks`` > 1 splits the timed runs into blocks with a
    probe of the machine's state before each and after the last (``windows``; the triad over
    ``probe_bytes``, more than the last cache level). ``probe_state``: one probe before and one after the
    timed runs whose times the caller reads (the profiled ones when profiling: ``state_probes``, ``state``).
    ``calm_share`` (with ``blocks``): while fewer than half the windows have a hand-off share
    (:attr:`Probe.handoff_share`) of at least this, the host is contended: the child waits (1, 2, 4 ...
    seconds) and runs another block, up to ``blocks`` more, so that a state lasting seconds to a minute does
    not decide the verdict (:mod:`.state`).
    """
    _check_args(runs, warmup, threads, opt, timeout_s)
    model = Path(model_path)
    if not model.is_file():
        raise OptionError(f"{model}: no such model file")
    if inputs is None:
        inputs = make_inputs(analyze(model), seed=seed)
    show = sys.stderr.isatty() if progress is None else progress
    job = {"runs": runs, "warmup": warmup, "threads": threads, "opt": opt, "profile": profile,
           "providers": list(providers or DEFAULT_PROVIDERS), "keep_optimized": bool(keep_optimized),
           "blocks": int(blocks), "probe_bytes": int(probe_bytes), "probe_state": bool(probe_state),
           "calm_share": None if calm_share is None else float(calm_share)}
    own_tmp = workdir is None
    jobdir = Path(tempfile.mkdtemp(prefix="onnxperf-run-")) if own_tmp else Path(workdir)
    try:
        jobdir.mkdir(parents=True, exist_ok=True)
        for stale in ("result.json", "error.json"):
            (jobdir / stale).unlink(missing_ok=True)
        _write_job(jobdir, model.resolve(), inputs, job)
        if blocks > 1 or probe_state:
            save_probes(jobdir)
        _run_child(jobdir, timeout_s, show, f"{warmup} warm-up + {runs} timed run(s)", memory_limit_bytes)
        res = json.loads((jobdir / "result.json").read_text(encoding="utf-8"))
        timings, notes = _timings(res["profile_path"], runs, warmup) if res["profile_path"] else ((), ())
        opt_path = res["optimized_model_path"]
        optimized = onnx.load(opt_path, load_external_data=False) if opt_path else None
        return RunResult(
            latencies_s=tuple(float(x) for x in res["latencies_s"]), node_timings=timings,
            optimized_model_path=None if own_tmp else opt_path, providers=tuple(res["providers"]),
            ort_version=str(res["ort_version"]), threads=threads, opt=opt, runs=runs, warmup=warmup,
            profile_path=None if own_tmp else res["profile_path"], optimized_model=optimized, notes=notes,
            profiled_latencies_s=tuple(float(x) for x in res.get("profiled_latencies_s", ())),
            windows=tuple(_window(w) for w in res.get("windows", ())),
            state_probes=tuple(_probe(p) for p in res.get("state_probes", ())),
        )
    finally:
        if own_tmp:
            shutil.rmtree(jobdir, ignore_errors=True)


def _probe(d: dict) -> Probe:
    ho = d.get("handoff_flops_per_s")
    return Probe(float(d["triad_bytes_per_s"]), float(d["matmul_flops_per_s"]), float(d["dispatch_s_per_node"]),
                 None if ho is None else float(ho))


def _window(d: dict) -> Window:
    return Window(tuple(float(x) for x in d["latencies_s"]), _probe(d["probe_before"]), _probe(d["probe_after"]),
                  float(d["wall_s"]), float(d["cpu_s"]), None if d.get("steal_s") is None else float(d["steal_s"]))


#: tiny Adds in the dispatch probe's chain
PROBE_ADDS = 32  # (the child's _Probe.N_ADD)


#: the matrix-product probe: a chain of this many MatMuls of ``x[n, n] · W[n, n]`` (the child's _Probe.MM_CHAIN, MM_N)
PROBE_MATMULS, PROBE_MATMUL_N = 4, 256


def probe_matmul_model() -> onnx.ModelProto:
    """The matrix-product probe: :data:`PROBE_MATMULS` MatMuls of 256³ in a chain, run by onnxruntime at the
    run's thread count; W = 1/n everywhere, so a row of ones stays ones (no overflow, no subnormal)."""
    TensorProto, helper = onnx.TensorProto, onnx.helper
    n = PROBE_MATMUL_N
    w = helper.make_tensor("w", TensorProto.FLOAT, [n, n], np.full(n * n, 1.0 / n, dtype=np.float32).tobytes(), raw=True)
    nodes = [helper.make_node("MatMul", [f"x{k}", "w"], [f"x{k + 1}"]) for k in range(PROBE_MATMULS)]
    g = helper.make_graph(nodes, "probe_matmul", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info(f"x{PROBE_MATMULS}", TensorProto.FLOAT, [n, n])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def probe_handoff_model() -> onnx.ModelProto:
    """The hand-off probe: :func:`probe_matmul_model`'s products, each followed by a Transpose of its output (a
    short memory-bound step, 15-22 µs here, whose rows each thread reads are the ones the other thread wrote).
    On this project's VM, while the host is contended, this chain's rate falls to 0.66-0.74 of the plain
    chain's, against 0.87-0.97 otherwise, where the plain chain itself (products back to back, each thread
    on its own rows) keeps its rate; the models that slow in that state (MobileNetV2 to 0.60-0.63 of its
    speed in two runs, EfficientNet-B0 and Swin-T to 0.63-0.88) slow with it
    (``benchmarks/results/slow_state_blocks.md``)."""
    TensorProto, helper = onnx.TensorProto, onnx.helper
    n = PROBE_MATMUL_N
    w = helper.make_tensor("w", TensorProto.FLOAT, [n, n], np.full(n * n, 1.0 / n, dtype=np.float32).tobytes(), raw=True)
    nodes = []
    for k in range(PROBE_MATMULS):
        nodes.append(helper.make_node("MatMul", [f"x{k}", "w"], [f"m{k}"]))
        nodes.append(helper.make_node("Transpose", [f"m{k}"], [f"x{k + 1}"], perm=[1, 0]))
    g = helper.make_graph(nodes, "probe_handoff", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info(f"x{PROBE_MATMULS}", TensorProto.FLOAT, [n, n])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def save_probes(folder: Path) -> Path:
    """The probes' models (:func:`probe_model`, :func:`probe_matmul_model`, :func:`probe_handoff_model`) in
    ``folder``; the first's path."""
    onnx.save(probe_matmul_model(), str(Path(folder) / "probe_matmul.onnx"))
    onnx.save(probe_handoff_model(), str(Path(folder) / "probe_handoff.onnx"))
    path = Path(folder) / "probe.onnx"
    onnx.save(probe_model(), str(path))
    return path


def probe_model() -> onnx.ModelProto:
    """The dispatch probe: a chain of :data:`PROBE_ADDS` Adds on one float (onnxruntime's cost per node)."""
    TensorProto, helper = onnx.TensorProto, onnx.helper
    nodes = [helper.make_node("Add", [f"t{k}", "one"], [f"t{k + 1}"]) for k in range(PROBE_ADDS)]
    g = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(f"t{PROBE_ADDS}", TensorProto.FLOAT, [1])],
                          [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def measure_state(workdir: Path, threads: int | None = None, blocks: int = 4) -> Probe:
    """The machine's state now: the probes of :class:`Window` (their median over ``blocks + 1`` probes,
    around blocks of the dispatch probe's own model), what ``hw calibrate`` stores as the reference
    ``validate`` normalizes against."""
    path = Path(workdir) / "state-probe.onnx"
    onnx.save(probe_model(), str(path))
    rr = run_session(path, {"t0": np.zeros(1, dtype=np.float32)}, runs=blocks, warmup=1, threads=threads,
                     profile=False, keep_optimized=False, blocks=blocks)
    return Probe.median(*[w.before for w in rr.windows], rr.windows[-1].after)


__all__ = ["DEFAULT_PROVIDERS", "LatencyStats", "Probe", "Window", "measure_state", "probe_handoff_model", "probe_model", "OPT_LEVELS", "RUNTIME_HEADROOM_BYTES", "RunResult", "RuntimeRunError",
           "SPREAD_CV_THRESHOLD", "check_provider", "latency_stats", "run_session"]
