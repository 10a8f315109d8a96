"""The report model and its renderers, without a browser: contents, escaping, determinism, CLI."""

from __future__ import annotations

import html as htmllib
import io
import json
import re
from importlib import resources

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.ui.progress import Progress
from onnxperf.products.render.report import md_text, render_html, render_json, render_md, render_netron
from onnxperf.products.report import NODE_COLUMNS, SCHEMA, build_report

from .report_util import (FLAG_IMG, FLAG_SCRIPT, FLAG_SVG, IMG_NAME, RESNET, SCRIPT_NAME, FakeSpec,
                          FakeValidation, injection_model, report_model, spec, summary_of)
from .util import const, model, vi


@pytest.fixture(scope="module")
def resnet():
    return report_model(RESNET, dims={"batch": 1}, hw=spec(), options={"dims": {"batch": 1}, "hw": "rtx3090"})


@pytest.fixture(scope="module")
def injected():
    return report_model(injection_model(), dims={"batch": 2}, hw=FakeSpec())


@pytest.fixture()
def main():
    """cli.main (the report command is one of cli.COMMANDS)."""
    assert "report" in cli.COMMANDS
    return cli.main


def _col(m, name):
    return m["nodes"]["columns"].index(name)


# ------------------------------------------------------------------------------------------ model

def test_model_is_plain_json_with_the_summary_figures(resnet):
    sm = summary_of(RESNET, {"batch": 1}, spec())
    a, t = sm, sm.totals
    assert resnet["schema"] == SCHEMA == "onnxperf.report/1"
    assert json.loads(json.dumps(resnet, allow_nan=False)) == resnet  # plain types only
    tot = resnet["totals"]
    assert (tot["macs"], tot["flops"], tot["params"], tot["bytes_read"], tot["bytes_written"]) == \
        (t.macs, t.flops, t.params, t.bytes_read, t.bytes_written)
    assert tot["activation_peak_bytes"] == sm.memory.peak_bytes
    assert tot["total_memory_bytes"] == sm.memory.weight_bytes + sm.memory.peak_bytes
    assert tot["predicted_latency_s"] == pytest.approx(sm.roofline.latency_s)
    assert tot["measured_latency_s"] is None and resnet["measured"] is None
    assert resnet["model"]["name"] == "resnet50_torch.onnx"
    assert resnet["convention"] == "default"
    assert resnet["options"] == {"dims": {"batch": 1}, "hw": "rtx3090"}


def test_node_rows_are_compact_and_complete(resnet):
    rows, cols = resnet["nodes"]["rows"], resnet["nodes"]["columns"]
    sm = summary_of(RESNET, {"batch": 1}, spec())
    assert cols == list(NODE_COLUMNS)
    assert len(rows) == len(sm.nodes) == 122
    assert all(len(r) == len(cols) for r in rows)
    assert sum(r[_col(resnet, "flops")] for r in rows) == resnet["totals"]["flops"]
    assert sum(r[_col(resnet, "macs")] for r in rows) == resnet["totals"]["macs"]
    tensors = resnet["tensors"]["rows"]
    first = rows[0]
    ins = [tensors[i] for i in first[_col(resnet, "inputs")]]
    assert ins[0] == ["input", "float32", "[1,3,224,224]"] and ins[1][2] == "[64,3,7,7]"
    assert [tensors[i][2] for i in first[_col(resnet, "outputs")]] == ["[1,64,112,112]"]
    # per-node roofline columns: predicted times add up to the latency (rounded per node)
    pred = [r[_col(resnet, "predicted_s")] for r in rows if r[_col(resnet, "predicted_s")] is not None]
    assert sum(pred) == pytest.approx(resnet["totals"]["predicted_latency_s"], rel=1e-4)
    assert {r[_col(resnet, "bound")] for r in rows} <= {"compute", "fill", "memory", "dispatch", "none"}
    assert all(r[_col(resnet, "measured_s")] is None for r in rows)


def test_by_op_type_shares_and_bottlenecks(resnet):
    ops = resnet["by_op_type"]
    assert sum(o["count"] for o in ops) == 122
    assert sum(o["flops_share"] for o in ops) == pytest.approx(1.0)
    assert sum(o["bytes_share"] for o in ops) == pytest.approx(1.0)
    assert sum(o["predicted_share"] or 0 for o in ops) == pytest.approx(1.0)
    assert ops[0]["op_type"] == "Conv"
    b = resnet["bottlenecks"]["predicted"]
    assert len(b) == 10 and [x["predicted_s"] for x in b] == sorted((x["predicted_s"] for x in b), reverse=True)
    start = {"compute": "compute-bound", "memory": "memory-bound", "dispatch": "dispatch-bound", "fill": "fills "}
    for x in b:
        assert x["bound"] in start and x["why"].startswith(start[x["bound"]])
        # the share of the named peak: operations over the predicted time over the peak the page draws
        assert x["attained_share_of_peak"] == pytest.approx(x["attained_ops_per_s"] / x["peak_ops_per_s"])
        assert 0 < x["attained_share_of_peak"] <= 1
    assert resnet["bottlenecks"]["flops"][0]["op_type"] == "Conv"
    assert resnet["bottlenecks"]["measured"] == []


def test_memory_timeline_and_roofs(resnet):
    mem = resnet["memory"]
    assert len(mem["timeline_bytes"]) == 122
    assert max(mem["timeline_bytes"]) == mem["activation_peak_bytes"] == mem["timeline_bytes"][mem["peak_step"]]
    hw = resnet["hardware"]
    assert hw["roofs"][0]["dtype"].startswith("float32")
    assert hw["roofs"][0]["ridge_ops_per_byte"] == pytest.approx(
        hw["roofs"][0]["peak_ops_per_s"] / hw["memory_bandwidth_bytes_per_s"])


def test_without_hardware_the_roofline_parts_are_empty():
    m = report_model(RESNET, dims={"batch": 1})
    assert m["hardware"] is None and m["roofline"] is None
    assert m["totals"]["predicted_latency_s"] is None and m["bottlenecks"]["predicted"] == []
    assert all(r[_col(m, "predicted_s")] is None and r[_col(m, "bound")] is None for r in m["nodes"]["rows"])
    html = render_html(m)
    assert 'id="roofline-chart"' not in html and "give <code>--hw</code>" in html


def test_unbound_dims_are_warned_with_the_flags_to_pass():
    m = report_model(RESNET)
    w = {x["code"]: x for x in m["warnings"]}
    assert w["unbound_dims"]["dims"] == ["batch"] and "--dim batch=N" in w["unbound_dims"]["message"]
    assert "unknown_shape" in {r[_col(m, "status")] for r in m["nodes"]["rows"]}


def test_measured_section_is_filled_from_a_validation_result():
    sm = summary_of(RESNET, {"batch": 1}, spec())
    keys = [n.key for n in sm.main_nodes]
    pred = {n.key: n.time_s for n in sm.roofline.nodes}
    times = {k: 1.5 * pred[k] for k in keys if pred[k]}
    m = build_report(sm, FakeValidation(times, latency_s=1.5 * sm.roofline.latency_s), {})
    meas = m["measured"]
    assert meas["provider"] == "CPUExecutionProvider" and meas["runs"] == 10
    assert meas["latency_s"] == pytest.approx(1.5 * sm.roofline.latency_s)
    e = meas["errors"]  # computed from the points: every node measured 1.5x its prediction
    assert set(e) >= {"end_to_end_error", "median_ape", "within_10", "within_25", "spearman"}
    assert e["end_to_end_error"] == pytest.approx(-1 / 3, rel=1e-3)
    assert e["median_ape"] == pytest.approx(1 / 3, rel=1e-3) and e["within_25"] == 0
    assert e["spearman"] == pytest.approx(1.0)
    assert len(meas["points"]) == len(times)
    col = _col(m, "measured_s")
    assert sum(1 for r in m["nodes"]["rows"] if r[col] is not None) == len(times)
    assert sum(o["measured_share"] or 0 for o in m["by_op_type"]) == pytest.approx(1.0)
    assert m["bottlenecks"]["measured"][0]["measured_s"] == max(times.values())
    html = render_html(m)
    assert 'id="validation-chart"' in html and 'data-error="spearman"' in html
    assert "Measured latency" in render_md(m) and "Prediction error" in render_md(m)


def test_validation_errors_given_are_kept_and_groups_make_points():
    sm = summary_of(RESNET, {"batch": 1}, spec())
    errors = {"end_to_end_error": 0.1, "median_ape": 0.2, "within_10": 0.3, "within_25": 0.4, "spearman": 0.9}
    v = {"latency_s": 1e-3, "groups": [(["0", "1"], 2e-5), (["2"], 1e-5)], "errors": errors,
         "node_times_s": {"0": 1e-5, "1": 1e-5, "2": 1e-5}}
    m = build_report(sm, v, {})
    assert {k: m["measured"]["errors"][k] for k in errors} == errors
    assert [p[0] for p in m["measured"]["points"]] == [["0", "1"], ["2"]]


# ------------------------------------------------------------------------------------- renderers

def test_json_renderer_round_trips_with_one_row_per_line(resnet):
    text = render_json(resnet)
    assert json.loads(text) == resnet
    lines = text.splitlines()
    assert sum(1 for ln in lines if ln.lstrip().startswith('["') and ',"Conv",' in ln) == 53  # a node row per line
    # rows one per line; the rest (summary, charts, the spec with its sources ...) a bounded number of lines
    assert len(lines) < len(resnet["nodes"]["rows"]) + len(resnet["tensors"]["rows"]) + 650


def test_same_input_gives_byte_identical_outputs():
    a = report_model(RESNET, dims={"batch": 1}, hw=spec())
    b = report_model(RESNET, dims={"batch": 1}, hw=spec())
    for render in (render_html, render_json, render_md, render_netron):
        assert render(a) == render(b)


def test_html_is_self_contained_and_escaped(injected):
    html = render_html(injected)
    assert html.count("<script") == 4  # data, view, Chart.js, viewer: nothing else
    for bad in (SCRIPT_NAME, IMG_NAME, FLAG_SCRIPT, FLAG_IMG, FLAG_SVG, "<b onmouseover", "<i>domain"):
        assert bad not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown as text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # no remote asset
    csp = htmllib.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1))
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp and "unsafe-inline" not in csp.split(
        "script-src")[1].split(";")[0]
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1)
    assert json.loads(data) == injected


def _text(fragment: str) -> str:
    """The text a reader sees in an HTML fragment: tags dropped, entities decoded, spaces collapsed."""
    inline = re.sub(r"</?(?:a|b|i|code|span|small|wbr)\b[^>]*>", "", fragment)
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def _facts(html: str) -> dict[str, str]:
    """The header's facts (every ``<dt>``/``<dd>`` pair of the #model section), as text."""
    sec = re.search(r'<section id="model">(.*?)</section>', html, re.S).group(1)
    return {_text(k): v for k, v in re.findall(r"<dt>(.*?)</dt><dd[^>]*>(.*?)</dd>", sec, re.S)}


def _rows(html: str, table_id: str) -> list[list[str]]:
    """The body rows of a static table, each a list of its cells' text."""
    table = re.search(rf'<table class="data" id="{table_id}">(.*?)</table>', html, re.S).group(1)
    body = table.split("<tbody>", 1)[1]
    return [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_header_shows_the_model_facts_of_the_json(resnet):
    import onnxperf
    from onnxperf.ui.numbers import binary_bytes

    html, mod, hw = render_html(resnet), resnet["model"], resnet["hardware"]
    facts = _facts(html)
    assert re.search(r'<h1 id="model-name">(.*?)</h1>', html).group(1) == htmllib.escape(mod["name"])
    size = mod["file_size_bytes"]
    assert size and _text(facts["File size"]) == f"{binary_bytes(size)} ({size:,} B)"
    assert _text(facts["Producer"]) == f"{mod['producer_name']} {mod['producer_version']}"
    assert _text(facts["IR version"]) == str(mod["ir_version"])
    assert _text(facts["Opsets"]) == ", ".join(f"{d} {v}" for d, v in mod["opsets"].items())
    for key, tensors in (("Inputs", mod["inputs"]), ("Outputs", mod["outputs"])):
        shown = [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
                 for tr in re.findall(r"<tr>(.*?)</tr>", facts[key])]
        expected = [[x["name"], x["dtype"], "[" + ",".join(str(d) for d in x["shape"]) + "]"] for x in tensors]
        assert shown == expected, key
    assert shown == [["logits", "float32", "[1,1000]"]]  # the bound shape, not [batch,1000]
    bound, dims = _text(facts["Bound dims"]), resnet["bindings"]["dims"]
    assert dims == {"batch": 1} and all(f"{k}={v}" in bound for k, v in dims.items())
    assert _text(facts["Hardware"]) == f"{hw['name']} ({hw['id']})"
    assert _text(facts["onnxperf"]) == f"{resnet['generator']['version']} · report schema {SCHEMA}"
    assert resnet["generator"]["version"] == onnxperf.__version__
    assert _text(facts["Options"]) == "dims={\"batch\": 1} hw=rtx3090"
    assert f'<meta name="generator" content="onnxperf {onnxperf.__version__}">' in html


def test_op_type_table_has_a_row_per_op_type_in_the_json_order(resnet):
    from onnxperf.ui.numbers import pct

    rows = _rows(render_html(resnet), "op-table")
    ops = resnet["by_op_type"]
    assert [r[0] for r in rows] == [(o["domain"] + "::" if o["domain"] else "") + o["op_type"] for o in ops]
    assert [r[1] for r in rows] == [f"{o['count']:,}" for o in ops]
    assert [r[4] for r in rows] == [pct(o["flops_share"]) for o in ops]
    assert [r[9] for r in rows] == [pct(o["predicted_share"]) for o in ops]  # % time, with --hw


def test_bottleneck_table_rows_and_why(resnet):
    from onnxperf.ui.numbers import pct, seconds

    rows = _rows(render_html(resnet), "bottleneck-table")
    b = resnet["bottlenecks"]["predicted"]
    assert len(rows) == len(b) == 10
    for r, x in zip(rows, b):
        assert r[:5] == [x["key"], x["name"], x["op_type"], seconds(x["predicted_s"]), pct(x["share"])]
        assert r[5] == x["bound"] and r[7] == pct(x["attained_share_of_peak"])
        assert r[-1] == x["why"]
    # batch 1 on an RTX 3090: layer4's 3x3 convs (7x7x512 outputs) keep 25088 / 4096 = 6.1 of 82 SMs busy;
    # 82 x 4096 / 25088 = 13.4, so batch 14 fills them
    assert b[0]["why"].startswith("fills 6.1 of 82 SMs: ") and b[0]["why"].endswith("batch ≥ 14 fills them")


def test_unsupported_op_and_unbound_dim_both_warn_escaped():
    from markupsafe import escape

    m = report_model(injection_model(), hw=FakeSpec())  # no --dim: batch stays free
    codes = {w["code"]: w for w in m["warnings"]}
    assert {"unbound_dims", "unsupported_ops"} <= set(codes)
    assert "<b onmouseover=alert(1)>Evil</b>" in codes["unsupported_ops"]["message"]
    html = render_html(m)
    top = re.search(r'<section id="warnings-top">(.*?)</section>', html, re.S).group(1)
    bottom = re.search(r'<section id="warnings">(.*?)</section>', html, re.S).group(1)
    for w in (codes["unbound_dims"], codes["unsupported_ops"]):
        li = f'<li class="warning">{escape(w["message"])}</li>'
        assert li in top and li in bottom, w["code"]
    assert "&lt;b onmouseover=alert(1)&gt;Evil&lt;/b&gt;" in bottom and "<b onmouseover" not in html
    assert "--dim batch=N" in _text(bottom)
    n = sum(1 for w in m["warnings"] if w["level"] == "warning")
    assert f'<a class="chip warn" href="#warnings">{n} warnings</a>' in html


def test_markdown_is_inert(injected):
    md = render_md(injected)
    for bad in ("<script", "<img", "<svg", "<b ", "<i>"):
        assert bad not in md
    assert "&lt;img src=x onerror=alert(1)&gt;" in md
    assert md_text("a|b_c*[x](http://e)`") == "a\\|b\\_c\\*\\[x\\](http://e)\\`"
    assert md_text("two\nlines") == "two lines"


def test_markdown_summary(resnet):
    md = render_md(resnet)
    assert md.startswith("### onnxperf report: resnet50\\_torch.onnx")
    assert "| MACs / FLOPs | 4.09 G / 8.21 G |" in md
    assert "| Conv | 53 |" in md and "Slowest nodes on" in md


def test_netron_attachment(injected):
    doc = json.loads(render_netron(injected))
    assert doc["signature"] == "netron:attachment"
    items = doc["metadata"] + doc["metrics"]
    assert all(set(x) >= {"kind", "target", "name", "value"} for x in items)
    assert {x["kind"] for x in items} <= {"model", "node"}
    assert all(x["target"] == "" for x in items if x["kind"] == "model")
    node_targets = {x["target"] for x in doc["metrics"] if x["kind"] == "node"}
    assert SCRIPT_NAME in node_targets and IMG_NAME in node_targets
    flops = {x["target"]: x["value"] for x in doc["metrics"] if x["kind"] == "node" and x["name"] == "FLOPs"}
    rows = injected["nodes"]["rows"]
    assert flops[FLAG_SCRIPT] == rows[1][_col(injected, "flops")] == 2 * 2 * 8 * 4
    seen = [(x["target"], x["name"]) for x in items if x["kind"] == "node"]
    assert len(seen) == len(set(seen))  # Netron keeps the last of a repeated name: never repeat


def test_netron_leaves_out_unnamed_and_shared_names():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="same"), helper.make_node("Relu", ["a"], ["b"], name="same"),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Relu", ["c"], ["y"], name="last\nline two")]
    m = report_model(model(nodes, [vi("x", [2, 3])], [vi("y", None)]))
    doc = json.loads(render_netron(m))
    targets = {x["target"] for x in doc["metrics"] if x["kind"] == "node"}
    assert targets == {"last"}  # Netron matches the name up to its first newline
    meta = {x["name"]: x["value"] for x in doc["metadata"] if x["kind"] == "model"}
    assert meta["nodes without a name (no figures shown)"] == "1"
    assert meta["nodes sharing a name (no figures shown)"] == "2"


def test_templates_ship_as_package_data():
    files = resources.files("onnxperf.templates")
    for name in ("report.html.j2", "report.css", "report.js", "vendor/chart.umd.min.js", "vendor/chart.js.LICENSE.md"):
        assert files.joinpath(name).is_file(), name
    assert "MIT License" in files.joinpath("vendor/chart.js.LICENSE.md").read_text()


# ------------------------------------------------------------------------------------------- CLI

def test_cli_writes_html_json_md_and_netron(main, tmp_path):
    out, att = tmp_path / "r.html", tmp_path / "r.netron.json"
    assert main(["report", str(RESNET), "--dim", "batch=1", "-o", str(out), "--netron", str(att)]) == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "resnet50_torch.onnx" in html
    assert json.loads(att.read_text())["signature"] == "netron:attachment"
    js = tmp_path / "r.json"
    assert main(["report", str(RESNET), "--dim", "batch=1", "--format", "json", "-o", str(js)]) == 0
    d = json.loads(js.read_text())
    assert d["schema"] == SCHEMA and d["options"]["dims"] == {"batch": 1}
    js2 = tmp_path / "r2.json"
    main(["report", str(RESNET), "--dim", "batch=1", "--format", "json", "-o", str(js2)])
    assert js.read_bytes() == js2.read_bytes()
    fit = tmp_path / "fit.html"
    assert main(["report", str(RESNET), "--memory", "8GiB", "-o", str(fit)]) == 0
    assert "Largest batch" in fit.read_text() and "881 fits 8 GiB" in fit.read_text()
    md = tmp_path / "r.md"
    assert main(["report", str(RESNET), "--dim", "batch=1", "--format", "md", "-o", str(md)]) == 0
    assert md.read_text().startswith("### onnxperf report")
    # the short flags are the same formats
    js3, md2 = tmp_path / "r3.json", tmp_path / "r2.md"
    assert main(["report", str(RESNET), "--dim", "batch=1", "--json", "-o", str(js3)]) == 0
    assert js3.read_bytes() == js.read_bytes()
    assert main(["report", str(RESNET), "--dim", "batch=1", "--md", "-o", str(md2)]) == 0
    assert md2.read_bytes() == md.read_bytes()


def test_cli_errors_are_one_line(main, tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "r.html")]) == 2
    assert main(["report", str(RESNET), "--netron", "-", "--format", "md"]) == 2
    err = capsys.readouterr().err
    assert err.count("onnxperf: error:") == 2
    assert not (tmp_path / "r.html").exists()


def test_cli_with_hw_preset(main, tmp_path):
    pytest.importorskip("onnxperf.hardware")
    try:
        from onnxperf.hardware import load_spec
        load_spec("rtx3090")
    except Exception:  # noqa: BLE001
        pytest.skip("the rtx3090 preset is not available")
    out = tmp_path / "r.json"
    assert main(["report", str(RESNET), "--dim", "batch=1", "--hw", "rtx3090", "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["hardware"]["id"] == "rtx3090" and d["totals"]["predicted_latency_s"] > 0


def test_progress_bar_only_on_a_terminal():
    buf = io.StringIO()
    with Progress(["a", "b"], stream=buf) as p:  # StringIO is not a terminal: a quick run says nothing
        p.stage("a")
    assert buf.getvalue() == ""
    buf = io.StringIO()
    with Progress(["a", "b"], stream=buf, terminal=True, interval_s=0.01) as p:
        p.stage("b")
    text = buf.getvalue()
    assert "2/2 b" in text and "█" in text and text.endswith("\r\033[2K")


def test_report_of_a_model_with_subgraphs_keeps_scoped_keys(tmp_path):
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="inner")], "then", [], [vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="branch")]
    m = model(nodes, [vi("c", [], onnx.TensorProto.BOOL), vi("x", [2, 3])], [vi("y", [2, 3])])
    r = report_model(m, hw=FakeSpec())
    keys = [row[0] for row in r["nodes"]["rows"]]
    assert "0" in keys and any("/" in k for k in keys)
    assert len(r["memory"]["timeline_bytes"]) == 1  # main graph steps only
    render_html(r)


def test_initializers_only_model_renders():
    m = model([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", [2])], [const("w", [2])])
    r = report_model(m)
    assert render_html(r) and render_md(r) and render_netron(r)
