"""Rules of the control_flow family (If, Loop, Scan, SequenceMap) on real models built with
onnx.helper: body costs times iterations, body records kept apart (scoped), totals counted once."""

from onnx import TensorProto, helper

import onnxperf
from onnxperf.cost.ops.control_flow import UNBOUNDED_TRIPS, sequence_map
from onnxperf.cost.ops.registry import NodeView, SubgraphCost

from .util import const, model, vi

BOOL, I64 = TensorProto.BOOL, TensorProto.INT64
N = 4


def _analyze(m):
    a = onnxperf.analyze(m)
    ctrl = a.main_nodes[-1]
    return a, ctrl


def _body_records(a, ctrl):
    return [r for r in a.nodes if r.scope.startswith(f"{ctrl.id}/")]


# --- If ------------------------------------------------------------------------------------

def _if_model(cond_const=None, else_op="Add"):
    then_g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["t"])], "then", [], [vi("t", [N, N])])
    domain = "custom.ops" if else_op == "Bar" else None
    else_g = helper.make_graph([helper.make_node(else_op, ["a", "a"], ["e"], domain=domain)], "else", [],
                               [vi("e", [N, N])])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)
    inputs = [vi("a", [N, N]), vi("b", [N, N])]
    inits = []
    if cond_const is None:
        inputs.append(vi("cond", [], BOOL))
    else:
        inits.append(const("cond", [], BOOL, cond_const))
    extra = {"custom.ops": 1} if else_op == "Bar" else None
    return model([node], inputs, [vi("y", [N, N])], inits, opset=17, extra_opsets=extra)


def test_if_counts_the_costlier_branch_and_names_it():
    a, r = _analyze(_if_model())
    assert r.op_type == "If" and r.status == "counted" and r.family == "control_flow"
    matmul_macs = N * N * N
    assert r.macs == matmul_macs
    assert r.flops == 2 * matmul_macs  # then (MatMul, 128 FLOPs) beats else (Add, 16 FLOPs)
    assert "then_branch" in r.note and f"{2 * matmul_macs:,} FLOPs" in r.note and f"{N * N:,} FLOPs" in r.note
    assert not r.exact  # the branch taken depends on data
    # bytes: the condition + the branch's own traffic
    assert r.bytes_read == 1 + 4 * 2 * N * N
    assert r.bytes_written == 4 * N * N
    # both branches' nodes have their own scoped records; totals count the If once
    body = _body_records(a, r)
    assert sorted((x.scope, x.op_type) for x in body) == [(f"{r.id}/else_branch", "Add"),
                                                          (f"{r.id}/then_branch", "MatMul")]
    assert a.totals.flops == r.flops and a.totals.macs == r.macs


def test_if_with_constant_condition_counts_the_taken_branch():
    _, r = _analyze(_if_model(cond_const=False))
    assert r.exact and "else_branch" in r.note
    assert (r.macs, r.flops) == (0, N * N)


def test_if_with_uncosted_body_node_is_inexact():
    _, r = _analyze(_if_model(else_op="Bar"))
    assert not r.exact and "else_branch has 1 of 1 nodes not costed" in r.note


# --- Loop ----------------------------------------------------------------------------------

def _loop_model(m_value=None, m_input=True, cond_value=None, cond_input=False, scan_out=False):
    """Loop carrying x [N]: x = x + w per iteration (N FLOPs); optional scan output x·x."""
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Add", ["x_in", "w"], ["x_out"])]
    outs = [vi("cond_out", [], BOOL), vi("x_out", [N])]
    if scan_out:
        nodes.append(helper.make_node("Mul", ["x_out", "x_out"], ["sq"]))
        outs.append(vi("sq", [N]))
    body = helper.make_graph(nodes, "body", [vi("i", [], I64), vi("cond_in", [], BOOL), vi("x_in", [N])], outs)
    inputs = [vi("x0", [N]), vi("w", [N])]
    inits = []
    if m_input:
        if m_value is None:
            inputs.append(vi("M", [], I64))
        else:
            inits.append(const("M", [], I64, m_value))
    if cond_input:
        if cond_value is None:
            inputs.append(vi("c0", [], BOOL))
        else:
            inits.append(const("c0", [], BOOL, cond_value))
    outputs = ["x_final"] + (["sq_all"] if scan_out else [])
    node = helper.make_node("Loop", ["M" if m_input else "", "c0" if cond_input else "", "x0"], outputs, body=body)
    gouts = [vi("x_final", [N])] + ([vi("sq_all", None)] if scan_out else [])
    return model([node], inputs, gouts, inits, opset=17)


def test_loop_with_constant_trip_count():
    trips = 5
    a, r = _analyze(_loop_model(m_value=trips))
    body_flops = N  # one Add of N elements; Identity is zero by design
    assert r.status == "counted" and r.exact
    assert r.flops == trips * body_flops
    assert f"M = {trips}" in r.note
    assert r.bytes_read == trips * (4 * N + 4 * N)  # x_in + w, every iteration
    assert r.bytes_written == trips * 4 * N
    body = _body_records(a, r)
    assert {x.op_type for x in body} == {"Identity", "Add"}
    assert all(x.scope == f"{r.id}/body" for x in body)
    assert a.totals.flops == r.flops  # counted once, through the Loop


def test_loop_whose_condition_stays_true_runs_m_times():
    """The body hands its cond input back unchanged: the loop runs all M iterations (exact)."""
    trips = 7
    _, r = _analyze(_loop_model(m_value=trips, cond_input=True, cond_value=True))
    assert r.flops == trips * N and r.exact and r.bound == "" and "stays true" in r.note


def test_loop_initially_false_condition_never_runs():
    _, r = _analyze(_loop_model(m_value=9, cond_input=True, cond_value=False))
    assert (r.flops, r.exact) == (0, True)


def test_loop_with_data_dependent_trip_count_counts_one_iteration():
    _, r = _analyze(_loop_model(m_value=None))
    assert r.status == "counted"
    assert r.flops == N and not r.exact and r.bound == "lower" and "one run" in r.note


def test_loop_sentinel_trip_count_is_a_while_loop():
    _, r = _analyze(_loop_model(m_value=2**63 - 1, cond_input=True, cond_value=True))
    # the cond hands itself back: true forever, and M sets no limit: one run counted, a lower bound
    assert r.flops == N and not r.exact and r.bound == "lower" and "does not end by itself" in r.note
    assert UNBOUNDED_TRIPS < 2**63 - 1


def test_loop_scan_output_length_gives_the_trip_count():
    trips = 3
    m = _loop_model(m_value=None, scan_out=True)  # M a graph input: not known
    # the scan output's leading dim, as the file declares it, is the number of iterations that ran
    m.graph.output[1].CopyFrom(vi("sq_all", [trips, N]))
    _, r = _analyze(m)
    assert r.flops == trips * 2 * N and r.exact and "scan output" in r.note


# --- Scan ----------------------------------------------------------------------------------

def _scan_body():
    nodes = [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             helper.make_node("Mul", ["x_t", "x_t"], ["y_t"])]
    return helper.make_graph(nodes, "scan_body", [vi("s_in", [N]), vi("x_t", [N])],
                             [vi("s_out", [N]), vi("y_t", [N])])


def test_scan_over_a_2d_sequence():
    seq = 6
    node = helper.make_node("Scan", ["s0", "xs"], ["s_final", "ys"], body=_scan_body(), num_scan_inputs=1)
    m = model([node], [vi("s0", [N]), vi("xs", [seq, N])], [vi("s_final", [N]), vi("ys", [seq, N])], opset=17)
    a, r = _analyze(m)
    assert r.status == "counted" and r.exact
    assert r.rule_since == 9
    assert r.flops == seq * 2 * N
    assert r.bytes_read == seq * 4 * 4 * N and r.bytes_written == seq * 2 * 4 * N
    # per iteration: Add reads s_in and x_t, Mul reads x_t twice (as its two operands)
    assert len(_body_records(a, r)) == 2 and a.totals.flops == r.flops


def test_scan_input_axis_attribute():
    seq = 5
    node = helper.make_node("Scan", ["s0", "xs"], ["s_final", "ys"], body=_scan_body(), num_scan_inputs=1,
                            scan_input_axes=[-1])
    m = model([node], [vi("s0", [N]), vi("xs", [N, seq])], [vi("s_final", [N]), vi("ys", [seq, N])], opset=17)
    _, r = _analyze(m)
    assert r.flops == seq * 2 * N and "axis 1" in r.note


def test_scan_8_runs_the_body_per_batch_element_and_step():
    batch, seq = 2, 3
    node = helper.make_node("Scan", ["", "s0", "xs"], ["s_final", "ys"], body=_scan_body(), num_scan_inputs=1)
    m = model([node], [vi("s0", [batch, N]), vi("xs", [batch, seq, N])],
              [vi("s_final", [batch, N]), vi("ys", [batch, seq, N])], opset=8)
    _, r = _analyze(m)
    assert r.rule_since == 8 and r.status == "counted"
    assert r.flops == batch * seq * 2 * N


# --- SequenceMap ---------------------------------------------------------------------------

def test_sequence_map_rule_counts_one_iteration():
    body = SubgraphCost(macs=10, flops=25, int_ops=0, bytes_read=100, bytes_written=40, nodes=3, uncosted_nodes=0)
    n = NodeView("SequenceMap", "", "sm", 17, (None,), (None,), {}, {}, {"body": body})
    c = sequence_map(n)
    assert (c.macs, c.flops, c.bytes_read, c.bytes_written) == (10, 25, 100, 40)
    assert not c.exact and "one iteration" in c.note


def test_sequence_map_node_is_never_silently_zero():
    body = helper.make_graph([helper.make_node("Relu", ["t"], ["u"])], "b", [vi("t", [N])], [vi("u", [N])])
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["seq"]),
             helper.make_node("SequenceMap", ["seq"], ["out"], body=body)]
    out = helper.make_tensor_sequence_value_info("out", TensorProto.FLOAT, [N])
    m = model(nodes, [vi("a", [N]), vi("b", [N])], [out], opset=17)
    a = onnxperf.analyze(m)
    r = a.main_nodes[1]
    assert r.op_type == "SequenceMap"
    # sequence values carry no static shape in onnxperf yet: the node is reported, not zeroed
    assert r.status in ("unknown_shape", "counted") and not r.exact
    assert any(x.scope == f"{r.id}/body" and x.op_type == "Relu" for x in a.nodes)
