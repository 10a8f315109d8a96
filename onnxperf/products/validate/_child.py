"""Child process of :func:`onnxperf.products.validate.runner.run_session`: ``python _child.py JOBDIR``.

Reads ``JOBDIR/job.json`` and ``JOBDIR/inputs.npz``, runs onnxruntime, writes ``JOBDIR/result.json``
(exit 0) or ``JOBDIR/error.json`` (exit 3). Progress goes to stdout as ``progress DONE TOTAL``
lines. Run as a script and free of onnxperf imports (standard library, numpy and onnxruntime
only), so it starts fast and a crash here is onnxruntime's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

# Run as a script, Python puts this folder first on sys.path: its inputs.py / profile.py must not
# shadow anything numpy or onnxruntime import.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

EXIT_ERROR = 3


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:400]
    return "no message"


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)


def run(jobdir: Path) -> int:
    job = json.loads((jobdir / "job.json").read_text(encoding="utf-8"))
    import os

    # numpy's BLAS on one thread: no pool of its own beside onnxruntime's (whose threads are unaffected)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import numpy as np
    import onnxruntime as ort

    levels = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }
    so = ort.SessionOptions()
    so.graph_optimization_level = levels[job["opt"]]
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL  # profile nesting relies on it
    so.log_severity_level = 3  # errors only: the NCHWc serialization warning is expected
    if job["threads"]:
        so.intra_op_num_threads = int(job["threads"])
    optimized = None
    if job["opt"] != "disable" and job.get("keep_optimized", True):
        optimized = jobdir / "optimized.onnx"
        so.optimized_model_filepath = str(optimized)
        # weights go to a side file, so the graph proto stays small and under 2 GB
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                    "optimized.onnx.data")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    with np.load(jobdir / "inputs.npz", allow_pickle=False) as npz:
        feeds = {k: npz[k] for k in npz.files}
    names = json.loads((jobdir / "input_names.json").read_text(encoding="utf-8"))
    feeds = {names[k]: v for k, v in feeds.items()}
    sess = ort.InferenceSession(job["model"], so, providers=job["providers"])
    wanted = [i.name for i in sess.get_inputs()]
    missing = [n for n in wanted if n not in feeds]
    if missing:
        raise ValueError(f"no values for model input(s) {missing}")
    feeds = {n: feeds[n] for n in wanted}
    per_session = job["warmup"] + job["runs"]
    total = per_session * (2 if job["profile"] else 1)
    # end-to-end latency is timed with the profiler off: recording events costs time per node; with
    # blocks, short probes of the machine's state run between them (probe, block, probe, block, probe)
    blocks = max(1, min(int(job.get("blocks") or 1), job["runs"]))
    windows = []
    # probe_state: one probe before and one after the timed runs the caller reads (the profiled session's
    # when profiling, else the latency runs): the state a calibration case was measured in
    probe = None
    if blocks > 1 or job.get("probe_state"):
        probe = _Probe(np, ort, int(job.get("probe_bytes") or (64 << 20)), job["threads"], jobdir / "probe.onnx")
    around = []
    if blocks > 1:
        latencies = _timed(sess, feeds, job["warmup"], 0, 0, total)
        states = [probe()]
        done = job["warmup"]
        sizes = [job["runs"] // blocks + (1 if k < job["runs"] % blocks else 0) for k in range(blocks)]
        calm = job.get("calm_share")
        pause, k = 1.0, 0
        while k < len(sizes):
            size = sizes[k]
            sess.run(None, feeds)  # the probe's triad flushed the caches: one untimed run warms them again
            before = _usage()
            block = _timed(sess, feeds, 0, size, done, total)
            after = _usage()
            done += size
            states.append(probe())
            latencies += block
            windows.append({"latencies_s": block, "probe_before": states[-2], "probe_after": states[-1],
                            "wall_s": after["wall_s"] - before["wall_s"], "cpu_s": after["cpu_s"] - before["cpu_s"],
                            "steal_s": None if after["steal_s"] is None or before["steal_s"] is None
                            else after["steal_s"] - before["steal_s"]})
            k += 1
            # a contended host (the hand-off probe's share below calm_share): while fewer than half the windows
            # are calm, wait and run one more block, up to as many more as were planned
            if (calm and k == len(sizes) and len(sizes) < 2 * blocks
                    and 2 * sum(_share(w) >= calm for w in windows) < len(windows)):
                time.sleep(pause)
                pause = min(2 * pause, 8.0)
                sizes.append(sizes[-1])
                total += sizes[-1]
                states[-1] = probe()  # the state after the pause, before the next block
    else:
        if probe is not None and not job["profile"]:
            around.append(probe())
        latencies = _timed(sess, feeds, job["warmup"], job["runs"], 0, total)
        if probe is not None and not job["profile"]:
            around.append(probe())
    profile_path, profiled = None, []
    if job["profile"]:
        del sess
        so.enable_profiling = True
        so.profile_file_prefix = str(jobdir / "profile")
        so.optimized_model_filepath = ""
        sess = ort.InferenceSession(job["model"], so, providers=job["providers"])
        if probe is not None and job.get("probe_state"):
            around.append(probe())
        profiled = _timed(sess, feeds, job["warmup"], job["runs"], per_session, total)
        if probe is not None and job.get("probe_state"):
            around.append(probe())
        profile_path = sess.end_profiling()
    _write(jobdir / "result.json", {
        "latencies_s": latencies,
        "profiled_latencies_s": profiled,
        "profile_path": profile_path,
        "optimized_model_path": str(optimized) if optimized is not None and optimized.is_file() else None,
        "providers": list(sess.get_providers()),
        "ort_version": ort.__version__,
        "windows": windows,
        "state_probes": around,
    })
    return 0


def _share(w: dict) -> float:
    """A window's hand-off share: the hand-off probe's rate over the matrix product's, the lower of the probes
    before and after it (as the parent's ``state._handoff_share``)."""
    return min(p["handoff_flops_per_s"] / p["matmul_flops_per_s"] for p in (w["probe_before"], w["probe_after"]))


def _usage() -> dict:
    """Wall-clock, this process's CPU time (every thread) and the machine's steal time per CPU (the
    ``cpu`` line of /proc/stat sums every CPU's), in seconds."""
    steal = None
    try:
        import os

        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        if fields[0] == "cpu" and len(fields) > 8:
            steal = int(fields[8]) / os.sysconf("SC_CLK_TCK") / (os.cpu_count() or 1)
    except (OSError, ValueError, IndexError):
        pass
    return {"wall_s": time.perf_counter(), "cpu_s": time.process_time(), "steal_s": steal}


class _Probe:
    """Short measurements of the machine's state (about 0.3 s together, a rest included): a triad's bandwidth
    over arrays larger than the last cache level, onnxruntime's matrix products' arithmetic rate (a chain of 4
    MatMuls of 256³), the same products each followed by a Transpose (the hand-off probe: the runner's
    ``probe_handoff_model``) and its cost per tiny node (a chain of 32 Adds on one element), all at the run's
    thread count. Each probe starts with a rest (:attr:`REST_S`): the model's thread pool spins for tens of ms
    after its last run (20-50 ms here), and a product timed beside a spinning worker read a one-thread rate at
    an explicit ``--threads 2`` (about 110 GFLOP/s against 220). Each is the median of a few repeats: the
    state the block had, not the best it could get nor the noise of one repeat. The matrix products run as
    the model's do, on every thread of the run: on a 2-core VM whose second core is shared with another
    guest now and then, a one-thread product read its full rate (~100 GFLOP/s) on the free core while the
    model's two threads waited on the shared one, and validate's normalized errors came out -30 to -50% in
    those blocks."""

    N_ADD = 32
    #: seconds of rest before each probe: every thread pool's spinning ends (they spin 20-50 ms here)
    REST_S = 0.2
    #: the matrix-product probe: MatMuls of this size in a chain (onnxperf.products.validate.runner)
    MM_N, MM_CHAIN = 256, 4

    def __init__(self, np, ort, nbytes: int, threads, model: Path):
        self.np = np
        n = max(nbytes // 24, 1 << 16)  # three float64 arrays
        self.b = np.ones(n)
        self.c = np.full(n, 2.0)
        self.a = np.empty(n)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # keep the 32 nodes
        if threads:
            so.intra_op_num_threads = int(threads)
        self.ort, self.so = ort, so
        self.sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
        self.feed = {"t0": np.zeros(1, dtype=np.float32)}
        self.mm_model = str(model.with_name("probe_matmul.onnx"))
        self.handoff_model = str(model.with_name("probe_handoff.onnx"))
        self.mm_feed = {"x0": np.ones((self.MM_N, self.MM_N), dtype=np.float32)}
        self()  # warm: first touches of the arrays, the session's first run

    def _median(self, fn, repeats: int) -> float:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    def _chain(self, path: str) -> float:
        """The median time of a run of the chain at ``path``, in a session made for it and ended with it."""
        sess = self.ort.InferenceSession(path, self.so, providers=["CPUExecutionProvider"])
        sess.run(None, self.mm_feed)
        t = self._median(lambda: sess.run(None, self.mm_feed), 9)
        del sess
        return t

    def __call__(self) -> dict:
        np = self.np
        time.sleep(self.REST_S)
        triad = self._median(lambda: np.add(self.b, np.multiply(self.c, 1.5, out=self.a), out=self.a), 5)
        # the matrix products in a session of their own, made for this probe and ended with it: its thread pool
        # spins between runs as the model's does (without spinning, waking its threads made the rate noisy,
        # 56-136 GFLOP/s back to back), and a session left alive spun beside the model's next block and took
        # the cores from it (MobileNetV2's 9-10 ms became 17-20)
        mm = self._chain(self.mm_model)
        handoff = self._chain(self.handoff_model)
        disp = self._median(lambda: self.sess.run(None, self.feed), 21)
        return {"triad_bytes_per_s": 5 * self.a.nbytes / triad,  # read c, write a; read b and a, write a
                "matmul_flops_per_s": self.MM_CHAIN * 2 * self.MM_N ** 3 / mm,
                "handoff_flops_per_s": self.MM_CHAIN * 2 * self.MM_N ** 3 / handoff,
                "dispatch_s_per_node": disp / self.N_ADD}


def _timed(sess, feeds, warmup: int, runs: int, done: int, total: int) -> list[float]:
    """``warmup`` untimed then ``runs`` timed runs; wall-clock seconds of the timed ones."""
    latencies = []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        dt = time.perf_counter() - t0
        if i >= warmup:
            latencies.append(dt)
        print(f"progress {done + i + 1} {total}", flush=True)
    return latencies


def main(argv: list[str]) -> int:
    jobdir = Path(argv[0])
    try:
        return run(jobdir)
    except Exception as exc:  # onnxruntime's own errors: reported to the parent, one line
        _write(jobdir / "error.json", {"type": type(exc).__name__, "error": _first_line(str(exc))})
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
