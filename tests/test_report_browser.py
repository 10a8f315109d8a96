"""The HTML report in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

The report's Content-Security-Policy forbids eval, so the tests wait with ``expect(...)`` and read
with ``page.evaluate`` (both run outside the page's CSP), never with ``wait_for_function``.

Covers: no console errors and no network request; the totals shown equal the JSON's; sorting and
filtering the node table; the roofline (log axes, roof and ridge, colours, hover text, every node
accounted for); printing (every section, charts within the page, every node-table row); the
injection model runs no script; the benchmark script runs. Screenshots and the printed PDF go to
artifacts/ (ignored by git; CI keeps them).

Skipped, with the reason, when Playwright or Chromium is missing; .ci/run installs both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from onnxperf.ui.numbers import seconds, si
from onnxperf.products.render.report import render_html, render_json

from .report_util import (FLAG_IMG, FLAG_SCRIPT, FLAG_SVG, IMG_NAME, RESNET, SCRIPT_NAME, FakeSpec,
                          FakeValidation, injection_model, report_model, spec, summary_of)

from .util import benchmark

#: slow (a browser, onnxruntime, every doc page or every ONNX node case): left out by -m "not slow"
pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("ONNXPERF_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts"
BENCH = ROOT / "benchmarks" / "bench_report.py"
#: an A4 page's printable area in CSS px (96 px/in) within report.css's 12 mm @page margins
A4_PRINT = {"width": round((210 - 24) / 25.4 * 96), "height": round((297 - 24) / 25.4 * 96)}

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
expect = sync_api.expect
if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does it)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Loaded:
    """A page with a report loaded, and everything it logged or asked for."""

    def __init__(self, page, url: str):
        self.page, self.url = page, url
        self.console: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []


def _open(browser, path: Path) -> Loaded:
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    ld = Loaded(page, path.as_uri())
    page.on("console", lambda m: ld.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: ld.errors.append(str(e)))
    page.on("request", lambda r: ld.requests.append(r.url))

    def on_dialog(d):
        ld.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)

    def route(r):  # nothing but the report itself may be fetched
        if r.request.url == ld.url or r.request.url.startswith(("data:", "about:", "blob:")):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.goto(ld.url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    return ld


@pytest.fixture(scope="module")
def resnet_files(tmp_path_factory):
    m = report_model(RESNET, dims={"batch": 1}, hw=spec(), options={"dims": {"batch": 1}, "hw": "rtx3090"})
    d = tmp_path_factory.mktemp("report")
    (d / "resnet50.html").write_text(render_html(m), encoding="utf-8")
    (d / "resnet50.json").write_text(render_json(m), encoding="utf-8")
    return d / "resnet50.html", d / "resnet50.json"


@pytest.fixture(scope="module")
def resnet(browser, resnet_files):
    ld = _open(browser, resnet_files[0])
    yield ld
    ld.page.close()


def test_loads_with_no_console_errors_and_no_network_request(resnet):
    assert resnet.errors == []
    assert [m for m in resnet.console if m[0] in ("error", "warning")] == []
    foreign = [u for u in resnet.requests if u != resnet.url and not u.startswith(("data:", "about:", "blob:"))]
    assert foreign == [] and resnet.requests[0] == resnet.url
    # the charts drew and the table has its first page
    charts = resnet.page.evaluate("Object.keys(window.__onnxperf.charts).sort()")
    assert charts == ["cost", "memory", "roofline"]
    assert resnet.page.locator("#node-table tbody tr").count() == 50
    ARTIFACTS.mkdir(exist_ok=True)
    resnet.page.screenshot(path=str(ARTIFACTS / "report-resnet50.png"), full_page=True)
    resnet.page.screenshot(path=str(ARTIFACTS / "report-resnet50-top.png"))


def test_totals_shown_equal_the_json(resnet, resnet_files):
    d = json.loads(resnet_files[1].read_text())
    assert resnet.page.evaluate("window.__onnxperf.report.totals") == d["totals"]
    cards = resnet.page.locator("[data-total]")
    shown = {cards.nth(i).get_attribute("data-total"): cards.nth(i) for i in range(cards.count())}
    assert {"params", "macs", "flops", "bytes_read", "bytes_written", "activation_peak_bytes",
            "total_memory_bytes", "predicted_latency_s", "intensity_flops_per_byte", "coverage"} <= set(shown)
    for key in ("params", "macs", "flops", "bytes_read", "bytes_written", "activation_peak_bytes", "total_memory_bytes"):
        assert int(shown[key].get_attribute("data-value")) == d["totals"][key], key
        assert shown[key].locator(".exact").inner_text() == f"{d['totals'][key]:,}", key
    for key in ("predicted_latency_s", "intensity_flops_per_byte"):
        assert float(shown[key].get_attribute("data-value")) == d["totals"][key], key
    assert float(shown["coverage"].get_attribute("data-value")) == d["coverage"]["node_share_exact"]
    assert shown["flops"].locator(".value").inner_text() == "8.21 G"
    assert shown["macs"].locator(".value").inner_text() == "4.09 G"


def _column(page, name: str) -> list[str]:
    idx = page.evaluate(f"Array.from(document.querySelectorAll('#node-table th')).findIndex(th => th.dataset.col === '{name}')")
    return page.eval_on_selector_all(f"#node-table tbody tr td:nth-child({idx + 1})", "tds => tds.map(t => t.innerText)")


def _rows_shown(page) -> list[int]:
    return page.eval_on_selector_all("#node-table tbody tr", "trs => trs.map(t => Number(t.dataset.row))")


def test_sorting_the_node_table(resnet, resnet_files):
    page = resnet.page
    d = json.loads(resnet_files[1].read_text())
    cols = d["nodes"]["columns"]
    flops = [r[cols.index("flops")] for r in d["nodes"]["rows"]]
    page.click("#node-table th[data-col=flops] button")  # numbers: largest first
    assert page.get_attribute("#node-table th[data-col=flops]", "aria-sort") == "descending"
    shown = [flops[i] for i in _rows_shown(page)]
    assert shown == sorted(flops, reverse=True)[:50]
    page.click("#node-table th[data-col=flops] button")
    assert [flops[i] for i in _rows_shown(page)] == sorted(flops)[:50]
    page.click("#node-table th[data-col=name] button")  # text: A to Z
    names = [r[cols.index("name")] for r in d["nodes"]["rows"]]
    assert [names[i] for i in _rows_shown(page)] == sorted(names)[:50]
    # every column sorts without error and keeps all rows
    for col in page.eval_on_selector_all("#node-table th", "ths => ths.map(t => t.dataset.col)"):
        page.click(f"#node-table th[data-col={col}] button")
        assert page.inner_text("#node-count") == "122 nodes"
        assert page.locator("#node-table tbody tr").count() == 50
    page.click("#node-table th[data-col=key] button")
    if page.get_attribute("#node-table th[data-col=key]", "aria-sort") == "descending":
        page.click("#node-table th[data-col=key] button")
    assert _rows_shown(page)[:3] == [0, 1, 2]


def test_filtering_the_node_table(resnet, resnet_files):
    page = resnet.page
    d = json.loads(resnet_files[1].read_text())
    cols, tensors = d["nodes"]["columns"], d["tensors"]["rows"]
    page.select_option("#node-op", "Relu")
    assert page.inner_text("#node-count") == "49 of 122 nodes match"
    assert set(_column(page, "op_type")) == {"Relu"}
    page.select_option("#node-op", "")
    page.select_option("#node-status", "zero_by_design")
    assert page.inner_text("#node-count") == "1 of 122 nodes match"
    assert _column(page, "op_type") == ["Flatten"]
    page.select_option("#node-status", "")
    # text matches node names, op types and tensor names
    term = "layer4.2/conv"
    expected = [i for i, r in enumerate(d["nodes"]["rows"]) if term in r[cols.index("name")].lower() or any(
        t is not None and term in tensors[t][0].lower() for t in r[cols.index("inputs")] + r[cols.index("outputs")])]
    page.fill("#node-search", term.upper())
    expect(page.locator("#node-count")).to_have_text(f"{len(expected)} of 122 nodes match")
    assert _rows_shown(page) == expected and len(expected) == 6  # 3 convs, the 3 nodes reading their outputs
    page.select_option("#node-bound", "compute")
    assert all("compute" == b for b in _column(page, "bound"))
    page.select_option("#node-bound", "")
    page.fill("#node-search", "#7")
    expect(page.locator("#node-count")).to_have_text("1 of 122 nodes match")
    assert _rows_shown(page) == [7]
    page.fill("#node-search", "")
    expect(page.locator("#node-count")).to_have_text("122 nodes")
    page.click("#pg-next")
    assert _rows_shown(page)[0] == 50


def test_hovering_a_roofline_point_names_its_node(resnet):
    page = resnet.page
    page.locator("#roofline-chart").scroll_into_view_if_needed()
    # the point of the slowest Conv: its position on the canvas, from the chart
    pt = page.evaluate("""() => {
        const ch = window.__onnxperf.charts.roofline, R = window.__onnxperf.report, C = R.nodes.columns;
        for (let d = 0; d < ch.data.datasets.length; d++) {
          const ds = ch.data.datasets[d];
          if (ds.isRoof || ds.label !== 'Conv') continue;
          let best = 0;
          ds.data.forEach((p, j) => { if (R.nodes.rows[p.i][C.indexOf('predicted_s')] > R.nodes.rows[ds.data[best].i][C.indexOf('predicted_s')]) best = j; });
          const el = ch.getDatasetMeta(d).data[best];
          return {x: el.x, y: el.y, name: R.nodes.rows[ds.data[best].i][C.indexOf('name')], key: R.nodes.rows[ds.data[best].i][0]};
        }
      }""")
    box = page.locator("#roofline-chart").bounding_box()
    page.mouse.move(box["x"] + pt["x"], box["y"] + pt["y"])
    expect(page.locator("#roofline-hover")).not_to_be_empty()
    text = page.inner_text("#roofline-hover")
    assert pt["name"] in text and text.startswith(f"#{pt['key']} ")
    # its figures, from the JSON row: intensity, attained rate (ops / predicted time), predicted time
    rep = page.evaluate("window.__onnxperf.report")
    cols, row = rep["nodes"]["columns"], next(r for r in rep["nodes"]["rows"] if r[0] == pt["key"])
    c = {k: row[cols.index(k)] for k in ("run_intensity", "attained_ops_per_s", "predicted_s", "bound")}
    rate = c["attained_ops_per_s"]
    assert f"intensity {_g3(c['run_intensity'])} FLOP/B" in text
    assert si(rate, "FLOP/s") in text and f"predicted {seconds(c['predicted_s'])}" in text
    assert f"{c['bound']}-bound" in text
    page.screenshot(path=str(ARTIFACTS / "report-resnet50-roofline-hover.png"),
                    clip={**page.locator("#roofline").bounding_box()})
    # clicking it shows the node in the table
    page.mouse.click(box["x"] + pt["x"], box["y"] + pt["y"])
    expect(page.locator("#node-search")).to_have_value(f"#{pt['key']}")
    assert _rows_shown(page) == [int(pt["key"])]
    assert pt["name"] in page.inner_text("#node-detail")


def _g3(x: float) -> str:
    """report.js's g3: 3 significant digits, written as JavaScript writes the number."""
    v = float(f"{x:.3g}")
    return str(int(v)) if v.is_integer() else repr(v)


def test_roofline_axes_roofs_colours_and_every_node_accounted_for(resnet, resnet_files):
    page = resnet.page
    d = json.loads(resnet_files[1].read_text())
    ch = page.evaluate("""() => {
        const ch = window.__onnxperf.charts.roofline;
        return {x: ch.scales.x.type, y: ch.scales.y.type, ox: ch.options.scales.x.type, oy: ch.options.scales.y.type,
                ds: ch.data.datasets.map(ds => ({label: ds.label, roof: !!ds.isRoof, type: ds.type || 'scatter',
                  border: ds.borderColor, bg: ds.backgroundColor, n: ds.data.map(p => p.n || 0),
                  xs: ds.data.map(p => p.x), ys: ds.data.map(p => p.y)}))};
      }""")
    assert ch["x"] == ch["y"] == ch["ox"] == ch["oy"] == "logarithmic"
    roofs = [x for x in ch["ds"] if x["roof"] and " roof " in x["label"]]
    ridges = [x for x in ch["ds"] if x["roof"] and x["label"].startswith("ridge ")]
    hw = d["hardware"]["roofs"]
    assert len(roofs) == len(ridges) == len(hw) >= 1
    for rf, line, ridge in zip(hw, roofs, ridges):
        assert max(line["ys"]) == rf["peak_ops_per_s"] and rf["ridge_ops_per_byte"] in line["xs"]
        assert set(ridge["xs"]) == {rf["ridge_ops_per_byte"]} and max(ridge["ys"]) == rf["peak_ops_per_s"]
    # a Conv point is drawn in the colour the embedded view data gives Conv (the op-table swatch too)
    view = json.loads(page.evaluate("document.getElementById('report-view').textContent"))
    conv = next(x for x in ch["ds"] if x["label"] == "Conv")
    assert conv["border"] == view["colors"]["Conv"] and conv["bg"].startswith(view["colors"]["Conv"])
    assert page.evaluate("getComputedStyle(document.querySelector('#op-table tbody tr:first-child .swatch')).backgroundColor") \
        == "rgb({}, {}, {})".format(*(int(view["colors"]["Conv"][i:i + 2], 16) for i in (1, 3, 5)))
    # drawn points (each with the count of nodes merged into it) + nodes left out with a note = main-graph nodes
    main = [r for r in d["nodes"]["rows"] if "/" not in r[0]]
    drawn = sum(sum(x["n"]) for x in ch["ds"] if not x["roof"])
    note = page.locator("#roofline-hidden")
    zero, uncosted = int(note.get_attribute("data-zero-work")), int(note.get_attribute("data-uncosted"))
    inside = int(note.get_attribute("data-inside"))
    assert drawn + zero + inside + uncosted == len(main) == d["model"]["nodes"] == 122
    # the GPU kernel model runs every Relu and residual Add inside a Conv's kernel: the Conv's point carries them
    cols = d["nodes"]["columns"]
    members = [r for r in main if r[cols.index("runs")] == "inside" and r[cols.index("predicted_s")] == 0]
    assert inside == len(members) > 0 and {r[cols.index("op_type")] for r in members} == {"Relu", "Add"}
    assert zero == 1 and uncosted == 0  # Flatten: no arithmetic
    assert note.inner_text() == ("1 costed node is not drawn: it does no arithmetic or moves no bytes (log axes cannot "
                                 f"show 0). {inside} nodes run inside another node's kernel: that node's point carries "
                                 "their time and bytes.")


def _print(page) -> None:
    """What a browser does before printing, on an A4 page: print media, the page's width, beforeprint."""
    page.set_viewport_size(A4_PRINT)
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")


def _unprint(page) -> None:
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    page.set_viewport_size({"width": 1360, "height": 900})


def test_printing_keeps_every_section_every_chart_and_every_node(browser, resnet_files):
    d = json.loads(resnet_files[1].read_text())
    main = [r for r in d["nodes"]["rows"] if "/" not in r[0]]
    ld = _open(browser, resnet_files[0])  # its own page: printing changes the layout
    page = ld.page
    try:
        _print(page)
        sections = page.eval_on_selector_all("section", "ss => ss.map(s => [s.id, s.getBoundingClientRect().height])")
        assert {"summary", "model", "cost", "roofline", "bottlenecks", "memory", "nodes", "warnings"} <= {i for i, _ in sections}
        assert [i for i, h in sections if not h > 0] == []
        canvases = page.eval_on_selector_all("canvas", """cs => cs.map(c => { const r = c.getBoundingClientRect();
            return {id: c.id, left: r.left, right: r.right, w: r.width, h: r.height, box: c.parentNode.clientWidth}; })""")
        assert {c["id"] for c in canvases} == {"cost-chart", "roofline-chart", "memory-chart"}
        for c in canvases:
            assert c["h"] > 0 and c["left"] >= 0 and c["right"] <= A4_PRINT["width"] and c["w"] <= c["box"], c
        # the node table: every row, nothing cut at the page's right edge
        assert page.locator("#node-table tbody tr").count() == len(main) == d["model"]["nodes"]
        assert _rows_shown(page) == list(range(len(main)))
        assert page.evaluate("document.getElementById('node-table').scrollWidth") <= \
            page.evaluate("document.getElementById('node-table').parentNode.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= A4_PRINT["width"]
        assert page.locator("#print-note").is_visible()
        assert page.inner_text("#print-note") == f"Printed: all {len(main)} nodes."
        assert page.locator("#node-search").is_hidden() and page.locator("#pg-next").is_hidden()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-resnet50-print.png"), full_page=True)
        pdf = ARTIFACTS / "report-resnet50.pdf"
        page.pdf(path=str(pdf), format="A4", print_background=True)  # fires beforeprint and afterprint itself
        assert pdf.read_bytes().startswith(b"%PDF")
        _unprint(page)
        assert page.locator("#node-table tbody tr").count() == 50  # paginated again
        assert page.evaluate("window.__onnxperf.charts.roofline.canvas.getBoundingClientRect().width") > A4_PRINT["width"]
        assert ld.errors == [] and [m for m in ld.console if m[0] == "error"] == []
    finally:
        page.close()


def _bench():
    return benchmark(BENCH.name, "bench_report")


def test_printing_a_table_over_the_bound_prints_a_page_and_says_where_the_rest_is(browser, tmp_path):
    bench = _bench()
    n = bench.make_chain(5_001, tmp_path / "chain.onnx")
    path = tmp_path / "chain.html"
    path.write_text(bench.build(tmp_path / "chain.onnx", batch=1)[0], encoding="utf-8")
    ld = _open(browser, path)
    page = ld.page
    try:
        _print(page)
        assert n == 5_001 and page.locator("#node-table tbody tr").count() == 50
        note = page.inner_text("#print-note")
        assert note.startswith("Printed: rows 1\u201350 of all 5,001 nodes;") and "have every node" in note
        assert page.locator("#print-note").is_visible()
        _unprint(page)
        page.select_option("#node-op", "MatMul")  # a filtered view under the bound prints whole, and says so
        _print(page)
        assert page.locator("#node-table tbody tr").count() == 1_667
        assert page.inner_text("#print-note") == "Printed: the 1,667 of 5,001 nodes matching op type MatMul."
        _unprint(page)
        assert ld.errors == []
    finally:
        page.close()


def test_bench_report_runs_on_a_small_model(tmp_path):
    out = tmp_path / "report.md"
    r = subprocess.run([sys.executable, str(BENCH), "--nodes", "300", "--repeats", "1", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    text = out.read_text()
    assert "300 nodes" in text and "every chart rendered" in text and "sort the node table" in text


def test_the_injection_model_runs_no_script(browser, tmp_path):
    path = tmp_path / "injection.html"
    path.write_text(render_html(report_model(injection_model(), dims={"batch": 2}, hw=FakeSpec())), encoding="utf-8")
    ld = _open(browser, path)
    page = ld.page
    try:
        page.fill("#node-search", "")  # the table, charts and hover handlers all ran
        page.mouse.move(300, 300)
        page.wait_for_timeout(300)
        assert ld.dialogs == []
        assert page.evaluate("window.__xss") is None
        assert ld.errors == [] and [m for m in ld.console if m[0] == "error"] == []
        assert page.evaluate("document.scripts.length") == 4
        assert page.locator("img, svg, b").count() == 0
        assert page.evaluate("Array.from(document.querySelectorAll('*')).flatMap(e => "
                             "Array.from(e.attributes).map(a => a.name)).filter(n => n.startsWith('on'))") == []
        body = page.inner_text("body")
        for name in (SCRIPT_NAME, IMG_NAME, FLAG_SCRIPT, FLAG_SVG):
            assert name in body, name  # shown as text
        assert page.inner_text("#model-name") == FLAG_SVG
        page.click("#node-table tbody tr:first-child")
        detail = page.inner_text("#node-detail")  # node 0: SCRIPT_NAME, reads IMG_NAME, writes FLAG_IMG
        assert SCRIPT_NAME in detail and IMG_NAME in detail and FLAG_IMG in detail
        page.wait_for_timeout(200)
        assert ld.dialogs == [] and page.evaluate("window.__xss") is None
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-injection.png"), full_page=True)
    finally:
        page.close()


def test_measured_sections_render_when_validated(browser, tmp_path):
    from onnxperf.products.report import build_report

    sm = summary_of(RESNET, {"batch": 1}, spec())
    times = {n.key: n.time_s * (1.2 + 0.01 * int(n.key)) for n in sm.roofline.nodes if n.time_s}
    m = build_report(sm, FakeValidation(times, latency_s=sum(times.values())), {"dims": {"batch": 1}})
    path = tmp_path / "validated.html"
    path.write_text(render_html(m), encoding="utf-8")
    ld = _open(browser, path)
    page = ld.page
    try:
        assert ld.errors == [] and [x for x in ld.console if x[0] == "error"] == []
        assert page.evaluate("Object.keys(window.__onnxperf.charts).sort()") == ["cost", "memory", "roofline", "validation"]
        for key, value in m["measured"]["errors"].items():
            card = page.locator(f"[data-error={key}]")
            if card.count():
                assert float(card.get_attribute("data-value")) == value
        assert float(page.get_attribute("[data-total=measured_latency_s]", "data-value")) == m["totals"]["measured_latency_s"]
        assert _column(page, "measured_s")[0].endswith("s")  # a time in the measured column
        page.click("#roofline-mode button[data-mode=measured]")
        assert page.get_attribute("#roofline-mode button[data-mode=measured]", "aria-pressed") == "true"
        assert page.evaluate("window.__onnxperf.charts.roofline.options.scales.y.title.text").startswith("achieved")
        assert ld.errors == []
        page.screenshot(path=str(ARTIFACTS / "report-validated.png"), full_page=True)
    finally:
        page.close()


def test_megabytes_of_names_are_cut_and_shown_whole_on_demand(browser, tmp_path):
    """Issue 15, item 10: a model whose names add up to 10 MB. The page lays out only the start of
    each long name (the loading is bounded by what is shown, not by what the model holds), says how
    long the name is, and shows the whole name when asked."""
    import onnx
    from onnx import TensorProto, helper

    k, size = 10, 1 << 20
    names = [f"n{i}/" + "x" * (size - 3) for i in range(k)]
    nodes, prev = [], "x"
    for i, name in enumerate(names):
        out = f"t{i}" if i < k - 1 else "y"
        nodes.append(helper.make_node("Relu", [prev], [out], name=name))
        prev = out
    g = helper.make_graph(nodes, "long" * 1000, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    src = tmp_path / "long.onnx"
    onnx.save(m, str(src))
    html = tmp_path / "long.html"
    html.write_text(render_html(report_model(src)), encoding="utf-8")
    ld = _open(browser, html)
    page = ld.page
    try:
        assert ld.errors == []
        shown = page.evaluate("document.body.innerText.length")
        assert shown < 200_000, shown  # 10 MB of names held, a few kB of them laid out
        cell = page.locator("#node-table tbody tr:first-child td.name")
        assert "1,048,576 characters" in cell.inner_text()
        cell.locator("button.more").click()
        assert page.evaluate("document.querySelector('#node-table tbody tr:first-child td.name').textContent.length") \
            == len(names[0])
    finally:
        page.close()
