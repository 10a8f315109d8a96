"""report --validate: measured times reach the report model."""

import json

import onnx
from onnx import helper

from onnxperf import cli

from .util import const, model, vi


def test_report_validate_json_has_measured_section(tmp_path, capsys):
    h = 64
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"), helper.make_node("Relu", ["a"], ["y"], name="relu")]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, h], values=[0.01] * h * h)])
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    out = tmp_path / "r.json"
    assert cli.main(["report", str(p), "--dim", "batch=8", "--hw", "xeon-silver-4210x2", "--validate", "--runs", "2",
                     "--warmup", "1", "--opt", "disable", "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    meas = d["measured"]
    assert meas["latency_s"] > 0 and meas["runs"] == 2
    assert len(meas["points"]) == 2  # one point per measured group (MatMul, Relu) at opt=disable
    assert set(meas["errors"]) >= {"end_to_end_error", "median_ape", "within_10", "within_25", "spearman"}
    assert d["options"]["validate"] is True and d["options"]["provider"] == "CPUExecutionProvider"


def test_report_validate_needs_hw(tmp_path, capsys):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [4])], [vi("y", None)])
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["report", str(p), "--validate", "--format", "json"]) == 2
    assert "--validate needs --hw" in capsys.readouterr().err


def test_report_validate_shows_plain_and_calibrated_figures_as_validate_does(tmp_path):
    """With a calibrated spec the report carries the error figures of both rooflines (the cards
    show the calibrated ones) and the measured latency is the mean, as `onnxperf validate` uses."""
    from onnxperf.products.calibration.fit import calibrated
    from onnxperf.hardware import load_spec, to_toml

    h = 64
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"), helper.make_node("Relu", ["a"], ["y"], name="relu")]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, h], values=[0.01] * h * h)])
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    spec = calibrated(load_spec("xeon-silver-4210x2"), {"default.compute": 0.5, "default.memory": 0.5,
                                                        "overhead_s": 2e-6})
    sp = tmp_path / "cal.toml"
    sp.write_text(to_toml(spec), encoding="utf-8")
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    args = ["report", str(p), "--dim", "batch=8", "--hw", str(sp), "--validate", "--runs", "3", "--warmup", "1",
            "--opt", "disable"]
    assert cli.main(args + ["--format", "json", "-o", str(out)]) == 0
    meas = json.loads(out.read_text())["measured"]
    by = meas["errors_by_roofline"]
    assert set(by) == {"plain", "calibrated"}
    assert meas["errors"]["end_to_end_error"] == by["calibrated"]["end_to_end_error"]
    # the calibrated roofline halves both roofs and adds an overhead: it predicts a longer latency
    assert by["calibrated"]["end_to_end_error"] > by["plain"]["end_to_end_error"]
    assert cli.main(args + ["-o", str(html)]) == 0
    page = html.read_text()
    assert 'id="error-table"' in page and 'data-roofline="plain"' in page and 'data-roofline="calibrated"' in page
