"""Make the BERT-base and BERT-large exports that benchmarks/gpu_realism.py predicts (graphs only).

transformers ``BertModel`` with the published configurations (base: 12 layers, hidden 768, 12 heads,
FFN 3072; large: 24 layers, hidden 1024, 16 heads, FFN 4096; vocabulary 30,522), random weights,
eager attention, exported by the legacy exporter (opset 17) with dynamic ``batch`` and ``sequence``,
inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (as SQuAD fine-tuning feeds them), output
``last_hidden_state`` (the SQuAD head, a 2-wide linear layer, is 0.01% of the MACs and left out).
Every tensor of more than 64 elements is made external and its data dropped: the shipped files hold
the graph and the shapes, which is all onnxperf reads.

    python3.11 -m venv /work/venv-nlp
    /work/venv-nlp/bin/pip install torch==2.13.0 transformers onnx onnxscript
    /work/venv-nlp/bin/python benchmarks/models/make_bert.py
"""

from __future__ import annotations

import os
import sys
import tempfile

import onnx
import torch
import transformers
from onnx.external_data_helper import set_external_data

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {
    "bert_base_legacy.onnx": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                  intermediate_size=3072),
    "bert_large_legacy.onnx": dict(num_hidden_layers=24, hidden_size=1024, num_attention_heads=16,
                                   intermediate_size=4096),
}


class Encoder(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                         return_dict=True).last_hidden_state


def make(name: str, kw: dict) -> None:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=30522, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                  **kw)
    cfg._attn_implementation = "eager"
    model = Encoder(transformers.BertModel(cfg, add_pooling_layer=False)).eval()
    ids = torch.randint(0, 30522, (2, 16))
    args = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    axes = {k: {0: "batch", 1: "sequence"} for k in ("input_ids", "attention_mask", "token_type_ids")}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, name)
        torch.onnx.export(model, args, full, dynamo=False, opset_version=17,
                          input_names=list(axes)[:3], output_names=["last_hidden_state"],
                          dynamic_axes=axes, do_constant_folding=True)
        m = onnx.load(full)
    del m.metadata_props[:]
    m.producer_version = ""
    for t in m.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if n > 64:
            set_external_data(t, name + ".data")
    out = os.path.join(HERE, name)
    onnx.save_model(m, out)
    data = out + ".data"
    if os.path.exists(data):
        os.remove(data)
    print(f"{name}: {len(m.graph.node)} nodes, {os.path.getsize(out):,} B", file=sys.stderr)


if __name__ == "__main__":
    for name, kw in CONFIGS.items():
        make(name, kw)
