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
    # end-to-end latency is timed with the profiler off: recording events costs time per node
    latencies = _timed(sess, feeds, job["warmup"], job["runs"], 0, total)
    profile_path, profiled = None, []
    if job["profile"]:
        del sess
        so.enable_profiling = True
        so.profile_file_prefix = str(jobdir / "profile")
        so.optimized_model_filepath = ""
        sess = ort.InferenceSession(job["model"], so, providers=job["providers"])
        profiled = _timed(sess, feeds, job["warmup"], job["runs"], per_session, total)
        profile_path = sess.end_profiling()
    _write(jobdir / "result.json", {
        "latencies_s": latencies,
        "profiled_latencies_s": profiled,
        "profile_path": profile_path,
        "optimized_model_path": str(optimized) if optimized is not None and optimized.is_file() else None,
        "providers": list(sess.get_providers()),
        "ort_version": ort.__version__,
    })
    return 0


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
