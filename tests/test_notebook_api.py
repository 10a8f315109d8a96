"""The notebook API (issue 19, point 1): ``analyze(..., hw=, memory=, precision=)`` and
``onnxperf.report.html``."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from onnx import helper

import onnxperf
from onnxperf import cli, report
from onnxperf.analysis import to_dict as analysis_dict
from onnxperf.errors import OptionError
from onnxperf.hardware import load_spec, to_toml
from onnxperf.roofline import roofline
from onnxperf.summary import summarize

from .util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "models" / "resnet50_torch.onnx"

# a Conv (bias, 'same' padding) then a Relu, on a batch left symbolic in the file
CIN, COUT, HW, K = 3, 8, 16, 3


def conv_model(name: str = "conv", extra=()) -> "onnx.ModelProto":  # noqa: F821
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name=name, pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu"), *extra]
    out = "z" if extra else "y"
    return model(nodes, [vi("x", ["batch", CIN, HW, HW])], [vi(out, None)],
                 [const("w", [COUT, CIN, K, K]), const("b", [COUT])])


def conv_macs(batch: int) -> int:
    return batch * COUT * HW * HW * CIN * K * K


def conv_flops(batch: int) -> int:
    return 2 * conv_macs(batch) + batch * COUT * HW * HW  # + the bias add


def partial_model():
    """The conv model followed by an op no rule knows: totals are lower bounds."""
    return conv_model(extra=[helper.make_node("Frobnicate", ["y"], ["z"], name="mystery", domain="com.example")])


# ------------------------------------------------------------------------------------ analyze(hw=)

def test_plain_analyze_carries_nothing_more():
    a = onnxperf.analyze(conv_model(), dims={"batch": 2})
    assert (a.memory, a.spec, a.roofline, a.largest, a.precision, a.options) == (None, None, None, None, None, ())
    assert a.totals.macs == conv_macs(2)
    assert a.to_dict() == analysis_dict(a)  # the analysis/1 contract, no section added
    assert a.batch == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.roofline = None  # type: ignore[misc]


@pytest.mark.parametrize("batch", [1, 4])
def test_hw_adds_the_roofline_and_memory_and_leaves_the_costs(batch):
    m = conv_model()
    plain = onnxperf.analyze(m, dims={"batch": batch})
    a = onnxperf.analyze(m, dims={"batch": batch}, hw="t4")
    assert a.totals == plain.totals and a.nodes == plain.nodes
    assert a.main_nodes[0].macs == conv_macs(batch) and a.main_nodes[0].flops == conv_flops(batch)
    assert a.spec.id == "t4"
    assert a.roofline == roofline(plain, load_spec("t4"))
    assert a.roofline.latency_s > 0
    # x, the conv's output and the relu's: the peak holds at least the conv's input and output
    x_bytes, c_bytes = batch * CIN * HW * HW * 4, batch * COUT * HW * HW * 4
    assert a.memory.peak_bytes >= x_bytes + c_bytes
    assert a.memory.weight_bytes == (COUT * CIN * K * K + COUT) * 4
    assert a.largest is None and a.precision is None
    assert dict(a.options)["hw"] == "t4"


def test_hw_as_a_spec_object_or_a_spec_file_gives_the_same_roofline(tmp_path):
    m = conv_model()
    spec = load_spec("t4")
    path = tmp_path / "t4.toml"
    path.write_text(to_toml(spec), encoding="utf-8")
    by_id = onnxperf.analyze(m, dims={"batch": 2}, hw="t4")
    by_obj = onnxperf.analyze(m, dims={"batch": 2}, hw=spec)
    by_file = onnxperf.analyze(m, dims={"batch": 2}, hw=path)
    by_text = onnxperf.analyze(m, dims={"batch": 2}, hw=str(path))
    assert by_obj.roofline == by_id.roofline
    assert by_file.roofline.latency_s == by_text.roofline.latency_s == pytest.approx(by_id.roofline.latency_s)
    assert dict(by_obj.options)["hw"] == "t4" and dict(by_file.options)["hw"] == str(path)


def test_memory_budget_gives_the_largest_batch_that_fits():
    m = conv_model()
    budget = 64 << 20
    a = onnxperf.analyze(m, dims={"batch": 1}, memory="64MiB")
    f = a.largest
    assert f.dim == "batch" and f.budget_bytes == budget
    assert f.total_bytes <= budget < f.next_total_bytes
    # the total at the answer is the analysis's own at that batch: weights + activation peak
    at = onnxperf.analyze(m, dims={"batch": f.value}, memory=budget)
    assert at.memory.total_bytes == f.total_bytes
    assert at.memory.total_bytes == at.memory.weight_bytes + at.memory.peak_bytes
    assert a.roofline is None and a.spec is None
    assert summarize(m, dims={"batch": 1}, memory_budget=budget).largest == f


def test_precision_is_the_what_if_of_the_summary():
    m = conv_model()
    a = onnxperf.analyze(m, dims={"batch": 2}, precision="fp16", hw="t4")
    sm = summarize(m, dims={"batch": 2}, precision="fp16", hw="t4")
    assert a.precision.name == "fp16"
    assert a.totals == sm.analysis.totals and a.roofline == sm.roofline and a.memory == sm.memory
    assert a.totals.param_bytes == (COUT * CIN * K * K + COUT) * 2


@pytest.mark.parametrize("kw, what", [
    ({"hw": 3}, "hw=3"), ({"memory": 0}, "memory=0"), ({"memory": True}, "memory=True"),
    ({"memory": "lots"}, "bad size"), ({"precision": "fp7"}, "fp7"), ({"hw": "no-such-gpu"}, "no-such-gpu"),
])
def test_bad_deployment_options_are_option_errors(kw, what):
    with pytest.raises(OptionError, match=re.escape(what)):
        onnxperf.analyze(conv_model(), dims={"batch": 1}, **kw)


def test_to_json_with_hw_is_the_summary_commands_json(tmp_path):
    out = tmp_path / "s.json"
    assert cli.main(["summary", str(RESNET), "--dim", "batch=1", "--hw", "t4", "--memory", "8GiB",
                     "--format", "json", "-o", str(out)]) == 0
    a = onnxperf.analyze(str(RESNET), dims={"batch": 1}, hw="t4", memory="8GiB")
    assert a.to_json() == out.read_text(encoding="utf-8")
    d = a.to_dict()
    assert d["roofline"]["hardware"] == "t4" and d["memory"]["activation_peak_bytes"] == a.memory.peak_bytes


# ---------------------------------------------------------------------------------- report.html()

@pytest.mark.parametrize("argv, kw", [
    ([], {}),
    (["--dim", "batch=1", "--hw", "rtx3090", "--memory", "8GiB"], {"dims": {"batch": 1}, "hw": "rtx3090",
                                                                  "memory": "8GiB"}),
    (["--dim", "batch=2", "--hw", "t4", "--precision", "fp16"], {"dims": {"batch": 2}, "hw": "t4",
                                                                "precision": "fp16"}),
])
def test_report_html_is_the_page_the_report_command_writes(tmp_path, argv, kw):
    out = tmp_path / "r.html"
    assert cli.main(["report", str(RESNET), *argv, "-o", str(out), "--no-progress"]) == 0
    assert report.html(onnxperf.analyze(str(RESNET), **kw)) == out.read_text(encoding="utf-8")


def test_report_html_of_a_decoder_step_has_the_llm_section(tmp_path):
    gpt2 = ROOT / "models" / "corpus" / "gpt2_decode_legacy.onnx"
    out = tmp_path / "r.html"
    assert cli.main(["report", str(gpt2), "--hw", "a100-80gb", "-o", str(out), "--no-progress"]) == 0
    page = report.html(onnxperf.analyze(str(gpt2), hw="a100-80gb"))
    assert page == out.read_text(encoding="utf-8") and 'id="llm"' in page
