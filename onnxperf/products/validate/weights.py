"""A runnable copy of a model whose external weight files are missing.

The models onnxperf analyzes are often shipped without their ``.onnx.data`` files: the analysis
needs none, but onnxruntime does. :func:`with_random_weights` writes a copy of the graph next to a
fresh data file in which every external tensor gets data of its own shape and dtype:

* tensors whose bytes are present (file there and long enough) are copied unchanged, so small
  integer shape constants kept externally stay correct;
* missing floating-point tensors get ``normal(0, 1) * 0.02`` (bfloat16 by truncation of float32);
* missing int8 / uint8 tensors (quantized weights) get small values in ``[-8, 8)`` / ``[0, 16)``;
* every other missing type (wider integers, bool, float8, 4-bit types) gets zeros: zero is a valid
  index for any Gather, but a shape-like integer tensor kept externally and missing cannot be
  guessed and may make the copy fail to run (onnxruntime then says which node).

Data is streamed tensor by tensor into one file (64-byte aligned offsets), so a copy of a model
over 2 GB never holds all its weights in memory, and the graph proto itself stays small. All
locations are resolved with :func:`onnxperf.graph.loader.safe_external_path`: nothing outside the
model's folder is ever read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import ExternalDataError, OptionError
from onnxperf.graph.loader import read_model, safe_external_path

#: elements generated per chunk, to bound memory on very large tensors
_CHUNK_ELEMENTS = 1 << 24
_ALIGN = 64
_COPY_BYTES = 1 << 24

_T = onnx.TensorProto
_FLOAT_NP = {_T.FLOAT: np.dtype("<f4"), _T.DOUBLE: np.dtype("<f8"), _T.FLOAT16: np.dtype("<f2")}


def iter_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto of a graph: initializers, sparse values, Constant attributes, subgraphs."""
    yield from graph.initializer
    for sp in graph.sparse_initializer:
        yield sp.values
        yield sp.indices
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t
            elif a.type == onnx.AttributeProto.TENSORS:
                yield from a.tensors
            elif a.type == onnx.AttributeProto.GRAPH:
                yield from iter_tensors(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from iter_tensors(g)


def _external(t: onnx.TensorProto) -> dict[str, str] | None:
    if t.data_location != _T.EXTERNAL:
        return None
    return {e.key: e.value for e in t.external_data}


def _numel(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= int(d)
    return n


def _span(t: onnx.TensorProto, info: dict[str, str]) -> tuple[int, int]:
    """(offset, length) of a tensor's bytes in its external file."""
    want = dtypes.nbytes(t.data_type, _numel(t))
    try:
        offset = int(info.get("offset") or 0)
        length = int(info.get("length") or want)
    except ValueError:
        raise ExternalDataError(f"tensor {t.name!r}: malformed external offset/length") from None
    return offset, length


def _available(base_dir: Path, t: onnx.TensorProto, info: dict[str, str], sizes: dict[Path, int | None]) -> Path | None:
    """The resolved data file when it holds this tensor's bytes, else None."""
    target = safe_external_path(base_dir, info.get("location", ""), t.name)
    if target not in sizes:
        sizes[target] = target.stat().st_size if target.is_file() else None
    size = sizes[target]
    if size is None:
        return None
    offset, length = _span(t, info)
    return target if offset + length <= size else None


def missing_weights(model_path: str | os.PathLike) -> list[str]:
    """External-data locations of ``model_path`` that are absent or too short for their tensors."""
    proto, path, _ = read_model(model_path)
    base = path.parent
    sizes: dict[Path, int | None] = {}
    missing: set[str] = set()
    for t in iter_tensors(proto.graph):
        info = _external(t)
        if info is not None and _available(base, t, info, sizes) is None:
            missing.add(info.get("location", ""))
    return sorted(missing)


def _random_bytes(elem_type: int, numel: int, rng: np.random.Generator) -> Iterator[bytes]:
    """Chunks of synthetic little-endian data for ``numel`` elements of ``elem_type``."""
    for start in range(0, max(numel, 0), _CHUNK_ELEMENTS):
        n = min(_CHUNK_ELEMENTS, numel - start)
        if elem_type in _FLOAT_NP:
            yield (rng.standard_normal(n, dtype=np.float32) * 0.02).astype(_FLOAT_NP[elem_type]).tobytes()
        elif elem_type == _T.BFLOAT16:
            f = (rng.standard_normal(n, dtype=np.float32) * 0.02).astype("<f4")
            yield (f.view("<u4") >> 16).astype("<u2").tobytes()
        elif elem_type == _T.INT8:
            yield rng.integers(-8, 8, n, dtype=np.int8).tobytes()
        elif elem_type == _T.UINT8:
            yield rng.integers(0, 16, n, dtype=np.uint8).tobytes()
        else:
            bits = dtypes.bits(elem_type)
            if bits is None:
                raise OptionError(f"cannot synthesize external data of type {dtypes.name(elem_type)}")
            if bits < 8:  # packed sub-byte types: one zero-filled run for the whole tensor
                yield bytes(dtypes.nbytes(elem_type, numel))
                return
            yield bytes(n * bits // 8)


def _copy_bytes(src: Path, offset: int, length: int) -> Iterator[bytes]:
    with open(src, "rb") as fh:
        fh.seek(offset)
        left = length
        while left:
            chunk = fh.read(min(left, _COPY_BYTES))
            if not chunk:
                raise ExternalDataError(f"{src}: shorter than its tensors say")
            left -= len(chunk)
            yield chunk


def with_random_weights(model_path: str | os.PathLike, out_path: str | os.PathLike, seed: int = 0) -> Path:
    """Write a runnable copy of ``model_path`` to ``out_path`` (in a folder the caller owns).

    Every external tensor is stored in ``<out_path name>.data`` next to the copy; missing data is
    synthesized (see the module docstring), present data is copied. Inline tensors are kept as
    they are. Returns ``out_path``. Deterministic for a given ``seed``.
    """
    proto, path, _ = read_model(model_path)
    out = Path(out_path)
    if out.resolve() == path.resolve():
        raise OptionError(f"{out}: refusing to overwrite the model itself")
    out.parent.mkdir(parents=True, exist_ok=True)
    data_name = out.name + ".data"
    sources = {safe_external_path(path.parent, info.get("location", ""), t.name)
               for t in iter_tensors(proto.graph) if (info := _external(t)) is not None}
    if (out.parent / data_name).resolve() in sources:
        raise OptionError(f"{out.parent / data_name}: refusing to overwrite the model's own weight file")
    rng = np.random.default_rng(seed)
    sizes: dict[Path, int | None] = {}
    offset = 0
    with open(out.parent / data_name, "wb") as data:
        for t in iter_tensors(proto.graph):
            info = _external(t)
            if info is None:
                continue
            src = _available(path.parent, t, info, sizes)
            if src is not None:
                start, length = _span(t, info)
                chunks = _copy_bytes(src, start, length)
            else:
                chunks = _random_bytes(t.data_type, _numel(t), rng)
            pad = (-offset) % _ALIGN
            if pad:
                data.write(bytes(pad))
                offset += pad
            written = 0
            for chunk in chunks:
                data.write(chunk)
                written += len(chunk)
            del t.external_data[:]
            for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(written))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            t.data_location = _T.EXTERNAL
            t.ClearField("raw_data")
            offset += written
    onnx.save(proto, str(out))
    return out


__all__ = ["iter_tensors", "missing_weights", "with_random_weights"]
