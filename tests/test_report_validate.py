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
