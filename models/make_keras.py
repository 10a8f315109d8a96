#!/usr/bin/env python3
"""Export Keras applications (ResNet50, MobileNetV2) to ONNX with random weights.

Also exports resnet50v15_keras: Keras' ResNet50 rebuilt from keras layers with the
downsampling stride on the 3x3 conv (v1.5, torchvision's design) instead of the first 1x1.

Exact versions used to produce the files in models/ (Python 3.11.7, CPU only):
    tensorflow-cpu==2.21.0  keras==3.15.1  tf2onnx==1.17.0  onnx==1.23.2
    onnxruntime==1.31.1     (numpy 2.4.6, protobuf 7.36.2 pulled in by pip)

Setup (outside the project's own environment):
    python3 -m venv /root/venvs/tf
    /root/venvs/tf/bin/pip install tensorflow-cpu==2.21.0 keras==3.15.1 \
        tf2onnx==1.17.0 onnx==1.23.2 onnxruntime==1.31.1
    /root/venvs/tf/bin/python models/make_keras.py --out models/

Pipeline per model (see /work/shared/EXPORTING.md, TensorFlow section):
  1. build keras.applications.<Model>(weights=None, include_top=True, classes=1000,
     input_shape=(224, 224, 3)) with a fixed seed;
  2. randomize every bias and every BatchNorm gamma/beta/moving_mean/moving_variance
     (Keras' default init -- zero biases, unit BN statistics -- lets tf2onnx drop
     `+0` terms and fold BN scaling, giving a graph unlike a trained checkpoint);
  3. trace into a tf.function concrete function with input spec [None, 224, 224, 3]
     (symbolic batch), freeze variables to constants, and convert with
     tf2onnx.convert.from_graph_def(..., opset=17);
  4. rename the graph input to `input`, the output to `output`, and the symbolic
     batch dim of both to `batch`; check with the ONNX checker, run once in
     onnxruntime and compare against Keras;
  5. re-save with every tensor of more than 64 elements as external data in
     `<model>.onnx.data` (smaller tensors stay inline, shape computations need
     them), then delete the .data file unless --keep-weights is given;
  6. reload with load_external_data=False and check that shape inference with
     data_prop=True resolves every value's shape once the batch dim is fixed.

The graph input is NHWC float32 [batch, 224, 224, 3] (Keras layout); tf2onnx inserts
a Transpose to NCHW in front of the first Conv.
"""

import argparse
import gc
import hashlib
import json
import os
import random
import re
import sys

# tf2onnx names nodes in set/dict iteration order, which depends on the str hash seed:
# re-exec with a fixed PYTHONHASHSEED so that repeated runs give byte-identical files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf2onnx  # noqa: E402
import tf2onnx.utils  # noqa: E402
from onnx import external_data_helper, shape_inference  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

EXPECTED_VERSIONS = {
    "tensorflow": "2.21.0",
    "keras": "3.15.1",
    "tf2onnx": "1.17.0",
    "onnx": "1.23.2",
    "onnxruntime": "1.31.1",
}
OPSET = 17
SEED = 0
INLINE_MAX_ELEMENTS = 64
# onnx decides with sys.getsizeof(tensor.raw_data) >= size_threshold; a bytes object
# carries 33 bytes of overhead, so for float32 64 elements -> 289, 65 elements -> 293.
SIZE_THRESHOLD = sys.getsizeof(b"\0" * (4 * INLINE_MAX_ELEMENTS)) + 1

def _bottleneck_v15(x, filters, stride, conv_shortcut, name):
    """keras.applications' residual_block_v1, with the stride on the 3x3 conv (v1.5)."""
    L = keras.layers
    if conv_shortcut:
        shortcut = L.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = L.Conv2D(filters, 1, name=name + "_1_conv")(x)  # v1: strides=stride here
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=name + "_1_bn")(x)
    x = L.Activation("relu", name=name + "_1_relu")(x)
    x = L.Conv2D(filters, 3, strides=stride, padding="same", name=name + "_2_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=name + "_2_bn")(x)
    x = L.Activation("relu", name=name + "_2_relu")(x)
    x = L.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=name + "_3_bn")(x)
    x = L.Add(name=name + "_add")([shortcut, x])
    return L.Activation("relu", name=name + "_out")(x)


def resnet50_v15():
    """Keras' ResNet50 (same layers, names, biased convs, BN epsilon) with the downsampling
    stride moved from the first 1x1 conv to the 3x3 conv of each block (torchvision's v1.5)."""
    L = keras.layers
    inp = L.Input(shape=(224, 224, 3), name="input_layer")
    x = L.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inp)
    x = L.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name="conv1_bn")(x)
    x = L.Activation("relu", name="conv1_relu")(x)
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = L.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, blocks, stride) in enumerate(
        [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=2
    ):
        x = _bottleneck_v15(x, filters, stride, True, f"conv{stage}_block1")
        for i in range(2, blocks + 1):
            x = _bottleneck_v15(x, filters, 1, False, f"conv{stage}_block{i}")
    x = L.GlobalAveragePooling2D(name="avg_pool")(x)
    x = L.Dense(1000, activation="softmax", name="predictions")(x)
    return keras.Model(inp, x, name="resnet50v15")


MODELS = {
    "resnet50_keras": lambda: keras.applications.ResNet50(
        weights=None, include_top=True, classes=1000, input_shape=(224, 224, 3)
    ),
    "mobilenetv2_keras": lambda: keras.applications.MobileNetV2(
        weights=None, include_top=True, classes=1000, input_shape=(224, 224, 3)
    ),
    # not a keras.applications model: ResNet50 v1.5 built from keras layers (see resnet50_v15)
    "resnet50v15_keras": resnet50_v15,
}
# models whose Keras figures go to tests/fixtures/keras_published.json (--fixture)
FIXTURE_APPLICATIONS = {"resnet50_keras": "ResNet50", "mobilenetv2_keras": "MobileNetV2"}


def versions():
    return {
        "python": sys.version.split()[0],
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "tf2onnx": tf2onnx.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
    }


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    keras.utils.set_random_seed(seed)  # python, numpy and TF seeds
    tf.random.set_seed(seed)


def randomize_weights(model, seed):
    """Give biases and BatchNorm parameters/statistics trained-like random values."""
    rng = np.random.default_rng(seed)
    changed = 0
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            n = layer.gamma.shape
            layer.gamma.assign(rng.uniform(0.5, 1.5, n).astype("float32"))
            layer.beta.assign(rng.normal(0.0, 0.1, n).astype("float32"))
            layer.moving_mean.assign(rng.normal(0.0, 0.1, n).astype("float32"))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, n).astype("float32"))
            changed += 4
        elif getattr(layer, "bias", None) is not None:
            b = layer.bias
            b.assign(rng.normal(0.0, 0.05, b.shape).astype("float32"))
            changed += 1
    return changed


def keras_stats(model):
    """Figures for tests/fixtures/keras_published.json."""
    trainable = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    non_trainable = int(sum(np.prod(w.shape) for w in model.non_trainable_weights))
    counts = {"Conv2D": 0, "DepthwiseConv2D": 0, "Dense": 0}
    bn_layers = bn_channels = 0
    for layer in model.layers:
        cls = type(layer).__name__
        if cls in counts:
            counts[cls] += 1
        if isinstance(layer, keras.layers.BatchNormalization):
            bn_layers += 1
            bn_channels += int(layer.gamma.shape[0])
    return {
        "count_params": int(model.count_params()),
        "trainable_params": trainable,
        "non_trainable_params": non_trainable,
        "batchnorm_layers": bn_layers,
        "batchnorm_channels": bn_channels,
        "conv_dense_layers": sum(counts.values()),
        "conv_dense_by_type": counts,
    }


def freeze(model):
    spec = tf.TensorSpec([None, 224, 224, 3], tf.float32, name="input")

    @tf.function(input_signature=[spec])
    def serve(x):
        return model(x, training=False)

    concrete = serve.get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    in_names = [t.name for t in frozen.inputs]
    out_names = [t.name for t in frozen.outputs]
    return graph_def, in_names, out_names


def rename_value(graph, old, new):
    for node in graph.node:
        node.input[:] = [new if n == old else n for n in node.input]
        node.output[:] = [new if n == old else n for n in node.output]
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.name == old:
            vi.name = new


def tidy_io(model_proto):
    g = model_proto.graph
    assert len(g.input) == 1 and len(g.output) == 1, (g.input, g.output)
    rename_value(g, g.input[0].name, "input")
    rename_value(g, g.output[0].name, "output")
    batch_params = set()
    for vi in (g.input[0], g.output[0]):
        d0 = vi.type.tensor_type.shape.dim[0]
        assert not d0.HasField("dim_value"), vi
        batch_params.add(d0.dim_param)
        d0.dim_param = "batch"
    # same symbol anywhere else (value_info) -> batch as well
    for vi in g.value_info:
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in batch_params:
                d.dim_param = "batch"
    return model_proto


GENERATED = re.compile(r"^(?P<prefix>.*?)__\d+(?P<port>:\d+)?$")


def canonicalize_names(model_proto):
    """Make tf2onnx's output independent of its (non-deterministic) optimizer order.

    tf2onnx appends a global counter (`__<n>`) to the names it makes up, and its
    optimizers (constant folding, dedup of identical constants) visit nodes in an
    order that changes from run to run even with a fixed PYTHONHASHSEED. The graph
    (node order, op types, topology, values) is the same; only those made-up names
    and the order of initializers differ. Renumber every `__<n>` name in order of
    first appearance, name such initializers `const__<k>` (after dedup their prefix
    is whichever duplicate survived), and store initializers in order of first use.
    """
    g = model_proto.graph
    inits = {t.name: t for t in g.initializer}
    mapping, counter = {}, [0]

    def canon(name):
        if not name or name in mapping:
            return mapping.get(name, name)
        m = GENERATED.match(name)
        if m:
            counter[0] += 1
            prefix = "const" if name in inits else m.group("prefix")
            mapping[name] = f"{prefix}__{counter[0]}{m.group('port') or ''}"
        else:
            mapping[name] = name
        return mapping[name]

    for vi in g.input:
        vi.name = canon(vi.name)
    order = []
    for node in g.node:
        node.name = canon(node.name)
        for i, n in enumerate(node.input):
            if n in inits and n not in order:
                order.append(n)
            node.input[i] = canon(n)
        for i, n in enumerate(node.output):
            node.output[i] = canon(n)
    for vi in list(g.output) + list(g.value_info):
        vi.name = canon(vi.name)
    assert len(set(mapping.values())) == len(mapping), "name clash"
    unused = [n for n in inits if n not in order]
    ordered = [inits[n] for n in order + unused]
    for t in ordered:
        t.name = canon(t.name)
    del g.initializer[:]
    g.initializer.extend(ordered)
    return model_proto


def numel(t):
    return int(np.prod(t.dims)) if len(t.dims) else 1


def op_histogram(model_proto):
    hist = {}
    for n in model_proto.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    return dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))


def check_ort(path, keras_model, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 224, 224, 3)).astype("float32")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input"]
    (y,) = sess.run(None, {"input": x})
    ref = keras_model(x, training=False).numpy()
    diff = float(np.max(np.abs(y - ref)))
    rel = diff / float(np.max(np.abs(ref)))
    print(f"  onnxruntime ok: output {y.shape}, max |onnx - keras| = {diff:.3g} ({rel:.2g} of max |keras|)")
    assert y.shape == (2, 1000) and rel < 1e-4, (diff, rel)
    return diff


def save_external(model_proto, path):
    folder, fname = os.path.split(path)
    location = fname + ".data"
    data_path = os.path.join(folder, location)
    for p in (path, data_path):  # onnx appends to an existing .data file
        if os.path.exists(p):
            os.remove(p)
    onnx.save_model(
        model_proto,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=SIZE_THRESHOLD,
        convert_attribute=False,
    )
    return data_path


def verify_stripped(path, data_path):
    m = onnx.load(path, load_external_data=False)
    n_ext = n_inline = 0
    tensors = list(external_data_helper._get_all_tensors(m))
    for t in tensors:
        if external_data_helper.uses_external_data(t):
            n_ext += 1
            assert numel(t) > INLINE_MAX_ELEMENTS, t.name
            loc = {e.key: e.value for e in t.external_data}["location"]
            assert loc == os.path.basename(data_path), loc
        else:
            n_inline += 1
            assert numel(t) <= INLINE_MAX_ELEMENTS, (t.name, numel(t))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    inferred = shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    g = inferred.graph
    known = {vi.name: vi for vi in list(g.input) + list(g.output) + list(g.value_info)}
    known.update({t.name: None for t in g.initializer})
    unresolved = []
    for node in g.node:
        for o in node.output:
            if not o:
                continue
            vi = known.get(o)
            if vi is None and o not in known:
                unresolved.append((o, "missing"))
                continue
            if vi is None:
                continue
            tt = vi.type.tensor_type
            if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim):
                unresolved.append((o, str(tt.shape).replace("\n", " ")))
    assert not unresolved, unresolved[:10]
    out_shape = [d.dim_value for d in g.output[0].type.tensor_type.shape.dim]
    print(
        f"  stripped model ok: {n_ext} external tensors, {n_inline} inline (<= "
        f"{INLINE_MAX_ELEMENTS} elements), all shapes resolve at batch=1, output {out_shape}"
    )
    return n_ext, n_inline


def export_one(name, out_dir, keep_weights):
    print(f"== {name}")
    seed_everything(SEED)
    model = MODELS[name]()
    n = randomize_weights(model, SEED)
    print(f"  built {model.name}: {model.count_params():,} params, randomized {n} variables")
    stats = keras_stats(model)
    gc.collect()

    graph_def, in_names, out_names = freeze(model)
    print(f"  frozen graph: {len(graph_def.node)} TF nodes, inputs {in_names}, outputs {out_names}")
    gc.collect()

    tf2onnx.utils.INTERNAL_NAME = 1  # node-name counter: same names with or without --only
    model_proto, _ = tf2onnx.convert.from_graph_def(
        graph_def, input_names=in_names, output_names=out_names, opset=OPSET
    )
    del graph_def
    gc.collect()
    model_proto = canonicalize_names(tidy_io(model_proto))
    onnx.checker.check_model(model_proto)

    path = os.path.join(out_dir, name + ".onnx")
    data_path = save_external(model_proto, path)
    del model_proto
    gc.collect()
    check_ort(path, model, SEED)  # full model, weights present
    del model
    keras.backend.clear_session()
    gc.collect()

    n_ext, n_inline = verify_stripped(path, data_path)
    if not keep_weights:
        os.remove(data_path)
    m = onnx.load(path, load_external_data=False)
    hist = op_histogram(m)
    info = {
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
        "nodes": len(m.graph.node),
        "initializers": len(m.graph.initializer),
        "initializer_elements": sum(numel(t) for t in m.graph.initializer),
        "external_tensors": n_ext,
        "inline_tensors": n_inline,
        "opset": [(o.domain or "ai.onnx", o.version) for o in m.opset_import],
        "ops": hist,
        "keras": stats,
    }
    print(f"  wrote {path} ({info['bytes']:,} bytes), {info['nodes']} nodes, opset {info['opset']}")
    print("  ops:", ", ".join(f"{k} {v}" for k, v in hist.items()))
    print("  keras:", stats)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="models/", help="output folder (default: models/)")
    ap.add_argument("--keep-weights", action="store_true", help="keep <model>.onnx.data")
    ap.add_argument("--fixture", help="also write the Keras figures as JSON here "
                    "(tests/fixtures/keras_published.json)")
    ap.add_argument("--only", choices=sorted(MODELS), action="append", help="export only these")
    args = ap.parse_args()

    v = versions()
    print("versions:", ", ".join(f"{k} {x}" for k, x in v.items()))
    for k, want in EXPECTED_VERSIONS.items():
        if v[k] != want:
            print(f"WARNING: {k} {v[k]} differs from the pinned {want}", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)
    infos = {}
    for name in args.only or MODELS:
        infos[name] = export_one(name, args.out, args.keep_weights)
        gc.collect()
    if args.fixture:
        write_fixture(args.fixture, infos, v)


def write_fixture(path, infos, v):
    src = (f"keras.applications (weights=None, include_top=True, classes=1000, 224x224x3) "
           f"built with keras {v['keras']} on tensorflow-cpu {v['tensorflow']}; ONNX via "
           f"tf2onnx {v['tf2onnx']} opset {OPSET}, onnx {v['onnx']}; models/make_keras.py")
    doc = {"source": src, "versions": v, "models": {}}
    for name, info in infos.items():
        if name not in FIXTURE_APPLICATIONS:  # resnet50v15_keras is no keras.applications model
            continue
        k = info["keras"]
        doc["models"][name] = {
            "keras_application": FIXTURE_APPLICATIONS[name],
            **k,
            "onnx_export": {key: info[key] for key in (
                "file", "nodes", "initializers", "initializer_elements",
                "external_tensors", "inline_tensors", "ops")},
        }
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
