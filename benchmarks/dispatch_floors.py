"""What decides the profiled time of a tiny kernel? (issue 30, item 4: Swin-T's dispatch-only groups)

    python benchmarks/dispatch_floors.py [--out benchmarks/results/dispatch_floors.md]
                                         [--json benchmarks/measured/dispatch_floors.json]

Swin-T's rank correlation is bounded by ~2,000 kernels of a few elements each (shape arithmetic, index
Gathers) that the profiler records at 4-10 µs, all predicted at the same floor (``overhead_profiled_s``).
This page measures, on onnxruntime's CPU provider with validate's settings (default threads, every graph
optimization, the profiler on, random weights), what separates a 4 µs one from an 8 µs one:

1. **Does the order repeat?** Two sessions of ``RUNS`` runs each; per tiny kernel (inputs and outputs within
   64 KiB, by the profiler's own ``activation_size`` and ``output_size``, or a view or shape query of any
   size: Shape, Reshape, Squeeze, Unsqueeze, ...) its median time in each; the rank
   correlation between the sessions, over all tiny kernels and within each op type.
2. **What predicts it?** The within-tiny rank correlation of the first session's times with: the op type's
   median in the second session (the best a per-op-type floor could do), the number of input and output
   tensors and their dims (onnxruntime's ``KernelScope`` formats every input's and output's type and shape
   into strings inside the timed span: ``core/framework/sequential_executor.cc``), whether the kernel is the
   first of its op type since the last kernel over 64 KiB, and its bytes.
3. **Can a calibration case measure the op-type floors?** A synthetic model of exporter-style shape
   arithmetic (Shape, Gather, Unsqueeze, Concat of 2-6, Reshape, Slice, Range, Equal, Where, Expand, Cast, ...
   between 1.2 MB Adds) in two sessions: each op type's trimmed mean over the case's median tiny kernel,
   against the same in the model; their rank correlation across the op types both have.
4. **The profiler's cost per tensor.** Chains of Concat with 2-8 inputs of one element: the mean time
   against the tensor count.
5. **Do op-type floors carry to other models?** ``onnxperf validate`` (``--blocks 1``, the calibrated spec
   of the accuracy page) of other transformers; their node-group rank ρ as predicted, and with every
   dispatch-only group (one original node moving at most 64 KiB and 64 Ki operations, as the accuracy page
   counts them) predicted at the median this model's tiny kernels of its op type took (the second session).

Run it alone (other work moves the times); about a minute on the 2-core VM.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.products.accuracy import spearman  # noqa: E402
from onnxperf.products.validate.weights import with_random_weights  # noqa: E402

# the accuracy page's definition of a dispatch-only group (its DISPATCH_ONLY bytes and operations)
_spec = importlib.util.spec_from_file_location("onnxperf_bench_accuracy", ROOT / "benchmarks" / "accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)

MODEL = ROOT / "models" / "corpus" / "swin_t_torch.onnx"
SPEC = ROOT / "benchmarks" / "results" / "calibrated-spec.toml"
#: other exports for the transfer (5): file -> --dim bindings
OTHERS = {"swin_v2_t_torch.onnx": {}, "maxvit_t_torch.onnx": {}, "vit_b_16_torch.onnx": {},
          "gpt2_torch_legacy.onnx": {"batch": 1, "sequence": 128}}
RUNS, WARMUP = 20, 3
#: a kernel whose inputs and outputs together stay within this is tiny (the accuracy page's dispatch-only groups)
TINY_BYTES = 64 * 1024
I64, F32 = TensorProto.INT64, TensorProto.FLOAT


def profile(path: str, feeds: dict, runs: int = RUNS) -> list[dict]:
    """One session: the profiler's kernel events of ``runs`` timed runs (after ``WARMUP``), in order."""
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.log_severity_level = 3
    so.profile_file_prefix = tempfile.mktemp(dir=tempfile.gettempdir())
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for _ in range(WARMUP + runs):
        s.run(None, feeds)
    p = s.end_profiling()
    events = json.load(open(p, encoding="utf-8"))
    os.remove(p)
    kernels = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_run = len(kernels) // (WARMUP + runs)
    return kernels[WARMUP * per_run:]


def medians(events: list[dict]) -> tuple[dict[str, float], dict[str, dict], list[str]]:
    """(kernel -> median µs, kernel -> its profiler args, the kernels in execution order)."""
    times: dict[str, list[float]] = collections.defaultdict(list)
    args, order = {}, []
    for e in events:
        k = e["name"][: -len("_kernel_time")]
        if k not in args:
            args[k] = e["args"]
            order.append(k)
        times[k].append(e["dur"])
    return {k: float(np.median(v)) for k, v in times.items()}, args, order


#: kernels that read no data whatever their input's size (onnxruntime's Reshape family aliases its input)
VIEWS = frozenset({"Shape", "Size", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"})


def tiny(a: dict) -> bool:
    """Inputs and outputs within ``TINY_BYTES`` by the profiler's sizes, or a view or shape query (whose
    input the profiler counts whole though the kernel reads none of it)."""
    return a.get("op_name") in VIEWS or int(a.get("activation_size", 0)) + int(a.get("output_size", 0)) <= TINY_BYTES


def trimmed(v) -> float:
    v = np.sort(np.asarray(v, float))
    k = len(v) // 10
    return float(v[k:len(v) - k].mean())


def tensors(a: dict) -> int:
    return len(a["input_type_shape"]) + len(a["output_type_shape"])


def dims(a: dict) -> int:
    return sum(len(next(iter(t.values()))) for t in a["input_type_shape"] + a["output_type_shape"])


def model_study(path: Path) -> dict:
    runnable = Path(tempfile.mkdtemp()) / path.name
    with_random_weights(path, runnable)
    s = ort.InferenceSession(str(runnable), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.random.default_rng(0).random([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
             for i in s.get_inputs()}
    (m1, args, order), (m2, _, _) = (medians(profile(str(runnable), feeds)) for _ in range(2))
    small = [k for k in order if tiny(args[k]) and k in m2]
    op = {k: args[k]["op_name"] for k in small}
    by_op: dict[str, list[str]] = collections.defaultdict(list)
    for k in small:
        by_op[op[k]].append(k)
    op_median_2 = {o: float(np.median([m2[k] for k in ks])) for o, ks in by_op.items()}
    # the first of its op type since the last kernel over TINY_BYTES
    first, seen = {}, set()
    for k in order:
        if k not in op:
            seen = set()
            continue
        first[k] = op[k] not in seen
        seen.add(op[k])
    y = [m1[k] for k in small]
    predictors = {
        "the same kernel in the second session (the repeat)": [m2[k] for k in small],
        "its op type's median in the second session (a per-op-type floor)": [op_median_2[op[k]] for k in small],
        "its input and output tensors": [tensors(args[k]) for k in small],
        "their dims": [dims(args[k]) for k in small],
        "first of its op type since the last kernel over 64 KiB": [float(first[k]) for k in small],
        "its bytes (activation and output sizes)": [int(args[k]["activation_size"]) + int(args[k]["output_size"])
                                                  for k in small],
    }
    per_op = [{"op": o, "kernels": len(ks), "median_1_us": float(np.median([m1[k] for k in ks])),
               "median_2_us": op_median_2[o], "repeat_rho": spearman([m1[k] for k in ks], [m2[k] for k in ks]),
               "relative": trimmed([m1[k] for k in ks]) / trimmed(y)}
              for o, ks in sorted(by_op.items(), key=lambda t: -len(t[1]))]
    return {"model": str(path.relative_to(ROOT)), "kernels": len(order), "tiny": len(small), "op_median_2": op_median_2,
            "tiny_time_share": sum(y) / sum(m1.values()),
            "predictors": {name: spearman(x, y) for name, x in predictors.items()}, "per_op": per_op}


def shape_case(blocks: int = 24) -> onnx.ModelProto:
    """Exporter-style shape arithmetic between 1.2 MB Adds of x[N, L, 96] (N, L symbolic: nothing folds)."""
    nodes, inits = [], []

    def const(name, vals, dt=I64, shape=None):
        inits.append(helper.make_tensor(name, dt, [len(vals)] if shape is None else shape, vals))
        return name

    for name, v in (("i0", 0), ("i1", 1), ("i2", 2), ("seven", 7)):
        const(name, [v], shape=[])
    for name, v in (("ax0", 0), ("m1", -1), ("one1", 1), ("zero1", 0), ("two1", 2), ("big1", 10 ** 9)):
        const(name, [v])
    const("half", [0.5], F32, [])
    inits.append(numpy_helper.from_array(np.zeros(96, np.float32), "b"))
    count = [0]

    def nd(op, ins, **kw):
        count[0] += 1
        out = f"{op}_{count[0]}"
        nodes.append(helper.make_node(op, ins, [out], name=out, **kw))
        return out

    x, sinks = "x", []
    for _ in range(blocks):
        y = nd("Add", [x, "b"])
        s = nd("Shape", [y])
        g = [nd("Gather", [s, i], axis=0) for i in ("i0", "i1", "i2")]
        u = [nd("Unsqueeze", [gi, "ax0"]) for gi in g]
        d = nd("Div", [g[1], "seven"])
        mo = nd("Mod", [g[1], "seven"])
        su = nd("Sub", [g[1], mo])
        ad = nd("Add", [su, "i1"])
        ud = nd("Unsqueeze", [d, "ax0"])
        c2 = nd("Concat", [u[0], u[1]], axis=0)
        c3 = nd("Concat", [u[0], ud, u[2]], axis=0)
        c4 = nd("Concat", [u[0], ud, "m1", u[2]], axis=0)
        c6 = nd("Concat", [u[0], ud, "one1", u[1], "m1", u[2]], axis=0)
        r = nd("Reshape", [y, c4])
        sl = nd("Slice", [s, "one1", "big1", "zero1", "one1"])
        sl2 = nd("Slice", [c6, "zero1", "two1", "zero1", "one1"])
        cs = nd("ConstantOfShape", [sl2], value=helper.make_tensor("v", I64, [1], [1]))
        rg = nd("Range", ["i0", d, "i1"])
        eq = nd("Equal", [c6, "m1"])
        wh = nd("Where", [eq, "one1", c6])
        ex = nd("Expand", [rg, nd("Concat", [u[0], "one1"], axis=0)])
        pw = nd("Pow", [nd("Cast", [g[1]], to=F32), "half"])
        sq = nd("Squeeze", [u[2], "ax0"])
        tr = nd("Transpose", [nd("Unsqueeze", [c3, "ax0"])], perm=[1, 0])
        x = nd("Reshape", [r, s])
        sinks += [cs, wh, ex, pw, ad, sl, sq, tr, nd("Mul", [c2, "one1"])]
    g = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info("x", F32, ["N", "L", 96])], [], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    typed = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    m.graph.output.extend(typed[t] for t in [x, *sinks])  # every side result an output: nothing is dead code
    return m


def case_study(model_rel: dict[str, float]) -> dict:
    path = Path(tempfile.mkdtemp()) / "shape_case.onnx"
    onnx.save(shape_case(), str(path))
    feeds = {"x": np.random.default_rng(0).random((1, 3136, 96), np.float32)}
    sessions = []
    for _ in range(2):
        m, args, _ = medians(profile(str(path), feeds))
        small = [k for k in m if tiny(args[k])]
        by_op: dict[str, list[float]] = collections.defaultdict(list)
        for k in small:
            by_op[args[k]["op_name"]].append(m[k])
        ref = trimmed([m[k] for k in small])
        sessions.append({o: trimmed(v) / ref for o, v in by_op.items()})
    both = sorted(set(sessions[0]) & set(model_rel))
    return {"relative": sessions, "ops": both,
            "rho_case_sessions": spearman([sessions[0][o] for o in both], [sessions[1][o] for o in both]),
            "rho_case_model": spearman([sessions[0][o] for o in both], [model_rel[o] for o in both])}


def concat_study(copies: int = 40) -> list[tuple[int, float]]:
    """Mean profiled µs of a Concat of n one-element inputs, n = 2..8 (n + 1 tensors)."""
    nodes = [helper.make_node("Concat", ["a"] * n, [f"c{n}_{i}"], axis=0, name=f"c{n}_{i}")
             for i in range(copies) for n in range(2, 9)]
    g = helper.make_graph(nodes, "concat", [helper.make_tensor_value_info("a", I64, [1])],
                          [helper.make_tensor_value_info(n.output[0], I64, None) for n in nodes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = Path(tempfile.mkdtemp()) / "concat.onnx"
    onnx.save(m, str(path))
    t: dict[int, list[float]] = collections.defaultdict(list)
    for e in profile(str(path), {"a": np.array([1], np.int64)}, runs=30):
        t[int(e["name"].split("_")[0][1:])].append(e["dur"])
    return [(n + 1, float(np.mean(v))) for n, v in sorted(t.items())]


def transfer_study(op_median_us: dict[str, float]) -> list[dict]:
    """(5) Each of ``OTHERS`` validated once; its group ρ as predicted and with ``op_median_us`` as the
    time of every dispatch-only group whose op type it has."""

    limit = accuracy.DISPATCH_ONLY
    out = []
    for name, dims in OTHERS.items():
        with tempfile.TemporaryDirectory() as tmp:
            dst = Path(tmp) / "v.json"
            cmd = [sys.executable, "-m", "onnxperf", "validate", str(ROOT / "models" / "corpus" / name), "--hw", str(SPEC),
                   "--random-weights", "--blocks", "1", "--no-progress", "--format", "json", "-o", str(dst)]
            cmd += [x for k, v in dims.items() for x in ("--dim", f"{k}={v}")]
            subprocess.run(cmd, check=True, capture_output=True)
            groups = json.loads(dst.read_text(encoding="utf-8"))["groups"]
        live = [g for g in groups if not g["folded"] and g["measured_s"] > 0]
        y = [g["measured_s"] for g in live]
        pred = [g["predicted_calibrated_s"] or 0.0 for g in live]
        floor, hits = list(pred), 0
        for i, g in enumerate(live):
            op = g["original_op_types"][0]
            if len(g["original_node_ids"]) == 1 and g["bytes"] <= limit and g["flops"] <= limit \
                    and op in op_median_us:
                floor[i], hits = op_median_us[op] * 1e-6, hits + 1
        out.append({"model": name, "groups": len(live), "replaced": hits, "rho": spearman(pred, y),
                    "rho_with_floors": spearman(floor, y)})
    return out


def page(res: dict) -> str:
    ms, cs = res["model"], res["case"]
    lines = [f"# What decides a tiny kernel's profiled time ({datetime.date.today().isoformat()})", "",
             "Issue 30, item 4. `python benchmarks/dispatch_floors.py` (about a minute, run alone): onnxruntime "
             f"{res['onnxruntime']}, CPU provider, default threads, every graph optimization, the profiler on. "
             "See the script's docstring for the method.", "",
             f"## {ms['model']}: {ms['tiny']} of {ms['kernels']} kernels are tiny "
             f"({ms['tiny_time_share']:.1%} of the kernel time)", "",
             "Rank correlation of a tiny kernel's median time in the first session with:", "",
             "| predictor | ρ |", "|---|---:|"]
    lines += [f"| {k} | {'-' if v is None else f'{v:.3f}'} |" for k, v in ms["predictors"].items()]
    lines += ["", "Per op type (20 kernels or more):", "",
              "| op type | kernels | median, session 1 (µs) | session 2 | ρ between the sessions | "
              "trimmed mean over all tiny |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {o['op']} | {o['kernels']} | {o['median_1_us']:.1f} | {o['median_2_us']:.1f} | "
              f"{'-' if o['repeat_rho'] is None else format(o['repeat_rho'], '.2f')} | {o['relative']:.2f} |"
              for o in ms["per_op"] if o["kernels"] >= 20]
    lines += ["", "## The synthetic shape-arithmetic case", "",
              "Each op type's trimmed mean over the case's tiny kernels (two sessions), beside the model's:", "",
              "| op type | case, session 1 | case, session 2 | model |", "|---|---:|---:|---:|"]
    model_rel = {o["op"]: o["relative"] for o in ms["per_op"]}
    lines += [f"| {o} | {cs['relative'][0][o]:.2f} | {cs['relative'][1].get(o, float('nan')):.2f} | "
              f"{model_rel[o]:.2f} |" for o in cs["ops"]]
    lines += ["", f"Rank correlation across these {len(cs['ops'])} op types: the case's two sessions "
              f"{cs['rho_case_sessions']:.2f}, the case against the model {cs['rho_case_model']:.2f}.", "",
              "## The profiler's cost per tensor", "", "| tensors (Concat inputs + 1) | mean µs |", "|---:|---:|"]
    lines += [f"| {n} | {t:.2f} |" for n, t in res["concat"]]
    slope = np.polyfit([n for n, _ in res["concat"]], [t for _, t in res["concat"]], 1)[0]
    lines += ["", f"Least-squares slope: {slope:.2f} µs per tensor.", "",
              f"## {ms['model']}'s op-type medians on other exports", "",
              "| model | groups | dispatch-only groups given the median | ρ as predicted | ρ with the medians |",
              "|---|---:|---:|---:|---:|"]
    lines += [f"| {t['model']} | {t['groups']} | {t['replaced']} | {t['rho']:.3f} | {t['rho_with_floors']:.3f} |"
              for t in res["transfer"]]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "dispatch_floors.md")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "measured" / "dispatch_floors.json")
    args = ap.parse_args(argv)
    ms = model_study(args.model.resolve())
    res = {"onnxruntime": ort.__version__, "model": ms,
           "case": case_study({o["op"]: o["relative"] for o in ms["per_op"]}), "concat": concat_study(),
           "transfer": transfer_study(ms["op_median_2"])}
    args.json.write_text(json.dumps(res, indent=1), encoding="utf-8")
    args.out.write_text(page(res), encoding="utf-8")
    print(page(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
