"""Every HTML page on a phone (390 x 844 CSS px) and on a desktop (1440 x 900), in a real headless
Chromium (issue 19, point 5), and the warnings box against the text output.

Pages: the report (plain; with --hw, so the roofline and the bottleneck groups; with a measured section;
a decoder LLM's; a hostile model's names) and the compare page (every block opened; with --hw too, its
latency split by explanation). At both widths: the page never scrolls sideways (a wide table scrolls
inside its own box), every data point of every chart lies inside the chart's plot area (none half cut at
an edge), the legend and every axis label lie inside the canvas (none cut at its left edge). Charts are
Chart.js canvases, so their geometry is read from the chart (points, chart area, legend boxes, tick
label items) with ``page.evaluate``: the report's CSP forbids eval, which page.evaluate is not subject
to. Printed on A4, no table is cut at the paper's edge.

Not in a browser: the bytes axes' ticks are binary steps (256 KiB, 512 KiB, 1 MiB), and the page's
warnings carry every warning ``onnxperf validate`` prints for the same run.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from onnxperf.products.compare import compare
from onnxperf.products.compare.render import RENDERERS as COMPARE_RENDERERS
from onnxperf.ui.numbers import binary_bytes
from onnxperf.products.render.report import binary_axis, render_html
from onnxperf.products.report import build_report

from .report_util import MODELS, RESNET, FakeSpec, injection_model, report_model, spec, summary_of

#: slow (a browser, onnxruntime, every doc page or every ONNX node case): left out by -m "not slow"
pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("ONNXPERF_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
CORPUS = MODELS / "corpus"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"  # ignored by git; CI keeps them
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
#: an A4 page's printable area in CSS px within the 12 mm @page margins (as test_report_browser)
A4_PRINT = {"width": round((210 - 24) / 25.4 * 96), "height": round((297 - 24) / 25.4 * 96)}
#: a pixel of slack for anti-aliasing and sub-pixel layout
EPS = 0.5


# ------------------------------------------------------------------------------------- not in a browser

@pytest.mark.parametrize("top", [1, 7, 1000, 1023, 1 << 20, 977 * 1024, 2_000_000, 9_640_000, 123_456_789,
                                 1_000_000_000, 256 << 20, 3 << 30, 5 * 10**12])
def test_bytes_axis_ticks_are_binary_steps(top):
    """A bytes axis (memory over execution order, LLM memory) has ticks 0, s, 2s, ... at a power
    of two s: 256 KiB, 512 KiB, 768 KiB, 1 MiB, never Chart.js's decimal 977 KiB or 1.91 MiB; the top
    leaves room over the highest value, and each label is exact in binary units."""
    ax = binary_axis(top)
    step, hi = ax["step"], ax["max"]
    assert step & (step - 1) == 0  # a power of two
    assert hi % step == 0 and hi >= top * 1.08 and hi // step <= 8
    assert step == 1 or hi // (step // 2) > 8  # the smallest such step: half of it needs too many ticks
    for k in range(hi // step + 1):
        v = k * step
        label = binary_bytes(v)
        number = float(label.split()[0])
        unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[label.split()[1]]
        assert number * unit == v, (v, label)  # 1.25 MiB is 1,310,720 B exactly: no label is rounded


def test_bytes_axis_of_the_memory_chart_example():
    """The figures a user measured: a 9.19 MiB peak got ticks 0, 1.91, 3.81 ... MiB (decimal steps)."""
    assert binary_axis(9_640_000) == {"step": 2 << 20, "max": 10 << 20}
    assert [binary_bytes(v) for v in range(0, (10 << 20) + 1, 2 << 20)] == ["0 B", "2 MiB", "4 MiB", "6 MiB", "8 MiB",
                                                                         "10 MiB"]
    assert binary_axis(900 * 1024) == {"step": 128 << 10, "max": 1 << 20}  # 128 KiB ... 1 MiB
    assert binary_axis(0) is None


def _validation(tiny: Path, warnings: tuple[str, ...], e2e_scale: float):
    """A Validation of the two-node model ``tiny`` as ``onnxperf validate`` builds it, by hand: the
    measured latency is ``e2e_scale`` times the prediction."""
    from onnxperf.products.accuracy import ErrorFigures
    from onnxperf.products.validate.compare import GroupResult, Validation
    from onnxperf.products.validate.runner import LatencyStats

    sm = summary_of(tiny, {"batch": 8}, spec())
    pred = sm.roofline.latency_s
    lat = LatencyStats(mean_s=pred * e2e_scale, p50_s=pred * e2e_scale, p90_s=pred * e2e_scale, p99_s=pred * e2e_scale,
                       min_s=pred, max_s=pred * 2 * e2e_scale, cv=0.13, throughput_per_s=8 / (pred * e2e_scale), n=10)
    groups = tuple(GroupResult(original_node_ids=(n.id,), original_op_types=(n.op_type,), measured_names=(n.name,),
                               measured_op_types=(n.op_type,), measured_s=r.time_s * e2e_scale,
                               predicted_s=r.time_s, predicted_calibrated_s=None, folded=False, flops=n.flops,
                               bytes=n.bytes_read + n.bytes_written)
                   for n, r in zip(sm.main_nodes, sm.roofline.nodes))
    figs = ErrorFigures(n=2, predicted_total_s=pred, measured_total_s=lat.mean_s,
                        end_to_end_error=(pred - lat.mean_s) / lat.mean_s, median_ape=0.8, within_10=0.0,
                        within_25=0.0, spearman=1.0)
    v = Validation(hardware=sm.spec.id, calibrated=False, opt="all", threads=None, providers=("CPUExecutionProvider",),
                   ort_version="1.x", batch=8, latency=lat, predicted_latency_s=pred, predicted_calibrated_latency_s=None,
                   measured_kernels_s=lat.mean_s, unmapped_s=0.0, groups=groups, plain=figs, calibrated_figures=None,
                   batches=(), knee_batch=None, notes=("weights missing (w.bin): ran with random weights",),
                   warnings=warnings + ((lat.spread_warning,) if lat.spread_warning else ()))
    return sm, v


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import onnx
    from onnx import helper

    from .util import const, model, vi

    h = 64
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"), helper.make_node("Relu", ["a"], ["y"], name="relu")]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, h], values=[0.01] * h * h)])
    p = tmp_path_factory.mktemp("tiny") / "tiny.onnx"
    onnx.save(m, str(p))
    return p


def _boxes(page_html: str) -> tuple[list[str], list[str]]:
    """The texts of the warnings box under the cards and of the 'Warnings and notes' section."""
    from html import unescape

    def items(section: str) -> list[str]:
        body = re.search(rf'<section id="{section}">(.*?)</section>', page_html, re.S).group(1)
        return [unescape(re.sub(r"<[^>]+>", "", li)).strip() for li in re.findall(r"<li[^>]*>(.*?)</li>", body, re.S)]

    return items("warnings-top"), items("warnings")


def test_warnings_box_carries_every_warning_the_validate_text_prints(tiny):
    """The defect: 'No warnings' beside a -88% end-to-end error and a noisy (cv 13%) measurement.
    Every 'Warning' line of `onnxperf validate`'s text for a run is in both warnings boxes of the
    report built from the same run, its notes under them, and an error beyond ±25% is a warning."""
    from onnxperf.products.render.validation import render_text

    other = "hardware spec Fake [fake] describes another machine: run `onnxperf hw probe -o local.toml`"
    sm, v = _validation(tiny, (other,), e2e_scale=1 / 0.12)  # predicted = 12% of measured: -88%
    text = render_text(v)
    said = [ln[len("Warning    "):] for ln in text.splitlines() if ln.startswith("Warning    ")]
    noted = [ln[len("Note       "):] for ln in text.splitlines() if ln.startswith("Note       ")]
    assert len(said) == 3 and any("cv 13%" in w for w in said) and noted
    assert any("88% below the measured" in w for w in said)  # the text says it too
    m = build_report(sm, v, {"dims": {"batch": 8}})
    assert m["measured"]["errors"]["end_to_end_error"] == pytest.approx(-0.88)
    top, bottom = _boxes(render_html(m))
    for w in said:
        assert w in top and w in bottom, w
    for n in noted:
        assert n in bottom, n
    big = [w for w in m["warnings"] if w["code"] == "prediction_error"]
    assert len(big) == 1 and "88% below the measured" in big[0]["message"] and big[0]["message"] in top
    assert not any(x.startswith("No warnings") for x in top + bottom)
    # the JSON report model stays byte-identical for the same run
    from onnxperf.products.render.report import render_json

    assert render_json(m) == render_json(build_report(sm, v, {"dims": {"batch": 8}}))


def test_a_prediction_within_the_band_is_no_warning(tiny):
    sm, v = _validation(tiny, (), e2e_scale=1.1)
    m = build_report(sm, v, {"dims": {"batch": 8}})
    assert [w["code"] for w in m["warnings"]] == ["validation"]  # the noisy measurement alone
    assert m["measured"]["latency_s"] == v.latency.mean_s and len(m["measured"]["points"]) == 2


# ------------------------------------------------------------------------------------------ in a browser

@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _validated_model():
    """ResNet-50 with a measured section: the slowest node measured at exactly 10 ms (the point
    that was cut in half on the chart's 10 ms edge), the error figures of both rooflines (their table
    made the page 563 px wide), and a noisy measurement."""
    from .report_util import FakeValidation

    sm = summary_of(RESNET, {"batch": 1}, spec())
    times = {n.key: n.time_s * (1.2 + 0.01 * int(n.key)) for n in sm.roofline.nodes if n.time_s}
    slowest = max(times, key=times.get)
    times[slowest] = 0.01
    figs = {"end_to_end_error": -0.88, "median_ape": 0.4, "within_10": 0.1, "within_25": 0.3, "spearman": 0.8}
    fv = FakeValidation(times, latency_s=sum(times.values()), errors=figs)
    fv.errors_by_roofline = {"plain": figs, "calibrated": figs}
    fv.warnings = ["latency varies a lot between runs (cv 13% > 10%): use more runs, fix the thread count, "
                   "or quiet the machine"]
    return build_report(sm, fv, {"dims": {"batch": 1}})


def _llm_model():
    from onnxperf.insights.llm.section import LLMOptions
    from onnxperf.analysis.compose import summarize

    sm = summarize(str(CORPUS / "gpt2_decode_legacy.onnx"), dims={"batch": 2}, hw="a100-80gb",
                   llm=LLMOptions(full=True, context=512, prompt=16, curve=True), memory_budget=256 << 20)
    return build_report(sm)


PAGES = {
    "report": lambda: render_html(report_model(RESNET, dims={"batch": 1})),
    "report-hw": lambda: render_html(report_model(RESNET, dims={"batch": 1}, hw=spec())),
    "report-validated": lambda: render_html(_validated_model()),
    "report-llm": lambda: render_html(_llm_model()),
    # a transformer: the memory chart's lead names the peak's node, a path of 60 characters with no
    # space (/bert/encoder/layer.0/intermediate/...): 432 px at 390
    "report-bert": lambda: render_html(report_model(MODELS / "bert_encoder_torch.onnx",
                                                    dims={"batch": 1, "sequence": 128}, hw=spec())),
    # names and op types from a hostile file: the op-type filter's options were 464 px wide
    "report-hostile": lambda: render_html(report_model(injection_model(), dims={"batch": 2}, hw=FakeSpec())),
    "compare": lambda: COMPARE_RENDERERS["html"](compare([MODELS / "resnet50_torch.onnx", MODELS / "resnet50_keras.onnx"],
                                                         dims={"batch": 1})),
    # with --hw: the predicted-latency card and the table of its delta by explanation
    "compare-hw": lambda: COMPARE_RENDERERS["html"](compare([MODELS / "resnet50_torch.onnx",
                                                             MODELS / "resnet50_keras.onnx"],
                                                            dims={"batch": 1}, hw="rtx3090:plain")),
}
CHARTS = {"report": ["cost", "memory"], "report-hw": ["cost", "memory", "roofline"],
          "report-validated": ["cost", "memory", "roofline", "validation"],
          "report-llm": ["cost", "llmMemory", "llmSpeed", "memory", "roofline"],
          "report-bert": ["cost", "memory", "roofline"],
          "report-hostile": ["cost", "memory", "roofline"], "compare": [], "compare-hw": []}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    d = tmp_path_factory.mktemp("pages")
    out = {}
    for name, make in PAGES.items():
        out[name] = d / f"{name}.html"
        out[name].write_text(make(), encoding="utf-8")
    return out


def _open(browser, path: Path, viewport: dict):
    page = browser.new_page(viewport=viewport)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    if path.name.startswith("report"):
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    else:  # compare: every block opened, as a reader may
        page.wait_for_load_state("load")
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    return page, errors


#: tables wider than the viewport, and whether each has a box that scrolls and fits the viewport
TABLES_JS = """() => {
  const W = window.innerWidth, out = [];
  for (const t of document.querySelectorAll('table')) {
    if (t.offsetParent === null) continue;
    const r = t.getBoundingClientRect();
    let box = null;
    for (let a = t.parentElement; a && a !== document.body; a = a.parentElement) {
      const ov = getComputedStyle(a).overflowX;
      if (ov === 'auto' || ov === 'scroll') { box = a; break; }
    }
    const b = box && box.getBoundingClientRect();
    out.push({id: t.id || t.className, right: r.right, wide: t.scrollWidth > (box ? box.clientWidth : W) + 0.5,
              box: !!box, boxLeft: b ? b.left : null, boxRight: b ? b.right : null});
  }
  return out;
}"""

#: every chart's geometry: points (with radius), plot area, canvas size, legend boxes, tick labels
CHARTS_JS = """() => {
  const out = {}, charts = window.__onnxperf.charts;
  for (const name of Object.keys(charts)) {
    const ch = charts[name], ctx = ch.ctx, points = [], labels = [], legend = [];
    ch.data.datasets.forEach((ds, d) => {
      const meta = ch.getDatasetMeta(d);
      if (ds.isRoof || meta.hidden || meta.type === 'bar') return;  // reference lines run to the edges by design
      meta.data.forEach((el, j) => {
        if (el.skip) return;
        const o = el.options || {};
        const r = o.radius > 0 ? o.radius + (o.borderWidth || 0) / 2 : 0;  // radius 0: a line's vertex, no dot
        points.push({d: ds.label, j: j, x: el.x, y: el.y, r: r});
      });
    });
    for (const id of Object.keys(ch.scales)) {
      const s = ch.scales[id];
      for (const it of s.getLabelItems()) {
        if (!it.label) continue;
        ctx.save(); ctx.font = it.font.string;
        const w = ctx.measureText(String(it.label)).width; ctx.restore();
        const [x, y] = it.options.translation, a = it.options.textAlign;
        const left = a === 'right' ? x - w : (a === 'center' ? x - w / 2 : x);
        labels.push({scale: id, label: String(it.label), left: left, right: left + w,
                     top: y - it.font.size / 2, bottom: y + it.font.size / 2, rot: it.options.rotation || 0});
      }
    }
    if (ch.options.plugins.legend.display !== false && ch.legend && ch.legend.legendHitBoxes)
      for (const h of ch.legend.legendHitBoxes) legend.push({left: h.left, top: h.top, right: h.left + h.width, bottom: h.top + h.height});
    out[name] = {w: ch.width, h: ch.height, area: ch.chartArea, points: points, labels: labels, legend: legend,
                 legendAt: ch.options.plugins.legend.position};
  }
  return out;
}"""


def _check_page(page, name: str, vw: int) -> dict:
    """Every assertion of one page at one width; returns the charts' geometry for more checks."""
    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("window.innerWidth") == vw
    tables = page.evaluate(TABLES_JS)
    assert tables, "no table on the page"
    for t in tables:
        if t["right"] > vw + EPS or t["wide"]:  # a table wider than the page scrolls inside its own box
            assert t["box"] and t["boxLeft"] >= -EPS and t["boxRight"] <= vw + EPS, t
    if vw == PHONE["width"]:
        assert any(t["wide"] and t["box"] for t in tables), "no table is wider than a phone: the test tests nothing"
    charts = page.evaluate(CHARTS_JS) if name.startswith("report") else {}
    assert sorted(charts) == CHARTS[name]
    for cname, c in charts.items():
        a = c["area"]
        assert c["points"] or cname == "cost", cname
        for p in c["points"]:
            assert a["left"] - EPS <= p["x"] - p["r"] and p["x"] + p["r"] <= a["right"] + EPS, (cname, p, a)
            assert a["top"] - EPS <= p["y"] - p["r"] and p["y"] + p["r"] <= a["bottom"] + EPS, (cname, p, a)
        for box in c["legend"]:
            assert box["left"] >= -EPS and box["right"] <= c["w"] + EPS, (cname, box, c["w"])
            assert box["top"] >= -EPS and box["bottom"] <= c["h"] + EPS, (cname, box, c["h"])
        for lb in c["labels"]:
            assert lb["left"] >= -EPS and lb["right"] <= c["w"] + EPS, (cname, lb, c["w"])
            assert lb["top"] >= -EPS and lb["bottom"] <= c["h"] + EPS, (cname, lb, c["h"])
    return charts


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1440px"])
@pytest.mark.parametrize("name", list(PAGES))
def test_page_fits_the_width_with_nothing_cut(browser, pages, name, viewport):
    page, errors = _open(browser, pages[name], viewport)
    try:
        charts = _check_page(page, name, viewport["width"])
        assert errors == []
        if "roofline" in charts:  # beside the plot on a desktop, under it on a phone
            assert charts["roofline"]["legendAt"] == ("bottom" if viewport is PHONE else "right")
            ys = [lb["label"] for lb in charts["roofline"]["labels"] if lb["scale"] == "y"]
            assert ys and all(re.fullmatch(r"\d+ [kMGTP]?(FLOP|op)/s", y) for y in ys), ys  # '00 TFLOP/s' was cut
        if name == "report-validated":
            pts = charts["validation"]["points"]
            # every measured node drawn (a GPU kernel's: the node that starts it), the 10 ms one inside the plot
            assert len(pts) == sum(1 for n in summary_of(RESNET, {"batch": 1}, spec()).roofline.nodes if n.time_s) == 56
            top = page.locator("#warnings-top li")
            assert top.count() == 2 and "cv 13%" in top.nth(0).inner_text()
            assert "88% below the measured" in top.nth(1).inner_text()
        if name in ("report", "report-llm"):  # bytes axes at binary steps
            for cname in ("memory", "llmMemory") if name == "report-llm" else ("memory",):
                ys = [lb["label"] for lb in charts[cname]["labels"] if lb["scale"] == "y"]
                assert ys[0] == "0 B" and len(ys) >= 3
                steps = {_bytes(b) - _bytes(a) for a, b in zip(ys, ys[1:])}
                assert len(steps) == 1, ys
                step = steps.pop()
                assert step & (step - 1) == 0, ys
        if viewport is PHONE:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"narrow-{name}.png"), full_page=True)
    finally:
        page.close()


def _poll(page, expr: str, want, seconds: float = 5.0) -> bool:
    """Wait until ``expr`` evaluates to ``want`` (the page's CSP forbids wait_for_function's eval)."""
    for _ in range(int(seconds / 0.05)):
        if page.evaluate(expr) == want:
            return True
        page.wait_for_timeout(50)
    return False


def _bytes(label: str) -> int:
    number, unit = label.split()
    return round(float(number) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])


def test_a_phone_turned_wide_and_back_moves_the_roofline_legend(browser, pages):
    """The legend follows the width when the window is resized, not only when the page loads."""
    page, errors = _open(browser, pages["report-hw"], PHONE)
    try:
        pos = "window.__onnxperf.charts.roofline.options.plugins.legend.position"
        assert page.evaluate(pos) == "bottom"
        page.set_viewport_size(DESKTOP)
        assert _poll(page, pos, "right")  # Chart.js resizes on its ResizeObserver
        _check_page(page, "report-hw", DESKTOP["width"])
        page.set_viewport_size(PHONE)
        assert _poll(page, pos, "bottom")
        _check_page(page, "report-hw", PHONE["width"])
        assert errors == []
    finally:
        page.close()


@pytest.mark.parametrize("name", ["report-validated", "compare", "compare-hw"])
def test_printed_on_a4_nothing_is_cut_at_the_right_edge(browser, pages, name):
    """Printing: the page fits an A4 page's width and no table is cut by a scroll box on paper."""
    page, errors = _open(browser, pages[name], A4_PRINT)
    try:
        page.emulate_media(media="print")
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        assert page.evaluate("document.documentElement.scrollWidth") <= A4_PRINT["width"]
        for t in page.evaluate(TABLES_JS):
            assert not t["wide"] and t["right"] <= A4_PRINT["width"] + EPS, t
        assert errors == []
    finally:
        page.close()
