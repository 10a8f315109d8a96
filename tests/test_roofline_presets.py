"""Roofline on the shipped presets: worked figures, the dtype picks the peak, summary --hw."""

import json

import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.hardware.spec import uncalibrated
from onnxperf import cli
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import COMPUTE, MEMORY, ridge_point, roofline

from .util import const, model, single, vi


def test_worked_ridges_from_presets():
    xeon = load_spec("xeon-silver-4210x2")
    assert xeon.peak_for("float32") == 960e9 and xeon.memory_bandwidth_bytes_per_s == 76.8e9
    assert ridge_point(xeon.peak_for("float32"), xeon.memory_bandwidth_bytes_per_s) == pytest.approx(12.5)
    gpu = uncalibrated(load_spec("rtx3090"))
    assert gpu.peak_for("float32") == pytest.approx(10496 * 1.7e9 * 2)
    assert round(ridge_point(gpu.peak_for("float32"), gpu.memory_bandwidth_bytes_per_s), 1) == 38.1


def test_fp16_model_uses_fp16_peak():
    t4 = uncalibrated(load_spec("t4"))
    m_, k, n = 2048, 2048, 2048
    r = roofline(onnxperf.analyze(single("MatMul", {"a": ([m_, k], TensorProto.FLOAT16),
                                                     "b": ([k, n], TensorProto.FLOAT16)})), t4)
    node = r.nodes[0]
    assert node.dtype == "float16" and node.bound == COMPUTE
    assert node.time_s == pytest.approx(2 * m_ * n * k / t4.peak_for("float16"))
    assert t4.peak_for("float16") == 65e12


def test_int8_ops_use_int8_peak():
    t4 = load_spec("t4:plain")  # the plain DRAM roofline
    m_, k, n = 1024, 1024, 1024
    r = roofline(onnxperf.analyze(single("MatMulInteger", {"a": ([m_, k], TensorProto.UINT8),
                                                           "b": ([k, n], TensorProto.INT8)})), t4)
    node = r.nodes[0]
    assert node.time_s == pytest.approx(max(2 * m_ * n * k / t4.peak_for("int8"),
                                            (m_ * k + k * n + 4 * m_ * n) / t4.memory_bandwidth_bytes_per_s))



def test_quantized_ops_with_float_scales_use_the_int8_peak():
    """QLinearMatMul takes float scales beside its uint8/int8 data: its integer ops run at the
    int8 peak (not the fp32 one), and its few float FLOPs (requantize) at the fp32 peak."""
    t4 = uncalibrated(load_spec("t4"))
    m_, k, n = 1024, 1024, 1024
    U8, I8, F = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT
    a = onnxperf.analyze(single("QLinearMatMul", {"a": ([m_, k], U8), "as": ([], F), "azp": ([], U8),
                                                  "b": ([k, n], I8), "bs": ([], F), "bzp": ([], I8),
                                                  "ys": ([], F), "yzp": ([], U8)}, opset=10))
    node, rec = roofline(a, t4).nodes[0], a.nodes[0]
    assert node.dtype == "uint8"
    compute_s = rec.int_ops / t4.peak_for("int8") + rec.flops / t4.peak_for("float32")
    memory_s = (rec.bytes_read + rec.bytes_written) / t4.memory_bandwidth_bytes_per_s
    assert node.time_s == pytest.approx(max(compute_s, memory_s))
    assert t4.peak_for("int8") == 130e12 and t4.peak_for("uint8") == t4.peak_for("int8")
    # the integer ops dominate: at the fp32 peak this node would take ~16x longer
    assert rec.int_ops > 100 * rec.flops

def test_memory_bound_at_batch_1_compute_bound_at_large_batch():
    # a Gemm layer: weights dominate traffic at batch 1, compute dominates at large batch
    h = 1024
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, h])])
    spec = load_spec("xeon-silver-4210x2")
    small = roofline(onnxperf.analyze(m, dims={"batch": 1}), spec).nodes[0]
    large = roofline(onnxperf.analyze(m, dims={"batch": 512}), spec).nodes[0]
    assert small.bound == MEMORY and large.bound == COMPUTE


def test_summary_hw_json_and_unknown_preset(tmp_path, capsys):
    h = 64
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
              [vi("x", ["batch", h])], [vi("z", None)], [const("w", [h, h])])
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["summary", str(p), "--dim", "batch=4", "--hw", "a100-80gb", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    r = d["roofline"]
    assert r["hardware"] == "a100-80gb" and r["batch"] == 4
    assert r["latency_s"] == pytest.approx(sum(n["time_s"] for n in r["nodes"]))
    assert r["throughput_items_per_s"] == pytest.approx(4 / r["latency_s"])
    # 4x64 by 64x64 on an A100: 2 µs of launch is more than the work, so the MatMul is dispatch-bound;
    # the Relu is its epilogue (no kernel of its own): the MatMul's row carries the kernel, the Relu's none
    mm_row = next(n for n in r["nodes"] if n["key"] == "0")
    assert mm_row["dispatch_s"] > 0 and mm_row["dispatch_s"] >= mm_row["time_s"] - mm_row["dispatch_s"]
    assert mm_row["bound"] == "dispatch" and mm_row["runs"] == "own"
    relu_row = next(n for n in r["nodes"] if n["key"] == "1")
    assert relu_row["runs"] == "inside" and relu_row["kernel"] == "0" and relu_row["dispatch_s"] == 0
    assert relu_row["time_s"] == 0 and relu_row["bytes"] == 0
    # per op type: the nodes' figures summed, one row per op type, shares of the node time
    spec = uncalibrated(load_spec("a100-80gb"))
    by_node = {n["key"]: n for n in r["nodes"]}
    rows = {o["op_type"]: o for o in r["by_op_type"]}
    assert set(rows) == {"MatMul", "Relu"} and sum(o["share"] for o in rows.values()) == pytest.approx(1)
    assert sum(o["time_s"] for o in rows.values()) == pytest.approx(r["latency_s"] - r["run_overhead_s"])
    mm, relu = rows["MatMul"], rows["Relu"]
    assert (mm["ops"], mm["bytes"], mm["time_s"]) == (by_node["0"]["ops"], by_node["0"]["bytes"],
                                                      pytest.approx(by_node["0"]["time_s"]))
    assert mm["ops"] == 2 * 4 * h * h and mm["intensity"] == pytest.approx(mm["ops"] / mm["bytes"])
    assert mm["ops_per_s"] == pytest.approx(mm["ops"] / mm["time_s"])
    # tiny layers on an A100: the MatMul's launch outweighs its work (dispatch-bound); the preset's GPU
    # kernel model runs the Relu in the MatMul's epilogue: the kernel reads x and w and writes z (y stays on
    # chip), its row the MatMul's; the Relu runs inside it at no time of its own
    assert mm["bound"] == "dispatch" and relu["bound"] == "none" and relu["time_s"] == 0
    gpu = load_spec("a100-80gb")
    assert gpu.memory_levels and relu["bytes"] == 0 and mm["bytes"] == (4 * h + h * h) * 4 + 4 * h * 4
    # the text output prints the same roofline
    assert cli.main(["summary", str(p), "--dim", "batch=4", "--hw", "a100-80gb"]) == 0
    text = capsys.readouterr().out
    assert "Roofline on" in text and "[a100-80gb]" in text and "Predicted latency" in text
    assert "By op type" in text and "Top nodes by predicted time" in text
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("By op type") and "pred. time" in ln) + 1
    assert [ln.split()[0] for ln in lines[start:start + 2]] == [o["op_type"] for o in r["by_op_type"]]
    assert cli.main(["summary", str(p), "--dim", "batch=4", "--hw", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
