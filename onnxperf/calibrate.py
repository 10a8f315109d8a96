"""``onnxperf hw calibrate``: how much of the roofline each op family attains on this machine.

A fixed suite of small single-op models (never the model being validated) runs through
onnxruntime; each op's measured kernel time is set against its plain roofline terms and the
fit gives, per family f, a compute efficiency e_c,f, a memory efficiency e_m,f, and one
per-node dispatch overhead o:

    t ≈ max(W / (e_c,f · π), Q / (e_m,f · β)) + o

* o: the median measured time of the suite's tiny ops (a few hundred elements), whose roofline
  time is negligible;
* e_m,f: median over the family's memory-bound samples of (Q/β) / (t − o);
* e_c,f: median over its compute-bound samples of (W/π) / (t − o);
* a family without samples of one kind takes the median over all families (``default.*``).

Efficiencies are clipped to [0.005, 4]: above 1 means the machine beats its spec's roof (caches
serve repeated reads faster than DRAM), which is real on small working sets.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def _w(name: str, shape: list[int], seed: int) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.05).astype(np.float32), name)


def _model(name: str, nodes, inputs, outputs, inits=(), opset: int = 17) -> onnx.ModelProto:
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxperf-calibrate")
    m.ir_version = 8
    # graph outputs get their inferred types, so every suite model passes onnx.checker
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


def _vi(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, F32, shape)


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    model: onnx.ModelProto


def _conv(name, n, c_in, c_out, hw, k, stride=1, group=1) -> Case:
    pad = k // 2
    ho = (hw + 2 * pad - k) // stride + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[stride, stride],
                            pads=[pad] * 4, group=group)
    return Case(name, "conv", _model(name, [node], [_vi("x", [n, c_in, hw, hw])], [_vi("y", [n, c_out, ho, ho])],
                                     [_w("w", [c_out, c_in // group, k, k], 1), _w("b", [c_out], 2)]))


def _matmul(name, b, m, k, n) -> Case:
    shape_a = [b, m, k] if b > 1 else [m, k]
    node = helper.make_node("MatMul", ["a", "w"], ["y"])
    return Case(name, "matmul", _model(name, [node], [_vi("a", shape_a)], [_vi("y", None)], [_w("w", [k, n], 3)]))


def _unary(name, op, family, shape, **attrs) -> Case:
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    return Case(name, family, _model(name, [node], [_vi("x", shape)], [_vi("y", None)]))


def _binary(name, op, shape) -> Case:
    node = helper.make_node(op, ["x", "z"], ["y"])
    return Case(name, "elementwise", _model(name, [node], [_vi("x", shape), _vi("z", shape)], [_vi("y", None)]))


def suite(scale: float = 1.0) -> list[Case]:
    """The fixed calibration suite. ``scale`` < 1 shrinks the spatial/row sizes (tests)."""
    s = max(scale, 1 / 64)

    def d(x: int) -> int:
        return max(int(x * s), 2)

    cases = [
        _conv("conv3x3_64", 1, 64, 64, d(56), 3),
        _conv("conv1x1_256_64", 1, 256, 64, d(56), 1),
        _conv("conv1x1_64_256", 1, 64, 256, d(56), 1),
        _conv("conv7x7_s2_stem", 1, 3, 64, d(224), 7, stride=2),
        _conv("conv3x3_256", 1, 256, 256, d(14), 3),
        _conv("dwconv3x3_144", 1, 144, 144, d(56), 3, group=144),
        _conv("dwconv3x3_960", 1, 960, 960, d(7), 3, group=960),
        _conv("gconv3x3_g8", 1, 128, 128, d(28), 3, group=8),
        _matmul("gemm_64", 1, 64, 64, 64),
        _matmul("gemm_256", 1, 256, 256, 256),
        _matmul("gemm_1024", 1, d(1024), 1024, 1024),
        _matmul("gemv_4096", 1, 1, 4096, 4096),
        _matmul("bmm_16x128", 16, d(128), 64, 128),
        _matmul("linear_tokens", 1, d(512), 768, 3072),
        _binary("add_1m", "Add", [d(1024), 1024]),
        _binary("mul_4m", "Mul", [d(4096), 1024]),
        _binary("add_tiny", "Add", [16, 16]),
        _unary("relu_4m", "Relu", "activation", [d(4096), 1024]),
        _unary("sigmoid_1m", "Sigmoid", "activation", [d(1024), 1024]),
        _unary("erf_1m", "Erf", "elementwise", [d(1024), 1024]),
        _unary("relu_tiny", "Relu", "activation", [16, 16]),
        _unary("softmax_rows", "Softmax", "activation", [d(2048), 512], axis=-1),
        _unary("reducemean_rows", "ReduceMean", "reduce", [d(2048), 512], axes=[-1]),
        _unary("transpose_4d", "Transpose", "movement", [8, d(128), 12, 64], perm=[0, 2, 1, 3]),
        _unary("maxpool_3x3_s2", "MaxPool", "pool", [1, 64, d(112), d(112)], kernel_shape=[3, 3],
               strides=[2, 2], pads=[1, 1, 1, 1]),
        _unary("gap_2048", "GlobalAveragePool", "pool", [1, 2048, 7, 7]),
    ]
    ln = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)
    cases.append(Case("layernorm_768", "norm", _model("layernorm_768", [ln], [_vi("x", [d(512), 768])],
                                                        [_vi("y", None)], [_w("g", [768], 4), _w("b", [768], 5)])))
    bn = helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"])
    v = numpy_helper.from_array(np.ones(64, np.float32), "v")
    cases.append(Case("batchnorm_64", "norm", _model("batchnorm_64", [bn], [_vi("x", [1, 64, d(112), d(112)])],
                                                       [_vi("y", None)], [_w("g", [64], 6), _w("b", [64], 7),
                                                                          _w("m", [64], 8), v])))
    cat = helper.make_node("Concat", ["x", "z"], ["y"], axis=1)
    cases.append(Case("concat_c", "movement", _model("concat_c", [cat], [_vi("x", [1, 128, d(56), d(56)]),
                                                                        _vi("z", [1, 128, d(56), d(56)])],
                                                     [_vi("y", None)])))
    gat = helper.make_node("Gather", ["t", "i"], ["y"], axis=0)
    cases.append(Case("gather_rows", "gather_scatter", _model(
        "gather_rows", [gat], [helper.make_tensor_value_info("i", TensorProto.INT64, [d(512)])], [_vi("y", None)],
        [_w("t", [8192, 768], 9)])))
    return cases


@dataclass(frozen=True)
class Sample:
    """One measured op of the suite with its plain roofline terms."""

    case: str
    family: str
    compute_s: float  # W / π
    memory_s: float  # Q / β
    measured_s: float

    @property
    def plain_s(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def compute_bound(self) -> bool:
        return self.compute_s >= self.memory_s


_CLIP = (0.005, 4.0)
#: cases whose roofline time is negligible: their measured time is the dispatch overhead
TINY = frozenset({"add_tiny", "relu_tiny"})


def _clip(x: float) -> float:
    return min(max(x, _CLIP[0]), _CLIP[1])


def fit_efficiency(samples: Iterable[Sample]) -> dict[str, float]:
    """The efficiency table of a calibrated spec (see the module docstring)."""
    samples = list(samples)
    tiny = [s.measured_s for s in samples if s.case in TINY]
    overhead = statistics.median(tiny) if tiny else 0.0
    by_fam: dict[str, dict[str, list[float]]] = {}
    for s in samples:
        if s.case in TINY:
            continue
        t = max(s.measured_s - overhead, s.measured_s * 0.1)
        kind = "compute" if s.compute_bound else "memory"
        term = s.compute_s if s.compute_bound else s.memory_s
        by_fam.setdefault(s.family, {"compute": [], "memory": []})[kind].append(term / t)
    out: dict[str, float] = {"overhead_s": overhead}
    all_c = [x for v in by_fam.values() for x in v["compute"]]
    all_m = [x for v in by_fam.values() for x in v["memory"]]
    out["default.compute"] = _clip(statistics.median(all_c)) if all_c else 1.0
    out["default.memory"] = _clip(statistics.median(all_m)) if all_m else 1.0
    for fam in sorted(by_fam):
        for kind in ("compute", "memory"):
            vals = by_fam[fam][kind]
            if vals:
                out[f"{fam}.{kind}"] = _clip(statistics.median(vals))
    return out


def calibrated(spec, efficiency: dict[str, float]):
    """A copy of ``spec`` carrying the fitted efficiencies, its id suffixed ``-calibrated``."""
    return replace(spec, id=f"{spec.id}-calibrated" if not spec.id.endswith("-calibrated") else spec.id,
                   efficiency=dict(efficiency))
