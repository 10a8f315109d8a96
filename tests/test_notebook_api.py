"""The notebook API (issue 19, point 1): ``analyze(..., hw=, memory=, precision=)``,
``Analysis._repr_html_``, ``Analysis.to_dataframe`` and ``onnxperf.report.html``, and the notebook in
docs/ that shows them, run cell by cell."""

from __future__ import annotations

import ast
import dataclasses
import html as htmllib
import json
import re
import sys
from pathlib import Path

import pytest
from onnx import helper

import onnxperf
from onnxperf import cli
from onnxperf.products import report
from onnxperf.cost.analysis import to_dict as analysis_dict
from onnxperf.base.errors import OptionError
from onnxperf.hardware import load_spec, to_toml
from onnxperf.ui.numbers import binary_bytes, lower_bound, si
from onnxperf.predict.roofline import roofline
from onnxperf.analysis.compose import summarize

from .report_util import FLAG_IMG, FLAG_SCRIPT, FLAG_SVG, IMG_NAME, SCRIPT_NAME, injection_model
from .util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "models" / "resnet50_torch.onnx"
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"

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

def test_plain_analyze_carries_its_memory_and_nothing_more():
    """One result, one schema: a plain analysis is what `onnxperf summary` prints (costs and activation
    memory); the roofline, the largest fit and the precision only when asked for."""
    a = onnxperf.analyze(conv_model(), dims={"batch": 2})
    assert a.memory is not None and a.memory.complete
    assert (a.spec, a.roofline, a.largest, a.precision, a.bottlenecks) == (None, None, None, None, None)
    assert a.totals.macs == conv_macs(2)
    assert a.to_dict() == {**analysis_dict(a), "memory": a.memory.to_dict()}  # the analysis/1 contract
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
    assert a.totals == sm.totals and a.roofline == sm.roofline and a.memory == sm.memory
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


# ------------------------------------------------------------------------------------------ HTML

def _text(fragment: str) -> str:
    """The fragment's visible text, entities decoded."""
    fragment = re.sub(r"<style>.*?</style>", "", fragment, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_repr_html_cards_tables_and_nothing_external():
    a = onnxperf.analyze(conv_model(), dims={"batch": 2})
    h = a._repr_html_()
    assert h.startswith("<div class=\"onnxperf-nb\">") and h.rstrip().endswith("</div>")
    text = _text(h)
    for figure in (si(conv_macs(2)), f"{conv_macs(2):,}", si(a.totals.flops), f"{a.totals.flops:,}",
                   binary_bytes(a.totals.bytes_read), "100.0%", "2/2 nodes by exact rules"):
        assert figure in text
    assert "By op type" in text and "Top 2 nodes by FLOPs" in text
    assert "Predicted latency" not in text  # no hw: no roofline card
    low = h.lower()
    assert "<script" not in low and "http" not in low and " src=" not in low and "<link" not in low
    assert "None: every node is costed" in text


def test_repr_html_with_hw_adds_latency_memory_and_slowest_nodes():
    a = onnxperf.analyze(conv_model(), dims={"batch": 2}, hw="t4", memory="1GiB")
    text = _text(a._repr_html_())
    for label in ("Predicted latency", "Peak activations", "Total memory", "Largest batch", "Slowest nodes on t4"):
        assert label in text
    assert binary_bytes(a.memory.peak_bytes) in text and f"{a.largest.value:,}" in text


def test_partial_totals_read_as_lower_bounds_as_in_the_text_output():
    a = onnxperf.analyze(partial_model(), dims={"batch": 2})
    t = a.totals
    assert not t.complete and t.macs == conv_macs(2)
    text = _text(a._repr_html_())
    # the text output's lower_bound, as `onnxperf summary` prints the totals
    for value in (t.macs, t.flops):
        assert lower_bound(si(value), value, True) == f"≥ {si(value)} (partial)"
        assert f"≥ {si(value)} (partial)" in text
    assert "Not costed: 1 node: com.example::Frobnicate ×1" in text
    assert "com.example::Frobnicate *" in text  # the op-type row is flagged, its figures unknown
    assert "Unsupported ops are not counted" in text


def test_unbound_dims_are_unknown_not_zero_and_say_how_to_bind_them():
    a = onnxperf.analyze(conv_model(), default_batch=False)  # the batch left symbolic, as asked
    text = _text(a._repr_html_())
    assert "unknown" in text and "MACs 0" not in text
    assert "dims={'batch': N}" in text and "--dim batch=N" in text


def test_hostile_names_are_escaped():
    a = onnxperf.analyze(injection_model(), dims={"batch": 2}, hw="t4")
    h = a._repr_html_()
    for raw in (SCRIPT_NAME, IMG_NAME, FLAG_SCRIPT, FLAG_IMG, FLAG_SVG, "<b onmouseover", "<i>domain</i>"):
        assert raw not in h
    assert "<script" not in h.lower() and "onerror=" in htmllib.unescape(h)
    assert htmllib.escape(IMG_NAME, quote=False) in h or htmllib.escape(IMG_NAME) in h
    # a bidi override in a name cannot reorder the page: shown as its escape
    m = conv_model(name="abc\u202edef")
    assert "\u202e" not in onnxperf.analyze(m, dims={"batch": 1})._repr_html_()


def test_repr_pretty_is_one_line():
    class Printer:
        def __init__(self):
            self.out = []

        def text(self, s):
            self.out.append(s)

    p = Printer()
    a = onnxperf.analyze(partial_model(), dims={"batch": 2}, hw="t4")
    a._repr_pretty_(p, False)
    (line,) = p.out
    assert "\n" not in line and f"MACs ≥ {si(conv_macs(2))} (partial)" in line and "on t4" in line


# ------------------------------------------------------------------------------------- DataFrames

def test_nodes_frame_is_typed_and_unknown_is_na():
    pd = pytest.importorskip("pandas")
    a = onnxperf.analyze(partial_model(), dims={"batch": 2})
    df = a.to_dataframe("nodes")
    assert list(df["op_type"]) == ["Conv", "Relu", "Frobnicate"]
    assert str(df["macs"].dtype) == "Int64" and str(df["intensity_flops_per_byte"].dtype) == "Float64"
    assert str(df["exact"].dtype) == "boolean" and str(df["status"].dtype) == "category"
    assert isinstance(df["name"].dtype, pd.StringDtype)
    conv = df.iloc[0]
    assert conv["macs"] == conv_macs(2) and conv["flops"] == conv_flops(2)
    assert conv["params"] == COUT * CIN * K * K + COUT
    mystery = df.iloc[2]
    assert mystery["status"] == "unsupported"
    for c in ("macs", "flops", "int_ops", "bytes_read", "bytes_written", "intensity_flops_per_byte"):
        assert mystery[c] is pd.NA  # unknown, not 0
    assert df["macs"].isna().sum() == 1
    assert "predicted_s" not in df.columns


def test_op_types_frame_leaves_incomplete_rows_unknown():
    pd = pytest.importorskip("pandas")
    a = onnxperf.analyze(partial_model(), dims={"batch": 2})
    df = a.to_dataframe("op_types").set_index("op_type")
    assert df.loc["Conv", "macs"] == conv_macs(2) and df.loc["Conv", "count"] == 1
    assert bool(df.loc["Conv", "complete"]) and not bool(df.loc["Frobnicate", "complete"])
    assert df.loc["Frobnicate", "flops"] is pd.NA and df.loc["Frobnicate", "flops_share"] is pd.NA
    assert df.loc["Frobnicate", "unsupported"] == 1 and df.loc["Frobnicate", "domain"] == "com.example"
    assert df.loc["Conv", "flops_share"] == pytest.approx(conv_flops(2) / a.totals.flops)


def test_frames_with_hw_carry_the_predicted_times():
    pytest.importorskip("pandas")
    a = onnxperf.analyze(conv_model(), dims={"batch": 2}, hw="t4")
    nodes, ops = a.to_dataframe(), a.to_dataframe("op_types")
    rl = a.roofline
    assert nodes["predicted_s"].sum() == pytest.approx(rl.latency_s - rl.run_overhead_s)
    assert list(nodes["bound"]) == [n.bound for n in rl.nodes]
    assert ops["predicted_share"].sum() == pytest.approx(1.0)


def test_bad_kind_names_the_kinds():
    with pytest.raises(OptionError, match="nodes, op_types"):
        onnxperf.analyze(conv_model(), dims={"batch": 1}).to_dataframe("edges")


def test_without_pandas_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # what `import pandas` sees when it is not installed
    a = onnxperf.analyze(conv_model(), dims={"batch": 1})
    with pytest.raises(ImportError, match=re.escape('pip install "onnxperf[notebook]"')):
        a.to_dataframe()
    assert "onnxperf-nb" in a._repr_html_()  # the rest of the API does not need pandas


# ---------------------------------------------------------------------------------- report.html()

@pytest.mark.parametrize("argv, kw", [
    ([], {"default_batch": True}),  # the command line sets an unbound batch to 1; the API when asked
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
    page = report.html(onnxperf.analyze(str(gpt2), hw="a100-80gb", default_batch=True))
    assert page == out.read_text(encoding="utf-8") and 'id="llm"' in page


# -------------------------------------------------------------------------------- docs/notebook

def _cells(kind: str) -> list[str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def test_notebook_is_nbformat_4_with_outputs_cleared():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert all(isinstance(c["source"], list) for c in nb["cells"])


def run_notebook(path: Path) -> tuple[dict, list]:
    """Run the code cells in order, in one namespace, in the notebook's folder, as a kernel would:
    a cell's last expression is displayed (its ``_repr_html_`` when it has one, else ``repr``)."""
    ns: dict = {"__name__": "__main__"}
    shown: list = []
    for src in _cells("code"):
        tree = ast.parse(src)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, str(path), "exec"), ns)  # noqa: S102 - our own docs
        if last is not None:
            value = eval(compile(ast.Expression(last.value), str(path), "eval"), ns)  # noqa: S307
            if value is not None:
                shown.append(value._repr_html_() if hasattr(value, "_repr_html_") else repr(value))
    return ns, shown


def test_notebook_runs_and_shows_what_it_says(monkeypatch):
    pd = pytest.importorskip("pandas")
    monkeypatch.chdir(NOTEBOOK.parent)
    ns, shown = run_notebook(NOTEBOOK)
    a, b = ns["a"], ns["b"]
    plain = onnxperf.analyze(str(RESNET), dims={"batch": 1})
    assert a.totals == plain.totals and a.roofline is None
    assert any("onnxperf-nb" in s and "4.09 G" in s for s in shown)  # the analysis displayed
    assert isinstance(ns["nodes"], pd.DataFrame) and len(ns["nodes"]) == len(plain.nodes)
    assert b.spec.id == "rtx3090" and b.largest is not None and b.memory is not None
    assert any("Predicted latency" in s for s in shown if isinstance(s, str))
    assert ns["page"] == report.html(b)
    # the report cell shows the page itself (in a frame), not its length
    assert any(isinstance(s, str) and s.startswith('<iframe title="onnxperf report"') and "srcdoc=" in s for s in shown)
    assert "partial" in _text(ns["bert"]._repr_html_())


def test_op_type_times_go_by_domain_and_a_partial_row_is_a_lower_bound():
    """A Gelu and a com.microsoft::Gelu each get their own time (they had each other's too: the
    predicted shares added up to 1.67), and an op type with a node the roofline could not time is
    NA in the DataFrame and ≥ in the display."""
    from onnx import TensorProto

    nodes = [helper.make_node("Gelu", ["x"], ["a"]), helper.make_node("Gelu", ["a"], ["b"], domain="com.microsoft"),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Mystery", ["c"], ["d"], domain="example.x"),
             helper.make_node("Relu", ["d"], ["e"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])],
                          [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1),
                                            helper.make_opsetid("example.x", 1)])
    a = onnxperf.analyze(m, hw="rtx3090:plain")
    from onnxperf.products.frames import op_type_times

    times = op_type_times(a)
    assert sum(t.share for t in times.values()) == pytest.approx(
        sum(r.share for r in a.roofline.nodes if r.share is not None))
    assert times[("", "Relu")].partial and not times[("", "Gelu")].partial
    pd = pytest.importorskip("pandas")
    df = a.to_dataframe("op_types").set_index(["domain", "op_type"])
    assert df["predicted_share"].sum() <= 1.0 + 1e-9
    assert df.loc[("", "Relu"), "predicted_s"] is pd.NA
    assert df.loc[("com.microsoft", "Gelu"), "predicted_s"] == pytest.approx(times[("com.microsoft", "Gelu")].time_s)
    html = a._repr_html_()
    relu = re.search(r"<tr>\s*<td[^>]*>Relu \*</td>(.*?)</tr>", html, re.S)
    assert relu and "≥" in relu.group(1)
