"""Issue 14.2, honest partial totals: an uncosted node makes every cost total a lower bound, and
every output says so; unknown is never printed as 0; --strict exits 1 on partial results; a dim
bound to <= 0 is refused; the unresolved-dims warning is a summary."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import onnx
import pytest

from onnxperf.ui.numbers import binary_bytes
from onnx import TensorProto, helper

from onnxperf import analyze
from onnxperf import cli
from onnxperf.base.errors import OptionError
from onnxperf.ui.numbers import lower_bound, upper_bound
from onnxperf.products.render.summary import RENDERERS
from onnxperf.products.report import build_report
from onnxperf.products.render.report import render_html, render_md
from onnxperf.analysis.compose import summarize

from .util import const, model, vi

REPO = Path(__file__).resolve().parent.parent
M, K, N = 4, 8, 16  # the costed MatMul: [M, K] @ [K, N]


def _partial_model() -> onnx.ModelProto:
    """A costed MatMul followed by an op no rule knows (its cost is unknown, not 0)."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Mystery", ["h"], ["y"], name="odd", domain="example.custom")]
    return model(nodes, [vi("x", [M, K])], [vi("y", [M, N])], [const("w", [K, N])],
                 extra_opsets={"example.custom": 1})


def _dynamic_model() -> onnx.ModelProto:
    """MatMul + Relu on a dynamic seq: nothing is costed until seq is bound."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Relu", ["h"], ["y"], name="relu")]
    return model(nodes, [vi("x", [1, "seq", K])], [vi("y", [1, "seq", N])], [const("w", [K, N])])


@pytest.fixture
def partial_path(tmp_path) -> str:
    p = tmp_path / "partial.onnx"
    onnx.save(_partial_model(), p)
    return str(p)


@pytest.fixture
def dynamic_path(tmp_path) -> str:
    p = tmp_path / "dynamic.onnx"
    onnx.save(_dynamic_model(), p)
    return str(p)


# ------------------------------------------------------------------------------ the analysis

def test_partial_totals_are_marked_and_name_the_uncosted_op_types():
    a = analyze(_partial_model())
    t, c = a.totals, a.coverage
    assert t.macs == M * K * N and not t.complete
    assert t.uncosted == (("example.custom::Mystery", 1),)
    assert t.uncosted_by_status == (("unsupported", (("example.custom::Mystery", 1),)),)
    assert t.intensity_flops_per_byte is None  # a ratio of two lower bounds is no bound
    assert c.flops_exact_share is None  # never "100% from exact rules" while a node is unknown
    d = a.to_dict()
    assert d["totals"]["complete"] is False
    assert d["totals"]["uncosted"] == {"example.custom::Mystery": 1}
    assert d["totals"]["uncosted_by_status"] == {"unsupported": {"example.custom::Mystery": 1}}
    assert d["coverage"]["flops_exact_share"] is None
    assert a.to_json() == analyze(_partial_model()).to_json()  # deterministic


def test_complete_totals_keep_their_figures():
    b = 3
    a = analyze(_dynamic_model(), dims={"seq": b})
    assert a.totals.complete and a.totals.uncosted == () and a.coverage.flops_exact_share == 1.0
    assert a.totals.macs == b * K * N
    d = a.to_dict()
    assert d["totals"]["complete"] is True and d["totals"]["uncosted"] == {}


def test_nothing_counted_is_not_100_percent_and_names_a_cause():
    """An input with no shape at all: no node is costed, the share is unknown, the cause named."""
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", None)], [vi("y", None)])
    a = analyze(m)
    assert a.coverage.unresolved_symbols == ("?",)
    assert a.coverage.flops_exact_share is None and a.coverage.inputs_to_shape == ("x",)
    sm = summarize(m)
    text = RENDERERS["text"](sm)
    assert "100.0% of FLOPs" not in text and "share of FLOPs from exact rules unknown" in text
    assert "graph input x has an unknown rank" in text and "--input-shape x=" in text
    assert "MACs          unknown" in text and "FLOPs         unknown" in text


def test_many_unresolved_dims_are_summarized_not_listed():
    """300 data-dependent sizes (unk__N): one line with how many, a few names, the cause, the fix.
    (StringSplit: the number of tokens has no upper bound the graph states; NonZero's, which has
    one, is bounded by the engine instead, see tests/test_shape_forward.py.)"""
    k = 300
    nodes, outs = [], []
    for i in range(k):
        nodes.append(helper.make_node("StringSplit", ["x"], [f"nz{i}", f"n{i}"], name=f"nz{i}"))
        nodes.append(helper.make_node("Cast", [f"nz{i}"], [f"c{i}"], name=f"cast{i}", to=TensorProto.FLOAT))
        outs.append(vi(f"c{i}", None))
    a = analyze(model(nodes, [vi("x", [2, 3], TensorProto.STRING)], outs, opset=20))
    syms = a.coverage.unresolved_symbols
    assert len(syms) == k and a.totals.uncosted == (("Cast", k),)
    assert dict(a.coverage.shapes_lost_at) == {"StringSplit": k}
    text = RENDERERS["text"](summarize(a.loaded))
    warn = [ln for ln in text.splitlines() if ln.startswith("Warning")]
    assert len(warn) == 1
    w = warn[0]
    assert f"{k} unresolved dims ({syms[0]}, {syms[1]}, {syms[2]} and {k - 3} more)" in w
    assert syms[10] not in w.split("more")[1] and w.count("unk__") <= 4
    assert "Likely cause: shapes are lost at StringSplit ×300" in w and "depends on input values" in w
    assert "Fix: no flag binds a data-dependent size" in w


def test_unbound_input_dims_name_the_flag():
    text = RENDERERS["text"](summarize(_dynamic_model()))
    assert "Unbound dims: seq: 2 nodes not costed (totals are partial); bind them: --dim seq=N" in text


# ------------------------------------------------------------------------------ summary outputs

def test_summary_text_of_a_dynamic_model_without_dim_never_prints_zero(dynamic_path, capsys):
    assert cli.main(["summary", dynamic_path]) == 0
    out = capsys.readouterr().out
    assert "Totals   (partial: lower bounds" in out
    for label in ("MACs", "FLOPs"):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(label + " "))
        assert line.split()[1] == "unknown", line
    assert "Not costed    2 nodes: MatMul ×1, Relu ×1 (unknown shape)" in out
    mm = next(ln for ln in out.splitlines() if ln.strip().startswith("MatMul "))
    assert mm.split()[2:4] == ["?", "?"] and mm.endswith("*")


def test_summary_text_shows_lower_bounds(partial_path, capsys):
    assert cli.main(["summary", partial_path]) == 0
    out = capsys.readouterr().out
    macs = M * K * N
    assert f"≥ {macs}  ({macs:,}) (partial)" in out
    assert "Not costed    1 node: example.custom::Mystery ×1 (unsupported)" in out
    assert "share of FLOPs from exact rules unknown" in out and "100.0% of FLOPs" not in out


def test_summary_md_and_json_and_csv(partial_path, capsys):
    assert cli.main(["summary", partial_path, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert f"| MACs | ≥ {M * K * N} (partial) |" in md
    assert "| Not costed | 1 node: example.custom::Mystery ×1 (unsupported) |" in md
    assert cli.main(["summary", partial_path, "--format", "json"]) == 0
    first = capsys.readouterr().out
    assert cli.main(["summary", partial_path, "--format", "json"]) == 0
    assert capsys.readouterr().out == first  # byte-identical
    d = json.loads(first)
    assert d["totals"]["complete"] is False and d["memory"]["complete"] in (True, False)
    assert cli.main(["summary", partial_path, "--format", "csv"]) == 0
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    odd = rows["odd"]
    assert odd["status"] == "unsupported"
    assert [odd[c] for c in ("macs", "flops", "int_ops", "bytes_read", "bytes_written")] == [""] * 5
    assert rows["mm"]["macs"] == str(M * K * N)


def test_lower_and_upper_bound_formatting():
    assert lower_bound("1.06 G", 1, False) == "1.06 G"
    assert lower_bound("1.06 G", 1, True) == "≥ 1.06 G (partial)"
    assert lower_bound("0", 0, True) == "unknown" and lower_bound("0", 0, True, short=True) == "?"
    assert upper_bound("99.8 k", 99800.0, True, short=True) == "≤ 99.8 k"


# ------------------------------------------------------------------------------ report

def test_report_html_and_md_show_partial(partial_path, dynamic_path):
    rep = build_report(summarize(partial_path))
    assert rep["totals"]["complete"] is False and rep["totals"]["uncosted"] == {"example.custom::Mystery": 1}
    html = render_html(rep)
    assert f"≥ {M * K * N} (partial)" in html and "not costed: 1 node: example.custom::Mystery" in html
    assert "share of FLOPs unknown" in html
    md = render_md(rep)
    assert f"| MACs / FLOPs | ≥ {M * K * N} (partial) / ≥ 1.02 k (partial) |" in md  # FLOPs = 2·M·K·N
    assert "| example.custom::Mystery | 1 | ? | ? | ? |" in md  # its share is unknown, not 0.0%
    dyn = render_html(build_report(summarize(dynamic_path)))
    assert '<div class="label">MACs</div><div class="value">unknown</div>' in dyn


# ------------------------------------------------------------------------------ sweep

def test_sweep_rows_past_the_models_limit_are_partial_not_zero(capsys):
    """BERT's position table has 512 rows: at sequence=1024 shapes are lost. That row used to
    print MACs 0 and a latency of a few µs."""
    bert = str(REPO / "models" / "bert_encoder_torch.onnx")
    argv = ["sweep", bert, "--dim", "batch=1", "--dim", "sequence=128,1024", "--hw", "t4", "--no-formulas"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.split()[:1] == ["1024"])
    cells = row.split()
    # MACs: unknown ("?") or a lower bound ("≥ ..."), never a bare figure, never 0
    assert cells[1] in ("?", "≥") and "(partial)" in row and " 0 " not in row
    assert "≥" in row and "≤" in row  # latency a lower bound, throughput an upper bound
    assert "sequence=1024:" in out and "nodes not costed" in out
    assert cli.main(argv + ["--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0]["complete"] and rows[0]["uncosted_nodes"] == 0
    assert not rows[1]["complete"] and rows[1]["uncosted_nodes"] > 0 and rows[1]["uncosted"]
    assert cli.main(argv + ["--format", "csv"]) == 0
    crow = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))[1]
    assert crow["complete"] == "False" and int(crow["uncosted_nodes"]) > 0 and crow["macs"] != "0"
    assert cli.main(argv + ["--strict"]) == 1


# ------------------------------------------------------------------------------ check and compare

def test_check_partial_headline_and_strict(partial_path, tmp_path, capsys):
    assert cli.main(["check", partial_path, "--no-pyproject"]) == 0
    out = capsys.readouterr().out
    assert f"MACs ≥ {M * K * N} (partial)" in out
    assert cli.main(["check", partial_path, "--no-pyproject", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "strict: figures are partial: not costed: 1 node: example.custom::Mystery" in out
    assert cli.main(["check", partial_path, "--no-pyproject", "--strict", "--format", "json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["exit_code"] == 1 and d["budget"]["strict"] is True
    assert d["models"][0]["figures"]["complete"] is False
    budget = tmp_path / "budget.toml"
    budget.write_text("strict = true\n")
    assert cli.main(["check", partial_path, "--budget", str(budget)]) == 1


def test_check_strict_passes_a_complete_model(dynamic_path, capsys):
    assert cli.main(["check", dynamic_path, "--no-pyproject", "--strict", "--dim", "seq=2"]) == 0


def test_compare_partial_totals_and_strict(partial_path, tmp_path, capsys):
    other = tmp_path / "other.onnx"
    onnx.save(_partial_model(), other)
    assert cli.main(["compare", partial_path, str(other)]) == 0
    out = capsys.readouterr().out
    macs = next(ln for ln in out.splitlines() if ln.startswith("MACs"))
    assert macs.split()[1:] == ["≥", f"{M * K * N}", "≥", f"{M * K * N}", "?", "?"]
    assert cli.main(["compare", partial_path, str(other), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "macs" in d["models"][0]["totals"]["partial"] and d["deltas"][0]["metrics"]["macs"]["partial"]
    assert cli.main(["compare", partial_path, str(other), "--format", "md"]) == 0
    assert f"| MACs | ≥ {M * K * N:,} | ≥ {M * K * N:,} | ? | ? |" in capsys.readouterr().out
    assert cli.main(["compare", partial_path, str(other), "--strict"]) == 1
    assert "--strict: results are partial: A: not costed" in capsys.readouterr().err


# ------------------------------------------------------------------------------ --strict and --dim

@pytest.mark.parametrize("cmd", [["summary"], ["report", "--format", "json"], ["summary", "--format", "csv"]])
def test_strict_exit_codes(cmd, dynamic_path, tmp_path, capsys):
    out = str(tmp_path / "out")
    argv = [cmd[0], dynamic_path, *cmd[1:], "-o", out]
    assert cli.main(argv) == 0
    assert cli.main(argv + ["--strict"]) == 1
    err = capsys.readouterr().err
    wrote = [ln for ln in err.splitlines() if ln.startswith("onnxperf: wrote ")]
    assert wrote == [f"onnxperf: wrote {out} ({binary_bytes(Path(out).stat().st_size)})"] * 2  # one per run
    err = "".join(ln for ln in err.splitlines(True) if ln.split(" (")[0] != f"onnxperf: wrote {out}")
    assert err.count("\n") == 1 and "not costed: 2 nodes" in err
    assert Path(out).exists()  # the output is written all the same
    assert cli.main(argv + ["--strict", "--dim", "seq=2"]) == 0


def test_sweep_strict_complete_exits_0(dynamic_path, capsys):
    assert cli.main(["sweep", dynamic_path, "--dim", "seq=1,2", "--strict", "--no-formulas"]) == 0


@pytest.mark.parametrize("value", ["0", "-1"])
@pytest.mark.parametrize("cmd", ["summary", "report", "check"])
def test_dim_bound_to_zero_or_less_is_refused(value, cmd, dynamic_path, tmp_path, capsys):
    argv = [cmd, dynamic_path, "--dim", f"seq={value}", "-o", str(tmp_path / "o")]
    if cmd == "check":
        argv.append("--no-pyproject")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'seq'" in err and "positive integer" in err
    assert not (tmp_path / "o").exists()


def test_dim_bound_to_zero_is_refused_by_the_api_and_budgets(dynamic_path, tmp_path, capsys):
    with pytest.raises(OptionError, match="seq=0"):
        analyze(_dynamic_model(), dims={"seq": 0})
    budget = tmp_path / "b.toml"
    budget.write_text("dims = { seq = 0 }\n")
    assert cli.main(["check", dynamic_path, "--budget", str(budget)]) == 2
    assert "dims.seq" in capsys.readouterr().err


def test_a_graph_without_flops_is_not_100_percent_exact(tmp_path, capsys):
    """Nothing to count (only data movement): no share of exact FLOPs is claimed, the text says
    there are none (issue 16, row 9), and the totals are complete."""
    from onnx import helper

    from onnxperf import cli

    m = model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])], [vi("x", [3, 5])], [vi("y", [5, 3])])
    a = analyze(m)
    assert a.totals.complete and a.totals.flops == 0
    assert a.coverage.flops_exact_share is None and a.coverage.unresolved_symbols == ()
    path = tmp_path / "t.onnx"
    onnx.save(m, path)
    assert cli.main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "no FLOPs to count" in out and "% of FLOPs" not in out
    assert cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), "--no-progress"]) == 0
    assert "no FLOPs to count" in (tmp_path / "r.html").read_text()
