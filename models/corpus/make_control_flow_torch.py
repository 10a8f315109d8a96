#!/usr/bin/env python3
"""Control-flow half of onnxperf's corpus for PyTorch and Hugging Face optimum exports (issue 26).

Writes models/corpus/<name>.onnx (weights stripped) and tests/fixtures/corpus_cf_torch.json: the truth MACs of
each file, counted over every execution of every Loop body (trips x body) and for the If branch taken, obtained
without onnxperf. Every file holds real control flow as the exporter writes it (Loop / If, not unrolled).

Files:
  torch_script_loop_legacy.onnx          scripted `for t in range(x.size(1))` RNN      -> Loop, M from Shape
  torch_script_while_legacy.onnx         scripted `while i < x.size(0)` (time-major)   -> Loop, cond from Less
  torch_script_if_legacy.onnx            scripted `if x.size(1) > 16:` two MLP paths   -> If, cond from Shape
  torch_greedy_search_loop_legacy.onnx   scripted greedy decoding, steps = step_pos.size(0) -> Loop + Sequence
  bart_decoder_merged_optimum.onnx       optimum merged BART decoder (use_cache_branch If)
  t5_decoder_merged_optimum.onnx         optimum merged T5 decoder (use_cache_branch If)

Versions used for the committed files (Python 3.11.7, CPU only, 2 cores):
    torch 2.13.0+cpu  onnx 1.23.2  onnxruntime 1.32.0  onnxscript 0.7.2  numpy 2.4.6  protobuf 7.36.2
    and for the optimum files, from a separate --target folder first on PYTHONPATH:
    transformers 4.57.6  optimum 2.1.0  optimum-onnx 0.1.0  huggingface_hub 0.36.2  tokenizers 0.22.2
    (plus their pure-python dependencies in the venv: requests pyyaml regex safetensors tqdm packaging filelock)

Setup (outside the project's own environment):
    python3.11 -m venv /work/venv-cf-torch
    /work/venv-cf-torch/bin/pip install torch==2.13.0 onnx==1.23.2 onnxruntime onnxscript
    /work/venv-cf-torch/bin/pip install requests pyyaml regex safetensors tqdm packaging filelock
    /work/venv-cf-torch/bin/pip install --no-deps --target /work/optimum-site transformers==4.57.6 \
        optimum==2.1.0 optimum-onnx==0.1.0 huggingface_hub==0.36.2 tokenizers==0.22.2
    cd <repo root>
    PYTHONPATH=/work/optimum-site HF_HUB_OFFLINE=1 /work/venv-cf-torch/bin/python \
        models/corpus/make_control_flow_torch.py                # every file + the fixture (~15 s)
    ... make_control_flow_torch.py --only torch_script_if_legacy --keep-weights

(optimum-onnx 0.1.0 needs transformers < 4.58, hence the separate folder; the four scripted models need only
torch and run without it.)

How the files are made:
  * Every model has random weights (seeded), then N(0, 1e-3) noise on every float parameter and buffer (as
    models/make_torch.py does) so that the legacy exporter merges no bit-identical initializers.
  * Scripted models: torch.jit.script(module), then torch.onnx.export(scripted, ..., dynamo=False,
    opset_version=17, dynamic_axes=...) from example inputs of another size than the bound dims. TorchScript
    keeps Python loops and ifs whose conditions depend on tensor shapes as prim::Loop / prim::If, which the
    legacy exporter writes as ONNX Loop / If.
  * optimum: the transformers model is built from a small config, noised, saved with save_pretrained to a
    scratch folder, and exported from there offline (HF_HUB_OFFLINE=1) with
    optimum.exporters.onnx.main_export(folder, task="text2text-generation-with-past"), the legacy torch
    exporter underneath at optimum's default opset for the model type; only decoder_model_merged.onnx is
    shipped. Its main graph is a single If on the graph input `use_cache_branch` (then_branch: decoder with
    past, else_branch: decoder without past); the two branches reuse hundreds of tensor names.
  * Each full model (with weights) is run in onnxruntime against torch (at the bound dims and at other
    sizes), then re-saved to models/corpus/ with every tensor of more than 64 elements as external data
    `<name>.onnx.data`, which is deleted (--keep-weights keeps it). The script fails if an absolute path of
    this machine is left in a file.

Truth (fixture field truth_macs), computed independently of onnxperf, three ways that must agree:
  * torch.utils.flop_counter.FlopCounterMode FLOPs / 2 of the EAGER (unscripted) module at the bound dims
    (Python loops run every iteration, so the counter sees trips x body); Hugging Face models in eager
    attention (the exported sdpa graph computes the same products; outputs compared);
  * a count by hand from the layer dims and the trip count (formula in truth_method; asserted equal);
  * onnxruntime's profiler on the exported model with weights (ORT_DISABLE_ALL, so nodes run as written):
    every MatMul / Gemm the runtime executes, main graph and bodies, with its runtime input/output shapes,
    summed as MACs; this counts each body execution, so it checks the trip count the runtime really ran
    (asserted equal to the truth; the number of executions of each body MatMul/Gemm is the trip count).
  The optimum merged decoders: truth_macs is the with-past branch (then_branch, use_cache_branch = True) at
  the bound dims (1 new token, past P); `branch_macs` gives both branches at the bound dims (the no-past
  else_branch runs the cross-attention K/V projections of the encoder states: it is the larger) and
  `else_branch_prefill` the no-past branch at decoder sequence S. `use_cache_branch` is a graph input, so
  from shapes alone the branch is unknown: the larger branch is an upper bound, the taken one needs the value.

Deterministic: reruns give byte-identical .onnx files and fixture.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import tempfile
import warnings
from typing import List

if os.environ.get("PYTHONHASHSEED") != "0":  # optimum's merge of the two decoders iterates over sets of names
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from onnx.external_data_helper import _get_all_tensors, uses_external_data  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_cf_torch.json")
SEED = 0
NOISE_STD = 1e-3
INLINE_MAX_ELEMENTS = 64
TORCH_V = torch.__version__.split("+")[0]
CF_OPS = ("If", "Loop", "Scan")

warnings.filterwarnings("ignore")


# ----------------------------------------------------------------------------------------------- helpers
def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def add_noise(model: torch.nn.Module, std: float = NOISE_STD) -> torch.nn.Module:
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            noise = torch.randn(t.shape, generator=g, dtype=t.dtype) * std
            if name.endswith("running_var"):
                noise = noise.abs()
            t.add_(noise)
    return model


def torch_macs(fn) -> int:
    """FlopCounterMode FLOPs / 2 of fn() under no_grad."""
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        fn()
    flops = int(fc.get_total_flops())
    assert flops % 2 == 0, flops
    return flops // 2


def numel(t: onnx.TensorProto) -> int:
    return int(np.prod(t.dims)) if len(t.dims) else 1


def graphs(g: onnx.GraphProto, path: str = "main"):
    """(path, graph) for the graph and every subgraph, depth first."""
    yield path, g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g, f"{path}/{n.name or n.op_type}.{a.name}")
            for i, sg in enumerate(a.graphs):
                yield from graphs(sg, f"{path}/{n.name or n.op_type}.{a.name}[{i}]")


def op_key(n: onnx.NodeProto) -> str:
    return f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type


def op_list(m: onnx.ModelProto) -> list[str]:
    """Op types of the whole file (main graph and subgraphs), most frequent first."""
    c = collections.Counter(op_key(n) for _, g in graphs(m.graph) for n in g.node)
    return [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]


def op_hist(g: onnx.GraphProto) -> dict[str, int]:
    c = collections.Counter(op_key(n) for n in g.node)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def strip_metadata(m: onnx.ModelProto) -> None:
    for _, g in graphs(m.graph):
        for n in g.node:
            keep = [p for p in n.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
            del n.metadata_props[:]
            n.metadata_props.extend(keep)
            n.doc_string = ""
        g.doc_string = ""
    m.doc_string = ""


def io_desc(m: onnx.ModelProto) -> str:
    def one(vi):
        tt = vi.type.tensor_type
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name
        dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        return f"{vi.name} {dt}[{', '.join(dims)}]"
    inits = {t.name for t in m.graph.initializer}
    return "; ".join(one(vi) for vi in m.graph.input if vi.name not in inits)


def externalize(m: onnx.ModelProto, location: str) -> None:
    """Mark every tensor (initializers and Constant attributes, subgraphs included) of more than 64 elements
    as external data in `location`; onnx.save_model then writes them there in graph order."""
    from onnx import numpy_helper
    from onnx.external_data_helper import set_external_data
    for t in _get_all_tensors(m):
        if numel(t) <= INLINE_MAX_ELEMENTS or uses_external_data(t):
            continue
        if not t.HasField("raw_data"):
            arr = numpy_helper.to_array(t)
            t.CopyFrom(numpy_helper.from_array(arr, t.name))
        set_external_data(t, location)


def ship(full_path: str, name: str, keep_weights: bool) -> onnx.ModelProto:
    """Re-save a full model as models/corpus/<name>.onnx with large tensors external, drop the weights."""
    m = onnx.load(full_path)
    strip_metadata(m)
    path = os.path.join(OUT_DIR, name + ".onnx")
    data = path + ".data"
    for p in (path, data):
        if os.path.exists(p):
            os.remove(p)
    externalize(m, os.path.basename(data))
    onnx.save_model(m, path)
    light = onnx.load(path, load_external_data=False)
    for t in _get_all_tensors(light):
        if numel(t) > INLINE_MAX_ELEMENTS:
            assert uses_external_data(t), (name, t.name, numel(t))
        else:
            assert not uses_external_data(t), (name, t.name, numel(t))
    raw = open(path, "rb").read()
    for needle in (REPO.encode(), b"/work/", b"site-packages", b"/tmp/", b"/root/", b"optimum-site"):
        assert needle not in raw, (name, needle)
    if not keep_weights and os.path.exists(data):
        os.remove(data)
    sub = sum(len(g.node) for p, g in graphs(light.graph) if p != "main")
    print(f"    shipped {os.path.relpath(path, REPO)}: {len(light.graph.node)} nodes (+{sub} in subgraphs), "
          f"{len(raw):,} B")
    return light


def session(path: str, profile_prefix: str | None = None) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    if profile_prefix:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_run(path: str, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return session(path).run(None, feeds)


def check_close(what, got, ref, tol=1e-4):
    ref = np.asarray(ref)
    got = np.asarray(got)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    if ref.dtype.kind in "iub":
        assert (got == ref).all(), what
        return 0.0
    d = float(np.max(np.abs(got.astype(np.float64) - ref))) if got.size else 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-6) if ref.size else 1.0
    assert d <= tol * max(scale, 1.0), (what, d, scale)
    return d


def ort_profile_macs(path: str, feeds: dict[str, np.ndarray], work: str):
    """Run the model once in onnxruntime with profiling and no graph optimization; sum the MACs of every
    MatMul / Gemm it executed (main graph and bodies) from the runtime shapes in the profile.
    Returns (macs, {node name: number of executions})."""
    m = onnx.load(path, load_external_data=False)
    nodes, consts = {}, set()
    for _, g in graphs(m.graph):
        consts |= {t.name for t in g.initializer}
        for n in g.node:
            if n.op_type == "Constant":
                consts |= set(n.output)
            if n.op_type in ("MatMul", "Gemm"):
                attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
                assert not attrs.get("transA", 0), (n.name, "transA")
                prev = nodes.setdefault(n.name, (n.op_type, n.input[0] in consts, n.input[1] in consts))
                assert prev == (n.op_type, n.input[0] in consts, n.input[1] in consts), n.name
    prefix = os.path.join(work, "ortprof")
    sess = session(path, prefix)
    sess.run(None, feeds)
    prof = sess.end_profiling()
    events = json.load(open(prof))
    os.remove(prof)
    macs, runs = 0, collections.Counter()
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        op = e["args"].get("op_name")
        if op not in ("MatMul", "Gemm"):
            continue
        name = e["name"][: -len("_kernel_time")]
        _, a_const, b_const = nodes[name]
        shapes = [list(d.values())[0] for d in e["args"]["input_type_shape"]]
        out = list(e["args"]["output_type_shape"][0].values())[0]
        if not a_const:
            k = shapes[0][-1]
        else:  # the profile lists only non-constant inputs: here B, [.., K, N]
            assert op == "MatMul" and not b_const, name
            k = shapes[0][-2]
        macs += int(np.prod(out)) * int(k)
        runs[name] += 1
    return macs, dict(runs)


def control_flow_nodes(m: onnx.ModelProto):
    """(graph path, node) of every If / Loop / Scan, main graph and nested."""
    return [(p, n) for p, g in graphs(m.graph) for n in g.node if n.op_type in CF_OPS]


def require_ops(light, name, ops):
    have = {n.op_type for _, g in graphs(light.graph) for n in g.node}
    missing = [o for o in ops if o not in have]
    assert not missing, (name, missing)


def entry(name, light, *, exporter, source, dims, input_shapes, truth, method, covers, control_flow, ort_macs,
          extra=None):
    cf = control_flow_nodes(light)
    assert len(cf) == len(control_flow), (name, [(p, n.name) for p, n in cf], control_flow)
    for (p, n), c in zip(cf, control_flow):
        assert c["op"] == n.op_type and c["name"] == n.name, (name, c, n.op_type, n.name)
        c["graph"] = p
    e = {
        "file": f"models/corpus/{name}.onnx",
        "family": "control_flow",
        "exporter": exporter,
        "source": source,
        "dims": dims,
        "input_shapes": input_shapes,
        "inputs": io_desc(light),
        "nodes": len(light.graph.node),
        "nodes_in_subgraphs": sum(len(g.node) for p, g in graphs(light.graph) if p != "main"),
        "truth_macs": int(truth),
        "truth_method": method,
        "truth_covers": covers,
        "ort_profile_macs": int(ort_macs),
        "control_flow": control_flow,
        "ops": op_list(light),
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }
    if extra:
        e.update(extra)
    return e


def export_legacy(model, args, path, input_names, output_names, dynamic_axes, opset=17):
    torch.onnx.export(model, args, path, dynamo=False, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


def as_tuple(o):
    return o if isinstance(o, (tuple, list)) else (o,)


def check_scripted(path, model, names, cases):
    """onnxruntime vs the eager module on several input sizes (the bound one first)."""
    for args in cases:
        with torch.no_grad():
            ref = [r.numpy() for r in as_tuple(model(*args))]
        got = ort_run(path, {n: a.numpy() for n, a in zip(names, args)})
        assert len(got) == len(ref)
        diffs = [check_close(path, g, r) for g, r in zip(got, ref)]
        print(f"    onnxruntime vs torch at {[tuple(a.shape) for a in args]}: max |diff| {max(diffs):.3g}")


def ids(shape, vocab, seed):
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int64)


def randn(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


LEGACY = f"torch {TORCH_V} legacy (TorchScript) of torch.jit.script(model), opset 17"


# ----------------------------------------------------------------------------------- scripted torch models
class ScriptLoopRNN(torch.nn.Module):
    """Elman RNN over the sequence with a scripted `for t in range(x.size(1))`, then a Linear head."""

    def __init__(self, feat=32, hidden=64, classes=10):
        super().__init__()
        self.ih = torch.nn.Linear(feat, hidden)
        self.hh = torch.nn.Linear(hidden, hidden, bias=False)
        self.head = torch.nn.Linear(hidden, classes)
        self.hidden = hidden

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden, dtype=x.dtype)
        for t in range(x.size(1)):
            h = torch.tanh(self.ih(x[:, t]) + self.hh(h))
        return self.head(h)


def m_torch_script_loop_legacy(work, keep):
    name = "torch_script_loop_legacy"
    B, T, F, H, C = 2, 24, 32, 64, 10
    seed_everything()
    model = add_noise(ScriptLoopRNN(F, H, C).eval())
    scripted = torch.jit.script(model)
    names, outs = ["x"], ["logits"]
    full = os.path.join(work, name + ".onnx")
    export_legacy(scripted, (randn((3, 7, F), 1),), full, names, outs,
                  {"x": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}})
    test = (randn((B, T, F), 2),)
    check_scripted(full, model, names, [test, (randn((1, 5, F), 3),), (randn((4, 40, F), 4),)])
    truth = torch_macs(lambda: model(*test))
    body = B * (F * H + H * H)
    assert truth == T * body + B * H * C, truth
    ort_macs, runs = ort_profile_macs(full, {"x": test[0].numpy()}, work)
    assert ort_macs == truth, (ort_macs, truth)
    assert runs["/ih/Gemm"] == T and runs["/hh/MatMul"] == T and runs["/head/Gemm"] == 1, runs
    light = ship(full, name, keep)
    require_ops(light, name, ["Loop"])
    cf = [{"op": "Loop", "name": "/Loop", "trips": T,
           "trips_from": ("M input = Gather(Shape(x), 1) (the `sequence` dim; cond input a constant true, "
                          "the body passes it through)"),
           "body_macs": body,
           "body_macs_method": f"batch*(F*H + H*H) = {B}*({F}*{H} + {H}*{H}) (Gemm x_t*W_ih^T + MatMul h*W_hh^T)"}]
    return entry(name, light, exporter=LEGACY,
                 source=(f"ScriptLoopRNN in make_control_flow_torch.py: h = tanh(Linear({F}, {H})(x[:, t]) + "
                         f"Linear({H}, {H}, bias=False)(h)) for t in range(x.size(1)), then Linear({H}, {C}) "
                         "on the last state; torch.jit.script"),
                 dims={"batch": B, "sequence": T}, input_shapes={}, truth=truth,
                 method=(f"torch.utils.flop_counter FLOPs/2 of the eager module at batch {B}, sequence {T} "
                         f"= by hand sequence x batch x (F*H + H*H) + batch*H*C = {T} x {B} x ({F}*{H} + {H}*{H}) "
                         f"+ {B}*{H}*{C}; onnxruntime's profile counts the same (each body Gemm/MatMul ran {T} "
                         "times)"),
                 covers="whole model (Loop body x sequence iterations + the head)", control_flow=cf,
                 ort_macs=ort_macs)


class ScriptWhileRNN(torch.nn.Module):
    """Time-major RNN with a scripted `while i < n` loop, n = x.size(0) (a counter and a bound)."""

    def __init__(self, feat=32, hidden=48):
        super().__init__()
        self.ih = torch.nn.Linear(feat, hidden)
        self.hh = torch.nn.Linear(hidden, hidden)
        self.hidden = hidden

    def forward(self, x):
        h = torch.zeros(x.size(1), self.hidden, dtype=x.dtype)
        n = x.size(0)
        i = 0
        while i < n:
            h = torch.tanh(self.ih(x[i]) + self.hh(h))
            i += 1
        return h


def m_torch_script_while_legacy(work, keep):
    name = "torch_script_while_legacy"
    T, B, F, H = 20, 2, 32, 48
    seed_everything()
    model = add_noise(ScriptWhileRNN(F, H).eval())
    scripted = torch.jit.script(model)
    names, outs = ["x"], ["h"]
    full = os.path.join(work, name + ".onnx")
    export_legacy(scripted, (randn((7, 3, F), 1),), full, names, outs,
                  {"x": {0: "frames", 1: "batch"}, "h": {0: "batch"}})
    test = (randn((T, B, F), 2),)
    check_scripted(full, model, names, [test, (randn((1, 1, F), 3),), (randn((33, 4, F), 4),)])
    truth = torch_macs(lambda: model(*test))
    body = B * (F * H + H * H)
    assert truth == T * body, truth
    ort_macs, runs = ort_profile_macs(full, {"x": test[0].numpy()}, work)
    assert ort_macs == truth, (ort_macs, truth)
    assert sorted(runs.values()) == [T, T], runs
    light = ship(full, name, keep)
    require_ops(light, name, ["Loop", "Less"])
    loop = next(n for n in light.graph.node if n.op_type == "Loop")
    m_const = next(n for n in light.graph.node if n.output[0] == loop.input[0])
    m_val = int(onnx.numpy_helper.to_array(m_const.attribute[0].t))
    cf = [{"op": "Loop", "name": loop.name, "trips": T,
           "trips_from": (f"no usable M (M input is the constant {m_val}); cond input = Less(0, n) and the body "
                          "computes cond = Less(i + 1, n) with the loop-carried counter i (start 0, step 1) and "
                          "n = Gather(Shape(x), 0) from the outer scope (the `frames` dim)"),
           "body_macs": body,
           "body_macs_method": f"batch*(F*H + H*H) = {B}*({F}*{H} + {H}*{H}) (two Gemm)"}]
    return entry(name, light, exporter=LEGACY,
                 source=(f"ScriptWhileRNN in make_control_flow_torch.py: time-major x [frames, batch, {F}]; "
                         f"i = 0; n = x.size(0); while i < n: h = tanh(Linear({F}, {H})(x[i]) + "
                         f"Linear({H}, {H})(h)); i += 1; torch.jit.script"),
                 dims={"frames": T, "batch": B}, input_shapes={}, truth=truth,
                 method=(f"torch.utils.flop_counter FLOPs/2 of the eager module at frames {T}, batch {B} = by hand "
                         f"frames x batch x (F*H + H*H) = {T} x {B} x ({F}*{H} + {H}*{H}); onnxruntime's profile "
                         f"counts the same (each body Gemm ran {T} times)"),
                 covers="whole model (Loop body x frames iterations)", control_flow=cf, ort_macs=ort_macs)


class ScriptShapeIf(torch.nn.Module):
    """A scripted `if x.size(1) > 16:` choosing a wide MLP (long inputs) or one Linear, then a shared head."""

    def __init__(self, feat=32, hidden=64, wide=256, out=8, threshold=16):
        super().__init__()
        self.a1 = torch.nn.Linear(feat, wide)
        self.a2 = torch.nn.Linear(wide, hidden)
        self.b = torch.nn.Linear(feat, hidden)
        self.head = torch.nn.Linear(hidden, out)
        self.threshold = threshold

    def forward(self, x):
        if x.size(1) > self.threshold:
            y = self.a2(torch.relu(self.a1(x)))
        else:
            y = self.b(x)
        return self.head(y)


def m_torch_script_if_legacy(work, keep):
    name = "torch_script_if_legacy"
    B, S, F, H, W, O, THR = 2, 24, 32, 64, 256, 8, 16
    seed_everything()
    model = add_noise(ScriptShapeIf(F, H, W, O, THR).eval())
    scripted = torch.jit.script(model)
    names, outs = ["x"], ["y"]
    full = os.path.join(work, name + ".onnx")
    export_legacy(scripted, (randn((3, 7, F), 1),), full, names, outs,
                  {"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}})
    test = (randn((B, S, F), 2),)
    small = (randn((B, 8, F), 3),)
    check_scripted(full, model, names, [test, small, (randn((1, 17, F), 4),), (randn((3, 16, F), 5),)])
    truth = torch_macs(lambda: model(*test))
    then_m, else_m, head = B * S * (F * W + W * H), B * S * F * H, B * S * H * O
    assert truth == then_m + head, truth
    assert torch_macs(lambda: model(*small)) == B * 8 * (F * H + H * O)
    ort_macs, runs = ort_profile_macs(full, {"x": test[0].numpy()}, work)
    assert ort_macs == truth, (ort_macs, truth)
    light = ship(full, name, keep)
    require_ops(light, name, ["If"])
    node = next(n for n in light.graph.node if n.op_type == "If")
    br = {a.name: sum(1 for n in a.g.node if n.op_type == "MatMul") for a in node.attribute}
    assert br == {"then_branch": 2, "else_branch": 1}, br  # then = the wide MLP (cond true)
    cf = [{"op": "If", "name": node.name, "trips": 1,
           "trips_from": (f"runs one branch once; cond = Cast(Greater(Gather(Shape(x), 1), {THR})) (the "
                          f"`sequence` dim > {THR}): true at sequence {S}, so then_branch"),
           "branch_taken": "then_branch", "body_macs": then_m,
           "branch_macs": {"then_branch": then_m, "else_branch": else_m},
           "body_macs_method": (f"then_branch: batch*sequence*(F*W + W*H) = {B}*{S}*({F}*{W} + {W}*{H}); "
                                f"else_branch: batch*sequence*F*H = {B}*{S}*{F}*{H}")}]
    return entry(name, light, exporter=LEGACY,
                 source=(f"ScriptShapeIf in make_control_flow_torch.py: x [batch, sequence, {F}]; if x.size(1) > "
                         f"{THR}: Linear({W}, {H})(relu(Linear({F}, {W})(x))) else Linear({F}, {H})(x); then "
                         f"Linear({H}, {O}); torch.jit.script"),
                 dims={"batch": B, "sequence": S}, input_shapes={}, truth=truth,
                 method=(f"torch.utils.flop_counter FLOPs/2 of the eager module at batch {B}, sequence {S} (takes "
                         f"the then path) = by hand batch*sequence*(F*W + W*H) + batch*sequence*H*O = "
                         f"{B}*{S}*({F}*{W} + {W}*{H}) + {B}*{S}*{H}*{O}; onnxruntime's profile counts the same"),
                 covers=(f"whole model: the branch taken at sequence {S} (then_branch) + the head; the else "
                         f"branch would cost {else_m:,}"), control_flow=cf, ort_macs=ort_macs)


class GRUCell(torch.nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.ih = torch.nn.Linear(i, 3 * h)
        self.hh = torch.nn.Linear(h, 3 * h)

    def forward(self, x, h):
        i_r, i_z, i_n = self.ih(x).chunk(3, 1)
        h_r, h_z, h_n = self.hh(h).chunk(3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h


class GreedySearch(torch.nn.Module):
    """Greedy decoding: the source tokens' mean embedding initializes the state, then one step per row of
    `step_pos` (learned per-step position vectors given as an input; its length max_len is the number of
    steps): GRU cell on embedding(token) + step_pos[step], Linear to the vocabulary, ArgMax fed back."""

    def __init__(self, vocab=500, hidden=64):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.init = torch.nn.Linear(hidden, hidden)
        self.cell = GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)

    def forward(self, input_ids, step_pos):
        h = torch.tanh(self.init(self.emb(input_ids).mean(1)))
        tok = input_ids[:, -1]
        outs: List[torch.Tensor] = []
        for step in range(step_pos.size(0)):
            h = self.cell(self.emb(tok) + step_pos[step], h)
            tok = self.out(h).argmax(-1)
            outs.append(tok)
        return torch.stack(outs, 1)


def m_torch_greedy_search_loop_legacy(work, keep):
    name = "torch_greedy_search_loop_legacy"
    B, S, L, H, V = 2, 12, 20, 64, 500
    seed_everything()
    model = add_noise(GreedySearch(V, H).eval())
    scripted = torch.jit.script(model)
    names, outs = ["input_ids", "step_pos"], ["tokens"]
    full = os.path.join(work, name + ".onnx")
    export_legacy(scripted, (ids((3, 7), V, 1), randn((9, H), 1)), full, names, outs,
                  {"input_ids": {0: "batch", 1: "sequence"}, "step_pos": {0: "max_len"},
                   "tokens": {0: "batch", 1: "max_len"}})
    test = (ids((B, S), V, 2), randn((L, H), 2))
    check_scripted(full, model, names, [test, (ids((1, 3), V, 3), randn((1, H), 3)),
                                        (ids((4, 30), V, 4), randn((41, H), 4))])
    got = ort_run(full, {"input_ids": test[0].numpy(), "step_pos": test[1].numpy()})[0]
    assert got.shape == (B, L), got.shape  # one token per iteration: the Loop ran max_len times
    truth = torch_macs(lambda: model(*test))
    body = B * (2 * 3 * H * H + H * V)
    assert truth == L * body + B * H * H, truth
    ort_macs, runs = ort_profile_macs(full, {n: a.numpy() for n, a in zip(names, test)}, work)
    assert ort_macs == truth, (ort_macs, truth)
    assert sorted(runs.values()) == [1, L, L, L], runs
    light = ship(full, name, keep)
    require_ops(light, name, ["Loop", "ArgMax", "SequenceInsert", "ConcatFromSequence"])
    loop = next(n for n in light.graph.node if n.op_type == "Loop")
    cf = [{"op": "Loop", "name": loop.name, "trips": L,
           "trips_from": ("M input = Gather(Shape(step_pos), 0) (the `max_len` dim; cond input a constant true); "
                          "the tokens are collected in a loop-carried Sequence (SequenceInsert) and joined by "
                          "ConcatFromSequence after the Loop"),
           "body_macs": body,
           "body_macs_method": (f"batch*(2*3*H*H + H*V) = {B}*(2*3*{H}*{H} + {H}*{V}) (GRU cell input and hidden "
                                f"Gemm {H}->{3 * H}, output Gemm {H}->{V}; Embedding Gather and ArgMax are no MACs)")}]
    return entry(name, light, exporter=LEGACY,
                 source=(f"GreedySearch in make_control_flow_torch.py: Embedding({V}, {H}); state = tanh(Linear({H}, "
                         f"{H})(mean source embedding)); for step in range(step_pos.size(0)): GRU cell (two "
                         f"Linear({H}, {3 * H})) on emb(token) + step_pos[step], Linear({H}, {V}), ArgMax fed back; "
                         "output tokens "
                         "[batch, max_len]; torch.jit.script (the steps stay a Loop, unlike gru_greedy_loop_legacy "
                         "whose constant 16 steps TorchScript unrolls)"),
                 dims={"batch": B, "sequence": S, "max_len": L}, input_shapes={}, truth=truth,
                 method=(f"torch.utils.flop_counter FLOPs/2 of the eager module at batch {B}, sequence {S}, max_len "
                         f"{L} = by hand max_len x batch x (2*3*H*H + H*V) + batch*H*H = {L} x {B} x (2*3*{H}*{H} + "
                         f"{H}*{V}) + {B}*{H}*{H}; onnxruntime's profile counts the same (each body Gemm ran {L} "
                         f"times, output [batch, {L}])"),
                 covers="whole model (Loop body x max_len greedy steps + the state init)", control_flow=cf,
                 ort_macs=ort_macs)


# ------------------------------------------------------------------------------ optimum merged decoders
def hf_versions():
    import optimum.version
    import transformers
    try:
        from importlib.metadata import version
        oo = version("optimum-onnx")
    except Exception:  # the --target folder's dist-info is on sys.path, so this normally works
        oo = "?"
    return transformers.__version__, optimum.version.__version__, oo


def optimum_export(model, work, name):
    """save_pretrained to a scratch folder, main_export from there offline; returns the merged decoder path."""
    from optimum.exporters.onnx import main_export
    src = os.path.join(work, name + "_src")
    out = os.path.join(work, name + "_onnx")
    model.save_pretrained(src)
    main_export(src, output=out, task="text2text-generation-with-past", device="cpu", do_validation=False)
    merged = os.path.join(out, "decoder_model_merged.onnx")
    assert os.path.exists(merged), os.listdir(out)
    return src, merged


def merged_feeds(m, batch, dec_len, past, enc_len, use_cache, heads, head_dim, vocab, d_model, seed):
    """Inputs of an optimum merged seq2seq decoder. With use_cache False the past inputs are dummies of past
    length 0 (as optimum's ORTModelForSeq2SeqLM feeds them on the first step)."""
    g = torch.Generator().manual_seed(seed)
    f = {"input_ids": torch.randint(0, vocab, (batch, dec_len), generator=g),
         "encoder_hidden_states": torch.randn(batch, enc_len, d_model, generator=g),
         "encoder_attention_mask": torch.ones(batch, enc_len, dtype=torch.int64),
         "use_cache_branch": torch.tensor([use_cache])}
    n_layers = sum(1 for i in m.graph.input if i.name.endswith(".decoder.key"))
    past_kv = []
    for i in range(n_layers):
        dk = torch.randn(batch, heads, past if use_cache else 0, head_dim, generator=g)
        dv = torch.randn(batch, heads, past if use_cache else 0, head_dim, generator=g)
        ek = torch.randn(batch, heads, enc_len if use_cache else 0, head_dim, generator=g)
        ev = torch.randn(batch, heads, enc_len if use_cache else 0, head_dim, generator=g)
        f[f"past_key_values.{i}.decoder.key"], f[f"past_key_values.{i}.decoder.value"] = dk, dv
        f[f"past_key_values.{i}.encoder.key"], f[f"past_key_values.{i}.encoder.value"] = ek, ev
        past_kv.append((dk, dv, ek, ev))
    names = {i.name for i in m.graph.input}
    assert names == set(f), (names ^ set(f))
    return f, past_kv


def torch_decoder_call(model, f, past_kv, use_cache):
    """The decoder part of a transformers seq2seq LM as the merged ONNX decoder computes it: logits and presents."""
    from transformers import EncoderDecoderCache
    from transformers.modeling_outputs import BaseModelOutput
    cache = EncoderDecoderCache.from_legacy_cache(tuple(past_kv)) if use_cache else None
    out = model(decoder_input_ids=f["input_ids"], attention_mask=f["encoder_attention_mask"],
                encoder_outputs=BaseModelOutput(last_hidden_state=f["encoder_hidden_states"]),
                past_key_values=cache, use_cache=True, return_dict=True)
    res = [out.logits]
    pkv = out.past_key_values
    for i in range(len(pkv.self_attention_cache.layers)):
        s, c = pkv.self_attention_cache.layers[i], pkv.cross_attention_cache.layers[i]
        res += [s.keys, s.values, c.keys, c.values]
    return res


def check_merged(path, model, m, dims_list, cfgd, tol=1e-4):
    """onnxruntime vs torch for both branches of the merged decoder; returns nothing, asserts."""
    sess = session(path)
    for (batch, dec_len, past, enc_len, use_cache) in dims_list:
        f, past_kv = merged_feeds(m, batch, dec_len, past, enc_len, use_cache, seed=batch * 100 + dec_len + past,
                                  **cfgd)
        with torch.no_grad():
            ref = [r.numpy() for r in torch_decoder_call(model, f, past_kv, use_cache)]
        got = sess.run(None, {k: v.numpy() for k, v in f.items()})
        names = [o.name for o in sess.get_outputs()]
        assert len(got) == len(ref), (len(got), len(ref))
        if use_cache:  # the with-past branch returns dummies for the cross-attention presents (not bound by
            # optimum's runtime, which keeps the encoder K/V of the first step): compare the rest
            keep = [i for i, n in enumerate(names) if ".encoder." not in n]
            got, ref = [got[i] for i in keep], [ref[i] for i in keep]
        d = max(check_close(path, g, r, tol) for g, r in zip(got, ref))
        print(f"    onnxruntime vs torch, use_cache_branch={use_cache}, batch {batch}, decoder {dec_len}, past "
              f"{past}, encoder {enc_len}: max |diff| {d:.3g}")


def merged_entry_parts(light):
    node = light.graph.node[0]
    assert len(light.graph.node) == 1 and node.op_type == "If" and list(node.input) == ["use_cache_branch"], node
    br = {a.name: a.g for a in node.attribute}
    outs = {k: {n for x in g.node for n in x.output} for k, g in br.items()}
    shared = len(outs["then_branch"] & outs["else_branch"])
    return node, br, shared


def m_seq2seq_merged(work, keep, *, name, build, arch, cfg_text, dims, hand):
    """Common part of the optimum merged-decoder models. build() -> (model for export, model for truth);
    hand(batch, dec_len, past, enc_len, use_cache) -> MACs by hand."""
    tv, ov, oov = hf_versions()
    seed_everything()
    model, eager = build()
    src, full = optimum_export(model, work, name)
    m = onnx.load(full, load_external_data=False)
    cfg = model.config
    heads = getattr(cfg, "decoder_attention_heads", None) or cfg.num_heads
    d_model = cfg.d_model
    head_dim = getattr(cfg, "d_kv", None) or d_model // heads
    cfgd = dict(heads=heads, head_dim=head_dim, vocab=cfg.vocab_size, d_model=d_model)
    B, P, E, S = dims["batch"], dims["past"], dims["encoder"], dims["prefill"]
    check_merged(full, model, m, [(B, 1, P, E, True), (B, 1, 0, E, False), (B, S, 0, E, False),
                                  (2, 3, 5, 7, True)], cfgd)
    with torch.no_grad():  # the eager-attention twin computes the same thing
        for uc, dl, p in ((True, 1, P), (False, 1, 0)):
            f, pkv = merged_feeds(m, B, dl, p, E, uc, seed=7, **cfgd)
            a = torch_decoder_call(model, f, pkv, uc)
            f, pkv = merged_feeds(m, B, dl, p, E, uc, seed=7, **cfgd)
            b = torch_decoder_call(eager, f, pkv, uc)
            for x, y in zip(a, b):
                check_close(name + " eager twin", y.numpy(), x.numpy())
    truths, ort_m = {}, {}
    for key, (uc, dl, p) in {"then_branch": (True, 1, P), "else_branch": (False, 1, 0),
                             "else_prefill": (False, S, 0)}.items():
        f, pkv = merged_feeds(m, B, dl, p, E, uc, seed=11, **cfgd)
        truths[key] = torch_macs(lambda: torch_decoder_call(eager, f, pkv, uc))
        assert truths[key] == hand(B, dl, p, E, uc), (key, truths[key], hand(B, dl, p, E, uc))
        ort_m[key], runs = ort_profile_macs(full, {k: v.numpy() for k, v in f.items()}, work)
        assert ort_m[key] == truths[key], (key, ort_m[key], truths[key])
    print(f"    branch MACs: {truths}")
    light = ship(full, name, keep)
    node, br, shared = merged_entry_parts(light)
    assert sum(1 for n in br["then_branch"].node if n.op_type == "MatMul") < \
        sum(1 for n in br["else_branch"].node if n.op_type == "MatMul")  # then = with past: no cross K/V projections
    truth = truths["then_branch"]
    opset = {(d.domain or "ai.onnx"): d.version for d in light.opset_import}["ai.onnx"]
    dim_map = {"batch_size": B, "decoder_sequence_length": 1, "past_decoder_sequence_length": P,
               "encoder_sequence_length": E}
    cf = [{"op": "If", "name": node.name, "trips": 1,
           "trips_from": ("runs one branch once; cond = the graph input use_cache_branch (bool [1]): True -> "
                          "then_branch (decoder with past: self-attention over past + new tokens, cross-attention "
                          "K/V read from the past inputs), False -> else_branch (no past: cross-attention K/V "
                          "projected from encoder_hidden_states, past inputs ignored). Not derivable from shapes"),
           "branch_taken": "then_branch when use_cache_branch = True (the decode step the dims describe)",
           "body_macs": truth,
           "branch_macs": {"then_branch": truths["then_branch"], "else_branch": truths["else_branch"]},
           "branch_nodes": {"then_branch": len(br["then_branch"].node), "else_branch": len(br["else_branch"].node)},
           "tensor_names_in_both_branches": shared,
           "body_macs_method": " ".join(hand.__doc__.split())}]
    larger = max(truths["then_branch"], truths["else_branch"])
    assert larger == truths["else_branch"]
    return entry(name, light,
                 exporter=(f"optimum {ov} / optimum-onnx {oov} main_export(task='text2text-generation-with-past') "
                           f"with transformers {tv}, torch {TORCH_V} legacy exporter underneath, opset {opset}; "
                           "decoder_model_merged.onnx"),
                 source=(f"transformers {arch}({cfg_text}) with random weights (+N(0, 1e-3) noise), saved with "
                         "save_pretrained and exported from that folder offline (HF_HUB_OFFLINE=1); default (sdpa) "
                         "attention"),
                 dims=dim_map, input_shapes={}, truth=truth,
                 method=("torch.utils.flop_counter FLOPs/2 of the torch decoder call (model(decoder_input_ids "
                         f"[{B}, 1], encoder_outputs [{B}, {E}, {d_model}], past_key_values = EncoderDecoderCache "
                         f"with past {P}, "
                         "use_cache=True), eager attention, logits included) = the with-past then_branch at the bound "
                         f"dims = by hand ({' '.join(hand.__doc__.split())}); onnxruntime's profile of the merged "
                         "file with use_cache_branch=True counts the same"),
                 covers=(f"the then_branch (use_cache_branch = True: 1 new token, past {P}, encoder {E}), the decode "
                         f"step the dims describe. use_cache_branch is a graph input: from shapes alone the branch is "
                         f"unknown, the larger branch (else_branch, {larger:,} at these dims) is the honest upper "
                         "bound; fed use_cache_branch=True gives this truth"),
                 control_flow=cf, ort_macs=ort_m["then_branch"],
                 extra={"branch_macs": {"then_branch": truths["then_branch"], "else_branch": truths["else_branch"]},
                        "branch_selector": ("graph input use_cache_branch (bool [1]): then_branch when True, "
                                            "else_branch when False"),
                        "else_branch_prefill": {"dims": {**dim_map, "decoder_sequence_length": S},
                                                "macs": truths["else_prefill"],
                                                "note": (f"the no-past else_branch run on a {S}-token decoder "
                                                         "prefix (flop_counter and onnxruntime's profile agree)")},
                        "ort_profile_macs_by_branch": ort_m})


def bart_build():
    from transformers import BartConfig, BartForConditionalGeneration
    kw = dict(vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
              decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, max_position_embeddings=128,
              dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
    model = add_noise(BartForConditionalGeneration(BartConfig(**kw)).eval())
    eager = BartForConditionalGeneration(BartConfig(**kw, attn_implementation="eager")).eval()
    eager.load_state_dict(model.state_dict())
    return model, eager


def bart_hand(b, s, p, e, use_cache, d=64, f=256, v=1000, layers=2):
    """per layer: self-attention q,k,v,o 4*s*d*d + scores and context 2*s*(p+s)*d; cross-attention q,o 2*s*d*d
    + (no past only) k,v 2*e*d*d + scores and context 2*s*e*d; FFN 2*s*d*f; lm_head s*d*V; times batch
    (d 64, f 256, V 1000, 2 layers)"""
    per = 4 * s * d * d + 2 * s * (p + s) * d + 2 * s * d * d + 2 * s * e * d + 2 * s * d * f
    if not use_cache:
        per += 2 * e * d * d
    return b * (layers * per + s * d * v)


def m_bart_decoder_merged_optimum(work, keep):
    return m_seq2seq_merged(
        work, keep, name="bart_decoder_merged_optimum", build=bart_build, arch="BartForConditionalGeneration",
        cfg_text=("BartConfig(vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, 4 heads, ffn 256, "
                  "max_position_embeddings=128, dropout 0)"),
        dims={"batch": 1, "past": 15, "encoder": 24, "prefill": 8}, hand=bart_hand)


T5_KW = dict(vocab_size=1000, d_model=64, d_kv=8, d_ff=128, num_layers=2, num_decoder_layers=3, num_heads=4,
             relative_attention_num_buckets=32, relative_attention_max_distance=128, dropout_rate=0.0,
             feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0, pad_token_id=0)


def t5_build():
    from transformers import T5Config, T5ForConditionalGeneration
    model = add_noise(T5ForConditionalGeneration(T5Config(**T5_KW)).eval())
    eager = T5ForConditionalGeneration(T5Config(**T5_KW, attn_implementation="eager")).eval()
    eager.load_state_dict(model.state_dict())
    return model, eager


def t5_hand(b, s, p, e, use_cache, d=64, i=32, f=128, v=1000, layers=3):
    """per layer: self-attention q,k,v,o 4*s*d*I + scores and context 2*s*(p+s)*I; cross-attention q,o 2*s*d*I
    + (no past only) k,v 2*e*d*I + scores and context 2*s*e*I; gated-GELU FFN (wi_0, wi_1, wo) 3*s*d*f;
    lm_head s*d*V; times batch (d_model 64, I = 4 heads x d_kv 8 = 32, d_ff 128, V 1000, 3 decoder layers;
    the relative position bias is an Embedding lookup, no MACs)"""
    per = 4 * s * d * i + 2 * s * (p + s) * i + 2 * s * d * i + 2 * s * e * i + 3 * s * d * f
    if not use_cache:
        per += 2 * e * d * i
    return b * (layers * per + s * d * v)


def m_t5_decoder_merged_optimum(work, keep):
    return m_seq2seq_merged(
        work, keep, name="t5_decoder_merged_optimum", build=t5_build, arch="T5ForConditionalGeneration",
        cfg_text=("T5Config(vocab_size=1000, d_model=64, d_kv=8, num_heads=4 (attention width 32), d_ff=128, "
                  "feed_forward_proj='gated-gelu', num_layers=2, num_decoder_layers=3, untied lm_head, "
                  "relative_attention_num_buckets=32, dropout 0), T5 v1.1 / Flan-T5 style"),
        dims={"batch": 2, "past": 31, "encoder": 16, "prefill": 8}, hand=t5_hand)


MODELS = {
    "torch_script_loop_legacy": m_torch_script_loop_legacy,
    "torch_script_while_legacy": m_torch_script_while_legacy,
    "torch_script_if_legacy": m_torch_script_if_legacy,
    "torch_greedy_search_loop_legacy": m_torch_greedy_search_loop_legacy,
    "bart_decoder_merged_optimum": m_bart_decoder_merged_optimum,
    "t5_decoder_merged_optimum": m_t5_decoder_merged_optimum,
}


def versions():
    v = {"python": sys.version.split()[0], "torch": torch.__version__, "onnx": onnx.__version__,
         "onnxruntime": ort.__version__, "numpy": np.__version__}
    try:
        v["transformers"], v["optimum"], v["optimum-onnx"] = hf_versions()
    except ImportError:
        pass
    return v


def write_fixture(entries):
    by_file = {}
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            by_file = {e["file"]: e for e in json.load(f)["models"]}
    by_file.update({e["file"]: e for e in entries})
    doc = {
        "_doc": ("Truth MACs of the PyTorch / Hugging Face optimum control-flow corpus in models/corpus/ (issue 26), "
                 "computed without onnxperf by models/corpus/make_control_flow_torch.py. Analyze each file with "
                 "onnxperf.analyze(file, dims=dims, input_shapes=input_shapes): every graph input is then static. "
                 "truth_macs counts every execution of every Loop body (trips x body MACs) and the If branch taken "
                 "at those dims; control_flow lists each If/Loop/Scan node (graph, name, trips and how they follow, "
                 "body MACs per iteration, branch MACs for If). ort_profile_macs is onnxruntime's own count of "
                 "the MatMul/Gemm it executed (profiler, with weights, before stripping). For the optimum merged "
                 "decoders the branch is chosen by the graph input use_cache_branch: truth_macs is the with-past "
                 "then_branch, branch_macs both branches. ops lists every op type in the file, subgraphs included; "
                 "nodes counts the main graph, nodes_in_subgraphs the rest. Files are shipped without weights "
                 "(tensors > 64 elements are external data that is not committed)."),
        "models": [by_file[k] for k in sorted(by_file)],
    }
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), help="model names (file names without .onnx)")
    ap.add_argument("--keep-weights", action="store_true", help="keep models/corpus/<name>.onnx.data")
    ap.add_argument("--no-fixture", action="store_true", help="do not write tests/fixtures/corpus_cf_torch.json")
    a = ap.parse_args()
    print(json.dumps(versions()))
    torch.set_num_threads(1)
    entries = []
    with tempfile.TemporaryDirectory() as work:
        for n in (a.only or list(MODELS)):
            print(f"== {n}")
            entries.append(MODELS[n](work, a.keep_weights))
            print(f"    truth MACs: {entries[-1]['truth_macs']:,}")
    if not a.no_fixture:
        write_fixture(entries)


if __name__ == "__main__":
    main()
