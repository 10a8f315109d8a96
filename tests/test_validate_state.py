"""Validation on a noisy machine (issue 30, items 1-3): the timed runs in blocks between probes of the
machine's state, blocks starved of CPU dropped, the error normalized to each block's state, a noise band.
The figures are checked on constructed windows (exact arithmetic); one run of onnxruntime checks the
child's blocks and probes."""

from __future__ import annotations

import dataclasses
import json
import tempfile

import pytest

from onnxperf import cli
from onnxperf.hardware import load_spec
from onnxperf.products.validate import runner
from onnxperf.products.validate.compare import _dropped_kinds
from onnxperf.products.validate.runner import Probe, Window, measure_state
from onnxperf.hardware.spec import MemoryLevel
from onnxperf.products.validate.state import (CONTENDED, CONTENDED_WHY, CONTROLS, ELASTICITY, FAR_FROM_REFERENCE, HANDOFF_KEY,
                                              STATE_KEYS, UNSTABLE, bootstrap_interval, calm_share, reference_of,
                                              reference_warning, scaled_spec, shrunk, state_figures)

REF = Probe(10e9, 100e9, 1e-6)


def _window(ms: float, probe: Probe = REF, cpu: float = 1.0, steal: float | None = 0.0, runs: int = 3,
            wall: float = 1.0) -> Window:
    return Window(tuple([ms / 1e3] * runs), probe, probe, wall, cpu, steal)


def _spec(state: bool = True):
    spec = load_spec("epyc-9654")
    eff = {"overhead_s": 2e-6, "overhead_run_s": 10e-6, "default.memory": 0.5}
    if state:
        eff |= {key: getattr(REF, field) for key, field in STATE_KEYS.items()}
    return dataclasses.replace(spec, efficiency=eff)


def test_the_spec_scales_with_each_probe():
    """Main memory by the triad's ratio; peaks, cache levels, a subnormal assist and an im2col run by the
    matrix product's (a cache is read at the core's clock: another guest's DRAM traffic leaves it alone);
    overheads and a broadcast span by the dispatch probe's."""
    spec = _spec()
    spec = dataclasses.replace(spec, efficiency=dict(spec.efficiency) | {"subnormal.assist_s": 30e-9,
                                                                         "broadcast.span_s": 10e-9,
                                                                         "conv.int8.run_s": 0.7e-9},
                               memory_levels=(MemoryLevel("L2", 1 << 20, 1e12), MemoryLevel("L3", 32 << 20, 5e11)))
    assert reference_of(spec) == REF and spec.memory_levels
    slow = Probe(REF.triad_bytes_per_s / 2, REF.matmul_flops_per_s / 4, REF.dispatch_s_per_node * 3)
    s = scaled_spec(spec, slow, REF)
    assert s.memory_bandwidth_bytes_per_s == pytest.approx(spec.memory_bandwidth_bytes_per_s / 2)
    assert s.peak_flops_per_s["fp32"] == pytest.approx(spec.peak_flops_per_s["fp32"] / 4)
    assert [lv.bandwidth_bytes_per_s for lv in s.memory_levels] == pytest.approx(
        [lv.bandwidth_bytes_per_s / 4 for lv in spec.memory_levels])
    assert s.efficiency["subnormal.assist_s"] == pytest.approx(120e-9)
    assert s.efficiency["conv.int8.run_s"] == pytest.approx(2.8e-9)  # an im2col run: a copy at the core's clock
    assert s.efficiency["broadcast.span_s"] == pytest.approx(30e-9)
    assert s.efficiency["overhead_s"] == pytest.approx(6e-6) and s.efficiency["overhead_run_s"] == pytest.approx(30e-6)
    assert s.efficiency["default.memory"] == 0.5  # a share of the roof, not a rate: unchanged
    assert reference_of(load_spec("epyc-9654")) is None


def test_a_block_starved_of_cpu_or_stolen_is_dropped_and_counted():
    windows = [_window(10.0), _window(10.2), _window(30.0, cpu=0.4), _window(12.0, steal=0.2)]
    st = state_figures(windows, _spec(), lambda s: 0.010, 0.010)
    assert [w.dropped is not None for w in st.windows] == [False, False, True, True]
    assert st.dropped == 2 and "starved" in st.windows[2].dropped and "steal" in st.windows[3].dropped
    assert st.measured_median_s == pytest.approx(0.0101)  # the kept blocks only
    # a block too short for the counters (10 ms ticks) is not judged
    short = state_figures([_window(10.0), _window(30.0, cpu=0.01, wall=0.05)], _spec(), lambda s: 0.01, 0.01)
    assert short.dropped == 0


#: the hand-off probe's usual share on this project's VM (0.88) and a share seen while the host was contended
CALM = dataclasses.replace(REF, handoff_flops_per_s=88e9)
BUSY = dataclasses.replace(REF, handoff_flops_per_s=66e9)


def _handoff_spec():
    spec = _spec()
    return dataclasses.replace(spec, efficiency=dict(spec.efficiency) | {HANDOFF_KEY: CALM.handoff_flops_per_s})


def test_a_block_on_a_contended_host_is_dropped_and_counted():
    """A calibrated hand-off share of 0.88 puts the line at 0.85 · 0.88 = 0.748: a block whose probes read
    0.66 ran on a contended host (the models that slow there ran at 0.6-0.7 of their speed, while the triad,
    the matrix product and the dispatch probe kept theirs: nothing the spec scales with follows it)."""
    spec = _handoff_spec()
    assert calm_share(spec) == pytest.approx(CONTENDED * 0.88) and calm_share(_spec()) is None
    assert CALM.handoff_share == pytest.approx(0.88) and REF.handoff_share is None
    windows = [_window(10.0, CALM), _window(15.0, BUSY), _window(10.4, CALM), _window(14.0, BUSY, cpu=0.4)]
    st = state_figures(windows, spec, lambda s: 0.010, 0.010)
    assert [w.dropped is not None for w in st.windows] == [False, True, False, True]
    assert st.windows[1].dropped.startswith(CONTENDED_WHY) and "0.66" in st.windows[1].dropped
    assert st.dropped == 2 and st.contended == 2  # the starved one was on a contended host too: counted as that
    assert st.measured_median_s == pytest.approx(0.0102)
    d = st.to_dict()
    assert d["windows_contended"] == 2 and d["reference"]["handoff_flops_per_s"] == 88e9
    assert _dropped_kinds(st) == "2 on a contended host"
    mixed = state_figures(windows + [_window(30.0, CALM, cpu=0.4)], spec, lambda s: 0.010, 0.010)
    assert _dropped_kinds(mixed) == "2 on a contended host, 1 starved of CPU or stolen"
    # one contended probe beside a block is enough: the state comes and goes within seconds
    half = state_figures([_window(10.0), Window((0.012,) * 3, CALM, BUSY, 1.0, 1.0, 0.0)], spec, lambda s: 0.01, 0.01)
    assert half.contended == 1 and half.windows[1].state.handoff_share == pytest.approx(0.77)  # the mean passes
    # the whole run contended: no block kept, no normalized verdict (the raw one would be of the host)
    every = state_figures([_window(15.0, BUSY), _window(14.0, BUSY)], spec, lambda s: 0.010, 0.010)
    assert every.contended == 2 and not every.kept and every.normalized_error is None and every.raw_error is None


def test_without_a_calibrated_hand_off_the_runs_usual_share_is_the_line():
    """A spec calibrated before the hand-off probe: the run's own windows give the usual share, the median of
    their upper half (a contended host only lowers it): shares 0.88, 0.90, 0.66, 0.89 -> 0.895, line 0.761."""
    at = [dataclasses.replace(REF, handoff_flops_per_s=x * 1e9) for x in (88, 90, 66, 89)]
    st = state_figures([_window(10.0, p) for p in at], _spec(), lambda s: 0.010, 0.010)
    assert [w.dropped is not None for w in st.windows] == [False, False, True, False]
    assert "below 0.76" in st.windows[2].dropped
    # probes without the hand-off figure (a result from before it): nothing is judged by it
    assert state_figures([_window(10.0), _window(15.0)], _spec(), lambda s: 0.01, 0.01).contended == 0


def test_a_probe_without_the_hand_off_figure_reads_as_before():
    old = {"triad_bytes_per_s": 1e10, "matmul_flops_per_s": 1e11, "dispatch_s_per_node": 1e-6}
    assert runner._probe(old) == REF and REF.to_dict() == old
    assert Probe.median(REF, CALM, BUSY).handoff_flops_per_s == pytest.approx(77e9)  # over those that have it
    assert Probe.mean(CALM, BUSY).handoff_flops_per_s == pytest.approx(77e9)
    assert Probe.mean(REF, REF).handoff_flops_per_s is None
    assert runner._probe(CALM.to_dict()) == CALM


def test_the_hand_off_chain_keeps_a_row_of_ones():
    """Four MatMuls by W = 1/n, each followed by a Transpose: ones stay ones (no overflow, no subnormal), and
    the probe's rate counts the products' 4 · 2 · 256³ FLOPs."""
    import numpy as np
    import onnxruntime as ort

    m = runner.probe_handoff_model()
    assert [n.op_type for n in m.graph.node] == ["MatMul", "Transpose"] * runner.PROBE_MATMULS
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    n = runner.PROBE_MATMUL_N
    (y,) = sess.run(None, {"x0": np.ones((n, n), dtype=np.float32)})
    assert y.shape == (n, n) and np.allclose(y, 1.0)


@pytest.mark.slow
def test_the_child_runs_more_blocks_while_the_host_is_contended(tmp_path):
    """With a line no window can reach, the child pauses (1 s, then 2 s) and runs one more block each time, up
    to twice the blocks planned; with a line every window passes, it runs the blocks planned."""
    import numpy as np

    path = runner.save_probes(tmp_path)
    feed = {"t0": np.zeros(1, dtype=np.float32)}
    rr = runner.run_session(path, feed, runs=2, warmup=0, profile=False, keep_optimized=False, blocks=2,
                            calm_share=10.0)
    assert len(rr.windows) == 4 and len(rr.latencies_s) == 4
    assert all(w.state.handoff_share is not None and w.state.handoff_share < 10 for w in rr.windows)
    rr = runner.run_session(path, feed, runs=2, warmup=0, profile=False, keep_optimized=False, blocks=2,
                            calm_share=0.0)
    assert len(rr.windows) == 2


def test_the_error_is_normalized_to_each_blocks_state():
    """A block whose triad read half the bandwidth of the run's other blocks (at the reference) is predicted with
    1/√2 of it: the run's median state, with the block's move from it halved (ELASTICITY; a probe errs too). A
    memory-bound model (its prediction proportional to 1/bandwidth) that ran √2 times as long then has no error
    left; so does a whole run at half the bandwidth that ran twice as long (a run's drift counts whole)."""
    def predict(spec):  # memory-bound: the time is bytes / bandwidth
        return 1e8 / spec.memory_bandwidth_bytes_per_s

    spec = _spec()
    t = predict(spec)
    half = Probe(5e9, 100e9, 1e-6)
    windows = [_window(t * 1e3), _window(2 ** ELASTICITY * t * 1e3, probe=half), _window(t * 1e3)]
    st = state_figures(windows, spec, predict, t)
    assert [w.error for w in st.windows] == pytest.approx([0.0, 0.0, 0.0])
    assert st.normalized_error == pytest.approx(0.0)
    assert st.raw_error == pytest.approx(0.0)  # the median block is at the reference state
    assert st.drift == pytest.approx({"triad_bytes_per_s": 0.0, "matmul_flops_per_s": 0.0, "dispatch_s_per_node": 0.0})
    assert st.unstable  # the bandwidth probe moved 100% between blocks
    assert st.control_drift == pytest.approx(1.0) and UNSTABLE < 1.0
    slow = state_figures([_window(2 * t * 1e3, probe=half)] * 3, spec, predict, t)
    assert slow.normalized_error == pytest.approx(0.0) and slow.raw_error == pytest.approx(-0.5)
    moved = shrunk(half, REF)
    assert moved.triad_bytes_per_s == pytest.approx(REF.triad_bytes_per_s / 2 ** 0.5)
    assert (moved.matmul_flops_per_s, moved.dispatch_s_per_node) == pytest.approx((100e9, 1e-6))


@pytest.mark.parametrize("moved, factor, unstable", [
    ("dispatch_s_per_node", 2.0, False),  # the dispatch probe is no control: it moves by half within a quiet run
    ("matmul_flops_per_s", 1 + UNSTABLE * 1.2, True),
    ("matmul_flops_per_s", 1 + UNSTABLE * 0.8, False),
    ("triad_bytes_per_s", 1 / (1 + UNSTABLE * 1.2), True),
])
def test_the_machine_is_unstable_when_a_control_moves(moved, factor, unstable):
    """The triad and the matrix product are the run's controls (CONTROLS): one moving more than UNSTABLE
    between the kept blocks (max / min - 1) marks the machine unstable; every probe's move is reported."""
    assert CONTROLS == ("triad_bytes_per_s", "matmul_flops_per_s")
    other = dataclasses.replace(REF, **{moved: getattr(REF, moved) * factor})
    st = state_figures([_window(10.0), _window(10.0, probe=other), _window(10.0)], _spec(), lambda s: 0.01, 0.01)
    move = max(factor, 1 / factor) - 1
    assert st.probe_moves == pytest.approx({f: move if f == moved else 0.0 for f in STATE_KEYS.values()})
    assert st.control_drift == pytest.approx(move if moved in CONTROLS else 0.0)
    assert st.unstable is unstable
    d = st.to_dict()
    assert d["machine_unstable"] is unstable and d["machine_unstable_over"] == UNSTABLE
    assert d["probe_moves"][moved] == pytest.approx(move)


def test_without_a_calibration_state_the_run_is_its_own_reference():
    st = state_figures([_window(10.0, Probe(8e9, 80e9, 2e-6)), _window(10.0, Probe(8e9, 80e9, 2e-6))],
                       _spec(state=False), lambda s: 0.009, 0.009)
    assert st.reference_source == "this run" and st.drift is None
    assert st.reference == Probe(8e9, 80e9, 2e-6)


def test_the_noise_band_and_the_miss():
    """The measured P10-P90 over the kept blocks; a prediction outside it is a miss; the bootstrap interval
    of the error is the same from run to run (a fixed seed)."""
    windows = [_window(ms) for ms in (10.0, 10.5, 11.0, 9.5, 10.2)]
    inside = state_figures(windows, _spec(), lambda s: 0.0102, 0.0102)
    assert inside.miss is False
    # sorted 9.5, 10.0, 10.2, 10.5, 11.0 ms; linear interpolation: P10 at 0.4 of the first step, P90 at 0.6 of the last
    assert (inside.measured_p10_s, inside.measured_p90_s) == pytest.approx((0.0097, 0.0108))
    outside = state_figures(windows, _spec(), lambda s: 0.008, 0.008)
    assert outside.miss is True and outside.normalized_error == pytest.approx(0.008 / 0.0102 - 1)
    lo, hi = outside.error_interval
    assert lo <= outside.normalized_error <= hi < 0
    assert bootstrap_interval([0.1, 0.2, 0.3]) == bootstrap_interval([0.1, 0.2, 0.3])
    assert bootstrap_interval([0.1]) is None


@pytest.mark.slow
def test_the_child_runs_blocks_between_probes(tmp_path):
    """onnxruntime's child times the runs in blocks with a probe before each and after the last, and
    ``measure_state`` (what ``hw calibrate`` stores) gives every probe a positive finite figure."""
    p = measure_state(tmp_path)
    assert all(0 < getattr(p, f) < float("inf") for f in STATE_KEYS.values())


@pytest.mark.slow
def test_validate_reports_the_state(tmp_path, capsys):
    from tests.util import const, model, vi
    from onnx import helper
    import onnx

    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [64, 256])], [vi("y", [64, 256])],
              [const("w", [256, 256], values=[0.0] * 65536)])
    path = tmp_path / "mm.onnx"
    onnx.save(m, path)
    capsys.readouterr()
    assert cli.main(["validate", str(path), "--hw", "epyc-9654", "--runs", "8", "--blocks", "4", "--format", "json",
                     "--no-progress"]) == 0
    d = json.loads(capsys.readouterr().out)["state"]
    assert len(d["windows"]) == 4 and sum(w["runs"] for w in d["windows"]) == 8
    assert d["reference_source"] == "this run" and d["measured_median_s"] > 0
    assert cli.main(["validate", str(path), "--hw", "epyc-9654", "--runs", "4", "--blocks", "2", "--no-progress"]) == 0
    assert "State      measured median" in capsys.readouterr().out
    page = tmp_path / "r.html"
    assert cli.main(["report", str(path), "--hw", "epyc-9654", "--validate", "--runs", "4", "--blocks", "2",
                     "-o", str(page), "--no-progress"]) == 0
    assert 'id="state-figures"' in page.read_text()


@pytest.mark.parametrize("drift, said", [
    (None, None),
    ({"triad_bytes_per_s": 0.24, "matmul_flops_per_s": 0.3, "dispatch_s_per_node": -0.42}, None),
    # the calibration's probe taken while another process ran: the run's matrix product twice as fast as it
    ({"triad_bytes_per_s": 0.243, "matmul_flops_per_s": 0.991, "dispatch_s_per_node": -0.423}, "matmul +99%"),
    ({"triad_bytes_per_s": -FAR_FROM_REFERENCE, "matmul_flops_per_s": 0.0, "dispatch_s_per_node": 0.0}, "triad -50%"),
])
def test_a_run_far_from_the_calibrated_state_says_its_reference_is_doubtful(drift, said):
    w = reference_warning(drift)
    if said is None:
        assert w is None
    else:
        assert w is not None and f"({said})" in w and "calibrate again" in w

