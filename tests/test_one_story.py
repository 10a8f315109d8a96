"""Every output tells the same story (issue 27, point 3): one execution plan per (analysis, spec,
precision), and every output reads it. The facts are held against each other across the summary
(JSON and text), the report model (what the HTML page and its charts draw) and the trace, on a GPU
preset (fill), a GPU preset with a transformer (dispatch and fill), a calibrated CPU spec with cache
levels and onnxruntime's fusions, a decoder LLM, and a precision what-if:

- one node, one verdict: a node's limiter is the same in every output, and so is an op type's;
- the time each limiter holds adds up the same way everywhere (the roofline, the bottleneck groups,
  the trace, the text);
- every chart point is on or under its roof: attained = ops / predicted time ≤ min(π_d, I·β), with π_d
  the named peak of its dtype and β the fastest bandwidth the page draws;
- share of peak = ops / time / peak, for every node that has one;
- one ridge per page: every ridge the report states for a dtype is that dtype's peak over the bandwidth;
- advice never offers the precision the run already has, and the cost chart ranks by predicted time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from onnxperf import cli
from onnxperf.predict.plan import DISPATCH, FILL, LIMITERS, NONE, dominant, limiter

ROOT = Path(__file__).resolve().parent.parent
CALIBRATED = str(ROOT / "benchmarks" / "results" / "calibrated-spec.toml")
SCENARIOS = {
    "resnet50-rtx3090": ("models/resnet50_torch.onnx", ["--dim", "batch=1", "--hw", "rtx3090"]),
    "bert-t4": ("models/bert_encoder_torch.onnx", ["--dim", "batch=1", "--dim", "sequence=128", "--hw", "t4"]),
    "resnet50-calibrated-cpu": ("models/resnet50_torch.onnx", ["--dim", "batch=1", "--hw", CALIBRATED]),
    "qwen2-decode-h100": ("models/corpus/qwen2_decode_dynamo18.onnx",
                          ["--dim", "batch=1", "--llm", "--context", "1024", "--prompt", "64", "--hw", "h100-sxm"]),
    "keras-gru-loop-calibrated-cpu": ("models/corpus/keras_gru_loop_tf2onnx.onnx", ["--hw", CALIBRATED]),
    "resnet50-rtx3090-fp16": ("models/resnet50_torch.onnx", ["--dim", "batch=1", "--hw", "rtx3090", "--precision",
                                                             "fp16"]),
}


class Outputs:
    def __init__(self, summary: dict, text: str, report: dict, trace: dict):
        self.summary, self.text, self.report, self.trace = summary, text, report, trace
        self.plan = summary["roofline"]
        self.rows = {n["key"]: n for n in self.plan["nodes"]}
        cols = report["nodes"]["columns"]
        self.report_rows = {r[0]: dict(zip(cols, r)) for r in report["nodes"]["rows"]}
        self.events = {e["args"]["key"]: e for e in trace["traceEvents"]
                       if e.get("ph") == "X" and e.get("pid") == 1 and "key" in e.get("args", {})}


_MADE: dict[str, Outputs] = {}


def _outputs(name: str, tmp_path_factory) -> Outputs:
    """Every output of scenario ``name``, made once per test session."""
    if name not in _MADE:
        _MADE[name] = _make(name, tmp_path_factory)
    return _MADE[name]


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def out(request, tmp_path_factory) -> Outputs:
    return _outputs(request.param, tmp_path_factory)


def _make(name: str, tmp_path_factory) -> Outputs:
    model, opts = SCENARIOS[name]
    d = tmp_path_factory.mktemp(name)
    path = str(ROOT / model)
    args = [path, *opts, "--no-progress"]
    assert cli.main(["summary", *args, "--format", "json", "-o", str(d / "s.json"), "--trace", str(d / "t.json")]) == 0
    assert cli.main(["summary", *args, "--color", "never", "-o", str(d / "s.txt")]) == 0
    assert cli.main(["report", *args, "--format", "json", "-o", str(d / "r.json")]) == 0
    return Outputs(json.loads((d / "s.json").read_text()), (d / "s.txt").read_text(),
                   json.loads((d / "r.json").read_text()), json.loads((d / "t.json").read_text()))


# --------------------------------------------------------------------------------- one node, one verdict

def test_one_node_one_verdict(out):
    """A node's limiter: the plan's (summary JSON), the report's row, the trace's slice, the report's
    slowest-node rows and the text's top nodes say the same."""
    timed = [k for k, r in out.rows.items() if r["time_s"] is not None]
    assert timed
    control = {n["key"] for n in out.summary["nodes"] if n["op_type"] in ("If", "Loop", "Scan")}
    for k in timed:
        r = out.rows[k]
        assert out.report_rows[k]["bound"] == r["bound"], k
        assert out.events[k]["args"]["bound"] == r["bound"], k
        if k not in control:  # a control node's is the limiter holding most of its bodies' time
            assert r["bound"] == limiter(r["time_s"], r["compute_s"], r["memory_s"], r["dispatch_s"], r["fill"])
    for x in out.report["bottlenecks"]["predicted"]:
        assert x["bound"] == out.rows[x["key"]]["bound"]
    top = re.findall(r"^  #(\S+)\s+\S+.*?\s(compute|fill|memory|dispatch|none)\s+I=", out.text, re.M)
    assert top and all(out.rows[k]["bound"] == b for k, b in top)


def test_one_op_type_one_verdict(out):
    """An op type's bound is the limiter holding most of its time, in the roofline's rows, the bottleneck
    groups, and both tables of the text."""
    plan = {o["op_type"]: o for o in out.plan["by_op_type"]}
    for o in plan.values():
        assert o["bound"] == dominant({b: o[f"{b}_bound_time_s"] for b in LIMITERS})
    groups = out.summary["bottlenecks"]["by_op_type"]
    domains: dict[str, set] = {}
    for g in groups:
        domains.setdefault(g["op_type"], set()).add(g["domain"])
    for g in groups:
        if g["op_type"] in plan and len(domains[g["op_type"]]) == 1 and g["bound"] != "unknown":
            assert g["bound"] == plan[g["op_type"]]["bound"], g["op_type"]
    table = re.findall(r"^  (\S+)\s+\d+\s+\S+ \S+\s+\S+%\s+(compute|fill|memory|dispatch|none)\s", out.text, re.M)
    assert table and all(plan[op]["bound"] == b for op, b in table if op in plan)


def test_limiter_time_adds_up_the_same_everywhere(out):
    """The time each limiter holds: the plan's totals, the nodes', the bottleneck groups', the trace's."""
    node_sum = {b: sum(r["time_s"] for r in out.rows.values() if r["bound"] == b and r["time_s"]) for b in LIMITERS}
    groups = {b: sum(g[f"{b}_s"] for g in out.summary["bottlenecks"]["by_op_type"]) for b in LIMITERS}
    trace = {b: sum(e["args"]["predicted_s"] or 0 for e in out.events.values() if e["args"]["bound"] == b)
             for b in LIMITERS}
    for b in LIMITERS:
        assert out.plan[f"{b}_bound_time_s"] == pytest.approx(node_sum[b], abs=1e-15)
        assert groups[b] == pytest.approx(node_sum[b], abs=1e-15)
        assert trace[b] == pytest.approx(node_sum[b], rel=1e-6, abs=1e-12)
    node_time = out.plan["latency_s"] - out.plan["run_overhead_s"]
    assert sum(node_sum.values()) == pytest.approx(node_time)
    line = re.search(r"^  Limited by (.*) of node time", out.text, re.M).group(1)
    words = {"compute": "compute", "GPU fill": FILL, "memory": "memory", "dispatch": DISPATCH}
    shown = {words[w]: float(v) for w, v in re.findall(r"(GPU fill|compute|memory|dispatch) ([\d.]+)%", line)}
    assert shown == {b: pytest.approx(round(100 * t / node_time, 1), abs=0.051) for b, t in node_sum.items() if t}


# ------------------------------------------------------------------------------------- rates and roofs

def _roof_of(report: dict, dtype: str) -> dict:
    return next(r for r in report["hardware"]["roofs"] if dtype in r["dtype"].split("/"))


def test_every_chart_point_is_on_or_under_its_roof(out):
    """The chart draws x = run_intensity, y = attained_ops_per_s (report.js reads them as they are):
    each under min(π_d, x·β), β the fastest bandwidth the page draws (main memory or a cache level)."""
    hw = out.report["hardware"]
    bws = [hw["memory_bandwidth_bytes_per_s"]] + [lv["bandwidth_bytes_per_s"] for lv in hw["level_roofs"]]
    drawn = 0
    for k, row in out.report_rows.items():
        x, y = row["run_intensity"], row["attained_ops_per_s"]
        if "/" in k or not row["predicted_s"] or not x or not y:
            continue
        roof = _roof_of(out.report, out.rows[k]["dtype"])
        assert y <= min(roof["peak_ops_per_s"], x * max(bws)) * (1 + 2e-5), (k, row)
        drawn += 1
    assert drawn > 0


def test_share_of_peak_is_ops_over_time_over_the_named_peak(out):
    """For every node with arithmetic and a time: attained = ops / time, share = attained / π_d, π_d the
    peak the page draws for its dtype; the slowest-node rows quote the same."""
    for k, r in out.rows.items():
        if not r["time_s"] or not r["ops"]:
            continue
        assert r["attained_ops_per_s"] == pytest.approx(r["ops"] / r["time_s"])
        assert r["peak_ops_per_s"] == pytest.approx(_roof_of(out.report, r["dtype"])["peak_ops_per_s"])
        assert r["peak_share"] == pytest.approx(r["ops"] / r["time_s"] / r["peak_ops_per_s"])
        assert 0 < r["peak_share"] <= 1 + 1e-9
    for x in out.report["bottlenecks"]["predicted"]:
        r = out.rows[x["key"]]
        assert x["attained_share_of_peak"] == r["peak_share"]
        if r["peak_share"] is not None:
            m = re.search(r"([\d.]+)% of the (\S+) peak", x["why"])
            if m:
                assert float(m.group(1)) == pytest.approx(100 * r["peak_share"], abs=0.051) and m.group(2) == r["dtype"]


def test_one_ridge_per_page(out):
    """Every ridge the report states for a dtype is that dtype's drawn roof: its peak over main-memory
    bandwidth; the intensity card quotes the first; a 'below the ridge' names that ridge, truly."""
    hw = out.report["hardware"]
    for r in hw["roofs"]:
        assert r["ridge_ops_per_byte"] == pytest.approx(r["peak_ops_per_s"] / hw["memory_bandwidth_bytes_per_s"])
    assert out.report["roofline"]["ridge_fp32_flops_per_byte"] == pytest.approx(
        _roof_of(out.report, "float32")["ridge_ops_per_byte"])
    for x in out.report["bottlenecks"]["predicted"]:
        ridge = _roof_of(out.report, x["dtype"])["ridge_ops_per_byte"]
        assert x["ridge_ops_per_byte"] == pytest.approx(ridge)
        assert "above the ridge" not in x["why"]
        m = re.search(r"intensity (\S+) op/B, \S+× below the ridge \((\S+)\)", x["why"])
        if m:
            assert float(m.group(2)) == pytest.approx(ridge, rel=5e-3) and float(m.group(1)) < ridge


# ------------------------------------------------------------------------------------------------ advice

def _advice(out: Outputs) -> list[str]:
    b = out.summary["bottlenecks"]
    texts = [g["action"] for g in b["by_op_type"]] + [k["action"] for k in b["block_kinds"]]
    texts += [o["action"] for o in b["opportunities"]] + list(b["verdict"])
    texts += [x["why"] for x in out.report["bottlenecks"]["predicted"]] + list(out.report["verdict"])
    return texts


def test_advice_never_offers_the_precision_it_has(tmp_path_factory):
    """With --precision fp16, no action, why or verdict offers --precision fp16."""
    out = _outputs("resnet50-rtx3090-fp16", tmp_path_factory)
    prec = out.summary["precision"]
    assert prec["name"] == "fp16" and _advice(out)
    for text in _advice(out):
        assert not re.search(r"--precision\s+(?:\w+/)*" + prec["name"] + r"\b", text), text


def test_the_verdict_names_the_top_limiter_with_its_number(out):
    """Two or three lines under the report's cards (the same in the summary's JSON and text): the op type
    with the most predicted time, the limiter holding most of it, and what to change."""
    v = out.report["verdict"]
    assert v == out.summary["bottlenecks"]["verdict"] and 2 <= len(v) <= 3
    top = next(g for g in out.summary["bottlenecks"]["by_op_type"] if g["time_s"] > 0)
    assert v[0].startswith(f"{top['op_type']} takes ") and v[1].startswith("Change: ")
    words = {"fill": "how much of the GPU its kernels fill", "compute": "compute-bound", "memory": "memory-bound",
             "dispatch": "dispatch overhead"}
    assert words[top["bound"]] in v[0]
    if top["bound"] == FILL:
        assert re.search(r"keep [\d.]+(-[\d.]+)? of \d+ SMs busy", v[0]) and re.search(r"batch ≥ \d+", v[1])
    assert "Verdict: " + v[0][:40] in out.text.replace("\n" + " " * 11, " ")


def test_cost_chart_ranks_by_predicted_time(out):
    bars = out.report["cost_chart"]["bars"]
    assert out.report["cost_chart"]["ranked_by"] == "predicted time"
    named = [b for b in bars if b["kind"] == "op_type"]
    shares = [b["predicted_share"] for b in named]
    assert shares == sorted(shares, reverse=True) and all(s > 0 for s in shares)
    folded = {o["op_type"] for o in out.report["by_op_type"]} - {b["label"].split("::")[-1] for b in named}
    for o in out.report["by_op_type"]:
        if o["op_type"] in folded:
            assert (o["predicted_share"] or 0) <= shares[-1]
    idle = [b for b in bars if b["kind"] == "no_time"]
    zero = [o for o in out.report["by_op_type"] if not o["predicted_s"]]
    assert (idle[0]["op_types"] if idle else 0) == len(zero)
    assert sum(b["predicted_share"] for b in bars) == pytest.approx(1.0)


def test_llm_section_reads_the_plan(tmp_path_factory):
    """The decode step's limiter and share are the plan's at the same bindings; a plain roofline's time is
    called an estimate, not a bound, exactly when the plan is one."""
    out = _outputs("qwen2-decode-h100", tmp_path_factory)
    dec = out.summary["llm"]["figures"]["decode"]
    by = {b: out.plan[f"{b}_bound_time_s"] for b in LIMITERS}
    assert dec["latency_s"] == pytest.approx(out.plan["latency_s"])
    assert dec["bound"] == dominant(by) and dec["bound_share"] == pytest.approx(by[dec["bound"]] / dec["latency_s"])
    assert dec["latency_is_lower_bound"] == out.plan["latency_is_lower_bound"]
    assert ("an estimate, not a bound" in out.text) == out.plan["plain_roofline"]


# ------------------------------------------------------------------------------------------- the rules

def test_limiter_rule():
    """t = max(c, m) + α·min(c, m) + o: dispatch when o ≥ t − o; fill when c ≥ m and fill < 1/2; compute
    when c ≥ m; memory otherwise; none without time or work; unknown time stays None."""
    assert limiter(None, 1, 1, 0) is None
    assert limiter(0.0, 0, 0, 0) == NONE
    assert limiter(3e-6, 1e-6, 0.5e-6, 2e-6) == DISPATCH      # o = 2 ≥ t − o = 1
    assert limiter(5e-6, 4e-6, 1e-6, 1e-6) == "compute"       # o = 1 < 4; c ≥ m; fill 1
    assert limiter(5e-6, 4e-6, 1e-6, 1e-6, 0.3) == FILL       # c ≥ m and fill < 1/2
    assert limiter(5e-6, 4e-6, 1e-6, 1e-6, 0.6) == "compute"
    assert limiter(5e-6, 1e-6, 4e-6, 0.0) == "memory"
    assert dominant({"compute": 1.0, "memory": 1.0}) == "compute"  # ties: the first in LIMITERS
    assert dominant({"memory": 2.0, DISPATCH: 1.0}) == "memory" and dominant({}) == NONE
