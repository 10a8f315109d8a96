"""``--convention tf`` against the TF profiler itself.

``models/conventions/make_keras_conventions.py`` (run by hand in a TensorFlow venv, not by CI)
built one small Keras model per case, counted it with the TF profiler
(``tf.compat.v1.profiler.profile(graph, options=ProfileOptionBuilder.float_operation())``:
``total_float_ops``, FLOPs, 2 per multiply-add), converted it with tf2onnx (opset 17) and recorded
the count in ``tests/fixtures/conventions_tf.json``. This test needs neither TensorFlow nor tf2onnx:
only the recorded ``.onnx`` files and the fixture.

Where the ONNX graph cannot carry what the profiler saw, the fixture names the limit (one of
``onnxperf.cost.conventions.ONNX_LIMITS``, listed in docs/conventions.md) and the figure onnxperf gives
instead, derived from the profiler by the script (its count on the graph tf2onnx converts, after
constant folding; or its MatMul formula for the Einsum nodes it counts 0); the test then checks that
figure, and that the gap is real.
"""

import argparse
import importlib
import json
from pathlib import Path

import pytest

import onnxperf
from onnxperf.cost.conventions import ONNX_LIMITS

ROOT = Path(__file__).resolve().parent.parent
FX = json.loads((ROOT / "tests" / "fixtures" / "conventions_tf.json").read_text())
CASES = FX["cases"]

#: the Keras layer families the fixtures cover, each with at least one case
FAMILIES = ("conv", "matmul", "attention", "norm", "pool", "resize", "rnn", "elementwise", "activation")


@pytest.mark.parametrize("name", sorted(CASES))
def test_tf_convention_gives_the_profilers_float_ops(name):
    case = CASES[name]
    a = onnxperf.analyze(ROOT / case["onnx_file"], convention="tf")
    assert a.totals.complete, a.totals.uncosted
    gap = case["gap"]
    if gap is None:
        assert a.totals.flops == case["tf"]["float_ops"]
    else:
        assert gap["reason"] == ONNX_LIMITS[gap["limit"]]
        assert case["tf"]["float_ops"] != gap["onnxperf_flops"]  # a gap that is not one would hide a fix
        assert a.totals.flops == gap["onnxperf_flops"], gap["derived_as"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_tf_convention_changes_no_traffic(name):
    path = ROOT / CASES[name]["onnx_file"]
    a, d = onnxperf.analyze(path, convention="tf"), onnxperf.analyze(path)
    assert (a.totals.bytes_read, a.totals.bytes_written) == (d.totals.bytes_read, d.totals.bytes_written)
    assert a.totals.macs <= d.totals.macs or CASES[name]["family"] == "conv"


def test_conv_transpose_follows_the_profilers_formula_not_the_macs():
    # Conv2DBackpropInput: 2·numel(Y)·numel(W) / (C_out·sh·sw): 2 per MAC with padding "same" only
    n, h, w, c_in, c_out, k, s = 1, 5, 5, 4, 6, 3, 2
    same, valid = CASES["conv2d_transpose_same"], CASES["conv2d_transpose_valid"]
    macs = n * h * w * c_in * k * k * c_out
    assert same["tf"]["by_op_type"]["Conv2DBackpropInput"] == 2 * macs
    y = (h - 1) * s + k
    assert valid["tf"]["by_op_type"]["Conv2DBackpropInput"] == int(2 * n * y * y * c_out * k * k * c_in * c_out
                                                                    / (c_out * s * s)) != 2 * macs


def test_fixtures_cover_every_family_and_the_issue_layers():
    assert {c["family"] for c in CASES.values()} >= set(FAMILIES)
    for needed in ("conv1d", "conv2d", "conv3d", "conv2d_transpose_same", "depthwise_conv2d", "separable_conv2d",
                   "dense_2d", "matmul_batch", "dot_axes", "batchnorm", "layernorm", "maxpool2d",
                   "avgpool2d_same", "global_avgpool2d", "global_maxpool2d", "upsampling2d_nearest", "relu",
                   "sigmoid", "tanh", "gelu_tanh", "softmax", "swish", "add", "multiply", "lstm_unrolled",
                   "gru_unrolled", "simple_rnn_unrolled"):
        assert needed in CASES


def test_fixture_states_unit_versions_and_exporter():
    assert FX["units"]["tf"].startswith("FLOPs")
    assert "opset=17" in FX["exporter"] and "tf2onnx" in FX["exporter"]
    assert set(FX["versions"]) >= {"tensorflow", "keras", "tf2onnx"}
    for case in CASES.values():
        assert (ROOT / case["onnx_file"]).is_file()
        assert sum(case["tf"]["by_op_type"].values()) == case["tf"]["float_ops"]


def test_tf_is_a_convention_everywhere_the_others_are():
    from onnxperf.cli import main
    from onnxperf.cost.conventions import CONVENTIONS, TABLES
    from onnxperf.products.report import CONVENTIONS_TEXT

    assert "tf" in CONVENTIONS and "tf" in TABLES and "tf" in CONVENTIONS_TEXT
    path = str(ROOT / CASES["dense_2d"]["onnx_file"])
    for command in ("summary", "report", "compare", "check", "sweep"):
        parser = argparse.ArgumentParser()
        module = importlib.import_module(f"onnxperf.cli.{command}")
        module.add_parser(parser.add_subparsers())
        args = [command, path] + ([path] if command == "compare" else []) + ["--convention", "tf"]
        assert parser.parse_args(args).convention == "tf", command
    assert main(["summary", path, "--convention", "tf", "--format", "json", "-o", "/dev/null"]) == 0
