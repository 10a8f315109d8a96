#!/usr/bin/env python3
"""onnxruntime SESSION-optimized transformer graphs for onnxperf's corpus (issue 14): the graphs an
`onnxruntime.InferenceSession` writes to `SessionOptions.optimized_model_filepath`, with com.microsoft
FusedMatMul (attention scores Q·K^T with the 1/sqrt(head_dim) scale folded in as alpha), FusedGemm
(Gemm + Tanh of BERT's pooler), BiasGelu (BERT), FastGelu (GPT-2).

Writes models/corpus/<name>.onnx (weights stripped) and tests/fixtures/corpus_ort.json (truth MACs of each
model, computed without onnxperf).

Versions used for the committed files (Python 3.11.7, CPU only):
    torch 2.13.0+cpu  transformers 5.23.0  onnx 1.23.2  onnxruntime 1.32.0  numpy 2.4.6  protobuf 7.36.2
The venv is the one make_nlp.py documents (/work/venv-nlp, outside the project's own environment):
    python3.11 -m venv /work/venv-nlp
    /work/venv-nlp/bin/pip install torch==2.13.0 transformers==5.23.0 onnx==1.23.2 onnxruntime==1.32.0
    cd <repo root>
    /work/venv-nlp/bin/python models/corpus/make_ort_session.py             # both models + fixture (~20 s)
    /work/venv-nlp/bin/python models/corpus/make_ort_session.py --only bert_ort_session_opt

How each model is made (same conventions as make_nlp.py):
  * Random weights: the transformers model is built from a small config (eager attention, dropout 0) after
    seeding, then every float parameter and buffer gets N(0, 1e-3) noise so that no two initializers are
    bit-identical (the legacy exporter would merge them).
  * Exported with the legacy (TorchScript) exporter, opset 17, explicit attention_mask input, dynamic dims
    `batch` and `sequence` (example inputs at batch 2, sequence 16).
  * The export is loaded in onnxruntime.InferenceSession (CPUExecutionProvider, graph_optimization_level
    ORT_ENABLE_EXTENDED, optimized_model_filepath set), which writes its optimized graph. The script checks
    that onnx.load reads it and that it holds the required com.microsoft fused ops, runs the optimized
    graph in onnxruntime and compares it with torch at batch 1, sequence 128.
  * It is then re-saved to models/corpus/ with every tensor of more than 64 elements as external data
    `<name>.onnx.data`, which is deleted (--keep-weights keeps it); tensors of <= 64 elements stay inline.

Truth (fixture field truth_macs): torch.utils.flop_counter.FlopCounterMode total FLOPs / 2 of the source
module (eval, no_grad) at batch 1, sequence 128. The session-optimized graph does the same multiply-
accumulates (its fusions fold transposes, scales, biases and activations into the matmuls).

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

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from onnx.external_data_helper import _get_all_tensors, set_external_data, uses_external_data
from torch.utils.flop_counter import FlopCounterMode

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_ort.json")
SEED = 0
NOISE_STD = 1e-3
INLINE_MAX_ELEMENTS = 64
SEQ = 128
TORCH_V = torch.__version__.split("+")[0]
OPT_LEVEL = "ORT_ENABLE_EXTENDED"

warnings.filterwarnings("ignore")

# helpers shared with the NLP corpus script (same directory; importing it runs nothing)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_nlp import (export_legacy, ids, io_desc, mask, numel, ort_run, seed_everything,  # noqa: E402
                      torch_macs)



# ----------------------------------------------------------------------------------------------- helpers
def add_noise(model: torch.nn.Module, std: float = NOISE_STD) -> torch.nn.Module:
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for _, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point():
                t.add_(torch.randn(t.shape, generator=g, dtype=t.dtype) * std)
    return model


def op_key(n: onnx.NodeProto) -> str:
    return f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type


def op_list(m: onnx.ModelProto) -> list[str]:
    """Op types of the main graph, most frequent first; non-default domains as `domain:Op`."""
    c = collections.Counter(op_key(n) for n in m.graph.node)
    return [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]


def op_hist(m: onnx.ModelProto) -> dict[str, int]:
    c = collections.Counter(op_key(n) for n in m.graph.node)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def strip_doc(m: onnx.ModelProto) -> None:
    for n in m.graph.node:
        n.doc_string = ""
    m.graph.doc_string = ""
    m.doc_string = ""


def externalize(m: onnx.ModelProto, location: str) -> None:
    """Mark every tensor of more than 64 elements as external data in `location`."""
    from onnx import numpy_helper
    for t in _get_all_tensors(m):
        if numel(t) <= INLINE_MAX_ELEMENTS or uses_external_data(t):
            continue
        if not t.HasField("raw_data"):
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
        set_external_data(t, location)


def ship(full_path: str, name: str, keep_weights: bool) -> onnx.ModelProto:
    """Re-save a full model as models/corpus/<name>.onnx with large tensors external, drop the weights."""
    m = onnx.load(full_path)
    strip_doc(m)
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
    print(f"    shipped {os.path.relpath(path, REPO)}: {len(light.graph.node)} nodes, {len(raw):,} B")
    print(f"    ops: {op_hist(light)}")
    return light


def ort_session_optimize(src: str, dst: str) -> onnx.ModelProto:
    """Let an onnxruntime CPU session optimize `src` at ORT_ENABLE_EXTENDED and write the result to `dst`."""
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPT_LEVEL)
    so.optimized_model_filepath = dst
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    return onnx.load(dst)


def check_close(name, got, ref, tol=1e-3):
    ref = np.asarray(ref, dtype=np.float32)
    got = np.asarray(got, dtype=np.float32)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    d = float(np.max(np.abs(got - ref))) if got.size else 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-6)
    print(f"    onnxruntime vs torch: max |diff| = {d:.3g} (max |ref| = {scale:.3g})")
    assert d <= tol * max(scale, 1.0), (name, d, scale)


def check_torch(path, model, names, test_args, tol=1e-3):
    with torch.no_grad():
        ref = model(*test_args)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    got = ort_run(path, {n: t.numpy() for n, t in zip(names, test_args)})
    assert len(got) == len(ref), (len(got), len(ref))
    for g, r in zip(got, ref):
        check_close(path, g, r.numpy(), tol)


def require_ops(m: onnx.ModelProto, name: str, ops) -> None:
    have = {(n.domain or "", n.op_type) for n in m.graph.node}
    missing = [o for o in ops if o not in have]
    assert not missing, (name, missing, sorted(have))


def entry(name, light, *, exporter, source, truth, method, covers):
    return {
        "file": f"models/corpus/{name}.onnx",
        "family": "nlp",
        "exporter": exporter,
        "source": source,
        "dims": {"batch": 1, "sequence": SEQ},
        "input_shapes": {},
        "inputs": io_desc(light),
        "nodes": len(light.graph.node),
        "truth_macs": int(truth),
        "truth_method": method,
        "truth_covers": covers,
        "ops": op_list(light),
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }


EXPORTER = (f"torch {TORCH_V} legacy (TorchScript) opset 17, then onnxruntime {ort.__version__} "
            f"InferenceSession(CPUExecutionProvider, graph_optimization_level={OPT_LEVEL}, "
            "optimized_model_filepath=...)")
METHOD = (f"torch.utils.flop_counter FLOPs/2 of the source module at batch 1, sequence {SEQ} (the session-"
          "optimized graph does the same multiply-accumulates)")


def make(name, model, names, outs, axes, ex, test, required, work, keep, source, covers):
    src = os.path.join(work, name + "_src.onnx")
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, src, names, outs, axes)
    opt = ort_session_optimize(src, full)
    require_ops(opt, name, required)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    return entry(name, light, exporter=EXPORTER, source=source, truth=truth, method=METHOD, covers=covers)


# -------------------------------------------------------------------------------------------------- BERT
BERT_KW = dict(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, intermediate_size=1024,
               vocab_size=30522, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
BERT_SRC = ("transformers BertModel(BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, "
            "intermediate_size=1024, vocab_size=30522)), eager attention, dropout 0; outputs "
            "last_hidden_state, pooler_output")


class BertWrapper(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        return out.last_hidden_state, out.pooler_output


def m_bert_ort_session_opt(work, keep):
    seed_everything()
    cfg = transformers.BertConfig(**BERT_KW)
    cfg._attn_implementation = "eager"
    model = add_noise(BertWrapper(transformers.BertModel(cfg)).eval())
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}}
    return make("bert_ort_session_opt", model, ["input_ids", "attention_mask"],
                ["last_hidden_state", "pooler_output"], axes,
                ex=(ids((2, 16), 30522, 3), mask((2, 16), 3)), test=(ids((1, SEQ), 30522, 4), mask((1, SEQ), 16)),
                required=[("com.microsoft", "FusedMatMul"), ("com.microsoft", "FusedGemm")],
                work=work, keep=keep, source=BERT_SRC, covers="whole model (4 layers + pooler)")


# ------------------------------------------------------------------------------------------------- GPT-2
GPT2_KW = dict(vocab_size=8000, bos_token_id=0, eos_token_id=0, n_positions=1024, n_embd=256, n_layer=4, n_head=4,
               resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
GPT2_SRC = (f"transformers GPT2LMHeadModel(GPT2Config({', '.join(f'{k}={v}' for k, v in GPT2_KW.items())})), "
            "eager attention, use_cache=False; output logits")


class GPT2NoCache(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                       return_dict=True).logits


def m_gpt2_ort_session_opt(work, keep):
    seed_everything()
    cfg = transformers.GPT2Config(**GPT2_KW)
    cfg._attn_implementation = "eager"
    model = add_noise(GPT2NoCache(transformers.GPT2LMHeadModel(cfg)).eval())
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "logits": {0: "batch", 1: "sequence"}}
    return make("gpt2_ort_session_opt", model, ["input_ids", "attention_mask"], ["logits"], axes,
                ex=(ids((2, 16), cfg.vocab_size, 3), mask((2, 16))),
                test=(ids((1, SEQ), cfg.vocab_size, 4), mask((1, SEQ))),
                required=GPT2_REQUIRED, work=work, keep=keep, source=GPT2_SRC,
                covers="whole model (4 layers + lm_head)")


GPT2_REQUIRED = [("com.microsoft", "FusedMatMul")]

# ---------------------------------------------------------------------------------------------- driver
MODELS = {
    "bert_ort_session_opt": m_bert_ort_session_opt,
    "gpt2_ort_session_opt": m_gpt2_ort_session_opt,
}


def write_fixture(entries: list[dict]) -> None:
    """Merge entries into tests/fixtures/corpus_ort.json (keyed by file), sorted by file name."""
    old = []
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            old = json.load(f).get("models", [])
    by_file = {e["file"]: e for e in old}
    by_file.update({e["file"]: e for e in entries})
    doc = {
        "_doc": ("Truth MACs of the onnxruntime session-optimized graphs in models/corpus/ (issue 14), computed "
                 "without onnxperf by models/corpus/make_ort_session.py. Analyze each file with "
                 "onnxperf.analyze(file, dims=dims, input_shapes=input_shapes): every graph input is then static. "
                 "Files are shipped without weights (tensors > 64 elements are external data that is not "
                 "committed)."),
        "models": [by_file[k] for k in sorted(by_file)],
    }
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="model names (file names without .onnx)")
    ap.add_argument("--keep-weights", action="store_true", help="keep models/corpus/<name>.onnx.data")
    ap.add_argument("--no-fixture", action="store_true", help="do not write tests/fixtures/corpus_ort.json")
    a = ap.parse_args()
    print(json.dumps({"python": sys.version.split()[0], "torch": torch.__version__,
                      "transformers": transformers.__version__, "onnx": onnx.__version__,
                      "onnxruntime": ort.__version__, "numpy": np.__version__}))
    todo = a.only or list(MODELS)
    for n in todo:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(MODELS)}")
    os.makedirs(OUT_DIR, exist_ok=True)
    entries = []
    with tempfile.TemporaryDirectory() as work:
        for n in todo:
            print(f"== {n}")
            e = MODELS[n](work, a.keep_weights)
            entries.append(e)
            print(f"    truth MACs: {e['truth_macs']:,}")
    if not a.no_fixture:
        write_fixture(entries)


if __name__ == "__main__":
    main()
