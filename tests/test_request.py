"""One request, passed whole (issue 27, point 1): every command given ``--input-shape`` plus ``--dim``
applies both, in its main run and in every run it derives (sweep points, validated batches and decode
contexts, compared models, checked models, the largest fit, the trace).

The model's input has no dims at all (``x: [?, ?]``): without ``--input-shape x=batchx16`` nothing has a
size, so a derived run that dropped the shape would come back with 0 MACs and unknown shapes. The
expected figures are those of a MatMul [b, 16] x [16, 8] then a Relu:

    MACs = b·16·8,  weights = 16·8·4 bytes
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.analysis.compose import compose
from onnxperf.cost.request import Request
from tests.util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
IN, OUT, BATCH = 16, 8, 3
SHAPE = ["--input-shape", f"x=batchx{IN}", "--dim", f"batch={BATCH}"]


def macs(b: int) -> int:
    return b * IN * OUT


@pytest.fixture(scope="module")
def shapeless(tmp_path_factory) -> str:
    m = model([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
              [vi("x", [None, None])], [vi("y", None)], [const("w", [IN, OUT])])
    p = tmp_path_factory.mktemp("request") / "m.onnx"
    onnx.save(m, str(p))
    return str(p)


def run_json(capsys, *argv: str, applied: bool = True) -> dict:
    capsys.readouterr()
    rc = cli.main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert applied == ("not applied" not in err), err
    return json.loads(out)


def summary_at(capsys, path: str, b: int, *extra: str) -> dict:
    return run_json(capsys, "summary", path, "--input-shape", f"x=batchx{IN}", "--dim", f"batch={b}", *extra)


def test_without_the_input_shape_nothing_has_a_size(shapeless, capsys):
    """The premise: the shape is what makes the figures, so a run that drops it cannot hide."""
    d = run_json(capsys, "summary", shapeless, "--dim", f"batch={BATCH}", applied=False)
    assert d["totals"]["macs"] is None and d["coverage"]["unknown_shape"] > 0


def test_summary_report_and_trace_apply_both(shapeless, capsys, tmp_path):
    trace = tmp_path / "t.json"
    d = run_json(capsys, "summary", shapeless, *SHAPE, "--hw", "t4", "--memory", "1MiB", "--trace", str(trace))
    assert d["bindings"]["dims"] == {"batch": BATCH} and d["bindings"]["input_shapes"] == {"x": ["batch", IN]}
    assert d["totals"]["macs"] == macs(BATCH) and d["coverage"]["unknown_shape"] == 0
    assert d["roofline"]["unknown_nodes"] == 0
    # the largest fit is the request at other batches: with the shape, every probe is complete
    assert d["largest_fit"]["value"] is not None and d["largest_fit"]["note"] == ""
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert events and all(e["dur"] >= 0 for e in events)
    r = run_json(capsys, "report", shapeless, *SHAPE, "--hw", "t4")
    assert r["options"]["input_shapes"] == {"x": ["batch", IN]} and r["options"]["dims"] == {"batch": BATCH}
    assert r["totals"]["macs"] == macs(BATCH) and r["totals"]["latency_complete"]


def test_sweep_points_keep_the_input_shape(shapeless, capsys):
    d = run_json(capsys, "sweep", shapeless, "--input-shape", f"x=batchx{IN}", "--dim", "batch=1,2,5",
                 "--hw", "t4", "--memory", "1MiB")
    assert [(r["batch"], r["macs"], r["complete"]) for r in d["rows"]] == [(b, macs(b), True) for b in (1, 2, 5)]
    assert "error" not in d["formulas"]["macs"]  # the fit points are the request at other batches too
    assert d["memory"]["largest"]["value"] is not None


def test_validate_batches_keep_the_input_shape(shapeless, capsys):
    """Each --batch point is the request at that batch: its predicted memory and time are the
    summary's at that batch with the same input shape (the bug: `batch=4` not applied, 0 bytes)."""
    d = run_json(capsys, "validate", shapeless, *SHAPE, "--hw", "t4", "--batch", "1,4", "--runs", "2",
                 "--warmup", "0", "--random-weights")
    assert d["batch"] == BATCH
    for p in d["batches"]:
        s = summary_at(capsys, shapeless, p["batch"], "--hw", "t4")
        assert p["total_memory_bytes"] == s["memory"]["total_bytes"] > 0
        assert p["predicted_calibrated_s"] == pytest.approx(s["roofline"]["latency_s"])


def test_report_validate_keeps_the_input_shape(shapeless, capsys):
    r = run_json(capsys, "report", shapeless, *SHAPE, "--hw", "t4", "--validate", "--runs", "2", "--warmup", "0",
                 "--random-weights")
    assert r["totals"]["macs"] == macs(BATCH) and r["measured"]["latency_s"] > 0


def test_compare_sides_keep_the_input_shape(shapeless, capsys):
    d = run_json(capsys, "compare", shapeless, shapeless, *SHAPE, "--hw", "t4")
    assert [(m["totals"]["macs"], m["dims"]) for m in d["models"]] == [(macs(BATCH), {"batch": BATCH})] * 2
    assert d["options"]["input_shapes"] == {"x": ["batch", IN]}


def test_check_keeps_the_input_shape(shapeless, capsys):
    capsys.readouterr()
    rc = cli.main(["check", shapeless, *SHAPE, "--no-pyproject", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    (m,) = d["models"]
    assert m["figures"]["macs"] == macs(BATCH) and m["figures"]["uncosted_nodes"] == 0


def test_validate_decode_contexts_keep_the_input_shape(tmp_path, capsys):
    """A decode step whose value-cache inputs carry no dims in the file (the key caches still name
    ``past``): --input-shape gives them (``batchx2xpastx32``), and every --decode-context point is the
    request at that context: the same shapes, the past bound to context − 1."""
    src = onnx.load(str(ROOT / "models" / "corpus" / "qwen2_decode_dynamo18.onnx"), load_external_data=False)
    shapes = []
    for i in src.graph.input:
        if i.name.startswith("past_key_values.") and i.name.endswith(".value"):
            for d in i.type.tensor_type.shape.dim:
                d.Clear()
            shapes += ["--input-shape", f"{i.name}=batchx2xpastx32"]
    p = tmp_path / "decoder.onnx"
    onnx.save(src, str(p))
    d = run_json(capsys, "validate", str(p), *shapes, "--dim", "batch=1", "--dim", "past=15", "--hw", "h100-sxm",
                 "--decode-context", "16,40", "--runs", "1", "--warmup", "0", "--random-weights")
    assert [x["context"] for x in d["decode"]] == [16, 40]
    for x in d["decode"]:
        s = run_json(capsys, "summary", str(p), *shapes, "--dim", "batch=1", "--dim", f"past={x['context'] - 1}",
                     "--hw", "h100-sxm")
        assert s["coverage"]["unknown_shape"] == 0
        assert x["predicted_calibrated_s"] == pytest.approx(s["roofline"]["latency_s"])


def test_derived_requests_are_replacements():
    """The API's derived runs: ``at`` binds dims on top of the request, every other part kept."""
    r = Request("m.onnx", dims={"batch": 2}, input_shapes={"x": ("batch", 16)}, precision="fp16", hw="t4",
                memory_budget=1 << 20)
    s = r.at(batch=8, seq=4)
    assert s.dims == {"batch": 8, "seq": 4} and replace(s, dims=r.dims) == r


def test_api_and_cli_agree_on_the_request(shapeless, capsys):
    a = compose(Request(shapeless, dims={"batch": BATCH}, input_shapes={"x": ("batch", IN)}, default_batch=True,
                        hw="t4"))
    assert json.loads(a.to_json()) == run_json(capsys, "summary", shapeless, *SHAPE, "--hw", "t4")
