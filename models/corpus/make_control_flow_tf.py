#!/usr/bin/env python3
"""Control-flow corpus, TensorFlow / Keras 3 half (issue 26): tf2onnx exports that keep real Loop / If nodes.

Writes models/corpus/<name>.onnx (weights stripped) and tests/fixtures/corpus_cf_tf.json (truth MACs counted
over every execution of a loop body or taken branch, obtained without onnxperf, and one `control_flow` item
per If/Loop/Scan node).

Versions used for the committed files (Python 3.11.7, CPU only, 2 cores):
    tensorflow-cpu 2.21.0  keras 3.15.1  tf2onnx 1.17.0  onnx 1.23.2  onnxruntime 1.32.0
    (numpy 2.4.6, protobuf 7.36.2 pulled in by pip)

Setup (outside the project's own environment):
    python3.11 -m venv /work/venv-cf-tf
    /work/venv-cf-tf/bin/pip install tensorflow-cpu==2.21.0 keras==3.15.1 tf2onnx==1.17.0 onnx==1.23.2 onnxruntime
    cd <repo root>
    /work/venv-cf-tf/bin/python models/corpus/make_control_flow_tf.py             # all 6 files + fixture (~1 min)
    /work/venv-cf-tf/bin/python models/corpus/make_control_flow_tf.py --only tf_cond_tf2onnx
    /work/venv-cf-tf/bin/python models/corpus/make_control_flow_tf.py --out /tmp/x --no-fixture   # rerun check

Export: every model is a tf.function with an input signature whose batch dim is None (and, for the hand-written
tf.while_loop RNN, the time dim too), converted with tf2onnx.convert.from_function(fn, input_signature,
opset=17), which keeps TensorFlow's control flow: a While becomes an ONNX Loop, a tf.cond an If. Weights are
tf.Variables (Keras layer weights or tf.Variable), which tf2onnx freezes into initializers; tensors captured
from outside the function would become extra graph inputs. Keras' zero biases are randomized (N(0, 0.05)) so
that no `+0` term is dropped. Each model is exported in its own child process (fresh TF/Keras name counters,
PYTHONHASHSEED=0, tf2onnx's Graph.extract_sub_graph_nodes made to keep the graph's node order instead of a
set's: see make_tf2onnx_deterministic), then:
  * the graph input is renamed `input`, the output `output`; tf2onnx's `unk__N` dim of the input's batch axis
    (and time axis) becomes `batch` (`sequence`) wherever that same symbol appears (graph inputs/outputs,
    value_info, loop-body inputs/outputs); the other `unk__N` symbols (those tf2onnx writes on loop-body
    values, the same values in fact) are renumbered in order of first appearance;
  * tf2onnx's generated names (`<prefix>__<n>`, a global counter) are renumbered in order of first
    appearance over the main graph and every subgraph (one namespace: bodies read outer names), and each
    graph's initializers are stored in order of first use;
  * the model is checked with onnx.checker, run in onnxruntime against TensorFlow at several batch sizes
    (and sequence lengths), run in onnx.reference.ReferenceEvaluator with counting MatMul/Gemm kernels (the
    executed multiply-accumulates, loop trip counts and the If branches taken), and its Loops' trip counts are
    read back from onnxruntime (in these models each Loop's first loop-carried value counts the iterations
    from 0; it is exposed as an extra graph output in a scratch copy);
  * it is saved with every tensor of more than 64 elements (main graph or subgraph) as external data
    `<name>.onnx.data`, which is deleted (--keep-weights keeps it).

Truth (truth_macs): analytic, from the layer dims and the trip count (formula in truth_method), asserted equal
to (1) the MACs that ReferenceEvaluator executes on the exported ONNX model with its weights at the bound dims
(MatMul: prod(output shape) * K, Gemm likewise), and (2) the TensorFlow profiler (float ops of MatMul / 2) on
an equivalent graph without control flow (the Keras layer with unroll=True and the same weights, the loop
unrolled in Python, the taken tf.cond branches called directly, map_fn vectorized): the profiler counts a
While body once, so it cannot count the looped graph itself. Keras' masked RNN computes one extra cell step
before its While loop (keras/src/backend/tensorflow/rnn.py: `output_time_zero`, used only for the output
shape); tf2onnx keeps it, so the masked BiLSTM's truth is the unrolled profile plus one step per direction.

Deterministic: reruns give byte-identical .onnx files and fixture (checked with --out into another folder).
"""

from __future__ import annotations

import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # tf2onnx's names depend on the str hash seed
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_cf_tf.json")
OPSET = 17
SEED = 0
INLINE_MAX_ELEMENTS = 64
BATCH = 2          # bound batch of every fixture entry
T, F, H = 40, 8, 32  # time steps, input features, RNN units
CLASSES = 4        # Dense head of the Keras RNNs
CONTROL_OPS = ("If", "Loop", "Scan")
KERAS_TRIPS = (f"M input = constant {T} (an initializer: Keras' while_loop maximum_iterations, the static time dim) "
               f"and cond: initial cond = And(Less(0.0, {T}.0)) of constants; the body's cond = And(iteration number "
               f"< {T}, loop-carried time counter (from 0, +1) < {T}), compared as floats")

MODELS = ["keras_gru_loop_tf2onnx", "keras_lstm_loop_tf2onnx", "keras_bilstm_loop_tf2onnx",
          "tf_while_loop_rnn_tf2onnx", "tf_cond_tf2onnx", "tf_map_fn_tf2onnx"]

FIXTURE_DOC = (
    "Control-flow corpus, TensorFlow / Keras 3 (issue 26): tf2onnx 1.17 exports (from_function, opset 17) that "
    "keep real ONNX Loop / If nodes, made by models/corpus/make_control_flow_tf.py. Analyze each file with "
    "onnxperf.analyze(file, dims=dims, input_shapes=input_shapes): every graph input is then static. truth_macs "
    "counts every execution of a loop body (trips x body MACs) and only the If branch taken at those dims; "
    "truth_method gives the arithmetic with named dims, control_flow one item per If/Loop/Scan node (main graph "
    "and nested) with its trip count, how that count follows, and its per-iteration (taken-branch) MACs. The "
    "truth was checked against the MACs onnx.reference.ReferenceEvaluator executes on the model with weights and "
    "against the TF profiler on a control-flow-free equivalent. Files are shipped without weights (tensors > 64 "
    "elements are external data that is not committed).")


# ================================================================================= parent: run the children
def run_children(names, out_dir, keep):
    entries = []
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            res = os.path.join(tmp, "entry.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--out", out_dir, "--result", res]
            if keep:
                cmd.append("--keep-weights")
            print(f"== {name}", flush=True)
            subprocess.run(cmd, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
            with open(res) as f:
                entries.append(json.load(f))
    return entries


def write_fixture(entries):
    doc = {"_doc": FIXTURE_DOC, "models": []}
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            doc["models"] = json.load(f)["models"]
    by_file = {e["file"]: e for e in doc["models"]}
    by_file.update({e["file"]: e for e in entries})
    doc["_doc"] = FIXTURE_DOC
    doc["models"] = [by_file[k] for k in sorted(by_file)]
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=MODELS)
    ap.add_argument("--out", default=OUT_DIR, help="folder for the .onnx files (default models/corpus)")
    ap.add_argument("--keep-weights", action="store_true", help="keep <name>.onnx.data")
    ap.add_argument("--no-fixture", action="store_true")
    ap.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        entry = Worker(a.worker, a.out, a.keep_weights).run()
        with open(a.result, "w") as f:
            json.dump(entry, f)
        return
    os.makedirs(a.out, exist_ok=True)
    entries = run_children(a.only or MODELS, a.out, a.keep_weights)
    if not a.no_fixture:
        write_fixture(entries)


# ================================================================================= child: one model
class Worker:
    def __init__(self, name, out_dir, keep):
        self.name, self.out_dir, self.keep = name, out_dir, keep

    def run(self):
        import numpy as np
        import keras
        import tensorflow as tf

        np.random.seed(SEED)
        keras.utils.set_random_seed(SEED)
        tf.random.set_seed(SEED)
        spec = getattr(self, "build_" + self.name)()
        return export_and_check(self.name, spec, self.out_dir, self.keep)

    # ------------------------------------------------------------------ Keras RNNs
    @staticmethod
    def _keras_rnn(layer_fn, masked, name):
        import keras
        import numpy as np

        L = keras.layers

        def build(unroll):
            inp = keras.Input((T, F), name="x")
            x = L.Masking(0.0, name="masking")(inp) if masked else inp
            x = layer_fn(unroll)(x)
            out = L.Dense(CLASSES, name="head")(x)
            return keras.Model(inp, out, name=name)

        model = build(False)
        rng = np.random.default_rng(SEED)
        for w in model.weights:  # Keras' zero biases would let tf2onnx drop +0 terms: randomize them
            if "bias" in w.path:
                w.assign(rng.normal(0.0, 0.05, w.shape).astype("float32"))
        unrolled = build(True)
        unrolled.set_weights(model.get_weights())
        return model, unrolled

    @staticmethod
    def _keras_fn(model, shape):
        import tensorflow as tf

        sig = [tf.TensorSpec(shape, tf.float32, name="input")]
        return tf.function(lambda x: model(x, training=False), input_signature=sig)

    @staticmethod
    def _rnn_feeds(seed, batch, masked):
        import numpy as np

        x = np.random.default_rng(seed).standard_normal((batch, T, F)).astype("float32")
        if masked:  # padded sequences: the last steps of row 0 are all-zero (masked)
            x[0, T - 7:] = 0.0
        return x

    def build_keras_gru_loop_tf2onnx(self):
        import keras

        model, unrolled = self._keras_rnn(lambda u: keras.layers.GRU(H, unroll=u, name="gru"), False, "gru_model")
        step = F * 3 * H + H * 3 * H
        truth = BATCH * T * step + BATCH * H * CLASSES
        return dict(
            fn=self._keras_fn(model, [None, T, F]), ref=lambda x: model(x, training=False).numpy(),
            feeds=lambda seed, b, s: self._rnn_feeds(seed, b, False), batches=[1, BATCH, 5],
            profile_fn=self._keras_fn(unrolled, [BATCH, T, F]), profile_extra=0,
            dims={"batch": BATCH}, dim_names={0: "batch"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, {T}, {F}]",
            source=(f"keras.Sequential-like functional model: Input({T}, {F}) -> keras.layers.GRU({H}) (Keras 3 "
                    f"defaults: reset_after=True, unroll=False, return_sequences=False) -> Dense({CLASSES}); biases "
                    "randomized; output [batch, 4]"),
            truth=truth,
            truth_method=(f"analytic: batch x T x (F*3H + H*3H) + batch x H*classes = {BATCH} x {T} x ({F}*{3 * H} + "
                          f"{H}*{3 * H}) + {BATCH} x {H}*{CLASSES} = {BATCH}*{T}*{step} + {BATCH * H * CLASSES} = "
                          f"{truth:,} (3 gates: input kernel {F}x{3 * H} and recurrent kernel {H}x{3 * H} per step, "
                          f"reset_after=True so the recurrent product is one {H}x{3 * H} MatMul; Dense {H}x{CLASSES})"),
            truth_covers=f"whole model: the Loop body x {T} iterations + the Dense head",
            control_flow=[dict(op="Loop", trips=T, body_macs=BATCH * step,
                               trips_from=KERAS_TRIPS)],
        )

    def build_keras_lstm_loop_tf2onnx(self):
        import keras

        model, unrolled = self._keras_rnn(
            lambda u: keras.layers.LSTM(H, recurrent_activation="hard_sigmoid", unroll=u, name="lstm"), False,
            "lstm_model")
        step = F * 4 * H + H * 4 * H
        truth = BATCH * T * step + BATCH * H * CLASSES
        return dict(
            fn=self._keras_fn(model, [None, T, F]), ref=lambda x: model(x, training=False).numpy(),
            feeds=lambda seed, b, s: self._rnn_feeds(seed, b, False), batches=[1, BATCH, 5],
            profile_fn=self._keras_fn(unrolled, [BATCH, T, F]), profile_extra=0,
            dims={"batch": BATCH}, dim_names={0: "batch"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, {T}, {F}]",
            source=(f"Input({T}, {F}) -> keras.layers.LSTM({H}, recurrent_activation='hard_sigmoid') (Keras 2's "
                    "default recurrent activation; unroll=False) -> Dense(4); biases randomized. With Keras 3's "
                    "default activations tf2onnx's LSTM rewriter turns the While into one ONNX LSTM op; Keras 3's "
                    "hard_sigmoid (relu6(x + 3) / 6) is not the pattern it matches, so the Loop stays"),
            truth=truth,
            truth_method=(f"analytic: batch x T x (F*4H + H*4H) + batch x H*classes = {BATCH} x {T} x ({F}*{4 * H} + "
                          f"{H}*{4 * H}) + {BATCH} x {H}*{CLASSES} = {BATCH}*{T}*{step} + {BATCH * H * CLASSES} = "
                          f"{truth:,} (4 gates i, f, c, o: input kernel {F}x{4 * H}, recurrent kernel {H}x{4 * H} "
                          f"per step; Dense {H}x{CLASSES})"),
            truth_covers=f"whole model: the Loop body x {T} iterations + the Dense head",
            control_flow=[dict(op="Loop", trips=T, body_macs=BATCH * step,
                               trips_from=KERAS_TRIPS)],
        )

    def build_keras_bilstm_loop_tf2onnx(self):
        import keras

        L = keras.layers
        model, unrolled = self._keras_rnn(
            lambda u: L.Bidirectional(L.LSTM(H, unroll=u), name="bilstm"), True, "bilstm_model")
        step = F * 4 * H + H * 4 * H
        head = BATCH * 2 * H * CLASSES
        truth = 2 * BATCH * (T + 1) * step + head
        return dict(
            fn=self._keras_fn(model, [None, T, F]), ref=lambda x: model(x, training=False).numpy(),
            feeds=lambda seed, b, s: self._rnn_feeds(seed, b, True), batches=[1, BATCH, 5],
            profile_fn=self._keras_fn(unrolled, [BATCH, T, F]), profile_extra=2 * BATCH * step,
            dims={"batch": BATCH}, dim_names={0: "batch"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, {T}, {F}]",
            source=(f"Input({T}, {F}) -> Masking(0.0) -> keras.layers.Bidirectional(LSTM({H})) (Keras 3 defaults, "
                    "merge_mode='concat', unroll=False) -> Dense(4); biases randomized. The mask (padded sequences) "
                    "keeps tf2onnx's LSTM rewriter from matching (without it the pair becomes one bidirectional "
                    "ONNX LSTM op), so each direction is a Loop with Where-like masking (Mul/Add of the cast mask) "
                    "in its body"),
            truth=truth,
            truth_method=(f"analytic: 2 directions x batch x (T + 1) x (F*4H + H*4H) + batch x 2H*classes = 2 x "
                          f"{BATCH} x {T + 1} x ({F}*{4 * H} + {H}*{4 * H}) + {BATCH} x {2 * H}*{CLASSES} = "
                          f"{2 * BATCH * (T + 1) * step:,} + {head} = {truth:,}. Per direction {T} steps in the "
                          "Loop + 1 step before it: Keras' masked RNN (keras/src/backend/tensorflow/rnn.py) calls "
                          "the cell once on the first time step outside the While to get the output's shape "
                          "(`output_time_zero`, feeding only a zeros_like), and tf2onnx keeps those 2 MatMuls"),
            truth_covers=(f"whole model: 2 Loop bodies x {T} iterations, the 2 cells computed before the Loops, the "
                          "Dense head"),
            control_flow=[dict(op="Loop", trips=T, body_macs=BATCH * step,
                               trips_from=KERAS_TRIPS + "; both Loops share M and the initial cond")
                          for _ in range(2)],
        )

    # ------------------------------------------------------------------ hand-written TF control flow
    def build_tf_while_loop_rnn_tf2onnx(self):
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(SEED)
        W = tf.Variable(rng.normal(0, 0.3, (F, H)).astype("float32"), name="W")
        U = tf.Variable(rng.normal(0, 0.15, (H, H)).astype("float32"), name="U")
        b = tf.Variable(rng.normal(0, 0.05, (H,)).astype("float32"), name="b")

        @tf.function(input_signature=[tf.TensorSpec([None, None, F], tf.float32, name="input")])
        def fn(x):
            steps = tf.shape(x)[1]
            h0 = tf.zeros([tf.shape(x)[0], H])

            def body(t, h):
                return t + 1, tf.tanh(tf.matmul(x[:, t, :], W) + tf.matmul(h, U) + b)

            _, h = tf.while_loop(lambda t, h: t < steps, body, [tf.constant(0), h0])
            return h

        @tf.function(input_signature=[tf.TensorSpec([BATCH, T, F], tf.float32)])
        def unrolled(x):
            h = tf.zeros([BATCH, H])
            for t in range(T):
                h = tf.tanh(tf.matmul(x[:, t, :], W) + tf.matmul(h, U) + b)
            return h

        def feeds(seed, batch, seq):
            return np.random.default_rng(seed).standard_normal((batch, seq, F)).astype("float32")

        step = F * H + H * H
        truth = BATCH * T * step
        return dict(
            fn=fn, ref=lambda x: fn(x).numpy(), feeds=feeds, batches=[1, BATCH, 5], seqs=[T, 17],
            profile_fn=unrolled, profile_extra=0,
            dims={"batch": BATCH, "sequence": T}, dim_names={0: "batch", 1: "sequence"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, sequence, {F}]",
            source=(f"tf.function: t = 0; while t < tf.shape(x)[1]: h = tanh(x[:, t, :] @ W + h @ U + b) "
                    f"(tf.while_loop, W {F}x{H}, U {H}x{H}, b {H} as tf.Variables), returns h [batch, {H}]; "
                    "batch and sequence are symbolic"),
            truth=truth,
            truth_method=(f"analytic: batch x sequence x (F*H + H*H) = {BATCH} x {T} x ({F}*{H} + {H}*{H}) = "
                          f"{truth:,} (one input and one recurrent MatMul per step)"),
            truth_covers=f"whole model: the Loop body x sequence ({T}) iterations",
            control_flow=[dict(op="Loop", trips=T, body_macs=BATCH * step,
                               trips_from=("no M (empty input): cond only. Initial cond = Less(0.0, Cast<float>("
                                           "bound)) in the main graph and the body's cond = Less(Cast(t + 1), "
                                           "Cast(bound)), t a loop-carried counter from 0; the bound = "
                                           "tf.shape(x)[1] (Squeeze(Slice(Shape(input), 1, 2)), the `sequence` "
                                           "dim) enters the Loop as a loop-carried value passed through "
                                           "unchanged"))],
        )

    def build_tf_cond_tf2onnx(self):
        import numpy as np
        import tensorflow as tf

        D, A_MID, C_MID, OUT = 16, 64, 128, 8
        rng = np.random.default_rng(SEED)

        def var(shape, name):
            return tf.Variable(rng.normal(0, 1.0 / np.sqrt(shape[0]), shape).astype("float32"), name=name)

        A1, A2, B = var((D, A_MID), "A1"), var((A_MID, D), "A2"), var((D, D), "B")
        C1, C2, E = var((D, C_MID), "C1"), var((C_MID, OUT), "C2"), var((D, OUT), "E")

        def then1(x):
            return tf.matmul(tf.tanh(tf.matmul(x, A1)), A2)

        def else1(x):
            return tf.matmul(x, B)

        def then2(h):
            return tf.matmul(tf.nn.relu(tf.matmul(h, C1)), C2)

        def else2(h):
            return tf.matmul(h, E)

        @tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32, name="input")])
        def fn(x):
            n = tf.shape(x)[0]
            h = tf.cond(n > 1, lambda: then1(x), lambda: else1(x))
            return tf.cond(n > 4, lambda: then2(h), lambda: else2(h))

        @tf.function(input_signature=[tf.TensorSpec([BATCH, D], tf.float32)])
        def taken(x):  # the branches taken at batch 2: 2 > 1 -> then, 2 > 4 false -> else
            return else2(then1(x))

        def feeds(seed, batch, seq):
            return np.random.default_rng(seed).standard_normal((batch, D)).astype("float32")

        m_then1, m_else1 = BATCH * (D * A_MID + A_MID * D), BATCH * D * D
        m_then2, m_else2 = BATCH * (D * C_MID + C_MID * OUT), BATCH * D * OUT
        truth = m_then1 + m_else2
        return dict(
            fn=fn, ref=lambda x: fn(x).numpy(), feeds=feeds, batches=[1, BATCH, 5],
            profile_fn=taken, profile_extra=0,
            dims={"batch": BATCH}, dim_names={0: "batch"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, {D}]",
            source=(f"tf.function: n = tf.shape(x)[0]; h = tf.cond(n > 1, x @ A1 ({D}x{A_MID}) -> tanh -> @ A2 "
                    f"({A_MID}x{D}), x @ B ({D}x{D})); y = tf.cond(n > 4, h @ C1 ({D}x{C_MID}) -> relu -> @ C2 "
                    f"({C_MID}x{OUT}), h @ E ({D}x{OUT})); weights tf.Variables; batch symbolic. Both If "
                    "conditions are computed from the input's Shape"),
            truth=truth,
            truth_method=(f"analytic, branches taken at batch {BATCH}: If 1 ({BATCH} > 1) takes then: batch x "
                          f"({D}*{A_MID} + {A_MID}*{D}) = {m_then1}; If 2 ({BATCH} > 4 is false) takes else: batch "
                          f"x {D}*{OUT} = {m_else2}; total {truth:,}. (Not taken: If 1 else {m_else1}, If 2 then "
                          f"{m_then2}; at batch 1 both take else, at batch 5 both take then)"),
            truth_covers="whole model: only the branch each If takes at the bound batch",
            control_flow=[
                dict(op="If", trips=1, branch_taken="then", body_macs=m_then1, then_macs=m_then1, else_macs=m_else1,
                     trips_from=(f"cond = Greater(Cast<float>(Squeeze(Slice(Shape(input), 0, 1))), 1.0): batch "
                                 f"{BATCH} > 1 -> then_branch")),
                dict(op="If", trips=1, branch_taken="else", body_macs=m_else2, then_macs=m_then2, else_macs=m_else2,
                     trips_from=(f"cond = Greater(Cast<float>(Squeeze(Slice(Shape(input), 0, 1))), 4.0) (the same "
                                 f"Cast as If 1's): batch {BATCH} > 4 is false -> else_branch")),
            ],
        )

    def build_tf_map_fn_tf2onnx(self):
        import numpy as np
        import tensorflow as tf

        MID, OUT = 16, 4
        rng = np.random.default_rng(SEED)
        W1 = tf.Variable(rng.normal(0, 0.3, (F, MID)).astype("float32"), name="W1")
        W2 = tf.Variable(rng.normal(0, 0.25, (MID, OUT)).astype("float32"), name="W2")

        @tf.function(input_signature=[tf.TensorSpec([None, T, F], tf.float32, name="input")])
        def fn(x):
            return tf.map_fn(lambda xi: tf.matmul(tf.tanh(tf.matmul(xi, W1)), W2), x)

        @tf.function(input_signature=[tf.TensorSpec([BATCH, T, F], tf.float32)])
        def vectorized(x):
            y = tf.matmul(tf.tanh(tf.matmul(tf.reshape(x, [BATCH * T, F]), W1)), W2)
            return tf.reshape(y, [BATCH, T, OUT])

        def feeds(seed, batch, seq):
            return np.random.default_rng(seed).standard_normal((batch, T, F)).astype("float32")

        per = T * (F * MID + MID * OUT)
        truth = BATCH * per
        return dict(
            fn=fn, ref=lambda x: fn(x).numpy(), feeds=feeds, batches=[1, BATCH, 5],
            profile_fn=vectorized, profile_extra=0,
            dims={"batch": BATCH}, dim_names={0: "batch"}, out_dim_names={0: "batch"},
            inputs=f"input float32[batch, {T}, {F}]",
            source=(f"tf.function: tf.map_fn(lambda xi: tanh(xi @ W1) @ W2, x) over the batch (W1 {F}x{MID}, W2 "
                    f"{MID}x{OUT} tf.Variables), output [batch, {T}, {OUT}]. tf2onnx writes map_fn's While as a "
                    "Loop (tf.scan too; no ONNX Scan)"),
            truth=truth,
            truth_method=(f"analytic: batch iterations x T x (F*{MID} + {MID}*{OUT}) = {BATCH} x {T} x ({F}*{MID} + "
                          f"{MID}*{OUT}) = {truth:,} (each iteration maps one [{T}, {F}] row)"),
            truth_covers="whole model: the Loop body x batch iterations",
            control_flow=[dict(op="Loop", trips=BATCH, body_macs=per,
                               trips_from=("M input = Cast(Squeeze(Slice(Shape(input)))): the batch dim (map_fn's "
                                           "element count, int64); initial cond = Less(0, batch); the body's cond = "
                                           "iteration number < batch (an outer-scope value) and i + 1 < batch (i a "
                                           "loop-carried index from 0, the bound loop-carried too), compared as "
                                           "floats"))],
        )


# ================================================================================= export / checks / strip
GENERATED = re.compile(r"^(?P<prefix>.*?)__\d+(?P<port>:\d+)?$")
UNK = re.compile(r"^unk__\d+$")


def graphs(g):
    """The graph and every subgraph, depth first in node order."""
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.g.ByteSize():
                yield from graphs(a.g)
            for sub in a.graphs:
                yield from graphs(sub)


def subgraph_attrs(n):
    import onnx

    return [a for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]


def value_infos(g):
    return list(g.input) + list(g.output) + list(g.value_info)


def rename_everywhere(model, old, new):
    for g in graphs(model.graph):
        for n in g.node:
            n.input[:] = [new if x == old else x for x in n.input]
            n.output[:] = [new if x == old else x for x in n.output]
        for vi in value_infos(g):
            if vi.name == old:
                vi.name = new


def tidy_io(model, spec):
    """input / output names; the input's symbolic dims -> batch / sequence everywhere that symbol appears."""
    g = model.graph
    assert len(g.input) == 1 and len(g.output) == 1, ([i.name for i in g.input], [o.name for o in g.output])
    rename_everywhere(model, g.input[0].name, "input")
    rename_everywhere(model, g.output[0].name, "output")
    sym = {}
    for vi, names in ((g.input[0], spec["dim_names"]), (g.output[0], spec["out_dim_names"])):
        dims = vi.type.tensor_type.shape.dim
        for axis, name in names.items():
            d = dims[axis]
            assert not d.HasField("dim_value") and UNK.match(d.dim_param), (vi.name, axis, d)
            sym[d.dim_param] = name
    counter = {}
    for sub in graphs(g):
        for vi in value_infos(sub):
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and UNK.match(d.dim_param):
                    if d.dim_param not in sym:
                        counter[d.dim_param] = counter.get(d.dim_param) or f"unk__{len(counter) + 1}"
                        d.dim_param = counter[d.dim_param]
                    else:
                        d.dim_param = sym[d.dim_param]
    return model


def canonicalize_names(model):
    """Renumber tf2onnx's generated `<prefix>__<n>` names in order of first appearance over the main graph
    and every subgraph (one namespace), name generated initializers `const__<k>`, and store each graph's
    initializers in order of first use (see models/make_keras.py's canonicalize_names, main graph only)."""
    mapping, counter = {}, [0]
    inits = {t.name for sub in graphs(model.graph) for t in sub.initializer}

    def canon(name):
        if not name:
            return name
        if name not in mapping:
            m = GENERATED.match(name)
            if m:
                counter[0] += 1
                prefix = "const" if name in inits else m.group("prefix")
                mapping[name] = f"{prefix}__{counter[0]}{m.group('port') or ''}"
            else:
                mapping[name] = name
        return mapping[name]

    def walk(g):
        own = {t.name: t for t in g.initializer}
        order = []
        for vi in g.input:
            vi.name = canon(vi.name)
        for n in g.node:
            n.name = canon(n.name)
            for i, x in enumerate(n.input):
                if x in own and x not in order:
                    order.append(x)
                n.input[i] = canon(x)
            for a in n.attribute:
                subs = ([a.g] if a.g.ByteSize() else []) + list(a.graphs)
                for sub in subs:
                    for used in outer_reads(sub):
                        if used in own and used not in order:
                            order.append(used)
                    walk(sub)
            for i, x in enumerate(n.output):
                n.output[i] = canon(x)
        for vi in list(g.output) + list(g.value_info):
            vi.name = canon(vi.name)
        ordered = [own[x] for x in order] + [t for x, t in own.items() if x not in order]
        for t in ordered:
            t.name = canon(t.name)
        del g.initializer[:]
        g.initializer.extend(ordered)

    walk(model.graph)
    assert len(set(mapping.values())) == len(mapping), "name clash"
    return model


def outer_reads(g):
    """Names a subgraph (and its subgraphs) reads, in order."""
    out = []
    for sub in graphs(g):
        for n in sub.node:
            out.extend(n.input)
    return out


def numel(t):
    import numpy as np

    return int(np.prod(t.dims)) if len(t.dims) else 1


def save_external(model, path):
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data

    data = path + ".data"
    for p in (path, data):
        if os.path.exists(p):
            os.remove(p)
    # every tensor of > 64 elements, main graph and subgraphs (Constant attributes included)
    convert_model_to_external_data(model, all_tensors_to_one_file=True, location=os.path.basename(data),
                                   size_threshold=0, convert_attribute=True)
    from onnx.external_data_helper import _get_all_tensors

    for t in _get_all_tensors(model):  # keep <= 64 elements inline
        if numel(t) <= INLINE_MAX_ELEMENTS and t.data_location == onnx.TensorProto.EXTERNAL:
            t.data_location = onnx.TensorProto.DEFAULT
            del t.external_data[:]
    onnx.save_model(model, path)
    return data


def verify_stripped(path, data):
    import onnx
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    m = onnx.load(path, load_external_data=False)
    n_ext = n_inline = 0
    for t in _get_all_tensors(m):
        if uses_external_data(t):
            n_ext += 1
            assert numel(t) > INLINE_MAX_ELEMENTS, t.name
            assert {e.key: e.value for e in t.external_data}["location"] == os.path.basename(data)
        else:
            n_inline += 1
            assert numel(t) <= INLINE_MAX_ELEMENTS, (t.name, numel(t))
    return n_ext, n_inline


def counting_reference(model):
    """onnx.reference.ReferenceEvaluator with MatMul / Gemm kernels that count MACs, a Loop that records its
    trip count (and stacks scan outputs on a new axis, as the ONNX spec and onnxruntime do: the reference
    Loop's np.vstack concatenates them) and an If that records the branch it takes."""
    import numpy as np
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.ops.op_gemm import Gemm_7
    from onnx.reference.ops.op_if import If as RefIf
    from onnx.reference.ops.op_loop import Loop as RefLoop
    from onnx.reference.ops.op_matmul import MatMul as RefMatMul

    log = {"macs": 0, "by_node": collections.Counter(), "trips": collections.defaultdict(list),
           "branches": collections.defaultdict(list)}

    class MatMul(RefMatMul):
        op_domain = ""

        def _run(self, a, b):
            (res,) = super()._run(a, b)
            macs = int(np.prod(res.shape)) * int(a.shape[-1])
            log["macs"] += macs
            log["by_node"][self.onnx_node.name] += macs
            return (res,)

    class Gemm(Gemm_7):
        op_domain = ""

        def _run(self, a, b, c=None, alpha=None, beta=None, transA=None, transB=None):
            (res,) = super()._run(a, b, c, alpha, beta, transA, transB)
            k = a.shape[0] if transA else a.shape[1]
            log["macs"] += int(np.prod(res.shape)) * int(k)
            return (res,)

    class If(RefIf):
        op_domain = ""

        def _run(self, cond, context=None, else_branch=None, then_branch=None, attributes=None, bindings=None):
            log["branches"][self.onnx_node.name].append("then" if bool(cond.item()) else "else")
            return super()._run(cond, context=context, else_branch=else_branch, then_branch=then_branch,
                                attributes=attributes, bindings=bindings)

    class Loop(RefLoop):
        """onnx 1.23.2's reference Loop._run, recording the trips and stacking scan outputs (np.stack)."""
        op_domain = ""

        def _run(self, M, cond, *args, context=None, body=None, attributes=None, bindings=None):
            v_initial, args = (args[0], args[1:]) if args else (None, ())
            body = self.body
            loop_inputs = body.input_names
            inputs = dict.fromkeys(loop_inputs)
            if v_initial is not None:
                inputs[loop_inputs[2]] = v_initial
            cond_name = body.output_names[0]
            if args:
                for name, val in zip(loop_inputs[len(loop_inputs) - len(args):], args):
                    inputs[name] = val
            if context is not None:
                for a in context:
                    inputs[a] = context[a]
            scans = [[] for _ in range(self.K)]
            it = 0
            while cond and (M is None or it < M):
                if len(loop_inputs) > 0 and loop_inputs[0] is not None:
                    inputs[loop_inputs[0]] = np.array(it, dtype=None if M is None else M.dtype)
                if len(loop_inputs) > 1 and loop_inputs[1] is not None:
                    inputs[loop_inputs[1]] = cond
                outputs = self._run_body(inputs, attributes=attributes, bindings=bindings)
                for k in range(self.K):
                    scans[k].append(outputs[-self.K + k])
                cond = outputs[self.output_index[cond_name]]
                for i, o in zip(loop_inputs[2:], body.output_names[1:]):
                    inputs[i] = outputs[self.output_index[o]]
                it += 1
            log["trips"][self.onnx_node.name].append(it)
            outputs = [inputs[i] for i in loop_inputs[2:]] if it == 0 else outputs[1:1 + self.N]
            outputs.extend([np.stack(x) for x in scans])
            return self._check_and_fix_outputs(tuple(outputs))

    return ReferenceEvaluator(model, new_ops=[MatMul, Gemm, If, Loop]), log


def tf_profile_matmul_macs(fn):
    """TF profiler float ops of MatMul / BatchMatMul* on the frozen graph of a concrete function, / 2."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    frozen = convert_variables_to_constants_v2(fn.get_concrete_function())
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(frozen.graph.as_graph_def(), name="")
    opts = (tf.compat.v1.profiler.ProfileOptionBuilder(tf.compat.v1.profiler.ProfileOptionBuilder.float_operation())
            .with_empty_output().build())
    prof = tf.compat.v1.profiler.profile(g, cmd="op", options=opts)
    by_type, stack = {}, list(prof.children)
    while stack:
        c = stack.pop()
        if c.float_ops:
            by_type[c.name] = by_type.get(c.name, 0) + int(c.float_ops)
        stack.extend(c.children)
    flops = sum(v for k, v in by_type.items() if k in ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"))
    assert flops % 2 == 0
    return flops // 2, by_type


def op_list(model):
    hist = collections.Counter()
    for g in graphs(model.graph):
        for n in g.node:
            hist[f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type] += 1
    return [k for k, _ in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))]


def control_nodes(model):
    """(node, depth, parent graph name) of every If/Loop/Scan, main graph first, depth first."""
    out = []

    def walk(g, depth):
        for n in g.node:
            if n.op_type in CONTROL_OPS:
                out.append((n, depth))
            for a in subgraph_attrs(n):
                walk(a.g, depth + 1)

    walk(model.graph, 0)
    return out


def make_tf2onnx_deterministic():
    """tf2onnx 1.17's Graph.extract_sub_graph_nodes returns list(set of Node objects): the order of the nodes it
    keeps (graph.delete_unused_nodes, run by its optimizers) follows their memory addresses, and the later
    passes (merge of duplicated nodes, constant dedup) keep whichever duplicate comes first, so two runs with
    the same PYTHONHASHSEED give different graphs (other survivors and names, same computation). Return the
    same nodes in the graph's own order instead."""
    from tf2onnx.graph import Graph

    orig = Graph.extract_sub_graph_nodes
    if getattr(orig, "_deterministic", False):
        return

    def ordered(self, *args, **kwargs):
        keep = set(orig(self, *args, **kwargs))
        own = self.get_nodes()
        rest = sorted((n for n in keep if n not in set(own)), key=lambda n: n.name)
        return [n for n in own if n in keep] + rest

    ordered._deterministic = True
    Graph.extract_sub_graph_nodes = ordered


def export_and_check(name, spec, out_dir, keep):
    import keras
    import numpy as np
    import onnx
    import onnxruntime as ort
    import tensorflow as tf
    import tf2onnx

    import tf2onnx.utils
    tf2onnx.utils.INTERNAL_NAME = 1
    make_tf2onnx_deterministic()
    fn = spec["fn"]
    model, _ = tf2onnx.convert.from_function(fn, input_signature=fn.input_signature, opset=OPSET)
    model = canonicalize_names(tidy_io(model, spec))
    onnx.checker.check_model(model, full_check=True)
    cf = control_nodes(model)
    want = [c["op"] for c in spec["control_flow"]]
    assert [n.op_type for n, _ in cf] == want, ([n.op_type for n, _ in cf], want)
    print("  control flow:", [(n.op_type, n.name, d) for n, d in cf])

    # ---- onnxruntime vs TF at several sizes; Loop trip counts read back from onnxruntime
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    loops = [n for n, d in cf if n.op_type == "Loop" and d == 0]
    for n in loops:  # the first loop-carried value counts iterations from 0 (Keras' time, map_fn's i, our t)
        probe.graph.output.append(onnx.helper.make_empty_tensor_value_info(n.output[0]))
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    seqs = spec.get("seqs", [None])
    worst = 0.0
    for b in spec["batches"]:
        for s in seqs:
            x = spec["feeds"](SEED + b, b, s)
            got = sess.run(None, {"input": x})
            ref = spec["ref"](x)
            assert got[0].shape == ref.shape, (got[0].shape, ref.shape)
            rel = float(np.max(np.abs(got[0] - ref))) / max(float(np.max(np.abs(ref))), 1e-6)
            worst = max(worst, rel)
            assert rel < 1e-4, (b, s, rel)
            trips = [int(v) for v in got[1:]]
            want_trips = [c["trips"] for c in spec["control_flow"] if c["op"] == "Loop"]
            if b == BATCH and (s in (None, T)):
                assert trips == want_trips, (trips, want_trips)
                ort_trips = trips
            print(f"  onnxruntime batch {b}{'' if s is None else f', sequence {s}'}: output {got[0].shape}, "
                  f"max |onnx - tf| {rel:.2g} of max |tf|, Loop trips {trips}")

    # ---- executed MACs on the model with weights (ReferenceEvaluator) at the bound dims
    x = spec["feeds"](SEED, BATCH, T)
    ref_eval, log = counting_reference(model)
    (y,) = ref_eval.run(None, {"input": x})
    assert np.allclose(y, spec["ref"](x), rtol=1e-4, atol=1e-4)
    trips = {k: v for k, v in log["trips"].items()}
    print(f"  ReferenceEvaluator: {log['macs']:,} MACs executed, Loop trips {trips}, If branches "
          f"{dict(log['branches'])}")
    assert log["macs"] == spec["truth"], (log["macs"], spec["truth"])

    # ---- TF profiler on the control-flow-free equivalent
    prof_macs, prof_by_type = tf_profile_matmul_macs(spec["profile_fn"])
    print(f"  TF profiler (no control flow): {prof_macs:,} MatMul MACs + {spec['profile_extra']:,} -> "
          f"{prof_macs + spec['profile_extra']:,}; truth {spec['truth']:,}")
    assert prof_macs + spec["profile_extra"] == spec["truth"]

    # ---- control_flow items: names, trips and per-iteration MACs checked against the executed run
    items = []
    for (n, depth), c in zip(cf, spec["control_flow"]):
        item = {"op": n.op_type, "name": n.name, "depth": depth, **{k: v for k, v in c.items() if k != "op"}}
        sub_names = {m.name for a in subgraph_attrs(n) for g in graphs(a.g) for m in g.node}
        body = sum(v for k, v in log["by_node"].items() if k in sub_names)
        if n.op_type == "Loop":
            assert log["trips"][n.name] == [c["trips"]], (n.name, log["trips"][n.name])
            assert body == c["trips"] * c["body_macs"], (n.name, body, c)
        else:
            assert log["branches"][n.name] == [c["branch_taken"]], (n.name, log["branches"][n.name])
            assert body == c["body_macs"], (n.name, body, c)
        items.append(item)

    # ---- save stripped
    path = os.path.join(out_dir, name + ".onnx")
    data = save_external(model, path)
    n_ext, n_inline = verify_stripped(path, data)
    full = onnx.load(path)  # with the external data: still the same model
    assert ort.InferenceSession(full.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"input": x})[0].shape == y.shape
    if not keep:
        os.remove(data)
    light = onnx.load(path, load_external_data=False)
    size = os.path.getsize(path)
    print(f"  wrote {path} ({size:,} bytes; {n_ext} external tensors, {n_inline} inline), "
          f"{len(light.graph.node)} main-graph nodes, ops {op_list(light)}")
    assert size < 1_000_000
    v = {"tensorflow": tf.__version__, "keras": keras.__version__, "tf2onnx": tf2onnx.__version__}
    return {
        "file": f"models/corpus/{name}.onnx",
        "family": "control_flow_tf",
        "exporter": (f"tf2onnx {v['tf2onnx']} convert.from_function(tf.function, input_signature, opset={OPSET}) "
                     f"(tensorflow-cpu {v['tensorflow']}, keras {v['keras']})"),
        "source": spec["source"],
        "dims": spec["dims"],
        "input_shapes": {},
        "inputs": spec["inputs"],
        "nodes": len(light.graph.node),
        "nodes_with_subgraphs": sum(len(g.node) for g in graphs(light.graph)),
        "truth_macs": spec["truth"],
        "truth_method": spec["truth_method"] + (
            f". Checked: onnx.reference.ReferenceEvaluator on the model with weights executes {log['macs']:,} "
            f"MatMul MACs at these dims (Loop trips {sorted(sum(trips.values(), []))}, If branches "
            f"{[b for v in log['branches'].values() for b in v]}); the TF profiler counts {prof_macs:,} MatMul "
            "MACs on the control-flow-free equivalent"
            + (f" (+ {spec['profile_extra']:,} for the cells computed before the Loops)" if spec["profile_extra"]
               else "")),
        "truth_covers": spec["truth_covers"],
        "control_flow": items,
        "onnxruntime_loop_trips": ort_trips if loops else [],
        "onnxruntime_max_rel_diff": float(f"{worst:.2g}"),
        "ops": op_list(light),
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }


if __name__ == "__main__":
    main()
