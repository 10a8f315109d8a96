"""Control flow counted right (issue 26): If, Loop and Scan under every convention, each subgraph its
own scope, trip counts that follow from the loop's own state, and bounds said everywhere.

Expected figures are derived from named dims on tiny models built with onnx.helper."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.cost.request import Request

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
    a = onnxperf.analyze(_unnamed_inputs(["x0_d1", None]), default_batch=False)
    assert a.model.inputs[0].shape == ("x0_d1", "x0_d1_2")


# --- trip counts that follow from the loop's own state -----------------------------------------------

F_IN, H = 8, 16  # features of a step, state width


def _while_rnn(seq_dim="sequence", m_input: str = "", data_cond: bool = False):
    """tf2onnx's tf.while_loop RNN: t = 0; while t < shape(x)[1]: h = tanh(x[:, t, :] @ W + h @ U); t += 1.
    The Loop has a cond input and no M (or M = ``m_input``); the body recomputes cond = Less(t + 1, n)
    from its carried counter t and n = Shape(x)[1], read from the outer scope; x[:, t, :] is a Slice
    whose starts and ends are computed from t. ``data_cond``: the cond also asks ReduceMax(h) < 1 (data)."""
    one = const("one", [1], I64, [1])
    body_nodes = [
        helper.make_node("Add", ["t_in", "one_s"], ["t_next"]),
        helper.make_node("Less", ["t_next", "n"], ["c_count"]),
        helper.make_node("Unsqueeze", ["t_in", "ax0"], ["t1"]),
        helper.make_node("Unsqueeze", ["t_next", "ax0"], ["t2"]),
        helper.make_node("Slice", ["x", "t1", "t2", "ax1"], ["xt3"]),       # x[:, t:t+1, :]
        helper.make_node("Squeeze", ["xt3", "ax1"], ["xt"]),                # [B, F]
        helper.make_node("MatMul", ["xt", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "U"], ["hu"]),
        helper.make_node("Add", ["xw", "hu"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
    ]
    if data_cond == "only":  # the cond reads data alone: no counter bounds it
        body_nodes += [helper.make_node("ReduceMax", ["h_out"], ["hmax"], keepdims=0),
                       helper.make_node("Less", ["hmax", "limit"], ["c_out"])]
    elif data_cond:
        body_nodes += [helper.make_node("ReduceMax", ["h_out"], ["hmax"], keepdims=0),
                       helper.make_node("Less", ["hmax", "limit"], ["c_data"]),
                       helper.make_node("And", ["c_count", "c_data"], ["c_out"])]
    else:
        body_nodes.append(helper.make_node("Identity", ["c_count"], ["c_out"]))
    body = helper.make_graph(body_nodes, "body", [vi("i", [], I64), vi("c_in", [], BOOL), vi("t_in", [], I64),
                                                  vi("h_in", ["batch", H])],
                             [vi("c_out", [], BOOL), vi("t_next", [], I64), vi("h_out", ["batch", H])],
                             [const("one_s", [], I64, 1), const("ax0", [1], I64, [0]), const("ax1", [1], I64, [1]),
                              const("limit", [], F32, 1.0)])
    main = [helper.make_node("Shape", ["x"], ["xs"]),
            helper.make_node("Gather", ["xs", "one"], ["n1"], axis=0),
            helper.make_node("Squeeze", ["n1"], ["n"]),
            helper.make_node("Less", ["t0", "n"], ["c0"]),
            helper.make_node("Loop", [m_input, "c0", "t0", "h0"], ["t_final", "h_final"], body=body)]
    inputs = [vi("x", ["batch", seq_dim, F_IN]), vi("h0", ["batch", H])]
    inits = [one, const("t0", [], I64, 0), const("W", [F_IN, H]), const("U", [H, H])]
    if m_input:
        inits.append(const(m_input, [], I64, 6))
    return model(main, inputs, [vi("h_final", ["batch", H])], inits, opset=17)


def test_a_while_loop_runs_until_its_counter_reaches_a_bound_from_a_shape():
    batch, seq = 2, 40
    a = onnxperf.analyze(_while_rnn(), dims={"batch": batch, "sequence": seq})
    loop = a.main_nodes[-1]
    step = batch * F_IN * H + batch * H * H
    assert loop.macs == seq * step and loop.exact and loop.bound == ""
    assert f"{seq} iterations" in loop.note and "turns false" in loop.note
    # the counter's value is known in the body: x[:, t, :] has a shape
    xt = next(n for n in a.nodes if n.op_type == "Squeeze" and n.scope)
    assert xt.outputs[0].shape == (batch, F_IN)
    assert a.totals.complete and a.totals.bound == "exact" and a.totals.macs == seq * step
    # another length, another count: nothing is fixed at the file's example
    b = onnxperf.analyze(_while_rnn(), dims={"batch": batch, "sequence": 17})
    assert b.totals.macs == 17 * step


def test_a_cond_that_reads_data_makes_m_an_upper_bound():
    batch, seq = 1, 10
    a = onnxperf.analyze(_while_rnn(m_input="M", data_cond=True), dims={"batch": batch, "sequence": seq})
    loop = a.main_nodes[-1]
    step = batch * F_IN * H + batch * H * H
    assert loop.macs == 6 * step and not loop.exact and loop.bound == "upper"
    assert "M = 6, an upper bound" in loop.note
    t = a.totals
    assert t.bound == "upper" and t.complete and dict(t.upper_bounded) == {"Loop": 1}


def test_a_counter_bounds_a_cond_that_also_reads_data():
    """cond = (t + 1 < n) and (max(h) < 1): the data may stop the loop sooner, the counter stops it at n
    for sure: n runs is an upper bound (three-valued: And(false, unknown) is false)."""
    batch, seq = 1, 10
    a = onnxperf.analyze(_while_rnn(data_cond=True), dims={"batch": batch, "sequence": seq})
    loop = a.main_nodes[-1]
    assert loop.macs == seq * (batch * F_IN * H + batch * H * H) and loop.bound == "upper"
    assert f"at most {seq} iterations" in loop.note
    assert a.totals.bound == "upper" and dict(a.totals.upper_bounded) == {"Loop": 1}


def test_an_unknown_trip_count_counts_one_run_as_a_lower_bound():
    batch, seq = 1, 10
    a = onnxperf.analyze(_while_rnn(data_cond="only"), dims={"batch": batch, "sequence": seq})
    loop = a.main_nodes[-1]
    assert loop.macs == batch * F_IN * H + batch * H * H and loop.bound == "lower"
    assert "one run of the body, a lower bound" in loop.note and "the cond depends on data" in loop.note
    t = a.totals
    assert not t.complete and t.bound == "lower" and dict(t.lower_bounded) == {"Loop": 1} and not t.uncosted


def _counting_loop(cond_from_counter: bool, bound: int = 10**9):
    """M = INT64_MAX; a carried counter t += 1; the cond handed back as it came (while true), or
    t < ``bound`` (a count far beyond what is worth following)."""
    nodes = [helper.make_node("Add", ["t_in", "one"], ["t_out"])]
    nodes.append(helper.make_node("Less", ["t_out", "big"], ["c_out"]) if cond_from_counter else
                 helper.make_node("Identity", ["c_in"], ["c_out"]))
    body = helper.make_graph(nodes, "body", [vi("i", [], I64), vi("c_in", [], BOOL), vi("t_in", [], I64)],
                             [vi("c_out", [], BOOL), vi("t_out", [], I64)],
                             [const("one", [], I64, 1), const("big", [], I64, bound)])
    loop = helper.make_node("Loop", ["M", "c0", "t0"], ["t_final"], body=body)
    return model([loop], [], [vi("t_final", [], I64)],
                 [const("M", [], I64, 2**63 - 1), const("c0", [], BOOL, True), const("t0", [], I64, 0)], opset=17)


def test_a_loop_that_never_ends_is_said_so():
    """while true (M = INT64_MAX, the cond handed back as it came): counted once, a lower bound, at once."""
    a = onnxperf.analyze(_counting_loop(cond_from_counter=False))
    r = a.main_nodes[-1]
    assert r.bound == "lower" and "does not end by itself" in r.note
    assert not a.totals.complete


def test_a_count_beyond_the_budget_stops_the_simulation():
    """t < 10^9 with no M: followed for MAX_EVALUATIONS node evaluations, then unknown (a lower bound);
    a count within the budget is exact."""
    from onnxperf.shapes.loops import MAX_EVALUATIONS

    r = onnxperf.analyze(_counting_loop(cond_from_counter=True)).main_nodes[-1]
    assert r.bound == "lower" and f"{MAX_EVALUATIONS:,}" in r.note
    r = onnxperf.analyze(_counting_loop(cond_from_counter=True, bound=5000)).main_nodes[-1]
    assert r.exact and "5000 iterations" in r.note


def test_a_body_whose_sizes_grow_from_run_to_run_is_a_lower_bound():
    """A carried tensor that grows by one row a run (Concat): the first run's body is the smallest."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Concat", ["acc_in", "row"], ["acc_out"], axis=0),
                              helper.make_node("MatMul", ["acc_out", "W"], ["y"])], "body",
                             [vi("i", [], I64), vi("c_in", [], BOOL), vi("acc_in", [None, K])],
                             [vi("c_out", [], BOOL), vi("acc_out", [None, K])])
    loop = helper.make_node("Loop", ["M", "", "acc0"], ["acc_final"], body=body)
    m = model([loop], [], [vi("acc_final", None)],
              [const("M", [], I64, 4), const("acc0", [1, K]), const("row", [1, K]), const("W", [K, K])], opset=17)
    r = onnxperf.analyze(m).main_nodes[-1]
    assert r.macs == 4 * (2 * K * K)  # four runs at the first run's [2, K] @ [K, K]
    assert r.bound == "lower" and "shapes change from run to run" in r.note


def test_an_if_whose_branches_differ_in_shape_bounds_its_outputs_from_above():
    then_g = helper.make_graph([helper.make_node("Concat", ["a", "a"], ["t"], axis=0)], "then", [], [vi("t", None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["a"], ["e"])], "else", [], [vi("e", None)])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("MatMul", ["y", "w"], ["z"])]
    m = model(nodes, [vi("cond", [], BOOL), vi("a", [N, N])], [vi("z", None)], [const("w", [N, N])], opset=17)
    a = onnxperf.analyze(m)
    ifn, mm = a.main_nodes
    assert mm.inputs[0].shape == (2 * N, N) and mm.bound == "upper" and "the largest If can produce" in mm.note
    t = a.totals
    assert t.bound == "upper" and dict(t.upper_bounded) == {"If": 1}  # the MatMul only follows it


def test_an_upper_bound_and_an_uncosted_node_make_a_total_of_no_known_side():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Transpose", ["nz"], ["t"]),
             helper.make_node("Bar", ["t"], ["y"], domain="custom.ops")]
    m = model(nodes, [vi("x", [N, N])], [vi("y", None)], opset=17, extra_opsets={"custom.ops": 1})
    t = onnxperf.analyze(m).totals
    assert t.bound == "unknown" and not t.complete and dict(t.upper_bounded) == {"NonZero": 1}


# --- sequences --------------------------------------------------------------------------------------

def test_tokens_appended_in_a_loop_are_concatenated_after_it():
    """TorchScript's tokens.append(t) in a scripted loop: SequenceEmpty carried by the Loop, one
    SequenceInsert a run, ConcatFromSequence after the loop: the output has one row per run."""
    steps = 7
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("MatMul", ["h_in", "W"], ["h_out"]),
                              helper.make_node("ArgMax", ["h_out"], ["tok"], axis=1, keepdims=1),
                              helper.make_node("SequenceInsert", ["seq_in", "tok"], ["seq_out"])], "body",
                             [vi("i", [], I64), vi("c_in", [], BOOL), vi("h_in", [B, K]),
                              helper.make_tensor_sequence_value_info("seq_in", I64, None)],
                             [vi("c_out", [], BOOL), vi("h_out", [B, K]),
                              helper.make_tensor_sequence_value_info("seq_out", I64, None)])
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"], dtype=I64),
             helper.make_node("Loop", ["M", "", "h0", "s0"], ["h_final", "s_final"], body=body),
             helper.make_node("ConcatFromSequence", ["s_final"], ["tokens"], axis=1)]
    m = model(nodes, [vi("h0", [B, K])], [vi("tokens", None)], [const("M", [], I64, steps), const("W", [K, K])],
              opset=17)
    a = onnxperf.analyze(m)
    assert a.sequences["s_final"].length == steps and a.sequences["s_final"].elem_shape == (B, 1)
    cat = a.main_nodes[-1]
    assert cat.status == "counted" and cat.outputs[0].shape == (B, steps)
    assert a.totals.macs == steps * B * K * K and a.totals.complete
    assert "onnxruntime-symbolic" not in a.shape_engines


# --- partial and bounded everywhere (point 3) --------------------------------------------------------

def _loop_with_uncosted_body(tmp_path=None):
    """A Loop (M = 3) whose body holds an op of an unknown domain: the body is not whole."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
                              helper.make_node("Bar", ["hw"], ["h_out"], domain="custom.ops")], "body",
                             [vi("i", [], I64), vi("c_in", [], BOOL), vi("h_in", [B, K])],
                             [vi("c_out", [], BOOL), vi("h_out", None)])
    loop = helper.make_node("Loop", ["M", "", "h0"], ["h_final"], body=body)
    m = model([loop], [vi("h0", [B, K])], [vi("h_final", None)], [const("M", [], I64, 3), const("W", [K, K])],
              opset=17, extra_opsets={"custom.ops": 1})
    return m


def _nonzero_model():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Transpose", ["nz"], ["t"]),
             helper.make_node("Cast", ["t"], ["tf"], to=F32), helper.make_node("MatMul", ["tf", "w"], ["y"])]
    return model(nodes, [vi("x", [N, N])], [vi("y", None)], [const("w", [2, K])], opset=17)


def test_a_body_left_out_makes_the_roofline_memory_and_latency_partial():
    from onnxperf.predict.memory import liveness
    from onnxperf.analysis.compose import summarize

    sm = summarize(_loop_with_uncosted_body(), hw="t4")
    t = sm.totals
    assert not t.complete and t.bound == "lower" and dict(t.uncosted) == {"custom.ops::Bar": 1}
    r = sm.roofline
    assert r.unknown_nodes == 0 and not r.complete and r.side == "lower"  # every main node has a time
    mem = liveness(sm)
    assert mem.unknown_tensors >= 1 and mem.side == "lower"  # the body's Bar output has no size
    from onnxperf.products.render.summary import render_text

    text = render_text(sm)
    assert "Predicted latency   ≥ " in text and "(partial: the costs leave something out)" in text
    assert "Activation peak       ≥ " in text


def test_an_upper_bound_reads_at_most_in_every_output(tmp_path, capsys):
    import json

    from onnxperf import cli

    p = tmp_path / "nz.onnx"
    onnx.save(_nonzero_model(), str(p))
    assert cli.main(["summary", str(p), "--hw", "t4"]) == 0
    text = capsys.readouterr().out
    assert "Totals   (upper bound: NonZero ×1)" in text
    assert "MACs          ≤ " in text and "(upper bound)" in text
    assert "Upper bound   NonZero ×1" in text
    assert "Predicted latency   ≤ " in text and "throughput ≥ " in text
    assert cli.main(["summary", str(p), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| MACs | ≤ " in md and "| Upper bound | NonZero ×1 |" in md
    assert cli.main(["summary", str(p), "--hw", "t4", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["totals"]["bound"] == "upper" and d["totals"]["upper_bounded"] == {"NonZero": 1}
    assert d["roofline"]["bound"] == "upper" and d["memory"]["bound"] == "upper"
    assert d["totals"]["intensity_flops_per_byte"] is None  # a ratio of two upper bounds is no bound
    assert any(w["code"] == "upper_bound" for w in d.get("warnings", [])) or "warnings" not in d
    html = tmp_path / "r.html"
    assert cli.main(["report", str(p), "--hw", "t4", "-o", str(html)]) == 0
    page = html.read_text()
    assert "upper bound: NonZero ×1" in page and "≤ " in page


def test_check_passes_an_upper_bound_within_a_limit_and_cannot_verify_one_over_it(tmp_path):
    from onnxperf.products.check.budget import budget_from_mapping
    from onnxperf.products.check.runner import PASS, UNKNOWN, check_model

    p = tmp_path / "nz.onnx"
    onnx.save(_nonzero_model(), str(p))
    macs = onnxperf.analyze(str(p)).totals.macs  # N·N nonzero positions at most, × 2 × K
    assert macs == N * N * 2 * K
    ok = check_model(str(p), budget_from_mapping({"max_macs": macs}, "test"))
    (r,) = [b for b in ok.budgets if b.key == "max_macs"]
    assert r.status == PASS and "at most" in r.message
    over = check_model(str(p), budget_from_mapping({"max_macs": macs - 1}, "test"))
    (r,) = [b for b in over.budgets if b.key == "max_macs"]
    assert r.status == UNKNOWN and "cannot verify" in r.message


def test_sweep_rows_say_partial_and_upper_bound():
    from onnxperf.products.sweep import sweep

    s = sweep(Request(_while_rnn(data_cond="only"), dims={"batch": 1}, default_batch=True), {"sequence": [4, 8]}, formulas=False)
    assert all(not r.complete and r.cost_side == "lower" for r in s.rows)
    s = sweep(Request(_while_rnn(m_input="M", data_cond=True), dims={"batch": 1}, default_batch=True), {"sequence": [4, 8]},
              formulas=False)
    assert all(r.cost_side == "upper" and dict(r.upper) == {"Loop": 1} for r in s.rows)


def test_memory_holds_the_working_set_of_a_body_while_it_runs():
    """A Loop whose body makes a [B, 64·K] tensor: at the Loop's step that tensor is live too."""
    from onnxperf.predict.memory import liveness

    wide = 64 * K
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("MatMul", ["h_in", "Wup"], ["big"]),     # [B, wide]
                              helper.make_node("MatMul", ["big", "Wdown"], ["h_out"])],  # [B, K]
                             "body", [vi("i", [], I64), vi("c_in", [], BOOL), vi("h_in", [B, K])],
                             [vi("c_out", [], BOOL), vi("h_out", [B, K])])
    loop = helper.make_node("Loop", ["M", "", "h0"], ["h_final"], body=body)
    m = model([loop], [vi("h0", [B, K])], [vi("h_final", [B, K])],
              [const("M", [], I64, 5), const("Wup", [K, wide]), const("Wdown", [wide, K])], opset=17)
    mem = liveness(onnxperf.analyze(m))
    f32 = 4
    # the Loop's input and output, and in the body big and h_out (h_out lives with big as it is made),
    # and the body's cond handed back (one byte)
    assert mem.peak_bytes == f32 * (B * K + B * K + B * wide + B * K) + 1 and mem.complete


def test_a_loop_is_timed_as_its_body_run_trips_times():
    """The roofline times each body node as a main-graph node (with its dispatch overhead on a spec
    that has one), sums the body, and multiplies by the trip count; the kernels counted likewise."""
    from onnxperf.hardware import load_spec
    from onnxperf.predict.roofline import node_roofline, roofline

    import dataclasses

    from onnxperf.predict.roofline import _at_levels

    trips = 5
    a = onnxperf.analyze(_matmul_loop(trips))
    body = [n for n in a.nodes if n.scope]
    for hw in ("t4", "t4:plain"):
        spec = dataclasses.replace(load_spec(hw), memory_levels=())  # every run from DRAM
        r = roofline(a, spec)
        one_run = sum(node_roofline(n, spec).time_s for n in body)
        (loop,) = r.nodes
        assert loop.time_s == pytest.approx(trips * one_run) and loop.time_s > 0
        if r.kernels is not None:  # the GPU kernel model: each body node that runs, every run
            assert r.kernels == trips * sum(node_roofline(n, spec).time_s > 0 for n in body)
    # the T4 preset's 4 MiB L2 holds the body's working set: runs after the first read it from there,
    # t = t_run(DRAM) + (trips − 1)·t_run(L2)
    spec = load_spec("t4")
    (l2,) = spec.memory_levels
    bws, names = (l2.bandwidth_bytes_per_s, spec.memory_bandwidth_bytes_per_s), (l2.name, "DRAM")
    first = sum(node_roofline(n, spec).time_s for n in body)
    cached = sum(_at_levels(node_roofline(n, spec), n, [float(node_roofline(n, spec).bytes), 0.0], bws, names,
                            spec).time_s for n in body)
    (loop,) = roofline(a, spec).nodes
    assert cached < first and loop.time_s == pytest.approx(first + (trips - 1) * cached)


def test_an_if_is_timed_as_the_branch_it_takes():
    from onnxperf.hardware import load_spec
    from onnxperf.predict.roofline import node_roofline, roofline

    m = _if_with_shared_names()
    cond = m.graph.input[0]
    m.graph.input.remove(cond)
    m.graph.initializer.append(const("cond", [], BOOL, True))  # then_branch: MatMul + Relu
    a = onnxperf.analyze(m)
    spec = load_spec("t4")
    (ifn,) = roofline(a, spec).nodes
    then = [n for n in a.nodes if n.scope.endswith("then_branch")]
    assert ifn.time_s == pytest.approx(sum(node_roofline(n, spec).time_s for n in then))
