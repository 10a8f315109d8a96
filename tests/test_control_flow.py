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
