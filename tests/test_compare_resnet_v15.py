"""torchvision ResNet50 (v1.5) vs the Keras-built ResNet50 v1.5 (models/resnet50v15_keras.onnx).

With the downsampling stride on the 3x3 conv on both sides the arithmetic is the same: what is left
between the two exports is converter artefacts (layout Transpose, BatchNorm kept as Mul + Add, ...).
Compare tests/test_compare.py, where Keras' own ResNet50 (v1) differs by the moved stride.
"""

import json
from pathlib import Path

import pytest

from onnxperf import cli
from onnxperf.products.compare.model import METRICS

MODELS = Path(__file__).resolve().parent.parent / "models"
BN_CHANNELS = 26_560  # 53 BatchNorm layers


def _run(capsys) -> dict:
    a, b = str(MODELS / "resnet50_torch.onnx"), str(MODELS / "resnet50v15_keras.onnx")
    assert cli.main(["compare", a, b, "--dim", "batch=1", "--hw", "t4", "--format", "json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["schema"] == "onnxperf.compare/1"
    return m


def _ex(c: dict, id_: str) -> dict:
    [e] = [e for e in c["explanations"] if e["id"] == id_]
    return e


def test_resnet50_v15_pair(capsys):
    m = _run(capsys)
    ta, tb = (x["totals"] for x in m["models"])
    c = m["comparisons"][0]

    # MACs: same architecture and strides -> agree within 1% (in fact exactly)
    assert abs(tb["macs"] - ta["macs"]) <= 0.01 * ta["macs"]
    assert ta["macs"] == tb["macs"] == 4_089_184_256
    mc = c["closing"]["macs"]
    assert mc["agree"] and mc["delta"] == 0 and mc["residual"] == 0
    assert "stride_moved" not in [e["id"] for e in c["explanations"]]
    assert c["alignment"]["counts"] == {"same": 53, "changed": 1, "inserted": 0, "removed": 0, "fused": 0}

    # layout Transpose inserted by tf2onnx in front of the first Conv
    t = _ex(c, "layout_transpose")
    assert t["side"] == "b" and t["node_count"] == 1 and t["bytes"] == 2 * 224 * 224 * 3 * 4

    # BatchNorm kept as Mul + Add on the Keras side (biased convs), folded on the torch side
    bn = _ex(c, "batchnorm")
    assert bn["side"] == "b" and bn["b"]["nodes"] == 106 and bn["delta"]["params"] == 2 * BN_CHANNELS

    # params: the whole difference is the BN scale + shift vectors, as for the v1 pair
    assert (ta["params"], tb["params"]) == (25_530_472, 25_583_592)
    rows = {r["role"]: r for r in c["params_breakdown"]}
    assert rows["conv_bias"]["params_a"] == rows["conv_bias"]["params_b"] == BN_CHANNELS
    assert rows["bn_scale"]["params_b"] == rows["bn_shift"]["params_b"] == BN_CHANNELS
    assert rows["bn_scale"]["tensors_b"] == rows["bn_shift"]["tensors_b"] == 53
    assert sum(r["params_a"] for r in rows.values()) == ta["params"]
    assert sum(r["params_b"] for r in rows.values()) == tb["params"]
    p = c["closing"]["params"]
    assert p["delta"] == tb["params"] - ta["params"] == 2 * BN_CHANNELS == 53_120 and p["residual"] == 0
    assert [r["role"] for r in p["by_role"]] == ["bn_scale", "bn_shift"]

    assert [e["id"] for e in c["explanations"]] == [
        "layout_transpose", "batchnorm", "pad_separate", "gemm_split", "output_activation", "opset"]


def test_resnet50_v15_pair_deltas_memory_and_op_histogram(capsys):
    m = _run(capsys)
    ta, tb = (x["totals"] for x in m["models"])
    d = m["deltas"][0]["metrics"]
    assert [x["key"] for x in m["metrics"]] == [k for k, _, _ in METRICS]
    for key, _, _ in METRICS:
        if ta[key] is None or tb[key] is None:  # measured latency: no --validate
            assert d[key] == {"delta": None, "rel": None, "partial": False}, key
            continue
        assert d[key]["delta"] == tb[key] - ta[key] and d[key]["partial"] is False, key
        assert d[key]["rel"] == (0.0 if ta[key] == tb[key] else (tb[key] - ta[key]) / ta[key]), key
    assert ta["measured_latency_s"] is None and ta["predicted_latency_s"] > 0 and tb["predicted_latency_s"] > 0

    # the same network and input: the same activation peak; only the weights differ (the BN vectors)
    assert ta["activation_peak_bytes"] == tb["activation_peak_bytes"] == 9_633_792
    assert d["activation_peak_bytes"]["delta"] == 0
    assert d["total_memory_bytes"]["delta"] == d["param_bytes"]["delta"] == 4 * 2 * BN_CHANNELS

    h = m["op_histogram"]
    assert h["columns"] == ["op_type", "A", "B"]
    rows = {r[0]: r[1:] for r in h["rows"]}
    assert rows["Conv"] == [53, 53]
    assert rows["Mul"] == [0, 53]  # the BN scales
    assert rows["Add"] == [16, 70]  # 16 residual adds; + 53 BN shifts + the dense bias on B
    assert rows["Transpose"] == [0, 1]  # the NHWC input
    assert sum(r[0] for r in rows.values()) == ta["nodes"] and sum(r[1] for r in rows.values()) == tb["nodes"]
