"""Decode latency of the corpus' small decoder LLMs on this machine, measured by onnxruntime at
several contexts beside onnxperf's predictions (issue 17, point 4).

    python benchmarks/bench_llm_decode.py [--contexts 64,256,1024,4096] [--runs 20] [--sessions 3]
                                          [--spec benchmarks/results/calibrated-spec.toml]
                                          [--out benchmarks/results/llm_decode.md]

For each decode-step export of models/corpus (random weights: the weights are not shipped), batch 1:
`validate --decode-context` runs the step in onnxruntime (opt=all) at each context (past = context −
1) and sets the mean latency beside the plain roofline of the spec's peaks and the calibrated one
(the spec, fitted by `hw calibrate` on its fixed single-op suite, never on these models). Each
model is measured in ``--sessions`` sessions interleaved with the others and the fastest session
is kept, as benchmarks/accuracy.py does (interference on this shared VM only adds time); the
median session's error is reported too. Contexts past a model's position table are skipped.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.hardware import load_spec  # noqa: E402
from onnxperf.insights.llm import recognize  # noqa: E402
from onnxperf.graph.loader import load  # noqa: E402
from onnxperf.products.validate.compare import validate  # noqa: E402

MODELS = ("gpt2_decode_legacy.onnx", "gpt2_decode_dynamo18.onnx", "qwen2_decode_dynamo18.onnx",
          "llama_decode_dynamo23.onnx", "llama_decode_legacy.onnx", "qwen2_decode_dynamo18_fp16.onnx",
          "llama_genai_gqa_fp32.onnx", "llama_genai_gqa_int4.onnx")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contexts", default="64,256,1024,4096")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--spec", default=str(ROOT / "benchmarks" / "results" / "calibrated-spec.toml"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    contexts = [int(c) for c in args.contexts.split(",")]
    spec = load_spec(args.spec)
    corpus = ROOT / "models" / "corpus"
    models = [m for m in args.models.split(",") if (corpus / m).exists()]
    plan, dims = {}, {}
    for m in models:
        step = recognize(load(corpus / m))
        plan[m] = [c for c in contexts if step.max_context is None or c <= step.max_context]
        # the profiled main run: the first context; a head size the graph implies (genai's kv_cache_dim)
        dims[m] = {**step.bindings(1, plan[m][0] - 1, 1), **{d: v for d, v, _ in step.inferred}}
    # sessions[model] -> list of {context: DecodePoint}
    sessions: dict[str, list[dict[int, object]]] = {m: [] for m in models}
    for k in range(args.sessions):
        for m in models:
            print(f"session {k + 1}/{args.sessions}: {m}", file=sys.stderr, flush=True)
            v = validate(corpus / m, spec, dims=dims[m], runs=args.runs, warmup=3, threads=args.threads, random_weights=True,
                         decode_contexts=plan[m], progress=False)
            sessions[m].append({d.context: d for d in v.decode})
    lines = ["# Decode latency of small decoder LLMs: measured vs predicted", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}; spec `{spec.id}` "
             f"({args.spec.replace(str(ROOT) + '/', '')}): plain roofline of its peaks, and calibrated "
             "(fitted by `hw calibrate` on its fixed single-op suite, never on these models). onnxruntime "
             f"opt=all, random weights, batch 1, {args.runs} timed runs per point; each model in "
             f"{args.sessions} sessions interleaved with the others, the fastest session kept (interference "
             "on this shared VM only adds time); the median session's calibrated error in the last column.",
             "Re-run: `python benchmarks/bench_llm_decode.py`.", "",
             "| model | context | measured (fastest) | tokens/s | plain predicted | plain error | calibrated "
             "predicted | calibrated error | calibrated error, median session |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    errors_fast, errors_med = [], []
    for m in models:
        for c in plan[m]:
            pts = [s[c] for s in sessions[m] if c in s]
            if not pts:
                continue
            best = min(pts, key=lambda d: d.measured.mean_s)
            meas = best.measured.mean_s
            plain_err = (best.predicted_s - meas) / meas
            cal = best.predicted_calibrated_s
            cal_err = None if cal is None else (cal - meas) / meas
            med = statistics.median(d.measured.mean_s for d in pts)
            med_err = None if cal is None else (cal - med) / med
            if cal_err is not None:
                errors_fast.append(abs(cal_err))
                errors_med.append(abs(med_err))
            lines.append(f"| {m} | {c:,} | {meas * 1e3:.3f} ms | {1 / meas:,.0f} | {best.predicted_s * 1e3:.3f} ms | "
                         f"{plain_err:+.1%} | {'-' if cal is None else f'{cal * 1e3:.3f} ms'} | "
                         f"{'-' if cal_err is None else f'{cal_err:+.1%}'} | "
                         f"{'-' if med_err is None else f'{med_err:+.1%}'} |")
    if errors_fast:
        lines += ["", f"Calibrated end-to-end |error| over {len(errors_fast)} points: median "
                  f"{statistics.median(errors_fast):.1%}, worst {max(errors_fast):.1%} (fastest session); median "
                  f"{statistics.median(errors_med):.1%}, worst {max(errors_med):.1%} (median session)."]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
