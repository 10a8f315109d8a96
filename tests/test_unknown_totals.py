"""Unknown totals are None, never 0 (issue 28, item 12): where nothing of a cost figure was counted while
something was left out, :class:`onnxperf.cost.analysis.Totals` holds None, and every output reads it:
the API, JSON ``null``, text and Markdown ``unknown``, a check that cannot verify, compare and sweep
deltas that are unknown. A complete 0 stays 0, a partial non-zero figure stays a number (a lower bound)."""

from __future__ import annotations

import json
from dataclasses import replace

import onnx
import pytest
from onnx import helper

import onnxperf
from onnxperf import cli
from onnxperf.cost.analysis import FIGURES, Totals
from tests.util import const, model, vi

#: the dims every model here is built and bound with: x is [N, K], the MatMul weight [K, M]
N, K, M = 3, 8, 5
F32_BYTES = 4
#: a Relu over [N, K]: one FLOP and no MAC per element, reads and writes N·K floats
RELU_FLOPS, RELU_BYTES = N * K, N * K * F32_BYTES


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = cli.main([*argv, "--no-progress"])
    out, _ = capsys.readouterr()
    return rc, out


def _save(m: onnx.ModelProto, path) -> str:
    onnx.save(m, str(path))
    return str(path)


def _relu_then_unknown_domain() -> onnx.ModelProto:
    """Relu (counted: 0 MACs) then an op of a domain no rule knows (not costed): the MACs are unknown."""
    return model([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Mystery", ["h"], ["y"], domain="com.example")],
                 [vi("x", ["n", K])], [vi("y", None)], extra_opsets={"com.example": 1})


def _relu_then_unshaped_matmul() -> onnx.ModelProto:
    """Relu, then a MatMul whose second input has no shape at all: the one MAC-bearing node is not costed."""
    return model([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("MatMul", ["h", "w"], ["y"])],
                 [vi("x", ["n", K]), vi("w", None)], [vi("y", None)])


def _relu_only() -> onnx.ModelProto:
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["n", K])], [vi("y", None)])


def _matmul_then_unknown_domain() -> onnx.ModelProto:
    """A costed MatMul [N,K]·[K,M] then an op no rule knows: the MACs are a lower bound, N·K·M."""
    return model([helper.make_node("MatMul", ["x", "w"], ["h"]),
                  helper.make_node("Mystery", ["h"], ["y"], domain="com.example")],
                 [vi("x", ["n", K])], [vi("y", None)], [const("w", [K, M])], extra_opsets={"com.example": 1})


# ---------------------------------------------------------------------- the API

@pytest.mark.parametrize("build", [_relu_then_unknown_domain, _relu_then_unshaped_matmul])
def test_the_macs_of_a_model_whose_only_mac_node_is_not_costed_are_none(build):
    a = onnxperf.analyze(build(), dims={"n": N})
    t = a.totals
    assert t.complete is False and t.bound == "lower"
    assert t.macs is None and t.int_ops is None  # nothing of them counted: unknown, not 0
    # what was counted stays a number, a lower bound: the Relu's FLOPs and bytes
    assert t.flops == RELU_FLOPS and t.bytes_read == RELU_BYTES and t.bytes_written == RELU_BYTES
    assert t.bytes_total == 2 * RELU_BYTES
    assert t.intensity_flops_per_byte is None  # a ratio of two lower bounds is no bound
    assert "macs=unknown" in repr(a) and f"flops=≥{RELU_FLOPS}" in repr(a)


def test_a_complete_zero_stays_zero():
    t = onnxperf.analyze(_relu_only(), dims={"n": N}).totals
    assert t.bound == "exact" and t.complete
    assert t.macs == 0 and t.int_ops == 0 and t.flops == RELU_FLOPS


def test_a_partial_nonzero_total_stays_a_number_with_a_lower_bound():
    t = onnxperf.analyze(_matmul_then_unknown_domain(), dims={"n": N}).totals
    assert t.bound == "lower" and not t.complete
    assert t.macs == N * K * M  # the MatMul's, counted; the Mystery op's are left out
    assert t.int_ops is None


def test_the_totals_decide_it_once_however_they_are_made():
    """The rule lives in :class:`Totals` itself: a replace() (the --precision what-if re-sums bytes) keeps it."""
    zeros = dict.fromkeys(FIGURES, 0)
    base = dict(params=0, param_bytes=0, param_bytes_by_dtype=(), params_by_dtype=())
    assert all(getattr(Totals(**zeros, **base, bound="lower"), f) is None for f in FIGURES)
    assert all(getattr(Totals(**zeros, **base, bound="unknown"), f) is None for f in FIGURES)
    assert all(getattr(Totals(**zeros, **base, bound="upper"), f) == 0 for f in FIGURES)  # at most 0 is 0
    assert all(getattr(Totals(**zeros, **base), f) == 0 for f in FIGURES)  # exact
    lower = Totals(**zeros, **base, bound="lower")
    assert replace(lower, bytes_read=0).bytes_read is None and lower.bytes_total is None
    one_side = replace(lower, bytes_written=RELU_BYTES)  # one known, one unknown: a lower bound of the known
    assert one_side.bytes_read is None and one_side.bytes_total == RELU_BYTES
    fp16 = onnxperf.analyze(_relu_then_unknown_domain(), dims={"n": N}, precision="fp16").totals
    assert fp16.macs is None and fp16.bytes_read == RELU_BYTES // 2


# ---------------------------------------------------------------------- summary: JSON, text, Markdown

def test_summary_json_writes_null_and_text_says_unknown(tmp_path, capsys):
    p = _save(_relu_then_unknown_domain(), tmp_path / "m.onnx")
    rc, out = _run(capsys, "summary", p, "--dim", f"n={N}", "--format", "json")
    assert rc == 0
    t = json.loads(out)["totals"]
    assert t["macs"] is None and t["int_ops"] is None and t["intensity_flops_per_byte"] is None
    assert t["flops"] == RELU_FLOPS and t["bytes_read"] == RELU_BYTES and t["bound"] == "lower"
    rc, out = _run(capsys, "summary", p, "--dim", f"n={N}", "--color", "never")
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ") and ln.split()}
    assert lines["MACs"].split()[1:] == ["unknown"]
    assert f"≥ {RELU_FLOPS}" in lines["FLOPs"]
    rc, out = _run(capsys, "summary", p, "--dim", f"n={N}", "--format", "md")
    assert "| MACs | unknown |" in out


def test_summary_json_of_complete_and_partial_figures_keeps_numbers(tmp_path, capsys):
    rc, out = _run(capsys, "summary", _save(_relu_only(), tmp_path / "relu.onnx"), "--dim", f"n={N}", "--format", "json")
    t = json.loads(out)["totals"]
    assert rc == 0 and t["macs"] == 0 and t["int_ops"] == 0 and t["bound"] == "exact"
    rc, out = _run(capsys, "summary", _save(_matmul_then_unknown_domain(), tmp_path / "mm.onnx"), "--dim", f"n={N}",
                   "--format", "json")
    t = json.loads(out)["totals"]
    assert rc == 0 and t["macs"] == N * K * M and t["bound"] == "lower"


def test_report_json_writes_null(tmp_path, capsys):
    rc, out = _run(capsys, "report", _save(_relu_then_unknown_domain(), tmp_path / "m.onnx"), "--dim", f"n={N}",
                   "--format", "json")
    t = json.loads(out)["totals"]
    assert rc == 0 and t["macs"] is None and t["flops"] == RELU_FLOPS


# ---------------------------------------------------------------------- check

@pytest.mark.parametrize("allow_partial", [False, True])
def test_a_max_macs_limit_against_unknown_macs_cannot_be_verified(tmp_path, capsys, allow_partial):
    """Nothing counted is no lower bound to accept: unverified (exit 1), allow_partial or not."""
    p = _save(_relu_then_unknown_domain(), tmp_path / "m.onnx")
    budget = tmp_path / "budget.toml"
    budget.write_text(f'max_macs = "1G"\nallow_partial = {str(allow_partial).lower()}\n')
    rc, out = _run(capsys, "check", p, "--budget", str(budget), "--dim", f"n={N}", "--format", "json")
    assert rc == 1
    (v,) = json.loads(out)["models"]
    assert v["figures"]["macs"] is None and v["verdict"] == "fail"
    (b,) = [b for b in v["budgets"] if b["key"] == "max_macs"]
    assert b["status"] == "unknown" and b["actual"] is None and "cannot verify" in b["message"]
    rc, out = _run(capsys, "check", p, "--budget", str(budget), "--dim", f"n={N}", "--format", "md")
    assert rc == 1 and "| unknown |" in out


def test_a_max_macs_limit_on_a_complete_zero_passes(tmp_path, capsys):
    budget = tmp_path / "budget.toml"
    budget.write_text('max_macs = "1G"\n')
    rc, out = _run(capsys, "check", _save(_relu_only(), tmp_path / "relu.onnx"), "--budget", str(budget),
                   "--dim", f"n={N}", "--format", "json")
    (v,) = json.loads(out)["models"]
    assert rc == 0 and v["figures"]["macs"] == 0


# ---------------------------------------------------------------------- compare and sweep

def test_compare_of_unknown_macs_has_no_delta(tmp_path, capsys):
    a = _save(_relu_then_unknown_domain(), tmp_path / "a.onnx")
    b = _save(_matmul_then_unknown_domain(), tmp_path / "b.onnx")
    rc, out = _run(capsys, "compare", a, b, "--dim", f"n={N}", "--format", "json")
    assert rc == 0
    m = json.loads(out)
    assert m["models"][0]["totals"]["macs"] is None and m["models"][1]["totals"]["macs"] == N * K * M
    assert m["deltas"][0]["metrics"]["macs"] == {"delta": None, "rel": None, "partial": True}
    closing = m["comparisons"][0]["closing"]["macs"]
    assert closing["delta"] is None and closing["rel"] is None and closing["residual"] is None
    assert closing["agree"] is False
    assert any("MACs: A unknown" in ln and "cannot tell" in ln for ln in m["comparisons"][0]["closing"]["lines"])
    rc, out = _run(capsys, "compare", a, b, "--dim", f"n={N}", "--color", "never")
    row = next(ln for ln in out.splitlines() if ln.startswith("MACs "))
    assert row.split()[1] == "?"  # the table's short form of unknown, never 0


def test_sweep_rows_write_null_for_unknown_macs(tmp_path, capsys):
    rc, out = _run(capsys, "sweep", _save(_relu_then_unknown_domain(), tmp_path / "m.onnx"), "--dim", "n=2,4",
                   "--format", "json", "--no-formulas")
    assert rc == 0
    rows = json.loads(out)["rows"]
    assert [r["macs"] for r in rows] == [None, None]
    assert [r["flops"] for r in rows] == [2 * K, 4 * K]  # Relu: n·K, a lower bound
