"""Start-up, analysis speed and memory, as ratios against a floor measured in the same run.

Start-up: CPU time (user + system) of ``onnxperf --version`` and ``onnxperf --help`` against
``python -c pass``, interleaved (the order rotated every repeat), median of N; target: at most 60 ms
of CPU above the floor.

Models: the shipped ``models/*.onnx`` and every model listed in ``tests/fixtures/corpus_*.json``
(``{"models": [{"file", "dims", "input_shapes"}]}``; entries whose file is absent are named and skipped).

Two ratios per model, each median of N repeats, floor and onnxperf runs interleaved (the order swapped
every repeat) so that a machine that slows down or speeds up moves both sides alike:

* whole process, as users wait for it: ``onnxperf summary MODEL --format json`` (with the model's
  dims) against ``python -c "import onnx; m = onnx.load(MODEL, load_external_data=False);
  onnx.shape_inference.infer_shapes(m, data_prop=True)"``, start-up and imports included, bytecode
  cached as in an installed package (a private PYTHONPYCACHEPREFIX, warmed by one run of each);
  wall time and CPU time; targets: the median ratio over the models at most 1.5, every model at
  most 2;
* in process: ``onnxperf.analyze`` against ``onnx.load`` + ``infer_shapes``, imports done before the
  clock starts; each measurement in a fresh process (peak RSS is a high-water mark).

    python benchmarks/bench_analysis.py [--repeats 7] [--only NAME ...] [--no-llm] [--out benchmarks/results/analysis.md]

Also:
* where the time goes: each phase timed warm (in one process, after a first analysis, so the
  one-time start-up of ONNX's C++ schema registry that the floor also pays is left out): load,
  shapes, cost walk, params and tables, against ``infer_shapes`` alone, per node;
* the 7B-class LLM graph from make_llm.py (32 layers, hidden 4096, symbolic batch/sequence, 12.6 GiB
  of fp16 weights referenced, never written): target under 10 s and under 1 GiB peak;
* peak memory vs weight size: the same LLM structure at hidden 512 and 4096 (64× the weight bytes),
  with the weight file present on disk (a sparse file of the full size): peak memory must not grow
  with the weights.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the dims of the shipped models that no corpus file lists
SHIPPED_DIMS = {"bert_encoder_torch.onnx": {"batch": 1, "sequence": 128}}

CHILD = r"""
import json, resource, sys, time
mode, path, dims = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
shapes = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
import onnx, onnx.shape_inference
if mode == "onnxperf":
    import onnxperf
    onnxperf.analyze  # imports done before the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "floor":
    m = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(m)
else:
    a = onnxperf.analyze(path, dims=dims, input_shapes=shapes)
    assert a.coverage.nodes > 0
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "peak_rss_kib": peak, "baseline_rss_kib": base}))
"""

PHASES = r"""
import json, statistics, sys, time
import onnx, onnx.shape_inference
import onnxperf
from onnxperf.cost.analysis import _by_op_type, _params
from onnxperf.cost.walker import CostWalker
from onnxperf.graph.loader import load
from onnxperf.shapes.infer import infer
path, dims, repeats = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
shapes = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
onnxperf.analyze(path, dims=dims, input_shapes=shapes)  # warm: C++ schema registry, lazy caches
out = {}
for _ in range(repeats):
    t0 = time.perf_counter(); m = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(m); t1 = time.perf_counter()
    lm = load(path); t2 = time.perf_counter()
    sr = infer(lm, dims, shapes); t3 = time.perf_counter()
    w = CostWalker(sr.tensors, lm.opsets); w.walk(lm.graph); t4 = time.perf_counter()
    _params(lm.graph); _by_op_type(tuple(w.records)); t5 = time.perf_counter()
    onnxperf.analyze(path, dims=dims, input_shapes=shapes); t6 = time.perf_counter()
    for k, v in {"floor": t1 - t0, "load": t2 - t1, "shapes": t3 - t2, "walk": t4 - t3, "tables": t5 - t4,
                 "analyze": t6 - t5}.items():
        out.setdefault(k, []).append(v)
res = {k: statistics.median(v) for k, v in out.items()}
res["nodes"] = len(lm.graph.nodes)
res["engines"] = sr.engines
passes = []
real = onnx.shape_inference.infer_shapes
onnx.shape_inference.infer_shapes = lambda *a, **k: passes.append(1) or real(*a, **k)
onnxperf.analyze(path, dims=dims, input_shapes=shapes)
onnx.shape_inference.infer_shapes = real
res["onnx_passes"] = len(passes)
print(json.dumps(res))
"""


#: the targets of issue 27, point 6: CPU above ``python -c pass`` for --version and --help; the
#: whole-process summary's ratio to its floor, at the median over the models and on every model
START_TARGET_S = 0.060
WHOLE_MEDIAN_TARGET = 1.5
WHOLE_MAX_TARGET = 2.0

FLOOR_WHOLE = ("import onnx; m = onnx.load({path!r}, load_external_data=False); "
               "onnx.shape_inference.infer_shapes(m, data_prop=True)")


def corpus_models(root: Path = ROOT) -> tuple[list[tuple[Path, dict[str, int], dict[str, list[int]]]], list[str]]:
    """(path, dims, input shapes) of the shipped models and of every model in tests/fixtures/corpus_*.json,
    each file once (a corpus entry's bindings win), and the listed files that are absent. The corpus
    files are read as they are now: they grow while models are added."""
    cases: dict[Path, tuple[dict[str, int], dict[str, list[int]]]] = {}
    for p in sorted((root / "models").glob("*.onnx")):
        cases[p.resolve()] = (SHIPPED_DIMS.get(p.name, {"batch": 1}), {})
    absent: list[str] = []
    for listing in sorted((root / "tests" / "fixtures").glob("corpus_*.json")):
        try:
            entries = json.loads(listing.read_text()).get("models", [])
        except (OSError, ValueError):  # being written right now
            absent.append(f"{listing.name} (unreadable)")
            continue
        for e in entries:
            p = (root / e["file"]).resolve()
            if not p.is_file():
                absent.append(e["file"])
                continue
            shapes = {k: [int(d) for d in (v.lower().replace(",", "x").split("x") if isinstance(v, str) else v)]
                      for k, v in (e.get("input_shapes") or {}).items()}
            cases[p] = (dict(e.get("dims") or {}), shapes)
    return [(p, d, s) for p, (d, s) in cases.items()], absent


def phases(path: Path, dims: dict[str, int], repeats: int, shapes: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", PHASES, str(path), json.dumps(dims), str(repeats),
                          json.dumps(shapes or {})], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _run(mode: str, path: Path, dims: dict[str, int], shapes: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), json.dumps(dims), json.dumps(shapes or {})],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def onnxperf_command() -> list[str]:
    """``onnxperf`` as a user types it: the console script installed beside this interpreter (run by
    this interpreter), else what that script runs."""
    script = Path(sys.executable).with_name("onnxperf")
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from onnxperf.cli import console; sys.exit(console())"]


def whole_commands(path: Path, dims: dict[str, int], shapes: dict | None = None) -> dict[str, list[str]]:
    """The two whole processes: the floor, and ``onnxperf summary --format json`` as a user types it."""
    binds = [a for k, v in dims.items() for a in ("--dim", f"{k}={v}")]
    binds += [a for k, v in (shapes or {}).items() for a in ("--input-shape", f"{k}={'x'.join(map(str, v))}")]
    return {"floor": [sys.executable, "-c", FLOOR_WHOLE.format(path=str(path))],
            "onnxperf": [*onnxperf_command(), "summary", str(path), *binds, "--format", "json"]}


def start_commands() -> dict[str, list[str]]:
    """Start-up: the bare interpreter (the floor), ``onnxperf --version`` and ``onnxperf --help``."""
    return {"floor": [sys.executable, "-c", "pass"], "--version": [*onnxperf_command(), "--version"],
            "--help": [*onnxperf_command(), "--help"]}


def _whole_env(pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)  # bytecode cached as an installed package has it
    return env


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_processes(cmds: dict[str, list[str]], repeats: int, pycache: Path) -> dict:
    """Median wall and CPU time (user + system, the process's threads included) of each command as a
    whole process, the commands interleaved (their order rotated every repeat) after one warm-up
    round: ``{name: seconds}`` (wall) and ``{"cpu": {name: seconds}}``; ``{"error": ...}`` when one
    fails. Each run is the only child alive while it runs, so the growth of the children's CPU
    time is its own."""
    env = _whole_env(pycache)
    names = list(cmds)
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    for i in range(repeats + 1):
        for name in names[i % len(names):] + names[:i % len(names)]:
            c0, t0 = _children_cpu_s(), time.perf_counter()
            proc = subprocess.run(cmds[name], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  cwd=ROOT, env=env)
            dt, dc = time.perf_counter() - t0, _children_cpu_s() - c0
            if proc.returncode != 0:
                return {"error": f"{name} exit {proc.returncode}: {' '.join(proc.stderr.split())[:160]}"}
            if i:  # the first round writes the bytecode
                wall[name].append(dt)
                cpu[name].append(dc)
    return {**{k: statistics.median(v) for k, v in wall.items()},
            "cpu": {k: statistics.median(v) for k, v in cpu.items()}}


def measure_whole(path: Path, dims: dict[str, int], shapes: dict | None, repeats: int,
                  pycache: Path) -> dict:
    """The floor and ``onnxperf summary`` as whole processes (:func:`measure_processes`); a failing
    onnxperf run is reported, not timed."""
    return measure_processes(whole_commands(path, dims, shapes), repeats, pycache)


def _summary(runs: list[dict]) -> dict[str, float]:
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "peak_mib": max(r["peak_rss_kib"] for r in runs) / 1024,
        "work_mib": max(r["peak_rss_kib"] - r["baseline_rss_kib"] for r in runs) / 1024,
    }


def measure(mode: str, path: Path, dims: dict[str, int], repeats: int) -> dict[str, float]:
    return _summary([_run(mode, path, dims) for _ in range(repeats)])


def measure_pair(path: Path, dims: dict[str, int], repeats: int,
                 shapes: dict | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """Floor and onnxperf runs interleaved (the order swapped every repeat), so that a machine
    that slows down or speeds up during the measurement moves both sides of the ratio alike."""
    floor: list[dict] = []
    ours: list[dict] = []
    for i in range(repeats):
        for mode in (("floor", "onnxperf") if i % 2 == 0 else ("onnxperf", "floor")):
            (floor if mode == "floor" else ours).append(_run(mode, path, dims, shapes))
    return _summary(floor), _summary(ours)


def make_llm(out: Path, hidden: int, heads: int, ffn: int, layers: int = 32, sparse_weights: bool = False) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import make_llm

    make_llm.main(["--out", str(out), "--hidden", str(hidden), "--heads", str(heads), "--ffn", str(ffn),
                   "--layers", str(layers)])
    if sparse_weights:
        import onnx

        m = onnx.load(str(out), load_external_data=False)
        end = 0
        for t in m.graph.initializer:
            info = {e.key: e.value for e in t.external_data}
            if info:
                end = max(end, int(info["offset"]) + int(info["length"]))
        with open(str(out) + ".data", "wb") as fh:
            fh.truncate(end)  # sparse: the size is real, no bytes are stored
    return out


def _label(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name


def _measure_case(path: Path, dims: dict[str, int], shapes: dict, repeats: int, pycache: Path) -> dict:
    """Every figure of one model; a model that fails is named with its error, never dropped."""
    row: dict = {"name": _label(path), "whole": measure_whole(path, dims, shapes, repeats, pycache)}
    try:
        row["floor"], row["ours"] = measure_pair(path, dims, repeats, shapes)
        row["phases"] = phases(path, dims, repeats, shapes)
    except subprocess.CalledProcessError as exc:
        row["error"] = f"in process: {' '.join((exc.stderr or '').split())[-160:]}"
    w = row["whole"]
    whole = (f"whole {w['onnxperf']:.3f}s / {w['floor']:.3f}s = x{w['onnxperf'] / w['floor']:.2f}, "
             f"CPU x{w['cpu']['onnxperf'] / w['cpu']['floor']:.2f}" if "error" not in w else f"whole: {w['error']}")
    inproc = (f"in process x{row['ours']['seconds'] / row['floor']['seconds']:.2f}" if "ours" in row
              else row.get("error", ""))
    print(f"{row['name']:50} {whole} | {inproc}", flush=True)
    return row


def _ratio(row: dict, kind: str) -> float | None:
    """onnxperf over the floor: ``whole`` (wall), ``whole_cpu`` or ``inproc``; None when not measured."""
    if kind in ("whole", "whole_cpu"):
        w = row["whole"]
        if "error" in w:
            return None
        return w["onnxperf"] / w["floor"] if kind == "whole" else w["cpu"]["onnxperf"] / w["cpu"]["floor"]
    return row["ours"]["seconds"] / row["floor"]["seconds"] if "ours" in row else None


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def start_up(repeats: int, pycache: Path) -> tuple[list[str], bool]:
    """The start-up section (lines of the page) and whether both commands meet the target."""
    m = measure_processes(start_commands(), repeats, pycache)
    if "error" in m:
        return ["## Start-up", "", f"Failed: {m['error']}."], False
    cpu, floor = m["cpu"], m["cpu"]["floor"]
    lines = ["## Start-up", "",
             f"CPU time (user + system) of the whole process against `python -c pass`, median of {repeats} runs, "
             "the three commands interleaved (their order rotated every repeat), bytecode cached. Target: at most "
             f"{START_TARGET_S * 1e3:.0f} ms of CPU above the floor.", "",
             "| command | CPU s | wall s | CPU above the floor | target |", "|---|---:|---:|---:|---|",
             f"| `python -c pass` | {floor:.3f} | {m['floor']:.3f} | | |"]
    ok = True
    for name in ("--version", "--help"):
        over = cpu[name] - floor
        ok = ok and over <= START_TARGET_S
        lines.append(f"| `onnxperf {name}` | {cpu[name]:.3f} | {m[name]:.3f} | {over * 1e3:.0f} ms | "
                     f"{_verdict(over <= START_TARGET_S)} |")
    print("\n".join(lines), flush=True)
    return lines, ok


def _machine() -> str:
    """The machine and software the figures were measured on."""
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    try:
        import onnx

        onnx_version = onnx.__version__
    except ImportError:
        onnx_version = "absent"
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip() or "unknown"
    return (f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}, onnx {onnx_version}; "
            f"onnxperf at {commit}; {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="only the models whose path contains TEXT (repeatable)")
    ap.add_argument("--no-llm", action="store_true", help="leave out the 7B-class graph and the memory test")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "analysis.md"))
    args = ap.parse_args(argv)
    rows: list[dict] = []
    cases, absent = corpus_models()
    if args.only:
        cases = [c for c in cases if any(t in str(c[0]) for t in args.only)]
    with tempfile.TemporaryDirectory() as tmp:
        pycache = Path(tmp) / "pycache"
        start_lines, start_ok = start_up(args.repeats, pycache)
        if not args.no_llm:
            llm = make_llm(Path(tmp) / "llm7b.onnx", 4096, 32, 11008)
            cases.append((llm, {"batch": 1, "sequence": 2048}, {}))
        for path, dims, shapes in cases:
            rows.append(_measure_case(path, dims, shapes, args.repeats, pycache))
        if not args.no_llm:
            small = make_llm(Path(tmp) / "small" / "llm.onnx", 512, 8, 1376, sparse_weights=True) \
                if (Path(tmp) / "small").mkdir() is None else None
            big = make_llm(Path(tmp) / "big" / "llm.onnx", 4096, 32, 11008, sparse_weights=True) \
                if (Path(tmp) / "big").mkdir() is None else None
            dims = {"batch": 1, "sequence": 512}
            mem_small = measure("onnxperf", small, dims, args.repeats)
            mem_big = measure("onnxperf", big, dims, args.repeats)
            w_small = os.path.getsize(str(small) + ".data")
            w_big = os.path.getsize(str(big) + ".data")
    whole_ratios = [r for r in (_ratio(x, "whole") for x in rows) if r is not None]
    cpu_ratios = [r for r in (_ratio(x, "whole_cpu") for x in rows) if r is not None]
    inproc_ratios = [r for r in (_ratio(x, "inproc") for x in rows) if r is not None]
    lines = ["# Start-up, analysis speed and memory vs the floor", "",
             f"Machine: {_machine()}.",
             f"Each figure is the median of {args.repeats} runs, floor and onnxperf runs interleaved with the order "
             "swapped every repeat.",
             "Re-run: `python benchmarks/bench_analysis.py` (all models: about 20 s a model at 7 repeats on 2 cores, "
             "25 min for the 73 here; `--only NAME` for some, `--no-llm` without the 7B-class graph).", "",
             "Models: the shipped `models/*.onnx` and every model listed in `tests/fixtures/corpus_*.json`, with "
             "the dims listed there.", "", *start_lines, "",
             "## Whole processes, as users wait for them", "",
             "`onnxperf summary MODEL --dim ... --format json` against `python -c \"import onnx; m = onnx.load(MODEL, "
             "load_external_data=False); onnx.shape_inference.infer_shapes(m, data_prop=True)\"`: wall time of the "
             "whole process, interpreter start and imports included, with bytecode cached as an installed package "
             "has it (PYTHONPYCACHEPREFIX, warmed by one run of each); `onnxperf` is the installed console script. "
             "Wall time and CPU time (user + system, every thread of the process). Targets: the median ratio at "
             f"most {WHOLE_MEDIAN_TARGET}×, every model at most {WHOLE_MAX_TARGET:g}×. The in-process ratio (below: `onnxperf.analyze` against load + `infer_shapes`, imports done before the "
             "clock) is beside it.", "",
             "| model | nodes | floor s | onnxperf summary s | whole-process ratio | floor CPU s | onnxperf CPU s "
             "| CPU ratio | in-process ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        nodes = r["phases"]["nodes"] if "phases" in r else ""
        w = r["whole"]
        inproc = _ratio(r, "inproc")
        inproc_text = f"{inproc:.2f}" if inproc is not None else "failed"
        if "error" in w:
            lines.append(f"| {r['name']} | {nodes} | | | failed: {w['error']} | | | | {inproc_text} |")
        else:
            c = w["cpu"]
            lines.append(f"| {r['name']} | {nodes} | {w['floor']:.3f} | {w['onnxperf']:.3f} | "
                         f"{w['onnxperf'] / w['floor']:.2f} | {c['floor']:.3f} | {c['onnxperf']:.3f} | "
                         f"{c['onnxperf'] / c['floor']:.2f} | {inproc_text} |")
    whole_ok = True
    if whole_ratios and cpu_ratios:
        lines.append("")
        for label, kind, ratios in (("wall", "whole", whole_ratios), ("CPU", "whole_cpu", cpu_ratios)):
            worst = max(((_ratio(r, kind), r["name"]) for r in rows if _ratio(r, kind) is not None))
            median = statistics.median(ratios)
            ok = median <= WHOLE_MEDIAN_TARGET and worst[0] <= WHOLE_MAX_TARGET
            whole_ok = whole_ok and ok
            over = [f"{r['name']} ({_ratio(r, kind):.2f}×)" for r in rows if (_ratio(r, kind) or 0) > WHOLE_MAX_TARGET]
            lines.append(f"Whole process, {label} time, over {len(ratios)} models: median {median:.2f}× (target "
                         f"≤ {WHOLE_MEDIAN_TARGET}×: {_verdict(median <= WHOLE_MEDIAN_TARGET)}), worst {worst[0]:.2f}× "
                         f"({worst[1]}; target ≤ {WHOLE_MAX_TARGET:g}× on every model: "
                         f"{_verdict(worst[0] <= WHOLE_MAX_TARGET)}); over {WHOLE_MAX_TARGET:g}×: "
                         f"{', '.join(over) or 'none'}.")
        lines.append(f"In process: median {statistics.median(inproc_ratios):.2f}× (no target: see below)."
                     if inproc_ratios else "In process: not measured.")
    else:
        whole_ok = False
        lines += ["", "No model measured."]
    failed = [f"{r['name']}: {r['error']}" for r in rows if "error" in r]
    failed += [f"{r['name']}: {r['whole']['error']}" for r in rows if "error" in r["whole"]]
    if failed:
        lines.append("Failed: " + "; ".join(failed) + ".")
    if absent:
        lines.append("Listed but absent (not measured): " + ", ".join(absent) + ".")
    done = [r for r in rows if "ours" in r]
    lines += ["", "## In process", "",
              "Floor = `onnx.load(load_external_data=False)` + `onnx.shape_inference.infer_shapes`, against "
              "`onnxperf.analyze`. Fresh process per run, imports done before the clock starts, max peak RSS.", "",
              "| model | floor s | onnxperf s | time ratio | floor peak MiB | onnxperf peak MiB | peak ratio | onnxperf work MiB |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in done:
        f, o = r["floor"], r["ours"]
        lines.append(f"| {r['name']} | {f['seconds']:.3f} | {o['seconds']:.3f} | {o['seconds'] / f['seconds']:.2f} | "
                     f"{f['peak_mib']:.0f} | {o['peak_mib']:.0f} | {o['peak_mib'] / f['peak_mib']:.2f} | {o['work_mib']:.0f} |")
    lines += ["", "Where the time goes, warm (one process, after a first analysis: the floor's first call also pays "
              "~10 ms of one-time start-up of ONNX's C++ schema registry, which both sides share and this leaves "
              "out). ms; µs/node = onnxperf's own Python work (analyze − infer_shapes) per node:", "",
              "| model | nodes | shape engines | ONNX passes | floor warm ms | load | shapes | walk | tables | analyze "
              "| µs/node |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in done:
        p = r["phases"]
        ms = {k: p[k] * 1e3 for k in ("floor", "load", "shapes", "walk", "tables", "analyze")}
        per_node = (p["analyze"] - p["floor"]) / p["nodes"] * 1e6
        lines.append(f"| {r['name']} | {p['nodes']} | {'+'.join(p['engines'])} | {p['onnx_passes']} | {ms['floor']:.1f} | "
                     f"{ms['load']:.1f} | "
                     f"{ms['shapes']:.1f} | {ms['walk']:.1f} | {ms['tables']:.1f} | {ms['analyze']:.1f} | {per_node:.0f} |")
    over = [(r["name"], _ratio(r, "inproc"), r["phases"]) for r in done if _ratio(r, "inproc") > 2]
    within = [r["name"] for r in done if _ratio(r, "inproc") <= 2]
    lines += ["", f"In process, within 2× of the floor: {', '.join(within) or 'none'}."]
    for name, ratio, p in over:
        lines.append(
            f"Over 2×: {name} ({ratio:.2f}×): {p['nodes']} nodes at {(p['analyze'] - p['floor']) / p['nodes'] * 1e6:.0f} µs "
            f"of Python each (load {p['load'] * 1e3:.0f} ms, shapes {p['shapes'] * 1e3:.0f} ms with "
            f"{'+'.join(p['engines'])}, walk {p['walk'] * 1e3:.0f} ms) against {p['floor'] * 1e3:.1f} ms of C++ "
            "inference: the floor does per node in C++ what onnxperf does in Python"
            + (f"; and {p['onnx_passes']} ONNX inference passes where the floor makes one (shape arithmetic "
               "that ONNX's data propagation does not carry, computed and inferred again)."
               if p["onnx_passes"] > 1 else "."))
    if not args.no_llm:
        llm_row = next((r for r in done if r["name"] == llm.name), None)
        if llm_row is not None:
            o = llm_row["ours"]
            lines += ["", f"The 7B-class LLM graph ({llm.name}, 32 layers, hidden 4096, 12.6 GiB of weights referenced): "
                      f"{o['seconds']:.3f} s and {o['peak_mib']:.0f} MiB peak (targets: under 10 s, under 1 GiB: "
                      f"{'met' if o['seconds'] < 10 and o['peak_mib'] < 1024 else 'MISSED'})."]
        lines += ["", "Peak memory vs weight size (LLM structure, 32 layers, weight file present as a sparse file):", "",
                  "| hidden | weight file | onnxperf s | peak MiB |", "|---:|---:|---:|---:|",
                  f"| 512 | {w_small / 2**30:.2f} GiB | {mem_small['seconds']:.3f} | {mem_small['peak_mib']:.0f} |",
                  f"| 4096 | {w_big / 2**30:.2f} GiB | {mem_big['seconds']:.3f} | {mem_big['peak_mib']:.0f} |",
                  "", f"Weight bytes ×{w_big / w_small:.0f}; peak memory ×{mem_big['peak_mib'] / mem_small['peak_mib']:.2f}."]
    verdict = (f"Targets (issue 27, point 6): start-up {_verdict(start_ok)}; whole-process summary "
               f"{_verdict(whole_ok)}.")
    at = lines.index("## Start-up")
    lines[at:at] = [verdict, ""]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    print(verdict)
    return 0 if start_ok and whole_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
