"""Generate a Llama-style decoder STEP with a KV cache, as the torch exporters write one, at real
sizes and without weights (they are external-data references to a file that is never written:
analysis needs only shapes and dtypes).

    python benchmarks/make_llm_decode.py --config llama-3-8b --out /tmp/llama-3-8b.onnx
    python benchmarks/make_llm_decode.py --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --vocab 256 --out x.onnx

The graph (fp16, opset 17):

- inputs ``input_ids`` / ``position_ids`` [batch, sequence] (int64), ``attention_mask`` [batch,
  total_sequence] (int64, the legacy exporter's 2-D mask: total = past + new), and per layer i
  ``past_key_values.{i}.key`` / ``.value`` [batch, kv_heads, past_sequence, head_dim];
- outputs ``logits`` [batch, sequence, vocab] and ``present.{i}.key`` / ``.value`` [batch, kv_heads,
  total_sequence, head_dim] = Concat(past, new, axis 2);
- per layer: RMSNorm written out (Pow, ReduceMean, Add, Sqrt, Div, Mul), Q/K/V projections
  (K and V to kv_heads·head_dim), rotary embedding on Q and K (cos/sin computed from position_ids
  and an inv_freq constant, as transformers' LlamaRotaryEmbedding exports: no position table),
  the Concat with the past, grouped-query attention's repeat_kv written as transformers exports it
  (Unsqueeze to [b, kv_heads, 1, T, d], Expand to [b, kv_heads, heads/kv_heads, T, d], Reshape to
  [b, heads, T, d]; absent when kv_heads == heads), scores = Q·Kᵀ / √d + mask, Softmax, ·V, the
  output projection and residual, then the SwiGLU MLP (gate·σ(gate)·up, down) and residual;
- the mask is additive over the keys: (1 − mask)·(−65504), broadcast to [b, 1, 1, T] (the causal
  part a real export adds for the prompt has the same shape as the scores: the same cost).

Symbolic batch, past and new tokens, so one file serves the prefill (past = 0, new = P) and the
decode (new = 1). Parameters (untied embedding and head, as Llama):

    2·vocab·hidden + layers·(2·hidden² + 2·hidden·kv_heads·head_dim + 3·hidden·ffn + 2·hidden) + hidden + head_dim/2

(the last term: the rotary inv_freq constant, fp32). A decode step's MACs per token are the
matrix products' weights, every parameter but the embedding table (a Gather: no MACs), the norms'
weights and inv_freq (elementwise), plus attention's 2·layers·heads·head_dim·context:
:func:`decode_macs`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent))  # make_llm beside it, as a script or loaded by path
from make_llm import Builder as _BaseBuilder  # noqa: E402

DT = TensorProto.FLOAT16


@dataclass(frozen=True)
class Config:
    """A Llama-style checkpoint's shape (its config.json)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    rope_theta: float = 10000.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def params(self) -> int:
        """Parameters of the graph (the docstring's formula)."""
        kv = self.kv_heads * self.head_dim
        return (2 * self.vocab * self.hidden
                + self.layers * (2 * self.hidden ** 2 + 2 * self.hidden * kv + 3 * self.hidden * self.ffn
                                 + 2 * self.hidden)
                + self.hidden + self.head_dim // 2)

    @property
    def matmul_params(self) -> int:
        """Weights of the matrix products: the projections, the MLP and the LM head."""
        kv = self.kv_heads * self.head_dim
        return self.vocab * self.hidden + self.layers * (2 * self.hidden ** 2 + 2 * self.hidden * kv
                                                         + 3 * self.hidden * self.ffn)

    @property
    def kv_bytes_per_token(self) -> int:
        """fp16 K and V of every layer: 2·layers·kv_heads·head_dim·2 B."""
        return 2 * self.layers * self.kv_heads * self.head_dim * 2


def decode_macs(cfg: Config, batch: int, context: int) -> int:
    """MACs of one decode step (one new token per sequence) at ``context`` tokens (the new one
    included): batch·(matmul_params + 2·layers·heads·head_dim·context) (Q·Kᵀ and P·V)."""
    return batch * (cfg.matmul_params + 2 * cfg.layers * cfg.heads * cfg.head_dim * context)


#: the checkpoints of issue 29 (their config.json): Llama-2 uses rope_theta 10,000, Llama 3 500,000;
#: Llama-2-13B and Mistral-7B (v0.1: GQA 32/8, FFN 14336; its 4,096-token sliding window is not
#: written: every published context of it is within the window) for the published rows of their own
CONFIGS = {c.name: c for c in (
    Config("llama-2-7b", 32, 4096, 32, 32, 11008, 32000),
    Config("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 500000.0),
    Config("llama-2-70b", 80, 8192, 64, 8, 28672, 32000),
    Config("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 500000.0),
    Config("llama-2-13b", 40, 5120, 40, 40, 13824, 32000),
    Config("mistral-7b", 32, 4096, 32, 8, 14336, 32000),
)}
#: published model names -> the graph that has their shape (3.1 and 3.3 change rope scaling and
#: context length only; "LLaMA 7B" in TensorRT-LLM's tables is Llama-2-7B by its later revisions)
ALIASES = {"llama-7b": "llama-2-7b", "llama-2-7b": "llama-2-7b", "llama-3-8b": "llama-3-8b",
           "llama-3.1-8b": "llama-3-8b", "llama-2-70b": "llama-2-70b", "llama-3-70b": "llama-3-70b",
           "llama-3.1-70b": "llama-3-70b", "llama-3.3-70b": "llama-3-70b", "llama-2-13b": "llama-2-13b",
           "mistral-7b": "mistral-7b"}


class Builder(_BaseBuilder):
    """make_llm.py's builder (fp16 weights as external references never written, constants, names);
    ``op`` here names one output, or takes the name it is given."""

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs) -> str:
        o = out or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [o], name=f"/{o}", **attrs))
        return o


def rms_norm(b: Builder, x: str, hidden: int, prefix: str) -> str:
    sq = b.op("Pow", [x, b.const([2.0], np.float16)])
    ms = b.op("ReduceMean", [sq], axes=[-1], keepdims=1)
    r = b.op("Sqrt", [b.op("Add", [ms, b.const([1e-5], np.float16)])])
    return b.op("Mul", [b.op("Div", [x, r]), b.weight(f"{prefix}.weight", [hidden])])


def rotary(b: Builder, x: str, cos: str, sin: str, head_dim: int) -> str:
    """x·cos + rotate_half(x)·sin on [b, h, s, d]."""
    half = head_dim // 2
    x1 = b.op("Slice", [x, b.const([0]), b.const([half]), b.const([3])])
    x2 = b.op("Slice", [x, b.const([half]), b.const([head_dim]), b.const([3])])
    rot = b.op("Concat", [b.op("Neg", [x2]), x1], axis=3)
    return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rot, sin])])


def build(cfg: Config, data_file: str) -> onnx.ModelProto:
    """The decode-step graph of ``cfg`` (see the module docstring)."""
    b = Builder(data_file)
    hd, kvw = cfg.head_dim, cfg.kv_heads * cfg.head_dim
    rep = cfg.heads // cfg.kv_heads
    x = b.op("Gather", [b.weight("model.embed_tokens.weight", [cfg.vocab, cfg.hidden]), "input_ids"], axis=0)
    # rotary: freqs = position_ids[..., None] · inv_freq, emb = [freqs, freqs], cos/sin -> [b, 1, s, d]
    inv_freq = b.const(1.0 / cfg.rope_theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd), np.float32)
    pos = b.op("Unsqueeze", [b.op("Cast", ["position_ids"], to=TensorProto.FLOAT), b.const([-1])])
    freqs = b.op("Mul", [pos, inv_freq])
    emb = b.op("Concat", [freqs, freqs], axis=-1)
    cos = b.op("Unsqueeze", [b.op("Cast", [b.op("Cos", [emb])], to=DT), b.const([1])])
    sin = b.op("Unsqueeze", [b.op("Cast", [b.op("Sin", [emb])], to=DT), b.const([1])])
    # additive mask over the keys: (1 - mask) * -65504 -> [b, 1, 1, T]
    m = b.op("Cast", ["attention_mask"], to=DT)
    bias = b.op("Mul", [b.op("Sub", [b.const([1.0], np.float16), m]), b.const([-65504.0], np.float16)])
    bias = b.op("Unsqueeze", [bias, b.const([1, 2])])
    q_shape, kv_shape = b.const([0, 0, cfg.heads, hd]), b.const([0, 0, cfg.kv_heads, hd])
    grouped = b.const([0, cfg.heads, -1, hd])
    repeat = b.const([1, 1, rep, 1, 1])
    merge = b.const([0, 0, cfg.hidden])
    scale = b.const([float(np.sqrt(hd))], np.float16)
    for i in range(cfg.layers):
        p = f"model.layers.{i}"
        h = rms_norm(b, x, cfg.hidden, f"{p}.input_layernorm")

        def proj(w: str, width: str, shape: str) -> str:
            y = b.op("MatMul", [h, b.weight(f"{p}.self_attn.{w}.weight", [cfg.hidden, width])])
            return b.op("Transpose", [b.op("Reshape", [y, shape])], perm=[0, 2, 1, 3])

        q = rotary(b, proj("q_proj", cfg.hidden, q_shape), cos, sin, hd)
        k = rotary(b, proj("k_proj", kvw, kv_shape), cos, sin, hd)
        v = proj("v_proj", kvw, kv_shape)
        k = b.op("Concat", [f"past_key_values.{i}.key", k], f"present.{i}.key", axis=2)
        v = b.op("Concat", [f"past_key_values.{i}.value", v], f"present.{i}.value", axis=2)
        if rep > 1:  # transformers' repeat_kv: [b, kvh, T, d] -> [b, kvh, rep, T, d] -> [b, h, T, d]
            k, v = (b.op("Reshape", [b.op("Expand", [b.op("Unsqueeze", [t, b.const([2])]), repeat]), grouped])
                    for t in (k, v))
        scores = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
        probs = b.op("Softmax", [b.op("Add", [b.op("Div", [scores, scale]), bias])], axis=-1)
        ctx = b.op("Reshape", [b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge])
        x = b.op("Add", [x, b.op("MatMul", [ctx, b.weight(f"{p}.self_attn.o_proj.weight", [cfg.hidden, cfg.hidden])])])
        h = rms_norm(b, x, cfg.hidden, f"{p}.post_attention_layernorm")
        gate = b.op("MatMul", [h, b.weight(f"{p}.mlp.gate_proj.weight", [cfg.hidden, cfg.ffn])])
        up = b.op("MatMul", [h, b.weight(f"{p}.mlp.up_proj.weight", [cfg.hidden, cfg.ffn])])
        act = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate])]), up])
        x = b.op("Add", [x, b.op("MatMul", [act, b.weight(f"{p}.mlp.down_proj.weight", [cfg.ffn, cfg.hidden])])])
    x = rms_norm(b, x, cfg.hidden, "model.norm")
    b.op("MatMul", [x, b.weight("lm_head.weight", [cfg.hidden, cfg.vocab])], "logits")
    vi = helper.make_tensor_value_info
    inputs = [vi("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              vi("position_ids", TensorProto.INT64, ["batch", "sequence"]),
              vi("attention_mask", TensorProto.INT64, ["batch", "total_sequence"])]
    outputs = [vi("logits", DT, ["batch", "sequence", cfg.vocab])]
    for i in range(cfg.layers):
        for kind in ("key", "value"):
            inputs.append(vi(f"past_key_values.{i}.{kind}", DT, ["batch", cfg.kv_heads, "past_sequence", hd]))
            outputs.append(vi(f"present.{i}.{kind}", DT, ["batch", cfg.kv_heads, "total_sequence", hd]))
    g = helper.make_graph(b.nodes, f"{cfg.name}-decode", inputs, outputs, b.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxperf-benchmarks")
    model.ir_version = 8
    return model


def write(cfg: Config, out: Path) -> Path:
    """Build ``cfg``'s graph and save it to ``out`` (the weights file it names is never written)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(build(cfg, out.name + ".data"), str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", choices=sorted(CONFIGS), help="a named checkpoint (else the dims below)")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=None, help="default: --heads (no grouping)")
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--rope-theta", type=float, default=10000.0)
    a = ap.parse_args(argv)
    cfg = CONFIGS[a.config] if a.config else Config("custom", a.layers, a.hidden, a.heads, a.kv_heads or a.heads,
                                                    a.ffn, a.vocab, a.rope_theta)
    out = write(cfg, Path(a.out))
    print(f"{out}: {cfg.name}, {cfg.params:,} parameters (referenced, not written), "
          f"{out.stat().st_size:,} bytes on disk")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
