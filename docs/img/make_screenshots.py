"""Regenerate the report screenshots of docs/report.md (headless Chromium via Playwright).

    python docs/img/make_screenshots.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def report(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / f"{name}.html"
    subprocess.run([sys.executable, "-m", "onnxperf", "report", *args, "-o", str(out)], check=True, cwd=ROOT)
    return out


def section(page, sel: str, path: Path, max_h: int = 900) -> None:
    box = page.evaluate("s => { const r = document.querySelector(s).getBoundingClientRect(); "
                        "return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; }", sel)
    page.screenshot(path=str(path), full_page=True,
                    clip={"x": box["x"] - 8, "y": box["y"] - 8, "width": box["w"] + 16, "height": min(box["h"] + 16, max_h)})


def main() -> None:
    with tempfile.TemporaryDirectory() as t, sync_playwright() as p:
        tmp = Path(t)
        resnet = report(tmp, "resnet50", "models/resnet50_torch.onnx", "--dim", "batch=1", "--hw", "rtx3090")
        bert = report(tmp, "bert", "models/bert_encoder_torch.onnx", "--dim", "batch=8", "--dim", "sequence=128",
                      "--hw", "rtx3090")
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = b.new_page(viewport={"width": 1280, "height": 860})
        page.goto(resnet.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        page.screenshot(path=str(IMG / "report-summary.png"))
        page.add_style_tag(content="nav.toc{position:static !important}")
        section(page, "#bottlenecks", IMG / "report-bottlenecks.png")
        page.goto(bert.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        page.add_style_tag(content="nav.toc{position:static !important}")
        page.locator("#roofline-chart").scroll_into_view_if_needed()
        pt = page.evaluate("""() => { const ch = window.__onnxperf.charts.roofline;
            const d = ch.data.datasets.findIndex(x => x.label === 'MatMul');
            const m = ch.getDatasetMeta(d).data; const el = m[m.length - 1]; return {x: el.x, y: el.y}; }""")
        box = page.locator("#roofline-chart").bounding_box()
        page.mouse.move(box["x"] + pt["x"], box["y"] + pt["y"])
        page.wait_for_timeout(200)
        section(page, "#roofline", IMG / "report-roofline.png")
        page.mouse.move(0, 0)
        page.select_option("#node-op", "MatMul")
        page.click("#node-table th[data-col=predicted_s] button")
        page.click("#node-table tbody tr:first-child")
        section(page, "#nodes", IMG / "report-nodes.png", max_h=1000)
        b.close()


if __name__ == "__main__":
    main()
