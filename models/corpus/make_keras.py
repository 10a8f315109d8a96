#!/usr/bin/env python3
"""Keras half of the NLP/LLM/scikit-learn/Keras corpus (issue 14): MobileNetV2 and EfficientNetB0 via tf2onnx.

Writes models/corpus/mobilenetv2_keras.onnx and efficientnetb0_keras.onnx (weights stripped) and merges their
entries into tests/fixtures/corpus_nlp.json (the torch / scikit-learn entries come from make_nlp.py).

Versions used for the committed files (Python 3.11.7, CPU only):
    tensorflow-cpu 2.21.0  keras 3.15.1  tf2onnx 1.17.0  onnx 1.23.2  onnxruntime 1.32.0
    (numpy 2.4.6, protobuf 7.36.2 pulled in by pip)

Setup (outside the project's own environment):
    python3.11 -m venv /work/venv-tf
    /work/venv-tf/bin/pip install tensorflow-cpu==2.21.0 keras==3.15.1 tf2onnx==1.17.0 onnx onnxruntime
    cd <repo root>
    /work/venv-tf/bin/python models/corpus/make_keras.py

The export pipeline is models/make_keras.py's (imported from there, see its docstring): build the
keras.applications model (weights=None, 224x224x3, 1000 classes) with a fixed seed, randomize every bias and
BatchNorm gamma/beta/moving statistics (Keras' zero biases / unit statistics would let tf2onnx drop terms),
trace a concrete function with input [None, 224, 224, 3], freeze it, tf2onnx.convert.from_graph_def(opset=17),
rename input/output to `input`/`output` and the batch dim to `batch`, canonicalize tf2onnx's generated names
(its optimizer order is not deterministic), run it in onnxruntime against Keras, and save it with tensors of
more than 64 elements as external data, which is then deleted (--keep-weights keeps it).

Truth (truth_macs): the TensorFlow profiler on the frozen graph traced at batch 1
(tf.compat.v1.profiler.profile(graph, cmd="op", options=ProfileOptionBuilder.float_operation())): the float
ops of the multiply-accumulate op types (Conv2D, DepthwiseConv2dNative, MatMul) / 2. The profiler also counts
element-wise ops (BiasAdd, Mul, Add, ...), which are not MACs; its whole total is recorded in the fixture too.
It is cross-checked against a count by hand from the Keras layers (Conv2D: H_out*W_out*C_out*k_h*k_w*C_in,
DepthwiseConv2D: H_out*W_out*C*k_h*k_w, Dense: in*out); the script fails if they differ.
"""

import importlib.util
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # tf2onnx's names depend on the str hash seed
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_nlp.json")

_spec = importlib.util.spec_from_file_location("models_make_keras", os.path.join(REPO, "models", "make_keras.py"))
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

MODELS = {
    "mobilenetv2_keras": ("MobileNetV2", lambda: keras.applications.MobileNetV2(
        weights=None, include_top=True, classes=1000, input_shape=(224, 224, 3))),
    "efficientnetb0_keras": ("EfficientNetB0", lambda: keras.applications.EfficientNetB0(
        weights=None, include_top=True, classes=1000, input_shape=(224, 224, 3))),
}
MAC_OPS = ("Conv2D", "DepthwiseConv2dNative", "MatMul")


def profiler_flops(model):
    """TF profiler float ops by op type on the frozen graph traced at batch 1."""
    spec = tf.TensorSpec([1, 224, 224, 3], tf.float32, name="input")

    @tf.function(input_signature=[spec])
    def serve(x):
        return model(x, training=False)

    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    graph_def = frozen.graph.as_graph_def()
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    opts = (tf.compat.v1.profiler.ProfileOptionBuilder(tf.compat.v1.profiler.ProfileOptionBuilder.float_operation())
            .with_empty_output().build())
    prof = tf.compat.v1.profiler.profile(g, cmd="op", options=opts)
    # the 'op' view is a chain: each node's own ops are float_ops, total_float_ops includes its children
    by_type, stack = {}, list(prof.children)
    while stack:
        c = stack.pop()
        if c.float_ops:
            by_type[c.name] = by_type.get(c.name, 0) + int(c.float_ops)
        stack.extend(c.children)
    assert sum(by_type.values()) == prof.total_float_ops, (by_type, prof.total_float_ops)
    return int(prof.total_float_ops), dict(sorted(by_type.items()))


def hand_macs(model):
    """Conv/Dense MACs at batch 1 from the Keras layers' shapes."""
    total = 0
    for layer in model.layers:
        cls = type(layer).__name__
        if cls in ("Conv2D", "DepthwiseConv2D"):
            _, h, w, c_out = layer.output.shape
            kh, kw = layer.kernel_size
            c_in = layer.input.shape[-1]
            if cls == "Conv2D":
                total += h * w * c_out * kh * kw * (c_in // layer.groups)
            else:
                total += h * w * c_out * kh * kw
        elif cls == "Dense":
            total += layer.kernel.shape[0] * layer.kernel.shape[1]
    return int(total)


def run_one(name, keep):
    app, build = MODELS[name]
    base.MODELS[name] = build
    info = base.export_one(name, OUT_DIR, keep)
    # the same seeded model again for the truth (export_one cleared its session)
    base.seed_everything(base.SEED)
    model = build()
    base.randomize_weights(model, base.SEED)
    total, by_type = profiler_flops(model)
    mac_flops = sum(v for k, v in by_type.items() if k in MAC_OPS)
    assert mac_flops % 2 == 0
    truth = mac_flops // 2
    by_hand = hand_macs(model)
    print(f"  profiler: total {total:,} float ops, by type {by_type}")
    print(f"  truth {truth:,} MACs (profiler {'+'.join(MAC_OPS)} / 2), by hand {by_hand:,}")
    assert truth == by_hand, (truth, by_hand)
    del model
    keras.backend.clear_session()
    gc.collect()
    light = onnx.load(os.path.join(OUT_DIR, name + ".onnx"), load_external_data=False)
    ops = list(info["ops"])  # most frequent first
    v = base.versions()
    return {
        "file": f"models/corpus/{name}.onnx",
        "family": "keras",
        "exporter": (f"tf2onnx {v['tf2onnx']} convert.from_graph_def(opset=17) of the frozen concrete function "
                     f"(tensorflow-cpu {v['tensorflow']}, keras {v['keras']})"),
        "source": (f"keras.applications.{app}(weights=None, include_top=True, classes=1000, "
                   "input_shape=(224, 224, 3)), biases and BatchNorm statistics randomized; NHWC input, "
                   "Softmax output"),
        "dims": {"batch": 1},
        "input_shapes": {},
        "inputs": "input float32[batch, 224, 224, 3]",
        "nodes": len(light.graph.node),
        "truth_macs": truth,
        "truth_method": ("TF profiler (tf.compat.v1.profiler, ProfileOptionBuilder.float_operation(), cmd='op') "
                         "on the frozen graph at batch 1: float ops of Conv2D + DepthwiseConv2dNative + MatMul / 2 "
                         f"(= count by hand from the Keras Conv2D/DepthwiseConv2D/Dense layers); the profiler's "
                         f"total including element-wise ops is {total:,} float ops"),
        "truth_covers": "conv and dense layers (all multiply-accumulates of the model)",
        "profiler_float_ops_by_type": by_type,
        "ops": ops,
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }


def write_fixture(entries):
    with open(FIXTURE) as f:
        doc = json.load(f)
    by_file = {e["file"]: e for e in doc["models"]}
    by_file.update({e["file"]: e for e in entries})
    doc["models"] = [by_file[k] for k in sorted(by_file)]
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS))
    ap.add_argument("--keep-weights", action="store_true")
    ap.add_argument("--no-fixture", action="store_true")
    a = ap.parse_args()
    print("versions:", base.versions())
    entries = [run_one(n, a.keep_weights) for n in (a.only or MODELS)]
    if not a.no_fixture:
        write_fixture(entries)


if __name__ == "__main__":
    main()
