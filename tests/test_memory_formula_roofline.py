"""Liveness peak on hand-computable graphs, exact polynomial fits, roofline functions."""

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.base.formula import NotPolynomialError, fit, fit_many, largest_int
from onnxperf.predict.memory import largest_fitting, liveness
from onnxperf.predict.roofline import COMPUTE, MEMORY, attainable, bound, node_time, ridge_point, roofline
from onnxperf.cost.request import Request

from .util import const, model, vi

F = 4  # bytes per float32


def test_chain_peak_is_two_tensors():
    n = 1000
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Relu", ["b"], ["c"])]
    mem = liveness(onnxperf.analyze(model(nodes, [vi("x", [n])], [vi("c", None)])))
    # each step holds its input and its output; x dies after step 0
    assert mem.timeline == (2 * n * F, 2 * n * F, 2 * n * F)
    assert mem.peak_bytes == 2 * n * F and mem.peak_step == 0
    assert mem.preallocated_bytes == 4 * n * F


def test_diamond_peak_by_hand():
    n = 1000
    nodes = [helper.make_node("Relu", ["x"], ["a"]),                 # step 0: x, a
             helper.make_node("Concat", ["x", "x"], ["b"], axis=0),  # step 1: x, a, b(2n)
             helper.make_node("Concat", ["a", "b"], ["c"], axis=0)]  # step 2: a, b, c(3n); x dead
    mem = liveness(onnxperf.analyze(model(nodes, [vi("x", [n])], [vi("c", None)])))
    assert mem.timeline == (2 * n * F, 4 * n * F, 6 * n * F)
    assert mem.peak_bytes == 6 * n * F and mem.peak_node_key == "2"
    assert mem.preallocated_bytes == (n + n + 2 * n + 3 * n) * F


def test_views_alias_their_input_buffer():
    n = 1000
    shape = const("s", [2], 7, [10, 100])
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    mem = liveness(onnxperf.analyze(model(nodes, [vi("x", [n])], [vi("y", None)], [shape])))
    assert mem.timeline == (n * F, 2 * n * F)
    assert mem.preallocated_bytes == 2 * n * F


def test_graph_outputs_live_to_the_end_and_weights_are_not_activations():
    n = 100
    w = const("w", [n, n])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["early"]), helper.make_node("Relu", ["x"], ["t"]),
             helper.make_node("Relu", ["t"], ["late"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [1, n])], [vi("early", None), vi("late", None)], [w]))
    mem = liveness(a)
    # step 2: early (output, kept) + t + late
    assert mem.timeline[2] == 3 * n * F
    assert mem.weight_bytes == n * n * F
    assert mem.weight_bytes_fp16 == n * n * 2 and mem.weight_bytes_int8 == n * n
    assert mem.total_bytes == mem.weight_bytes + mem.peak_bytes


def test_unknown_sizes_are_counted_not_zero():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    mem = liveness(onnxperf.analyze(model(nodes, [vi("x", ["batch", 4])], [vi("y", None)]), default_batch=False))
    assert mem.unknown_tensors == 2 and not mem.complete


def test_fit_exact_on_polynomials():
    p = fit(lambda d: 3 * d["b"] * d["s"] ** 2 + 7 * d["s"] + 11, ["b", "s"])
    assert p({"b": 5, "s": 9}) == 3 * 5 * 81 + 63 + 11
    assert dict(p.terms) == {(1, 2): 3, (0, 1): 7, (0, 0): 11}
    q = fit(lambda d: (d["n"] * (d["n"] + 1)) // 2, ["n"])
    assert dict(q.terms) == {(2,): Fraction(1, 2), (1,): Fraction(1, 2)}
    assert "b·s²" in p.format()


def test_fit_refuses_non_polynomials():
    with pytest.raises(NotPolynomialError, match="not a polynomial"):
        fit(lambda d: (d["h"] - 1) // 2 + 1, ["h"])  # a strided conv's output size
    with pytest.raises(NotPolynomialError):
        fit(lambda d: 2 ** d["n"], ["n"])


def test_fit_many_marks_only_the_bad_component():
    polys = fit_many(lambda d: [d["b"] * 10, max(d["b"], 3)], ["b"])
    assert polys[0] is not None and polys[1] is None


def test_largest_int():
    assert largest_int(lambda n: 7 * n + 5 <= 1000) == (1000 - 5) // 7
    assert largest_int(lambda n: n <= 0) is None


def test_mlp_macs_formula_in_batch():
    h, f = 16, 32
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, f])])
    p = fit(lambda d: onnxperf.analyze(m, dims=d).totals.macs, ["batch"])
    assert dict(p.terms) == {(1,): h * f}


# --- roofline, with the issue's hand-worked figures -----------------------------------------

@dataclass(frozen=True)
class _Spec:
    id: str
    peak: float
    memory_bandwidth_bytes_per_s: float
    efficiency: dict = field(default_factory=dict)

    def peak_for(self, dtype: str) -> float:
        return self.peak


XEON = _Spec("xeon", 20 * 1.5e9 * 16 * 1 * 2, 4 * 2400e6 * 8)  # 960 GFLOP/s, 76.8 GB/s
RTX3090 = _Spec("rtx3090", 10496 * 1.7e9 * 2, 936e9)


def test_ridge_points_from_the_issue():
    assert XEON.peak == 960e9 and XEON.memory_bandwidth_bytes_per_s == 76.8e9
    assert ridge_point(XEON.peak, XEON.memory_bandwidth_bytes_per_s) == pytest.approx(12.5)
    assert RTX3090.peak == pytest.approx(35.7e12, rel=1e-3)
    assert round(ridge_point(RTX3090.peak, RTX3090.memory_bandwidth_bytes_per_s), 1) == 38.1


def test_attainable_time_and_bound():
    pi, beta = XEON.peak, XEON.memory_bandwidth_bytes_per_s
    assert attainable(pi, beta, 1.0) == beta            # memory roof
    assert attainable(pi, beta, 100.0) == pi            # compute roof
    assert node_time(960e9, 1.0, pi, beta) == pytest.approx(1.0)
    assert node_time(0, 76.8e9, pi, beta) == pytest.approx(1.0)   # data movement takes bytes/beta
    assert bound(12.5 * 1000 + 1, 1000, pi, beta) == COMPUTE
    assert bound(12.5 * 1000 - 1, 1000, pi, beta) == MEMORY


def test_model_roofline_sums_node_times():
    n = 256
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Transpose", ["h"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [n, n])], [vi("y", None)], [const("w", [n, n])]))
    r = roofline(a, XEON)
    mm, tr = r.nodes
    flops = 2 * n ** 3
    assert mm.time_s == pytest.approx(max(flops / XEON.peak, 3 * n * n * F / XEON.memory_bandwidth_bytes_per_s))
    assert tr.bound == MEMORY and tr.time_s == pytest.approx(2 * n * n * F / XEON.memory_bandwidth_bytes_per_s)
    assert r.latency_s == pytest.approx(mm.time_s + tr.time_s)
    assert sum(x.share for x in r.nodes) == pytest.approx(1.0)


def test_largest_batch_fits_budget_exactly():
    from onnxperf.predict.memory import largest_fitting
    h, f = 64, 256
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    m = model(nodes, [vi("x", ["batch", h])], [vi("z", None)], [const("w", [h, f])])
    weights = h * f * F
    # peak: step 0 holds x (b·h) and y (b·f); step 1 holds y and z (2·b·f) -> per batch 2·f floats
    per_batch = 2 * f * F
    budget = weights + 37 * per_batch + 5
    r = largest_fitting(Request(m, memory_budget=budget))
    assert r.value == 37 and r.method == "polynomial"
    assert r.total_bytes == weights + 37 * per_batch <= budget < r.next_total_bytes
    assert dict(r.formula.terms) == {(1,): per_batch, (0,): weights}


def test_largest_batch_none_when_weights_do_not_fit():
    from onnxperf.predict.memory import largest_fitting
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", ["batch", 8])], [vi("y", None)],
              [const("w", [8, 8])])
    assert largest_fitting(Request(m, memory_budget=100)).value is None


def test_parse_bytes():
    from onnxperf.base.errors import OptionError
    from onnxperf.ui.units import parse_bytes
    assert parse_bytes("8GiB") == 8 * 2**30 and parse_bytes("16GB") == 16 * 10**9 and parse_bytes("512") == 512
    with pytest.raises(OptionError):
        parse_bytes("lots")


def test_calibrated_efficiencies_and_overhead():
    n = 256
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Transpose", ["h"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [n, n])], [vi("y", None)], [const("w", [n, n])]))
    eff = {"matmul.compute": 0.5, "movement.memory": 0.25, "overhead_s": 1e-6}
    cal = roofline(a, _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, eff))
    mm, tr = cal.nodes
    flops, mm_bytes, tr_bytes = 2 * n ** 3, 3 * n * n * F, 2 * n * n * F
    bw = XEON.memory_bandwidth_bytes_per_s
    assert mm.time_s == pytest.approx(max(flops / (0.5 * XEON.peak), mm_bytes / bw) + 1e-6)
    assert tr.time_s == pytest.approx(tr_bytes / (0.25 * bw) + 1e-6)


def test_dropout_at_inference_from_opset_12_is_a_view():
    n = 1000
    nodes = [helper.make_node("Dropout", ["x"], ["d"]), helper.make_node("Relu", ["d"], ["y"])]
    mem = liveness(onnxperf.analyze(model(nodes, [vi("x", [n])], [vi("y", None)], opset=13)))
    assert mem.timeline == (n * F, 2 * n * F)


def test_epilogue_fusion_in_a_calibrated_spec():
    from onnxperf.predict.roofline import epilogues
    c, hw = 16, 32
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "x"], ["s"]),     # residual add: epilogue of the conv
             helper.make_node("Relu", ["s"], ["r"]),          # epilogue of the epilogue
             helper.make_node("Relu", ["r"], ["y"])]          # a second activation: a kernel of its own
    m = model(nodes, [vi("x", [1, c, hw, hw])], [vi("y", None)], [const("w", [c, c, 3, 3])])
    a = onnxperf.analyze(m)
    assert set(epilogues(a)) == {"1", "2"}
    plain = roofline(a, XEON)
    fused = roofline(a, _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, {"fusion.epilogue": 1.0}))
    add_plain, add_fused = plain.nodes[1], fused.nodes[1]
    numel = c * hw * hw
    # the fused Add still reads the residual x, but not the conv output, and writes nothing
    assert add_fused.bytes == numel * F
    assert add_fused.time_s == pytest.approx(max(numel / XEON.peak, numel * F / XEON.memory_bandwidth_bytes_per_s))
    assert add_plain.time_s == pytest.approx(3 * numel * F / XEON.memory_bandwidth_bytes_per_s)
    assert fused.nodes[0].time_s == plain.nodes[0].time_s
    assert fused.latency_s < plain.latency_s


def test_an_activation_whose_input_has_two_readers_does_not_fuse():
    from onnxperf.predict.roofline import epilogues
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["a"]),
             helper.make_node("Sigmoid", ["h"], ["b"]), helper.make_node("Add", ["a", "b"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [4, 8])], [vi("y", None)], [const("w", [8, 8])]))
    assert epilogues(a) == {}


def test_epilogues_follow_onnxruntime_cpu_fusions():
    """Conv then activation fuses but an Add after the activation does not; a batched MatMul keeps
    its bias Add (no fusion) but takes a scalar scale (FusedMatMul); a 2-D MatMul takes a constant
    bias Add (-> Gemm) and then an activation (-> FusedGemm)."""
    from onnxperf.predict.roofline import epilogues
    conv = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
            helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    a = onnxperf.analyze(model(conv, [vi("x", [1, 4, 8, 8])], [vi("y", None)], [const("w", [4, 4, 1, 1])]))
    assert set(epilogues(a)) == {"1"}
    bmm = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    a = onnxperf.analyze(model(bmm, [vi("x", [2, 4, 8])], [vi("y", None)], [const("w", [8, 8]), const("b", [8])]))
    assert epilogues(a) == {}
    scaled = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Mul", ["h", "s"], ["y"])]
    a = onnxperf.analyze(model(scaled, [vi("x", [2, 4, 8])], [vi("y", None)], [const("w", [8, 8]), const("s", [])]))
    assert epilogues(a) == {"1": frozenset({"h"})}
    mm2 = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["z"]),
           helper.make_node("Tanh", ["z"], ["y"])]
    a = onnxperf.analyze(model(mm2, [vi("x", [4, 8])], [vi("y", None)], [const("w", [8, 8]), const("b", [8])]))
    assert set(epilogues(a)) == {"1", "2"}


def test_constant_folding_in_a_calibrated_spec():
    """With fusion.constant_folding, nodes computed from constants and the shape arithmetic of
    fixed-shape tensors take no time; the work they do is still counted."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i"], ["d"], axis=0),
             helper.make_node("Unsqueeze", ["d", "ax"], ["du"]),
             helper.make_node("Concat", ["du", "m1"], ["shape"], axis=0),
             helper.make_node("Mul", ["w", "two"], ["w2"]),                 # constant-only
             helper.make_node("MatMul", ["x", "w2"], ["h"]),
             helper.make_node("Reshape", ["h", "shape"], ["y"])]
    inits = [const("w", [8, 8]), const("two", []),
             onnx.numpy_helper.from_array(np.array(0, np.int64), "i"),
             onnx.numpy_helper.from_array(np.array([0], np.int64), "ax"),
             onnx.numpy_helper.from_array(np.array([-1], np.int64), "m1")]
    m = model(nodes, [vi("x", [4, 8])], [vi("y", None)], inits)
    from onnxperf.predict.folding import folded
    assert folded(onnxperf.analyze(m)) == {"0", "1", "2", "3", "4"}
    # a symbolic dim in the file keeps Shape (and what depends on it) at run time, bound or not:
    # the runtime sees the file; the constant-only Mul still folds
    sym = model(nodes, [vi("x", ["n", 8])], [vi("y", None)], inits)
    assert folded(onnxperf.analyze(sym, dims={"n": 4})) == {"4"}
    assert folded(onnxperf.analyze(sym)) == {"4"}
    a = onnxperf.analyze(m)
    spec = _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, {"fusion.constant_folding": 1.0, "overhead_s": 1e-6})
    r = roofline(a, spec)
    assert [n.time_s for n in r.nodes[:5]] == [0.0] * 5
    assert r.nodes[5].time_s > 1e-6 and r.nodes[6].time_s >= 1e-6
    assert a.totals.flops == sum(n.flops for n in a.main_nodes) and a.nodes[4].flops == 64


def test_load_time_folds_into_a_conv_take_no_time():
    """A zero Pad before a Conv (PadFusion) and a per-channel Mul/Add after it (the BatchNorm a
    TensorFlow export leaves as Mul+Add: ConvMulFusion, ConvAddFusion) vanish at load; the Relu
    after them is still the conv's epilogue."""
    from onnxperf.predict.roofline import fusions
    c = 8
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"]),
             helper.make_node("Conv", ["p", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("Mul", ["c", "scale"], ["m"]),
             helper.make_node("Add", ["m", "shift"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    inits = [onnx.numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
             const("w", [c, c, 3, 3]), const("scale", [c, 1, 1]), const("shift", [c, 1, 1])]
    a = onnxperf.analyze(model(nodes, [vi("x", [1, c, 16, 16])], [vi("y", None)], inits))
    f = fusions(a)
    assert f.absorbed == {"0", "2", "3"} and set(f.epilogue) == {"4"}
    spec = _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, {"fusion.epilogue": 1.0, "overhead_s": 1e-6})
    r = roofline(a, spec)
    assert [n.time_s for n in r.nodes][0] == 0.0 and r.nodes[2].time_s == r.nodes[3].time_s == 0.0
    assert r.nodes[1].time_s > 1e-6
    # a reflect Pad is real work; a Mul by a full tensor is not a per-channel scale
    nodes[0] = helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect")
    inits[2] = const("scale", [1, c, 16, 16])
    f = fusions(onnxperf.analyze(model(nodes, [vi("x", [1, c, 16, 16])], [vi("y", None)], inits)))
    assert f.absorbed == frozenset() and f.epilogue == {}


def test_written_out_gelu_runs_as_one_kernel():
    """x + bias -> (x/√2 -> Erf -> +1 -> ·x -> ·0.5): onnxruntime's BiasGelu. The bias Add keeps
    its traffic (read x and the bias, write one tensor); the five GELU nodes cost arithmetic only."""
    from onnxperf.predict.roofline import fusions
    n, d = 128, 64
    nodes = [helper.make_node("Add", ["x", "bias"], ["h"]),
             helper.make_node("Div", ["h", "sqrt2"], ["q"]),
             helper.make_node("Erf", ["q"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["h", "e1"], ["g"]),
             helper.make_node("Mul", ["g", "half"], ["y"])]
    inits = [const("bias", [d]), *_GELU_CONSTS]
    a = onnxperf.analyze(model(nodes, [vi("x", [n, d])], [vi("y", None)], inits))
    f = fusions(a)
    assert set(f.epilogue) == {"1", "2", "3", "4", "5"} and not f.absorbed
    assert f.epilogue["4"] == {"h", "e1"}
    spec = _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, {"fusion.epilogue": 1.0})
    r = roofline(a, spec)
    # the Mul by 0.5 reads its scalar (4 bytes) and writes nothing: the graph output's write is
    # charged to the bias Add, whose roofline is unchanged
    assert r.nodes[5].bytes == 4 and r.nodes[0].bytes == roofline(a, XEON).nodes[0].bytes


#: GELU's constants as exporters write them (BERT's √2 is 1.4142099618911743, within onnxruntime's tolerance)
_GELU_CONSTS = [const("sqrt2", [], values=1.4142099618911743), const("one", [], values=1.0),
                const("half", [], values=0.5), const("inv_sqrt2", [], values=0.7071067811865476)]

#: written-out GELUs (x -> y) and whether onnxruntime 1.32's GeluFusion makes one Gelu of them (seen
#: in the optimized model it writes: the first two become Gelu, the others stay five nodes)
_GELU_SPELLINGS = {
    "half on x": ([("Div", ["x", "sqrt2"], "q"), ("Erf", ["q"], "e"), ("Add", ["e", "one"], "e1"),
                   ("Mul", ["x", "half"], "hx"), ("Mul", ["hx", "e1"], "y")], True),
    "half last": ([("Div", ["x", "sqrt2"], "q"), ("Erf", ["q"], "e"), ("Add", ["e", "one"], "e1"),
                   ("Mul", ["x", "e1"], "g"), ("Mul", ["g", "half"], "y")], True),
    "half on 1+erf (dynamo)": ([("Div", ["x", "sqrt2"], "q"), ("Erf", ["q"], "e"), ("Add", ["e", "one"], "e1"),
                                ("Mul", ["half", "e1"], "h1"), ("Mul", ["x", "h1"], "y")], False),
    "x times 1/sqrt2": ([("Mul", ["x", "inv_sqrt2"], "q"), ("Erf", ["q"], "e"), ("Add", ["e", "one"], "e1"),
                         ("Mul", ["x", "e1"], "g"), ("Mul", ["g", "half"], "y")], False),
    "not sqrt2": ([("Div", ["x", "half"], "q"), ("Erf", ["q"], "e"), ("Add", ["e", "one"], "e1"),
                   ("Mul", ["x", "e1"], "g"), ("Mul", ["g", "half"], "y")], False),
}


@pytest.mark.parametrize("spelling", list(_GELU_SPELLINGS))
def test_only_the_gelu_spellings_onnxruntime_fuses_are_one_kernel(spelling):
    """A written-out GELU is charged as one kernel only in the two patterns of onnxruntime's
    GeluFusion; the dynamo exporter's 0.5·(1+erf) runs as five kernels, each with its traffic."""
    from onnxperf.predict.roofline import fusions
    steps, fused = _GELU_SPELLINGS[spelling]
    nodes = [helper.make_node(op, ins, [out]) for op, ins, out in steps]
    a = onnxperf.analyze(model(nodes, [vi("x", [128, 64])], [vi("y", None)], _GELU_CONSTS))
    assert set(fusions(a).epilogue) == ({"1", "2", "3", "4"} if fused else set())
    spec = _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, {"fusion.epilogue": 1.0})
    times = [n.time_s for n in roofline(a, spec).nodes]
    plain = [n.time_s for n in roofline(a, XEON).nodes]
    # the first node keeps its roofline; fused members are cheaper, unfused ones are not
    assert times[0] == plain[0]
    assert all((t < p) == fused for t, p in zip(times[1:], plain[1:]))


def _position_table_model(h=16, table=8):
    # x + P[:, :seq]: a learned position table of `table` rows, as in BERT (512); past `table`
    # the Add's operands no longer broadcast and the shapes stop resolving
    nodes = [helper.make_node("Shape", ["x"], ["sh"], start=1, end=2),
             helper.make_node("Slice", ["P", "zero", "sh", "one"], ["pos"]),
             helper.make_node("Add", ["x", "pos"], ["y"]),
             helper.make_node("MatMul", ["y", "w"], ["z"])]
    return model(nodes, [vi("x", ["batch", "seq", h])], [vi("z", None)],
                 [const("P", [1, table, h]), const("zero", [1], TensorProto.INT64, [0]),
                  const("one", [1], TensorProto.INT64, [1]), const("w", [h, h])], opset=17)


def test_largest_fit_in_another_dim_is_confirmed_by_analysis_and_capped_where_shapes_stop():
    h, table = 16, 8
    m = _position_table_model(h, table)
    weights = (table * h + h * h) * 4 + 2 * 8  # P, w (float32) and the two int64 slice bounds

    # the budget bites first: the answer is the polynomial's, and analysis confirms it
    def total(seq):
        return liveness(onnxperf.analyze(m, dims={"batch": 1, "seq": seq})).total_bytes

    f = largest_fitting(Request(m, dims={"batch": 1}, memory_budget=total(5), memory_dim="seq"))
    assert (f.value, f.total_bytes, f.next_total_bytes, f.note) == (5, total(5), total(6), "")
    assert total(5) > weights
    # a budget far beyond the table: the polynomial says millions, the model takes at most 8
    f = largest_fitting(Request(m, dims={"batch": 1}, memory_budget=1 << 30, memory_dim="seq"))
    assert f.value == table and f.next_total_bytes is None and f.method == "polynomial, capped by analysis"
    assert f"seq={table + 1}" in f.note and f"stop at seq={table}" in f.note


def _skip_ln_model(xs, ys, bias=False, h=64, extra_user=False):
    nodes = []
    inits = [const("g", [h]), const("b", [h])]
    x = "x"
    if bias:
        nodes.append(helper.make_node("Add", ["x", "bias"], ["xb"]))
        inits.append(const("bias", [h]))
        x = "xb"
    nodes.append(helper.make_node("Add", [x, "y"], ["s"]))
    nodes.append(helper.make_node("LayerNormalization", ["s", "g", "b"], ["z"], axis=-1))
    outs = [vi("z", None)]
    if extra_user:
        nodes.append(helper.make_node("Relu", ["s"], ["r"]))
        outs.append(vi("r", None))
    return model(nodes, [vi("x", xs), vi("y", ys)], outs, inits)


@pytest.mark.parametrize("xs, ys, bias, extra_user, fused", [
    (["batch", "seq", 64], ["batch", "seq", 64], False, False, True),
    ([2, 8, 64], [2, 8, 64], True, False, True),               # format 1: a bias Add before the skip Add
    ([1, "seq", 64], ["batch", "seq", 64], False, False, False),  # 1 vs batch: not the same dims
    (["a", "b", 64], ["c", "d", 64], False, False, False),      # different symbols
    ([8, 64], [8, 64], False, False, False),                    # 2-D
    ([1, 2, 8, 64], [1, 2, 8, 64], False, False, False),        # 4-D
    ([2, 8, 64], [2, 8, 64], False, True, False),               # the sum is read by another node too
])
def test_skip_layer_norm_fusion_as_onnxruntime_does_it(xs, ys, bias, extra_user, fused):
    """Add(x, skip) (+ a bias Add) -> LayerNormalization is one SkipLayerNormalization kernel exactly
    when onnxruntime 1.32 fuses it (each case checked in the optimized model it writes): 3-D inputs
    of the same dims in the file, symbolic ones by the same name, the sum read by the norm alone.
    The fused kernel's time sits on the LayerNormalization at op.SkipLayerNormalization's
    efficiency, over the kernel's bytes (x, skip, bias, gamma, beta, out); the Adds take none."""
    from onnxperf.predict.roofline import fusions
    m = _skip_ln_model(xs, ys, bias, extra_user=extra_user)
    sizes = {"batch": 2, "seq": 8, "a": 2, "b": 8, "c": 2, "d": 8}
    a = onnxperf.analyze(m, dims={d: sizes[d] for d in (*xs, *ys) if isinstance(d, str)})
    f = fusions(a)
    ln = next(n for n in a.main_nodes if n.op_type == "LayerNormalization")
    adds = [n for n in a.main_nodes if n.op_type == "Add"]
    if not fused:
        assert f.runs_as == {} and f.inside == frozenset()
        return
    assert set(f.runs_as) == {ln.key} and f.inside == {n.key for n in adds}
    op, nbytes, ops, int_dtype = f.runs_as[ln.key]
    h, numel = 64, 2 * 8 * 64
    assert op == "SkipLayerNormalization" and int_dtype is None
    assert nbytes == 4 * (numel * 3 + 2 * h + (h if bias else 0))  # read x, skip (, bias), gamma, beta; write out
    assert ops == ln.flops + sum(n.flops for n in adds)
    eff = {"fusion.epilogue": 1.0, "op.SkipLayerNormalization.compute": 0.01, "op.SkipLayerNormalization.overlap": 0.0,
           "overhead_s": 2e-6}
    spec = _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, eff)
    r = {n.key: n for n in roofline(a, spec).nodes}
    assert all(r[n.key].time_s == 0.0 for n in adds)
    c, mem = ops / (XEON.peak * 0.01), nbytes / XEON.memory_bandwidth_bytes_per_s
    assert r[ln.key].time_s == pytest.approx(max(c, mem) + 2e-6) and r[ln.key].bytes == nbytes


@pytest.mark.parametrize("shared", [False, True])
def test_qdq_conv_runs_as_a_qlinearconv(shared):
    """DQ(x), DQ(w), DQ(bias) -> Conv -> Q is one QLinearConv (onnxruntime's QDQ transformer) when
    each DequantizeLinear is read by the conv alone: the Conv carries the int8 kernel (its
    arithmetic at the int8 peak and conv.int8's efficiency; bytes: int8 x, int8 w, int32 bias,
    int8 out), the Q/DQ nodes take no time. A DequantizeLinear shared with another reader keeps it in float."""
    from onnxperf.predict.roofline import fusions
    n, c, k, hw = 1, 16, 3, 8
    i8 = TensorProto.INT8
    nodes = [helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["x"]),
             helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["w"]),
             helper.make_node("DequantizeLinear", ["bq", "bs"], ["b"]),
             helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["y", "s", "z"], ["yq"])]
    outs = [vi("yq", None)]
    if shared:
        nodes.append(helper.make_node("Relu", ["x"], ["r"]))
        outs.append(vi("r", None))
    inits = [const("wq", [c, c, k, k], i8), const("bq", [c], TensorProto.INT32), const("s", [], values=0.1),
             const("z", [], i8, 0), const("bs", [c], values=np.full(c, 0.01))]
    a = onnxperf.analyze(model(nodes, [vi("xq", [n, c, hw, hw], i8)], outs, inits))
    f = fusions(a)
    if shared:
        assert "QLinearConv" not in {v[0] for v in f.runs_as.values()}
        return
    conv = next(x for x in a.main_nodes if x.op_type == "Conv")
    op, nbytes, ops, idt = f.runs_as[conv.key]
    numel = n * c * hw * hw
    assert (op, idt) == ("QLinearConv", "int8") and ops == conv.flops
    assert nbytes == numel + c * c * k * k + 4 * c + numel  # int8 x, int8 w, int32 bias, int8 out
    assert f.inside == {x.key for x in a.main_nodes if x.op_type in ("DequantizeLinear", "QuantizeLinear")}

    @dataclass(frozen=True)
    class Int8Spec(_Spec):
        def peak_for(self, dtype: str) -> float:
            return 4 * self.peak if dtype == "int8" else self.peak
    spec = Int8Spec("x", 1e12, 100e9, {"fusion.epilogue": 1.0, "conv.int8.compute": 0.5, "conv.compute": 0.9})
    r = {x.key: x for x in roofline(a, spec).nodes}
    assert r[conv.key].time_s == pytest.approx(max(ops / (4e12 * 0.5), nbytes / 100e9))
    assert all(r[k].time_s == 0 for k in f.inside)


@pytest.mark.parametrize("perm, eltwise", [
    ((0, 5, 1, 3, 2, 4), True), ((0, 2, 4, 3, 5, 1), True), ((2, 1, 0), True),   # MaxViT's window transposes
    ((0, 2, 1, 3), False), ((0, 1, 3, 2, 4), False),  # the innermost axis stays: copied by rows
    ((0, 2, 1), False), ((0, 2, 3, 1), False), ((0, 3, 1, 2), False), ((1, 0), False),  # one axis moved
])
def test_transposes_copied_element_by_element_have_their_own_key(perm, eltwise):
    """A Transpose that moves the innermost axis and is not a single axis moved is copied one element
    at a time by onnxruntime's CPU kernel (MaxViT's 6-D window partitions: 170-200 µs for 400 KB where
    a (0,2,1,3) takes 10): with a calibrated spec it takes op.Transpose.eltwise.* before movement.*."""
    from onnxperf.predict.roofline import ELTWISE_TRANSPOSE, _eltwise_perm, op_keys
    assert _eltwise_perm(list(perm)) == eltwise
    shape = [2, 3, 4, 5, 6, 7][:len(perm)]
    a = onnxperf.analyze(model([helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))],
                               [vi("x", shape)], [vi("y", None)]))
    assert op_keys(a) == ({"0": ELTWISE_TRANSPOSE} if eltwise else {})
    eff = {"movement.memory": 0.5, "op.Transpose.eltwise.memory": 0.01}
    t = roofline(a, _Spec("x", XEON.peak, XEON.memory_bandwidth_bytes_per_s, eff)).nodes[0].time_s
    nbytes = 2 * 4 * math.prod(shape)
    assert t == pytest.approx(nbytes / (XEON.memory_bandwidth_bytes_per_s * (0.01 if eltwise else 0.5)))
