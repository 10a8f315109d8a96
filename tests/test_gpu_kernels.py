"""The GPU kernel model (issue 18, point 2): which nodes share a kernel, what stays on chip, what a
kernel costs (launch overhead, fill), the presets that carry it, and the published-figure check."""

import dataclasses
import math
import json
from pathlib import Path

import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf import cli
from onnxperf.insights.advice import fill_facts
from onnxperf.predict import precision
from onnxperf.predict.gpu_kernels import kernel_plan
from onnxperf.predict.tensors import tensor_bytes
from onnxperf.hardware import load_spec
from onnxperf.hardware.files import list_presets, load_preset, read_spec_file, to_toml
from onnxperf.predict.roofline import GEMV_ROWS, efficiencies, fill, half_rate_outputs, node_roofline, roofline

from .util import benchmark, const, model, vi

ROOT = Path(__file__).resolve().parent.parent
F = 4  # bytes per float32
KIB = 1024

#: a spec whose only non-unit constants are the kernel model's: launch overhead o, e = 1
O = 3e-6
BW = 1e12
PEAK = 1e14


def _spec(**extra):
    base = load_spec("a100-80gb")
    eff = {"fusion.gpu": 1, "overhead_s": O, **extra}
    return dataclasses.replace(base, peak_flops_per_s={"fp32": PEAK}, memory_bandwidth_bytes_per_s=BW,
                               efficiency=eff, efficiency_sources={}, memory_levels=())


def _resblock(n=8, c=64, hw=14):
    """x -> Conv(+bias) -> Relu -> Conv(+bias) -> Add(x) -> Relu: one bottleneck-style residual block."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    inits = [const("w1", [c, c, 3, 3]), const("b1", [c]), const("w2", [c, c, 3, 3]), const("b2", [c])]
    return model(nodes, [vi("x", [n, c, hw, hw])], [vi("y", None)], inits)


def test_conv_epilogue_and_residual_fuse_into_two_kernels():
    """Conv+Relu is one kernel; Conv+residual Add+Relu another: c1, c2 and s never touch memory; the
    residual x is read by the second kernel (from memory)."""
    n, c, hw = 8, 64, 14
    a = onnxperf.analyze(_resblock(n, c, hw))
    plan = kernel_plan(a)
    keys = [x.key for x in a.main_nodes]
    assert plan.kernel_count == 2 and plan.launches == {keys[0], keys[2]}
    assert [plan.kernel[k] for k in keys] == [keys[0], keys[0], keys[2], keys[2], keys[2]]
    assert plan.on_chip == {"c1", "c2", "s"}
    assert dict(plan.assumed) == {"pointwise op in the epilogue of a Conv/MatMul/Gemm": 2,
                                  "residual Add in the epilogue of a Conv/MatMul/Gemm (reads its other operand)": 1}
    r = roofline(a, _spec())
    act = n * c * hw * hw * F  # one feature map
    wts = (c * c * 9 + c) * F
    by = {x.op_type + str(i): x for i, x in enumerate(r.nodes)}
    # kernel 1: conv 1 reads x and its weights, writes nothing (c1 stays on chip); its Relu writes r1
    # kernel 2: conv 2 reads r1 and its weights; the Add reads x (not c2); the last Relu writes y
    # the row of the node that starts a kernel carries every member's bytes; the members run inside it
    assert by["Conv0"].bytes == 2 * act + wts and by["Conv0"].written == act
    assert by["Conv2"].bytes == 3 * act + wts and by["Conv2"].written == act
    for k in ("Relu1", "Add3", "Relu4"):
        assert by[k].bytes == 0 and by[k].time_s == 0 and by[k].runs == "inside" and by[k].how == "gpu kernel"
    assert by["Relu1"].kernel == by["Conv0"].key and by["Relu4"].kernel == by["Conv2"].key
    # one launch overhead per kernel; the kernel overlaps its members' arithmetic with all their traffic:
    # t = max(Σ W_i / π, Σ Q_i / β) + o (e = 1 on this spec)
    flops = [x.flops for x in a.main_nodes]
    assert by["Conv0"].time_s == pytest.approx(max((flops[0] + flops[1]) / PEAK, (2 * act + wts) / BW) + O)
    assert by["Conv2"].time_s == pytest.approx(max(sum(flops[2:]) / PEAK, (3 * act + wts) / BW) + O)
    assert r.latency_s == pytest.approx(by["Conv0"].time_s + by["Conv2"].time_s)
    # the carrier's ops stay its own: its rate is the convolution's
    assert by["Conv0"].ops == flops[0]
    assert r.kernels == 2 and not r.lower_bound


def test_a_kernel_overlaps_its_epilogue_write_with_its_arithmetic_on_a_preset():
    """Conv -> Relu at int8 on an L4 (fill, shipped efficiencies): one kernel whose time is
    max(c_conv / f + c_relu, (R_conv + W_relu) / (e_m·β)) + o, the Relu's write (the kernel's output)
    overlapping the convolution's arithmetic; summing the members' own max(c, m) (the model before issue 29's
    fix) priced it at max(c_conv / f, m_conv) + max(c_relu, m_relu) + o, more."""
    n, c, hw = 8, 64, 28
    p = precision.get("int8")
    a = precision.what_if(onnxperf.analyze(model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                                  helper.make_node("Relu", ["c"], ["y"])],
                                                 [vi("x", [n, c, hw, hw])], [vi("y", None)],
                                                 [const("w", [c, c, 3, 3])])), p)
    spec = dataclasses.replace(load_preset("l4"), memory_levels=())  # every byte at DRAM (no L2 level)
    cv_node, rl_node = a.main_nodes
    cv_raw, rl_raw = (node_roofline(x, spec, p.peak_key) for x in a.main_nodes)
    f = fill(cv_node, spec, cv_raw.peak_ops_per_s)
    _, e_m, o = efficiencies(spec, "conv")
    q = cv_node.bytes_read + rl_node.bytes_written  # x and w in, y out; c stays on chip
    assert q == n * c * hw * hw * 2 + c * c * 9  # int8: one byte an element
    cv, rl = roofline(a, spec, p).nodes
    c_s = cv_raw.compute_s / f + rl_raw.compute_s
    m_s = q / (e_m * spec.memory_bandwidth_bytes_per_s)
    assert cv.bytes == q and cv.compute_s == pytest.approx(c_s) and cv.memory_s == pytest.approx(m_s)
    assert cv.time_s == pytest.approx(max(c_s, m_s) + o) and cv.fill == f and cv.dispatch_s == o
    assert rl.time_s == 0 and rl.bytes == 0 and rl.runs == "inside"
    m_conv = cv_node.bytes_read / (e_m * spec.memory_bandwidth_bytes_per_s)
    m_relu = rl_node.bytes_written / (e_m * spec.memory_bandwidth_bytes_per_s)
    summed = max(cv_raw.compute_s / f, m_conv) + max(rl_raw.compute_s, m_relu) + o
    assert cv.time_s < summed


def test_plain_spec_has_no_kernel_model():
    a = onnxperf.analyze(_resblock())
    r = roofline(a, dataclasses.replace(_spec(), efficiency={}))
    # a plain roofline is an estimate, not a bound (issue 29, item 4): ``plain``, never ``lower_bound``
    assert r.kernels is None and r.assumed == () and r.plain and not r.lower_bound


def test_decomposed_layernorm_is_one_kernel_reading_its_input_once():
    """ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add: one normalization kernel that
    reads x once and writes y once."""
    rows, h = 32, 256
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]),
             helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["p"]),
             helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["d", "sd"], ["nrm"]),
             helper.make_node("Mul", ["nrm", "g"], ["sc"]),
             helper.make_node("Add", ["sc", "b"], ["y"])]
    inits = [const("two", [], values=2.0), const("eps", [], values=1e-5), const("g", [h]), const("b", [h])]
    a = onnxperf.analyze(model(nodes, [vi("x", [rows, h])], [vi("y", None)], inits, opset=17))
    plan = kernel_plan(a)
    assert plan.kernel_count == 1
    assert dict(plan.assumed) == {"op inside a normalization kernel (reduction + pointwise, or Softmax/LayerNorm)": 8}
    r = roofline(a, _spec())
    moved = sum(x.bytes for x in r.nodes)
    # x read once, y written once, plus the constants (two scalars, gamma and beta)
    assert moved == 2 * rows * h * F + (2 + 2 * h) * F


def test_views_and_shape_arithmetic_run_no_kernel():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: the shape arithmetic is computed when the
    engine is built, the Reshape is a view; only the MatMul launches."""
    b, h = 4, 64
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shp"], axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["x2"]),
             helper.make_node("MatMul", ["x2", "w"], ["y"])]
    inits = [const("zero", [], TensorProto.INT64, 0), const("ax", [1], TensorProto.INT64, [0]),
             const("minus1", [1], TensorProto.INT64, [-1]), const("w", [h, h])]
    a = onnxperf.analyze(model(nodes, [vi("x", [b, h])], [vi("y", None)], inits))
    plan = kernel_plan(a)
    keys = [x.key for x in a.main_nodes]
    assert plan.launches == {keys[-1]}
    assert plan.free == set(keys[:-1])
    what = dict(plan.assumed)
    assert what["computed when the engine is built (constants and shapes)"] == 4
    assert what["view (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no kernel"] == 1
    r = roofline(a, _spec())
    assert [x.time_s for x in r.nodes[:-1]] == [0.0] * 5
    # the MatMul reads x through the view: its bytes are x, w and y
    assert r.nodes[-1].bytes == (b * h + h * h + b * h) * F


def test_a_gemm_reads_its_operand_transposed():
    """Attention's scores Q·Kᵀ as exported: Transpose(K, perm 0,1,3,2) -> MatMul. The Transpose runs no
    kernel (the GEMM reads K transposed, as cuBLAS's transpose flag and onnxruntime's FusedMatMul do);
    the MatMul reads K's bytes. A Transpose of other axes, or one whose output another op reads too,
    still runs (and writes) its copy."""
    b, h, t, d = 2, 4, 64, 32
    q, kk = vi("q", [b, h, 1, d]), vi("k", [b, h, t, d])

    def plan_of(perm, extra_reader=False):
        nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=perm),
                 helper.make_node("MatMul", ["q", "kt"], ["s"])]
        outs = [vi("s", None)]
        if extra_reader:
            nodes.append(helper.make_node("Relu", ["kt"], ["r"]))
            outs.append(vi("r", None))
        a = onnxperf.analyze(model(nodes, [q, kk], outs, []))
        return a, kernel_plan(a)

    a, plan = plan_of([0, 1, 3, 2])
    keys = [x.key for x in a.main_nodes]
    assert plan.launches == {keys[1]} and plan.free == {keys[0]}
    assert dict(plan.assumed) == {"Transpose of the last two axes read only by a MatMul/Gemm: read transposed by "
                                  "the GEMM, no kernel": 1}
    r = roofline(a, _spec())
    assert r.nodes[0].time_s == 0.0
    # the MatMul reads q and K (through the transpose) and writes the scores [b, h, 1, t]
    assert r.nodes[1].bytes == (b * h * d + b * h * t * d + b * h * t) * F
    for perm, extra in (([0, 2, 1, 3], False), ([0, 1, 3, 2], True)):
        a, plan = plan_of(perm, extra)
        assert a.main_nodes[0].key in plan.launches  # a copy of its own
    # after another Transpose (through a Gather): onnxruntime merges the two into one permutation, a copy
    nodes = [helper.make_node("Transpose", ["kv"], ["kvt"], perm=[1, 0, 2, 3, 4]),
             helper.make_node("Gather", ["kvt", "one"], ["k2"], axis=0),
             helper.make_node("Transpose", ["k2"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"])]
    a = onnxperf.analyze(model(nodes, [q, vi("kv", [b, 2, h, t, d])], [vi("s", None)],
                               [const("one", [], TensorProto.INT64, 1)]))
    assert a.main_nodes[2].key in kernel_plan(a).launches
    assert "layout-transpose elimination" in roofline(a, _spec()).not_assumed


def test_a_tensor_read_outside_its_kernel_is_written():
    """Conv -> Relu where the Conv output also feeds a MaxPool: the Relu cannot fuse (its input is
    written anyway for the pool), so there are three kernels and nothing stays on chip."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2]),
             helper.make_node("Add", ["r", "p2"], ["y"]),
             helper.make_node("MaxPool", ["p"], ["p2"], kernel_shape=[1, 1])]
    nodes = [nodes[0], nodes[1], nodes[2], nodes[4], nodes[3]]
    a = onnxperf.analyze(model(nodes, [vi("x", [1, 8, 16, 16])], [vi("y", None)], [const("w", [8, 8, 1, 1])]))
    plan = kernel_plan(a)
    assert "c" not in plan.on_chip
    assert plan.kernel[a.main_nodes[1].key] == a.main_nodes[1].key


def test_fill_formula_and_gemv_exemption():
    """fill = N / (N + S·k) for a GEMM/conv output of N elements; 1 for a matrix product of at most
    GEMV_ROWS output rows and for other kernels."""
    sms, per_sm = 100, 1000
    spec = _spec(**{"gpu.sms": sms, "gpu.outputs_per_sm": per_sm})
    m, k, n = 64, 128, 256
    a = onnxperf.analyze(model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [m, k])],
                               [vi("y", None)], [const("w", [k, n])]))
    node = a.main_nodes[0]
    assert fill(node, spec) == pytest.approx(m * n / (m * n + sms * per_sm))
    r = roofline(a, spec)
    c = 2 * m * k * n / PEAK
    mem = (m * k + k * n + m * n) * F / BW
    assert r.nodes[0].time_s == pytest.approx(max(c / fill(node, spec), mem) + O)
    gemv = onnxperf.analyze(model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [GEMV_ROWS, k])],
                                  [vi("y", None)], [const("w", [k, n])]))
    assert fill(gemv.main_nodes[0], spec) == 1.0
    relu = onnxperf.analyze(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", None)]))
    assert fill(relu.main_nodes[0], spec) == 1.0
    assert fill(node, dataclasses.replace(spec, efficiency={"fusion.gpu": 1})) == 1.0


@pytest.mark.parametrize("preset, native", [("rtx4090", 330.3e12), ("rtx3090", 142e12), ("rtx5090", 419e12)])
def test_a_geforce_cards_fill_reference_is_its_native_fp16_rate(preset, native):
    """A GeForce card lists fp16 with fp32 accumulation, at half its tensor cores' native rate
    (``gpu.fp16_acc16_flops``, the whitepaper's fp16-accumulate figure): an int8 kernel at P_int8 needs
    P_int8 / native times the outputs, twice on the RTX 4090 (660.6 / 330.3) as on a datacenter GPU (the L4:
    242.5 / 121), not 4x; an fp16 kernel (at the fp32-accumulate rate, below the native one) keeps the constant."""
    s = load_spec(preset)
    per_sm = s.efficiency["gpu.outputs_per_sm"]
    assert s.efficiency["gpu.fp16_acc16_flops"] == native == pytest.approx(2 * s.peak_flops_per_s["fp16"], rel=1e-3)
    assert half_rate_outputs(s, s.peak_for("int8")) == pytest.approx(per_sm * s.peak_for("int8") / native)
    assert half_rate_outputs(s, s.peak_for("fp16")) == pytest.approx(per_sm)
    l4 = load_spec("l4")
    assert "gpu.fp16_acc16_flops" not in l4.efficiency
    assert half_rate_outputs(l4, l4.peak_for("int8")) == pytest.approx(2 * l4.efficiency["gpu.outputs_per_sm"], rel=0.01)
    if preset == "rtx4090":
        assert half_rate_outputs(s, s.peak_for("int8")) == pytest.approx(2 * per_sm, rel=0.01)


def test_the_fill_constant_scales_with_a_peak_above_the_fp16_rate():
    """k = gpu.outputs_per_sm · max(1, P / P_fp16) for a kernel at peak P (half_rate_outputs): a GEMM at an
    int8 peak of twice the fp16 one needs twice the outputs to fill the GPU; at tf32 (half the fp16 rate)
    the constant stays; the node's fill and its kernel time read the scaled figure, and the advice's fill
    facts (the batch that fills the SMs) the same."""
    sms, per_sm, p16 = 100, 1000, 2e14
    spec = dataclasses.replace(_spec(**{"gpu.sms": sms, "gpu.outputs_per_sm": per_sm}),
                               peak_flops_per_s={"fp32": PEAK, "tf32": p16 / 2, "fp16": p16, "int8": 2 * p16})
    assert half_rate_outputs(spec, 2 * p16) == pytest.approx(2 * per_sm)
    assert half_rate_outputs(spec, p16) == pytest.approx(per_sm)
    assert half_rate_outputs(spec, p16 / 2) == pytest.approx(per_sm)
    assert half_rate_outputs(spec) == pytest.approx(per_sm)
    assert half_rate_outputs(dataclasses.replace(spec, efficiency={"fusion.gpu": 1}), 2 * p16) == 0.0
    m, k, n = 64, 128, 256
    a = onnxperf.analyze(model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [m, k])],
                               [vi("y", None)], [const("w", [k, n])]))
    node = a.main_nodes[0]
    assert fill(node, spec, 2 * p16) == pytest.approx(m * n / (m * n + sms * 2 * per_sm))
    assert fill(node, spec, p16 / 2) == pytest.approx(m * n / (m * n + sms * per_sm))
    for name, peak, k_eff in (("int8", 2 * p16, 2 * per_sm), ("fp16", p16, per_sm), ("tf32", p16 / 2, per_sm)):
        prec = precision.get(name)
        r = roofline(precision.what_if(a, prec), spec, prec)
        f = m * n / (m * n + sms * k_eff)
        assert r.nodes[0].peak_ops_per_s == pytest.approx(peak)
        assert r.nodes[0].fill == pytest.approx(f), name
        assert r.nodes[0].compute_s == pytest.approx(2 * m * k * n / peak / f), name
        outputs, n_sms, need = fill_facts(r.nodes[0], spec, 1)
        assert outputs == pytest.approx(m * n / k_eff) and n_sms == sms
        assert need == math.ceil(sms * k_eff / (m * n))


def test_a_kernels_bytes_are_served_by_the_memory_levels_in_the_reuse_models_proportions():
    """With an L2 level (issue 29, item 2), a kernel's reads R and writes W are charged at each level in the
    proportions the reuse model gives the node's own reads r_k and writes w_k for a GPU
    (level_bytes_rw(gpu=True): writes at DRAM, a read's distance counting the node's writes):
    m = R·Σ_k (r_k / Σ r) / (e_m·β_k) + W·Σ_k (w_k / Σ w) / (e_m·β_k). x [m, k] @ w1 [k, n]
    -> h, h @ w2 [n, n] -> y: two kernels; an L2 that holds everything serves every read at its bandwidth
    and every write at DRAM's, one that holds nothing leaves DRAM's time, one between splits them as
    level_bytes does."""
    from onnxperf.hardware.spec import MemoryLevel
    from onnxperf.predict.reuse import level_bytes_rw

    m, k, n = 64, 128, 256
    a = onnxperf.analyze(model([helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["y"])],
                               [vi("x", [m, k])], [vi("y", None)], [const("w1", [k, n]), const("w2", [n, n])]))
    reads = [(m * k + k * n) * F, (m * n + n * n) * F]  # each kernel reads its inputs and writes its output
    writes = [m * n * F, m * n * F]
    l2_bw, e_m = 10 * BW, 0.8
    spec = _spec(**{"default.memory": e_m})
    dram = roofline(a, spec)
    assert [r.memory_s for r in dram.nodes] == pytest.approx([(r + w) / (e_m * BW) for r, w in zip(reads, writes)])
    for cap in (2**30, 1, 200 * KIB):
        lv = dataclasses.replace(spec, memory_levels=(MemoryLevel("L2", cap, l2_bw, "test"),))
        rw = level_bytes_rw(a, (cap,), gpu=True)
        r = roofline(a, lv)
        for node, row, rd, wr in zip(a.main_nodes, r.nodes, reads, writes):
            (r0, r1), (w0, w1) = rw[node.key]
            assert w0 == 0 and w1 == wr  # a GPU's writes reach DRAM
            assert row.memory_s == pytest.approx(rd * (r0 / (r0 + r1) / (e_m * l2_bw) + r1 / (r0 + r1) / (e_m * BW))
                                                 + wr / (e_m * BW))
            assert row.written == wr and row.time_s == pytest.approx(max(row.compute_s, row.memory_s) + O)
        if cap == 2**30:
            assert [x.memory_s for x in r.nodes] == pytest.approx(
                [rd / (e_m * l2_bw) + wr / (e_m * BW) for rd, wr in zip(reads, writes)])
        if cap == 1:
            assert [x.memory_s for x in r.nodes] == pytest.approx([x.memory_s for x in dram.nodes])
        if cap == 200 * KIB:  # between: the second reads h (64 KiB) from L2 (with y, 64 KiB, it fits), w2 not all
            assert 0 < rw[a.main_nodes[1].key][0][0] < reads[1]


GPU_PRESETS = [p for p in list_presets() if load_preset(p).kind == "gpu" or p.startswith("jetson-")]


def test_only_gpu_presets_use_the_kernel_model():
    """Its constants were fitted on NVIDIA GPUs running TensorRT (the MI300X copies them, said in its
    sources, until a fit of its own); CPUs and Apple SoCs stay plain."""
    assert len(GPU_PRESETS) == 25
    for p in set(list_presets()) - set(GPU_PRESETS):
        assert "fusion.gpu" not in load_preset(p).efficiency


@pytest.mark.parametrize("pid", GPU_PRESETS)
def test_gpu_presets_carry_the_kernel_model_with_sources(pid):
    s = load_preset(pid)
    eff = s.efficiency
    assert eff["fusion.gpu"] == 1 and eff["overhead_s"] > 0 and eff["gpu.sms"] >= 1
    assert 0 < eff["conv.compute"] <= 1 and 0 < eff["matmul.compute"] <= 1 and 0 < eff["default.memory"] <= 1
    assert set(s.efficiency_sources) == set(eff)
    assert all(len(v) > 20 for v in s.efficiency_sources.values())
    # the SM count agrees with the CUDA cores where the preset gives its parts
    assert eff["gpu.sms"] == int(eff["gpu.sms"])


def test_efficiency_sources_round_trip_and_are_checked(tmp_path):
    s = load_preset("t4")
    p = tmp_path / "t4.toml"
    p.write_text(to_toml(s))
    back = read_spec_file(p)
    assert back.efficiency == s.efficiency and back.efficiency_sources == s.efficiency_sources
    bad = to_toml(s).replace('[efficiency_sources]', '[efficiency_sources]\n"nope.compute" = "a source"')
    p.write_text(bad)
    with pytest.raises(onnxperf.base.errors.OptionError, match="nope.compute"):
        read_spec_file(p)


def test_summary_states_the_kernel_model(capsys):
    model_path = str(ROOT / "models" / "resnet50_torch.onnx")
    assert cli.main(["summary", model_path, "--dim", "batch=1", "--hw", "rtx3090"]) == 0
    out = capsys.readouterr().out
    assert "GPU kernel model: 56 kernels launched" in out and "lower bound" not in out
    assert "49  pointwise op in the epilogue" in out and "16  residual Add" in out
    assert cli.main(["summary", model_path, "--dim", "batch=1", "--hw", "rtx3090", "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["roofline"]["gpu_kernel_model"]
    assert k["kernels"] == 56 and {"what": "view (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no kernel",
                                    "nodes": 1} in k["assumed"]


def test_resnet50_throughput_rises_with_batch_on_a_gpu():
    """The issue's complaint: a plain roofline says ResNet-50's throughput on an RTX 3090 stops rising
    at batch 1. With the kernel model it rises to batch 32 and beyond, as every published measurement."""
    path = ROOT / "models" / "resnet50_torch.onnx"
    spec = load_spec("rtx3090")
    thr = {b: b / roofline(onnxperf.analyze(path, dims={"batch": b}), spec).latency_s for b in (1, 8, 32, 128)}
    assert thr[1] < thr[8] < thr[32] < thr[128]
    assert thr[8] > 2 * thr[1]


def test_published_resnet50_a100_rows_are_within_2x():
    """The benchmark's check on the ResNet-50 A100 80GB Paddle-TRT sweeps (27 published rows, fp16,
    int8, tf32, batch 1-256) with the Ampere constants as shipped: every prediction within 2x of the
    published throughput but the INT8 engine at batch 1-2 (within 2.25x), and the knee of each sweep
    within 2x. Those two are optimistic since the Ampere constants are fitted per generation: Paddle-TRT's
    batch-1 latency is about 0.7 ms whatever the precision (FP16 0.76, INT8 0.70 ms), a per-run floor no
    source quantifies, so the presets carry no per-run overhead; it keeps the published throughput rising
    to batch 128 where the model levels off at 64 (FP16, INT8), with the A100's 40 MB L2 as without it.
    benchmarks/gpu_realism.py runs every row (results/gpu_realism.md)."""
    G = benchmark("gpu_realism.py", "onnxperf_bench_gpu_realism")
    rows = [e for e in G.entries() if e["model"] == "resnet50" and e["device"] == "a100-80gb"
            and e["scenario"] == "fixed_batch"]  # the MLPerf rows of mlperf_resnet.json apart
    assert len(rows) == 27
    ev = G.evaluate(rows, lambda e, b: G.predict_latency(e["model"], b, None, e["device"], e["precision"]))
    bad = [(r["precision"], r["batch"], round(r["_ratio"], 2)) for r in ev if not 0.5 <= r["_ratio"] <= 2.0]
    assert {(p, b) for p, b, _ in bad} <= {("int8", 1), ("int8", 2)} and all(x <= 2.25 for _, _, x in bad), bad
    for k in G.knees(ev):
        assert 0.5 <= k["predicted"] / k["published"] <= 2, k


def test_plain_suffix_gives_the_plain_roofline(capsys):
    """``--hw t4:plain``: the same figures without the kernel model: the plain roofline, said so (an estimate,
    not a bound: issue 29, item 4)."""
    s = load_spec("t4:plain")
    assert s.id == "t4:plain" and s.efficiency == {} and s.peak_flops_per_s == load_spec("t4").peak_flops_per_s
    path = str(ROOT / "models" / "resnet50_torch.onnx")
    assert cli.main(["summary", path, "--dim", "batch=1", "--hw", "t4:plain", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)["roofline"]
    assert r["plain_roofline"] is True and r["latency_is_lower_bound"] is False and r["gpu_kernel_model"] is None
    assert cli.main(["summary", path, "--dim", "batch=1", "--hw", "t4", "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["roofline"]
    assert k["latency_s"] > r["latency_s"] and k["latency_is_lower_bound"] is False and k["plain_roofline"] is False
    assert cli.main(["summary", path, "--hw", "nope:plain"]) == 2
