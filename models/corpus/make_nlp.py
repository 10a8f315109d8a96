#!/usr/bin/env python3
"""NLP / LLM / scikit-learn half of onnxperf's corpus of real ONNX exports (issue 14).

Writes models/corpus/<name>.onnx (weights stripped) and tests/fixtures/corpus_nlp.json (the truth MACs of
each model, computed without onnxperf). The Keras files come from make_keras.py beside this script.

Versions used for the committed files (Python 3.11.7, CPU only, 2 cores):
    torch 2.13.0+cpu  transformers 5.23.0  onnxscript 0.7.2  onnx 1.23.2  onnx-ir 1.1.0
    onnxruntime 1.32.0  scikit-learn 1.9.1  skl2onnx 1.20.0  onnxconverter-common 1.16.0
    sympy 1.14.0  numpy 2.4.6  protobuf 7.36.2

Setup (outside the project's own environment):
    python3.11 -m venv /work/venv-nlp
    /work/venv-nlp/bin/pip install torch==2.13.0 transformers==5.23.0 onnxscript onnx==1.23.2 \
        onnxruntime scikit-learn==1.9.1 skl2onnx==1.20.0 onnxconverter-common sympy
    cd <repo root>
    /work/venv-nlp/bin/python models/corpus/make_nlp.py            # every model + fixture (~4 min)
    /work/venv-nlp/bin/python models/corpus/make_nlp.py --only bert_torch_legacy gpt2_torch_legacy

How each model is made:
  * Every model has random weights (nothing can be downloaded). Before a torch export every float
    parameter and buffer gets N(0, 1e-3) noise (as models/make_torch.py does), so that no two initializers
    are bit-identical and the legacy exporter does not merge them.
  * Hugging Face models are built from small configs with eager attention, dropout 0, and an explicit
    attention_mask input. Dynamic dims are named `batch`, `sequence`, `decoder_sequence`, `past`.
  * Each full model (with weights) is written to a scratch folder, checked with onnx.checker, run once in
    onnxruntime (compared with torch where there is a torch model), then re-saved to models/corpus/ with
    every tensor of more than 64 elements as external data `<name>.onnx.data`, which is then deleted
    (--keep-weights keeps it). Tensors of <= 64 elements stay inline (shape constants).
  * Dynamo exports write each node's Python stack trace (absolute paths) into node metadata
    (`pkg.torch.onnx.stack_trace`); it is removed. The script fails if any absolute path of this machine
    is left in a file.

Truth (fixture field truth_macs), computed independently of onnxperf:
  * torch models: torch.utils.flop_counter.FlopCounterMode total FLOPs / 2 on the same module (eval,
    no_grad) at the bound shapes (flop_counter counts matmul-like aten ops: mm, addmm, bmm, baddbmm,
    convolution, sdpa; every FLOP it counts is 2 per MAC). It does not see inside two fused CPU kernels, so
    there the same module is counted another way and the outputs are checked equal: the sdpa Llama is
    counted with eager attention, the nn.LSTM is recomputed step by step with F.linear. Each torch truth
    also equals a count by hand from the config (asserted for the LSTM and the GRU loop).
  * onnxruntime-fused, quantized and fp16 variants: the truth of their float source at the same shapes.
  * scikit-learn: MACs by hand from the fitted estimator's dims (formula in the fixture entry).

Deterministic: reruns give byte-identical .onnx files and fixture.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import math
import os
import random
import shutil
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from onnx.external_data_helper import _get_all_tensors, uses_external_data
from torch.utils.flop_counter import FlopCounterMode

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "models", "corpus")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_nlp.json")
SEED = 0
NOISE_STD = 1e-3
INLINE_MAX_ELEMENTS = 64
TORCH_V = torch.__version__.split("+")[0]

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


def op_list(m: onnx.ModelProto) -> list[str]:
    """Op types of the main graph, most frequent first; non-default domains as `domain:Op`."""
    c = collections.Counter((f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type)
                            for n in m.graph.node)
    return [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]


def op_hist(m: onnx.ModelProto) -> dict[str, int]:
    c = collections.Counter((f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type)
                            for n in m.graph.node)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def strip_metadata(m: onnx.ModelProto) -> None:
    """Drop dynamo's per-node stack traces (absolute paths) and any doc strings."""
    def walk(g):
        for n in g.node:
            keep = [p for p in n.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
            del n.metadata_props[:]
            n.metadata_props.extend(keep)
            n.doc_string = ""
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    for f in m.functions:
        for n in f.node:
            keep = [p for p in n.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
            del n.metadata_props[:]
            n.metadata_props.extend(keep)
    m.graph.doc_string = ""
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
    """Mark every tensor (initializers and Constant attributes) of more than 64 elements, whatever its dtype,
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
    for needle in (REPO.encode(), b"/work/", b"site-packages", b"/tmp/", b"/root/"):
        assert needle not in raw, (name, needle)
    if not keep_weights and os.path.exists(data):
        os.remove(data)
    print(f"    shipped {os.path.relpath(path, REPO)}: {len(light.graph.node)} nodes, {len(raw):,} B")
    print(f"    ops: {op_hist(light)}")
    return light


def ort_run(path: str, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check_close(name, got, ref, tol=1e-3):
    ref = np.asarray(ref, dtype=np.float32)
    got = np.asarray(got, dtype=np.float32)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    d = float(np.max(np.abs(got - ref))) if got.size else 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-6)
    print(f"    onnxruntime vs reference: max |diff| = {d:.3g} (max |ref| = {scale:.3g})")
    assert d <= tol * max(scale, 1.0), (name, d, scale)
    return d


def entry(name, light, *, family, exporter, source, dims, input_shapes, truth, method, covers, notes=None,
          dims_meaning=None):
    e = {
        "file": f"models/corpus/{name}.onnx",
        "family": family,
        "exporter": exporter,
        "source": source,
        "dims": dims,
        "input_shapes": input_shapes,
        "inputs": io_desc(light),
        "nodes": len(light.graph.node),
        "truth_macs": int(truth),
        "truth_method": method,
        "truth_covers": covers,
        "ops": op_list(light),
        "opsets": {(d.domain or "ai.onnx"): d.version for d in light.opset_import},
    }
    if dims_meaning:
        e["dims_meaning"] = dims_meaning
    if notes:
        e["notes"] = notes
    return e


# ------------------------------------------------------------------------------------------ torch models
BERT_KW = dict(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, intermediate_size=1024,
               vocab_size=30522, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
BERT_SRC = ("transformers BertModel(BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, "
            "intermediate_size=1024, vocab_size=30522)), eager attention, dropout 0; outputs "
            "last_hidden_state, pooler_output")
SEQ = 128


class BertWrapper(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        return out.last_hidden_state, out.pooler_output


def build_bert():
    seed_everything()
    cfg = transformers.BertConfig(**BERT_KW)
    cfg._attn_implementation = "eager"
    return add_noise(BertWrapper(transformers.BertModel(cfg)).eval())


def ids(shape, vocab, seed):
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int64)


def mask(shape, pad=0):
    m = torch.ones(shape, dtype=torch.int64)
    if pad:
        m[:, -pad:] = 0
    return m


def export_legacy(model, args, path, input_names, output_names, dynamic_axes, opset=17):
    torch.onnx.export(model, args, path, dynamo=False, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


def export_dynamo(model, args, path, input_names, output_names, dynamic_shapes, opset=18):
    prog = torch.onnx.export(model, args, dynamo=True, opset_version=opset, input_names=input_names,
                             output_names=output_names, dynamic_shapes=dynamic_shapes, optimize=True,
                             verbose=False)
    prog.save(path, external_data=True)


def feeds_of(names, tensors):
    return {n: t.numpy() for n, t in zip(names, tensors)}


def flat(outs):
    r = []
    for o in outs if isinstance(outs, (tuple, list)) else (outs,):
        if isinstance(o, (tuple, list)):
            r.extend(flat(o))
        else:
            r.append(o)
    return r


def check_torch(path, model, names, test_args, tol=1e-3):
    with torch.no_grad():
        ref = flat(model(*test_args))
    flat_args = flat(test_args)
    got = ort_run(path, feeds_of(names, flat_args))
    assert len(got) == len(ref), (len(got), len(ref))
    for g, r in zip(got, ref):
        check_close(path, g, r.numpy(), tol)


def m_bert_torch_legacy(work, keep, x):
    name = "bert_torch_legacy"
    model = build_bert()
    ex = (ids((2, 16), 30522, 3), mask((2, 16), 3))
    test = (ids((1, SEQ), 30522, 4), mask((1, SEQ), 16))
    names, outs = ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    return [entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17",
                  source=BERT_SRC, dims={"batch": 1, "sequence": SEQ}, input_shapes={}, truth=truth,
                  method=f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ}",
                  covers="whole model (4 layers + pooler)")], {"bert_full": full, "bert_truth": truth,
                                                             "bert_check": (names, test, model)}


def m_bert_torch_dynamo(work, keep, x):
    name = "bert_torch_dynamo18"
    model = build_bert()
    ex = (ids((2, 16), 30522, 3), mask((2, 16), 3))
    test = (ids((1, SEQ), 30522, 4), mask((1, SEQ), 16))
    names, outs = ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]
    B, S = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
    shapes = {"input_ids": {0: B, 1: S}, "attention_mask": {0: B, 1: S}}
    full = os.path.join(work, name + ".onnx")
    export_dynamo(model, ex, full, names, outs, shapes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    return [entry(name, light, family="nlp", exporter=f"torch {TORCH_V} dynamo (torch.export), opset 18",
                  source=BERT_SRC, dims={"batch": 1, "sequence": SEQ}, input_shapes={}, truth=truth,
                  method=f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ}",
                  covers="whole model (4 layers + pooler)")], {}


MODELS = {}  # name -> function(work, keep) -> (entries, extras)


# ------------------------------------------------------------------------------- decoders with KV cache
class DecodeStep(torch.nn.Module):
    """One decode step of a causal LM with a KV cache given as flat tensors.

    Inputs: input_ids [batch, 1], attention_mask [batch, past + 1], past_kv = (key_0, value_0, key_1, ...)
    each [batch, kv_heads, past, head_dim]. Outputs: logits [batch, 1, vocab], then present key/value per
    layer [batch, kv_heads, past + 1, head_dim]. The cache is a transformers DynamicCache built inside.
    """

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask, past_kv):
        n = len(past_kv) // 2
        cache = transformers.DynamicCache(ddp_cache_data=[(past_kv[2 * i], past_kv[2 * i + 1]) for i in range(n)],
                                          config=self.lm.config)
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                      use_cache=True, return_dict=True)
        presents = []
        for layer in out.past_key_values.layers:
            presents += [layer.keys, layer.values]
        return (out.logits, *presents)


def decode_inputs(cfg, batch, past, seed):
    n_kv = cfg.num_key_value_heads
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    g = torch.Generator().manual_seed(seed)
    kv = tuple(torch.randn(batch, n_kv, past, hd, generator=g) for _ in range(2 * cfg.num_hidden_layers))
    return (ids((batch, 1), cfg.vocab_size, seed), mask((batch, past + 1)), kv)


def decode_names(cfg):
    ins = ["input_ids", "attention_mask"]
    outs = ["logits"]
    for i in range(cfg.num_hidden_layers):
        ins += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outs += [f"present.{i}.key", f"present.{i}.value"]
    return ins, outs


def decode_dynamic_shapes(cfg):
    B, P = torch.export.Dim("batch", max=64), torch.export.Dim("past", max=4000)
    return {"input_ids": {0: B}, "attention_mask": {0: B, 1: P + 1},
            "past_kv": tuple({0: B, 2: P} for _ in range(2 * cfg.num_hidden_layers))}


PAST = 127
DECODE_DIMS_MEANING = ("batch = batch size, past = tokens already in the KV cache; the step feeds 1 new token, "
                       "attention_mask is [batch, past + 1], past key/value [batch, kv_heads, past, head_dim]")
QWEN_KW = dict(vocab_size=1000, hidden_size=256, intermediate_size=704, num_hidden_layers=4,
               num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096,
               tie_word_embeddings=False, attention_dropout=0.0)
LLAMA_KW = dict(vocab_size=1000, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096,
                tie_word_embeddings=False, attention_dropout=0.0)


def build_lm(kind, attn="eager"):
    seed_everything()
    if kind == "qwen2":
        cfg = transformers.Qwen2Config(**QWEN_KW)
        cls = transformers.Qwen2ForCausalLM
    elif kind == "llama":
        cfg = transformers.LlamaConfig(**LLAMA_KW)
        cls = transformers.LlamaForCausalLM
    cfg._attn_implementation = attn
    return cfg, add_noise(DecodeStep(cls(cfg)).eval())


def decode_truth(model, cfg):
    test = decode_inputs(cfg, 1, PAST, 5)
    return test, torch_macs(lambda: model(*test))


def m_decode_dynamo(kind, name, opset, attn, source, work, keep, expect_ops=()):
    cfg, model = build_lm(kind, attn)
    ex = decode_inputs(cfg, 2, 16, 6)
    names, outs = decode_names(cfg)
    full = os.path.join(work, name + ".onnx")
    export_dynamo(model, ex, full, names, outs, decode_dynamic_shapes(cfg), opset=opset)
    test, truth = decode_truth(model, cfg)
    check_torch(full, model, names, test)
    method = (f"torch.utils.flop_counter FLOPs/2 of one decode step: batch 1, 1 new token, "
              f"past {PAST} (same DynamicCache contents as the ONNX inputs)")
    if attn != "eager":
        # flop_counter does not count the CPU sdpa kernel (_scaled_dot_product_flash_attention_for_cpu):
        # count the same module with eager attention (same weights, same math, outputs checked equal).
        with torch.no_grad():
            ref = flat(model(*test))
        model.lm.config._attn_implementation = "eager"
        with torch.no_grad():
            eager = flat(model(*test))
        assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(ref, eager))
        sdpa_truth = truth
        _, truth = decode_truth(model, cfg)
        method += (f"; counted with attn_implementation='eager' on the same module, because flop_counter "
                   f"does not count the CPU sdpa kernel ({sdpa_truth:,} MACs with sdpa = without the "
                   f"attention products)")
    light = ship(full, name, keep)
    present = {n.op_type for n in light.graph.node}
    missing = [o for o in expect_ops if o not in present]
    assert not missing, (name, missing)
    dims = [d.dim_param for vi in light.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param]
    print(f"    symbolic input dims: {sorted(set(dims))}")
    e = entry(name, light, family="llm", exporter=f"torch {TORCH_V} dynamo (torch.export), opset {opset}",
              source=source, dims={"batch": 1, "past": PAST}, input_shapes={}, truth=truth, method=method,
              covers="whole decode step (4 layers + lm_head)", dims_meaning=DECODE_DIMS_MEANING)
    return [e], {f"{kind}_full": full, f"{kind}_check": (names, test, model), f"{kind}_entry": e}


def m_qwen2_decode_dynamo18(work, keep, x):
    src = (f"transformers Qwen2ForCausalLM(Qwen2Config({', '.join(f'{k}={v}' for k, v in QWEN_KW.items())})), "
           "eager attention, GQA 8 query / 2 KV heads; one decode step with a DynamicCache (use_cache=True)")
    return m_decode_dynamo("qwen2", "qwen2_decode_dynamo18", 18, "eager", src, work, keep)


def m_llama_decode_dynamo23(work, keep, x):
    src = (f"transformers LlamaForCausalLM(LlamaConfig({', '.join(f'{k}={v}' for k, v in LLAMA_KW.items())})), "
           "sdpa attention, GQA 8 query / 2 KV heads; one decode step with a DynamicCache (use_cache=True)")
    return m_decode_dynamo("llama", "llama_decode_dynamo23", 23, "sdpa", src, work, keep,
                           expect_ops=("Attention", "RotaryEmbedding", "RMSNormalization"))


CHUNK_SEQ, CHUNK_PAST = 32, 96


def chunk_inputs(cfg, batch, seq, past, seed):
    tokens, _, kv = decode_inputs(cfg, batch, past, seed)
    return (ids((batch, seq), cfg.vocab_size, seed), mask((batch, past + seq)), kv)


def m_qwen2_chunk_dynamo18(work, keep, x):
    """Several new tokens on top of a cache (chunked prefill, speculative verification): `sequence`, `past` and
    the mask length `total_sequence` (= past + sequence) are dynamic."""
    name = "qwen2_chunk_dynamo18"
    cfg, model = build_lm("qwen2", "eager")
    ex = chunk_inputs(cfg, 2, 8, 16, 6)
    test = chunk_inputs(cfg, 1, CHUNK_SEQ, CHUNK_PAST, 5)
    names, outs = decode_names(cfg)
    B, S = torch.export.Dim("batch", max=64), torch.export.Dim("sequence", max=512)
    P = torch.export.Dim("past", max=4000)
    # torch.export derives a dim only from one root dim (past + 1, not past + sequence): the mask gets its own
    shapes = {"input_ids": {0: B, 1: S}, "attention_mask": {0: B, 1: torch.export.Dim("total_sequence", max=4512)},
              "past_kv": tuple({0: B, 2: P} for _ in range(2 * cfg.num_hidden_layers))}
    full = os.path.join(work, name + ".onnx")
    export_dynamo(model, ex, full, names, outs, shapes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    dims = sorted({d.dim_param for vi in light.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param})
    print(f"    symbolic input dims: {dims}")
    truth = torch_macs(lambda: model(*test))
    src = (f"transformers Qwen2ForCausalLM(Qwen2Config({', '.join(f'{k}={v}' for k, v in QWEN_KW.items())})), "
           "eager attention, GQA 8 query / 2 KV heads; several new tokens on a DynamicCache (use_cache=True)")
    e = entry(name, light, family="llm", exporter=f"torch {TORCH_V} dynamo (torch.export), opset 18", source=src,
              dims={"batch": 1, "past": CHUNK_PAST, "sequence": CHUNK_SEQ, "total_sequence": CHUNK_PAST + CHUNK_SEQ},
              input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of one step: batch 1, {CHUNK_SEQ} new tokens, past "
                      f"{CHUNK_PAST} (same cache contents as the ONNX inputs)"),
              covers="whole step (4 layers + lm_head)",
              dims_meaning=("batch = batch size, sequence = new tokens in this step, past = tokens already in the "
                            "KV cache, total_sequence = past + sequence (torch.export derives a dim from one root "
                            "dim only, so the mask dim is its own Dim); input_ids [batch, sequence], attention_mask "
                            "[batch, total_sequence], past key/value [batch, 2, past, 32], outputs as the exporter "
                            "names them"))
    return [e], {}


def m_qwen2_decode_dynamo18_fp16(work, keep, x):
    from onnxruntime.transformers.float16 import convert_float_to_float16
    name = "qwen2_decode_dynamo18_fp16"
    src_path = x["qwen2_full"]
    m = onnx.load(src_path)
    del m.graph.value_info[:]
    m16 = convert_float_to_float16(m, keep_io_types=True)
    full = os.path.join(work, name + ".onnx")
    onnx.save_model(m16, full, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=name + ".onnx.data")
    names, test, model = x["qwen2_check"]
    check_torch(full, model, names, test, tol=0.02)
    light = ship(full, name, keep)
    e = entry(name, light, family="llm",
              exporter=(f"qwen2_decode_dynamo18.onnx through onnxruntime {ort.__version__} "
                        "transformers.float16.convert_float_to_float16(keep_io_types=True), graph.value_info "
                        "cleared first"),
              source=x["qwen2_entry"]["source"], dims={"batch": 1, "past": PAST}, input_shapes={},
              truth=x["qwen2_entry"]["truth_macs"],
              method=x["qwen2_entry"]["truth_method"] + " (the float32 source)",
              covers="whole decode step (4 layers + lm_head)", dims_meaning=DECODE_DIMS_MEANING)
    return [e], {}

# ------------------------------------------------------------------------------------------------- GPT-2
GPT2_KW = dict(vocab_size=8000, bos_token_id=0, eos_token_id=0, n_positions=1024, n_embd=256, n_layer=4, n_head=4, resid_pdrop=0.0,
               embd_pdrop=0.0, attn_pdrop=0.0)
GPT2_SRC = (f"transformers GPT2LMHeadModel(GPT2Config({', '.join(f'{k}={v}' for k, v in GPT2_KW.items())})), "
            "eager attention")


class GPT2NoCache(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                       return_dict=True).logits


def build_gpt2(wrapper):
    seed_everything()
    cfg = transformers.GPT2Config(**GPT2_KW)
    cfg._attn_implementation = "eager"
    return cfg, add_noise(wrapper(transformers.GPT2LMHeadModel(cfg)).eval())


def m_gpt2_torch_legacy(work, keep, x):
    name = "gpt2_torch_legacy"
    cfg, model = build_gpt2(GPT2NoCache)
    ex = (ids((2, 16), cfg.vocab_size, 3), mask((2, 16)))
    test = (ids((1, SEQ), cfg.vocab_size, 4), mask((1, SEQ)))
    names, outs = ["input_ids", "attention_mask"], ["logits"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "logits": {0: "batch", 1: "sequence"}}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17",
              source=GPT2_SRC + ", use_cache=False; output logits", dims={"batch": 1, "sequence": SEQ},
              input_shapes={}, truth=truth, method=f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ}",
              covers="whole model (4 layers + lm_head)")
    return [e], {"gpt2_full": full, "gpt2_truth": truth, "gpt2_check": (names, test, model)}


class GPT2Decode(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask, past_kv):
        n = len(past_kv) // 2
        cache = transformers.DynamicCache(ddp_cache_data=[(past_kv[2 * i], past_kv[2 * i + 1]) for i in range(n)],
                                          config=self.lm.config)
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                      use_cache=True, return_dict=True)
        presents = []
        for layer in out.past_key_values.layers:
            presents += [layer.keys, layer.values]
        return (out.logits, *presents)


def gpt2_decode_inputs(cfg, batch, past, seed):
    g = torch.Generator().manual_seed(seed)
    hd = cfg.n_embd // cfg.n_head
    kv = tuple(torch.randn(batch, cfg.n_head, past, hd, generator=g) for _ in range(2 * cfg.n_layer))
    return (ids((batch, 1), cfg.vocab_size, seed), mask((batch, past + 1)), kv)


def m_gpt2_decode_legacy(work, keep, x):
    name = "gpt2_decode_legacy"
    cfg, model = build_gpt2(GPT2Decode)
    ex = gpt2_decode_inputs(cfg, 2, 16, 6)
    test = gpt2_decode_inputs(cfg, 1, PAST, 5)
    names, outs = ["input_ids", "attention_mask"], ["logits"]
    axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total_sequence"},
            "logits": {0: "batch"}}
    for i in range(cfg.n_layer):
        for kv in ("key", "value"):
            names.append(f"past_key_values.{i}.{kv}")
            outs.append(f"present.{i}.{kv}")
            axes[names[-1]] = {0: "batch", 2: "past"}
            axes[outs[-1]] = {0: "batch", 2: "total_sequence"}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    e = entry(name, light, family="llm", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17",
              source=GPT2_SRC + "; one decode step with a DynamicCache (use_cache=True)",
              dims={"batch": 1, "past": PAST, "total_sequence": PAST + 1}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of one decode step: batch 1, 1 new token, past {PAST} "
                      "(same cache contents as the ONNX inputs)"),
              covers="whole decode step (4 layers + lm_head)",
              dims_meaning=("batch = batch size, past = tokens already in the KV cache, total_sequence = past + 1 "
                            "(the legacy exporter cannot name a derived dim: attention_mask [batch, "
                            "total_sequence], present key/value [batch, 4, total_sequence, 64])"))
    return [e], {}


def gpt2_decode_dynamic_shapes(cfg):
    B, P = torch.export.Dim("batch", max=64), torch.export.Dim("past", max=1000)
    return {"input_ids": {0: B}, "attention_mask": {0: B, 1: P + 1},
            "past_kv": tuple({0: B, 2: P} for _ in range(2 * cfg.n_layer))}


def m_gpt2_decode_dynamo18(work, keep, x):
    """The GPT-2 decode step of gpt2_decode_legacy through the dynamo exporter (issue 17: both exporters)."""
    name = "gpt2_decode_dynamo18"
    cfg, model = build_gpt2(GPT2Decode)
    ex = gpt2_decode_inputs(cfg, 2, 16, 6)
    test = gpt2_decode_inputs(cfg, 1, PAST, 5)
    names, outs = ["input_ids", "attention_mask"], ["logits"]
    for i in range(cfg.n_layer):
        names += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outs += [f"present.{i}.key", f"present.{i}.value"]
    full = os.path.join(work, name + ".onnx")
    export_dynamo(model, ex, full, names, outs, gpt2_decode_dynamic_shapes(cfg), opset=18)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    e = entry(name, light, family="llm", exporter=f"torch {TORCH_V} dynamo (torch.export), opset 18",
              source=GPT2_SRC + "; one decode step with a DynamicCache (use_cache=True)",
              dims={"batch": 1, "past": PAST}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of one decode step: batch 1, 1 new token, past {PAST} "
                      "(same cache contents as the ONNX inputs)"),
              covers="whole decode step (4 layers + lm_head)", dims_meaning=DECODE_DIMS_MEANING)
    return [e], {}


def m_llama_decode_legacy(work, keep, x):
    """The Llama decode step of llama_decode_dynamo23 (eager attention) through the legacy exporter
    (issue 17: a GQA model from both exporters)."""
    name = "llama_decode_legacy"
    cfg, model = build_lm("llama", "eager")
    ex = decode_inputs(cfg, 2, 16, 6)
    test = decode_inputs(cfg, 1, PAST, 5)
    names, outs = decode_names(cfg)
    axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total_sequence"},
            "logits": {0: "batch"}}
    for n_in, n_out in zip(names[2:], outs[1:]):
        axes[n_in] = {0: "batch", 2: "past"}
        axes[n_out] = {0: "batch", 2: "total_sequence"}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    src = (f"transformers LlamaForCausalLM(LlamaConfig({', '.join(f'{k}={v}' for k, v in LLAMA_KW.items())})), "
           "eager attention, GQA 8 query / 2 KV heads; one decode step with a DynamicCache (use_cache=True)")
    e = entry(name, light, family="llm", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17", source=src,
              dims={"batch": 1, "past": PAST, "total_sequence": PAST + 1}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of one decode step: batch 1, 1 new token, past {PAST} "
                      "(same cache contents as the ONNX inputs)"),
              covers="whole decode step (4 layers + lm_head)",
              dims_meaning=("batch = batch size, past = tokens already in the KV cache, total_sequence = past + 1 "
                            "(the legacy exporter cannot name a derived dim)"))
    return [e], {}


def genai_build(work: str, model, precision: str) -> str:
    """onnxruntime-genai's model builder on the HF model inside ``model`` (a DecodeStep): the
    checkpoint and a word-level tokenizer (the builder reads one) saved to ``work``, the ONNX
    model built for the CPU. Returns the path of model.onnx (with its .data beside it)."""
    import subprocess

    from tokenizers import Tokenizer, models as tok_models, pre_tokenizers

    hf = os.path.join(work, "genai_hf")
    if not os.path.exists(hf):
        model.lm.save_pretrained(hf)
        vocab = {f"t{i}": i for i in range(model.lm.config.vocab_size)}
        tok = Tokenizer(tok_models.WordLevel(vocab=vocab, unk_token="t0"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", bos_token="t1",
                                             eos_token="t2").save_pretrained(hf)
    out = os.path.join(work, f"genai_{precision}")
    subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-o", out, "-p", precision,
                    "-e", "cpu"], check=True, capture_output=True)
    return os.path.join(out, "model.onnx")


def genai_feeds(cfg, test):
    """The decode step's inputs as the builder names them (keys of every layer, then values)."""
    tokens, attn, kv = test
    feeds = {"input_ids": tokens.numpy(), "attention_mask": attn.numpy()}
    n = cfg.num_hidden_layers
    for i in range(n):
        feeds[f"past_key_values.{i}.key"] = kv[2 * i].numpy()
        feeds[f"past_key_values.{i}.value"] = kv[2 * i + 1].numpy()
    return feeds


def m_llama_genai(precision, work, keep, x):
    """The Llama of llama_decode_dynamo23 through onnxruntime-genai's builder: com.microsoft
    GroupQueryAttention with its past slots, SkipSimplifiedLayerNormalization, rotary caches, and
    (int4) MatMulNBits weight-only quantization (issue 17)."""
    import onnxruntime_genai

    name = f"llama_genai_gqa_{precision}"
    cfg, model = build_lm("llama", "eager")
    full = genai_build(work, model, precision)
    test = decode_inputs(cfg, 1, PAST, 5)
    got = ort_run(full, genai_feeds(cfg, test))
    with torch.no_grad():
        ref = flat(model(*test))
    # the builder's graph runs its own kernels (GroupQueryAttention with its rotary caches): its fp32
    # logits are within a few percent of torch's, not 1e-3 (measured: 0.038 on a scale of 1.11); the
    # int4 weights move them further. The graph's structure, which the analysis reads, is the source's.
    diff = float(np.abs(got[0] - ref[0].numpy()).max())
    scale = float(np.abs(ref[0].numpy()).max())
    assert got[0].shape == tuple(ref[0].shape) and np.isfinite(got[0]).all(), name
    if precision == "fp32":
        assert diff <= 0.05 * max(scale, 1.0), (name, diff, scale)
    print(f"    {precision} logits vs torch: max |diff| = {diff:.3g} (max |ref| = {scale:.3g})")
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    src = (f"transformers LlamaForCausalLM(LlamaConfig({', '.join(f'{k}={v}' for k, v in LLAMA_KW.items())})) "
           f"through onnxruntime-genai {onnxruntime_genai.__version__} models.builder -p {precision} -e cpu")
    e = entry(name, light, family="llm", exporter=f"onnxruntime-genai {onnxruntime_genai.__version__} builder, "
              f"{precision}", source=src,
              dims={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                    "total_sequence_length": PAST + 1, "kv_cache_dim": 32}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of one decode step of the source model (eager attention): "
                      f"batch 1, 1 new token, past {PAST}" + ("; MatMulNBits counts the MACs of the dequantized "
                                                               "weights" if precision == "int4" else "")),
              covers="whole decode step (4 layers + lm_head)",
              dims_meaning=("batch_size = batch size, sequence_length = new tokens, past_sequence_length = tokens "
                            "in the KV cache, total_sequence_length = past + new, kv_cache_dim = head size (32)"))
    return [e], {}


def m_llama_genai_gqa_fp32(work, keep, x):
    return m_llama_genai("fp32", work, keep, x)


def m_llama_genai_gqa_int4(work, keep, x):
    return m_llama_genai("int4", work, keep, x)


# ---------------------------------------------------------------------------------------------------- T5
T5_KW = dict(vocab_size=4096, d_model=256, d_kv=64, d_ff=1024, num_layers=4, num_decoder_layers=4,
             num_heads=4, dropout_rate=0.0, feed_forward_proj="relu", decoder_start_token_id=0)
DEC_SEQ = 32


class T5Wrapper(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                      use_cache=False, return_dict=True)
        return out.logits, out.encoder_last_hidden_state


def m_t5_torch_legacy(work, keep, x):
    name = "t5_torch_legacy"
    seed_everything()
    cfg = transformers.T5Config(**T5_KW)
    cfg._attn_implementation = "eager"
    model = add_noise(T5Wrapper(transformers.T5ForConditionalGeneration(cfg)).eval())
    ex = (ids((2, 24), cfg.vocab_size, 3), mask((2, 24), 2), ids((2, 8), cfg.vocab_size, 7))
    test = (ids((1, SEQ), cfg.vocab_size, 4), mask((1, SEQ), 16), ids((1, DEC_SEQ), cfg.vocab_size, 8))
    names, outs = ["input_ids", "attention_mask", "decoder_input_ids"], ["logits", "encoder_last_hidden_state"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "decoder_input_ids": {0: "batch", 1: "decoder_sequence"},
            "logits": {0: "batch", 1: "decoder_sequence"}, "encoder_last_hidden_state": {0: "batch", 1: "sequence"}}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    src = (f"transformers T5ForConditionalGeneration(T5Config({', '.join(f'{k}={v}' for k, v in T5_KW.items())})), "
           "eager attention, encoder + decoder in one forward (use_cache=False); outputs logits, "
           "encoder_last_hidden_state")
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17", source=src,
              dims={"batch": 1, "sequence": SEQ, "decoder_sequence": DEC_SEQ}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ} (encoder), "
                      f"decoder_sequence {DEC_SEQ}"),
              covers="whole model (encoder 4 layers, decoder 4 layers with cross-attention, tied lm_head)")
    return [e], {}


# ----------------------------------------------------------------------------------------------- Whisper
WHISPER_KW = dict(vocab_size=1000, num_mel_bins=80, d_model=384, encoder_layers=4, decoder_layers=4,
                  encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                  decoder_ffn_dim=1536, max_source_positions=200, max_target_positions=128, dropout=0.0,
                  attention_dropout=0.0, activation_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  decoder_start_token_id=1)
FRAMES = 2 * WHISPER_KW["max_source_positions"]  # the encoder requires exactly this many mel frames


class WhisperWrapper(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_features, decoder_input_ids):
        out = self.lm(input_features=input_features, decoder_input_ids=decoder_input_ids, use_cache=False,
                      return_dict=True)
        return out.logits, out.encoder_last_hidden_state


def m_whisper_dynamo18(work, keep, x):
    name = "whisper_dynamo18"
    seed_everything()
    cfg = transformers.WhisperConfig(**WHISPER_KW)
    cfg._attn_implementation = "eager"
    model = add_noise(WhisperWrapper(transformers.WhisperForConditionalGeneration(cfg)).eval())
    g = torch.Generator().manual_seed(9)
    ex = (torch.randn(2, 80, FRAMES, generator=g), ids((2, 8), cfg.vocab_size, 7))
    test = (torch.randn(1, 80, FRAMES, generator=g), ids((1, DEC_SEQ), cfg.vocab_size, 8))
    names, outs = ["input_features", "decoder_input_ids"], ["logits", "encoder_last_hidden_state"]
    B, D = torch.export.Dim("batch", max=64), torch.export.Dim("decoder_sequence", max=128)
    shapes = {"input_features": {0: B}, "decoder_input_ids": {0: B, 1: D}}
    full = os.path.join(work, name + ".onnx")
    export_dynamo(model, ex, full, names, outs, shapes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    src = (f"transformers WhisperForConditionalGeneration(WhisperConfig({', '.join(f'{k}={v}' for k, v in WHISPER_KW.items())})), "
           "eager attention, encoder (2 Conv1d + 4 layers) + decoder (4 layers) in one forward (use_cache=False); "
           "outputs logits, encoder_last_hidden_state")
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} dynamo (torch.export), opset 18", source=src,
              dims={"batch": 1, "decoder_sequence": DEC_SEQ}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 at batch 1, {FRAMES} mel frames (fixed by the model), "
                      f"decoder_sequence {DEC_SEQ}"),
              covers="whole model (conv front end, encoder, decoder with cross-attention, tied lm_head)")
    return [e], {}


# ------------------------------------------------------------------------------ recurrent models and Loop
class LSTMClassifier(torch.nn.Module):
    """Embedding -> 2-layer bidirectional LSTM -> Linear on the last step (a classic text classifier)."""

    def __init__(self, vocab=5000, emb=128, hidden=256, layers=2, classes=4):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, emb)
        self.lstm = torch.nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(2 * hidden, classes)

    def forward(self, input_ids):
        h, _ = self.lstm(self.emb(input_ids))
        return self.fc(h[:, -1])


def lstm_by_hand_check(model, x):
    """FlopCounter does not see inside the fused CPU LSTM kernel: recompute the same LSTM step by step with
    F.linear (same weights, outputs compared) and count that instead."""
    lstm = model.lstm
    seq = model.emb(x)
    for layer in range(lstm.num_layers):
        outs = []
        for d, sfx in enumerate(("", "_reverse")):
            w_ih, w_hh = getattr(lstm, f"weight_ih_l{layer}{sfx}"), getattr(lstm, f"weight_hh_l{layer}{sfx}")
            b = getattr(lstm, f"bias_ih_l{layer}{sfx}") + getattr(lstm, f"bias_hh_l{layer}{sfx}")
            h = seq.new_zeros(seq.size(0), lstm.hidden_size)
            c = h.clone()
            steps = range(seq.size(1)) if d == 0 else range(seq.size(1) - 1, -1, -1)
            hs = [None] * seq.size(1)
            for t in steps:
                g = torch.nn.functional.linear(seq[:, t], w_ih) + torch.nn.functional.linear(h, w_hh, b)
                i, f, gg, o = g.chunk(4, 1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
                h = torch.sigmoid(o) * torch.tanh(c)
                hs[t] = h
            outs.append(torch.stack(hs, 1))
        seq = torch.cat(outs, 2)
    return model.fc(seq[:, -1])


def m_lstm_classifier_legacy(work, keep, x):
    name = "lstm_classifier_legacy"
    seed_everything()
    model = add_noise(LSTMClassifier().eval())
    ex = (ids((2, 16), 5000, 3),)
    test = (ids((1, SEQ), 5000, 4),)
    names, outs = ["input_ids"], ["logits"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}}
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    require_ops(light, name, ["LSTM"])
    with torch.no_grad():
        ref = model(*test)
        assert torch.allclose(lstm_by_hand_check(model, *test), ref, atol=1e-5)
    truth = torch_macs(lambda: lstm_by_hand_check(model, *test))
    fused = torch_macs(lambda: model(*test))
    T, H, E = SEQ, 256, 128
    formula = T * 2 * 4 * H * (E + H) + T * 2 * 4 * H * (2 * H + H) + 2 * H * 4
    assert truth == formula, (truth, formula)
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17",
              source=("LSTMClassifier in make_nlp.py: Embedding(5000, 128) -> nn.LSTM(128, 256, num_layers=2, "
                      "bidirectional) -> Linear(512, 4) on the last step"),
              dims={"batch": 1, "sequence": SEQ}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of the same LSTM recomputed step by step with F.linear "
                      f"(outputs equal), because flop_counter does not count the fused CPU LSTM kernel (it gives "
                      f"{fused:,}, the Linear only); = by hand sequence*directions*4*hidden*(input+hidden) per "
                      f"layer + 512*4 = {T}*2*4*{H}*({E}+{H}) + {T}*2*4*{H}*({2 * H}+{H}) + {2 * H}*4"),
              covers="whole model")
    return [e], {}


class GRUCellManual(torch.nn.Module):
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


class GreedyGRU(torch.nn.Module):
    """GRU encoder over the input tokens (a loop over the sequence length), then 16 greedy decode steps."""

    def __init__(self, vocab=1000, hidden=256, steps=16):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.enc = GRUCellManual(hidden, hidden)
        self.dec = GRUCellManual(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.steps = steps

    def forward(self, input_ids):
        x = self.emb(input_ids)
        h = torch.zeros(x.size(0), x.size(2), dtype=x.dtype)
        for t in range(x.size(1)):
            h = self.enc(x[:, t], h)
        tok = input_ids[:, -1]
        outs = []
        for _ in range(self.steps):
            h = self.dec(self.emb(tok), h)
            tok = self.out(h).argmax(-1)
            outs.append(tok)
        return torch.stack(outs, 1)


def m_gru_greedy_loop_legacy(work, keep, x):
    name = "gru_greedy_loop_legacy"
    seed_everything()
    model = add_noise(GreedyGRU().eval())
    scripted = torch.jit.script(model)
    ex = (ids((2, 10), 1000, 3),)
    test = (ids((1, SEQ), 1000, 4),)
    names, outs = ["input_ids"], ["tokens"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "tokens": {0: "batch"}}
    full = os.path.join(work, name + ".onnx")
    export_legacy(scripted, ex, full, names, outs, axes)
    got = ort_run(full, feeds_of(names, test))[0]
    with torch.no_grad():
        assert (got == model(*test).numpy()).all()
    light = ship(full, name, keep)
    require_ops(light, name, ["Loop"])
    truth = torch_macs(lambda: model(*test))
    H, V = 256, 1000
    assert truth == SEQ * 2 * 3 * H * H + 16 * (2 * 3 * H * H + H * V), truth
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript) of torch.jit.script(model), opset 17",
              source=("GreedyGRU in make_nlp.py: Embedding(1000, 256), a GRU cell written with two Linear(256, 768) "
                      "run over the input sequence (scripted loop -> ONNX Loop whose trip count is the sequence "
                      "length), then 16 greedy steps of a second GRU cell + Linear(256, 1000) + ArgMax (a constant "
                      "loop: TorchScript unrolls it); output tokens [batch, 16]"),
              dims={"batch": 1, "sequence": SEQ}, input_shapes={}, truth=truth,
              method=(f"torch.utils.flop_counter FLOPs/2 of the eager module at batch 1, sequence {SEQ} (= by hand "
                      f"{SEQ}*2*3*256*256 in the Loop + 16*(2*3*256*256 + 256*1000) unrolled)"),
              covers="whole model (Loop body x sequence iterations)")
    return [e], {}

# ------------------------------------------------------- BERT as transformers 4.x wrote it + ORT variants
class Bert4Layer(torch.nn.Module):
    """One encoder layer written the way transformers 4.x BertLayer was (separate q/k/v Linear,
    view/permute, matmul, scale, additive mask, softmax, matmul), which onnxruntime's BERT fusion knows."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)
        self.attn_out = torch.nn.Linear(hidden, hidden)
        self.attn_ln = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = torch.nn.Linear(hidden, ffn)
        self.output = torch.nn.Linear(ffn, hidden)
        self.out_ln = torch.nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.nn.functional.softmax(scores + ext_mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
        a = self.attn_ln(self.attn_out(ctx) + x)
        h = torch.nn.functional.gelu(self.intermediate(a))
        return self.out_ln(self.output(h) + a)


class Bert4(torch.nn.Module):
    def __init__(self, vocab=30522, hidden=256, layers=4, heads=4, ffn=1024, max_pos=512, types=2):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Embedding(max_pos, hidden)
        self.token_type = torch.nn.Embedding(types, hidden)
        self.emb_ln = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)), persistent=False)
        self.layers = torch.nn.ModuleList(Bert4Layer(hidden, heads, ffn) for _ in range(layers))
        self.pooler = torch.nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.size(1)
        pos = self.position_ids[:, :seq]
        x = self.emb_ln(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)
        ext = (1.0 - ext) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


BERT4_SRC = ("BERT written as transformers 4.x wrote it (Bert4 in make_nlp.py: separate q/k/v Linear, view/permute, "
             "matmul, /sqrt(d), additive (1-mask)*-10000 mask, softmax, matmul; erf GELU; pooler): vocab 30522, "
             "hidden 256, 4 layers, 4 heads, FFN 1024; inputs input_ids, attention_mask, token_type_ids; outputs "
             "last_hidden_state, pooler_output")
BERT4_DIMS = {"batch": 1, "sequence": SEQ}
BERT4_METHOD = f"torch.utils.flop_counter FLOPs/2 of the Bert4 module at batch 1, sequence {SEQ}"


def bert4_inputs(batch, seq, seed, pad):
    return (ids((batch, seq), 30522, seed), mask((batch, seq), pad), ids((batch, seq), 2, seed + 100))


def m_bert4_torch_legacy(work, keep, x):
    name = "bert4_torch_legacy"
    seed_everything()
    model = add_noise(Bert4().eval())
    ex = bert4_inputs(2, 16, 3, 3)
    test = bert4_inputs(1, SEQ, 4, 16)
    names, outs = ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"]
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes.update({"last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}})
    full = os.path.join(work, name + ".onnx")
    export_legacy(model, ex, full, names, outs, axes)
    check_torch(full, model, names, test)
    light = ship(full, name, keep)
    truth = torch_macs(lambda: model(*test))
    e = entry(name, light, family="nlp", exporter=f"torch {TORCH_V} legacy (TorchScript), opset 17",
              source=BERT4_SRC, dims=BERT4_DIMS, input_shapes={}, truth=truth, method=BERT4_METHOD,
              covers="whole model (4 layers + pooler)")
    feeds = feeds_of(names, test)
    return [e], {"bert4_full": full, "bert4_truth": truth, "bert4_feeds": feeds,
                 "bert4_ref": [r.detach().numpy() for r in flat(model(*test))]}


def ort_optimize(src, dst, model_type, num_heads, hidden):
    from onnxruntime.transformers.optimizer import optimize_model
    opt = optimize_model(src, model_type=model_type, num_heads=num_heads, hidden_size=hidden, opt_level=0)
    opt.save_model_to_file(dst, use_external_data_format=True, all_tensors_to_one_file=True)
    return opt


def require_ops(m, name, ops):
    present = {n.op_type for n in m.graph.node}
    missing = [o for o in ops if o not in present]
    assert not missing, (name, missing, sorted(present))


def m_bert4_ort_fused(work, keep, x):
    name = "bert4_ort_fused"
    full = os.path.join(work, name + ".onnx")
    ort_optimize(x["bert4_full"], full, "bert", 4, 256)
    got = ort_run(full, x["bert4_feeds"])
    for g, r in zip(got, x["bert4_ref"]):
        check_close(name, g, r)
    light = ship(full, name, keep)
    require_ops(light, name, ["Attention", "SkipLayerNormalization"])
    assert {"FastGelu", "BiasGelu", "Gelu"} & {n.op_type for n in light.graph.node}
    e = entry(name, light, family="nlp",
              exporter=(f"torch {TORCH_V} legacy opset 17 (bert4_torch_legacy.onnx), then onnxruntime "
                        f"{ort.__version__} transformers.optimizer.optimize_model(model_type='bert', num_heads=4, "
                        "hidden_size=256, opt_level=0)"),
              source=BERT4_SRC, dims=BERT4_DIMS, input_shapes={}, truth=x["bert4_truth"],
              method=BERT4_METHOD + " (the float source; fusion does not change the arithmetic)",
              covers="whole model (4 layers + pooler)")
    return [e], {"bert4_fused": full}


def m_bert4_ort_fused_qdyn(work, keep, x):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    name = "bert4_ort_fused_qdyn"
    full = os.path.join(work, name + ".onnx")
    for p in (full, full + ".data"):
        if os.path.exists(p):
            os.remove(p)
    quantize_dynamic(x["bert4_fused"], full, weight_type=QuantType.QInt8, use_external_data_format=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    got = ort_run(full, x["bert4_feeds"])
    check_close(name, got[0], x["bert4_ref"][0], tol=0.1)
    light = ship(full, name, keep)
    require_ops(light, name, ["QAttention", "DynamicQuantizeLinear", "MatMulInteger"])
    e = entry(name, light, family="nlp",
              exporter=(f"bert4_ort_fused.onnx through onnxruntime {ort.__version__} quantization.quantize_dynamic("
                        "weight_type=QInt8, extra_options={'DefaultTensorType': FLOAT})"),
              source=BERT4_SRC, dims=BERT4_DIMS, input_shapes={}, truth=x["bert4_truth"],
              method=BERT4_METHOD + " (the float source: the int8 graph does the same multiply-accumulates)",
              covers="whole model (4 layers + pooler)")
    return [e], {}


def m_bert4_ort_fused_fp16(work, keep, x):
    from onnxruntime.transformers.float16 import convert_float_to_float16
    name = "bert4_ort_fused_fp16"
    full = os.path.join(work, name + ".onnx")
    m = onnx.load(x["bert4_fused"])
    del m.graph.value_info[:]
    m16 = convert_float_to_float16(m, keep_io_types=True)
    onnx.save_model(m16, full, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=name + ".onnx.data")
    got = ort_run(full, x["bert4_feeds"])
    check_close(name, got[0], x["bert4_ref"][0], tol=0.05)
    light = ship(full, name, keep)
    e = entry(name, light, family="nlp",
              exporter=(f"bert4_ort_fused.onnx through onnxruntime {ort.__version__} "
                        "transformers.float16.convert_float_to_float16(keep_io_types=True), graph.value_info "
                        "cleared first"),
              source=BERT4_SRC, dims=BERT4_DIMS, input_shapes={}, truth=x["bert4_truth"],
              method=BERT4_METHOD + " (the float32 source)", covers="whole model (4 layers + pooler)")
    return [e], {}


def m_gpt2_ort_fused(work, keep, x):
    name = "gpt2_ort_fused"
    full = os.path.join(work, name + ".onnx")
    ort_optimize(x["gpt2_full"], full, "gpt2", 4, 256)
    check_torch(full, x["gpt2_check"][2], x["gpt2_check"][0], x["gpt2_check"][1])
    light = ship(full, name, keep)
    e = entry(name, light, family="nlp",
              exporter=(f"torch {TORCH_V} legacy opset 17 (gpt2_torch_legacy.onnx), then onnxruntime "
                        f"{ort.__version__} transformers.optimizer.optimize_model(model_type='gpt2', num_heads=4, "
                        "hidden_size=256, opt_level=0)"),
              source=GPT2_SRC + ", use_cache=False; output logits", dims={"batch": 1, "sequence": SEQ},
              input_shapes={}, truth=x["gpt2_truth"],
              method=f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ} (the float source)",
              covers="whole model (4 layers + lm_head)")
    return [e], {"gpt2_fused_full": full}


def m_bert_ort_fused(work, keep, x):
    name = "bert_ort_fused"
    full = os.path.join(work, name + ".onnx")
    ort_optimize(x["bert_full"], full, "bert", 4, 256)
    check_torch(full, x["bert_check"][2], x["bert_check"][0], x["bert_check"][1])
    light = ship(full, name, keep)
    require_ops(light, name, ["SkipLayerNormalization"])
    e = entry(name, light, family="nlp",
              exporter=(f"torch {TORCH_V} legacy opset 17 (bert_torch_legacy.onnx), then onnxruntime "
                        f"{ort.__version__} transformers.optimizer.optimize_model(model_type='bert', num_heads=4, "
                        "hidden_size=256, opt_level=0)"),
              source=BERT_SRC, dims={"batch": 1, "sequence": SEQ}, input_shapes={}, truth=x["bert_truth"],
              method=f"torch.utils.flop_counter FLOPs/2 at batch 1, sequence {SEQ} (the float source)",
              covers="whole model (4 layers + pooler)")
    return [e], {}


# ------------------------------------------------------------------------------------------ scikit-learn
SKL_BATCH = 1


def skl_export(pipe, n_features, name, work, keep, X, ref_fn):
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType
    opts = {}
    last = pipe.steps[-1][1]
    if hasattr(last, "predict_proba"):
        opts = {id(last): {"zipmap": False}}
    m = convert_sklearn(pipe, name=name, initial_types=[("input", FloatTensorType([None, n_features]))],
                        target_opset={"": 17, "ai.onnx.ml": 3}, options=opts)
    # skl2onnx leaves the batch dim anonymous: name it on every graph input and output
    for vi in list(m.graph.input) + list(m.graph.output):
        d0 = vi.type.tensor_type.shape.dim[0]
        assert not d0.HasField("dim_value"), vi
        d0.dim_param = "batch"
    full = os.path.join(work, name + ".onnx")
    onnx.checker.check_model(m)
    onnx.save_model(m, full)
    got = ort_run(full, {"input": X[:7].astype(np.float32)})
    for g, r in zip(got, ref_fn(X[:7])):
        check_close(name, np.asarray(g, dtype=np.float32), np.asarray(r, dtype=np.float32), tol=1e-4)
    return ship(full, name, keep)


def skl_versions():
    import sklearn
    import skl2onnx
    return f"scikit-learn {sklearn.__version__}, skl2onnx {skl2onnx.__version__}"


def m_sklearn_scaler_pca_mlp(work, keep, x):
    from sklearn.datasets import make_classification
    from sklearn.decomposition import PCA
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    name = "sklearn_scaler_pca_mlp"
    X, y = make_classification(n_samples=600, n_features=40, n_informative=12, n_classes=5, random_state=0)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=16, random_state=0),
                         MLPClassifier(hidden_layer_sizes=(64, 32), max_iter=300, random_state=0))
    pipe.fit(X, y)
    pca, mlp = pipe[1], pipe[2]
    light = skl_export(pipe, 40, name, work, keep, X, lambda a: [pipe.predict(a), pipe.predict_proba(a)])
    assert light.graph.node[0].op_type == "Scaler", light.graph.node[0].op_type
    n_f, n_c = pca.components_.shape[1], pca.n_components_
    layers = [c.shape for c in mlp.coefs_]
    per_row = n_f * n_c + sum(i * o for i, o in layers)
    formula = (f"per row: PCA n_features*n_components = {n_f}*{n_c}; MLP layers in*out = "
               f"{' + '.join(f'{i}*{o}' for i, o in layers)}; total {per_row} per row x batch {SKL_BATCH} "
               "(StandardScaler, PCA mean subtraction, biases, activations, softmax, argmax are not MACs)")
    e = entry(name, light, family="sklearn", exporter=f"{skl_versions()}, target_opset ai.onnx 17 / ai.onnx.ml 3",
              source=("sklearn make_pipeline(StandardScaler(), PCA(n_components=16), MLPClassifier(hidden_layer_sizes="
                      "(64, 32), relu)) fitted on make_classification(600 samples, 40 features, 5 classes); "
                      "zipmap=False; outputs label, probabilities"),
              dims={"batch": SKL_BATCH}, input_shapes={}, truth=per_row * SKL_BATCH,
              method="by hand from the fitted estimator's dims: " + formula, covers="whole pipeline")
    return [e], {}


def m_sklearn_scaler_logreg(work, keep, x):
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    name = "sklearn_scaler_logreg"
    X, y = make_classification(n_samples=400, n_features=20, n_informative=8, n_classes=3, random_state=1)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500, random_state=0)).fit(X, y)
    lr = pipe[1]
    n_cls, n_f = lr.coef_.shape
    light = skl_export(pipe, 20, name, work, keep, X, lambda a: [pipe.predict(a), pipe.predict_proba(a)])
    formula = f"per row: n_features*n_classes = {n_f}*{n_cls} = {n_f * n_cls} (scaler, intercept, softmax not MACs)"
    e = entry(name, light, family="sklearn", exporter=f"{skl_versions()}, target_opset ai.onnx 17 / ai.onnx.ml 3",
              source=("sklearn make_pipeline(StandardScaler(), LogisticRegression()) fitted on make_classification("
                      "400 samples, 20 features, 3 classes); zipmap=False; outputs label, probabilities"),
              dims={"batch": SKL_BATCH}, input_shapes={}, truth=n_f * n_cls * SKL_BATCH,
              method="by hand from the fitted estimator's dims: " + formula, covers="whole pipeline")
    return [e], {}


def m_sklearn_pca_linreg(work, keep, x):
    from sklearn.datasets import make_regression
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    name = "sklearn_pca_linreg"
    X, y = make_regression(n_samples=400, n_features=30, n_targets=2, random_state=2)
    pipe = make_pipeline(PCA(n_components=10, random_state=0), LinearRegression()).fit(X, y)
    pca, lin = pipe[0], pipe[1]
    n_f, n_c = pca.components_.shape[1], pca.n_components_
    n_t = lin.coef_.shape[0]
    light = skl_export(pipe, 30, name, work, keep, X, lambda a: [pipe.predict(a)])
    per_row = n_f * n_c + n_c * n_t
    formula = (f"per row: PCA n_features*n_components = {n_f}*{n_c}; LinearRegression n_components*n_targets = "
               f"{n_c}*{n_t}; total {per_row} (mean subtraction, intercept not MACs)")
    e = entry(name, light, family="sklearn", exporter=f"{skl_versions()}, target_opset ai.onnx 17 / ai.onnx.ml 3",
              source=("sklearn make_pipeline(PCA(n_components=10), LinearRegression()) fitted on make_regression("
                      "400 samples, 30 features, 2 targets); output variable"),
              dims={"batch": SKL_BATCH}, input_shapes={}, truth=per_row * SKL_BATCH,
              method="by hand from the fitted estimator's dims: " + formula, covers="whole pipeline")
    return [e], {}


# ---------------------------------------------------------------------------------------------- driver
# In order: later entries read what earlier ones left in `x` (full models with weights, truths, feeds).
MODELS = {
    "bert_torch_legacy": m_bert_torch_legacy,
    "bert_torch_dynamo18": m_bert_torch_dynamo,
    "gpt2_torch_legacy": m_gpt2_torch_legacy,
    "t5_torch_legacy": m_t5_torch_legacy,
    "whisper_dynamo18": m_whisper_dynamo18,
    "lstm_classifier_legacy": m_lstm_classifier_legacy,
    "gru_greedy_loop_legacy": m_gru_greedy_loop_legacy,
    "qwen2_decode_dynamo18": m_qwen2_decode_dynamo18,
    "qwen2_decode_dynamo18_fp16": m_qwen2_decode_dynamo18_fp16,
    "qwen2_chunk_dynamo18": m_qwen2_chunk_dynamo18,
    "llama_decode_dynamo23": m_llama_decode_dynamo23,
    "gpt2_decode_legacy": m_gpt2_decode_legacy,
    "gpt2_decode_dynamo18": m_gpt2_decode_dynamo18,
    "llama_decode_legacy": m_llama_decode_legacy,
    "llama_genai_gqa_fp32": m_llama_genai_gqa_fp32,
    "llama_genai_gqa_int4": m_llama_genai_gqa_int4,
    "bert4_torch_legacy": m_bert4_torch_legacy,
    "bert4_ort_fused": m_bert4_ort_fused,
    "bert4_ort_fused_qdyn": m_bert4_ort_fused_qdyn,
    "gpt2_ort_fused": m_gpt2_ort_fused,
    "bert4_ort_fused_fp16": m_bert4_ort_fused_fp16,
    "bert_ort_fused": m_bert_ort_fused,
    "sklearn_scaler_pca_mlp": m_sklearn_scaler_pca_mlp,
    "sklearn_scaler_logreg": m_sklearn_scaler_logreg,
    "sklearn_pca_linreg": m_sklearn_pca_linreg,
}
NEEDS = {"bert4_ort_fused": ["bert4_torch_legacy"], "bert4_ort_fused_qdyn": ["bert4_ort_fused"],
         "bert4_ort_fused_fp16": ["bert4_ort_fused"], "gpt2_ort_fused": ["gpt2_torch_legacy"],
         "bert_ort_fused": ["bert_torch_legacy"], "qwen2_decode_dynamo18_fp16": ["qwen2_decode_dynamo18"]}


def versions():
    import sklearn
    import skl2onnx
    import onnxscript
    return {"python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
            "onnxscript": onnxscript.__version__, "onnx": onnx.__version__, "onnxruntime": ort.__version__,
            "scikit-learn": sklearn.__version__, "skl2onnx": skl2onnx.__version__, "numpy": np.__version__}


def write_fixture(entries: list[dict]) -> None:
    """Merge entries into tests/fixtures/corpus_nlp.json (keyed by file; other files' entries are kept,
    e.g. the Keras ones written by make_keras.py), sorted by file name."""
    old = []
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            old = json.load(f).get("models", [])
    by_file = {e["file"]: e for e in old}
    by_file.update({e["file"]: e for e in entries})
    doc = {
        "_doc": ("Truth MACs of the NLP / LLM / scikit-learn / Keras corpus in models/corpus/ (issue 14), computed "
                 "without onnxperf by models/corpus/make_nlp.py and make_keras.py. Analyze each file with "
                 "onnxperf.analyze(file, dims=dims, input_shapes=input_shapes): every graph input is then static. "
                 "truth_macs is for those dims; truth_method says how it was obtained and truth_covers which part "
                 "of the model it counts. Files are shipped without weights (tensors > 64 elements are external "
                 "data that is not committed)."),
        "models": [by_file[k] for k in sorted(by_file)],
    }
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(doc['models'])} models)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="model names (file names without .onnx); prerequisites are rebuilt")
    ap.add_argument("--keep-weights", action="store_true", help="keep models/corpus/<name>.onnx.data")
    ap.add_argument("--no-fixture", action="store_true", help="do not write tests/fixtures/corpus_nlp.json")
    a = ap.parse_args()
    print(json.dumps(versions()))
    want = list(MODELS) if not a.only else a.only
    todo, seen = [], set()

    def add(n):
        for d in NEEDS.get(n, []):
            add(d)
        if n not in seen:
            seen.add(n)
            todo.append(n)
    for n in want:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(MODELS)}")
        add(n)
    todo.sort(key=list(MODELS).index)
    os.makedirs(OUT_DIR, exist_ok=True)
    entries, x = [], {}
    with tempfile.TemporaryDirectory() as work:
        for n in todo:
            print(f"== {n}")
            es, extra = MODELS[n](work, a.keep_weights, x)
            x.update(extra)
            entries += es
            print(f"    truth MACs: {es[0]['truth_macs']:,}")
    if not a.no_fixture:
        write_fixture(entries)


if __name__ == "__main__":
    main()
