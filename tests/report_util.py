"""Models and helpers shared by the report tests (fast and browser)."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import helper

from onnxperf.analysis.compose import compose
from onnxperf.analysis.result import Analysis
from onnxperf.cost.request import Request

from .util import const, model, vi

MODELS = Path(__file__).resolve().parent.parent / "models"
RESNET = MODELS / "resnet50_torch.onnx"

#: the two strings of the issue, verbatim, plus variants that would set a flag instead of a dialog
SCRIPT_NAME = "</script><script>alert(1)</script>"
IMG_NAME = "<img src=x onerror=alert(1)>"
FLAG_SCRIPT = "</script><script>window.__xss=1</script>"
FLAG_IMG = '<img src=x onerror="window.__xss=1">'
FLAG_SVG = '"><svg onload="window.__xss=1">'


class FakeSpec:
    """A hardware spec with round figures (the duck type onnxperf.predict.roofline needs)."""

    id = "fake-gpu"
    name = "Fake GPU <b>test</b>"
    memory_bandwidth_bytes_per_s = 1e12
    efficiency: dict = {}

    def peak_for(self, dtype: str) -> float:
        return {"float16": 80e12, "int8": 160e12}.get(dtype, 40e12)


def spec():
    """The rtx3090 preset when onnxperf.hardware ships it, else FakeSpec."""
    try:
        from onnxperf.hardware import load_spec

        return load_spec("rtx3090")
    except Exception:  # noqa: BLE001 - hardware presets not available in this checkout
        return FakeSpec()


def summary_of(m, dims=None, hw=None) -> Analysis:
    return compose(Request(m, dims=dict(dims or {}), hw=hw))


def injection_model() -> onnx.ModelProto:
    """Names from an untrusted file: script-closing and event-handler strings in a node name, a
    tensor name, an input, an output, the producer, the graph name and an unsupported op type."""
    nodes = [
        helper.make_node("Relu", [IMG_NAME], [FLAG_IMG], name=SCRIPT_NAME),
        helper.make_node("MatMul", [FLAG_IMG, "w"], ["h"], name=FLAG_SCRIPT),
        helper.make_node("Add", ["h", "b"], [FLAG_SVG], name=IMG_NAME),
        helper.make_node("<b onmouseover=alert(1)>Evil</b>", [FLAG_SVG], ["y"], name=FLAG_SVG,
                         domain="evil.<i>domain</i>"),
    ]
    m = model(nodes, [vi(IMG_NAME, ["batch", 8])], [vi("y", None)], [const("w", [8, 4]), const("b", [4])],
              extra_opsets={"evil.<i>domain</i>": 1})
    m.producer_name = FLAG_SCRIPT
    m.producer_version = IMG_NAME
    m.graph.name = FLAG_SVG
    return m


def report_model(m, dims=None, hw=None, validation=None, options=None):
    from onnxperf.products.report import build_report

    return build_report(summary_of(m, dims, hw), validation, options or {"dims": dims or {}})


class FakeValidation:
    """What --validate will hand to build_report: per-node measured times and the end-to-end latency."""

    def __init__(self, keys_times: dict[str, float], latency_s: float, errors=None) -> None:
        self.node_times_s = keys_times
        self.latency_s = latency_s
        self.provider = "CPUExecutionProvider"
        self.runs = 10
        if errors is not None:
            self.errors = errors
