#!/usr/bin/env python3
"""Control-flow exports from paddle2onnx, jax2onnx and skl2onnx (issue 26): real Loop / If / Scan nodes.

Writes models/corpus/<name>.onnx (weights stripped) and merges their entries into
tests/fixtures/corpus_cf_other.json. Each framework lives in its own virtual environment, so the script has
three parts; run without --part it starts itself once per part with that part's interpreter
(--paddle-python / --jax-python / --sklearn-python, defaults below), one after the other:

    cd <repo root>
    python models/corpus/make_control_flow_other.py                    # all parts (~40 s, 2 cores)
    /work/venv-cf-jax/bin/python models/corpus/make_control_flow_other.py --part jax
    /work/venv-cf-paddle/bin/python models/corpus/make_control_flow_other.py --part paddle --only paddle_cond_paddle2onnx

Versions used for the committed files (CPU only):
    paddle part  (Python 3.11.7): paddlepaddle 3.3.1, paddle2onnx 2.1.0, onnx 1.17.0 (paddle2onnx 2.1.0 pins
                 onnx==1.17.0: `pip install ... onnx==1.23.2` is refused as a conflict), onnxruntime 1.32.0,
                 polygraphy 0.53.6 and onnxoptimizer 0.3.13 (pulled in by paddle2onnx), numpy 2.4.6
    jax part     (Python 3.12.1): jax 0.12.0.1, jaxlib 0.12.0.1, flax 0.12.12, jax2onnx 0.17.1, onnx 1.23.2,
                 onnx-ir 1.1.0, onnxruntime 1.32.0, numpy 2.5.5
    sklearn part (Python 3.11.7): scikit-learn 1.9.1, skl2onnx 1.20.0, onnx 1.23.2, onnxruntime 1.32.0,
                 numpy 2.4.6

Setup (outside the project's own environment):
    python3.11 -m venv /work/venv-cf-paddle
    /work/venv-cf-paddle/bin/pip install paddlepaddle==3.3.1 paddle2onnx==2.1.0 onnxruntime
    /root/.pyenv/versions/3.12.1/bin/python -m venv /work/venv-cf-jax      # jax2onnx 0.17 needs Python >= 3.12
    /work/venv-cf-jax/bin/pip install jax==0.12.0.1 flax==0.12.12 jax2onnx==0.17.1 onnx==1.23.2 onnxruntime
    python3.11 -m venv /work/venv-cf-sk
    /work/venv-cf-sk/bin/pip install scikit-learn==1.9.1 skl2onnx==1.20.0 onnx==1.23.2 onnxruntime

Every model has random weights (seeded). Each full export (with its weights) is run in onnxruntime against the
framework on two inputs, and the number of loop iterations is checked (a Loop's final counter or a scan
output's length, exposed as an extra graph output on a scratch copy; or a reference recomputed with exactly N
steps that N - 1 and N + 1 steps do not match). Then it is saved to models/corpus/ with every tensor of more
than 64 elements (initializers and Constant values, subgraphs included) as external data `<name>.onnx.data`,
which is deleted (--keep-weights keeps it); doc strings are removed. The files are otherwise what the
exporters wrote, including what onnx.checker rejects (see paddle below). Reruns give byte-identical files.

Truth (truth_macs): multiply-accumulates of matmul / gemm-like work (Linear, dot_general, MatMul, Gemm) over
every execution of a loop body (trip count x body MACs), element-wise work excluded (onnxperf's torch
convention), computed without onnxperf:
  * paddle: by hand from the layer dims, cross-checked against paddle.flops' own Linear rule
    (hapi/dynamic_flops.count_linear: weight.shape[0] * output numel per call) applied by forward hooks on the
    eager (dygraph) layer, where the Python loop calls the Linear once per step, so every step is counted.
    paddle.flops itself crashes in paddle 3.3.1 with numpy 2 (int() of a shape-[1] tensor), hence the hooks.
    Under to_static(full_graph=True), the program paddle2onnx converts, the same hook fires once per Linear
    with a symbolic [-1, H] output: that traced count covers the loop body once and no batch.
  * jax: from the jaxpr (jax.make_jaxpr at the bound shapes): every dot_general's output numel x its
    contracted size, a scan's body multiplied by its `length` (lax.fori_loop with constant bounds is a scan
    in the jaxpr), equal to the formula by hand. XLA's own cost_analysis() of the compiled function counts a
    while body once (recorded in the entry).
  * sklearn: by hand from the fitted estimator's dims. skl2onnx's Scan body (pairwise squared distances) is
    Sub + ReduceSumSquare: element-wise, 0 MACs; the entry lists its element counts per iteration.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_cf_other.json")
INLINE_MAX_ELEMENTS = 64
PYTHONS = {"paddle": "/work/venv-cf-paddle/bin/python", "jax": "/work/venv-cf-jax/bin/python",
           "sklearn": "/work/venv-cf-sk/bin/python"}
FIXTURE_DOC = (
    "Truth MACs of the paddle2onnx / jax2onnx / skl2onnx control-flow exports in models/corpus/ (issue 26), computed "
    "without onnxperf by models/corpus/make_control_flow_other.py. Analyze each file with onnxperf.analyze(file, "
    "dims=dims, input_shapes=input_shapes): every graph input is then static. truth_macs counts matmul/gemm-like "
    "multiply-accumulates over every execution of each loop body (trips x body MACs); control_flow lists every "
    "If / Loop / Scan node (main graph and nested) with its trip count, where the count comes from, and its "
    "per-iteration MACs. Files are shipped without weights (tensors > 64 elements are external data that is not "
    "committed).")


# ------------------------------------------------------------------------------------------ common helpers
# (only numpy and onnx: they run in every part's venv)
def _np():
    import numpy as np
    return np


def numel(t) -> int:
    n = 1
    for d in t.dims:
        n *= int(d)
    return n


def graphs(g):
    """g and every subgraph below it."""
    import onnx
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            for sg in a.graphs:
                yield from graphs(sg)


def op_name(n) -> str:
    return f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type


def op_list(m) -> list[str]:
    """Op types of the whole file, subgraphs included, most frequent first; other domains as `domain:Op`."""
    c = collections.Counter(op_name(n) for g in graphs(m.graph) for n in g.node)
    return [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]


def op_hist(g) -> dict[str, int]:
    c = collections.Counter(op_name(n) for n in g.node)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def cf_nodes(m):
    """(node, where) for every If / Loop / Scan in the file, main graph first."""
    import onnx
    out = []

    def walk(g, where):
        for n in g.node:
            if n.op_type in ("If", "Loop", "Scan"):
                out.append((n, where))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, f"{a.name} of {n.op_type} {n.name}")
    walk(m.graph, "main graph")
    return out


def body_of(n, attr="body"):
    for a in n.attribute:
        if a.name == attr:
            return a.g
    raise KeyError(attr)


def strip_docs(m) -> None:
    for g in graphs(m.graph):
        g.doc_string = ""
        for n in g.node:
            n.doc_string = ""
    m.doc_string = ""


def externalize(m, location: str) -> None:
    """Every tensor (initializers and Constant values, subgraphs included) of more than 64 elements becomes
    external data in `location`; onnx.save_model then writes them there."""
    from onnx import numpy_helper
    from onnx.external_data_helper import _get_all_tensors, set_external_data, uses_external_data
    for t in _get_all_tensors(m):
        if numel(t) <= INLINE_MAX_ELEMENTS or uses_external_data(t):
            continue
        if not t.HasField("raw_data"):
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
        set_external_data(t, location)


def ship(full_path: str, name: str, keep_weights: bool):
    """Re-save a full model as models/corpus/<name>.onnx with large tensors external, drop the weights."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors, uses_external_data
    m = onnx.load(full_path)
    strip_docs(m)
    path = os.path.join(OUT_DIR, name + ".onnx")
    data = path + ".data"
    for p in (path, data):
        if os.path.exists(p):
            os.remove(p)
    externalize(m, os.path.basename(data))
    onnx.save_model(m, path)
    light = onnx.load(path, load_external_data=False)
    for t in _get_all_tensors(light):
        assert uses_external_data(t) == (numel(t) > INLINE_MAX_ELEMENTS), (name, t.name, numel(t))
    raw = open(path, "rb").read()
    for needle in (REPO.encode(), b"/work/", b"site-packages", b"/tmp/", b"/root/"):
        assert needle not in raw, (name, needle)
    if not keep_weights and os.path.exists(data):
        os.remove(data)
    nb = {f"{n.op_type} {n.name}": len(body_of(n, "body" if n.op_type != "If" else "then_branch").node)
          for n, _ in cf_nodes(light)}
    print(f"    shipped {os.path.relpath(path, REPO)}: {len(light.graph.node)} nodes (bodies {nb}), {len(raw):,} B")
    print(f"    ops: {op_hist(light.graph)}")
    return light


def ort_session(path_or_bytes):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(path_or_bytes, so, providers=["CPUExecutionProvider"])


def with_outputs(model, names):
    """A serialized copy of model with main-graph tensors `names` added as graph outputs (type left open)."""
    import onnx
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for nm in names:
        m.graph.output.append(onnx.helper.make_empty_tensor_value_info(nm))
    return m.SerializeToString()


def check_close(what, got, ref, tol=1e-4):
    np = _np()
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    d = float(np.max(np.abs(got - ref))) if got.size else 0.0
    scale = max(float(np.max(np.abs(ref))), 1.0)
    print(f"    {what}: onnxruntime vs reference max |diff| {d:.3g} (max |ref| {float(np.max(np.abs(ref))):.3g})")
    assert d <= tol * scale, (what, d, scale)
    return d


def io_desc(m) -> str:
    import onnx

    def one(vi):
        tt = vi.type.tensor_type
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name
        dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        return f"{vi.name} {dt}[{', '.join(dims)}]"
    inits = {t.name for t in m.graph.initializer}
    return "; ".join(one(vi) for vi in m.graph.input if vi.name not in inits)


def entry(name, light, *, family, exporter, source, dims, input_shapes, truth, method, covers, control_flow,
          notes=None, **extra):
    e = {
        "file": f"models/corpus/{name}.onnx",
        "family": family,
        "exporter": exporter,
        "source": source,
        "dims": dims,
        "input_shapes": input_shapes,
        "inputs": io_desc(light),
        "nodes": len(light.graph.node),
        "nodes_with_subgraphs": sum(len(g.node) for g in graphs(light.graph)),
        "truth_macs": int(truth),
        "truth_method": method,
        "truth_covers": covers,
        "control_flow": control_flow,
        "ops": op_list(light),
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }
    found = [(n.op_type, n.name) for n, _ in cf_nodes(light)]
    assert found == [(c["op"], c["name"]) for c in control_flow], (name, found)
    if notes:
        e["notes"] = notes
    e.update(extra)
    return e


def rename_dims(m, mapping: dict[str, str], outputs: dict[str, dict[int, str]] | None = None) -> None:
    """Rename symbolic dims of the graph inputs (dim_param old -> new); set output dims by position."""
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param in mapping:
                d.dim_param = mapping[d.dim_param]
    for vi in m.graph.output:
        for pos, nm in (outputs or {}).get(vi.name, {}).items():
            d = vi.type.tensor_type.shape.dim[pos]
            assert not d.HasField("dim_value"), (vi.name, pos)
            d.dim_param = nm


def write_fixture(entries: list[dict]) -> None:
    """Merge entries into tests/fixtures/corpus_cf_other.json (keyed by file), sorted by file name."""
    old = []
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            old = json.load(f).get("models", [])
    by_file = {e["file"]: e for e in old}
    by_file.update({e["file"]: e for e in entries})
    doc = {"_doc": FIXTURE_DOC, "models": [by_file[k] for k in sorted(by_file)]}
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


# ---------------------------------------------------------------------------------------------- paddle
PD_F, PD_H, PD_C = 16, 32, 4          # features in, hidden, classes
PD_BATCH, PD_SEQ_LOOP, PD_SEQ_COND = 2, 12, 10
PD_COND_THRESHOLD = 8


def _paddle_versions():
    import onnx
    import onnxruntime
    import paddle
    import paddle2onnx
    return (f"paddle2onnx {paddle2onnx.__version__} (paddlepaddle {paddle.__version__}, onnx {onnx.__version__}, "
            f"onnxruntime {onnxruntime.__version__})")


def _paddle_randomize(layer, seed):
    """N(0, 0.1) on every parameter (Linear biases are zero by default)."""
    import paddle
    np = _np()
    rng = np.random.RandomState(seed)
    for _, p in sorted(layer.named_parameters()):
        p.set_value(paddle.to_tensor((rng.randn(*p.shape) * 0.1).astype("float32")))


def _paddle_linear_hook_macs(layer, x):
    """paddle.flops' Linear rule (count_linear: weight.shape[0] * output numel) summed over every call."""
    import paddle
    np = _np()
    tot = {"macs": 0, "calls": 0}

    def hook(m, inp, out):
        tot["macs"] += int(m.weight.shape[0]) * int(np.prod(out.shape))
        tot["calls"] += 1
    hs = [m.register_forward_post_hook(hook) for m in layer.sublayers() if isinstance(m, paddle.nn.Linear)]
    with paddle.no_grad():
        layer(x)
    for h in hs:
        h.remove()
    return tot


def _paddle_export(layer_cls, seed, spec, work, name):
    """Build layer_cls with fresh unique names, randomize, export to_static(full_graph) through paddle2onnx."""
    import paddle
    with paddle.utils.unique_name.guard():
        paddle.seed(seed)
        eager = layer_cls()
        _paddle_randomize(eager, seed)
        eager.eval()
    with paddle.utils.unique_name.guard():
        paddle.seed(seed)
        static = layer_cls()
        static.set_state_dict(eager.state_dict())
        static.eval()
    static = paddle.jit.to_static(static, input_spec=spec, full_graph=True)
    prefix = os.path.join(work, name)
    paddle.onnx.export(static, prefix, input_spec=spec, opset_version=17)
    return eager, static, prefix + ".onnx"


def _paddle_traced_hook_calls(static, x):
    """How often the Linear hooks fire when the to_static program runs: once per Linear at trace time."""
    import paddle
    shapes = []
    hs = [m.register_forward_post_hook(lambda m, i, o: shapes.append(list(o.shape)))
          for m in static.sublayers() if isinstance(m, paddle.nn.Linear)]
    static(x)
    for h in hs:
        h.remove()
    return shapes


def pd_while_loop(work, keep):
    import onnx
    import paddle
    np = _np()
    name = "paddle_while_loop_paddle2onnx"

    class PaddleRNN(paddle.nn.Layer):
        """tanh RNN over the sequence written as a Python for loop over x.shape[1], then a Linear head."""

        def __init__(self):
            super().__init__()
            self.inp = paddle.nn.Linear(PD_F, PD_H)
            self.rec = paddle.nn.Linear(PD_H, PD_H)
            self.head = paddle.nn.Linear(PD_H, PD_C)

        def forward(self, x):                      # x [batch, sequence, F]
            h = paddle.zeros([x.shape[0], PD_H], dtype="float32")
            for t in range(x.shape[1]):
                h = paddle.tanh(self.inp(x[:, t, :]) + self.rec(h))
            return self.head(h)

    spec = [paddle.static.InputSpec([None, None, PD_F], "float32", "x")]
    eager, static, full = _paddle_export(PaddleRNN, 1, spec, work, name)
    m = onnx.load(full)
    loops = cf_nodes(m)
    assert [(n.op_type, w) for n, w in loops] == [("Loop", "main graph")], loops
    loop = loops[0][0]
    assert loop.input[0] == "", "paddle2onnx writes no trip count M: the loop ends on its condition"
    rename_dims(m, {"DynamicDimension.0": "batch", "DynamicDimension.1": "sequence"},
                {m.graph.output[0].name: {0: "batch"}})
    onnx.save(m, full)
    # onnxruntime against the eager layer, at two sequence lengths; the Loop's first output is the final
    # value of the counter it carries (t + 1 after the last step), exposed on a scratch copy
    sess = ort_session(with_outputs(m, [loop.output[0]]))
    rng = np.random.RandomState(11)
    for seq in (PD_SEQ_LOOP, 5):
        x = rng.randn(PD_BATCH, seq, PD_F).astype("float32")
        y, counter = sess.run(None, {"x": x})
        check_close(f"sequence {seq}", y, eager(paddle.to_tensor(x)).numpy())
        assert int(np.asarray(counter).reshape(-1)[0]) == seq, (counter, seq)
        print(f"    Loop ran {seq} iterations at sequence {seq} (final counter {counter})")
    try:
        onnx.checker.check_model(m, full_check=True)
        checker = "passes onnx.checker full_check"
    except Exception as e:  # noqa: BLE001 - recorded, the file is shipped as the exporter wrote it
        checker = f"onnx.checker full_check rejects it: {str(e).strip().splitlines()[0]}"
    print(f"    {checker}")
    light = ship(full, name, keep)
    # truth
    body = PD_BATCH * (PD_F * PD_H + PD_H * PD_H)
    head = PD_BATCH * PD_H * PD_C
    truth = PD_SEQ_LOOP * body + head
    x = paddle.to_tensor(rng.randn(PD_BATCH, PD_SEQ_LOOP, PD_F).astype("float32"))
    hooked = _paddle_linear_hook_macs(eager, x)
    assert hooked["macs"] == truth and hooked["calls"] == 2 * PD_SEQ_LOOP + 1, (hooked, truth)
    traced = _paddle_traced_hook_calls(static, x)
    print(f"    truth {truth:,} = by hand = paddle.flops Linear rule on the eager layer ({hooked['calls']} calls); "
          f"to_static program fires the hooks {len(traced)} times with outputs {traced}")
    lb = body_of(light.graph.node[[n.name for n in light.graph.node].index(loop.name)])
    cf = [{
        "op": "Loop", "name": loop.name, "where": "main graph",
        "trips": PD_SEQ_LOOP,
        "trips_from": ("no M input (''): the loop runs while its condition holds; the condition is a carried "
                       "counter t (from 0, +1 per step) Less than sequence = Squeeze(Slice(Shape(x), 1, 2)), "
                       "computed before the Loop (initial cond) and again in the body, so trips = sequence = "
                       f"{PD_SEQ_LOOP}; checked in onnxruntime: final counter = sequence at 12 and 5"),
        "body_macs": body,
        "body_macs_method": (f"batch {PD_BATCH} x (Linear {PD_F}->{PD_H} on x[:, t, :] + Linear {PD_H}->{PD_H} "
                             f"on h) = {PD_BATCH} x ({PD_F}*{PD_H} + {PD_H}*{PD_H}) per iteration, as two "
                             "MatMul (+ bias Add) in the body"),
        "body_nodes": len(lb.node),
        "body_ops": op_hist(lb),
    }]
    return [entry(
        name, light, family="paddle", exporter=f"{_paddle_versions()}, paddle.onnx.export(opset_version=17)",
        source=(f"PaddleRNN in make_control_flow_other.py: Linear({PD_F}, {PD_H}) on x[:, t, :] + Linear({PD_H}, "
                f"{PD_H}) on h, tanh, in a Python `for t in range(x.shape[1])` under paddle.jit.to_static("
                f"full_graph=True) -> one ONNX Loop; then Linear({PD_H}, {PD_C}) on the last h; N(0, 0.1) "
                "weights and biases; input_spec [None, None, 16] (dims renamed from DynamicDimension.0/1)"),
        dims={"batch": PD_BATCH, "sequence": PD_SEQ_LOOP}, input_shapes={}, truth=truth,
        method=(f"by hand: sequence {PD_SEQ_LOOP} iterations x batch {PD_BATCH} x ({PD_F}*{PD_H} + {PD_H}*{PD_H}) "
                f"in the Loop + batch {PD_BATCH} x {PD_H}*{PD_C} head = {PD_SEQ_LOOP}*{body} + {head}; equal to "
                "paddle.flops' Linear rule (weight.shape[0] x output numel per call) summed by forward hooks over "
                f"the {hooked['calls']} Linear calls of the eager layer, where the Python loop runs every step. "
                "Under to_static(full_graph=True) the same hooks fire once per Linear (output [-1, H]): "
                "a traced count would hold the loop body once and no batch. paddle.flops itself crashes in "
                "paddle 3.3.1 with numpy 2 (int() of a shape-[1] buffer)"),
        covers="whole model (Loop body x sequence iterations + head)", control_flow=cf,
        notes=[("paddle2onnx writes the loop-carried counter and condition as shape-[1] tensors but declares the "
                "body outputs that carry them as scalars (rank 0): " + checker + "; onnxruntime warns "
                "('Error merging shape info ... Falling back to lenient merge') and runs it. Shipped as written."),
               "Weights are Constant nodes (no initializers); the body reads them from the outer scope.",
               "paddle2onnx's Polygraphy constant folding gives up on this graph for the same shape-inference "
               "error (it logs 'Fail to fold onnx model ... Skip folding'), so Identity / Cast chains remain."],
    )]


def pd_cond(work, keep):
    import onnx
    import paddle
    np = _np()
    name = "paddle_cond_paddle2onnx"

    class PaddleCond(paddle.nn.Layer):
        """Deeper path for long sequences: `if x.shape[1] > 8` -> If on a shape."""

        def __init__(self):
            super().__init__()
            self.a = paddle.nn.Linear(PD_F, PD_H)
            self.b = paddle.nn.Linear(PD_H, PD_H)
            self.c = paddle.nn.Linear(PD_F, PD_H)
            self.head = paddle.nn.Linear(PD_H, PD_C)

        def forward(self, x):                      # x [batch, sequence, F]
            if x.shape[1] > PD_COND_THRESHOLD:
                y = self.b(paddle.nn.functional.relu(self.a(x)))
            else:
                y = paddle.tanh(self.c(x))
            return self.head(y.mean(axis=1))

    spec = [paddle.static.InputSpec([None, None, PD_F], "float32", "x")]
    eager, static, full = _paddle_export(PaddleCond, 2, spec, work, name)
    m = onnx.load(full)
    ifs = cf_nodes(m)
    assert [(n.op_type, w) for n, w in ifs] == [("If", "main graph")], ifs
    node = ifs[0][0]
    rename_dims(m, {"DynamicDimension.0": "batch", "DynamicDimension.1": "sequence"},
                {m.graph.output[0].name: {0: "batch"}})
    onnx.save(m, full)
    sess = ort_session(with_outputs(m, [node.input[0]]))
    rng = np.random.RandomState(12)
    for seq, taken in ((PD_SEQ_COND, True), (4, False)):
        x = rng.randn(PD_BATCH, seq, PD_F).astype("float32")
        y, cond = sess.run(None, {"x": x})
        check_close(f"sequence {seq}", y, eager(paddle.to_tensor(x)).numpy())
        assert bool(np.asarray(cond).reshape(-1)[0]) is taken, (cond, seq)
        print(f"    If cond at sequence {seq}: {bool(np.asarray(cond).reshape(-1)[0])}")
    light = ship(full, name, keep)
    rows = PD_BATCH * PD_SEQ_COND
    then_macs = rows * (PD_F * PD_H + PD_H * PD_H)
    else_macs = rows * PD_F * PD_H
    head = PD_BATCH * PD_H * PD_C
    truth = then_macs + head
    x = paddle.to_tensor(rng.randn(PD_BATCH, PD_SEQ_COND, PD_F).astype("float32"))
    hooked = _paddle_linear_hook_macs(eager, x)
    assert hooked["macs"] == truth, (hooked, truth)
    ln = light.graph.node[[n.name for n in light.graph.node].index(node.name)]
    tb, eb = body_of(ln, "then_branch"), body_of(ln, "else_branch")
    cf = [{
        "op": "If", "name": node.name, "where": "main graph",
        "trips": 1,
        "trips_from": (f"an If runs one branch once; cond = Greater(Squeeze(Slice(Shape(x), 1, 2)), "
                       f"{PD_COND_THRESHOLD}) = sequence {PD_SEQ_COND} > {PD_COND_THRESHOLD} = True -> then_branch "
                       "(checked in onnxruntime: cond True at sequence 10, False at 4)"),
        "branch_taken": "then_branch",
        "body_macs": then_macs,
        "body_macs_method": (f"then_branch: batch*sequence = {rows} rows x ({PD_F}*{PD_H} + {PD_H}*{PD_H}) "
                             f"(two MatMul); else_branch: {rows} x {PD_F}*{PD_H} = {else_macs} (one MatMul)"),
        "then_macs": then_macs, "else_macs": else_macs,
        "then_ops": op_hist(tb), "else_ops": op_hist(eb),
        "branch_output_shapes": "both branches give [batch, sequence, 32]",
    }]
    return [entry(
        name, light, family="paddle", exporter=f"{_paddle_versions()}, paddle.onnx.export(opset_version=17)",
        source=(f"PaddleCond in make_control_flow_other.py: `if x.shape[1] > {PD_COND_THRESHOLD}`: Linear({PD_F}, "
                f"{PD_H}) + relu + Linear({PD_H}, {PD_H}), else Linear({PD_F}, {PD_H}) + tanh; then mean over the "
                f"sequence and Linear({PD_H}, {PD_C}); to_static(full_graph=True) -> one ONNX If; N(0, 0.1) "
                "weights and biases"),
        dims={"batch": PD_BATCH, "sequence": PD_SEQ_COND}, input_shapes={}, truth=truth,
        method=(f"by hand: the then_branch runs (sequence {PD_SEQ_COND} > {PD_COND_THRESHOLD}): batch {PD_BATCH} x "
                f"sequence {PD_SEQ_COND} x ({PD_F}*{PD_H} + {PD_H}*{PD_H}) = {then_macs}, + head batch {PD_BATCH} x "
                f"{PD_H}*{PD_C} = {head}; equal to paddle.flops' Linear rule summed by forward hooks on the eager "
                f"layer. The else_branch would be {else_macs}: a counter that takes the larger branch gets the "
                "truth here, one that takes the smaller or sums both does not"),
        covers="whole model (the branch the shape selects + head)", control_flow=cf,
    )]


def run_paddle(only, work, keep):
    import logging
    import warnings
    warnings.filterwarnings("ignore")
    logging.getLogger("paddle2onnx").setLevel(logging.ERROR)
    models = {"paddle_while_loop_paddle2onnx": pd_while_loop, "paddle_cond_paddle2onnx": pd_cond}
    return _run(models, only, work, keep)


# ------------------------------------------------------------------------------------------------- jax
JX_F, JX_H, JX_C = 16, 32, 4
JX_BATCH, JX_SEQ = 2, 12
JX_FORI_STEPS = 6


def _jax_versions():
    import jax
    import jax2onnx
    import onnx
    import onnxruntime
    from importlib.metadata import version
    return (f"jax2onnx {version('jax2onnx')} (jax {jax.__version__}, onnx {onnx.__version__}, onnxruntime "
            f"{onnxruntime.__version__})")


def _jax_params(seed):
    import jax
    k = jax.random.split(jax.random.PRNGKey(seed), 6)
    n = jax.random.normal
    return {"w_in": n(k[0], (JX_F, JX_H)) * 0.2, "b_in": n(k[1], (JX_H,)) * 0.1,
            "w_h": n(k[2], (JX_H, JX_H)) * 0.2, "b_h": n(k[3], (JX_H,)) * 0.1,
            "w_out": n(k[4], (JX_H, JX_C)) * 0.2, "b_out": n(k[5], (JX_C,)) * 0.1}


def jaxpr_macs(closed) -> tuple[int, list[str]]:
    """MACs of a (closed) jaxpr: dot_general output numel x contracted size, scan bodies x length; other
    sub-jaxprs (pjit, custom_jvp/vjp, closed_call) once. while / cond are refused (no static count here)."""
    import math
    jaxpr = getattr(closed, "jaxpr", closed)
    total, trail = 0, []
    for eqn in jaxpr.eqns:
        p = eqn.primitive.name
        if p == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval.shape
            k = math.prod(lhs[d] for d in lc)
            out = math.prod(eqn.outvars[0].aval.shape)
            total += out * k
            trail.append(f"dot_general {tuple(lhs)} x {tuple(eqn.invars[1].aval.shape)} -> "
                         f"{tuple(eqn.outvars[0].aval.shape)}: {out}*{k}")
        elif p == "scan":
            body, sub = jaxpr_macs(eqn.params["jaxpr"])
            n = int(eqn.params["length"])
            total += n * body
            trail.append(f"scan length {n} x body {body} [{'; '.join(sub)}]")
        elif p in ("while", "cond"):
            raise ValueError(f"{p} in the jaxpr: no static trip count")
        else:
            for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
                sub = eqn.params.get(key)
                if sub is not None and hasattr(getattr(sub, "jaxpr", sub), "eqns"):
                    m, s = jaxpr_macs(sub)
                    total += m
                    trail += s
    return total, trail


def _xla_flops(fn, x):
    import jax
    c = jax.jit(fn).lower(x).compile().cost_analysis()
    c = c[0] if isinstance(c, (list, tuple)) else c
    return float(c.get("flops", float("nan")))


def _jax_canonical(m, input_name):
    """jax2onnx writes the model name and a producer; keep them, check the input name."""
    assert [i.name for i in m.graph.input] == [input_name], [i.name for i in m.graph.input]


def jax_fori_loop(work, keep):
    import jax
    import jax.numpy as jnp
    import jax2onnx
    import onnx
    from jax import lax
    np = _np()
    name = "jax_fori_loop_jax2onnx"
    P = _jax_params(3)

    def fn(x):                                     # x [batch, F]
        h = jnp.tanh(x @ P["w_in"] + P["b_in"])

        def step(i, h):
            return jnp.tanh(h @ P["w_h"] + P["b_h"])
        h = lax.fori_loop(0, JX_FORI_STEPS, step, h)
        return h @ P["w_out"] + P["b_out"]

    def numpy_ref(x, steps):
        q = {k: np.asarray(v, dtype=np.float64) for k, v in P.items()}
        h = np.tanh(x @ q["w_in"] + q["b_in"])
        for _ in range(steps):
            h = np.tanh(h @ q["w_h"] + q["b_h"])
        return h @ q["w_out"] + q["b_out"]

    m = jax2onnx.to_onnx(fn, [("batch", JX_F)], model_name=name, opset=21, input_names=["x"],
                         output_names=["y"])
    full = os.path.join(work, name + ".onnx")
    onnx.save(m, full)
    _jax_canonical(m, "x")
    loops = cf_nodes(m)
    assert [(n.op_type, w) for n, w in loops] == [("Loop", "main graph")], loops
    loop = loops[0][0]
    inits = {t.name: t for t in m.graph.initializer}
    M = int(onnx.numpy_helper.to_array(inits[loop.input[0]]))
    cond0 = bool(onnx.numpy_helper.to_array(inits[loop.input[1]]))
    assert M == JX_FORI_STEPS and cond0, (M, cond0)
    sess = ort_session(full)
    rng = np.random.RandomState(13)
    for b in (JX_BATCH, 5):
        x = rng.randn(b, JX_F).astype("float32")
        y = sess.run(None, {"x": x})[0]
        check_close(f"batch {b} vs jax", y, np.asarray(fn(x)))
        check_close(f"batch {b} vs numpy {JX_FORI_STEPS} steps", y, numpy_ref(x.astype(np.float64), JX_FORI_STEPS))
        for wrong in (JX_FORI_STEPS - 1, JX_FORI_STEPS + 1):
            assert np.max(np.abs(y - numpy_ref(x.astype(np.float64), wrong))) > 1e-3, wrong
    print(f"    Loop ran {JX_FORI_STEPS} iterations (matches the {JX_FORI_STEPS}-step reference, not "
          f"{JX_FORI_STEPS - 1} or {JX_FORI_STEPS + 1})")
    light = ship(full, name, keep)
    xs = jax.ShapeDtypeStruct((JX_BATCH, JX_F), jnp.float32)
    closed = jax.make_jaxpr(fn)(xs)
    truth, trail = jaxpr_macs(closed)
    body = JX_BATCH * JX_H * JX_H
    by_hand = JX_BATCH * JX_F * JX_H + JX_FORI_STEPS * body + JX_BATCH * JX_H * JX_C
    assert truth == by_hand, (truth, by_hand, trail)
    xla = _xla_flops(fn, jnp.zeros((JX_BATCH, JX_F), jnp.float32))
    print(f"    truth {truth:,} from the jaxpr: {trail}; XLA cost_analysis flops {xla:,.0f}")
    lb = body_of(light.graph.node[[n.name for n in light.graph.node].index(loop.name)])
    cf = [{
        "op": "Loop", "name": loop.name, "where": "main graph",
        "trips": JX_FORI_STEPS,
        "trips_from": (f"M = the scalar int64 initializer '{loop.input[0]}' = {JX_FORI_STEPS} (lax.fori_loop(0, "
                       f"{JX_FORI_STEPS}, ...)); cond: initializer '{loop.input[1]}' = True, the body passes it "
                       "through unchanged (Identity), so the loop always runs M times"),
        "body_macs": body,
        "body_macs_method": (f"one Gemm per iteration: h [batch, {JX_H}] x w_h [{JX_H}, {JX_H}] (a body "
                             f"initializer; C is a scalar zero) = batch {JX_BATCH} x {JX_H}*{JX_H}; the bias Add and "
                             "Tanh are element-wise"),
        "body_nodes": len(lb.node),
        "body_ops": op_hist(lb),
    }]
    return [entry(
        name, light, family="jax", exporter=f"{_jax_versions()}, jax2onnx.to_onnx(fn, [('batch', {JX_F})], opset=21)",
        source=(f"a jax function in make_control_flow_other.py: h = tanh(x @ w_in[{JX_F},{JX_H}] + b), "
                f"lax.fori_loop(0, {JX_FORI_STEPS}, h -> tanh(h @ w_h[{JX_H},{JX_H}] + b)), y = h @ "
                f"w_out[{JX_H},{JX_C}] + b; jax.random weights (key 3) closed over as constants"),
        dims={"batch": JX_BATCH}, input_shapes={}, truth=truth,
        method=(f"from the jaxpr at batch {JX_BATCH}: dot_general output numel x contracted size, the fori_loop "
                f"(a scan of length {JX_FORI_STEPS} in the jaxpr) body times its length: {'; '.join(trail)}; = by "
                f"hand {JX_BATCH}*{JX_F}*{JX_H} + {JX_FORI_STEPS}*{JX_BATCH}*{JX_H}*{JX_H} + "
                f"{JX_BATCH}*{JX_H}*{JX_C}. XLA's cost_analysis() of the compiled function reports {xla:,.0f} "
                "flops: it counts the while body once (+ elementwise), not per iteration"),
        covers="whole model (Loop body x 6 iterations + input and output projections)", control_flow=cf,
        notes=[("jax2onnx 0.17.1's fori_loop plugin fails (TracerArrayConversionError) when the body closes over "
                "a traced value (the function's input); closing over constants only, or carrying the value in "
                "the loop state, works"),
               "The Loop body holds its own weights as initializers of the body graph (w_h [32, 32], external "
               "data like the main graph's; the bias [32] and [1, 32]) and a scalar zero C for its Gemm."],
        xla_cost_analysis_flops=xla,
    )]


def jax_scan(work, keep):
    import jax
    import jax.numpy as jnp
    import jax2onnx
    import onnx
    from jax import lax
    np = _np()
    name = "jax_scan_jax2onnx"
    P = _jax_params(4)

    def fn(x):                                     # x [batch, sequence, F]
        xs = jnp.swapaxes(x, 0, 1)

        def step(h, xt):
            h = jnp.tanh(xt @ P["w_in"] + h @ P["w_h"] + P["b_h"])
            return h, h
        h0 = jnp.zeros((x.shape[0], JX_H), x.dtype)
        h, hs = lax.scan(step, h0, xs)
        return h @ P["w_out"] + P["b_out"], jnp.swapaxes(hs, 0, 1)

    m = jax2onnx.to_onnx(fn, [("batch", "sequence", JX_F)], model_name=name, opset=21, input_names=["x"],
                         output_names=["y", "states"])
    full = os.path.join(work, name + ".onnx")
    onnx.save(m, full)
    _jax_canonical(m, "x")
    loops = cf_nodes(m)
    assert [(n.op_type, w) for n, w in loops] == [("Loop", "main graph")], loops  # jax2onnx writes scan as Loop
    loop = loops[0][0]
    assert loop.input[0] not in {t.name for t in m.graph.initializer}, "trip count should come from a shape"
    sess = ort_session(with_outputs(m, [loop.input[0]]))
    rng = np.random.RandomState(14)
    for b, s in ((JX_BATCH, JX_SEQ), (3, 7)):
        x = rng.randn(b, s, JX_F).astype("float32")
        y, states, trips = sess.run(None, {"x": x})
        ry, rs = fn(x)
        check_close(f"y at batch {b}, sequence {s}", y, np.asarray(ry))
        check_close(f"states at batch {b}, sequence {s}", states, np.asarray(rs))
        assert states.shape == (b, s, JX_H) and int(trips) == s, (states.shape, trips)
        print(f"    Loop M = {int(trips)}, scan output length {states.shape[1]} at sequence {s}")
    light = ship(full, name, keep)
    xs = jax.ShapeDtypeStruct((JX_BATCH, JX_SEQ, JX_F), jnp.float32)
    truth, trail = jaxpr_macs(jax.make_jaxpr(fn)(xs))
    body = JX_BATCH * (JX_F * JX_H + JX_H * JX_H)
    by_hand = JX_SEQ * body + JX_BATCH * JX_H * JX_C
    assert truth == by_hand, (truth, by_hand, trail)
    xla = _xla_flops(fn, jnp.zeros((JX_BATCH, JX_SEQ, JX_F), jnp.float32))
    print(f"    truth {truth:,} from the jaxpr: {trail}; XLA cost_analysis flops {xla:,.0f}")
    ln = light.graph.node[[n.name for n in light.graph.node].index(loop.name)]
    lb = body_of(ln)
    trip_chain = []
    prod = {o: n for n in light.graph.node for o in n.output}
    t = loop.input[0]
    while t in prod:
        trip_chain.append(prod[t].op_type)
        t = prod[t].input[0]
    cf = [{
        "op": "Loop", "name": loop.name, "where": "main graph",
        "trips": JX_SEQ,
        "trips_from": (f"M = '{loop.input[0]}' = {' <- '.join(trip_chain)} <- '{t}': dim 0 of the time-major "
                       f"Transpose of x, i.e. sequence = {JX_SEQ}; cond initializer True, passed through by the "
                       f"body (Identity). lax.scan becomes a Loop (not Scan): the body Gathers x_t from the "
                       f"carried sequence at the iteration number, and h_t is a scan output of length M "
                       f"(checked in onnxruntime: M = sequence and states [batch, sequence, {JX_H}] at 12 and 7)"),
        "body_macs": body,
        "body_macs_method": (f"two Gemm per iteration: x_t [batch, {JX_F}] x w_in [{JX_F}, {JX_H}] and h [batch, "
                             f"{JX_H}] x w_h [{JX_H}, {JX_H}] = batch {JX_BATCH} x ({JX_F}*{JX_H} + {JX_H}*{JX_H}); "
                             "Gather, Add, Reshape/Expand of the bias, Tanh, Cast are not MACs"),
        "body_nodes": len(lb.node),
        "body_ops": op_hist(lb),
    }]
    return [entry(
        name, light, family="jax",
        exporter=f"{_jax_versions()}, jax2onnx.to_onnx(fn, [('batch', 'sequence', {JX_F})], opset=21)",
        source=(f"a jax function in make_control_flow_other.py: tanh RNN (hidden {JX_H}) by lax.scan over the "
                f"time-major x, h = tanh(x_t @ w_in[{JX_F},{JX_H}] + h @ w_h[{JX_H},{JX_H}] + b); outputs y = "
                f"h_last @ w_out[{JX_H},{JX_C}] + b and the states [batch, sequence, {JX_H}]; jax.random weights "
                "(key 4); exported with a symbolic sequence, so the trip count follows from the input shape"),
        dims={"batch": JX_BATCH, "sequence": JX_SEQ}, input_shapes={}, truth=truth,
        method=(f"from the jaxpr at batch {JX_BATCH}, sequence {JX_SEQ}: dot_general output numel x contracted size, "
                f"the scan body times its length: {'; '.join(trail)}; = by hand {JX_SEQ}*{JX_BATCH}*({JX_F}*{JX_H} "
                f"+ {JX_H}*{JX_H}) + {JX_BATCH}*{JX_H}*{JX_C}. XLA's cost_analysis() reports {xla:,.0f} flops "
                "(the while body once)"),
        covers="whole model (Loop body x sequence iterations + output projection)", control_flow=cf,
        notes=["jax2onnx 0.17.1 lowers lax.scan to an ONNX Loop, not Scan; the weights are carried through the "
               "Loop as loop-carried values (v_initial -> body Identity -> unused final outputs)."],
        xla_cost_analysis_flops=xla,
    )]


def run_jax(only, work, keep):
    import jax
    jax.config.update("jax_platforms", "cpu")
    models = {"jax_fori_loop_jax2onnx": jax_fori_loop, "jax_scan_jax2onnx": jax_scan}
    return _run(models, only, work, keep)


# --------------------------------------------------------------------------------------------- sklearn
SK_BATCH = 3


def _sk_versions():
    import onnx
    import onnxruntime
    import skl2onnx
    import sklearn
    return (f"skl2onnx {skl2onnx.__version__} (scikit-learn {sklearn.__version__}, onnx {onnx.__version__}, "
            f"onnxruntime {onnxruntime.__version__})")


def _sk_convert(model, n_features, name):
    """convert_sklearn with skl2onnx's global name counters reset (names then do not depend on what was
    converted before in the process); default options: pairwise distances by Scan (optim=None)."""
    import skl2onnx.common._topology as topo
    import skl2onnx.common.utils as utils
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType
    utils._unique_index["subgraph"] = 0
    topo.Variable._UNIQUE_NUMBER_ = 0
    return convert_sklearn(model, name=name, initial_types=[("input", FloatTensorType([None, n_features]))],
                           target_opset={"": 17, "ai.onnx.ml": 3})


def _scan_info(m, scan):
    """The Scan's body ops, its scan input and the static length of that input's axis 0."""
    body = body_of(scan)
    nsi = next(a.i for a in scan.attribute if a.name == "num_scan_inputs")
    n_state = len(scan.input) - nsi
    scan_in = scan.input[n_state]
    return body, n_state, nsi, scan_in


def _distance_body_doc(n_rows, n_feat, n_train, body):
    ops = [n.op_type for n in body.node]
    assert ops == ["Identity", "Sub", "ReduceSumSquare", "Identity"], ops
    return {
        "body_ops_per_iteration": {
            "Identity (state next_in -> next_out)": f"[{n_rows}, {n_feat}] copied",
            "Sub (next_in - next)": (f"[{n_rows}, {n_feat}] - [{n_feat}] -> {n_rows * n_feat} elements "
                                     "(query rows minus one training row)"),
            "ReduceSumSquare (axes=[1], keepdims=0)": (f"{n_rows * n_feat} input elements -> {n_rows} outputs "
                                                       f"({n_rows * n_feat} squares, {n_rows * (n_feat - 1)} adds)"),
            "Identity (-> scan_out)": f"[{n_rows}]",
        },
        "body_elementwise_total": (f"{n_train} iterations x ({n_rows * n_feat} Sub + {n_rows * n_feat} squares "
                                   f"+ {n_rows * (n_feat - 1)} adds) = {n_train * n_rows * (3 * n_feat - 1)} "
                                   "element-wise ops; MACs under the matmul/gemm convention: 0 (no MatMul/Gemm)"),
    }


def sk_knn_scan(work, keep):
    import onnx
    from sklearn.datasets import make_regression
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    np = _np()
    name = "sklearn_knn_scan"
    n_train, n_feat, n_comp, k = 50, 10, 4, 3
    X, y = make_regression(n_samples=n_train, n_features=n_feat, noise=0.1, random_state=0)
    X = X.astype(np.float32)
    pipe = make_pipeline(PCA(n_components=n_comp, random_state=0), KNeighborsRegressor(n_neighbors=k)).fit(X, y)
    m = _sk_convert(pipe, n_feat, name)
    scans = cf_nodes(m)
    assert [(n.op_type, w) for n, w in scans] == [("Scan", "main graph")], scans
    scan = scans[0][0]
    body, n_state, nsi, scan_in = _scan_info(m, scan)
    inits = {t.name: t for t in m.graph.initializer}
    assert n_state == 1 and nsi == 1 and list(inits[scan_in].dims) == [n_train, n_comp], (n_state, nsi, scan_in)
    # skl2onnx leaves the batch dim anonymous: name it on the graph input and outputs (EXPORTING.md)
    for vi in list(m.graph.input) + list(m.graph.output):
        d0 = vi.type.tensor_type.shape.dim[0]
        assert not d0.HasField("dim_value") and not d0.dim_param, vi
        d0.dim_param = "batch"
    onnx.checker.check_model(m, full_check=True)
    full = os.path.join(work, name + ".onnx")
    onnx.save(m, full)
    sess = ort_session(with_outputs(m, [scan.output[1]]))
    rng = np.random.RandomState(15)
    for b in (SK_BATCH, 7):
        q = rng.randn(b, n_feat).astype(np.float32)
        pred, stacked = sess.run(None, {"input": q})
        check_close(f"batch {b}", np.asarray(pred).reshape(-1), pipe.predict(q), tol=1e-4)
        assert stacked.shape == (n_train, b), stacked.shape
        z = pipe[0].transform(q)
        ref_d2 = ((z[:, None, :] - pipe[1]._fit_X[None, :, :]) ** 2).sum(-1).T
        check_close(f"scan output (squared distances) batch {b}", stacked, ref_d2, tol=1e-4)
        print(f"    Scan ran {stacked.shape[0]} iterations (scan output [{stacked.shape[0]}, {b}])")
    light = ship(full, name, keep)
    pca = SK_BATCH * n_feat * n_comp
    truth = pca
    ln = light.graph.node[[n.name for n in light.graph.node].index(scan.name)]
    lbody = body_of(ln)
    cf = [{
        "op": "Scan", "name": scan.name, "where": "main graph",
        "trips": n_train,
        "trips_from": (f"num_scan_inputs = 1; the scan input is the initializer '{scan_in}' [{n_train}, {n_comp}] "
                       f"(the fitted training set in PCA space), scanned along axis 0: trips = n_train = {n_train}, "
                       f"static (checked in onnxruntime: scan output 2 is [{n_train}, batch]); the state is the "
                       "PCA output [batch, 4], passed through unchanged"),
        "body_macs": 0,
        "body_macs_method": ("Sub + ReduceSumSquare (squared Euclidean distance of every query row to one "
                             "training row): element-wise and a reduction, no MatMul/Gemm: 0 MACs"),
        "body_nodes": len(lbody.node),
        "body_ops": op_hist(lbody),
        **_distance_body_doc(SK_BATCH, n_comp, n_train, lbody),
    }]
    return [entry(
        name, light, family="sklearn",
        exporter=f"{_sk_versions()}, convert_sklearn(target_opset ai.onnx 17 / ai.onnx.ml 3), default options",
        source=(f"sklearn make_pipeline(PCA(n_components={n_comp}), KNeighborsRegressor(n_neighbors={k})) fitted on "
                f"make_regression({n_train} samples, {n_feat} features, random_state=0); skl2onnx's default "
                "writes the pairwise distances as a Scan over the training rows (options {'optim': 'cdist'} "
                "would write com.microsoft CDist instead); batch dim named `batch`"),
        dims={"batch": SK_BATCH}, input_shapes={}, truth=truth,
        method=(f"by hand from the fitted estimator's dims: PCA MatMul batch {SK_BATCH} x {n_feat}*{n_comp} = {pca}; "
                f"the Scan ({n_train} iterations) computes squared distances with Sub + ReduceSumSquare, "
                f"element-wise ({n_train} x {SK_BATCH}x{n_comp} differences, squares and sums: see control_flow), "
                "0 MACs under the matmul/gemm convention; Sqrt, TopK, ArrayFeatureExtractor, ReduceMean: 0 MACs. "
                "The PCA makes the truth non-zero: a Scan counted as 0 or as any multiple of its body gives the "
                "same MACs, so this file checks that the Scan's tensors are shaped and its body costed, and its "
                "FLOPs by the element counts in control_flow"),
        covers="whole pipeline (PCA MatMul; the Scan body has no MACs)", control_flow=cf,
    )]


def sk_gpr_scan(work, keep):
    import onnx
    from sklearn.gaussian_process import GaussianProcessRegressor
    np = _np()
    name = "sklearn_gpr_scan"
    n_train, n_feat = 40, 4
    rng = np.random.RandomState(1)
    X = rng.randn(n_train, n_feat).astype(np.float32)
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.randn(n_train)
    gpr = GaussianProcessRegressor(random_state=0).fit(X, y)   # kernel 1.0 * RBF(1.0), optimized
    m = _sk_convert(gpr, n_feat, name)
    scans = cf_nodes(m)
    assert [(n.op_type, w) for n, w in scans] == [("Scan", "main graph")], scans
    scan = scans[0][0]
    body, n_state, nsi, scan_in = _scan_info(m, scan)
    assert n_state == 1 and nsi == 1, (n_state, nsi)
    # the batch dim is left anonymous as skl2onnx writes it: the fixture binds it with input_shapes
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    assert not d0.HasField("dim_value") and not d0.dim_param
    onnx.checker.check_model(m, full_check=True)
    full = os.path.join(work, name + ".onnx")
    onnx.save(m, full)
    matmuls = [n for n in m.graph.node if n.op_type in ("MatMul", "Gemm")]
    assert len(matmuls) == 2, [n.op_type for n in matmuls]
    mm_inputs = [x for n in matmuls for x in n.input]
    sess = ort_session(with_outputs(m, [scan.output[1], *mm_inputs]))
    for b in (SK_BATCH, 6):
        q = rng.randn(b, n_feat).astype(np.float32)
        pred, stacked, *mm = sess.run(None, {"input": q})
        check_close(f"batch {b}", np.asarray(pred).reshape(-1), gpr.predict(q), tol=1e-3)
        assert stacked.shape == (n_train, b), stacked.shape
        # the two MatMuls: zeros [batch, 1] x zeros [1, n_train], then K [batch, n_train] x alpha [n_train]
        shapes = [tuple(np.shape(v)) for v in mm]
        assert shapes == [(b, 1), (1, n_train), (b, n_train), (n_train,)], shapes
        assert np.all(mm[0] == 0) and np.all(mm[1] == 0)  # ConstantOfShape without a value: zeros
        print(f"    MatMul operand shapes at batch {b}: {shapes}")
        print(f"    Scan ran {stacked.shape[0]} iterations (scan output [{stacked.shape[0]}, {b}])")
    light = ship(full, name, keep)
    zeros_outer = SK_BATCH * n_train * 1
    mean = SK_BATCH * n_train
    truth = zeros_outer + mean
    ln = light.graph.node[[n.name for n in light.graph.node].index(scan.name)]
    lbody = body_of(ln)
    cf = [{
        "op": "Scan", "name": scan.name, "where": "main graph",
        "trips": n_train,
        "trips_from": (f"num_scan_inputs = 1; the scan input is Div(initializer [{n_train}, {n_feat}] (the training "
                       f"set), length_scale), scanned along axis 0: trips = n_train = {n_train}, static from an "
                       f"initializer's shape (checked in onnxruntime: scan output 2 is [{n_train}, batch]); the "
                       "state is the query [batch, 4] / length_scale, passed through unchanged"),
        "body_macs": 0,
        "body_macs_method": "Sub + ReduceSumSquare: element-wise and a reduction, no MatMul/Gemm: 0 MACs",
        "body_nodes": len(lbody.node),
        "body_ops": op_hist(lbody),
        **_distance_body_doc(SK_BATCH, n_feat, n_train, lbody),
    }]
    return [entry(
        name, light, family="sklearn",
        exporter=f"{_sk_versions()}, convert_sklearn(target_opset ai.onnx 17 / ai.onnx.ml 3), default options",
        source=(f"sklearn GaussianProcessRegressor(random_state=0) (kernel 1.0 * RBF(1.0), hyperparameters "
                f"optimized) fitted on {n_train} rows x {n_feat} features; output GPmean; the batch dim left "
                "anonymous as skl2onnx writes it (input [?, 4])"),
        dims={}, input_shapes={"input": [SK_BATCH, n_feat]}, truth=truth,
        method=(f"by hand from the converter's graph and the fitted dims: the RBF kernel's k(x, X_train) is "
                f"built as MatMul(zeros [batch, 1], zeros [1, {n_train}]) = batch {SK_BATCH} x {n_train} x 1 = "
                f"{zeros_outer} MACs (a K = 1 outer product of two ConstantOfShape: the converter's way to get a "
                f"[batch, {n_train}] tensor to which the ConstantKernel value is added), then Add / Mul "
                f"with Exp(-0.5 x squared distances from the Scan); the mean is MatMul(K [batch, {n_train}], "
                f"alpha [{n_train}]) = {SK_BATCH} x {n_train} = {mean} MACs; total {truth}. The Scan ({n_train} "
                "iterations of Sub + ReduceSumSquare) has no MACs: see control_flow for its element counts"),
        covers="whole model (two MatMul; the Scan body has no MACs)", control_flow=cf,
        notes=["input [None, 4] exactly as skl2onnx writes it (no dim name): bind it with input_shapes."],
    )]


def run_sklearn(only, work, keep):
    models = {"sklearn_knn_scan": sk_knn_scan, "sklearn_gpr_scan": sk_gpr_scan}
    return _run(models, only, work, keep)


# ------------------------------------------------------------------------------------------------ driver
def _run(models, only, work, keep):
    entries = []
    for n, fn in models.items():
        if only and n not in only:
            continue
        print(f"== {n}")
        es = fn(work, keep)
        for e in es:
            print(f"    truth MACs: {e['truth_macs']:,}")
        entries += es
    return entries


PARTS = {"paddle": run_paddle, "jax": run_jax, "sklearn": run_sklearn}
ALL_MODELS = {"paddle": ["paddle_while_loop_paddle2onnx", "paddle_cond_paddle2onnx"],
              "jax": ["jax_fori_loop_jax2onnx", "jax_scan_jax2onnx"],
              "sklearn": ["sklearn_knn_scan", "sklearn_gpr_scan"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=sorted(PARTS), help="run one part in this interpreter")
    ap.add_argument("--only", nargs="*", help="model names (file names without .onnx)")
    ap.add_argument("--keep-weights", action="store_true", help="keep models/corpus/<name>.onnx.data")
    ap.add_argument("--no-fixture", action="store_true", help="do not write tests/fixtures/corpus_cf_other.json")
    for p in PARTS:
        ap.add_argument(f"--{p}-python", default=PYTHONS[p], help=f"interpreter of the {p} part")
    a = ap.parse_args()
    known = {n for ns in ALL_MODELS.values() for n in ns}
    for n in a.only or []:
        if n not in known:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(sorted(known))}")
    if a.part is None:  # dispatch: one child per part, each with its own interpreter, one after the other
        for p in PARTS:
            if a.only and not set(a.only) & set(ALL_MODELS[p]):
                continue
            cmd = [getattr(a, f"{p}_python"), os.path.abspath(__file__), "--part", p]
            if a.only:
                cmd += ["--only", *[n for n in a.only if n in ALL_MODELS[p]]]
            cmd += ["--keep-weights"] * a.keep_weights + ["--no-fixture"] * a.no_fixture
            print(f"### {p}: {' '.join(cmd)}", flush=True)
            subprocess.run(cmd, check=True)
        return
    os.makedirs(OUT_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        entries = PARTS[a.part](set(a.only or []), work, a.keep_weights)
    if not a.no_fixture and entries:
        write_fixture(entries)


if __name__ == "__main__":
    main()
