"""Einsum and Det under every convention (issue 16), expected values derived from the spec and
from the tools' own formulas (torch.einsum's sum-then-bmm strategy, fvcore's einsum handler)."""

import numpy as np
import pytest
from onnx import TensorProto

from onnxperf.cost.conventions import fvcore_einsum_macs
from onnxperf.cost.ops.matmul import det_ops, einsum, einsum_cost, einsum_output_shape
from onnxperf.cost.ops.registry import NodeView, TensorView

from .util import cost, single

F32 = TensorProto.FLOAT
I, J, K = 3, 4, 5
B = 2


def test_einsum_label_held_by_one_operand_is_summed_not_contracted():
    # ij,k->i = (Σ_j a_ij)·(Σ_k b_k): j is summed over a alone (I·J − I adds), k over b alone
    # (K − 1 adds), then one multiply per output element (I): no multiply-accumulate at all.
    assert einsum_cost("ij,k->i", [(I, J), (K,)]) == (0, (I * J - I) + (K - 1) + I)
    r = cost(single("Einsum", {"a": [I, J], "b": [K]}, equation="ij,k->i", opset=17))
    assert r.status == "counted"
    assert (r.macs, r.flops) == (0, I * J + K - 1)


def test_einsum_one_operand_label_under_the_tool_conventions():
    m = single("Einsum", {"a": [I, J], "b": [K]}, equation="ij,k->i", opset=17)
    # torch.einsum sums j and k out first, then multiplies (aten.mul): no mm/bmm, 0 FLOPs
    r = cost(m, convention="torch")
    assert (r.macs, r.flops) == (0, 0)
    # fvcore: half of numpy.einsum_path's count; numpy contracts both operands in one step over
    # the labels i, j, k with an inner sum: 2·I·J·K FLOPs, so I·J·K "flops"
    r = cost(m, convention="fvcore")
    assert (r.macs, r.flops) == (I * J * K, I * J * K)


@pytest.mark.parametrize("eq,shapes,macs", [
    ("bij,bjk->bik", [(B, I, J), (B, J, K)], B * I * J * K),    # fvcore's bmm special case
    ("bij,bkj->bki", [(B, I, J), (B, K, J)], B * I * J * K),    # its second special case
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2 * 3 * 4 + 2 * 4 * 5),
])
def test_fvcore_einsum_handler(eq, shapes, macs):
    assert fvcore_einsum_macs(eq, shapes) == macs


def test_einsum_implicit_output_with_ellipsis():
    # implicit mode: the ellipsis dims first, then the labels that appear once (i, k)
    assert einsum_output_shape("...ij,...jk", [(B, I, J), (B, J, K)]) == (B, I, K)
    assert einsum_output_shape("...ij,...jk", [(I, J), (B, J, K)]) == (B, I, K)  # broadcast ellipsis
    assert einsum_output_shape("ba,cb", [(I, J), (K, I)]) == np.einsum("ba,cb", np.zeros((I, J)),
                                                                       np.zeros((K, I))).shape
    r = cost(single("Einsum", {"a": [B, I, J], "b": [B, J, K]}, equation="...ij,...jk", opset=17))
    assert r.status == "counted"
    assert r.macs == B * I * J * K


def test_einsum_rule_runs_without_an_output_shape():
    # where shape inference gives the output no shape, the rule needs only the input shapes and
    # writes the output of einsum_output_shape itself
    a, b = TensorView("a", F32, (B, I, J)), TensorView("b", F32, (B, J, K))
    view = NodeView("Einsum", "", "e", 17, (a, b), (None,), {"equation": "...ij,...jk"})
    c = einsum(view)
    assert c.macs == B * I * J * K and c.flops == 2 * B * I * J * K
    assert c.bytes_written == 4 * B * I * K


def test_det_is_not_counted_by_the_tools():
    batch, m = 4, 3
    model = single("Det", {"x": [batch, m, m]}, opset=22)
    macs, ops = det_ops(m)
    assert (cost(model).macs, cost(model).flops) == (batch * macs, batch * ops)
    # torch: linalg.det is an LU factorization, for which FlopCounterMode has no formula;
    # fvcore has no handler for aten::linalg_det
    for convention in ("torch", "fvcore"):
        r = cost(model, convention=convention)
        assert (r.macs, r.flops) == (0, 0)


def test_fvcore_matmul_counts_elements_of_a_times_columns_of_b():
    # fvcore's matmul handler: prod(A.shape)·B.shape[−1]: a batch only B has is not counted,
    # torch's (bmm over the broadcast batch) counts it
    m = single("MatMul", {"a": [I, J], "b": [B, J, K]}, opset=17)
    assert cost(m, convention="fvcore").flops == I * J * K
    assert cost(m, convention="torch").flops == 2 * B * I * J * K
    assert cost(m).macs == B * I * J * K
