"""Build the TensorFlow convention fixtures: small Keras models, one per layer family case, counted
by the TF profiler and exported to ONNX through tf2onnx.

For every case this script

1. builds the Keras model (``keras.backend.clear_session()`` first, so layer names and therefore
   ONNX node names do not depend on which cases ran before) and gives every weight a seeded
   random value (Keras' zero biases and unit BatchNorm statistics would let tf2onnx drop ``+ 0``
   terms and fold scalings, which a trained checkpoint would not allow);
2. traces ``model(x, training=False)`` into a concrete function with static input shapes and
   freezes it (``convert_variables_to_constants_v2``): the graph the profiler and tf2onnx both read;
3. counts it with the TF profiler,
   ``tf.compat.v1.profiler.profile(graph, options=ProfileOptionBuilder.float_operation())``:
   ``total_float_ops`` is the sum over the graph's nodes of the ``@ops.RegisterStatistics(op,
   "flops")`` functions (``tensorflow/python/ops/nn_ops.py``,
   ``tensorflow/python/profiler/internal/flops_registry.py``); ops without one count 0. The
   per-node breakdown is recomputed with the same registry (``ops.get_stats_for_node_def``) and
   must sum to the profiler's total;
4. converts the frozen graph with ``tf2onnx.convert.from_graph_def(..., opset=17)`` and writes
   ``models/conventions/keras/<case>.onnx`` (weights inline: every model is tiny);
5. writes ``tests/fixtures/conventions_tf.json``: per case the profiler's total, its counts summed
   by TF op type, the ONNX op types and, where the ONNX graph cannot carry what the profiler saw,
   the reason (a key of ``onnxperf.cost.conventions.ONNX_LIMITS``) and the figure onnxperf gives
   instead, derived from the profiler (a second run on the graph tf2onnx converts, after its
   constant folding, or the profiler's own MatMul formula for the Einsum nodes it counts 0).

Not exported (tf2onnx 1.17 cannot convert them, so they have no case): grouped ``Conv2D``
(``groups > 1``: Keras compiles it with XLA into a ``StatefulPartitionedCall``), exact GELU
(``Erfc``), recurrent layers without ``unroll=True`` (a ``While`` loop whose ``TensorList`` ops are
left unconverted; the profiler counts its body once, partly).

Unit: the profiler's float_ops are FLOPs (2 per multiply-add, 1 per elementwise op it has a
function for). ``onnxperf.analyze(path, convention="tf").totals.flops`` is compared with it
(``tests/test_conventions_tf.py``).

Versions used: tensorflow-cpu 2.21.0, keras 3.15.1, tf2onnx 1.17.0, onnx 1.23.2, numpy 2.4.6.
Not run by CI. Rerun from the repository root; reruns are byte-identical (fixture and .onnx files):

    /work/venv-tf/bin/python models/conventions/make_keras_conventions.py
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import logging
import re
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

if os.environ.get("PYTHONHASHSEED") != "0":  # tf2onnx's passes iterate over sets of names: fix their order
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402
from tensorflow.python.framework import ops as tf_ops  # noqa: E402
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

import keras  # noqa: E402
from keras import layers as L  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from onnxperf.cost import conventions  # noqa: E402  (the limit texts; imports nothing but the standard library)

SEED = 20240516
OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(HERE, "keras")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "conventions_tf.json")
LIMITS = conventions.ONNX_LIMITS  # the texts docs/conventions.md shows, by key


# --------------------------------------------------------------------------- cases

@dataclass
class Case:
    name: str
    family: str
    build: Callable[[], Callable]  # () -> a layer, or a function of the input tensors
    inputs: list[tuple[int, ...]]
    #: where the ONNX graph cannot carry what the profiler saw: a key of ONNX_LIMITS
    limit: str | None = None


class _SelfAttention(L.Layer):
    """keras.layers.MultiHeadAttention as self-attention (query = value = key = x)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mha = L.MultiHeadAttention(num_heads=2, key_dim=8)

    def call(self, x):
        return self.mha(x, x)


def _fn(f: Callable) -> Callable[[], Callable]:
    return lambda: f


def cases() -> list[Case]:
    ops = keras.ops
    return [
        # convolutions (channels_last, the Keras default)
        Case("conv1d", "conv", lambda: L.Conv1D(8, 3, padding="same"), [(2, 16, 4)]),
        Case("conv2d", "conv", lambda: L.Conv2D(8, 3, strides=2, padding="same"), [(2, 16, 16, 3)]),
        Case("conv2d_valid_nobias", "conv", lambda: L.Conv2D(8, 3, use_bias=False), [(1, 10, 10, 3)]),
        Case("conv3d", "conv", lambda: L.Conv3D(4, 3, padding="same"), [(1, 6, 6, 6, 2)]),
        Case("depthwise_conv2d", "conv", lambda: L.DepthwiseConv2D(3, padding="same"), [(2, 7, 7, 8)]),
        Case("depthwise_conv2d_multiplier", "conv", lambda: L.DepthwiseConv2D(3, depth_multiplier=2),
             [(1, 7, 7, 4)]),
        Case("separable_conv2d", "conv", lambda: L.SeparableConv2D(8, 3, padding="same"), [(2, 7, 7, 4)]),
        Case("conv2d_transpose_same", "conv", lambda: L.Conv2DTranspose(6, 3, strides=2, padding="same"),
             [(1, 5, 5, 4)]),
        Case("conv2d_transpose_valid", "conv", lambda: L.Conv2DTranspose(6, 3, strides=2), [(1, 5, 5, 4)]),
        Case("conv1d_transpose", "conv", lambda: L.Conv1DTranspose(6, 3, strides=2, padding="same"),
             [(2, 7, 4)]),
        Case("conv3d_transpose", "conv", lambda: L.Conv3DTranspose(3, 2, strides=2), [(1, 3, 3, 3, 2)]),
        # dense and matrix products
        Case("dense_2d", "matmul", lambda: L.Dense(8), [(4, 16)]),
        Case("dense_3d", "matmul", lambda: L.Dense(8), [(2, 5, 16)]),
        Case("dense_nobias", "matmul", lambda: L.Dense(8, use_bias=False), [(4, 16)]),
        Case("matmul_batch", "matmul", _fn(lambda a, b: ops.matmul(a, b)), [(2, 3, 4), (2, 4, 5)]),
        Case("dot_axes", "matmul", lambda: L.Dot(axes=(2, 2)), [(2, 3, 4), (2, 5, 4)]),
        Case("dot_axes_adjoint_a", "matmul", lambda: L.Dot(axes=(1, 1)), [(2, 4, 3), (2, 4, 5)]),
        Case("einsum_dense", "matmul", lambda: L.EinsumDense("abc,cd->abd", output_shape=(5, 8), bias_axes="d"),
             [(2, 5, 16)]),
        Case("multihead_attention", "attention", lambda: _SelfAttention(), [(2, 6, 16)],
             limit="tf_einsum"),
        # normalizations (inference)
        Case("batchnorm", "norm", lambda: L.BatchNormalization(), [(2, 5, 5, 4)], limit="tf_const_folded"),
        Case("layernorm", "norm", lambda: L.LayerNormalization(), [(2, 5, 16)]),
        # pooling
        Case("maxpool2d", "pool", lambda: L.MaxPooling2D(2), [(2, 8, 8, 4)]),
        Case("avgpool2d_same", "pool", lambda: L.AveragePooling2D(3, strides=2, padding="same"), [(2, 8, 8, 4)]),
        Case("maxpool1d", "pool", lambda: L.MaxPooling1D(2), [(2, 8, 4)]),
        Case("maxpool3d", "pool", lambda: L.MaxPooling3D(2), [(1, 4, 4, 4, 2)]),
        Case("global_avgpool2d", "pool", lambda: L.GlobalAveragePooling2D(), [(2, 6, 6, 4)]),
        Case("global_maxpool2d", "pool", lambda: L.GlobalMaxPooling2D(), [(2, 6, 6, 4)]),
        Case("global_avgpool1d", "pool", lambda: L.GlobalAveragePooling1D(), [(2, 6, 4)]),
        # resize / upsample
        Case("upsampling2d_nearest", "resize", lambda: L.UpSampling2D(2), [(2, 5, 5, 4)], limit="tf_const_folded"),
        Case("upsampling2d_bilinear", "resize", lambda: L.UpSampling2D(2, interpolation="bilinear"),
             [(2, 5, 5, 4)]),
        Case("upsampling1d", "resize", lambda: L.UpSampling1D(2), [(2, 5, 4)], limit="tf_const_folded"),
        # recurrent (unrolled: the while-loop form is not one the profiler or tf2onnx follow)
        Case("simple_rnn_unrolled", "rnn", lambda: L.SimpleRNN(16, return_sequences=True, unroll=True),
             [(2, 5, 8)], limit="tf_const_folded"),
        Case("gru_unrolled", "rnn", lambda: L.GRU(16, return_sequences=True, unroll=True), [(2, 5, 8)], limit="tf_const_folded"),
        Case("lstm_unrolled", "rnn", lambda: L.LSTM(16, return_sequences=True, unroll=True), [(2, 5, 8)], limit="tf_const_folded"),
        # activations
        Case("relu", "activation", lambda: L.Activation("relu"), [(2, 4, 5)]),
        Case("sigmoid", "activation", lambda: L.Activation("sigmoid"), [(2, 4, 5)]),
        Case("tanh", "activation", lambda: L.Activation("tanh"), [(2, 4, 5)]),
        Case("gelu_tanh", "activation", _fn(lambda x: ops.gelu(x, approximate=True)), [(2, 4, 5)]),
        Case("softmax", "activation", lambda: L.Softmax(), [(2, 4, 5)]),
        Case("swish", "activation", lambda: L.Activation("swish"), [(2, 4, 5)]),
        # elementwise
        Case("add", "elementwise", lambda: L.Add(), [(2, 4, 5), (2, 4, 5)]),
        Case("add_three", "elementwise", lambda: L.Add(), [(2, 4, 5), (2, 4, 5), (2, 4, 5)]),
        Case("multiply", "elementwise", lambda: L.Multiply(), [(2, 4, 5), (2, 4, 5)]),
        Case("subtract_broadcast", "elementwise", _fn(lambda a, b: ops.subtract(a, b)), [(2, 4, 5), (1, 5)]),
    ]


# --------------------------------------------------------------------------- build, count, export

def _randomize(model: keras.Model, rng: np.random.Generator) -> None:
    """Every weight a seeded random value in [-0.5, 0.5] (variances in [0.5, 1.5])."""
    for w in model.weights:
        shape = tuple(w.shape)
        v = rng.uniform(-0.5, 0.5, size=shape).astype(np.float32)
        if "variance" in w.path:
            v = v + 1.0
        w.assign(v)


def build(case: Case) -> keras.Model:
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    ins = [keras.Input(shape=s[1:], batch_size=s[0], name=f"x{i}") for i, s in enumerate(case.inputs)]
    layer = case.build()
    if isinstance(layer, L.Layer) and isinstance(layer, (L.Add, L.Multiply, L.Dot)):
        out = layer(ins)
    else:
        out = layer(*ins)
    model = keras.Model(ins, out, name=case.name)
    _randomize(model, np.random.default_rng(SEED))
    return model


def freeze(model: keras.Model, case: Case):
    specs = [tf.TensorSpec(s, tf.float32, name=f"x{i}") for i, s in enumerate(case.inputs)]
    fn = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(*specs))
    return frozen, frozen.graph.as_graph_def()


def profile(graph_def) -> dict:
    """The profiler's ``total_float_ops`` on ``graph_def`` and its per-op-type split."""
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(graph_def, name="")
    opts = (tf.compat.v1.profiler.ProfileOptionBuilder(tf.compat.v1.profiler.ProfileOptionBuilder.float_operation())
            .with_empty_output().build())
    total = int(tf.compat.v1.profiler.profile(g, options=opts).total_float_ops)
    by_type: dict[str, int] = {}
    missing_shape = 0
    for op in g.get_operations():  # as tfprof_logger does: its registry, int(value), ValueError skipped
        try:
            st = tf_ops.get_stats_for_node_def(g, op.node_def, "flops")
        except ValueError:
            missing_shape += 1
            continue
        v = int(st.value) if st is not None and st.value else 0
        if v:
            by_type[op.type] = by_type.get(op.type, 0) + v
    if sum(by_type.values()) != total:
        raise AssertionError(f"per-node counts {by_type} do not sum to the profiler's {total}")
    return {"float_ops": total, "by_op_type": dict(sorted(by_type.items())), "ops_without_shape": missing_shape,
            "op_types": sorted({op.type for op in g.get_operations()})}


def converter_input(frozen, graph_def):
    """The graph tf2onnx converts: ``from_graph_def`` first runs ``tf_loader.tf_optimize`` (grappler's
    constant folding) on the frozen graph, as done here."""
    inputs = [t.name for t in frozen.inputs]
    outputs = [t.name for t in frozen.outputs]
    with tf.device("/cpu:0"):
        with tf.Graph().as_default() as g:
            with tf2onnx.tf_loader.tf_session(graph=g):
                tf.import_graph_def(graph_def, name="")
                return tf2onnx.tf_loader.tf_optimize(inputs, outputs, graph_def)


def export(case: Case, frozen, graph_def, out_dir: str) -> str:
    inputs = [t.name for t in frozen.inputs]
    outputs = [t.name for t in frozen.outputs]
    tf2onnx.utils.INTERNAL_NAME = 0  # the counter of the names tf2onnx makes: per case, whatever ran before
    model, _ = tf2onnx.convert.from_graph_def(graph_def, input_names=inputs, output_names=outputs, opset=OPSET)
    canonical_names(model)
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, f"{case.name}.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString(deterministic=True))
    return os.path.relpath(path, ROOT)


def _folded(frozen, gd, prof) -> tuple[int, str]:
    value = profile(converter_input(frozen, gd))["float_ops"]
    return value, ("the profiler's float_ops on the graph tf2onnx converts: the frozen graph after "
                   "tf2onnx.tf_loader.tf_optimize (grappler constant folding)")


def _einsum_macs(op) -> int:
    """Multiply-adds of a two-operand TF ``Einsum``: the product of every label's size."""
    eq = op.get_attr("equation").decode()
    lhs = eq.split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for labels, t in zip(lhs, op.inputs):
        for c, d in zip(labels, t.shape.as_list()):
            sizes[c] = d
    return int(np.prod(list(sizes.values()), dtype=np.int64))


def _plus_einsum(frozen, gd, prof) -> tuple[int, str]:
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(gd, name="")
    macs = sum(_einsum_macs(op) for op in g.get_operations() if op.type == "Einsum")
    return prof["float_ops"] + 2 * macs, ("the profiler's float_ops + 2 per multiply-add of the Einsum nodes it "
                                          "counts 0 (the product of every label's size), as it counts "
                                          "BatchMatMulV2")


#: how the figure onnxperf gives is derived from the profiler, per limit
REFERENCES: dict[str, Callable] = {"tf_const_folded": _folded, "tf_einsum": _plus_einsum}


_MADE = re.compile(r"__\d+(?=(:\d+)?$)")


def canonical_names(model: onnx.ModelProto) -> None:
    """A graph that does not change from run to run. tf2onnx numbers the names it makes
    (``<name>__<n>``), orders the nodes it makes and merges identical constants (an unrolled RNN's
    per-step copies of one weight, keeping whichever it meets first) in an order that changes
    between runs (not the hash seed). Here the nodes are put in a topological order whose ties are
    broken by a content label (a node's TF name, or for a made node its op, attributes and the labels
    of its inputs), made names are renumbered in order of first use, each initializer is named
    after its first reader (``<node>/input<index>``) and the initializers are sorted by name."""
    g = model.graph
    # identical constants: one initializer each (tf2onnx merges some of them, which ones varies)
    first: dict[bytes, str] = {}
    same: dict[str, str] = {}
    for t in g.initializer:
        body = onnx.TensorProto()
        body.CopyFrom(t)
        body.name = ""
        same[t.name] = first.setdefault(body.SerializeToString(deterministic=True), t.name)
    for node in g.node:
        node.input[:] = [same.get(x, x) for x in node.input]
    kept = [t for t in g.initializer if same[t.name] == t.name]
    del g.initializer[:]
    g.initializer.extend(kept)
    inits = {t.name: t for t in g.initializer}
    producer = {o: (node, i) for node in g.node for i, o in enumerate(node.output)}
    labels: dict[str, str] = {}

    def label(tensor: str) -> str:
        if tensor in labels:
            return labels[tensor]
        if tensor in inits:
            t = inits[tensor]
            body = onnx.TensorProto()
            body.CopyFrom(t)
            body.name = ""
            out = "init:" + hashlib.sha1(body.SerializeToString(deterministic=True)).hexdigest()
        elif tensor not in producer:
            out = tensor  # a graph input
        else:
            node, i = producer[tensor]
            if not _MADE.search(node.name):
                out = f"{node.name}:{i}"
            else:
                attrs = b"".join(a.SerializeToString(deterministic=True) for a in node.attribute)
                text = f"{node.op_type}|{hashlib.sha1(attrs).hexdigest()}|{'|'.join(label(x) for x in node.input)}|{i}"
                out = hashlib.sha1(text.encode()).hexdigest()
        labels[tensor] = out
        return out

    # topological order, ties broken by label
    keys = {id(n): label(n.output[0]) for n in g.node}
    waiting = {id(n): sum(1 for x in n.input if x in producer) for n in g.node}
    readers: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            if x in producer:
                readers.setdefault(x, []).append(n)
    ready = [(keys[id(n)], k, n) for k, n in enumerate(g.node) if waiting[id(n)] == 0]
    ready.sort(key=lambda r: r[0])
    order = []
    heap = [(key, label_i, n) for label_i, (key, _, n) in enumerate(ready)]
    heapq.heapify(heap)
    counter = len(heap)
    while heap:
        _, _, n = heapq.heappop(heap)
        order.append(n)
        for o in n.output:
            for r in readers.get(o, ()):
                waiting[id(r)] -= 1
                if waiting[id(r)] == 0:
                    heapq.heappush(heap, (keys[id(r)], counter, r))
                    counter += 1
    if len(order) != len(g.node):
        raise AssertionError("the graph has a cycle")
    nodes = [onnx.NodeProto() for _ in order]
    for dst, src in zip(nodes, order):
        dst.CopyFrom(src)
    del g.node[:]
    g.node.extend(nodes)

    mapping: dict[str, str] = {}

    def new(name: str, reader: str | None = None) -> str:
        if name not in mapping:
            if name in inits and reader is not None:
                mapping[name] = reader
            else:
                mapping[name] = _MADE.sub(f"__{len(mapping) + 1}", name) if _MADE.search(name) else name
        return mapping[name]

    for node in g.node:
        node.name = new(node.name)
        node.input[:] = [new(x, f"{node.name}/input{i}") for i, x in enumerate(node.input)]
        node.output[:] = [new(x) for x in node.output]
    for t in g.initializer:
        t.name = new(t.name)
    for v in (*g.input, *g.output, *g.value_info):
        v.name = new(v.name)
    ordered = sorted(g.initializer, key=lambda t: t.name)
    del g.initializer[:]
    g.initializer.extend(ordered)


def record(case: Case, out_dir: str) -> dict:
    model = build(case)
    frozen, gd = freeze(model, case)
    prof = profile(gd)
    onnx_file = export(case, frozen, gd, out_dir)
    m = onnx.load(os.path.join(ROOT, onnx_file))
    rec = {
        "family": case.family,
        "layer": model.layers[-1].__class__.__name__,
        "config": _layer_config(model),
        "inputs": [list(s) for s in case.inputs],
        "onnx_file": onnx_file,
        "onnx_ops": sorted({n.op_type for n in m.graph.node}),
        "tf": prof,
        "gap": None,
    }
    folded, _ = _folded(frozen, gd, prof)
    if case.limit is not None:
        value, how = REFERENCES[case.limit](frozen, gd, prof)
        if value == prof["float_ops"]:
            raise AssertionError(f"{case.name}: the gap is not one: the reference equals the profiler")
        rec["gap"] = {"limit": case.limit, "reason": LIMITS[case.limit], "onnxperf_flops": value,
                      "derived_as": how}
    elif folded != prof["float_ops"]:
        raise AssertionError(f"{case.name}: constant folding changes the count "
                             f"({prof['float_ops']} -> {folded}): a gap to name")
    return rec


def _layer_config(model: keras.Model) -> dict:
    layer = model.layers[-1]
    if isinstance(layer, L.InputLayer):
        return {}
    cfg = layer.get_config()
    keep = ("filters", "kernel_size", "strides", "padding", "groups", "use_bias", "units", "depth_multiplier",
            "pool_size", "size", "interpolation", "activation", "axes", "unroll", "axis", "data_format")
    return {k: cfg[k] for k in keep if k in cfg and not isinstance(cfg[k], dict)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=OUT_DIR, help="folder for the .onnx files")
    p.add_argument("--fixture", default=FIXTURE)
    p.add_argument("--only", nargs="*", help="case names (default: all)")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)
    tf.get_logger().setLevel("ERROR")
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    os.makedirs(args.out, exist_ok=True)
    out = {
        "generator": "models/conventions/make_keras_conventions.py",
        "units": {"tf": "FLOPs (tf.compat.v1.profiler.profile(..., ProfileOptionBuilder.float_operation())"
                        ".total_float_ops: 2 per multiply-add)"},
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "tf2onnx": tf2onnx.__version__,
                     "onnx": onnx.__version__, "numpy": np.__version__},
        "exporter": f"convert_variables_to_constants_v2, then tf2onnx.convert.from_graph_def(opset={OPSET})",
        "cases": {},
    }
    for case in cases():
        if args.only and case.name not in args.only:
            continue
        rec = record(case, args.out)
        out["cases"][case.name] = rec
        print(f"{case.name:30s} tf {rec['tf']['float_ops']:>8}  {','.join(rec['onnx_ops'])}  "
              f"{rec['tf']['by_op_type']}", flush=True)
    if not args.only:
        with open(args.fixture, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
