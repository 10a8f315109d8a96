"""Deterministic random inputs for a measured run, built from an :class:`~onnxperf.analysis.result.Analysis`.

Every graph input must have a static shape (bind symbolic dims with ``analyze(..., dims=...)``).
Values, per input, from ``numpy.random.default_rng([seed, input position])``:

* floating point: uniform in ``[-1, 1)``;
* integers that reach the indices of an embedding lookup — input 1 of a ``Gather`` whose input 0
  is a constant table with ``V`` rows along the gather axis (also the ids of
  ``com.microsoft::EmbedLayerNormalization``), directly or through
  Cast / Unsqueeze / Squeeze / Reshape / Flatten / Identity: uniform in ``[0, V)`` (the smallest
  ``V`` when several tables are reached);
* other integers named like a mask (``*mask*``, any case), and every bool input: all ones / True;
* other integers: uniform in ``[0, 2)``.

The size is computed from shapes before anything is allocated; inputs over ``max_bytes``
(default 4 GiB) are refused with :class:`~onnxperf.base.errors.OptionError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import onnx

from onnxperf.base import dtypes
from onnxperf.cost.walker import TensorRef
from onnxperf.base.errors import OptionError

if TYPE_CHECKING:
    from onnxperf.cost.analysis import Costs as Analysis
    from onnxperf.graph.loader import GraphIR

DEFAULT_MAX_BYTES = 4 << 30

#: ops that carry index values through unchanged (input 0 -> output 0)
_INDEX_PASS_THROUGH = frozenset({"Cast", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity"})
#: (domain, op_type) -> {indices input position: table input position}
_EMBEDDING_OPS: dict[tuple[str, str], dict[int, int]] = {
    ("", "Gather"): {1: 0},
    ("com.microsoft", "EmbedLayerNormalization"): {0: 2, 1: 4},
}


def _elem_type(ref: TensorRef) -> int:
    name = {"float32": "FLOAT", "float64": "DOUBLE"}.get(ref.dtype, ref.dtype.upper())
    try:
        return onnx.TensorProto.DataType.Value(name)
    except ValueError:
        raise OptionError(f"input {ref.name!r}: unknown element type {ref.dtype!r}") from None


def _static_shape(ref: TensorRef) -> tuple[int, ...]:
    if ref.shape is None:
        raise OptionError(f"input {ref.name!r}: shape unknown; give it with --input-shape {ref.name}=AxBxC")
    free = [str(d) for d in ref.shape if not isinstance(d, (int, np.integer))]
    if free:
        raise OptionError(f"input {ref.name!r}: shape {list(ref.shape)} is not static; bind "
                          + ", ".join(f"--dim {d}=N" for d in dict.fromkeys(free)))
    return tuple(int(d) for d in ref.shape)


def _refs(inputs: Analysis | Iterable[TensorRef] | Mapping[str, np.ndarray]) -> list[TensorRef] | None:
    model = getattr(inputs, "model", None)
    if model is not None:
        return list(model.inputs)
    if isinstance(inputs, Mapping):
        return None
    return list(inputs)


def memory_needed_bytes(inputs: Analysis | Iterable[TensorRef] | Mapping[str, np.ndarray]) -> int:
    """Bytes the inputs take: from shapes and dtypes (analysis or TensorRefs), or from arrays."""
    refs = _refs(inputs)
    if refs is None:
        return int(sum(np.asarray(a).nbytes for a in inputs.values()))  # type: ignore[union-attr]
    total = 0
    for ref in refs:
        et = _elem_type(ref)
        if dtypes.bits(et) is None:
            raise OptionError(f"input {ref.name!r}: cannot size inputs of type {ref.dtype}")
        total += dtypes.nbytes(et, math.prod(_static_shape(ref)))  # exact: int64 would wrap at 2^63
    return total


def embedding_bounds(graph: GraphIR) -> dict[str, int]:
    """Graph input name -> number of rows of the smallest embedding table its values index."""
    producer: dict[str, onnx.NodeProto] = {}
    for node in graph.nodes:
        for out in node.output:
            producer[out] = node
    inputs = set(graph.inputs)
    bounds: dict[str, int] = {}
    for node in graph.nodes:
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        slots = _EMBEDDING_OPS.get((domain, node.op_type))
        if not slots:
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0) if node.op_type == "Gather" else 0
        for idx_pos, table_pos in slots.items():
            if len(node.input) <= max(idx_pos, table_pos):
                continue
            table = graph.initializers.get(node.input[table_pos]) or graph.constants.get(node.input[table_pos])
            if table is None or not table.dims:
                continue
            rows = table.dims[axis % len(table.dims)]
            tensor = node.input[idx_pos]
            seen: set[str] = set()
            while tensor not in inputs and tensor in producer and tensor not in seen:
                seen.add(tensor)
                p = producer[tensor]
                if p.op_type not in _INDEX_PASS_THROUGH or not p.input:
                    break
                tensor = p.input[0]
            if tensor in inputs and rows > 0:
                bounds[tensor] = min(rows, bounds.get(tensor, rows))
    return bounds


def make_inputs(analysis: Analysis, seed: int = 0, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, np.ndarray]:
    """One array per graph input (see the module docstring for the value ranges)."""
    refs = list(analysis.model.inputs)
    shapes = {r.name: _static_shape(r) for r in refs}
    need = memory_needed_bytes(refs)
    if need > max_bytes:
        raise OptionError(f"inputs need {need:,} bytes, over the {max_bytes:,}-byte limit; "
                          "use smaller dims or raise the limit")
    bounds = embedding_bounds(analysis.loaded.graph) if analysis.loaded is not None else {}
    out: dict[str, np.ndarray] = {}
    for pos, ref in enumerate(refs):
        et = _elem_type(ref)
        shape = shapes[ref.name]
        rng = np.random.default_rng([seed, pos])
        if et == onnx.TensorProto.BOOL:
            out[ref.name] = np.ones(shape, dtype=bool)
            continue
        try:
            np_dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(et))
        except (KeyError, TypeError, ValueError):
            raise OptionError(f"input {ref.name!r}: cannot generate values of type {ref.dtype}") from None
        if dtypes.is_float(et):
            if np_dtype.kind != "f":
                raise OptionError(f"input {ref.name!r}: cannot generate values of type {ref.dtype} with numpy")
            out[ref.name] = rng.uniform(-1.0, 1.0, shape).astype(np_dtype)
        elif np_dtype.kind in "iu":
            if ref.name in bounds:
                high = min(bounds[ref.name], int(np.iinfo(np_dtype).max) + 1)
                out[ref.name] = rng.integers(0, high, shape, dtype=np_dtype)
            elif "mask" in ref.name.lower():
                out[ref.name] = np.ones(shape, dtype=np_dtype)
            else:
                out[ref.name] = rng.integers(0, 2, shape, dtype=np_dtype)
        else:
            raise OptionError(f"input {ref.name!r}: cannot generate values of type {ref.dtype}")
    return out


__all__ = ["DEFAULT_MAX_BYTES", "embedding_bounds", "make_inputs", "memory_needed_bytes"]
