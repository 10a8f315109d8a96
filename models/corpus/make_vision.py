#!/usr/bin/env python3
"""Vision half of the onnxperf export corpus (issue 14): real ONNX exports with an independent MAC truth.

Versions used to produce the committed files:
    python       3.11.7 (venv: python3.11 -m venv /work/venv-vision)
    torch        2.14.1 (+cu130 wheel from the machine's local wheel store, run on the CPU)
    torchvision  0.29.1
    onnx         1.23.2
    onnxruntime  see VERSIONS printed at start (pip's current release; quantization, fp16 conversion
                 and the session-optimized graphs come from it, and it checks that every model runs)
    onnxscript   (needed by the dynamo exporter)
    pip install torch==2.14.1 torchvision==0.29.1 onnx==1.23.2 onnxruntime onnxscript

What it writes (see models/corpus/README.md for the table):
    models/corpus/<name>.onnx          weights stripped: every tensor of > 64 elements is external data in
                                       <name>.onnx.data, which is deleted (--keep-weights keeps it)
    tests/fixtures/corpus_vision.json  per file: the dims/input shapes that make every graph input static,
                                       the truth MACs and how they were obtained, the op types present

Float models: torchvision builders with weights=None, seeded, then N(0, 1e-3) noise on every float
parameter and buffer (|noise| for BN running_var), as models/make_torch.py does (the legacy exporter
merges bit-identical initializers). Exported with the legacy exporter
    torch.onnx.export(model.eval(), args, path, dynamo=False, opset_version=17, do_constant_folding=True)
with grad enabled (ViT under no_grad takes a fused MHA path the legacy exporter cannot export), except
resnet18_dynamo.onnx (dynamo=True, opset 18; stack traces and absolute paths removed from metadata).

Truth of a float model: torch.utils.flop_counter.FlopCounterMode total FLOPs / 2 on the same eval
module at the same input shape (conv, mm/bmm/addmm, SDPA ...). Variants (onnxruntime quantization,
fp16, session-optimized graphs) take the truth of their float source: same network, same shapes.

Full float exports (with weights) are kept in --work; the variants are made from them, then stripped.

Usage (repo root):
    /work/venv-vision/bin/python models/corpus/make_vision.py
    /work/venv-vision/bin/python models/corpus/make_vision.py --only swin_t_torch.onnx resnet18_qdq.onnx
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision
from onnx import numpy_helper
from onnx.external_data_helper import _get_all_tensors, set_external_data, uses_external_data
from torch.utils.flop_counter import FlopCounterMode

SEED = 0
NOISE_STD = 1e-3
INLINE_MAX_ELEMENTS = 64
OPSET = 17
TORCH_V = torch.__version__.split("+")[0]
LEGACY = f"torch {TORCH_V} legacy, opset {OPSET}"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = "tests/fixtures/corpus_vision.json"


# ----------------------------------------------------------------------------------------------- helpers
def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def add_noise(model: torch.nn.Module, std: float = NOISE_STD) -> None:
    """Add small noise to every float parameter and buffer so no two initializers are bit-identical."""
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            noise = torch.randn(t.shape, generator=g, dtype=t.dtype) * std
            if name.endswith("running_var"):
                noise = noise.abs()
            t.add_(noise)


def numel(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


def save_stripped(m: onnx.ModelProto, path: str, keep_weights: bool) -> onnx.ModelProto:
    """Save with every tensor of more than 64 elements (any dtype) as external data, then drop the data.

    Modifies m. Returns the weightless proto as loaded back from disk."""
    data_name = os.path.basename(path) + ".data"
    data_path = path + ".data"
    if os.path.exists(data_path):
        os.remove(data_path)
    for t in _get_all_tensors(m):
        assert not uses_external_data(t), t.name
        if numel(t) <= INLINE_MAX_ELEMENTS:
            continue
        if not t.HasField("raw_data"):
            c = numpy_helper.from_array(numpy_helper.to_array(t), t.name)
            c.doc_string = t.doc_string
            t.CopyFrom(c)
        set_external_data(t, data_name)
    onnx.save_model(m, path)  # writes the external tensors to data_path and clears their raw_data
    light = onnx.load(path, load_external_data=False)
    for t in _get_all_tensors(light):
        assert uses_external_data(t) == (numel(t) > INLINE_MAX_ELEMENTS), t.name
    if not keep_weights and os.path.exists(data_path):
        os.remove(data_path)
    return light


def all_nodes(g: onnx.GraphProto):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            for sg in a.graphs:
                yield from all_nodes(sg)


def op_name(n: onnx.NodeProto) -> str:
    return n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"


def op_hist(m: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(op_name(n) for n in all_nodes(m.graph))


TRUTH_CTX = ("eval, no_grad, MHA fast path off (torch.backends.mha.set_fastpath_enabled(False)), SDPA math "
             "backend (sdpa_kernel(SDPBackend.MATH))")


def counting():
    """FlopCounterMode in a context where attention is visible to it.

    Under no_grad nn.MultiheadAttention takes aten._native_multi_head_attention and the CPU SDPA kernel
    (_scaled_dot_product_flash_attention_for_cpu): FlopCounter counts neither the fused op's projections
    nor the attention matmuls (vit_b_16: 11.27 or 16.85 GMACs). With the fast path off and the math SDPA
    backend, attention decomposes into bmm and vit_b_16 gives 17.5638 GMACs = torchvision's 17.564."""
    import contextlib

    from torch.nn.attention import SDPBackend, sdpa_kernel

    stack = contextlib.ExitStack()
    stack.enter_context(torch.no_grad())
    stack.enter_context(sdpa_kernel(SDPBackend.MATH))
    torch.backends.mha.set_fastpath_enabled(False)
    stack.callback(torch.backends.mha.set_fastpath_enabled, True)
    fc = stack.enter_context(FlopCounterMode(display=False))
    return stack, fc


def flop_truth(model: torch.nn.Module, args: tuple) -> tuple[int, dict]:
    """FlopCounterMode total FLOPs / 2 on the eval module (see counting())."""
    stack, fc = counting()
    with stack:
        model(*args)
    total = int(fc.get_total_flops())
    assert total % 2 == 0, total
    by_op = {str(k): int(v) for k, v in sorted(fc.get_flop_counts()["Global"].items(), key=str)}
    return total // 2, by_op


def published_gmacs(name: str):
    try:
        return torchvision.models.get_model_weights(name).DEFAULT.meta.get("_ops")
    except Exception:  # no published weights for this builder
        return None


def ort_outputs(path: str, feed: dict) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, feed)


def flat_torch(out) -> list[np.ndarray]:
    if isinstance(out, torch.Tensor):
        return [out.detach().numpy()]
    if isinstance(out, dict):
        return [x for v in out.values() for x in flat_torch(v)]
    if isinstance(out, (list, tuple)):
        return [x for v in out for x in flat_torch(v)]
    return []


# -------------------------------------------------------------------------------------------- the models
class DictOut(torch.nn.Module):
    """Segmentation models return {"out": ...}: return the tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class DetWrapper(torch.nn.Module):
    """Detection models take a list of CHW images and return a list of dicts: one image in, 3 tensors out."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, image):
        d = self.m([image])[0]
        return d["boxes"], d["scores"], d["labels"]


def img(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 2))


def tv(name, **kw):
    return lambda: torchvision.models.get_model(name, weights=None, **kw)


# file, tv name (for published figures and source text), builder, example input, dynamic batch?, notes
FLOAT = [
    ("swin_t_torch.onnx", "swin_t", tv("swin_t"), (1, 3, 224, 224), True),
    ("swin_v2_t_torch.onnx", "swin_v2_t", tv("swin_v2_t"), (1, 3, 256, 256), True),  # trained at 256,
    ("maxvit_t_torch.onnx", "maxvit_t", tv("maxvit_t"), (1, 3, 224, 224), True),
    ("vit_b_16_torch.onnx", "vit_b_16", tv("vit_b_16"), (1, 3, 224, 224), True),
    ("convnext_tiny_torch.onnx", "convnext_tiny", tv("convnext_tiny"), (1, 3, 224, 224), True),
    ("efficientnet_b0_torch.onnx", "efficientnet_b0", tv("efficientnet_b0"), (1, 3, 224, 224), True),
    ("resnet18_torch.onnx", "resnet18", tv("resnet18"), (1, 3, 224, 224), True),
    ("lraspp_mobilenet_v3_large_torch.onnx", "lraspp_mobilenet_v3_large",
     lambda: DictOut(torchvision.models.get_model("lraspp_mobilenet_v3_large", weights=None,
                                                  weights_backbone=None)), (1, 3, 520, 520), True),
    ("ssdlite320_mobilenet_v3_large_torch.onnx", "ssdlite320_mobilenet_v3_large",
     lambda: DetWrapper(torchvision.models.get_model("ssdlite320_mobilenet_v3_large", weights=None,
                                                     weights_backbone=None)), (3, 320, 320), False),
    ("fasterrcnn_mobilenet_v3_large_320_fpn_torch.onnx", "fasterrcnn_mobilenet_v3_large_320_fpn",
     lambda: DetWrapper(torchvision.models.get_model("fasterrcnn_mobilenet_v3_large_320_fpn", weights=None,
                                                     weights_backbone=None)), (3, 320, 320), False),
]
FLOAT_BY_FILE = {f[0]: f for f in FLOAT}

DET_COVERS = {
    "ssdlite320_mobilenet_v3_large": (
        "whole model: transform (normalize, Resize to 320x320), MobileNetV3 backbone and SSDLite head are "
        "data-independent and hold every conv/matmul MAC; the postprocess (per-class score filter, TopK, "
        "NonMaxSuppression, box decoding) has data-dependent sizes but no conv/matmul MACs (FlopCounter "
        "counts none there), so onnxperf must count 0 MACs for it"),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (
        "data-independent part only: transform, MobileNetV3 + FPN backbone and RPN head (conv MACs). NOT "
        "covered: the RoI box head (TwoMLPHead + FastRCNNPredictor), whose MACs scale with the number of "
        "proposals left after NMS (data-dependent, up to 150 at test time)"),
}


def det_backbone_truth(wrapper: DetWrapper, x: torch.Tensor) -> tuple[int, dict]:
    """Faster R-CNN: MACs of transform + backbone + RPN head (no RoI heads)."""
    m = wrapper.m
    stack, fc = counting()
    with stack:
        images, _ = m.transform([x])
        feats = m.backbone(images.tensors)
        m.rpn.head(list(feats.values()))
    total = int(fc.get_total_flops())
    by_op = {str(k): int(v) for k, v in sorted(fc.get_flop_counts()["Global"].items(), key=str)}
    return total // 2, by_op


# --------------------------------------------------------------------------------------------- exporting
def build(fname):
    _, tvname, builder, shape, dyn = FLOAT_BY_FILE[fname]
    seed_everything()
    model = builder().eval()
    add_noise(model)
    return model, torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 2)), dyn


def export_float(fname, work, out, keep_weights, records):
    _, tvname, _, shape, _ = FLOAT_BY_FILE[fname]
    model, x, dyn = build(fname)
    full = os.path.join(work, fname)
    det = isinstance(model, DetWrapper)
    in_name = "image" if det else "input"
    out_names = ["boxes", "scores", "labels"] if det else ["logits" if "lraspp" not in fname else "out"]
    axes = {in_name: {0: "batch"}, **{o: {0: "batch"} for o in out_names}} if dyn else None
    print(f"== {fname}", flush=True)
    torch.onnx.export(model, (x,), full, dynamo=False, opset_version=OPSET, input_names=[in_name],
                      output_names=out_names, dynamic_axes=axes, do_constant_folding=True)
    with torch.no_grad():
        ref = flat_torch(model(x))
    got = ort_outputs(full, {in_name: x.numpy()})
    if det:  # random weights give many near-tied scores: NMS may keep other boxes, compare scores
        print(f"    onnxruntime ok, {len(got[1])} detections (torch {len(ref[1])}), max |sorted scores "
              f"ort - torch| = {np.abs(np.sort(ref[1]) - np.sort(got[1])).max() if got[1].size else 0:.3g}", flush=True)
    elif all(a.shape == b.shape for a, b in zip(ref, got)) and len(ref) == len(got):
        diff = max(float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0 for a, b in zip(ref, got))
        print(f"    onnxruntime ok, max |ort - torch| = {diff:.3g}", flush=True)
    else:
        print(f"    onnxruntime ok, output shapes {[g.shape for g in got]} (torch {[r.shape for r in ref]})")
    if tvname in DET_COVERS and "fasterrcnn" in tvname:
        macs, by_op = det_backbone_truth(model, x)
    else:
        macs, by_op = flop_truth(model, (x,))
    light = save_stripped(onnx.load(full), os.path.join(out, fname), keep_weights)
    src = f"torchvision {tvname}(weights=None" + (", weights_backbone=None)" if det or "lraspp" in fname
                                                  else ")")
    if det:
        src += "; wrapped: one CHW image in, (boxes, scores, labels) out"
    if "lraspp" in fname:
        src += "; wrapped to return ['out']"
    shp = "x".join(map(str, shape))
    rec = dict(
        file=f"models/corpus/{fname}", family="vision", exporter=LEGACY, source=src,
        dims={"batch": 1} if dyn else {}, input_shapes={},
        truth_macs=macs,
        truth_method=(f"torch.utils.flop_counter FLOPs/2, {shp}" if not det else
                      f"torch.utils.flop_counter FLOPs/2 on the wrapped model, image {shp}"
                      if "ssd" in fname else
                      f"torch.utils.flop_counter FLOPs/2 of transform + backbone + rpn.head, image {shp}"),
        published_gmacs=published_gmacs(tvname),
        truth_covers=DET_COVERS.get(tvname, "whole model"),
        truth_flops_by_op=by_op,
    )
    rec["truth_context"] = TRUTH_CTX
    if "fasterrcnn" in fname:  # the data-dependent part, per proposal, for the record
        m = model.m
        stack, fc = counting()
        with stack:
            m.roi_heads.box_predictor(m.roi_heads.box_head(torch.zeros(1, 256, 7, 7)))
        rec["roi_box_head_macs_per_proposal"] = int(fc.get_total_flops()) // 2
        rec["max_proposals_per_image"] = m.rpn._post_nms_top_n["testing"]
        rec["truth_macs_at_max_proposals"] = macs + rec["max_proposals_per_image"] * rec[
            "roi_box_head_macs_per_proposal"]
        rec["truth_note"] = (
            "onnxperf's MACs for this graph = truth_macs + proposals * roi_box_head_macs_per_proposal "
            "(proposals = RPN boxes kept after NMS, 0..max_proposals_per_image; random weights here give "
            "0 detections); truth_macs_at_max_proposals is the upper bound. torchvision's published 0.719 GMACs equals the data-independent part.")
    finish(rec, light, os.path.join(out, fname), records)


def finish(rec, light, path, records):
    h = op_hist(light)
    rec["ops"] = sorted(h)
    rec["nodes"] = len(light.graph.node)
    rec["nodes_in_subgraphs"] = sum(h.values()) - len(light.graph.node)
    rec["op_histogram"] = dict(sorted(h.items(), key=lambda kv: (-kv[1], kv[0])))
    rec["inputs"] = {i.name: [d.dim_value if d.HasField("dim_value") else d.dim_param
                              for d in i.type.tensor_type.shape.dim] for i in light.graph.input}
    rec["opsets"] = {(o.domain or "ai.onnx"): o.version for o in light.opset_import}
    print(f"    truth {rec['truth_macs']:,} MACs (published {rec.get('published_gmacs')} G); nodes "
          f"{rec['nodes']} (+{rec['nodes_in_subgraphs']} in subgraphs); size {os.path.getsize(path):,} B")
    print(f"    ops: {rec['op_histogram']}", flush=True)
    records[rec["file"]] = rec


def export_dynamo(fname, work, out, keep_weights, records):
    assert fname == "resnet18_dynamo.onnx"
    seed_everything()
    model = torchvision.models.resnet18(weights=None).eval()
    add_noise(model)
    x2 = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 2))
    print(f"== {fname}", flush=True)
    prog = torch.onnx.export(model, (x2,), dynamo=True, opset_version=18, input_names=["input"],
                             output_names=["logits"],
                             dynamic_shapes={"x": {0: torch.export.Dim("batch", min=1, max=4096)}})
    m = prog.model_proto
    # rename the batch symbol to `batch` whatever the exporter called it
    sym = m.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param == sym:
                d.dim_param = "batch"
    strip_metadata(m)
    full = os.path.join(work, fname)
    onnx.save_model(m, full)
    x = x2[:1]
    with torch.no_grad():
        ref = model(x).numpy()
    got = ort_outputs(full, {"input": x.numpy()})[0]
    print(f"    onnxruntime ok, max |ort - torch| = {np.abs(ref - got).max():.3g}")
    macs, by_op = flop_truth(model, (x,))
    light = save_stripped(onnx.load(full), os.path.join(out, fname), keep_weights)
    blob = light.SerializeToString()
    for bad in (b"stack_trace", b"/work/", b"site-packages", b"/usr/", b"/root/", b"/home/"):
        assert bad not in blob, bad
    rec = dict(
        file=f"models/corpus/{fname}", family="vision", exporter=f"torch {TORCH_V} dynamo, opset 18",
        source="torchvision resnet18(weights=None)", dims={"batch": 1}, input_shapes={}, truth_macs=macs,
        truth_method="torch.utils.flop_counter FLOPs/2, 1x3x224x224", published_gmacs=published_gmacs("resnet18"),
        truth_covers="whole model", truth_flops_by_op=by_op, truth_context=TRUTH_CTX)
    finish(rec, light, os.path.join(out, fname), records)


def strip_metadata(m: onnx.ModelProto) -> None:
    """Remove stack traces and anything holding an absolute path from node / graph / model metadata."""

    def keep(p):
        return p.key != "pkg.torch.onnx.stack_trace" and "/" not in p.value

    def clean(container):
        kept = [p for p in container.metadata_props if keep(p)]
        del container.metadata_props[:]
        container.metadata_props.extend(kept)

    clean(m)
    graphs = [m.graph] + [f for f in m.functions]
    clean(m.graph)
    for g in graphs:
        for n in (all_nodes(g) if isinstance(g, onnx.GraphProto) else g.node):
            clean(n)
            n.doc_string = ""


# -------------------------------------------------------------------------------------------- variants
class RandomReader:
    """CalibrationDataReader: a few random inputs."""

    def __init__(self, name, shape, n=3):
        rng = np.random.default_rng(SEED)
        self.data = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]
        self.it = iter(self.data)

    def get_next(self):
        return next(self.it, None)

    def rewind(self):
        self.it = iter(self.data)


def batch1(src_full: str, dst: str) -> str:
    """Copy of a full float export with the batch dim fixed to 1 (quantization needs static shapes)."""
    m = onnx.load(src_full)
    for vi in list(m.graph.input) + list(m.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param == "batch":
                d.dim_value = 1
    del m.graph.value_info[:]
    onnx.save_model(m, dst)
    return dst


# variant file -> (float source file, kind, description)
VARIANTS = {
    "resnet18_qdq.onnx": ("resnet18_torch.onnx", "qdq", "quantize_static QDQ (S8S8, per-tensor)"),
    "resnet18_qoperator.onnx": ("resnet18_torch.onnx", "qop", "quantize_static QOperator (U8S8)"),
    "efficientnet_b0_qoperator.onnx": ("efficientnet_b0_torch.onnx", "qop", "quantize_static QOperator (U8S8)"),
    "vit_b_16_qoperator.onnx": ("vit_b_16_torch.onnx", "qop", "quantize_static QOperator (U8S8)"),
    "vit_b_16_dynamic_quant.onnx": ("vit_b_16_torch.onnx", "dyn", "quantize_dynamic (weights S8)"),
    "efficientnet_b0_fp16.onnx": ("efficientnet_b0_torch.onnx", "fp16",
                                  "onnxruntime.transformers.float16.convert_float_to_float16(keep_io_types=True)"),
    "resnet18_ort_opt.onnx": ("resnet18_torch.onnx", "ortopt", "session-optimized, ORT_ENABLE_EXTENDED"),
    "vit_b_16_ort_opt.onnx": ("vit_b_16_torch.onnx", "ortopt", "session-optimized, ORT_ENABLE_EXTENDED"),
}


def make_variant(fname, work, out, keep_weights, records):
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    src, kind, desc = VARIANTS[fname]
    src_full = os.path.join(work, src)
    assert os.path.exists(src_full), f"{src_full} missing: export {src} first (keeps weights in --work)"
    src_rec = records.get(f"models/corpus/{src}")
    assert src_rec is not None, f"no fixture record for {src}"
    print(f"== {fname} ({desc}, from {src})", flush=True)
    full = os.path.join(work, fname)
    static = kind in ("qdq", "qop", "dyn")
    if static:
        b1 = batch1(src_full, os.path.join(work, "b1_" + src))
    shape = (1, 3, 224, 224)
    if kind in ("qdq", "qop"):
        reader = RandomReader("input", shape)
        if kind == "qdq":
            quantize_static(b1, full, reader, quant_format=QuantFormat.QDQ,
                            activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
        else:
            quantize_static(b1, full, reader, quant_format=QuantFormat.QOperator,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    elif kind == "dyn":
        quantize_dynamic(b1, full, weight_type=QuantType.QInt8)
    elif kind == "fp16":
        from onnxruntime.transformers.float16 import convert_float_to_float16

        m = onnx.load(src_full)
        del m.graph.value_info[:]
        onnx.save_model(convert_float_to_float16(m, keep_io_types=True), full)
    elif kind == "ortopt":
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = full
        so.log_severity_level = 3
        ort.InferenceSession(src_full, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(SEED + 5).standard_normal(shape).astype(np.float32)
    got = ort_outputs(full, {"input": x})[0]
    ref = ort_outputs(src_full, {"input": x})[0]
    print(f"    onnxruntime ok, max |variant - float| = {np.abs(ref - got).max():.3g} "
          f"(float output range {np.abs(ref).max():.3g})")
    m = onnx.load(full)  # must still load in onnx (ORT-optimized graphs too)
    light = save_stripped(m, os.path.join(out, fname), keep_weights)
    rec = dict(
        file=f"models/corpus/{fname}", family="vision",
        exporter=f"onnxruntime {ort.__version__} {desc}, from {src_rec['exporter']}",
        source=f"{src_rec['source']} -> models/corpus/{src}" + (" with batch fixed to 1" if static else ""),
        derived_from=f"models/corpus/{src}",
        dims={} if static else dict(src_rec["dims"]), input_shapes={},
        truth_macs=src_rec["truth_macs"],
        truth_method=f"float source's truth ({src_rec['truth_method']}): same network, same shapes",
        published_gmacs=src_rec["published_gmacs"], truth_covers="whole model")
    if kind in ("qdq", "qop", "dyn"):
        rec["calibration"] = ("3 random N(0,1) inputs, MinMax" if kind != "dyn" else "none (dynamic)")
    finish(rec, light, os.path.join(out, fname), records)


# ------------------------------------------------------------------------------------------------- main
# files made only when named in --only (none at present)
OPTIONAL: set[str] = set()
ORDER = [f[0] for f in FLOAT] + ["resnet18_dynamo.onnx"] + list(VARIANTS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "corpus"))
    ap.add_argument("--work", default="/tmp/onnxperf_vision_work",
                    help="folder for full exports with weights (variants are made from them)")
    ap.add_argument("--fixture", default=os.path.join(ROOT, FIXTURE))
    ap.add_argument("--keep-weights", action="store_true")
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    print(f"VERSIONS python {sys.version.split()[0]}, torch {torch.__version__}, torchvision "
          f"{torchvision.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy "
          f"{np.__version__}", flush=True)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    records = {}
    if os.path.exists(a.fixture):
        for r in json.load(open(a.fixture))["models"]:
            records[r["file"]] = r
    for fname in ORDER:
        if a.only and fname not in a.only:
            continue
        if fname in OPTIONAL and not a.only:
            continue
        if fname in FLOAT_BY_FILE:
            export_float(fname, a.work, a.out, a.keep_weights, records)
        elif fname == "resnet18_dynamo.onnx":
            export_dynamo(fname, a.work, a.out, a.keep_weights, records)
        else:
            make_variant(fname, a.work, a.out, a.keep_weights, records)
        write_fixture(a.fixture, records)


def write_fixture(path, records):
    rank = {f"models/corpus/{f}": i for i, f in enumerate(ORDER)}
    models = sorted(records.values(), key=lambda r: (rank.get(r["file"], 999), r["file"]))
    with open(path, "w") as f:
        json.dump({"models": models}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
