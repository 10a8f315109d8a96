"""validate and calibrate end to end on tiny models (onnxruntime in a child process)."""

import dataclasses
import functools
import json
from pathlib import Path

import onnx
import pytest
from onnx import helper

import onnxperf
from onnxperf import cli
from onnxperf.hardware import load_spec, to_toml
from onnxperf.predict.memory import liveness
from onnxperf.ui.numbers import binary_bytes, seconds
from onnxperf.predict.roofline import roofline
from onnxperf.products.calibration import run as calibration_run
from onnxperf.products.calibration.run import run_calibration
from onnxperf.products.validate.compare import KNEE_GAIN, BatchPoint, batch_knees, knee, validate
from onnxperf.products.validate.runner import DEFAULT_PROVIDERS, latency_stats, run_session
from onnxperf.cost.request import Request

from .util import benchmark, const, model, vi

#: slow (a browser, onnxruntime, every doc page or every ONNX node case): left out by -m "not slow"
pytestmark = pytest.mark.slow

H = 64  # hidden size of the mlp fixture
SPEC = "xeon-silver-4210x2"


@pytest.fixture()
def mlp(tmp_path):
    h = H
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"], name="mm1"), helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("MatMul", ["b", "w2"], ["y"], name="mm2")]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w1", [h, h], values=[0.01] * h * h),
                                                                 const("w2", [h, h], values=[0.02] * h * h)])
    p = tmp_path / "mlp.onnx"
    onnx.save(m, str(p))
    return p


def test_validate_json_covers_every_node(mlp, tmp_path, capsys):
    out = tmp_path / "v.json"
    assert cli.main(["validate", str(mlp), "--dim", "batch=4", "--hw", "xeon-silver-4210x2", "--runs", "3",
                     "--warmup", "1", "--opt", "disable", "--format", "json", "-o", str(out)]) == 0
    v = json.loads(out.read_text())
    assert v["schema"] == "onnxperf.validation/1" and v["measured_latency"]["n"] == 3
    ids = sorted(i for g in v["groups"] for i in g["original_node_ids"])
    assert ids == [0, 1, 2]  # every original node in exactly one group
    assert v["error_plain"]["n"] == 3 and v["error_calibrated"] is None
    assert v["predicted_latency_s"] > 0 and v["measured_latency"]["mean_s"] > 0


def test_validate_with_calibrated_spec_and_batches(mlp, tmp_path, capsys):
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), id="cal",
                               efficiency={"matmul.compute": 0.5, "default.memory": 0.5, "overhead_s": 1e-6})
    sp = tmp_path / "cal.toml"
    sp.write_text(to_toml(spec))
    assert cli.main(["validate", str(mlp), "--dim", "batch=2", "--hw", str(sp), "--runs", "2", "--warmup", "0",
                     "--batch", "1,2", "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["calibrated"] and v["error_calibrated"] is not None
    assert v["predicted_calibrated_latency_s"] != v["predicted_latency_s"]
    assert [b["batch"] for b in v["batches"]] == [1, 2]
    assert cli.main(["validate", str(mlp), "--dim", "batch=2", "--hw", str(sp), "--runs", "2"]) == 0
    out = capsys.readouterr().out
    # the predictions do not depend on the run: the calibrated line states the calibrated latency
    predicted = roofline(onnxperf.analyze(mlp, dims={"batch": 2}), spec).latency_s
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("Calibrated"))
    assert line.split()[1:3] == ["predicted", seconds(predicted).split()[0]]
    assert "end-to-end error" in line and "rank correlation" in line and "no calibration" not in line


def test_validate_refuses_missing_weights_without_flag(tmp_path, capsys):
    w = const("w", [64, 64])
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [1, 64])], [vi("y", None)], [w])
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "gone.bin"
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    assert cli.main(["validate", str(p), "--hw", "t4", "--runs", "1"]) == 2
    assert "--random-weights" in capsys.readouterr().err
    assert cli.main(["validate", str(p), "--hw", "t4", "--runs", "1", "--warmup", "0", "--random-weights"]) == 0


def test_validate_needs_bound_dims(tmp_path, capsys):
    """An unbound batch is 1 (see test_cli); any other unbound dim stops the run before it starts."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    p = tmp_path / "seq.onnx"
    onnx.save(model(nodes, [vi("x", [1, "seq", 8])], [vi("y", None)], [const("w", [8, 4])]), str(p))
    assert cli.main(["validate", str(p), "--hw", "t4"]) == 2
    assert "bind seq with --dim" in capsys.readouterr().err


def test_calibration_on_a_few_suite_ops():
    """Unprobed (as ``--short``; the probed calibration: tests/test_calibrate_state.py)."""
    spec = load_spec("xeon-silver-4210x2")
    r = run_calibration(spec, runs=2, warmup=1, scale=1 / 16, repeats=1, only={"gemm_256", "add_tiny", "relu_4m"},
                        probed=False)
    assert {s.case for s in r.samples} == {"gemm_256", "add_tiny", "relu_4m"}
    assert all(s.measured_s > 0 for s in r.samples)
    assert r.efficiency["overhead_s"] > 0
    assert r.spec.id.endswith("-calibrated") and r.spec.efficiency == r.efficiency


def _analysis(path, batch):
    return onnxperf.analyze(path, dims={"batch": batch})


def test_group_and_node_rates_are_flops_and_bytes_over_measured_time(mlp, tmp_path):
    batch = 4
    out = tmp_path / "v.json"
    assert cli.main(["validate", str(mlp), "--dim", f"batch={batch}", "--hw", SPEC, "--runs", "3", "--warmup", "1",
                     "--opt", "disable", "--format", "json", "-o", str(out)]) == 0
    v = json.loads(out.read_text())
    a = _analysis(mlp, batch)
    plain = {n.key: n.time_s for n in roofline(a, load_spec(SPEC)).nodes}
    for g in v["groups"]:
        m = g["measured_s"]
        assert m > 0
        assert g["achieved_flops_per_s"] == pytest.approx(g["flops"] / m)
        assert g["achieved_bytes_per_s"] == pytest.approx(g["bytes"] / m)
        assert g["roofline_share"] == pytest.approx(g["predicted_s"] / m)
    # one row per original node, in file order, each its own group at opt=disable
    by_id = {n.id: n for n in a.main_nodes}
    assert [n["key"] for n in v["nodes"]] == [str(i) for i in sorted(by_id)]
    for n in v["nodes"]:
        g = v["groups"][n["group"]]
        node = by_id[int(n["key"])]
        assert g["original_node_ids"] == [node.id] and n["sole"]
        assert (n["name"], n["op_type"]) == (node.name, node.op_type)
        assert n["flops"] == node.flops + node.int_ops and n["bytes"] == node.bytes_read + node.bytes_written
        assert n["measured_s"] == g["measured_s"] and n["predicted_s"] == pytest.approx(plain[n["key"]])
        assert n["achieved_flops_per_s"] == pytest.approx(n["flops"] / n["measured_s"])
        assert n["achieved_bytes_per_s"] == pytest.approx(n["bytes"] / n["measured_s"])
        assert n["roofline_share"] == pytest.approx(n["predicted_s"] / n["measured_s"])
    assert v["nodes"][0]["flops"] == 2 * batch * H * H  # MatMul [batch, H] x [H, H]
    # the layout is stable: groups by their first node, the same keys in the same order
    assert [g["original_node_ids"] for g in v["groups"]] == sorted(g["original_node_ids"] for g in v["groups"])
    again = tmp_path / "again.json"
    assert cli.main(["validate", str(mlp), "--dim", f"batch={batch}", "--hw", SPEC, "--runs", "2", "--warmup", "0",
                     "--opt", "disable", "--format", "json", "-o", str(again)]) == 0
    w = json.loads(again.read_text())
    assert list(w) == list(v) and [list(n) for n in w["nodes"]] == [list(n) for n in v["nodes"]]
    assert [(n["key"], n["group"], n["predicted_s"]) for n in w["nodes"]] == \
        [(n["key"], n["group"], n["predicted_s"]) for n in v["nodes"]]


def test_fused_nodes_share_their_group_and_get_no_time_of_their_own(tmp_path, capsys):
    c, hw = 8, 8
    m = model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
               helper.make_node("Relu", ["c"], ["y"], name="relu")],
              [vi("x", [1, c, hw, hw])], [vi("y", None)], [const("w", [c, c, 3, 3], values=[0.01] * c * c * 9)])
    p = tmp_path / "conv_relu.onnx"
    onnx.save(m, str(p))
    assert cli.main(["validate", str(p), "--hw", SPEC, "--runs", "2", "--warmup", "1", "--opt", "all",
                     "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    conv, relu = v["nodes"]
    assert conv["group"] == relu["group"] and v["groups"][conv["group"]]["original_node_ids"] == [0, 1]
    for n in (conv, relu):
        assert not n["sole"] and n["measured_s"] is None
        assert n["achieved_flops_per_s"] is None and n["roofline_share"] is None
    assert cli.main(["validate", str(p), "--hw", SPEC, "--runs", "2", "--warmup", "1"]) == 0
    text = capsys.readouterr().out
    assert "Top 12 nodes by predicted time" in text and "FLOP/s" in text and "roofline" in text


def test_provider_defaults_to_cpu_and_is_passed_to_the_runtime(mlp, monkeypatch, capsys):
    from onnxperf.products.validate import compare

    args = cli.build_parser().parse_args(["validate", str(mlp), "--hw", SPEC])
    assert args.provider == DEFAULT_PROVIDERS[0] == "CPUExecutionProvider"
    asked = []
    real = compare.run_session

    def spy(*a, **kw):
        asked.append(kw["providers"])
        return real(*a, **kw)

    monkeypatch.setattr(compare, "run_session", spy)
    assert cli.main(["validate", str(mlp), "--dim", "batch=1", "--hw", SPEC, "--runs", "1", "--warmup", "0",
                     "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert asked == [DEFAULT_PROVIDERS]
    assert v["provider"] == DEFAULT_PROVIDERS[0] and v["providers"][0] == DEFAULT_PROVIDERS[0]


def test_unknown_provider_is_a_one_line_option_error(mlp, capsys):
    import onnxruntime

    name = "NoSuchExecutionProvider"
    assert cli.main(["validate", str(mlp), "--dim", "batch=1", "--hw", SPEC, "--provider", name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err
    assert all(p in err for p in onnxruntime.get_available_providers())


# --- the knee of a --batch sweep ------------------------------------------------------------

def _points(throughputs: dict[int, float], predicted_s=None) -> list[BatchPoint]:
    """Synthetic sweep: one run per batch at the latency that gives the throughput."""
    return [BatchPoint(b, latency_stats([b / t], batch=b), predicted_s(b) if predicted_s else b * 1e-3, None, 0)
            for b, t in throughputs.items()]


def test_knee_outlasts_one_noisy_dip():
    base, plateau_at = 100.0, 8
    small = 1 + KNEE_GAIN / 2  # a gain that does not count as rising
    thr = {1: base, 2: 2 * base, 4: 1.5 * base, plateau_at: 4 * base, 16: 4 * base * small}
    pts = _points(thr)
    # batch 4 dips below batch 2, then batch 8 rises far above: the knee is not batch 2
    assert knee([(p.batch, p.measured.throughput_per_s) for p in pts]) == plateau_at
    assert batch_knees(pts)[0] == plateau_at


def test_knee_on_a_plateau_is_its_first_batch():
    base, small = 100.0, 1 + KNEE_GAIN / 2
    assert knee([(1, base), (2, base * small), (4, base), (8, base * small)]) == 1
    assert knee([(8, base * small), (1, base), (4, base), (2, base * small)]) == 1  # order of measurement


def test_knee_of_a_monotonic_rise_is_not_reached():
    base, big = 100.0, 1 + 2 * KNEE_GAIN
    assert knee([(b, base * big ** k) for k, b in enumerate((1, 2, 4, 8))]) is None
    assert knee([(1, base)]) is None and knee([]) is None


def test_predicted_knee_from_the_predicted_latencies():
    unit_s, saturates_at = 1e-3, 4
    thr = {1: 100.0, 2: 200.0, 4: 400.0, 8: 800.0}
    # the predicted latency is flat up to `saturates_at`, then linear: predicted throughput plateaus there
    measured, predicted, calibrated = batch_knees(_points(thr, lambda b: unit_s * max(b, saturates_at)))
    assert (measured, predicted, calibrated) == (None, saturates_at, None)


def test_max_memory_stops_the_batch_sweep_with_its_reason(mlp, capsys):
    mem = {b: liveness(_analysis(mlp, b)).total_bytes for b in (1, 2, 4)}
    assert mem[1] < mem[2] < mem[4]
    limit = mem[2]  # batch 2 fits exactly, batch 4 does not
    assert cli.main(["validate", str(mlp), "--dim", "batch=1", "--hw", SPEC, "--runs", "1", "--warmup", "0",
                     "--batch", "1,2,4", "--max-memory", str(limit), "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert [b["batch"] for b in v["batches"]] == [1, 2]
    assert [b["total_memory_bytes"] for b in v["batches"]] == [mem[1], mem[2]]
    note = next(n for n in v["notes"] if "--batch" in n)
    assert "stopped before batch 4" in note and "--max-memory" in note
    assert binary_bytes(mem[4]) in note and str(limit) in note


# --- calibrate then validate, through the CLI -------------------------------------------------

def test_calibrate_short_then_validate_is_calibrated(mlp, tmp_path, capsys, monkeypatch):
    """`hw calibrate --short -o FILE`, then `validate --hw FILE`: the validation is the calibrated one. The
    calibration measures three suite cases (the whole --short suite runs through the command line once, in
    tests/test_docs_commands.py's fixture: its ~60 s twice made the suite run over its ten minutes)."""
    monkeypatch.setattr(calibration_run, "run_calibration", functools.partial(
        calibration_run.run_calibration, only={"gemm_256", "add_tiny", "relu_4m"}))
    sessions = []

    def recorded(*args, **kw):
        sessions.append(kw)
        return run_session(*args, **kw)

    monkeypatch.setattr(calibration_run, "run_session", recorded)
    spec_file = tmp_path / "local.toml"
    assert cli.main(["hw", "calibrate", "--hw", SPEC, "--short", "-o", str(spec_file)]) == 0
    assert "Fitted efficiencies" in capsys.readouterr().out  # the table, while the spec goes to the file
    # a smoke test: no state probe around a case or an extra, 10 runs after 5 warm-ups (the profiled ones); the
    # reference state measured once, apart (runner.measure_state)
    assert sessions and not any(kw.get("probe_state") for kw in sessions)
    assert {(kw["runs"], kw["warmup"]) for kw in sessions if kw.get("profile")} == {(10, 5)}
    cal = load_spec(str(spec_file))
    assert cal.id == f"{SPEC}-calibrated" and cal.efficiency["overhead_s"] > 0
    assert cal.efficiency["state.triad_bytes_per_s"] > 0 and cal.efficiency["state.dispatch_s_per_node"] > 0
    assert cli.main(["validate", str(mlp), "--dim", "batch=2", "--hw", str(spec_file), "--runs", "2",
                     "--warmup", "1", "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["calibrated"] and v["hardware"] == cal.id and v["error_calibrated"] is not None
    assert v["predicted_calibrated_latency_s"] == pytest.approx(
        roofline(_analysis(mlp, 2), cal).latency_s)


# --- benchmarks/accuracy.py: its table, from the figures validate computes ------------------------

def _accuracy_script():
    return benchmark("accuracy.py", "onnxperf_bench_accuracy")


def test_accuracy_table_columns_come_from_the_validation(mlp):
    acc = _accuracy_script()
    spec = dataclasses.replace(load_spec(SPEC), id="cal",
                               efficiency={"matmul.compute": 0.5, "default.memory": 0.5, "overhead_s": 1e-6})
    v = validate(Request(mlp, dims={"batch": 2}), spec, runs=2, warmup=0, progress=False)
    lines = acc.results_table([("mlp.onnx", v)], {"mlp.onnx": [v, v]})
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = dict(zip(header, (c.strip() for c in lines[2].strip("|").split("|"))))
    assert header == list(acc.COLUMNS) and len(cells) == len(acc.COLUMNS)
    assert cells["plain per-group MdAPE"] == acc.fmt(v.plain.median_ape, False)
    assert cells["calibrated within ±10%"] == acc.fmt(v.calibrated_figures.within_10, False)
    assert cells["calibrated per-group MdAPE"] == acc.fmt(v.calibrated_figures.median_ape, False)
    assert cells["model"] == "mlp.onnx"
    # issue 30: the state-normalized error and the noise-band verdict, from the validation's state figures
    norm = v.state.normalized_error if v.state is not None else None
    assert cells["calibrated e2e error, state-normalized"] == acc.fmt(norm)
    assert cells["in its noise band"] == ("-" if norm is None else "no" if v.state.miss else "yes")
    # the blocks dropped as run on a contended host, counted over the reported sessions
    assert (f"Blocks dropped as run on a contended host: {v.state.contended} of {len(v.state.windows)}, in "
            f"{1 if v.state.contended else 0} of 1 models." in lines[-1])


def test_accuracy_validates_a_suite_model_through_a_request(mlp):
    """The benchmark's session call (validate_model): a suite model's dims reach the validation."""
    acc = _accuracy_script()
    spec = dataclasses.replace(load_spec(SPEC), id="cal",
                               efficiency={"matmul.compute": 0.5, "default.memory": 0.5, "overhead_s": 1e-6})
    v = acc.validate_model(acc.Model("mlp.onnx", Path(mlp), "MLP", {"batch": 2}, {}), spec, runs=2, threads=1,
                           warmup=0)
    assert v.latency.n == 2 and v.calibrated_figures is not None


def test_accuracy_rank_limits_from_two_sessions():
    """The rank-limit figures: the share of dispatch-only groups, ρ between two sessions' measured
    times, and ρ of the prediction with each dispatch-only group replaced by its op type's median
    time in the other session (hand-made groups with known ranks)."""
    from types import SimpleNamespace as NS

    acc = _accuracy_script()

    def grp(i, op, meas, pred, big=False):
        n = 10 ** 6 if big else 10
        return NS(original_node_ids=(i,), original_op_types=(op,), folded=False, measured_s=meas,
                  predicted_calibrated_s=pred, bytes=n, flops=n)
    # two big ops predicted in order; three Reshapes and two Shapes, all predicted at the same 4 µs
    a = NS(groups=[grp(0, "MatMul", 100e-6, 90e-6, True), grp(1, "MatMul", 200e-6, 210e-6, True),
                   grp(2, "Reshape", 6e-6, 4e-6), grp(3, "Reshape", 6e-6, 4e-6), grp(4, "Shape", 4e-6, 4e-6),
                   grp(5, "Shape", 4e-6, 4e-6), grp(6, "Reshape", 6e-6, 4e-6)])
    b = NS(groups=[NS(**g.__dict__) for g in a.groups])  # a second session that measured the same
    lim = acc.rank_limits(a, b)
    assert lim["groups"] == 7 and lim["dispatch_share"] == pytest.approx(5 / 7)
    assert lim["between_sessions"] == pytest.approx(1.0)
    # with Reshape at 6 µs and Shape at 4 µs the oracle orders every group as measured
    assert lim["op_type_oracle"] == pytest.approx(1.0)
    from onnxperf.products.accuracy import spearman
    plain = spearman([g.predicted_calibrated_s for g in a.groups], [g.measured_s for g in a.groups])
    assert plain < lim["op_type_oracle"]


def test_casts_onnxruntime_inserts_are_counted_and_said(tmp_path, capsys):
    """A float16 Tanh has no float16 kernel on the CPU provider: onnxruntime runs it on the float kernel
    between two Casts it inserts (one for the input, one for the output), work the graph does not hold.
    validate counts them from the profile, with their measured time, and warns; the float32 graph has none."""
    from onnx import TensorProto

    from onnxperf.products.validate.profile import INSERTED_CAST_PREFIX, NodeTiming, inserted_casts

    for elem, casts in ((TensorProto.FLOAT16, 2), (TensorProto.FLOAT, 0)):
        g = helper.make_graph([helper.make_node("Tanh", ["x"], ["y"], name="tanh")], "g",
                              [helper.make_tensor_value_info("x", elem, [64, 64])],
                              [helper.make_tensor_value_info("y", elem, [64, 64])])
        p = tmp_path / f"tanh{elem}.onnx"
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
        assert cli.main(["validate", str(p), "--hw", SPEC, "--runs", "2", "--warmup", "0", "--format", "json"]) == 0
        v = json.loads(capsys.readouterr().out)
        assert v["inserted_casts"] == casts
        assert (v["inserted_cast_s"] > 0) == bool(casts)
        said = [w for w in v["warnings"] if "onnxruntime inserted" in w]
        assert len(said) == (1 if casts else 0)
        if casts:
            assert said[0].startswith(f"onnxruntime inserted {casts} Casts (") and "misses that work" in said[0]
    t = [NodeTiming(INSERTED_CAST_PREFIX + "x", "Cast", "CPUExecutionProvider", 3e-6, 1.0, median_s_per_run=2e-6),
         NodeTiming("cast_in_the_graph", "Cast", "CPUExecutionProvider", 5e-6, 1.0),
         NodeTiming(INSERTED_CAST_PREFIX + "y", "Cast", "CPUExecutionProvider", 4e-6, 1.0)]
    assert inserted_casts(t) == (2, pytest.approx(6e-6))
