"""Control flow counted right (issue 26): If, Loop and Scan under every convention, each subgraph its
own scope, trip counts that follow from the loop's own state, and bounds said everywhere.

Expected figures are derived from named dims on tiny models built with onnx.helper."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import onnxperf

from .util import const, model, vi

BOOL, I64, F32 = TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT
B, K, N = 2, 8, 16  # a state [B, K] times a weight [K, N] ... per iteration


def _matmul_loop(trips: int) -> "onnx.ModelProto":
    """Loop with a constant M = trips and no cond: h = MatMul(h, W) + ... (B·K·K MACs a run)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
         helper.make_node("Tanh", ["hw"], ["h_out"])],
        "body", [vi("i", [], I64), vi("cond_in", [], BOOL), vi("h_in", [B, K])],
        [vi("cond_out", [], BOOL), vi("h_out", [B, K])])
    loop = helper.make_node("Loop", ["M", "", "h0"], ["h_final"], body=body)
    return model([loop], [vi("h0", [B, K])], [vi("h_final", [B, K])],
                 [const("M", [], I64, trips), const("W", [K, K])], opset=17)


@pytest.mark.parametrize("convention,flops_per_mac,extra", [
    ("default", 2, True), ("torch", 2, False), ("fvcore", 1, False), ("tf", 2, False)])
def test_a_loop_body_counts_every_run_under_every_convention(convention, flops_per_mac, extra):
    trips = 5
    a = onnxperf.analyze(_matmul_loop(trips), convention=convention)
    loop = a.main_nodes[-1]
    body_macs = B * K * K
    assert loop.macs == trips * body_macs and a.totals.macs == trips * body_macs
    # Tanh: 1 FLOP an element by default; the tools leave activations out (torch, fvcore, tf)
    tanh = B * K if extra else 0
    assert a.totals.flops == trips * (flops_per_mac * body_macs + tanh)
    body = [n for n in a.nodes if n.scope]
    assert sum(n.macs for n in body) == body_macs  # the body's rows: one run
    assert a.totals.complete


# --- scopes --------------------------------------------------------------------------------------

def _if_with_shared_names(cond_input: bool = True):
    """then: t = MatMul(a, b) [N, N]; u = Relu(t).  else: t = Concat(a, a) [2N, N]; u = MatMul(t, b).
    Both branches name their tensors t and u: two scopes, four tensors."""
    then_g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["t"]),
                                helper.make_node("Relu", ["t"], ["u"])], "then", [], [vi("u", None)])
    else_g = helper.make_graph([helper.make_node("Concat", ["a", "a"], ["t"], axis=0),
                                helper.make_node("MatMul", ["t", "b"], ["u"])], "else", [], [vi("u", None)])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)
    return model([node], [vi("cond", [], BOOL), vi("a", [N, N]), vi("b", [N, N])], [vi("y", None)], opset=17)


def test_the_same_name_in_two_branches_is_two_tensors():
    m = _if_with_shared_names()
    before = m.SerializeToString()
    a = onnxperf.analyze(m)
    assert m.SerializeToString() == before  # the caller's proto is never changed
    by_scope = {(n.scope.rsplit("/", 1)[-1], n.op_type): n for n in a.nodes if n.scope}
    then_mm, else_mm = by_scope[("then_branch", "MatMul")], by_scope[("else_branch", "MatMul")]
    assert then_mm.macs == N * N * N
    assert else_mm.inputs[0].shape == (2 * N, N) and else_mm.macs == 2 * N * N * N
    assert by_scope[("then_branch", "Relu")].inputs[0].shape == (N, N)
    # the branch met second in the file (attributes are sorted by name: else_branch first) has its t
    # renamed where it is defined and where it is read; the first keeps the file's name
    assert else_mm.inputs[0].name == "t" and then_mm.outputs[0].name == "t@then_branch"
    assert by_scope[("then_branch", "Relu")].inputs[0].name == "t@then_branch"
    ifn = a.main_nodes[-1]
    assert ifn.macs == 2 * N * N * N and not ifn.exact  # the costlier branch: an upper bound
    assert a.totals.complete


def test_a_body_reads_the_innermost_definition_and_outer_names_resolve_outward():
    """A Loop body defines its own 'x' (shadowing the graph input x) and reads the outer 'w'."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Concat", ["h_in", "h_in"], ["x"], axis=1),  # [B, 2K]: this body's own x
         helper.make_node("MatMul", ["x", "w"], ["h_out"])],           # [B, 2K] @ [2K, K]
        "body", [vi("i", [], I64), vi("c_in", [], BOOL), vi("h_in", [B, K])],
        [vi("c_out", [], BOOL), vi("h_out", [B, K])])
    trips = 3
    loop = helper.make_node("Loop", ["M", "", "x"], ["h_final"], body=body)
    m = model([loop], [vi("x", [B, K])], [vi("h_final", [B, K])],
              [const("M", [], I64, trips), const("w", [2 * K, K])], opset=17)
    a = onnxperf.analyze(m)
    mm = next(n for n in a.nodes if n.op_type == "MatMul")
    assert mm.inputs[0].shape == (B, 2 * K) and mm.inputs[1].name == "w"
    assert a.totals.macs == trips * B * 2 * K * K


# --- dims without a name -----------------------------------------------------------------------

def _unnamed_inputs(*shapes):
    """MatMul-free model: one Relu per input, inputs declared with dims that have no name (None)."""
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(len(shapes))]
    return model(nodes, [vi(f"x{i}", s) for i, s in enumerate(shapes)],
                 [vi(f"y{i}", None) for i in range(len(shapes))], opset=17)


def test_an_unnamed_dim_gets_a_name_that_dim_binds():
    feats, rows = 4, 16
    m = _unnamed_inputs([None, feats])
    before = m.SerializeToString()
    a = onnxperf.analyze(m, dims={"x0_d0": rows})
    assert m.SerializeToString() == before
    assert a.model.inputs[0].shape == (rows, feats) and dict(a.dims) == {"x0_d0": rows}
    assert a.totals.flops == rows * feats and a.totals.complete


def test_the_leading_unnamed_dim_is_the_batch():
    feats = 4
    a = onnxperf.analyze(_unnamed_inputs([None, feats], [None, feats, None]), default_batch=True)
    # both inputs' leading dims are the rows of one batch: one name, bound to 1 with the batch note
    assert a.model.inputs[0].shape == (1, feats)
    assert a.model.inputs[1].shape == (1, feats, "x1_d2")
    assert any("unbound batch dim 'x0_d0' set to 1" in n for n in a.notes)
    assert a.free_dims == ("x1_d2",)
    b = onnxperf.analyze(_unnamed_inputs([None, feats], [None, feats, None]), dims={"x0_d0": 3, "x1_d2": 5})
    assert b.totals.flops == 3 * feats + 3 * feats * 5


def test_an_unnamed_dim_never_takes_a_name_the_model_uses():
    a = onnxperf.analyze(_unnamed_inputs(["x0_d1", None]))
    assert a.model.inputs[0].shape == ("x0_d1", "x0_d1_2")
