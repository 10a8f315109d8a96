"""Real exports in models/: onnxperf against the figures their frameworks publish.

torchvision publishes, per model, ``meta["_ops"]`` ("GFLOPS": GMACs of conv and matmul-like ops,
rounded to 3 decimals) and ``meta["num_params"]``; the fixture records them with their source, and
torch.utils.flop_counter's exact FLOPs on the same eval model.
"""

import json
from pathlib import Path

import pytest

import onnxperf

ROOT = Path(__file__).resolve().parent.parent
TV = json.loads((ROOT / "tests" / "fixtures" / "torchvision_published.json").read_text())
KERAS = json.loads((ROOT / "tests" / "fixtures" / "keras_published.json").read_text())


@pytest.mark.parametrize("name", sorted(TV["models"]))
def test_torch_convention_matches_torchvision_published_gflops(name):
    fx = TV["models"][name]
    a = onnxperf.analyze(ROOT / fx["onnx_file"], dims={"batch": 1}, convention="torch")
    # torchvision's "GFLOPS" are torch.utils.flop_counter FLOPs / 2, i.e. GMACs, to 3 decimals
    assert round(a.totals.macs / 1e9, 3) == fx["published"]["_ops"]
    # and exactly, against flop_counter itself on the same model
    assert a.totals.flops == fx["torch_flop_counter_total_flops"]
    assert a.coverage.complete


@pytest.mark.parametrize("name", sorted(TV["models"]))
def test_params_match_torchvision_after_batchnorm_folding(name):
    fx = TV["models"][name]
    a = onnxperf.analyze(ROOT / fx["onnx_file"], dims={"batch": 1})
    # The legacy exporter folds every BatchNorm2d into the bias-free Conv before it: per BN channel
    # the BN's weight and bias (2 params) disappear and one conv bias appears, so the ONNX file holds
    # exactly num_params - (total BN channels) parameters.
    bn_channels = fx["batchnorm2d_num_features_total"]
    assert a.totals.params == fx["published"]["num_params"] - bn_channels
    assert a.totals.param_bytes == 4 * a.totals.params


def test_bert_encoder_symbolic_dims():
    p = ROOT / "models" / "bert_encoder_torch.onnx"
    unbound = onnxperf.analyze(p, default_batch=False)
    assert set(unbound.coverage.dims_to_bind) == {"batch", "sequence"}
    batch, seq, hidden, ffn, layers = 2, 128, 256, 1024, 4
    a = onnxperf.analyze(p, dims={"batch": batch, "sequence": seq})
    assert a.coverage.unknown_shape == 0
    # encoder MACs: per layer Q,K,V,O projections (4·h²), attention scores and context (2·s·h)
    # and the FFN (2·h·ffn), per token; plus the pooler (h² on the CLS token per sequence)
    per_token = layers * (4 * hidden * hidden + 2 * seq * hidden + 2 * hidden * ffn)
    assert a.totals.macs == batch * seq * per_token + batch * hidden * hidden
    assert a.totals.params == 11_170_560  # = sum(p.numel() for p in BertModel(config).parameters())


def _keras(name):
    fx = KERAS["models"][name]
    return fx, onnxperf.analyze(ROOT / "models" / fx["onnx_export"]["file"], dims={"batch": 1})


def test_keras_resnet50_params_equal_keras_trainable_count():
    # Keras' convs carry biases, so tf2onnx keeps each BatchNorm as a per-channel Mul + Add: the
    # moving statistics fold into those two vectors and the file holds exactly the trainable params.
    fx, a = _keras("resnet50_keras")
    assert a.coverage.complete
    assert a.totals.params == fx["trainable_params"]


def test_keras_mobilenetv2_params_explained_by_batchnorm_folding():
    # MobileNetV2's 35 regular convs have no bias: their BN folds into the conv (gamma, beta -> one
    # bias: one param less per channel). After the 17 depthwise convs BN stays as Mul + Add (no change).
    # Depthwise channels at width 1.0: 32 + 96 + 2·144 + 3·192 + 4·384 + 3·576 + 3·960.
    fx, a = _keras("mobilenetv2_keras")
    dw_channels = 32 + 96 + 2 * 144 + 3 * 192 + 4 * 384 + 3 * 576 + 3 * 960
    assert dw_channels == 7136
    folded_channels = fx["batchnorm_channels"] - dw_channels
    assert a.coverage.complete
    assert a.totals.params == fx["trainable_params"] - folded_channels


def test_keras_and_torch_mobilenetv2_macs_agree():
    # Same architecture from two frameworks: conv + matmul MACs agree within 1%.
    _, k = _keras("mobilenetv2_keras")
    t = onnxperf.analyze(ROOT / "models" / "mobilenetv2_torch.onnx", dims={"batch": 1}, convention="torch")
    kt = onnxperf.analyze(ROOT / "models" / "mobilenetv2_keras.onnx", dims={"batch": 1}, convention="torch")
    assert abs(kt.totals.macs - t.totals.macs) / t.totals.macs < 0.01


def test_fvcore_convention_on_resnet50():
    # fvcore: one "flop" per MAC of conv and linear (no bias), 1 per input element of adaptive
    # average pooling (ResNet-50's head pools 2048×7×7), nothing for ReLU, Add or MaxPool.
    fx = TV["models"]["resnet50"]
    a = onnxperf.analyze(ROOT / fx["onnx_file"], dims={"batch": 1}, convention="fvcore")
    torch_c = onnxperf.analyze(ROOT / fx["onnx_file"], dims={"batch": 1}, convention="torch")
    assert a.totals.flops == torch_c.totals.macs + 2048 * 7 * 7
    assert a.totals.bytes_read == torch_c.totals.bytes_read  # traffic is convention-independent
