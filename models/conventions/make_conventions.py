"""Build the convention fixtures: small PyTorch modules, one per op family case, counted by the
real tools and exported to ONNX.

For every case this script

1. builds the module with seeded random weights (plus N(0, 1e-3) noise on every float parameter
   and buffer, so the legacy exporter merges no initializers), and seeded random inputs;
2. counts it with ``torch.utils.flop_counter.FlopCounterMode`` (CPU, default backends, autograd
   enabled: under ``torch.no_grad()`` ``nn.MultiheadAttention`` takes a fused fast path that the
   counter and the exporter both see differently) and with fvcore's ``FlopCountAnalysis``;
3. exports it with the legacy TorchScript exporter
   (``torch.onnx.export(..., dynamo=False, opset_version=17)``, static shapes), weights as external
   data in ``<case>.onnx.data``, which is deleted (tensors of up to 64 elements stay inline);
4. writes ``tests/fixtures/conventions_tools.json``: per case the tools' totals, their per-operator
   counts, fvcore's unsupported operators, and, where the ONNX graph cannot carry what the tool saw,
   the reason and the figure onnxperf gives instead, derived from the tool (a second run of the
   tool with another backend, or the tool's own formula for the part it did not see).

Units: FlopCounterMode's total is FLOPs (2 per multiply-add); fvcore's is multiply-adds (it
calls them flops). ``onnxperf.analyze(path, convention="torch").totals.flops`` is compared with
the first, ``convention="fvcore"`` ``.totals.flops`` with the second
(``tests/test_conventions_tools.py``).

Versions used: torch 2.13.0 (CPU), fvcore 0.1.5.post20221221, onnx 1.23.2, numpy 2.4.6.
Not run by CI. Rerun from the repository root; reruns are byte-identical:

    /work/venv-nlp/bin/pip install fvcore
    /work/venv-nlp/bin/python models/conventions/make_conventions.py
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

import fvcore
from fvcore.nn import FlopCountAnalysis

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from onnxperf.cost import conventions  # noqa: E402  (the limit texts; imports nothing but the standard library)

SEED = 20240516
NOISE_STD = 1e-3
OPSET = 17
INLINE_MAX_ELEMENTS = 64
SIZE_THRESHOLD = sys.getsizeof(b"") + INLINE_MAX_ELEMENTS * 4 + 1
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "conventions_tools.json")


# --------------------------------------------------------------------------- modules

class Fn(nn.Module):
    """A stateless function as a module (torch.matmul, einsum, SDPA, interpolate ...)."""

    def __init__(self, f: Callable, text: str):
        super().__init__()
        self.f = f
        self.text = text

    def forward(self, *xs):
        return self.f(*xs)

    def extra_repr(self) -> str:
        return self.text


class SelfAttention(nn.Module):
    """nn.MultiheadAttention used as self-attention (query = key = value = x)."""

    def __init__(self, embed: int, heads: int):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed, heads, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class RecurrentOut(nn.Module):
    """A recurrent module's output sequence only."""

    def __init__(self, rnn: nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


# --------------------------------------------------------------------------- cases

@dataclass
class Gap:
    """Where the ONNX graph cannot carry what a tool saw: why, and how the figure onnxperf gives
    instead is derived from the tool (``reference(case, model, inputs) -> (value, how)``)."""

    limit: str  # a key of onnxperf.cost.conventions.ONNX_LIMITS
    reference: Callable


@dataclass
class Case:
    name: str
    family: str
    build: Callable[[], nn.Module]
    inputs: list[tuple[int, ...]]
    train: bool = False
    gaps: dict[str, Gap] = field(default_factory=dict)


def _torch_total(model, xs) -> tuple[int, dict[str, int]]:
    with FlopCounterMode(display=False) as fc:
        model(*xs)
    by_op = {str(k): int(v) for k, v in fc.get_flop_counts().get("Global", {}).items()}
    return int(fc.get_total_flops()), dict(sorted(by_op.items()))


def _torch_math_sdpa(case, model, xs):
    with sdpa_kernel(SDPBackend.MATH):
        value, _ = _torch_total(model, xs)
    return value, "FlopCounterMode with sdpa_kernel(SDPBackend.MATH): the attention products run as bmm"


def _fvcore_plus_sdpa(shapes_of: Callable):
    def ref(case, model, xs):
        q, k, v = shapes_of(case, xs)
        value = _fvcore_total(model, xs)[0] + sdpa_flop_count(q, k, v) // 2
        return value, ("fvcore's total + the multiply-adds of the two attention products by torch's "
                       "sdpa_flop_count(q, k, v) / 2")
    return ref


def _sdpa_shapes(case, xs):
    return tuple(x.shape for x in xs)


def _mha_shapes(case, xs):
    b, s, e = xs[0].shape
    heads = 4
    shape = (b, heads, s, e // heads)
    return shape, shape, shape


def _fvcore_minus_input(case, model, xs):
    value = _fvcore_total(model, xs)[0] - xs[0].numel()
    return value, "fvcore's total − 1 per input element of its adaptive_avg_pool2d handler"


def _fvcore_minus_bn(case, model, xs):
    bn_out = model[0](xs[0]).numel()
    value = _fvcore_total(model, xs)[0] - 2 * bn_out
    return value, "fvcore's total − 2 per element of its batch_norm handler (inference, affine)"


def _fvcore_affine_to_plain(case, model, xs):
    # fvcore's norm counter: 5 per element with an affine weight, 4 without
    value = _fvcore_total(model, xs)[0] // 5 * 4
    return value, "fvcore's norm count without the affine weight: 4 instead of 5 per element"


LIMITS = conventions.ONNX_LIMITS  # the texts docs/conventions.md shows, by key

r = torch.randn


def cases() -> list[Case]:
    sdpa_torch = Gap("sdpa_cpu", _torch_math_sdpa)
    return [
        # convolutions
        Case("conv1d", "conv", lambda: nn.Conv1d(4, 8, 3, padding=1), [(2, 4, 16)]),
        Case("conv2d", "conv", lambda: nn.Conv2d(3, 8, 3, stride=2, padding=1), [(2, 3, 16, 16)]),
        Case("conv2d_nobias", "conv", lambda: nn.Conv2d(3, 8, 3, bias=False), [(1, 3, 10, 10)]),
        Case("conv3d", "conv", lambda: nn.Conv3d(2, 4, 3, padding=1), [(1, 2, 6, 6, 6)]),
        Case("conv2d_grouped", "conv", lambda: nn.Conv2d(8, 12, 3, groups=4), [(1, 8, 9, 9)]),
        Case("conv2d_depthwise", "conv", lambda: nn.Conv2d(8, 8, 3, groups=8, padding=1), [(2, 8, 7, 7)]),
        Case("conv_transpose1d", "conv", lambda: nn.ConvTranspose1d(4, 6, 3, stride=2), [(2, 4, 7)]),
        Case("conv_transpose2d", "conv", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1),
             [(1, 4, 5, 5)]),
        Case("conv_transpose2d_grouped", "conv", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2),
             [(1, 4, 5, 5)]),
        Case("conv_transpose3d", "conv", lambda: nn.ConvTranspose3d(2, 3, 2, stride=2), [(1, 2, 3, 3, 3)]),
        # linear and matrix products
        Case("linear_2d", "matmul", lambda: nn.Linear(16, 8), [(4, 16)]),
        Case("linear_3d", "matmul", lambda: nn.Linear(16, 8), [(2, 5, 16)]),
        Case("linear_nobias", "matmul", lambda: nn.Linear(16, 8, bias=False), [(2, 5, 16)]),
        Case("matmul_2d", "matmul", lambda: Fn(torch.matmul, "matmul"), [(3, 4), (4, 5)]),
        Case("matmul_4d", "matmul", lambda: Fn(torch.matmul, "matmul"), [(2, 3, 4, 5), (2, 3, 5, 6)]),
        Case("matmul_broadcast", "matmul", lambda: Fn(torch.matmul, "matmul"), [(3, 4), (2, 4, 5)]),
        Case("bmm", "matmul", lambda: Fn(torch.bmm, "bmm"), [(3, 4, 5), (3, 5, 6)]),
        Case("einsum_bmm", "matmul", lambda: Fn(lambda a, b: torch.einsum("bij,bjk->bik", a, b), "bij,bjk->bik"),
             [(2, 3, 4), (2, 4, 5)]),
        Case("einsum_scores", "matmul",
             lambda: Fn(lambda a, b: torch.einsum("bhqd,bhkd->bhqk", a, b), "bhqd,bhkd->bhqk"),
             [(2, 3, 4, 5), (2, 3, 6, 5)]),
        Case("einsum_outer_sum", "matmul", lambda: Fn(lambda a, b: torch.einsum("ij,k->i", a, b), "ij,k->i"),
             [(3, 4), (5,)]),
        Case("einsum_ellipsis_implicit", "matmul",
             lambda: Fn(lambda a, b: torch.einsum("...ij,...jk", a, b), "...ij,...jk"),
             [(2, 3, 4), (2, 4, 5)]),
        Case("einsum_three", "matmul",
             lambda: Fn(lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c), "ij,jk,kl->il"),
             [(2, 3), (3, 4), (4, 5)]),
        # attention
        Case("sdpa", "attention",
             lambda: Fn(F.scaled_dot_product_attention, "scaled_dot_product_attention"),
             [(2, 4, 8, 16), (2, 4, 8, 16), (2, 4, 8, 16)],
             gaps={"torch": sdpa_torch, "fvcore": Gap("sdpa_fvcore", _fvcore_plus_sdpa(_sdpa_shapes))}),
        Case("sdpa_cross", "attention",
             lambda: Fn(F.scaled_dot_product_attention, "scaled_dot_product_attention"),
             [(1, 2, 6, 8), (1, 2, 10, 8), (1, 2, 10, 4)],  # d_v != d_q: the CPU math path, counted
             gaps={"fvcore": Gap("sdpa_fvcore", _fvcore_plus_sdpa(_sdpa_shapes))}),
        Case("multihead_attention", "attention", lambda: SelfAttention(32, 4), [(2, 8, 32)],
             gaps={"torch": sdpa_torch, "fvcore": Gap("sdpa_fvcore", _fvcore_plus_sdpa(_mha_shapes))}),
        # normalizations
        Case("batchnorm2d", "norm", lambda: nn.BatchNorm2d(4), [(2, 4, 5, 5)]),
        Case("batchnorm1d", "norm", lambda: nn.BatchNorm1d(6), [(3, 6, 7)]),
        Case("conv_batchnorm2d", "norm", lambda: nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4)),
             [(2, 3, 7, 7)], gaps={"fvcore": Gap("batch_norm_folded", _fvcore_minus_bn)}),
        Case("batchnorm2d_train", "norm", lambda: nn.BatchNorm2d(4), [(2, 4, 5, 5)], train=True),
        Case("layernorm", "norm", lambda: nn.LayerNorm(16), [(2, 5, 16)]),
        Case("layernorm_noaffine", "norm", lambda: nn.LayerNorm(16, elementwise_affine=False), [(2, 5, 16)]),
        Case("groupnorm", "norm", lambda: nn.GroupNorm(2, 4), [(2, 4, 5, 5)],
             gaps={"fvcore": Gap("group_norm_17", _fvcore_affine_to_plain)}),
        Case("instancenorm2d", "norm", lambda: nn.InstanceNorm2d(4), [(2, 4, 5, 5)]),
        Case("instancenorm2d_affine", "norm", lambda: nn.InstanceNorm2d(4, affine=True), [(2, 4, 5, 5)]),
        # pooling
        Case("maxpool2d", "pool", lambda: nn.MaxPool2d(2), [(2, 4, 8, 8)]),
        Case("avgpool2d", "pool", lambda: nn.AvgPool2d(3, stride=2, padding=1), [(2, 4, 8, 8)]),
        Case("adaptive_avgpool2d_1", "pool", lambda: nn.AdaptiveAvgPool2d(1), [(2, 4, 6, 6)]),
        Case("adaptive_avgpool2d_2", "pool", lambda: nn.AdaptiveAvgPool2d(2), [(2, 4, 6, 6)],
             gaps={"fvcore": Gap("adaptive_avg_pool", _fvcore_minus_input)}),
        Case("adaptive_avgpool1d_1", "pool", lambda: nn.AdaptiveAvgPool1d(1), [(2, 4, 6)]),
        Case("adaptive_avgpool3d_1", "pool", lambda: nn.AdaptiveAvgPool3d(1), [(1, 2, 3, 4, 5)]),
        Case("adaptive_maxpool2d_1", "pool", lambda: nn.AdaptiveMaxPool2d(1), [(2, 4, 6, 6)]),
        # resize / upsample
        Case("upsample_nearest2d", "resize", lambda: nn.Upsample(scale_factor=2, mode="nearest"), [(2, 4, 5, 5)]),
        Case("upsample_bilinear2d", "resize", lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
             [(2, 4, 5, 5)]),
        Case("upsample_bilinear2d_aligned", "resize",
             lambda: nn.Upsample(size=(7, 9), mode="bilinear", align_corners=True), [(1, 3, 4, 5)]),
        Case("grid_sample", "resize",
             lambda: Fn(lambda x, g: F.grid_sample(x, g, align_corners=False), "grid_sample bilinear"),
             [(1, 3, 5, 6), (1, 4, 7, 2)]),
        Case("upsample_bicubic2d", "resize", lambda: nn.Upsample(scale_factor=2, mode="bicubic"), [(1, 2, 4, 4)]),
        Case("upsample_nearest1d", "resize", lambda: nn.Upsample(scale_factor=2, mode="nearest"), [(2, 4, 5)]),
        Case("upsample_linear1d", "resize", lambda: nn.Upsample(scale_factor=2, mode="linear"), [(2, 4, 5)]),
        Case("upsample_nearest3d", "resize", lambda: nn.Upsample(scale_factor=2, mode="nearest"),
             [(1, 2, 3, 3, 3)]),
        Case("upsample_trilinear3d", "resize", lambda: nn.Upsample(scale_factor=2, mode="trilinear"),
             [(1, 2, 3, 3, 3)]),
        # recurrent
        Case("lstm", "rnn", lambda: RecurrentOut(nn.LSTM(8, 16)), [(5, 2, 8)]),
        Case("lstm_bidirectional", "rnn", lambda: RecurrentOut(nn.LSTM(8, 16, bidirectional=True)), [(5, 2, 8)]),
        Case("gru", "rnn", lambda: RecurrentOut(nn.GRU(8, 16)), [(5, 2, 8)]),
        Case("gru_two_layers", "rnn", lambda: RecurrentOut(nn.GRU(8, 16, num_layers=2)), [(5, 2, 8)]),
        Case("rnn_tanh", "rnn", lambda: RecurrentOut(nn.RNN(8, 16)), [(5, 2, 8)]),
        Case("rnn_relu_batch_first", "rnn", lambda: RecurrentOut(nn.RNN(8, 16, nonlinearity="relu",
                                                                         batch_first=True)), [(2, 5, 8)]),
        # elementwise and activations
        Case("relu", "activation", lambda: nn.ReLU(), [(2, 4, 5)]),
        Case("gelu", "activation", lambda: nn.GELU(), [(2, 4, 5)]),
        Case("sigmoid", "activation", lambda: nn.Sigmoid(), [(2, 4, 5)]),
        Case("silu", "activation", lambda: nn.SiLU(), [(2, 4, 5)]),
        Case("softmax", "activation", lambda: nn.Softmax(dim=-1), [(2, 4, 5)]),
        Case("add_mul", "elementwise", lambda: Fn(lambda a, b: a * b + a, "a * b + a"), [(2, 4, 5), (2, 4, 5)]),
        Case("det", "matmul", lambda: Fn(torch.linalg.det, "linalg.det"), [(2, 4, 4)]),
    ]


# --------------------------------------------------------------------------- counting and export

def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def add_noise(model: nn.Module) -> None:
    """N(0, 1e-3) noise on every float parameter and buffer (|noise| on variances)."""
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point():
                noise = torch.randn(t.shape, generator=g, dtype=t.dtype) * NOISE_STD
                t.add_(noise.abs() if name.endswith("running_var") else noise)


def _fvcore_total(model, xs) -> tuple[int, dict[str, int], dict[str, int]]:
    fa = FlopCountAnalysis(model, tuple(xs))
    fa.unsupported_ops_warnings(False)
    fa.uncalled_modules_warnings(False)
    total = fa.total()
    if total != int(total):
        raise ValueError(f"fvcore gave a fractional count {total}")
    by_op = {k: int(v) for k, v in fa.by_operator().items()}
    return int(total), dict(sorted(by_op.items())), dict(sorted(fa.unsupported_ops().items()))


def _set_mode(model: nn.Module, train: bool) -> nn.Module:
    return model.train() if train else model.eval()


def build(case: Case) -> tuple[nn.Module, list[torch.Tensor]]:
    seed_everything()
    model = case.build()
    add_noise(model)
    g = torch.Generator().manual_seed(SEED + 2)
    xs = [torch.randn(s, generator=g) for s in case.inputs]
    return _set_mode(model, case.train), xs


def export(case: Case, model: nn.Module, xs: list[torch.Tensor], out_dir: str) -> str:
    fname = f"{case.name}.onnx"
    path = os.path.join(out_dir, fname)
    names = [f"x{i}" for i in range(len(xs))]
    kwargs = {}
    if case.train:
        kwargs = {"training": torch.onnx.TrainingMode.TRAINING, "do_constant_folding": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(xs), path, dynamo=False, opset_version=OPSET,
                          input_names=names, output_names=["y"], **kwargs)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    data = fname + ".data"
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
                    size_threshold=SIZE_THRESHOLD, convert_attribute=True)
    data_path = os.path.join(out_dir, data)
    if os.path.exists(data_path):
        os.remove(data_path)  # weights are not shipped: analysis reads only shapes and dtypes
    return os.path.relpath(path, ROOT)


def record(case: Case, out_dir: str) -> dict:
    model, xs = build(case)
    torch_total, torch_by_op = _torch_total(model, xs)
    # the counters do not change the module; rebuild anyway so every run starts from the same state
    model, xs = build(case)
    fv_total, fv_by_op, fv_unsupported = _fvcore_total(model, xs)
    model, xs = build(case)
    onnx_file = export(case, model, xs, out_dir)
    m = onnx.load(os.path.join(ROOT, onnx_file), load_external_data=False)
    rec = {
        "family": case.family,
        "module": repr(model),
        "mode": "train" if case.train else "eval",
        "inputs": [list(s) for s in case.inputs],
        "onnx_file": onnx_file,
        "onnx_ops": sorted({n.op_type for n in m.graph.node}),
        "torch": {"flops": torch_total, "by_operator": torch_by_op},
        "fvcore": {"flops": fv_total, "by_operator": fv_by_op, "unsupported": fv_unsupported},
        "gaps": {},
    }
    for tool, gap in sorted(case.gaps.items()):
        model, xs = build(case)
        value, how = gap.reference(case, model, xs)
        if value == rec[tool]["flops"]:
            raise AssertionError(f"{case.name}: the {tool} gap is not one: the reference equals the tool")
        rec["gaps"][tool] = {"limit": gap.limit, "reason": LIMITS[gap.limit], "onnxperf_flops": int(value),
                             "derived_as": how}
    return rec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="folder for the .onnx files")
    p.add_argument("--fixture", default=FIXTURE)
    p.add_argument("--only", nargs="*", help="case names (default: all)")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    out = {
        "generator": "models/conventions/make_conventions.py",
        "units": {"torch": "FLOPs (FlopCounterMode.get_total_flops(): 2 per multiply-add)",
                  "fvcore": "multiply-adds (FlopCountAnalysis.total(), which calls them flops)"},
        "versions": {"torch": torch.__version__, "fvcore": fvcore.__version__, "onnx": onnx.__version__,
                     "numpy": np.__version__},
        "exporter": f"torch.onnx.export(dynamo=False, opset_version={OPSET}) (legacy TorchScript exporter)",
        "cases": {},
    }
    for case in cases():
        if args.only and case.name not in args.only:
            continue
        rec = record(case, args.out)
        out["cases"][case.name] = rec
        print(f"{case.name:30s} torch {rec['torch']['flops']:>8}  fvcore {rec['fvcore']['flops']:>8}  "
              f"{','.join(rec['onnx_ops'])}")
    if not args.only:
        with open(args.fixture, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
