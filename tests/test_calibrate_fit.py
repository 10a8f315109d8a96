"""The calibration suite is valid ONNX and costed by onnxperf; the fit recovers known efficiencies."""

import onnx
import pytest

import onnxperf
from onnxperf.products.calibration.fit import Sample, fit_efficiency
from onnxperf.products.calibration.run import kernel_s, sample_case
from onnxperf.products.calibration.suite import suite
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.products.validate.profile import NodeTiming
from onnxperf.products.validate.runner import run_session


def test_suite_models_are_valid_and_fully_costed():
    cases = suite(scale=1 / 16)
    assert len({c.name for c in cases}) == len(cases)
    families = {c.family for c in cases}
    assert {"conv", "matmul", "elementwise", "activation", "reduce", "norm", "movement", "pool"} <= families
    for c in cases:
        onnx.checker.check_model(c.model)
        a = onnxperf.analyze(c.model)
        assert a.coverage.complete, c.name
        assert a.totals.bytes_read > 0


def test_fit_recovers_synthetic_efficiencies():
    o = 2e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o), Sample("relu_tiny", "activation", 1e-9, 1e-9, o)]
    # conv attains 40% of peak when compute-bound, matmul 80%; movement 50% of bandwidth
    samples += [Sample(f"conv{i}", "conv", c, c / 10, c / 0.4 + o) for i, c in enumerate([1e-3, 2e-3, 5e-3])]
    samples += [Sample(f"mm{i}", "matmul", c, c / 10, c / 0.8 + o) for i, c in enumerate([1e-3, 4e-3])]
    samples += [Sample(f"mv{i}", "movement", 0.0, m, m / 0.5 + o) for i, m in enumerate([1e-4, 3e-4])]
    eff = fit_efficiency(samples)
    assert eff["overhead_s"] == pytest.approx(o)
    assert eff["conv.compute"] == pytest.approx(0.4)
    assert eff["matmul.compute"] == pytest.approx(0.8)
    assert eff["movement.memory"] == pytest.approx(0.5)
    assert "conv.memory" not in eff and eff["default.memory"] == pytest.approx(0.5)


def test_fit_finds_the_overlap_of_compute_and_memory_per_family():
    """A family whose measured time is compute + memory gets overlap 1; one whose time is the
    greater of the two keeps the pure roofline (no overlap key); efficiencies are recovered."""
    o = 1e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o)]
    # conv: time = c/0.8 + m (the weights' traffic is not hidden)
    samples += [Sample(f"conv{i}", "conv", c, m, c / 0.8 + m + o)
                for i, (c, m) in enumerate([(1e-3, 1e-4), (1e-3, 4e-4), (2e-3, 2e-4), (5e-4, 3e-4)])]
    # matmul: time = max(c/0.9, m)
    samples += [Sample(f"mm{i}", "matmul", c, m, max(c / 0.9, m) + o)
                for i, (c, m) in enumerate([(1e-3, 1e-4), (1e-3, 6e-4), (2e-3, 1e-3)])]
    eff = fit_efficiency(samples)
    assert eff["conv.overlap"] == 1.0 and eff["conv.compute"] == pytest.approx(0.8)
    assert "matmul.overlap" not in eff and eff["matmul.compute"] == pytest.approx(0.9)
    from onnxperf.products.calibration.fit import predict
    for s in samples[1:5]:
        assert predict(s, eff, 1.0, o) == pytest.approx(s.measured_s)


def test_suite_cases_hold_independent_copies():
    """Each suite model runs its op several times with its own inputs and weights, so the
    runtime's common-subexpression elimination cannot merge the copies."""
    for c in suite(scale=1 / 16):
        nodes = list(c.model.graph.node)
        per = len(nodes) // c.copies  # a case whose op needs another before it (a dequantized weight)
        assert len(nodes) == per * c.copies and c.copies >= 2, c.name
        ops = [n for i, n in enumerate(nodes) if i % per == per - 1]  # each copy's op, the last of its nodes
        ins = [tuple(i for i in n.input if i) for n in ops]  # "" is an omitted optional input
        assert len(set(ins)) == len(ins) and not set(ins[0]) & set(ins[1]), c.name
        assert len({n.op_type for n in ops}) == 1 and [n.op_type for n in nodes[:per]] * c.copies == [
            n.op_type for n in nodes], c.name


def test_a_case_faster_than_the_roof_is_capped_at_the_roof():
    """A one-op suite case served from the cache can beat the DRAM roof (a time below Q/β); the
    fitted efficiency stays at 1: calibration only ever lowers the roof."""
    o = 1e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o)]
    # pool reads from cache at 3x the DRAM bandwidth; movement attains 60% of it
    samples += [Sample(f"pool{i}", "pool", 0.0, m, m / 3.0 + o) for i, m in enumerate([1e-4, 2e-4])]
    samples += [Sample(f"mv{i}", "movement", 0.0, m, m / 0.6 + o) for i, m in enumerate([1e-4, 3e-4])]
    eff = fit_efficiency(samples)
    assert eff["pool.memory"] == 1.0
    assert eff["movement.memory"] == pytest.approx(0.6)
    assert eff["default.memory"] == 1.0  # the median of 3, 3, 0.6, 0.6 capped


def test_fit_separates_the_thread_pool_dispatch_of_mid_size_ops():
    """Mid-size ops (fit.MID) pay a parallel dispatch p on top of the single-threaded o; large ops
    pay it too. The fit recovers e_m, o and p, and the roofline charges p to nodes moving at least
    parallel_min_bytes."""
    from onnxperf.products.calibration.fit import MID, PARALLEL_MIN_BYTES

    o, p, e = 2e-6, 9e-6, 0.5
    big = PARALLEL_MIN_BYTES * 4
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o, 3072.0)]
    samples += [Sample(f"mv{i}", "movement", 0.0, m, m / e + o + p, big) for i, m in enumerate([1e-4, 3e-4, 5e-4])]
    samples += [Sample(name, "movement", 0.0, 2e-6, 2e-6 / e + o + p, float(PARALLEL_MIN_BYTES * 3)) for name in MID]
    eff = fit_efficiency(samples)
    assert eff["overhead_s"] == pytest.approx(o)
    assert eff["overhead_parallel_s"] == pytest.approx(p, rel=0.05)
    assert eff["movement.memory"] == pytest.approx(e, rel=0.05)
    assert eff["parallel_min_bytes"] == PARALLEL_MIN_BYTES
    from onnxperf.predict.roofline import efficiencies

    class S:
        efficiency = eff
    assert efficiencies(S, "movement", PARALLEL_MIN_BYTES)[2] == pytest.approx(o + eff["overhead_parallel_s"])
    assert efficiencies(S, "movement", PARALLEL_MIN_BYTES - 1)[2] == pytest.approx(o)


def test_integer_nodes_use_their_own_efficiency_where_calibrated():
    """A QLinearConv (8-bit arithmetic) looks up conv.int8.* before conv.*; a float conv never does."""
    from onnxperf.predict.roofline import efficiencies

    class S:
        efficiency = {"conv.compute": 0.9, "conv.int8.compute": 0.3, "default.memory": 0.5}
    assert efficiencies(S, "conv", integer=True)[0] == 0.3
    assert efficiencies(S, "conv")[0] == 0.9
    assert efficiencies(S, "matmul", integer=True)[:2] == (1.0, 0.5)


def test_suite_has_integer_cases_costed_as_integer_arithmetic():
    from onnxperf.products.calibration.suite import suite

    ints = [c for c in suite(scale=1 / 16) if c.family.endswith(".int8")]
    assert {c.family for c in ints} == {"conv.int8", "conv.depthwise.int8", "matmul.int8"} and len(ints) == 6
    for c in ints:
        n = onnxperf.analyze(c.model).main_nodes[0]
        assert n.status == "counted" and n.int_ops > n.flops


def test_profiler_cost_is_the_profiled_floor_less_the_end_to_end_one():
    from onnxperf.products.validate.compare import profiler_cost_s

    class S:
        efficiency = {"overhead_s": 1.8e-6, "overhead_profiled_s": 4.0e-6}
    assert profiler_cost_s(S) == pytest.approx(2.2e-6)

    class P:
        efficiency = {}
    assert profiler_cost_s(P) == 0.0


def test_depthwise_convolutions_are_calibrated_apart():
    """A conv with one input channel per group looks up conv.depthwise.* (and .int8) first; the suite's
    depthwise cases fit them; a dense or grouped conv never uses them."""
    from onnx import helper

    from onnxperf.predict.roofline import efficiencies, families, is_depthwise

    from .util import const, model, vi
    dw = onnxperf.analyze(model([helper.make_node("Conv", ["x", "w"], ["y"], group=8)], [vi("x", [1, 8, 6, 6])],
                                [vi("y", None)], [const("w", [8, 1, 3, 3])])).main_nodes[0]
    grouped = onnxperf.analyze(model([helper.make_node("Conv", ["x", "w"], ["y"], group=2)], [vi("x", [1, 8, 6, 6])],
                                     [vi("y", None)], [const("w", [8, 4, 3, 3])])).main_nodes[0]
    assert is_depthwise(dw) and not is_depthwise(grouped)
    assert families("conv", True, True) == ("conv.depthwise.int8", "conv.depthwise", "conv.int8", "conv")

    class S:
        efficiency = {"conv.compute": 0.9, "conv.depthwise.compute": 0.2}
    assert efficiencies(S, "conv", depthwise=True)[0] == 0.2 and efficiencies(S, "conv", integer=True)[0] == 0.9
    assert {c.family for c in suite(scale=1 / 16) if "depthwise" in c.family} == {"conv.depthwise",
                                                                                  "conv.depthwise.int8"}


def test_transcendental_functions_are_fitted_on_their_arithmetic():
    """erf_1m is memory-bound on the roofline (1 FLOP per element, 8 bytes) but takes W/(e·π): its
    own family op.Erf is fitted as a share of the compute roof, with no overlap; the other
    transcendental functions get the median of those; neither enters default.compute."""
    from onnxperf.products.calibration.fit import compute_fitted, predict

    o = 2e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o), Sample("relu_tiny", "activation", 1e-9, 1e-9, o)]
    samples += [Sample(f"mm{i}", "matmul", c, c / 10, c / 0.8 + o) for i, c in enumerate([1e-3, 4e-3])]
    # erf: compute 4 µs, memory 40 µs, measured 200 µs + o -> 2% of the compute roof; sigmoid 10%
    erf = Sample("erf_1m", "op.Erf", 4e-6, 40e-6, 4e-6 / 0.02 + o)
    sig = Sample("sigmoid_1m", "op.Sigmoid", 16e-6, 40e-6, 16e-6 / 0.10 + o)
    tanh = Sample("tanh_1m", "op.Tanh", 4e-6, 40e-6, 4e-6 / 0.05 + o)
    eff = fit_efficiency(samples + [erf, sig, tanh])
    assert compute_fitted("op.Erf") and not compute_fitted("elementwise") and not compute_fitted("op.Relu")
    assert eff["op.Erf.compute"] == pytest.approx(0.02) and eff["op.Erf.overlap"] == 0.0
    assert eff["op.Sigmoid.compute"] == pytest.approx(0.10) and eff["op.Tanh.compute"] == pytest.approx(0.05)
    assert eff["transcendental.compute"] == pytest.approx(0.05) and eff["transcendental.overlap"] == 0.0
    assert eff["default.compute"] == pytest.approx(0.8)
    for s in (erf, sig, tanh):
        assert predict(s, eff, 1.0, o) == pytest.approx(s.measured_s)


def test_transcendental_nodes_look_up_their_own_keys_first():
    """An Erf node in a model: op.Erf.* before transcendental.* before its family's keys; BiasGelu
    takes Gelu's; Relu is not transcendental. The node's time is its arithmetic at that share."""
    from onnx import helper

    from onnxperf.predict.roofline import families, roofline

    from .util import model, vi
    assert families("elementwise", op="Erf") == ("op.Erf", "transcendental", "elementwise")
    assert families("activation", op="BiasGelu")[:2] == ("op.Gelu", "transcendental")
    assert families("activation", op="Relu") == ("op.Relu", "activation") and families("activation") == ("activation",)
    n_elems = 64 * 1024
    a = onnxperf.analyze(model([helper.make_node("Erf", ["x"], ["y"]), helper.make_node("Exp", ["y"], ["z"])],
                               [vi("x", [64, 1024])], [vi("z", None)]))

    class S:
        id = "s"
        memory_bandwidth_bytes_per_s = 100e9
        efficiency = {"op.Erf.compute": 0.02, "op.Erf.overlap": 0.0, "transcendental.compute": 0.05,
                      "transcendental.overlap": 0.0, "elementwise.memory": 1.0, "elementwise.overlap": 1.0}

        def peak_for(self, dtype):
            return 100e9
    erf, exp = roofline(a, S()).nodes
    assert erf.bound == "compute" and erf.time_s == pytest.approx(n_elems / (0.02 * 100e9))
    assert exp.time_s == pytest.approx(n_elems / (0.05 * 100e9))


def test_suite_has_the_transcendental_cases():
    from onnxperf.products.calibration.fit import compute_fitted

    fams = {c.name: c.family for c in suite(scale=1 / 16)}
    # bilinear Resize: its time follows its output elements, fitted on its arithmetic too
    assert fams["resize_linear_x4"] == "op.Resize" and compute_fitted("op.Resize")
    # windowed attention as Einsum: its own key, fitted by its bound (compute) like any op
    assert fams["einsum_qk_windows"] == fams["einsum_av_windows"] == "op.Einsum" and not compute_fitted("op.Einsum")
    assert {fams[k] for k in ("erf_1m", "sigmoid_1m", "tanh_1m", "gelu_1m", "softmax_rows")} == {
        "op.Erf", "op.Sigmoid", "op.Tanh", "op.Gelu", "op.Softmax"}


def test_skip_layer_norm_is_calibrated_on_its_own():
    """onnxruntime's SkipLayerNormalization runs ~8x slower per element than LayerNormalization on its
    CPU provider: the suite measures it (com.microsoft domain) and its nodes look up op.SkipLayerNormalization.*."""
    from onnxperf.predict.roofline import efficiencies

    case = next(c for c in suite(scale=1 / 16) if c.name == "skiplayernorm_768")
    assert case.family == "op.SkipLayerNormalization"
    n = onnxperf.analyze(case.model).main_nodes[0]
    assert n.op_type == "SkipLayerNormalization" and n.status == "counted" and n.family == "norm"

    class S:
        efficiency = {"norm.memory": 0.5, "op.SkipLayerNormalization.memory": 0.06}
    assert efficiencies(S, n.family, op=n.op_type)[1] == 0.06 and efficiencies(S, n.family, op="LayerNormalization")[1] == 0.5


def test_suite_has_8_bit_elementwise_cases():
    """QOperator exports' QLinearAdd/QLinearMul/QLinearSigmoid and the Quantize/DequantizeLinear of
    QDQ and dynamic exports run at rates of their own: each has a suite case fitting op.<Op>.*,
    valid, fully costed, on uint8 data."""
    fams = {c.name: c for c in suite(scale=1 / 16)}
    want = {"qlinearadd_1m": "QLinearAdd", "qlinearmul_1m": "QLinearMul", "qlinearsigmoid_1m": "QLinearSigmoid",
            "qlinearsoftmax_rows": "QLinearSoftmax", "quantize_1m": "QuantizeLinear",
            "dequantize_1m": "DequantizeLinear"}
    for name, op in want.items():
        c = fams[name]
        assert c.family == f"op.{op}"
        nodes = onnxperf.analyze(c.model).main_nodes
        assert {n.op_type for n in nodes} == {op} and all(n.status == "counted" for n in nodes)


def test_a_recurrent_family_is_fitted_on_its_recurrence():
    """An rnn sample's input projection (gemm_s of its compute_s) runs at the fitted matmul efficiency;
    rnn.compute is fitted on the rest: (W − W_g)/π over (t − o − W_g/(e_mm·π)) (issue 30, item 4)."""
    o = 2e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o), Sample("relu_tiny", "activation", 1e-9, 1e-9, o)]
    samples += [Sample(f"mm{i}", "matmul", c, c / 10, c / 0.8 + o) for i, c in enumerate([1e-3, 4e-3])]
    gemm, rec = 1e-3, 2e-3  # the projection at 0.8 of the peak, the recurrence at 0.25
    samples += [Sample("lstm", "rnn", gemm + rec, 1e-5, gemm / 0.8 + rec / 0.25 + o, gemm_s=gemm)]
    eff = fit_efficiency(samples)
    assert eff["matmul.compute"] == pytest.approx(0.8)
    assert eff["rnn.compute"] == pytest.approx(0.25)


def test_the_nhwc_layout_transposes_around_a_qlinearconv_case_are_not_its_time(tmp_path):
    """onnxruntime runs QLinearConv channels-last and puts a Transpose before and after each copy of a one-op
    case; in a model a chain of QLinearConvs stays channels-last. The case's time is its QLinearConv kernels
    alone (the Transposes the runtime inserted left out), while a case that is itself a Transpose keeps them."""
    def t(op, us):
        return NodeTiming(f"{op}_{us}", op, "CPUExecutionProvider", us * 1e-6, 1.0, median_s_per_run=us * 1e-6)

    timings = [t("Transpose", 80), t("QLinearConv", 275), t("Transpose", 18), t("ReorderInput", 5)]
    assert kernel_s(timings, {"QLinearConv"}) == pytest.approx(275e-6)
    assert kernel_s(timings, {"Transpose", "QLinearConv"}) == pytest.approx(373e-6)
    assert kernel_s(timings) == pytest.approx(373e-6)  # no case given: only the NCHWc reorders are boundaries

    case = next(c for c in suite(scale=1 / 16) if c.name == "qlinearconv3x3_64")
    assert {n.op_type for n in case.model.graph.node} == {"QLinearConv"}
    spec = onnxperf.hardware.load_spec("xeon-8480plus")
    s = sample_case(case, spec, tmp_path, runs=2, warmup=1, threads=1, opt="all")
    rr = run_session(tmp_path / f"{case.name}.onnx", make_inputs(onnxperf.analyze(case.model), seed=0), runs=2,
                     warmup=1, threads=1, opt="all", profile=True, keep_optimized=False)
    ops = {x.op_type for x in rr.node_timings}
    assert "Transpose" in ops and "QLinearConv" in ops  # the runtime's layout boundary is there to leave out
    assert s.measured_s > 0
