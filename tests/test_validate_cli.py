"""validate and calibrate end to end on tiny models (onnxruntime in a child process)."""

import dataclasses
import json

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.hardware import load_spec, to_toml
from onnxperf.validate.calibration import run_calibration

from .util import const, model, vi


@pytest.fixture()
def mlp(tmp_path):
    h = 64
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"], name="mm1"), helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("MatMul", ["b", "w2"], ["y"], name="mm2")]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w1", [h, h], values=[0.01] * h * h),
                                                                 const("w2", [h, h], values=[0.02] * h * h)])
    p = tmp_path / "mlp.onnx"
    onnx.save(m, str(p))
    return p


def test_validate_json_covers_every_node(mlp, tmp_path, capsys):
    out = tmp_path / "v.json"
    assert cli.main(["validate", str(mlp), "--dim", "batch=4", "--hw", "xeon-silver-4210x2", "--runs", "3",
                     "--warmup", "1", "--opt", "disable", "--format", "json", "-o", str(out)]) == 0
    v = json.loads(out.read_text())
    assert v["schema"] == "onnxperf.validation/1" and v["measured_latency"]["n"] == 3
    ids = sorted(i for g in v["groups"] for i in g["original_node_ids"])
    assert ids == [0, 1, 2]  # every original node in exactly one group
    assert v["error_plain"]["n"] == 3 and v["error_calibrated"] is None
    assert v["predicted_latency_s"] > 0 and v["measured_latency"]["mean_s"] > 0


def test_validate_with_calibrated_spec_and_batches(mlp, tmp_path, capsys):
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), id="cal",
                               efficiency={"matmul.compute": 0.5, "default.memory": 0.5, "overhead_s": 1e-6})
    sp = tmp_path / "cal.toml"
    sp.write_text(to_toml(spec))
    assert cli.main(["validate", str(mlp), "--dim", "batch=2", "--hw", str(sp), "--runs", "2", "--warmup", "0",
                     "--batch", "1,2", "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["calibrated"] and v["error_calibrated"] is not None
    assert v["predicted_calibrated_latency_s"] != v["predicted_latency_s"]
    assert [b["batch"] for b in v["batches"]] == [1, 2]
    assert cli.main(["validate", str(mlp), "--dim", "batch=2", "--hw", str(sp), "--runs", "2"]) == 0
    assert "Calibrated" in capsys.readouterr().out


def test_validate_refuses_missing_weights_without_flag(tmp_path, capsys):
    w = const("w", [64, 64])
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [1, 64])], [vi("y", None)], [w])
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "gone.bin"
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["validate", str(p), "--hw", "t4", "--runs", "1"]) == 2
    assert "--random-weights" in capsys.readouterr().err
    assert cli.main(["validate", str(p), "--hw", "t4", "--runs", "1", "--warmup", "0", "--random-weights"]) == 0


def test_validate_needs_bound_dims(mlp, capsys):
    assert cli.main(["validate", str(mlp), "--hw", "t4"]) == 2
    assert "batch" in capsys.readouterr().err


def test_calibration_on_a_few_suite_ops():
    spec = load_spec("xeon-silver-4210x2")
    r = run_calibration(spec, runs=2, warmup=1, scale=1 / 16, only={"gemm_256", "add_tiny", "relu_4m"})
    assert {s.case for s in r.samples} == {"gemm_256", "add_tiny", "relu_4m"}
    assert all(s.measured_s > 0 for s in r.samples)
    assert r.efficiency["overhead_s"] > 0
    assert r.spec.id.endswith("-calibrated") and r.spec.efficiency == r.efficiency
