"""Builders for tiny models used across the tests (onnx.helper, in memory)."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

import onnxperf
from onnxperf.cost.walker import NodeCost

F32 = TensorProto.FLOAT
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def benchmark(file: str, name: str) -> types.ModuleType:
    """``benchmarks/<file>`` loaded by path as module ``name`` (the benchmarks are scripts, not a package;
    tests/test_packaging.py), registered in ``sys.modules`` as dataclasses need."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / file)
    mod = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def vi(name: str, shape: Sequence[int | str | None] | None, dtype: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, None if shape is None else list(shape))


def const(name: str, shape: Sequence[int], dtype: int = F32, values: Any = None) -> onnx.TensorProto:
    """An initializer; values default to zeros (only shapes matter to the analysis)."""
    np_dtype = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    arr = np.zeros(shape, dtype=np_dtype) if values is None else np.asarray(values, dtype=np_dtype).reshape(shape)
    return onnx.numpy_helper.from_array(arr, name)


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], initializers: Sequence[onnx.TensorProto] = (),
          opset: int = 17, extra_opsets: dict[str, int] | None = None, ir_version: int | None = None) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    for dom, ver in (extra_opsets or {}).items():
        opsets.append(helper.make_opsetid(dom, ver))
    g = helper.make_graph(list(nodes), "test", list(inputs), list(outputs), list(initializers))
    m = helper.make_model(g, opset_imports=opsets)
    if ir_version is not None:
        m.ir_version = ir_version
    elif opset <= 21:
        m.ir_version = min(m.ir_version, 10)
    return m


def single(op_type: str, inputs: dict[str, tuple[Sequence[int | str], int] | Sequence[int | str] | None],
           outputs: Sequence[str] = ("y",), *, inits: Sequence[onnx.TensorProto] = (), opset: int = 17,
           domain: str = "", extra_opsets: dict[str, int] | None = None,
           out_shapes: dict[str, Sequence[int | str]] | None = None, out_dtype: int | None = None,
           **attrs: Any) -> onnx.ModelProto:
    """A one-node model. ``inputs`` maps input name -> shape (float32) or (shape, dtype);
    ``None`` as a value leaves that input slot empty (an absent optional input).
    Names that match an initializer in ``inits`` are fed from it instead of a graph input."""
    init_names = {t.name for t in inits}
    gin = []
    names = []
    for name, spec in inputs.items():
        if spec is None:
            names.append("")
            continue
        names.append(name)
        if name in init_names:
            continue
        shape, dtype = (spec if (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], int)
                                 and not isinstance(spec[0], int)) else (spec, F32))
        gin.append(vi(name, shape, dtype))
    node = helper.make_node(op_type, names, list(outputs), domain=domain or None, **attrs)
    outs = [helper.make_tensor_value_info(o, out_dtype or 0, (out_shapes or {}).get(o)) for o in outputs if o]
    opsets = dict(extra_opsets or {})
    if domain and domain not in opsets:
        opsets[domain] = 1
    return model([node], gin, outs, inits, opset=opset, extra_opsets=opsets)


def cost(m: onnx.ModelProto, **kw: Any) -> NodeCost:
    """The cost record of the model's first main-graph node."""
    a = onnxperf.analyze(m, **kw)
    return a.main_nodes[0]
