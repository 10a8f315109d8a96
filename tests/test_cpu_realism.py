"""The published CPU figures (benchmarks/published/cpu_inference.json) and the CPU realism benchmark
(benchmarks/cpu_realism.py): every entry is sourced, names a CPU preset that exists and a model shipped
here, and its value is the number its quote shows; the per-socket time, the batch an entry is predicted at
and the bandwidth solver are checked on hand-built cases; and on two published rows the plain roofline's
arithmetic alone (and, on the row the benchmark finds the bound holding on, the plain roofline itself) is
below the published time. Two summaries in all."""
import json
import re
from pathlib import Path

import pytest

from onnxperf.hardware.files import load_preset

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "benchmarks" / "published" / "cpu_inference.json"


def _module(name: str, file: str):
    return benchmark(file, name)


R = _module("onnxperf_bench_cpu_realism", "cpu_realism.py")
DATA = json.loads(PUBLISHED.read_text())
ENTRIES = R.entries()


def test_file_loads_with_notes_and_entries():
    assert DATA["schema"] == "onnxperf.published-cpu/1"
    assert DATA["notes"] and all(isinstance(n, str) and n for n in DATA["notes"])
    assert len(ENTRIES) == len(DATA["entries"]) > 0


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e['_id']}-{e['device']}-{e['model']}-{e['precision']}")
def test_every_entry_is_sourced(e):
    s = e["source"]
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", s["repo"]) and s["path"]
    assert re.fullmatch(r"[0-9a-f]{40}", s["commit"])
    assert s["url"] == f"https://github.com/{s['repo']}/blob/{s['commit']}/{s['path']}"
    assert s["date"] and s["quoted"]
    # the number is the one written in the quoted text, nothing computed but its parse
    assert e["value_as_written"] in s["quoted"]
    assert e["value"] == float(e["value_as_written"]) > 0
    assert e["metric"] == "samples_per_s"
    assert isinstance(e["sockets"], int) and e["sockets"] >= 1
    assert e["precision"] in ("fp32", "bf16", "int8")
    assert e["scenario"] in ("instances", "throughput_mode", "mlperf_offline", "mlperf_server")
    assert e["work"] in ("exact", "upper_bound")
    assert e["runtime_class"] in ("onnxruntime", "openvino", "mlperf") and e["runtime"]
    assert R.MODELS[e["model"]].exists()
    assert (e.get("seq_len") is not None) == e["model"].startswith("bert")
    if e["scenario"] == "instances":
        assert e["concurrency_per_socket"] >= 1 and e["batch"] >= 1


def test_devices_are_cpu_presets():
    cpus = set(R.cpu_presets())
    assert {"xeon-8480plus", "xeon-6980p", "epyc-9654", "graviton3"} <= cpus
    for e in ENTRIES:
        assert e["device"] in cpus and load_preset(e["device"]).kind == "cpu"


def test_published_time_is_per_socket():
    e = {"metric": "samples_per_s", "sockets": 2, "value": 20000.0}
    assert R.published_time(e) == pytest.approx(2 / 20000.0)
    assert R.published_time({**e, "sockets": 1}) == pytest.approx(1 / 20000.0)
    with pytest.raises(ValueError):
        R.published_time({**e, "metric": "latency_s"})


def test_batches_stated_instances_else_the_grid():
    assert R.batches({"concurrency_per_socket": 14, "batch": 1}) == (14,)
    assert R.batches({"concurrency_per_socket": 7, "batch": 2}) == (14,)
    assert R.batches({"concurrency_per_socket": None, "batch": None}) == R.GRID


def test_required_bandwidth_scale():
    c, m = (1.0, 1.0), (2.0, 4.0)  # at s: max(1, 2/s) + max(1, 4/s)
    assert R.required_bandwidth_scale(c, m, 6.0) == 1.0  # already holds
    assert R.required_bandwidth_scale(c, m, 4.0) == pytest.approx(1.5, rel=1e-9)  # 2/s + 4/s = 4
    assert R.required_bandwidth_scale(c, m, 2.5) == pytest.approx(4 / 1.5, rel=1e-9)  # 1 + 4/s = 2.5
    assert R.required_bandwidth_scale(c, m, 1.9) is None  # Σ c = 2 > 1.9: no bandwidth is enough


def _row(runtime: str, precision: str, value: float) -> dict:
    (e,) = [e for e in ENTRIES if e["device"] == "xeon-8480plus" and e["model"] == "resnet50"
            and e["runtime"].startswith(runtime) and e["precision"] == precision and e["value"] == value]
    return e


def test_int8_onnxruntime_row_is_above_the_plain_roofline():
    # Neural Compressor, ONNX Runtime 1.18.1, 14 batch-1 instances on one 8480+ socket, INT8 QLinearOps
    e = _row("ONNX Runtime 1.18.1", "int8", 1495.72)
    assert e["precision_note"].startswith("INT8 static quantization, QLinearOps") and R.batches(e) == (14,)
    assert "torchvision.models.resnet50" in e["model_note"]
    r = R.evaluate(e)
    assert r["batch_pred"] == 14 and r["t_pub"] == pytest.approx(1 / 1495.72)
    assert r["t_pred"] < r["t_pub"] and r["ratio"] > 1
    assert r["compute_ratio"] > r["ratio"]  # the arithmetic alone is a smaller part still


def test_fp32_onnxruntime_row_is_above_the_compute_floor():
    # the same table's FP32 column: the preset's fp32 peak (base clock) is not exceeded by the run
    e = _row("ONNX Runtime 1.18.1", "fp32", 715.94)
    assert "torchvision.models.resnet50" in e["model_note"]
    r = R.evaluate(e)
    spec = load_preset("xeon-8480plus")
    floor = r["t_pub"] / r["compute_ratio"]
    macs = 4_089_184_256  # ResNet-50 v1.5 at 224x224, batch 1 (models/resnet50_torch.onnx)
    assert floor == pytest.approx(2 * macs / spec.peak_flops_per_s["fp32"], rel=0.01)
    assert floor < r["t_pub"]
