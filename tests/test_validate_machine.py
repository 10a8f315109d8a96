"""validate says when the spec does not describe the machine it measures on (issue 18, point 4):
in text, JSON and the report's warnings box."""

import json

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.hardware import load_spec
from onnxperf.hardware.spec import HardwareSpec
from onnxperf.products.validate.machine import mismatch, probed_machine

from .util import const, model, vi

CPU = ["CPUExecutionProvider"]


def _probed(model_name: str, cpus: int) -> HardwareSpec:
    """A spec as `hw probe` writes it: the CPU model and count lead its notes."""
    return HardwareSpec(id="probed", name=f"{model_name} (probed)", kind="cpu", peak_flops_per_s={"fp32": 1e11},
                        memory_bandwidth_bytes_per_s=2e10, memory_capacity_bytes=None,
                        sources={"fp32": "measured by onnxperf hw probe on 2026-11-23", "memory_bandwidth": "x"},
                        notes=f"{model_name}; {cpus} logical CPUs, {cpus} cores, 1 socket(s). theoretical ...")


@pytest.mark.parametrize("spec, providers, cpu, cpus, expect", [
    ("t4", CPU, "AMD EPYC", 2, "describes a GPU"),
    ("h100-sxm", CPU, "Intel(R) Xeon(R) Platinum 8480+", 224, "describes a GPU"),
    ("epyc-9654", ["CUDAExecutionProvider"], "AMD EPYC", 2, "describes a CPU"),
    ("epyc-9654", CPU, "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz", 8, "describes another machine"),
    ("epyc-9654", CPU, "AMD EPYC 9654 96-Core Processor", 192, None),
    ("apple-m2", CPU, "Apple M2", 8, None),
    ("apple-m2", CPU, "Apple M1 Pro", 10, "describes another machine"),
    ("t4", ["CUDAExecutionProvider"], "AMD EPYC", 2, None),
])
def test_presets(spec, providers, cpu, cpus, expect):
    got = mismatch(load_spec(spec), providers, cpu_model=cpu, logical_cpus=cpus)
    if expect is None:
        assert got == []
    else:
        assert len(got) == 1 and expect in got[0]


def test_probed_specs_compare_the_cpu_and_its_count():
    spec = _probed("AMD EPYC", 2)
    assert probed_machine(spec) == ("AMD EPYC", 2)
    assert mismatch(spec, CPU, cpu_model="AMD EPYC", logical_cpus=2) == []
    assert "2 logical CPUs; this machine has 8" in mismatch(spec, CPU, cpu_model="AMD EPYC", logical_cpus=8)[0]
    assert "another CPU ('AMD EPYC')" in mismatch(spec, CPU, cpu_model="Intel(R) Core(TM) i9-13900K",
                                                  logical_cpus=2)[0]
    assert probed_machine(load_spec("epyc-9654")) is None


@pytest.fixture()
def tiny(tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    m = model(nodes, [vi("x", ["batch", 32])], [vi("y", None)], [const("w", [32, 32], values=[0.01] * 1024)])
    p = tmp_path / "tiny.onnx"
    onnx.save(m, str(p))
    return p


def test_validate_warns_in_text_json_and_report(tiny, tmp_path, capsys):
    base = ["--hw", "t4", "--dim", "batch=1", "--runs", "2", "--warmup", "0"]
    assert cli.main(["validate", str(tiny), *base, "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert any("describes a GPU" in w for w in v["warnings"])
    assert cli.main(["validate", str(tiny), *base]) == 0
    assert "Warning    the spec describes a GPU" in capsys.readouterr().out
    out = tmp_path / "r.json"
    assert cli.main(["report", str(tiny), *base, "--validate", "--format", "json", "-o", str(out),
                     "--no-progress"]) == 0
    r = json.loads(out.read_text())
    assert any(w["code"] == "validation" and "describes a GPU" in w["message"] for w in r["warnings"])
    html = tmp_path / "r.html"
    assert cli.main(["report", str(tiny), *base, "--validate", "-o", str(html), "--no-progress"]) == 0
    page = html.read_text()
    assert "describes a GPU" in page and "No warnings" not in page
