#!/usr/bin/env python3
"""LLM decode steps for issue 17: onnxruntime-fused decoders, and the config-derived truth of every
decode-step model of the corpus (tests/fixtures/llm_truth.json).

Writes models/corpus/<name>.onnx (weights stripped, as make_nlp.py does) for the files below, and
tests/fixtures/llm_truth.json for every decode-step file of the corpus (the ones make_nlp.py writes too).

    gpt2_decode_ort_fused.onnx      the GPT-2 of gpt2_decode_legacy written as transformers 4.x wrote it
                                    (past_i [2, batch, heads, past, head_dim]), legacy exporter, then
                                    onnxruntime.transformers optimize_model(model_type="gpt2"): com.microsoft
                                    Attention with past / present, SkipLayerNormalization, FastGelu
    llama_genai_mha_fp16.onnx       the Llama of llama_decode_dynamo23 through onnxruntime-genai's builder,
                                    -p fp16 -e cpu: com.microsoft MultiHeadAttention, RotaryEmbedding, fp16
                                    KV cache, a position_ids input
    llama_genai_gqa_int8.onnx       the same, -p int8: MatMulNBits bits 8, block 32, symmetric
    llama_genai_gqa_int4_asym.onnx  the same, -p int4 --extra_options is_symmetric=false block_size=64:
                                    MatMulNBits with uint8 zero points

Versions used (Python 3.11.7, CPU only, 2 cores):
    torch 2.13.0+cpu  transformers 5.23.0  onnxscript 0.7.2  onnx 1.23.2  onnxruntime 1.32.0
    onnxruntime-genai 0.18.0  tokenizers 0.23.3  numpy 2.4.6

Run (from the repo root, with the venv of make_nlp.py plus onnxruntime-genai):
    /work/venv-nlp/bin/pip install onnxruntime-genai==0.18.0
    /work/venv-nlp/bin/python models/corpus/make_llm.py               # every model + the fixture (~1 min)
    /work/venv-nlp/bin/python models/corpus/make_llm.py --only gpt2_decode_ort_fused
    /work/venv-nlp/bin/python models/corpus/make_llm.py --fixture-only   # only tests/fixtures/llm_truth.json

The random-weight models, their configs and the helpers (noise, shipping without weights, onnxruntime
checks) are make_nlp.py's, imported from beside this file, so the weights are those of the corpus twins.
Every model is run in onnxruntime with its weights and compared with the torch source before it is shipped.

The truth in the fixture is derived from the Hugging Face config objects by hand-written formulas (each
formula is kept as a string and evaluated, so string and number cannot drift); nothing comes from onnxperf.
The script cross-checks: parameter counts against torch's own count of the module's parameters, and the
decode MACs against corpus_nlp.json's torch.utils.flop_counter truths. Deterministic: reruns give
byte-identical .onnx files and fixture.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_nlp as mn  # noqa: E402  (the corpus's NLP script: configs, builders, ship, ort_run)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

warnings.filterwarnings("ignore")

REPO = mn.REPO
FIXTURE = os.path.join(REPO, "tests", "fixtures", "llm_truth.json")
NLP_FIXTURE = os.path.join(REPO, "tests", "fixtures", "corpus_nlp.json")
PAST = mn.PAST  # 127: the documented bind of every decode step (context 128)
TORCH_V = torch.__version__.split("+")[0]


# ------------------------------------------------------------------ GPT-2 as transformers 4.x wrote it
class Conv1D4(torch.nn.Module):
    """transformers 4.x Conv1D: view to 2-D, addmm, view back (exports as Reshape, Gemm, Reshape)."""

    def __init__(self, conv):
        super().__init__()
        self.weight = torch.nn.Parameter(conv.weight.detach().clone())  # [in, out]
        self.bias = torch.nn.Parameter(conv.bias.detach().clone())

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention4(torch.nn.Module):
    """GPT2Attention of transformers 4.x with a stacked past [2, batch, heads, past, head_dim]: the graph
    onnxruntime's FusionGptAttention matches (Split of the fused QKV, key transposed before the Concat with
    the past, causal mask sliced from a [1, 1, n_positions, n_positions] tril buffer, Where, additive mask,
    present = stack(key, value))."""

    def __init__(self, hf_attn, n_head, n_positions):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D4(hf_attn.c_attn)
        self.c_proj = Conv1D4(hf_attn.c_proj)
        self.split_size = self.c_proj.weight.shape[0]
        tril = torch.tril(torch.ones(n_positions, n_positions, dtype=torch.bool))
        self.register_buffer("bias", tril.view(1, 1, n_positions, n_positions), persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-10000.0), persistent=False)

    def split_heads(self, x, k=False):
        x = x.view(*(x.size()[:-1] + (self.n_head, x.size(-1) // self.n_head)))
        return x.permute(0, 2, 3, 1) if k else x.permute(0, 2, 1, 3)

    def forward(self, x, layer_past, attention_mask):
        x = self.c_attn(x)
        query, key, value = x.split(self.split_size, dim=2)
        query, key, value = self.split_heads(query), self.split_heads(key, k=True), self.split_heads(value)
        past_key, past_value = layer_past[0].transpose(-2, -1), layer_past[1]
        key = torch.cat((past_key, key), dim=-1)
        value = torch.cat((past_value, value), dim=-2)
        present = torch.stack((key.transpose(-2, -1), value))
        w = torch.matmul(query, key)
        w = w / (float(value.size(-1)) ** 0.5)
        nd, ns = w.size(-2), w.size(-1)
        mask = self.bias[:, :, ns - nd:ns, :ns]
        w = torch.where(mask, w, self.masked_bias.to(w.dtype))
        w = w + attention_mask
        w = torch.nn.functional.softmax(w, dim=-1)
        a = torch.matmul(w, value)
        a = a.permute(0, 2, 1, 3).contiguous()
        a = a.view(*(a.size()[:-2] + (a.size(-2) * a.size(-1),)))
        return self.c_proj(a), present


class Block4(torch.nn.Module):
    def __init__(self, hf_block, n_head, n_positions):
        super().__init__()
        self.ln_1, self.ln_2 = hf_block.ln_1, hf_block.ln_2
        self.attn = Attention4(hf_block.attn, n_head, n_positions)
        self.c_fc = Conv1D4(hf_block.mlp.c_fc)
        self.c_proj = Conv1D4(hf_block.mlp.c_proj)

    def forward(self, x, layer_past, attention_mask):
        a, present = self.attn(self.ln_1(x), layer_past, attention_mask)
        x = x + a
        x = x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))
        return x, present


class GPT2Past4(torch.nn.Module):
    """GPT2LMHeadModel's decode step as transformers 4.x wrote it, on the weights of ``hf`` (a
    transformers 5 GPT2LMHeadModel): inputs input_ids [batch, 1], attention_mask [batch, past + 1],
    past_0..past_{L-1} [2, batch, heads, past, head_dim]; outputs logits, present_0..present_{L-1}."""

    def __init__(self, hf):
        super().__init__()
        cfg = hf.config
        t = hf.transformer
        self.wte, self.wpe, self.ln_f = t.wte, t.wpe, t.ln_f
        self.h = torch.nn.ModuleList(Block4(b, cfg.n_head, cfg.n_positions) for b in t.h)

    def forward(self, input_ids, attention_mask, *past):
        batch, seq = input_ids.size(0), input_ids.size(-1)
        past_length = past[0].size(-2)
        position_ids = torch.arange(past_length, seq + past_length, dtype=torch.long).unsqueeze(0).view(-1, seq)
        am = attention_mask.view(batch, -1)[:, None, None, :]
        am = (1.0 - am.to(dtype=torch.float32)) * -10000.0
        h = self.wte(input_ids) + self.wpe(position_ids)
        presents = []
        for block, layer_past in zip(self.h, past):
            h, present = block(h, layer_past, am)
            presents.append(present)
        h = self.ln_f(h)
        logits = torch.nn.functional.linear(h, self.wte.weight)  # the tied LM head
        return (logits, *presents)


def m_gpt2_decode_ort_fused(work, keep):
    from onnxruntime.transformers.optimizer import optimize_model
    name = "gpt2_decode_ort_fused"
    cfg, hf_step = mn.build_gpt2(mn.GPT2Decode)  # same seed and noise as gpt2_decode_legacy
    model = GPT2Past4(hf_step.lm).eval()
    L = cfg.n_layer

    def stacked(inputs):
        tokens, attn, kv = inputs
        return (tokens, attn, *[torch.stack((kv[2 * i], kv[2 * i + 1])) for i in range(L)])

    ex = stacked(mn.gpt2_decode_inputs(cfg, 2, 16, 6))
    test_hf = mn.gpt2_decode_inputs(cfg, 1, PAST, 5)
    test = stacked(test_hf)
    with torch.no_grad():  # the 4.x-style module is the corpus GPT-2: same logits and cache
        ref_hf = mn.flat(hf_step(*test_hf))
        ref = mn.flat(model(*test))
    assert torch.allclose(ref[0], ref_hf[0], atol=1e-4), float((ref[0] - ref_hf[0]).abs().max())
    for i in range(L):
        assert torch.allclose(ref[1 + i], torch.stack((ref_hf[1 + 2 * i], ref_hf[2 + 2 * i])), atol=1e-5)
    names = ["input_ids", "attention_mask"] + [f"past_{i}" for i in range(L)]
    outs = ["logits"] + [f"present_{i}" for i in range(L)]
    axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total_sequence"}, "logits": {0: "batch"}}
    for i in range(L):
        axes[f"past_{i}"] = {1: "batch", 3: "past"}
        axes[f"present_{i}"] = {1: "batch", 3: "total_sequence"}
    src = os.path.join(work, name + "_src.onnx")
    mn.export_legacy(model, ex, src, names, outs, axes)
    opt = optimize_model(src, model_type="gpt2", num_heads=cfg.n_head, hidden_size=cfg.n_embd, opt_level=0)
    stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    print(f"    fused: {stats}")
    assert stats.get("Attention") == L, stats
    full = os.path.join(work, name + ".onnx")
    opt.save_model_to_file(full, use_external_data_format=True, all_tensors_to_one_file=True)
    got = mn.ort_run(full, mn.feeds_of(names, test))
    for g, r in zip(got, ref):
        mn.check_close(name, g, r.numpy(), 1e-3)
    light = mn.ship(full, name, keep)
    return {"exporter": (f"torch {TORCH_V} legacy (TorchScript), opset 17, of GPT2Past4 (make_llm.py: the corpus "
                         f"GPT-2 written as transformers 4.x wrote it), then onnxruntime {ort.__version__} "
                         f"transformers.optimizer.optimize_model(model_type='gpt2', num_heads={cfg.n_head}, "
                         f"hidden_size={cfg.n_embd}, opt_level=0)"),
            "nodes": len(light.graph.node), "ops": mn.op_hist(light)}


# ------------------------------------------------------------------------- onnxruntime-genai builder
GENAI = {
    "llama_genai_mha_fp16": ("fp16", []),
    "llama_genai_gqa_int8": ("int8", []),
    "llama_genai_gqa_int4_asym": ("int4", ["is_symmetric=false", "block_size=64"]),
}


def genai_hf_dir(work, model):
    """The Llama checkpoint and a word-level tokenizer (the builder reads one), as make_nlp.genai_build."""
    from tokenizers import Tokenizer, models as tok_models, pre_tokenizers
    hf = os.path.join(work, "genai_hf")
    if not os.path.exists(hf):
        model.lm.save_pretrained(hf)
        vocab = {f"t{i}": i for i in range(model.lm.config.vocab_size)}
        tok = Tokenizer(tok_models.WordLevel(vocab=vocab, unk_token="t0"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", bos_token="t1",
                                             eos_token="t2").save_pretrained(hf)
    return hf


def m_genai(name, work, keep):
    import onnxruntime_genai
    precision, extra = GENAI[name]
    cfg, model = mn.build_lm("llama", "eager")  # the Llama of llama_decode_dynamo23 / llama_genai_gqa_*
    hf = genai_hf_dir(work, model)
    out = os.path.join(work, name)
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-o", out, "-p", precision, "-e", "cpu"]
    if extra:
        cmd += ["--extra_options", *extra]
    subprocess.run(cmd, check=True, capture_output=True)
    full = os.path.join(out, "model.onnx")
    test = mn.decode_inputs(cfg, 1, PAST, 5)
    m = onnx.load(full, load_external_data=False)
    in_types = {vi.name: onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type) for vi in m.graph.input}
    feeds = {k: v.astype(in_types[k]) for k, v in mn.genai_feeds(cfg, test).items()}
    if "position_ids" in in_types:  # the fp16 (MultiHeadAttention) graph takes explicit positions
        feeds["position_ids"] = np.array([[PAST]], dtype=np.int64)
    note = None
    try:
        got = mn.ort_run(full, feeds)
    except Exception as e:  # noqa: BLE001 (only the known builder defect is handled; anything else re-raised)
        if "Shape mismatch attempting to re-use buffer" not in str(e):
            raise
        # -p fp16 -e cpu: the builder's value_info declares the MultiHeadAttention graph's repeat_kv Reshape
        # outputs [batch_size, sequence_length, 256] though they hold the whole context (past + new), and
        # onnxruntime's CPU fp16 fallback (inserted Casts) trusts it: drop graph.value_info, as the corpus's
        # fp16 conversions do, and run again.
        m = onnx.load(full)
        bad = [v.name for v in m.graph.value_info if "repeat_kv" in v.name]
        del m.graph.value_info[:]
        full = os.path.join(out, "model_novi.onnx")
        onnx.save_model(m, full, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="model_novi.onnx.data")
        got = mn.ort_run(full, feeds)
        msg = re.search(r"Shape mismatch attempting to re-use buffer\. \{[\d,]+\} != \{[\d,]+\}", str(e)).group(0)
        note = (f"graph.value_info removed: onnxruntime {ort.__version__} refused the builder's file at past "
                f"{PAST} ({msg.strip()}), because value_info declared {len(bad)} repeat_kv tensors with "
                "sequence_length where they hold the whole context")
        print(f"    {note}")
    with torch.no_grad():
        ref = mn.flat(model(*test))
    diff = float(np.abs(got[0].astype(np.float32) - ref[0].numpy()).max())
    scale = float(np.abs(ref[0].numpy()).max())
    assert got[0].shape == tuple(ref[0].shape) and np.isfinite(got[0].astype(np.float32)).all(), name
    # fp32 of this builder is within 0.038 of torch (make_nlp.py); fp16 / int8 must stay close, int4 only finite
    bound = {"fp16": 0.1, "int8": 0.2}.get(precision)
    if bound is not None:
        assert diff <= bound * max(scale, 1.0), (name, diff, scale)
    print(f"    {precision} logits vs torch: max |diff| = {diff:.3g} (max |ref| = {scale:.3g})")
    light = mn.ship(full, name, keep)
    return {"exporter": (f"onnxruntime-genai {onnxruntime_genai.__version__} models.builder -p {precision} -e cpu"
                         + (f" --extra_options {' '.join(extra)}" if extra else "")),
            "nodes": len(light.graph.node), "ops": mn.op_hist(light),
            "logits_vs_torch": f"max |diff| {diff:.3g} on max |logit| {scale:.3g}", "note": note}


MODELS = {"gpt2_decode_ort_fused": m_gpt2_decode_ort_fused,
          **{n: (lambda work, keep, n=n: m_genai(n, work, keep)) for n in GENAI}}


# -------------------------------------------------------------------------------------- config truth
def formula(expr: str, env: dict) -> dict:
    """A formula kept as its source string and its value, evaluated on config-derived names."""
    value = eval(expr, {"__builtins__": {}, "ceil": math.ceil, "sum": sum, **env})  # noqa: S307 (our own strings)
    assert value == int(value), (expr, value)
    return {"formula": expr, "value": int(value)}


def arch_of(cfg) -> dict:
    """The dims of a decoder read from its Hugging Face config (what every formula below uses)."""
    if isinstance(cfg, transformers.GPT2Config):
        return {"family": "gpt2", "n_layers": cfg.n_layer, "hidden": cfg.n_embd, "n_q_heads": cfg.n_head,
                "n_kv_heads": cfg.n_head, "head_dim": cfg.n_embd // cfg.n_head,
                "intermediate": cfg.n_inner or 4 * cfg.n_embd, "vocab": cfg.vocab_size,
                "max_positions": cfg.n_positions, "tied_embeddings": bool(cfg.tie_word_embeddings),
                "mlp": "c_fc + gelu_new + c_proj (2 linears, biased)", "norm": "LayerNorm (weight + bias)",
                "positions": "learned wpe [max_positions, hidden]", "qkv_bias": True}
    qkv_bias = isinstance(cfg, transformers.Qwen2Config) or bool(getattr(cfg, "attention_bias", False))
    return {"family": cfg.model_type, "n_layers": cfg.num_hidden_layers, "hidden": cfg.hidden_size,
            "n_q_heads": cfg.num_attention_heads, "n_kv_heads": cfg.num_key_value_heads,
            "head_dim": getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads,
            "intermediate": cfg.intermediate_size, "vocab": cfg.vocab_size,
            "max_positions": cfg.max_position_embeddings, "tied_embeddings": bool(cfg.tie_word_embeddings),
            "mlp": "gate_proj, up_proj, SiLU, down_proj (3 linears, no bias)", "norm": "RMSNorm (weight only)",
            "positions": "RoPE (no parameters)", "qkv_bias": qkv_bias}


def param_formula(a: dict) -> str:
    if a["family"] == "gpt2":
        per_layer = ("2 * 2 * hidden + hidden * 3 * hidden + 3 * hidden + hidden * hidden + hidden"
                     " + hidden * intermediate + intermediate + intermediate * hidden + hidden")
        s = f"vocab * hidden + max_positions * hidden + n_layers * ({per_layer}) + 2 * hidden"
        return s + ("" if a["tied_embeddings"] else " + hidden * vocab")
    bias = " + n_q_heads * head_dim + 2 * n_kv_heads * head_dim" if a["qkv_bias"] else ""
    per_layer = ("hidden * n_q_heads * head_dim + 2 * hidden * n_kv_heads * head_dim + n_q_heads * head_dim * hidden"
                 f"{bias} + 3 * hidden * intermediate + 2 * hidden")
    s = f"vocab * hidden + n_layers * ({per_layer}) + hidden"
    return s + ("" if a["tied_embeddings"] else " + hidden * vocab")


def linear_macs_formula(a: dict) -> str:
    """Multiply-accumulates of the linear layers per token (in * out each, LM head included)."""
    if a["family"] == "gpt2":
        return "n_layers * (hidden * 3 * hidden + hidden * hidden + 2 * hidden * intermediate) + hidden * vocab"
    return ("n_layers * (hidden * (n_q_heads + 2 * n_kv_heads) * head_dim + n_q_heads * head_dim * hidden"
            " + 3 * hidden * intermediate) + hidden * vocab")


def quant_linears(a: dict) -> list[tuple[str, int, int, int]]:
    """(name, K = in, N = out, count) of the MatMuls onnxruntime-genai quantizes (q, k, v fused into one
    qkv_proj; the embedding Gather stays float)."""
    L, h, hd = a["n_layers"], a["hidden"], a["head_dim"]
    q, kv, i = a["n_q_heads"] * hd, a["n_kv_heads"] * hd, a["intermediate"]
    return [("qkv_proj", h, q + 2 * kv, L), ("o_proj", q, h, L), ("gate_proj", h, i, L), ("up_proj", h, i, L),
            ("down_proj", i, h, L), ("lm_head", h, a["vocab"], 1)]


CONFIGS = {"gpt2": lambda: transformers.GPT2Config(**mn.GPT2_KW),
           "llama": lambda: transformers.LlamaConfig(**mn.LLAMA_KW),
           "qwen2": lambda: transformers.Qwen2Config(**mn.QWEN_KW)}
CONFIG_SRC = {"gpt2": ("transformers.GPT2Config(**make_nlp.GPT2_KW)", mn.GPT2_KW),
              "llama": ("transformers.LlamaConfig(**make_nlp.LLAMA_KW)", mn.LLAMA_KW),
              "qwen2": ("transformers.Qwen2Config(**make_nlp.QWEN_KW)", mn.QWEN_KW)}

STD = ["batch", "kv_heads", "past", "head_dim"]
SEP = "separate key and value per layer"


def cache_names(n_layers, key_fmt, value_fmt):
    names = []
    for i in range(n_layers):
        names += [key_fmt.format(i=i), value_fmt.format(i=i)]
    return names


# What each decode-step file is: its config, exporter, how the KV cache and dims are named, dtypes, and
# which non-parameter tensors it stores (all from make_nlp.py / this script and the exporters' documented
# behaviour; the test checks them against the files).
def decode_models() -> dict:
    hf_in = "past_key_values.{i}.key", "past_key_values.{i}.value"
    hf_out = "present.{i}.key", "present.{i}.value"
    dyn = {"batch": "batch", "new_tokens": 1, "past": "past", "total": "past + 1"}
    leg = {"batch": "batch", "new_tokens": 1, "past": "past", "total": "total_sequence"}
    genai = {"batch": "batch_size", "new_tokens": "sequence_length", "past": "past_sequence_length",
             "total": "total_sequence_length", "head_dim": "kv_cache_dim"}
    rope = {"inv_freq": "head_dim // 2"}  # rotary_emb.inv_freq, a float buffer the dynamo exporter keeps
    caches = {"cos_cache": "max_positions * head_dim // 2", "sin_cache": "max_positions * head_dim // 2"}
    base = dict(cache=(hf_in, hf_out), layout=STD, cache_kind=SEP, kv_dtype="float32", weight_dtype="float32",
                quant=None, extra_float=None, extra_note="", dup_head=False, bind={"batch": 1, "past": PAST},
                new_tokens=1)
    return {
        "gpt2_decode_legacy": dict(base, cfg="gpt2", made_by="make_nlp.py", roles=leg, dup_head=True,
                                   bind={"batch": 1, "past": PAST, "total_sequence": PAST + 1}),
        "gpt2_decode_dynamo18": dict(base, cfg="gpt2", made_by="make_nlp.py", roles=dyn),
        "gpt2_decode_ort_fused": dict(base, cfg="gpt2", made_by="make_llm.py", roles=leg, dup_head=True,
                                      cache=("past_{i}", "present_{i}"),
                                      layout=["2 (key, value)", "batch", "kv_heads", "past", "head_dim"],
                                      cache_kind="one stacked [key, value] tensor per layer (com.microsoft "
                                                 "Attention past / present)",
                                      bind={"batch": 1, "past": PAST, "total_sequence": PAST + 1}),
        "llama_decode_legacy": dict(base, cfg="llama", made_by="make_nlp.py", roles=leg,
                                    bind={"batch": 1, "past": PAST, "total_sequence": PAST + 1}),
        "llama_decode_dynamo23": dict(base, cfg="llama", made_by="make_nlp.py", roles=dyn, extra_float=rope),
        "qwen2_decode_dynamo18": dict(base, cfg="qwen2", made_by="make_nlp.py", roles=dyn, extra_float=rope),
        "qwen2_decode_dynamo18_fp16": dict(base, cfg="qwen2", made_by="make_nlp.py", roles=dyn, extra_float=rope,
                                           weight_dtype="float16",
                                           extra_note="keep_io_types: the KV-cache inputs and outputs stay "
                                                      "float32 (Cast inside), the weights are float16"),
        "qwen2_chunk_dynamo18": dict(base, cfg="qwen2", made_by="make_nlp.py", extra_float=rope,
                                     roles={"batch": "batch", "new_tokens": "sequence", "past": "past",
                                            "total": "total_sequence"},
                                     bind={"batch": 1, "past": 96, "sequence": 32, "total_sequence": 128},
                                     new_tokens=32),
        "llama_genai_gqa_fp32": dict(base, cfg="llama", made_by="make_nlp.py", roles=genai, extra_float=caches,
                                     bind={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                                           "total_sequence_length": PAST + 1, "kv_cache_dim": 32}),
        "llama_genai_gqa_int4": dict(base, cfg="llama", made_by="make_nlp.py", roles=genai, extra_float=caches,
                                     quant={"bits": 4, "block_size": 32, "symmetric": True},
                                     bind={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                                           "total_sequence_length": PAST + 1, "kv_cache_dim": 32}),
        "llama_genai_gqa_int8": dict(base, cfg="llama", made_by="make_llm.py", roles=genai, extra_float=caches,
                                     quant={"bits": 8, "block_size": 32, "symmetric": True},
                                     bind={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                                           "total_sequence_length": PAST + 1, "kv_cache_dim": 32}),
        "llama_genai_gqa_int4_asym": dict(base, cfg="llama", made_by="make_llm.py", roles=genai,
                                          extra_float=caches, quant={"bits": 4, "block_size": 64, "symmetric": False},
                                          bind={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                                                "total_sequence_length": PAST + 1, "kv_cache_dim": 32}),
        "llama_genai_mha_fp16": dict(base, cfg="llama", made_by="make_llm.py", roles=genai, extra_float=caches,
                                     kv_dtype="float16", weight_dtype="float16",
                                     bind={"batch_size": 1, "sequence_length": 1, "past_sequence_length": PAST,
                                           "total_sequence_length": PAST + 1, "kv_cache_dim": 32}),
    }


BYTES = {"float32": 4, "float16": 2}


def truth_entry(name: str, d: dict, made: dict, nlp_truth: dict) -> dict:
    cfg = CONFIGS[d["cfg"]]()
    a = arch_of(cfg)
    env = {k: v for k, v in a.items() if isinstance(v, int) and not isinstance(v, bool)}
    env["kv_bytes"] = BYTES[d["kv_dtype"]]
    env["weight_bytes"] = BYTES[d["weight_dtype"]]

    # parameters by hand, checked against torch's own count of the same architecture
    params = formula(param_formula(a), env)
    torch.manual_seed(0)
    lm = {"gpt2": transformers.GPT2LMHeadModel, "llama": transformers.LlamaForCausalLM,
          "qwen2": transformers.Qwen2ForCausalLM}[d["cfg"]](cfg)
    n_torch = sum(p.numel() for p in lm.parameters())  # unique tensors: a tied head counted once
    assert params["value"] == n_torch, (name, params, n_torch)
    env["params"] = params["value"]

    # KV cache
    kv = formula("2 * n_layers * n_kv_heads * head_dim * kv_bytes", env)
    cin, cout = d["cache"]
    if d["cache_kind"] == SEP:
        ins, outs = cache_names(a["n_layers"], *cin), cache_names(a["n_layers"], *cout)
    else:
        ins = [cin.format(i=i) for i in range(a["n_layers"])]
        outs = [cout.format(i=i) for i in range(a["n_layers"])]
    roles = dict(d["roles"])
    head_dim_name = roles.pop("head_dim", None)

    # decode MACs at the bind: weight matmuls per token x new tokens, attention over the whole context
    env["new_tokens"] = d["new_tokens"]
    env["past"] = d["bind"].get("past", d["bind"].get("past_sequence_length"))
    env["context"] = env["past"] + env["new_tokens"]
    lin = formula(linear_macs_formula(a), env)
    env["linear_per_token"] = lin["value"]
    w_macs = formula("new_tokens * linear_per_token", env)
    att = formula("2 * n_layers * n_q_heads * head_dim * new_tokens * context", env)
    total = w_macs["value"] + att["value"]
    src_truth = nlp_truth.get(f"models/corpus/{name}.onnx") or nlp_truth.get(
        {"gpt2_decode_ort_fused": "models/corpus/gpt2_decode_legacy.onnx"}.get(
            name, "models/corpus/llama_decode_legacy.onnx"))
    assert total == src_truth, (name, total, src_truth)

    # what the file stores: float elements and packed uint8 elements of its initializers
    extra = d["extra_float"] or {}
    extra_f = {k: formula(v, env) for k, v in extra.items()}
    stored = {"param_count_stored": formula("params + hidden * vocab" if d["dup_head"] else "params", env)}
    env["param_count_stored"] = stored["param_count_stored"]["value"]
    if d["quant"]:
        q = d["quant"]
        env.update(bits=q["bits"], block_size=q["block_size"])
        lins = quant_linears(a)
        env["qlinears"] = [(k_, n_, c_) for _, k_, n_, c_ in lins]
        qw = formula("sum(c * K * N for K, N, c in qlinears)", env)
        env["quantized_weights"] = qw["value"]
        packed = formula("sum(c * N * ceil(K / block_size) * block_size * bits // 8 for K, N, c in qlinears)", env)
        scales = formula("sum(c * N * ceil(K / block_size) for K, N, c in qlinears)", env)
        zps = (formula("0", env) if q["symmetric"] else
               formula("sum(c * N * ceil(ceil(K / block_size) * bits / 8) for K, N, c in qlinears)", env))
        env.update(packed=packed["value"], scales=scales["value"], zero_points=zps["value"])
        pbytes = formula("(params - quantized_weights) * weight_bytes + packed + scales * weight_bytes + zero_points",
                         env)
        quant = {"op": "com.microsoft MatMulNBits", "bits": q["bits"], "block_size": q["block_size"],
                 "symmetric": q["symmetric"], "scale_dtype": d["weight_dtype"],
                 "quantized_linears": [{"name": n_, "K": k_, "N": n2, "count": c_} for n_, k_, n2, c_ in lins],
                 "quantized_weight_elements": qw, "packed_uint8_elements": packed, "scale_elements": scales,
                 "zero_point_uint8_elements": zps,
                 "packing": ("per linear (K in, N out): B uint8 [N, ceil(K / block_size), block_size * bits / 8], "
                             "scales [N, ceil(K / block_size)] in the activation dtype, zero_points (asymmetric "
                             "only) uint8 [N, ceil(ceil(K / block_size) * bits / 8)]; the embedding Gather "
                             "stays float")}
        float_elems = formula("params - quantized_weights + scales" +
                              "".join(f" + {v}" for v in extra.values()), env)
        uint8_elems = formula("packed + zero_points", env)
    else:
        quant = None
        pbytes = formula("params * weight_bytes", env)
        float_elems = formula("param_count_stored" + "".join(f" + {v}" for v in extra.values()),
                              env)
        uint8_elems = formula("0", env)
    stored["param_bytes_stored"] = pbytes if d["quant"] else formula("param_count_stored * weight_bytes", env)

    light = onnx.load(os.path.join(mn.OUT_DIR, name + ".onnx"), load_external_data=False)
    nodes = len(light.graph.node)
    attn_ops = sorted({(n.domain or "ai.onnx") + ":" + n.op_type for n in light.graph.node
                       if n.op_type in ("Attention", "MultiHeadAttention", "GroupQueryAttention")})
    return {
        "file": f"models/corpus/{name}.onnx",
        "made_by": f"models/corpus/{d['made_by']}",
        "exporter": made.get("exporter") or nlp_entry_exporter(name),
        "export_note": made.get("note"),
        "config_source": f"{CONFIG_SRC[d['cfg']][0]} with {json.dumps(CONFIG_SRC[d['cfg']][1], sort_keys=True)}",
        "derived": ("from the config object by the formulas below (make_llm.py), not from onnxperf; parameter "
                    "count also equal to torch's sum(p.numel() for p in model.parameters()); decode MACs also "
                    "equal to corpus_nlp.json's torch.utils.flop_counter truth of the same step"),
        "nodes": nodes,
        "attention_ops": attn_ops,
        "config": {k: a[k] for k in ("family", "n_layers", "n_q_heads", "n_kv_heads", "head_dim", "hidden",
                                     "intermediate", "vocab", "max_positions", "tied_embeddings", "qkv_bias",
                                     "mlp", "norm", "positions")},
        "dtypes": {"kv": d["kv_dtype"], "weights": d["weight_dtype"],
                   "weight_bits": d["quant"]["bits"] if d["quant"] else 8 * BYTES[d["weight_dtype"]],
                   "note": d["extra_note"] or None},
        "kv_cache": {
            "inputs": ins, "outputs": outs, "kind": d["cache_kind"], "layout": d["layout"],
            "dims": {"batch": roles["batch"], "new_tokens": roles["new_tokens"], "past": roles["past"],
                     "total": roles["total"], "head_dim": head_dim_name},
            "bytes_per_token": kv,
        },
        "bind": d["bind"],
        "parameters": {
            "count": params,
            "tied_embeddings": a["tied_embeddings"],
            "bytes": pbytes,
            **stored,
            "quantization": quant,
            "initializers": {
                "float_elements": float_elems,
                "uint8_elements": uint8_elems,
                "non_parameter_float": extra_f,
                "rule": ("sum of the element counts of the file's floating-point initializers of rank >= 1 "
                         "(float32 / float16), and of its uint8 ones; integer / bool shape constants and the dynamo "
                         "exporter's rank-0 float scalars (eps, 1/sqrt(head_dim), -inf) are not parameters"),
                "notes": stored_notes(name, d),
            },
        },
        "decode_macs": {
            "at": {"batch": 1, "new_tokens": env["new_tokens"], "past": env["past"], "context": env["context"]},
            "linear_per_token": lin,
            "weight_matmul": w_macs,
            "attention": att,
            "total": total,
            "note": ("attention counts QK^T and AV over the whole context for every new token (what the graph "
                     "computes: the causal mask hides, it does not skip); weight_matmul counts every linear "
                     "layer once per token, LM head included, embedding lookups and norms excluded"
                     + ("; MatMulNBits MACs are those of the dequantized weights" if d["quant"] else "")),
        },
    }


def stored_notes(name, d) -> str:
    notes = []
    if d["dup_head"]:
        notes.append("GPT-2 ties lm_head to wte; this legacy export stores the head a second time as a transposed "
                     "[hidden, vocab] MatMul weight, so the file holds params + hidden * vocab float elements")
    elif d["cfg"] == "gpt2":
        notes.append("GPT-2 ties lm_head to wte; the dynamo export keeps the one tensor (Gather and MatMul read it)")
    if d["extra_float"] and "inv_freq" in d["extra_float"]:
        notes.append("rotary_emb.inv_freq [head_dim / 2] is a float buffer, not a parameter")
    if d["extra_float"] and "cos_cache" in d["extra_float"]:
        notes.append("cos_cache / sin_cache [max_positions, head_dim / 2] are the builder's rotary tables, "
                     "not parameters")
    if d["quant"]:
        notes.append("quantized linears are stored packed (see quantization.packing); their float elements are "
                     "replaced by the scales")
    if name == "gpt2_decode_ort_fused":
        notes.append("the fused Attention takes the c_attn weight and bias as its inputs; the causal tril buffer "
                     "of the source is gone (Attention unidirectional=1)")
    return "; ".join(notes)


_NLP = {}


def nlp_entry_exporter(name):
    return _NLP.get(f"models/corpus/{name}.onnx", {}).get("exporter")


def write_fixture(made_all: dict) -> None:
    with open(NLP_FIXTURE) as f:
        nlp = json.load(f)["models"]
    _NLP.update({e["file"]: e for e in nlp})
    nlp_truth = {e["file"]: e["truth_macs"] for e in nlp}
    old = {}
    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            old = {e["file"]: e for e in json.load(f)["models"]}
    entries = []
    for name, d in decode_models().items():
        if not os.path.exists(os.path.join(mn.OUT_DIR, name + ".onnx")):
            print(f"    skip {name}: no file")
            continue
        prev = old.get(f"models/corpus/{name}.onnx", {})
        made = made_all.get(name) or {"exporter": prev.get("exporter"), "note": prev.get("export_note")}
        entries.append(truth_entry(name, d, made, nlp_truth))
    doc = {
        "_doc": ("Config-derived truth of every decode-step model in models/corpus/ (issue 17), written by "
                 "models/corpus/make_llm.py from the Hugging Face config objects, not from onnxperf. Every figure "
                 "is a formula string over the config's names and its value at the model's bind (batch 1, past "
                 "127, one new token; the chunk model 32 new tokens on 96). kv_cache.bytes_per_token = 2 * "
                 "n_layers * n_kv_heads * head_dim * kv_bytes; parameters.count counts a tied embedding once; "
                 "parameters.initializers says what the weightless file's initializers hold (stored duplicates, "
                 "packed quantized weights, non-parameter buffers); decode_macs splits weight-matmul and "
                 "attention multiply-accumulates."),
        "models": sorted(entries, key=lambda e: e["file"]),
    }
    with open(FIXTURE, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(FIXTURE, REPO)} ({len(entries)} models)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="model names (file names without .onnx)")
    ap.add_argument("--keep-weights", action="store_true", help="keep models/corpus/<name>.onnx.data")
    ap.add_argument("--fixture-only", action="store_true", help="only rewrite tests/fixtures/llm_truth.json")
    a = ap.parse_args()
    todo = [] if a.fixture_only else (a.only or list(MODELS))
    for n in todo:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(MODELS)}")
    made = {}
    with tempfile.TemporaryDirectory() as work:
        for n in todo:
            print(f"== {n}")
            made[n] = MODELS[n](work, a.keep_weights)
    write_fixture(made)


if __name__ == "__main__":
    main()
