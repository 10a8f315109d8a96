"""Would calibration-suite cases run beside a model follow its moves better than validate's probes? (issue 30, item 3)

The issue asked for "controls (two or three calibration-suite cases run alongside)". validate's controls are its
probes (a triad, onnxruntime's matrix products, a chain of tiny nodes: onnxperf.products.validate._child). This
script asks whether real suite cases would stand for a model's state better. In one process, again and again for
``--seconds``: the probe (validate's own, run as its child runs it), four suite cases (a 3x3 conv, a depthwise
conv, a main-memory Mul, a Sigmoid: the median of 5 runs each), and three CNNs of the accuracy page with random
weights (the median of 4 runs each). Then, over single iterations and over medians of 6 and 30 consecutive ones
(a validate block is a few seconds, a run tens of seconds), the spread left in log(model time) by each stand-in,
without fitting: log(model time) − e·log(stand-in), e = 1 and 1/2 (the matrix product's rate enters inverted);
and, fitted on the first half of the points and tested on the second, the share of the model's variance the three
probes explain against the four cases.

    python benchmarks/control_tracking.py [--seconds 480] [--out benchmarks/results/control_tracking.md]
        [--json benchmarks/measured/control_tracking.json]
    python benchmarks/control_tracking.py --from-json benchmarks/measured/control_tracking.json [--out ...]

About --seconds plus a minute; run alone (another process's load is what it measures).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as validate's child: numpy's BLAS beside onnxruntime's pool

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import onnxperf  # noqa: E402
from onnxperf.products.calibration.suite import suite  # noqa: E402
from onnxperf.products.validate._child import _Probe  # noqa: E402  (validate's probe, run in this process)
from onnxperf.products.validate.inputs import make_inputs  # noqa: E402
from onnxperf.products.validate.runner import save_probes  # noqa: E402
from onnxperf.products.validate.weights import with_random_weights  # noqa: E402

_spec = importlib.util.spec_from_file_location("onnxperf_bench_accuracy", ROOT / "benchmarks" / "accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)

#: the suite cases run as controls
CONTROLS = ("conv3x3_64", "dwconv3x3_144", "mul_4m", "sigmoid_1m")
#: the accuracy page's models timed beside them (the families whose verdicts moved most from hour to hour)
MODELS = ("mobilenetv2_torch", "efficientnet_b0_torch", "resnet18_torch")
#: the probe figures, as the probe reports them
PROBES = ("triad_bytes_per_s", "matmul_flops_per_s", "dispatch_s_per_node")
GROUPS = (1, 6, 30)
CONTROL_RUNS, MODEL_RUNS = 5, 4


def _session(path: Path, analysis) -> tuple[ort.InferenceSession, dict]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    feeds = make_inputs(analysis, seed=0)
    return sess, {i.name: feeds[i.name] for i in sess.get_inputs()}


def _median_run(sess, feeds, runs: int) -> float:
    sess.run(None, feeds)  # the probe's triad flushed the caches: one untimed run, as validate's blocks
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def measure(seconds: float) -> list[dict]:
    """One row per iteration: the time, the probe's figures, each control's and each model's median run (s)."""
    cases = {c.name: c for c in suite()}
    models = {m.name: m for m in accuracy.suite()}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        controls = {}
        for name in CONTROLS:
            path = tmp / f"{name}.onnx"
            onnx.save(cases[name].model, str(path))
            controls[name] = _session(path, onnxperf.analyze(str(path)))
        timed = {}
        for name in MODELS:
            m = next(x for x in models.values() if Path(x.name).stem == name)
            path = with_random_weights(m.path, tmp / f"{name}.onnx")
            timed[name] = _session(path, onnxperf.analyze(str(path), dims=dict(m.dims),
                                                          input_shapes=dict(m.input_shapes or {})))
        probe = _Probe(np, ort, 64 << 20, None, save_probes(tmp))
        rows = []
        end = time.time() + seconds
        while time.time() < end:
            row = {"t": time.time(), "probe": {k: probe()[k] for k in PROBES}}
            row["controls"] = {k: _median_run(s, f, CONTROL_RUNS) for k, (s, f) in controls.items()}
            row["models"] = {k: _median_run(s, f, MODEL_RUNS) for k, (s, f) in timed.items()}
            rows.append(row)
    return rows


def _group(x: np.ndarray, g: int) -> np.ndarray:
    n = len(x) // g * g
    return np.median(x[:n].reshape(-1, g, *x.shape[1:]), axis=1)


def _split_r2(y: np.ndarray, x: np.ndarray) -> float:
    """Least squares of y on x over the first half of the points; the share of the second half's variance the fit
    explains there (below 0: worse than the second half's mean)."""
    a = np.column_stack([np.ones(len(y)), x])
    h = len(y) // 2
    beta, *_ = np.linalg.lstsq(a[:h], y[:h], rcond=None)
    res = y[h:] - a[h:] @ beta
    return float(1 - res.var() / y[h:].var())


def figures(rows: list[dict], g: int) -> dict[str, dict[str, float]]:
    """Per model, over medians of ``g`` iterations: the spread (standard deviation) of log(model time) raw and less
    e·log(stand-in) for each stand-in and e in (1, 1/2); the mean of the four controls' logs is one more stand-in;
    and the split-half R² of the probes (their three logs) and of the controls (their four)."""
    probes = np.log(np.array([[r["probe"][k] for k in PROBES] for r in rows]))
    ctl = np.log(np.array([[r["controls"][k] for k in CONTROLS] for r in rows]))
    pr, ct = _group(probes, g), _group(ctl, g)
    stand_ins = {"matrix product (probe)": -pr[:, 1], "triad (probe)": -pr[:, 0]}
    stand_ins |= {k: ct[:, i] for i, k in enumerate(CONTROLS)}
    stand_ins["the four controls' mean"] = ct.mean(axis=1)
    out = {}
    for m in MODELS:
        y = _group(np.log(np.array([r["models"][m] for r in rows])), g)
        f = {"points": float(len(y)), "raw": float(y.std())}
        for k, x in stand_ins.items():
            f[f"{k}, e=1"] = float(np.std(y - x))
            f[f"{k}, e=1/2"] = float(np.std(y - 0.5 * x))
        if len(y) >= 8:
            f["R² probes"] = _split_r2(y, pr)
            f["R² controls"] = _split_r2(y, ct)
        out[m] = f
    return out


def page(rows: list[dict], started: str, seconds: float) -> str:
    lines = ["# Would suite cases beside a model follow its moves better than validate's probes?", "",
             f"`python benchmarks/control_tracking.py --seconds {seconds:g}` ({started}): {len(rows)} iterations of "
             "validate's probe, four calibration-suite cases (median of 5 runs each) and three CNNs with random "
             "weights (median of 4 runs each), one after another in one process. Each cell: the standard deviation "
             "of log(model time) less e·log(stand-in) (a stand-in's time; a probe's rate inverted), over medians of "
             "1, 6 and 30 consecutive iterations (an iteration is about 0.8 s); the smaller, the more of the "
             "model's moves the stand-in follows. R²: least squares on the first half of the points, the share of "
             "the second half's variance explained (three probes against four cases).", ""]
    for g in GROUPS:
        if len(rows) // g < 3:
            continue
        figs = figures(rows, g)
        keys = [k for k in next(iter(figs.values())) if k != "points"]
        lines += [f"## Medians of {g} iteration{'s' if g > 1 else ''} "
                  f"({int(next(iter(figs.values()))['points'])} points)", "",
                  "| stand-in | " + " | ".join(MODELS) + " |", "|---|" + "---:|" * len(MODELS)]
        for k in keys:
            lines.append(f"| {k} | " + " | ".join(f"{figs[m][k]:.3f}" if k in figs[m] else "-" for m in MODELS) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=480)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the measured rows")
    ap.add_argument("--from-json", type=Path, default=None, help="the page of rows measured before")
    args = ap.parse_args(argv)
    if args.from_json:
        d = json.loads(args.from_json.read_text())
        rows, started, seconds = d["rows"], d["started"], d["seconds"]
    else:
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        rows, seconds = measure(args.seconds), args.seconds
        if args.json:
            args.json.write_text(json.dumps({"started": started, "seconds": seconds, "rows": rows}) + "\n")
    text = page(rows, started, seconds)
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
