#!/usr/bin/env python3
"""Export real PyTorch models (random weights) to ONNX for onnxperf's test corpus.

Versions used to produce the committed files (see models/README.md for the venv setup):
    torch        2.14.1 (+cu130 wheel, run on the CPU)
    torchvision  0.29.1
    transformers 5.23.0
    onnx         1.23.2
    onnxruntime  1.31.1 (only to check that each exported model runs)

Models written to --out:
    resnet50_torch.onnx        torchvision resnet50,      input `input` [batch,3,224,224] -> `logits`
    mobilenetv2_torch.onnx     torchvision mobilenet_v2,  input `input` [batch,3,224,224] -> `logits`
    bert_encoder_torch.onnx    transformers BertModel (4 layers, hidden 256, 4 heads, FFN 1024),
                               inputs `input_ids`, `attention_mask` int64 [batch,sequence]
                               -> `last_hidden_state`, `pooler_output`

All exports use the legacy TorchScript exporter:
    torch.onnx.export(model.eval(), args, path, dynamo=False, opset_version=17)

Before export every floating-point parameter and buffer gets small random noise, because the legacy
exporter merges bit-identical initializers (freshly initialised BN weights of 1, zero biases, ...);
without noise the initializer counts would depend on the random init instead of the architecture.

The files are shipped WITHOUT weights: every tensor of more than 64 elements is stored as external data
in `<model>.onnx.data`, which is then deleted (pass --keep-weights to keep it). Tensors of at most 64
elements (shape constants, Reshape targets, ...) stay inline so shape inference still works.

Usage (from the repo root, in the venv described in models/README.md):
    python models/make_torch.py --out models/
    python models/make_torch.py --out models/ --keep-weights
    python models/make_torch.py --out models/ --fixture tests/fixtures/torchvision_published.json
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision
import transformers
from onnx.external_data_helper import _get_all_tensors, uses_external_data

SEED = 0
NOISE_STD = 1e-3
INLINE_MAX_ELEMENTS = 64
# onnx's size_threshold compares sys.getsizeof(tensor.raw_data) (= 33 + nbytes for a bytes object) with
# `>=`. 33 + 64 * 4 + 1 = 290: float32 tensors of <=64 elements stay inline, of >=65 go external. Every
# tensor is checked against the element rule after saving (see check_external_split).
SIZE_THRESHOLD = sys.getsizeof(b"") + INLINE_MAX_ELEMENTS * 4 + 1
OPSET = 17


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def add_noise(model: torch.nn.Module, std: float = NOISE_STD) -> None:
    """Add small noise to every float parameter and buffer so no two initializers are bit-identical."""
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            noise = torch.randn(t.shape, generator=g, dtype=t.dtype) * std
            if name.endswith("running_var"):
                noise = noise.abs()  # keep variances positive
            t.add_(noise)


class BertWrapper(torch.nn.Module):
    """Return plain tensors (last_hidden_state, pooler_output) instead of a ModelOutput."""

    def __init__(self, bert: torch.nn.Module):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        return out.last_hidden_state, out.pooler_output


def build_bert() -> torch.nn.Module:
    config = transformers.BertConfig(
        num_hidden_layers=4,
        hidden_size=256,
        num_attention_heads=4,
        intermediate_size=1024,
        vocab_size=30522,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    # transformers 5 no longer accepts attn_implementation in BertModel.__init__; set it on the config.
    config._attn_implementation = "eager"
    return BertWrapper(transformers.BertModel(config))


def model_specs():
    """(file name, builder, example args, input names, output names, dynamic axes, feed for ORT)."""
    img = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 2))
    vision_axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
    seq = 128
    gen = torch.Generator().manual_seed(SEED + 3)
    input_ids = torch.randint(0, 30522, (1, seq), generator=gen, dtype=torch.int64)
    attention_mask = torch.ones(1, seq, dtype=torch.int64)
    attention_mask[:, seq - 16 :] = 0  # some padding so the mask path is exercised
    bert_axes = {
        "input_ids": {0: "batch", 1: "sequence"},
        "attention_mask": {0: "batch", 1: "sequence"},
        "last_hidden_state": {0: "batch", 1: "sequence"},
        "pooler_output": {0: "batch"},
    }
    return [
        ("resnet50_torch.onnx", lambda: torchvision.models.resnet50(weights=None), (img,),
         ["input"], ["logits"], vision_axes),
        ("mobilenetv2_torch.onnx", lambda: torchvision.models.mobilenet_v2(weights=None), (img,),
         ["input"], ["logits"], vision_axes),
        ("bert_encoder_torch.onnx", build_bert, (input_ids, attention_mask),
         ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"], bert_axes),
    ]


def run_ort(path: str, input_names, args, model: torch.nn.Module) -> float:
    """Run the full model (weights present) in onnxruntime; return max abs diff against PyTorch."""
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {n: a.numpy() for n, a in zip(input_names, args)}
    outs = sess.run(None, feed)
    with torch.no_grad():
        ref = model(*args)
    if isinstance(ref, torch.Tensor):
        ref = (ref,)
    return max(float(np.max(np.abs(o - r.numpy()))) for o, r in zip(outs, ref))


def tensor_numel(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


def check_external_split(m: onnx.ModelProto) -> tuple[int, int]:
    """Assert: tensors of > 64 elements are external, tensors of <= 64 elements are inline."""
    n_ext = n_inline = 0
    for t in _get_all_tensors(m):
        ext = uses_external_data(t)
        if tensor_numel(t) > INLINE_MAX_ELEMENTS:
            assert ext, f"tensor {t.name} ({tensor_numel(t)} elements) should be external"
            n_ext += 1
        else:
            assert not ext, f"tensor {t.name} ({tensor_numel(t)} elements) should be inline"
            n_inline += 1
    return n_ext, n_inline


def dim_str(d) -> str:
    return str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")


def infer_fixed(path: str, fixed: dict[str, int], load_external_data: bool):
    """Load, fix the symbolic input dims, run onnx shape inference with data propagation.

    Returns ({value name: shape as list of str}, [names whose shape is not fully static], model).
    The exporter's value_info and output shapes are dropped first so inference has to derive them.
    """
    m = onnx.load(path, load_external_data=load_external_data)
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param in fixed:
                d.dim_value = fixed[d.dim_param]  # also clears dim_param (oneof)
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    shapes, unresolved = {}, []
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            shapes[vi.name] = None
            unresolved.append(vi.name)
            continue
        shapes[vi.name] = [dim_str(d) for d in tt.shape.dim]
        if any(not d.HasField("dim_value") for d in tt.shape.dim):
            unresolved.append(vi.name)
    return shapes, unresolved, inferred


def check_shapes(path: str, fixed: dict[str, int], require_static: bool) -> None:
    """Shape inference on the weightless file must equal that on the full file (weights still present).

    For the CNNs every intermediate shape must be static once `batch` is fixed. For the BERT export,
    onnx's own shape inference cannot resolve Slice/Expand whose starts/ends/shape are computed at run time
    from Shape ops (even with all weights loaded), so there only the equality with the full model is
    required and the unresolved values are reported.
    """
    full_shapes, full_unres, _ = infer_fixed(path, fixed, load_external_data=True)
    shapes, unresolved, inferred = infer_fixed(path, fixed, load_external_data=False)
    assert shapes == full_shapes, "shape inference differs between weightless and full model"
    for o in inferred.graph.output:
        print(f"    inferred {o.name}: {shapes[o.name]}")
    print(f"    shape inference (fixed {fixed}): {len(shapes)} values, {len(unresolved)} not fully "
          f"static; identical with and without weights")
    if unresolved:
        producers = {out: n.op_type for n in inferred.graph.node for out in n.output}
        hist = collections.Counter(producers.get(u, "?") for u in unresolved)
        print(f"    not fully static, by producing op: {dict(hist)}; first: {unresolved[:3]}")
    if require_static:
        assert not unresolved, f"unresolved shapes: {unresolved[:10]}"
    else:
        # onnxruntime's symbolic shape inference does resolve everything, but it reads the values of all
        # Constant nodes (here the [1,512] int64 position_ids), so it needs the weights file.
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        m = onnx.load(path, load_external_data=True)
        for vi in m.graph.input:
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param in fixed:
                    d.dim_value = fixed[d.dim_param]
        for o in m.graph.output:
            o.type.tensor_type.ClearField("shape")
        del m.graph.value_info[:]
        r = SymbolicShapeInference.infer_shapes(m, auto_merge=False)
        vis = list(r.graph.value_info) + list(r.graph.output)
        left = [v.name for v in vis
                if any(not d.HasField("dim_value") for d in v.type.tensor_type.shape.dim)]
        print(f"    onnxruntime symbolic shape inference (full model): {len(vis)} values, "
              f"{len(left)} not fully static; outputs "
              f"{[[d.dim_value for d in o.type.tensor_type.shape.dim] for o in r.graph.output]}")
        assert not left, left[:10]


def op_histogram(m: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(n.op_type for n in m.graph.node)


def export_one(out_dir, fname, builder, args, input_names, output_names, dynamic_axes, keep_weights):
    path = os.path.join(out_dir, fname)
    data_name = fname + ".data"
    data_path = os.path.join(out_dir, data_name)
    seed_everything()
    model = builder().eval()
    add_noise(model)
    print(f"== {fname}")
    torch.onnx.export(
        model.eval(),
        args,
        path,
        dynamo=False,
        opset_version=OPSET,
        input_names=input_names,
        output_names=output_names,
        dynamic_axes=dynamic_axes,
        do_constant_folding=True,
    )
    full = onnx.load(path)
    onnx.checker.check_model(full)
    diff = run_ort(path, input_names, args, model)
    print(f"    onnxruntime run ok, max |ort - torch| = {diff:.3g}")
    assert diff < 1e-2, diff

    # Re-save with large tensors as external data.
    if os.path.exists(data_path):
        os.remove(data_path)
    onnx.save_model(
        full,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=data_name,
        size_threshold=SIZE_THRESHOLD,
        convert_attribute=True,
    )
    light = onnx.load(path, load_external_data=False)
    n_ext, n_inline = check_external_split(light)
    print(f"    tensors external: {n_ext}, inline (<= {INLINE_MAX_ELEMENTS} elements): {n_inline}")
    # The re-saved model with its .data must still run.
    diff2 = run_ort(path, input_names, args, model)
    assert diff2 == diff, (diff, diff2)
    fixed = {"batch": 1, "sequence": 128}
    check_shapes(path, {k: v for k, v in fixed.items() if k in str(dynamic_axes)},
                 require_static=not fname.startswith("bert"))
    if not keep_weights:
        os.remove(data_path)
    hist = op_histogram(light)
    print(f"    nodes: {len(light.graph.node)}, initializers: {len(light.graph.initializer)}, "
          f"size: {os.path.getsize(path)} bytes")
    print(f"    ops: {dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))}")


def write_fixture(path: str, out_dir: str) -> None:
    """Write torchvision's published figures plus torch-side counts for resnet50 and mobilenet_v2."""
    import json

    from torch.utils.flop_counter import FlopCounterMode

    files = {"resnet50": "resnet50_torch.onnx", "mobilenet_v2": "mobilenetv2_torch.onnx"}
    fixture = {
        "_doc": (
            "Published torchvision figures and PyTorch-side counts for the models exported by "
            "models/make_torch.py. published.* come verbatim from "
            "torchvision.models.get_model_weights(name).DEFAULT.meta; '_ops' is what torchvision calls "
            "GFLOPS, i.e. GMACs of conv and matmul-like ops (= flop_counter_total_flops / 2 / 1e9, rounded "
            "to 3 decimals); '_file_size' is the checkpoint size in MB. torch.* are measured on the eval "
            "model (random weights; counts do not depend on them) at input 1x3x224x224. The legacy ONNX "
            "exporter folds each BatchNorm2d into the preceding Conv: per BN channel the 2 affine params "
            "(weight, bias) disappear and 1 conv bias is added when the conv had none (true for every "
            "BN-preceded conv in both models), so expected ONNX initializer elements = "
            "torch_num_params - batchnorm2d_num_features_total."
        ),
        "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__},
        "models": {},
    }
    for name, onnx_file in files.items():
        weights = torchvision.models.get_model_weights(name).DEFAULT
        meta = weights.meta
        seed_everything()
        model = torchvision.models.get_model(name, weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            model(x)
        total_flops = int(fc.get_total_flops())
        by_op = {str(k): int(v) for k, v in sorted(fc.get_flop_counts()["Global"].items(), key=str)}
        bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
        # Check the "conv had no bias" premise for each BN: its producer is a bias-free Conv2d.
        mods = list(model.modules())
        convs_before_bn = [mods[i - 1] for i, m in enumerate(mods) if isinstance(m, torch.nn.BatchNorm2d)]
        assert all(isinstance(c, torch.nn.Conv2d) and c.bias is None for c in convs_before_bn), name
        num_params = sum(p.numel() for p in model.parameters())
        bn_ch = sum(m.num_features for m in bns)
        entry = {
            "onnx_file": f"models/{onnx_file}",
            "published": {
                "num_params": meta["num_params"],
                "_ops": meta["_ops"],
                "_file_size": meta["_file_size"],
            },
            "source": (
                f"torchvision {torchvision.__version__}: "
                f"torchvision.models.get_model_weights({name!r}).DEFAULT.meta "
                f"(DEFAULT = {type(weights).__name__}.{weights.name}); keys num_params, _ops, _file_size"
            ),
            "torch_flop_counter_total_flops": total_flops,
            "torch_flop_counter_flops_by_op": by_op,
            "torch_flop_counter_input_shape": [1, 3, 224, 224],
            "torch_flop_counter_source": (
                f"torch {torch.__version__}: torch.utils.flop_counter.FlopCounterMode(display=False)"
                ".get_total_flops() on model.eval() under torch.no_grad()"
            ),
            "torch_num_params": num_params,
            "torch_num_params_source": "sum(p.numel() for p in model.parameters())",
            "batchnorm2d_layers": len(bns),
            "batchnorm2d_num_features_total": bn_ch,
            "expected_onnx_initializer_elements_after_bn_fold": num_params - bn_ch,
        }
        onnx_path = os.path.join(out_dir, onnx_file)
        if os.path.exists(onnx_path):
            m = onnx.load(onnx_path, load_external_data=False)
            entry["onnx_initializer_elements"] = sum(tensor_numel(t) for t in m.graph.initializer)
            entry["onnx_initializers"] = len(m.graph.initializer)
            entry["onnx_nodes"] = len(m.graph.node)
        print(f"  {name}: {json.dumps({k: v for k, v in entry.items() if k != 'torch_flop_counter_flops_by_op'})}")
        fixture["models"][name] = entry
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(fixture, f, indent=2)
        f.write("\n")
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="models/", help="output folder (default: models/)")
    ap.add_argument("--keep-weights", action="store_true",
                    help="keep <model>.onnx.data next to each model instead of deleting it")
    ap.add_argument("--only", nargs="*", help="export only these file names")
    ap.add_argument("--fixture", metavar="JSON",
                    help="also write torchvision's published figures and torch-side counts to JSON "
                         "(tests/fixtures/torchvision_published.json)")
    ap.add_argument("--fixture-only", action="store_true", help="write --fixture and export nothing")
    a = ap.parse_args()
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"transformers {transformers.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    os.makedirs(a.out, exist_ok=True)
    if not a.fixture_only:
        for spec in model_specs():
            if a.only and spec[0] not in a.only:
                continue
            export_one(a.out, *spec, keep_weights=a.keep_weights)
    if a.fixture:
        write_fixture(a.fixture, a.out)


if __name__ == "__main__":
    main()
