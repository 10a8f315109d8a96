"""Generate a decoder-only LLM graph of 7B-class dims (Llama-style) with symbolic batch and
sequence, as torch's legacy exporter decomposes it at opset 17, whose weights are external-data
references to a file that is never written (analysis needs only shapes and dtypes).

    python benchmarks/make_llm.py --out /tmp/llm7b.onnx [--layers 32 --hidden 4096 ...]

Dims default to Llama-2-7B: 32 layers, hidden 4096, 32 heads, FFN 11008, vocab 32000, fp16.
Parameters: vocab·hidden·2 + layers·(4·hidden² + 3·hidden·ffn + 2·hidden) + hidden = 6,738,415,616.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DT = TensorProto.FLOAT16


class Builder:
    def __init__(self, data_file: str):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.data_file = data_file
        self.offset = 0
        self.k = 0

    def name(self, base: str) -> str:
        self.k += 1
        return f"{base}_{self.k}"

    def weight(self, name: str, shape: list[int]) -> str:
        """An fp16 initializer stored as an external-data reference (bytes never written)."""
        t = onnx.TensorProto()
        t.name, t.data_type = name, DT
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        length = int(np.prod(shape)) * 2
        for k, v in (("location", self.data_file), ("offset", str(self.offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += (length + 4095) // 4096 * 4096
        self.inits.append(t)
        return name

    def const(self, values, dtype=np.int64) -> str:
        n = self.name("const")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), n))
        return n

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs) -> str | list[str]:
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=f"/{outs[0]}", **attrs))
        return outs[0] if n_out == 1 else outs


def rms_norm(b: Builder, x: str, hidden: int, prefix: str) -> str:
    two = b.const([2.0], np.float16)
    eps = b.const([1e-6], np.float16)
    sq = b.op("Pow", [x, two])
    ms = b.op("ReduceMean", [sq], axes=[-1], keepdims=1)
    r = b.op("Sqrt", [b.op("Add", [ms, eps])])
    n = b.op("Div", [x, r])
    return b.op("Mul", [n, b.weight(f"{prefix}.weight", [hidden])])


def rotary(b: Builder, x: str, cos: str, sin: str, head_dim: int) -> str:
    half = head_dim // 2
    x1 = b.op("Slice", [x, b.const([0]), b.const([half]), b.const([3])])
    x2 = b.op("Slice", [x, b.const([half]), b.const([head_dim]), b.const([3])])
    rot = b.op("Concat", [b.op("Neg", [x2]), x1], axis=3)
    return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rot, sin])])


def build(layers: int, hidden: int, heads: int, ffn: int, vocab: int, max_pos: int, data_file: str) -> onnx.ModelProto:
    b = Builder(data_file)
    head_dim = hidden // heads
    x = b.op("Gather", [b.weight("embed_tokens.weight", [vocab, hidden]), "input_ids"], axis=0)
    cos = b.op("Unsqueeze", [b.op("Gather", [b.weight("rotary.cos_cached", [max_pos, head_dim]), "position_ids"]),
                             b.const([1])])
    sin = b.op("Unsqueeze", [b.op("Gather", [b.weight("rotary.sin_cached", [max_pos, head_dim]), "position_ids"]),
                             b.const([1])])
    split_heads = b.const([0, 0, heads, head_dim])
    merge_heads = b.const([0, 0, hidden])
    scale = b.const([float(np.sqrt(head_dim))], np.float16)
    for i in range(layers):
        p = f"layers.{i}"
        h = rms_norm(b, x, hidden, f"{p}.input_layernorm")
        q, k, v = (b.op("Transpose", [b.op("Reshape", [b.op("MatMul", [h, b.weight(f"{p}.self_attn.{w}.weight", [hidden, hidden])]),
                                                        split_heads])], perm=[0, 2, 1, 3]) for w in ("q_proj", "k_proj", "v_proj"))
        q, k = rotary(b, q, cos, sin, head_dim), rotary(b, k, cos, sin, head_dim)
        scores = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
        probs = b.op("Softmax", [b.op("Add", [b.op("Div", [scores, scale]), "attention_mask"])], axis=-1)
        ctx = b.op("Reshape", [b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_heads])
        x = b.op("Add", [x, b.op("MatMul", [ctx, b.weight(f"{p}.self_attn.o_proj.weight", [hidden, hidden])])])
        h = rms_norm(b, x, hidden, f"{p}.post_attention_layernorm")
        gate = b.op("MatMul", [h, b.weight(f"{p}.mlp.gate_proj.weight", [hidden, ffn])])
        up = b.op("MatMul", [h, b.weight(f"{p}.mlp.up_proj.weight", [hidden, ffn])])
        act = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate])]), up])
        x = b.op("Add", [x, b.op("MatMul", [act, b.weight(f"{p}.mlp.down_proj.weight", [ffn, hidden])])])
    x = rms_norm(b, x, hidden, "norm")
    logits = b.op("MatMul", [x, b.weight("lm_head.weight", [hidden, vocab])])
    b.nodes[-1].output[0] = "logits"
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", DT, ["batch", 1, "sequence", "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", DT, ["batch", "sequence", vocab])]
    g = helper.make_graph(b.nodes, "llm", inputs, outputs, b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxperf-benchmarks")
    m.ir_version = 8
    return m


def expected_params(layers: int, hidden: int, ffn: int, vocab: int, max_pos: int, heads: int) -> int:
    """Weights by construction (the rotary tables are fp16 initializers too)."""
    head_dim = hidden // heads
    return (2 * vocab * hidden + layers * (4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden) + hidden
            + 2 * max_pos * head_dim)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-pos", type=int, default=4096)
    a = ap.parse_args(argv)
    out = Path(a.out)
    m = build(a.layers, a.hidden, a.heads, a.ffn, a.vocab, a.max_pos, out.name + ".data")
    onnx.save(m, str(out))
    weight_bytes = sum(int(np.prod(t.dims)) * 2 for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL)
    print(f"{out}: {len(m.graph.node)} nodes, {out.stat().st_size:,} bytes on disk, "
          f"{weight_bytes / 2**30:.1f} GiB of weights referenced (not written)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
