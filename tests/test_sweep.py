"""sweep: rows per value, exact formulas, refusal on non-polynomial costs, CLI."""

import json

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.products.sweep import sweep
from onnxperf.cost.request import Request

from .util import const, model, vi


def _attention_like(h=8):
    # scores = x @ x^T: MACs = batch·seq²·h; projection x @ w: batch·seq·h·h
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]),
             helper.make_node("Transpose", ["p"], ["pt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["p", "pt"], ["s"])]
    return model(nodes, [vi("x", ["batch", "seq", h])], [vi("s", None)], [const("w", [h, h])]), h


def test_formulas_in_two_dims_are_exact():
    m, h = _attention_like()
    r = sweep(Request(m, default_batch=True), {"batch": [1, 2], "seq": [4, 8]})
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
    r = sweep(Request(m, default_batch=True), {"h": [9, 17, 33]})
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
    # with seq unbound the memory figures are partial, and say so (an unbound batch would be 1)
    assert cli.main(["summary", str(p), "--dim", "batch=2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["unknown_tensors"] > 0
    assert cli.main(["summary", str(p), "--dim", "seq=8", "--memory", "lots"]) == 2


def test_knee_is_the_first_batch_no_later_batch_beats():
    from onnxperf.products.sweep import knee_index

    assert knee_index([100, 200, 400, 410, 415]) == 2  # 410 and 415 are within 10% of 400
    assert knee_index([100, 50, 400, 405]) == 2  # a dip followed by a rise is not the knee
    assert knee_index([100, 105, 108]) == 0  # flat from the start
    assert knee_index([1, 2, 4, 8]) == 3  # still rising: the last point


def test_sweep_with_hw_latency_throughput_and_knee_follow_the_roofline(tmp_path, capsys):
    """Each row's latency is the roofline's at that batch, throughput = batch / latency, the
    model moves from memory-bound to compute-bound as the batch grows, and the knee is where
    the throughput stops rising by more than 10%."""
    import onnxperf
    from onnxperf.hardware import load_spec
    from onnxperf.predict.roofline import roofline
    from onnxperf.products.sweep import KNEE_GAIN

    k = n = 512
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [vi("x", ["batch", k])], [vi("y", None)], [const("w", [k, n])])
    batches = [1, 8, 64, 512, 4096]
    spec = load_spec("xeon-silver-4210x2")
    r = sweep(Request(m, hw="xeon-silver-4210x2", default_batch=True), {"batch": batches})
    lat = [roofline(onnxperf.analyze(m, dims={"batch": b}), spec).latency_s for b in batches]
    assert [row.latency_s for row in r.rows] == pytest.approx(lat)
    assert [row.throughput_per_s for row in r.rows] == pytest.approx([b / t for b, t in zip(batches, lat)])
    shares = [row.compute_bound_share for row in r.rows]
    assert shares[0] == 0 and shares[-1] == 1  # memory-bound at batch 1, compute-bound at 4096
    # by hand: once compute-bound, time = 2·batch·k·n / peak, so throughput = peak / (2·k·n) flat
    tput = [b / t for b, t in zip(batches, lat)]
    first = next(i for i, s in enumerate(shares) if s == 1)
    assert r.knee == (("batch", batches[first]),)
    assert all(t <= tput[first] * (1 + KNEE_GAIN) for t in tput[first:])
    assert all(tput[i] * (1 + KNEE_GAIN) < max(tput[i + 1:]) for i in range(first))
    # csv: a header and one row per value, same figures
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["sweep", str(p), "--dim", "batch=" + ",".join(map(str, batches)), "--hw",
                     "xeon-silver-4210x2", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    header = lines[0].split(",")
    assert len(lines) == 1 + len(batches) and "latency_s" in header and "throughput_per_s" in header
    col = header.index("latency_s")
    assert [float(x.split(",")[col]) for x in lines[1:]] == pytest.approx(lat)


def test_a_peak_that_changes_branch_is_not_published_as_a_formula():
    """BERT's activation peak is linear in the sequence at the small fit points and quadratic (the
    attention scores, batch·heads·sequence²·4 B) at 512: the swept rows expose the fit, which is
    refused; MACs stay exact (2·layers·hidden·sequence² for QK^T and AV: 2·4·256 = 2048)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "models" / "bert_encoder_torch.onnx"
    res = sweep(Request(str(path), dims={"batch": 1}, default_batch=True), {"sequence": [16, 128, 512]})
    fits = {name: (p, why) for name, p, why in res.formulas}
    assert fits["activation_peak_bytes"][0] is None and "piecewise" in fits["activation_peak_bytes"][1]
    assert fits["total_memory_bytes"][0] is None
    macs = fits["macs"][0]
    assert macs is not None and dict(macs.terms)[(2,)] == 2048
    for r in res.rows:
        assert macs(dict(r.values)) == r.macs
