"""sweep: rows per value, exact formulas, refusal on non-polynomial costs, CLI."""

import json

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.sweep import sweep

from .util import const, model, vi


def _attention_like(h=8):
    # scores = x @ x^T: MACs = batch·seq²·h; projection x @ w: batch·seq·h·h
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]),
             helper.make_node("Transpose", ["p"], ["pt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["p", "pt"], ["s"])]
    return model(nodes, [vi("x", ["batch", "seq", h])], [vi("s", None)], [const("w", [h, h])]), h


def test_formulas_in_two_dims_are_exact():
    m, h = _attention_like()
    r = sweep(m, {"batch": [1, 2], "seq": [4, 8]})
    assert [dict(x.values) for x in r.rows] == [{"batch": 1, "seq": 4}, {"batch": 1, "seq": 8},
                                                {"batch": 2, "seq": 4}, {"batch": 2, "seq": 8}]
    macs = {n: p for n, p, _ in r.formulas}["macs"]
    assert dict(macs.terms) == {(1, 2): h, (1, 1): h * h}
    for row in r.rows:
        b, s = dict(row.values)["batch"], dict(row.values)["seq"]
        assert row.macs == b * s * s * h + b * s * h * h


def test_non_polynomial_dim_is_refused_with_a_message():
    # a strided conv's output size is floor((H - k)/s) + 1: not a polynomial in H
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], strides=[2, 2])]
    m = model(nodes, [vi("x", [1, 1, "h", "h"])], [vi("y", None)], [const("w", [1, 1, 3, 3])])
    r = sweep(m, {"h": [9, 17, 33]})
    fits = {n: (p, why) for n, p, why in r.formulas}
    assert fits["macs"][0] is None and "not a polynomial" in fits["macs"][1]
    assert [row.macs for row in r.rows] == [((h - 3) // 2 + 1) ** 2 * 9 for h in (9, 17, 33)]


def test_sweep_cli_json_and_text(tmp_path, capsys):
    m, h = _attention_like()
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["sweep", str(p), "--dim", "batch=1,2,4", "--dim", "seq=16", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema"] == "onnxperf.sweep/1" and d["fixed"] == {"seq": 16}
    assert [r["macs"] for r in d["rows"]] == [b * (16 * 16 * h + 16 * h * h) for b in (1, 2, 4)]
    assert d["formulas"]["macs"]["text"] == f"{16 * 16 * h + 16 * h * h}·batch"
    assert cli.main(["sweep", str(p), "--dim", "batch=1,2", "--dim", "seq=16"]) == 0
    assert "Formulas" in capsys.readouterr().out
    assert cli.main(["sweep", str(p), "--dim", "batch=a,b"]) == 2


def test_summary_memory_budget_cli(tmp_path, capsys):
    m, h = _attention_like()
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["summary", str(p), "--dim", "batch=2", "--dim", "seq=8", "--memory", "1MiB",
                     "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    fit = d["largest_fit"]
    assert fit["dim"] == "batch" and fit["total_bytes"] <= 2 ** 20 < fit["next_total_bytes"]
    assert d["memory"]["activation_peak_bytes"] > 0 and d["memory"]["unknown_tensors"] == 0
    # with batch unbound the memory figures are partial, and say so
    assert cli.main(["summary", str(p), "--dim", "seq=8", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["unknown_tensors"] > 0
    assert cli.main(["summary", str(p), "--dim", "seq=8", "--memory", "lots"]) == 2
