"""Framework-neutral loader: an ONNX file (or ModelProto) -> :class:`LoadedModel`.

Weights are never read: the file is parsed with ``load_external_data=False``, and the shapes
and dtypes of initializers come from the proto. Only small integer tensors (shape constants
such as Reshape targets or Slice starts, at most :data:`SMALL_TENSOR_ELEMENTS` elements) may be
read from external data, and only from files inside the model's own folder.

The graph is a ``networkx.MultiDiGraph``:

* an op node's id is its index in the file (``int``);
* graph inputs, initializers and outer-scope tensors are source nodes with string ids
  ``"input:NAME"``, ``"initializer:NAME"``, ``"outer:NAME"``; graph outputs are sink nodes
  ``"output:NAME"``;
* every edge is one tensor, keyed by the tensor's name, so two tensors between the same
  pair of nodes stay two edges.

Nothing computed is ever written onto the graph: analyses keep their results apart, keyed
by node id.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
import onnx.inliner
from onnx import numpy_helper

from onnxperf.base import dtypes
from onnxperf.graph import scopes
from onnxperf.base.errors import ExternalDataError, GraphError, InputError, ModelFileError
from onnxperf.base.frozen import getter
from onnxperf.ui.output import note_input

if TYPE_CHECKING:
    import networkx as nx

#: integer tensors up to this many elements may be read (from external data too): shape
#: computations need their values. Anything larger is never read.
SMALL_TENSOR_ELEMENTS = 64

_INT_TYPES = {onnx.TensorProto.INT64, onnx.TensorProto.INT32}


class Initializer(tuple):
    """A constant tensor of the graph: shape and dtype from the proto, never its bytes.

    ``value``: only for small integer/float tensors that are inline or safely readable. An
    immutable record (a tuple subclass: one per weight, so small and quick to build; see
    :func:`onnxperf.base.frozen.record`); equality ignores ``value``."""

    __slots__ = ()
    _fields = ("name", "elem_type", "dims", "external", "value", "numel")

    def __new__(cls, name: str, elem_type: int, dims: tuple[int, ...], external: bool,
                value: np.ndarray | None = None) -> Initializer:
        n = 1
        for d in dims:
            n *= d
        return tuple.__new__(cls, (name, elem_type, dims, external, value, n))

    name = getter(0)
    elem_type = getter(1)
    dims = getter(2)
    external = getter(3)
    value = getter(4)
    numel = getter(5, "Element count (the product of the dims).")

    @property
    def nbytes(self) -> int:
        return dtypes.nbytes(self[1], self[5])

    def __repr__(self) -> str:
        return f"Initializer(name={self[0]!r}, elem_type={self[1]!r}, dims={self[2]!r}, external={self[3]!r})"

    def _key(self) -> tuple:
        return self[0], self[1], self[2], self[3]

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._key())

    def __getnewargs__(self):
        return tuple(self)[:5]


@dataclass
class GraphIR:
    """One (sub)graph: its nodes, its DAG, its stable topological order and its constants.

    The networkx DAG (:attr:`dag`) is built on first access from the node and edge lists the
    loader recorded: costing a model needs only the order, so ``analyze`` never pays for it."""

    name: str
    #: the GraphProto's own node list (indexed like a list; no Python object per node is kept)
    nodes: Sequence[onnx.NodeProto]
    #: DAG nodes added after the ops, in insertion order: outer-scope references and outputs
    dag_tail: list[tuple[str, dict[str, Any]]]
    order: list[int]
    inputs: list[str]
    outputs: list[str]
    initializers: dict[str, Initializer]
    #: tensors produced by Constant nodes: name -> Initializer-like record
    constants: dict[str, Initializer]
    #: (node index, attribute name) -> subgraph
    subgraphs: dict[tuple[int, str], "GraphIR"]
    #: tensors used here but defined in an enclosing graph
    outer_refs: list[str]

    #: per node: (input names, output names) as read from the proto once ("" = absent optional)
    io: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    #: per node: (op type, domain with "ai.onnx" written "", name), read from the proto once
    heads: list[tuple[str, str, str]] = field(default_factory=list)
    #: indices of the nodes that have attributes
    with_attrs: frozenset[int] = frozenset()
    _dag: nx.MultiDiGraph | None = field(default=None, repr=False, compare=False)

    @property
    def dag_sources(self) -> list[tuple[str, str]]:
        """The DAG's source nodes as (kind, tensor name): initializers, then graph inputs."""
        inits = self.initializers
        return [("initializer", name) for name in inits] + [("input", name) for name in self.inputs
                                                             if name not in inits]

    @property
    def dag_links(self) -> list[tuple[int | str, int | str, str]]:
        """(source, target, tensor name) for every tensor flowing along the DAG; a source that is
        not an op is written as its kind alone ("initializer", "input", "outer"), its id being
        "<kind>:<tensor name>" (see :attr:`dag_edges`). Made from :attr:`io` when asked for (the
        loader checked every link as it read the graph): a million-node graph need not hold them."""
        inits = self.initializers
        producer: dict[str, int | str] = dict.fromkeys(inits, "initializer")
        for name in self.inputs:
            if name not in inits:
                producer[name] = "input"
        for i, (_, outs) in enumerate(self.io):
            for out in outs:
                if out:
                    producer[out] = i
        for ref in self.outer_refs:
            producer.setdefault(ref, "outer")
        bodies: dict[int, list[GraphIR]] = {}
        for (i, _), sub in self.subgraphs.items():
            bodies.setdefault(i, []).append(sub)
        links: list[tuple[int | str, int | str, str]] = []
        for i, (ins, _) in enumerate(self.io):
            links += [(producer[x], i, x) for x in ins if x]
            for sub in bodies.get(i, ()):
                # the body's free variables are implicit inputs of this node
                links += [(producer[ref], i, ref) for ref in sub.outer_refs if ref in producer]
        links += [(producer[name], f"output:{name}", name) for name in self.outputs]
        return links

    @property
    def dag_nodes(self) -> list[tuple[int | str, dict[str, Any]]]:
        """(DAG node, attributes) in insertion order: initializers, graph inputs, ops, then
        outer-scope references and outputs."""
        out: list[tuple[int | str, dict[str, Any]]] = [
            (f"{kind}:{name}", {"kind": kind, "tensor": name}) for kind, name in self.dag_sources]
        out += [(i, {"kind": "op", "op_type": op, "domain": domain, "name": name})
                for i, (op, domain, name) in enumerate(self.heads)]
        return out + self.dag_tail

    @property
    def dag_edges(self) -> list[tuple[int | str, int | str, str]]:
        """(source, target, tensor name) for every tensor flowing along the DAG."""
        return [(f"{u}:{k}" if u.__class__ is str else u, v, k) for u, v, k in self.dag_links]

    @property
    def dag(self) -> nx.MultiDiGraph:
        """The graph as a ``networkx.MultiDiGraph``: ops (id = index in the file), graph inputs,
        initializers, outer-scope references and outputs as nodes; tensors as edges (key = name)."""
        if self._dag is None:
            self._dag = _to_networkx(self.dag_nodes, self.dag_edges)
        return self._dag

    def const_value(self, tensor: str) -> np.ndarray | None:
        rec = self.initializers.get(tensor) or self.constants.get(tensor)
        return None if rec is None else rec.value


def _to_networkx(nodes, edges) -> nx.MultiDiGraph:
    import networkx as nx  # only when a DAG is asked for (or a graph must be sorted): ~0.1 s to import

    dag = nx.MultiDiGraph()
    dag.add_nodes_from(nodes)
    dag.add_edges_from((u, v, k, {}) for u, v, k in edges)
    return dag


@dataclass
class LoadedModel:
    """A parsed model: the original proto (weights unread), its main graph and facts."""

    proto: onnx.ModelProto
    graph: GraphIR
    path: Path | None
    file_size_bytes: int | None
    opsets: dict[str, int]
    missing_external_files: list[str]
    inlined_functions: int
    #: external-data fields of small tensors (shape constants) that could not be read, one line each
    external_data_problems: list[str] = field(default_factory=list)

    @cached_property
    def file_shapes(self) -> dict[str, tuple]:
        """Tensor shapes as the model *file* gives them (ONNX shape inference on its main graph, symbolic
        dims as names), which is what a runtime's optimizer sees: the dims bound for the analysis are
        not. A dim ONNX's inference cannot name gets a made-up ``unk__N``, onnxruntime's none: such a
        dim is unknown (None). Weights are left out of the copy inferred (their dims are kept):
        computed once per loaded model (the runtime's fusion rules read it, :mod:`onnxperf.predict.roofline`)."""
        src = self.proto
        g = onnx.GraphProto()
        g.node.extend(src.graph.node)
        g.input.extend(src.graph.input)
        g.output.extend(src.graph.output)
        g.value_info.extend(src.graph.value_info)
        declared = {vi.name for vi in src.graph.input}
        for t in src.graph.initializer:
            if t.data_location == onnx.TensorProto.EXTERNAL or len(t.raw_data) > 1024:
                if t.name not in declared:  # a weight: its dims as a declared input, no data
                    g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
                continue
            g.initializer.append(t)
        m = onnx.ModelProto()
        m.ir_version = src.ir_version
        m.opset_import.extend(src.opset_import)
        m.graph.CopyFrom(g)
        try:
            m = onnx.shape_inference.infer_shapes(m, data_prop=True)
        except Exception:  # noqa: BLE001 - a graph ONNX cannot infer: no shapes, so no shape-bound fusion
            return {}
        out = {t.name: tuple(t.dims) for t in m.graph.initializer}
        for vi in (*m.graph.input, *m.graph.value_info, *m.graph.output):
            tt = vi.type.tensor_type
            if tt.HasField("shape"):
                out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else
                                     (d.dim_param if d.dim_param and not d.dim_param.startswith("unk__") else None)
                                     for d in tt.shape.dim)
        return out


class _Missing(set):
    """The external-data locations not found, and the problems met reading small tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []


def _normalize_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def read_model(path: str | os.PathLike) -> tuple[onnx.ModelProto, Path, int]:
    """Parse a model file without its external weights; typed errors for every bad file."""
    p = Path(path)
    if not p.exists():
        raise ModelFileError(f"{p}: no such file")
    if p.is_dir():
        raise ModelFileError(f"{p}: is a directory, not an ONNX file")
    try:
        size = p.stat().st_size
        if size == 0:
            raise ModelFileError(f"{p}: empty file")
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise ModelFileError(f"{p}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    note_input(p)
    foreign = _foreign_format(head)
    if foreign:
        raise ModelFileError(f"{p}: {foreign}, not an ONNX model")
    try:
        model = onnx.load(str(p), load_external_data=False)
    except MemoryError:
        raise ModelFileError(f"{p}: too large to parse in memory ({size:,} bytes)") from None
    except Exception as exc:  # protobuf DecodeError and friends
        if "MaxDepth" in str(exc) or "recursion" in str(exc).lower():
            raise ModelFileError(
                f"{p}: nested deeper than protobuf can parse (If/Loop/Scan bodies about 33 levels deep reach "
                "its limit of 100 message levels): the file may be a valid model, but neither onnx nor "
                "onnxruntime can read it") from None
        what = "a text file" if _looks_like_text(head) else "corrupt or truncated"
        raise ModelFileError(f"{p}: not a readable ONNX model ({what}; {type(exc).__name__}: {_short(exc)})") from None
    _check_model_proto(model, str(p))
    return model, p, size


_SNIFF_BYTES = 64

#: magic bytes of formats people hand over by mistake. None of them can begin a serialized
#: ModelProto (whose first byte is a field tag, 0x08 for ``ir_version`` in every exporter).
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"GIF8", "a GIF image"),
    (0, b"%PDF", "a PDF document"),
    (0, b"PK\x03\x04", "a ZIP archive (a PyTorch .pt/.pth checkpoint or .npz?)"),
    (0, b"\x1f\x8b", "a gzip file (decompress it first)"),
    (0, b"\x89HDF\r\n\x1a\n", "an HDF5 file (a Keras .h5 model?)"),
    (4, b"TFL3", "a TensorFlow Lite model"),
    (0, b"\x7fELF", "an executable (ELF)"),
    (0, b"\x80\x02", "a Python pickle"), (0, b"\x80\x03", "a Python pickle"),
    (0, b"\x80\x04", "a Python pickle"), (0, b"\x80\x05", "a Python pickle"),
    (0, b"\x93NUMPY", "a NumPy .npy array"),
)


def _foreign_format(head: bytes) -> str | None:
    """Name of a well-known non-ONNX format the file starts like, else None."""
    for offset, magic, what in _MAGIC:
        if head[offset:offset + len(magic)] == magic:
            return what
    # safetensors: little-endian u64 header length, then a JSON object
    if len(head) > 10 and head[8:10] == b'{"' and int.from_bytes(head[:8], "little") < (1 << 32):
        return "a safetensors file"
    return None


def _looks_like_text(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\r\n\t" for ch in text)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "no detail"


def _check_model_proto(model: onnx.ModelProto, label: str) -> None:
    if not isinstance(model, onnx.ModelProto):
        raise ModelFileError(f"{label}: not an ONNX ModelProto")
    if model.ir_version <= 0 or not model.HasField("graph"):
        raise ModelFileError(f"{label}: not an ONNX model (no IR version or no graph)")
    if len(model.graph.node) == 0 and len(model.graph.output) == 0:
        raise ModelFileError(f"{label}: not an ONNX model (the graph has no nodes and no outputs)")
    # IR 3 made opset imports mandatory; exporters write them after the graph, so a file cut
    # at a field boundary after the graph parses cleanly but has none.
    if model.ir_version >= 3 and len(model.opset_import) == 0:
        raise ModelFileError(f"{label}: the model imports no opset (opset_import is empty; a truncated file?)")
    for field_name in ("producer_name", "producer_version", "domain"):
        if not isinstance(getattr(model, field_name), str):
            raise ModelFileError(f"{label}: {field_name} is not valid UTF-8 text")
    for imp in model.opset_import:
        if not isinstance(imp.domain, str):
            raise ModelFileError(f"{label}: an opset domain is not valid UTF-8 text")
        if imp.version < 1:
            raise ModelFileError(f"{label}: opset {imp.domain or 'ai.onnx'} {imp.version} is not a valid version")


def safe_external_path(base_dir: Path, location: str, tensor: str) -> Path:
    """Resolve an external-data location, refusing anything outside ``base_dir``.

    Absolute paths, ``..`` escapes and symlinks that point out of the folder are refused;
    the file is never opened in those cases.
    """
    if not location:
        raise ExternalDataError(f"tensor {tensor!r}: external data without a location")
    if "\x00" in location:
        raise ExternalDataError(f"tensor {tensor!r}: external data location {location!r} holds a NUL byte")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":"):
        raise ExternalDataError(f"tensor {tensor!r}: external data location {location!r} is an absolute path")
    base = base_dir.resolve()
    target = (base / location).resolve()
    try:
        target.relative_to(base)
    except ValueError:
        raise ExternalDataError(
            f"tensor {tensor!r}: external data location {location!r} leaves the model's folder") from None
    return target


def _external_info(t: onnx.TensorProto) -> dict[str, str]:
    info = {}
    for e in t.external_data:
        key, value = e.key, e.value
        if not (isinstance(key, str) and isinstance(value, str)):
            raise GraphError(f"external data entry of {t.name!r} {value!r} is not valid UTF-8 text")
        info[key] = value
    return info


class _PathCache(dict):
    """location -> resolved path, so each external file is checked once per load; and
    :attr:`dims`, one tuple per distinct initializer shape (the weights of a network share a few)."""

    def __init__(self) -> None:
        super().__init__()
        self.dims: dict[tuple[int, ...], tuple[int, ...]] = {}


_KNOWN_TYPES = frozenset(v for v in onnx.TensorProto.DataType.values() if v != onnx.TensorProto.UNDEFINED)

#: TensorProto field holding the values of each element type when not in ``raw_data``, and how
#: many entries one element takes there. 4- and 2-bit types pack several elements per entry:
#: they are checked only through ``raw_data``.
_T = onnx.TensorProto
_TYPED_FIELD: dict[int, tuple[str, int]] = {
    _T.FLOAT: ("float_data", 1), _T.COMPLEX64: ("float_data", 2), _T.DOUBLE: ("double_data", 1),
    _T.COMPLEX128: ("double_data", 2), _T.INT64: ("int64_data", 1), _T.UINT32: ("uint64_data", 1),
    _T.UINT64: ("uint64_data", 1), _T.STRING: ("string_data", 1),
    **{t: ("int32_data", 1) for t in (_T.INT32, _T.INT16, _T.INT8, _T.UINT16, _T.UINT8, _T.BOOL,
                                       _T.FLOAT16, _T.BFLOAT16)},
}


def _check_tensor(t: onnx.TensorProto, what: str, raw: bytes | None = None, data_type: int | None = None,
                  external: bool | None = None) -> tuple[tuple[int, ...], int]:
    """A constant's dims and element count, after checking that they can be trusted: a known
    element type, no negative dim, and inline data (when there is any) of exactly the declared
    size. Data-free tensors (weights stripped) are fine: only shapes are needed. Nothing is
    allocated from the declared dims. ``raw``, ``data_type``, ``external``: ``t.raw_data``,
    ``t.data_type`` and whether its data is external, when the caller already read them."""
    if data_type is None:
        data_type = t.data_type
    if data_type not in _KNOWN_TYPES:
        raise ModelFileError(f"{what} {t.name!r} has an invalid element type ({data_type})")
    dims = tuple(t.dims[:])
    numel = 1
    for d in dims:
        if d < 0:
            raise ModelFileError(f"{what} {t.name!r} has a negative dim: {list(dims)}")
        numel *= d
    if external if external is not None else t.data_location == _T.EXTERNAL:
        return dims, numel
    if raw is None:
        raw = t.raw_data
    if raw:
        bits = dtypes.bits(data_type)
        want = None if bits is None else (numel * bits + 7) // 8
        if want is not None and len(raw) != want:
            raise ModelFileError(f"{what} {t.name!r} declares dims {list(dims)} ({want:,} bytes) "
                                 f"but holds {len(raw):,} bytes")
    elif data_type in _TYPED_FIELD:
        fld, per = _TYPED_FIELD[data_type]
        have = len(getattr(t, fld))
        if have and have != numel * per:
            raise ModelFileError(f"{what} {t.name!r} declares dims {list(dims)} ({numel:,} elements) "
                                 f"but holds {have // per:,}")
    return dims, numel


#: element types whose inline values numpy reads straight from ``raw_data`` (little-endian
#: hosts), as ``numpy_helper.to_array`` does; the typed fields whose values map one to one
_RAW_NUMPY = {_T.FLOAT: np.dtype(np.float32), _T.DOUBLE: np.dtype(np.float64), _T.INT64: np.dtype(np.int64),
              _T.INT32: np.dtype(np.int32), _T.INT16: np.dtype(np.int16), _T.INT8: np.dtype(np.int8),
              _T.UINT8: np.dtype(np.uint8), _T.UINT16: np.dtype(np.uint16), _T.UINT32: np.dtype(np.uint32),
              _T.UINT64: np.dtype(np.uint64), _T.FLOAT16: np.dtype(np.float16), _T.BOOL: np.dtype(np.bool_)} \
    if sys.byteorder == "little" else {}
_TYPED_NUMPY = {_T.FLOAT: ("float_data", np.float32), _T.DOUBLE: ("double_data", np.float64),
                _T.INT64: ("int64_data", np.int64), _T.INT32: ("int32_data", np.int32)}


def _small_value(t: onnx.TensorProto, dims: tuple[int, ...], raw: bytes) -> np.ndarray | None:
    """The value of a small inline tensor, as ``numpy_helper.to_array`` gives it (None when its
    data is malformed). The common element types are read directly: ``to_array`` costs ~7 µs a
    call, and exported LLMs hold thousands of small constants."""
    try:
        dt = _RAW_NUMPY.get(t.data_type)
        if raw and dt is not None:
            return np.frombuffer(raw, dtype=dt).reshape(dims)
        typed = _TYPED_NUMPY.get(t.data_type)
        if not raw and typed is not None and not t.HasField("raw_data"):
            return np.asarray(getattr(t, typed[0]), dtype=typed[1]).reshape(dims)
        return numpy_helper.to_array(t)
    except Exception:  # malformed inline data: the value stays unknown
        return None


def _initializer(t: onnx.TensorProto, base_dir: Path | None, missing: set[str],
                 paths: _PathCache | None = None) -> Initializer:
    name = t.name
    if not isinstance(name, str):
        raise GraphError(f"initializer name {name!r} is not valid UTF-8 text")
    external = t.data_location == onnx.TensorProto.EXTERNAL
    raw = None if external else t.raw_data
    data_type = t.data_type
    dims, numel = _check_tensor(t, "initializer", raw, data_type, external)
    if paths is not None:
        dims = paths.dims.setdefault(dims, dims)
    value = None
    if external:
        info = _external_info(t)
        location = info.get("location", "")
        if base_dir is None:
            # A ModelProto handed over in memory: locations cannot be resolved, only checked.
            if os.path.isabs(location) or ".." in Path(location).parts:
                raise ExternalDataError(
                    f"tensor {t.name!r}: external data location {location!r} leaves the model's folder")
        else:
            if paths is not None and location in paths:
                target, is_file = paths[location]
            else:
                target = safe_external_path(base_dir, location, t.name)
                is_file = target.is_file()
                if is_file:
                    note_input(target)
                if paths is not None:
                    paths[location] = (target, is_file)
            if not is_file:
                missing.add(location)
                if numel <= SMALL_TENSOR_ELEMENTS and data_type in _INT_TYPES and target.exists():
                    _problem(missing, t, location, "is not a regular file")
            elif numel <= SMALL_TENSOR_ELEMENTS and data_type in _INT_TYPES:
                value = _read_small_external(t, target, dims, info, missing)
    elif numel <= SMALL_TENSOR_ELEMENTS and data_type != onnx.TensorProto.STRING:
        value = _small_value(t, dims, raw)
    return Initializer(name, int(data_type), dims, external, value)


def _problem(missing: set[str], t: onnx.TensorProto, location: str, what: str) -> None:
    problems = getattr(missing, "problems", None)
    if problems is not None:
        problems.append(f"tensor {t.name!r}: external data {location!r} {what}: its value stays unknown")


def _read_small_external(t: onnx.TensorProto, target: Path, dims: tuple[int, ...],
                         info: dict[str, str], missing: set[str]) -> np.ndarray | None:
    """The value of a small int tensor stored as external data (shape constants need it); None
    with a problem recorded when its offset or length is not a size, does not match the tensor or
    lies past the end of the file."""
    np_dtype = np.int64 if t.data_type == onnx.TensorProto.INT64 else np.int32
    location = info.get("location", "")
    numel = 1
    for d in dims:
        numel *= d
    want = numel * np.dtype(np_dtype).itemsize
    try:
        offset = int(info.get("offset", "0") or 0)
        length = int(info.get("length", str(want)) or want)
    except ValueError:
        _problem(missing, t, location, f"has an offset or length that is not a number "
                                       f"({info.get('offset')!r}, {info.get('length')!r})")
        return None
    if offset < 0 or offset >= 1 << 63:
        _problem(missing, t, location, f"has offset {offset}, not a file position")
        return None
    if length != want:
        _problem(missing, t, location, f"has length {length}, the tensor needs {want} bytes")
        return None
    try:
        with open(target, "rb") as fh:
            fh.seek(offset)
            raw = fh.read(want)
    except (OSError, OverflowError, ValueError) as exc:
        _problem(missing, t, location, f"cannot be read ({getattr(exc, 'strerror', None) or type(exc).__name__})")
        return None
    if len(raw) != want:
        _problem(missing, t, location, f"ends before offset {offset} + {want} bytes")
        return None
    return np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder("<")).reshape(dims).copy()


def _constant_record(node: onnx.NodeProto, cache: dict[bytes, tuple] | None = None) -> Initializer | None:
    """The tensor a ``Constant`` node produces, from whichever value attribute it uses.

    ``cache``: serialized attribute -> (element type, dims, external, value) of records already
    made. A network repeats a few constants many times (Swin-V2-T: 2,750 Constant nodes, 52
    distinct), and serializing the attribute costs a tenth of decoding it again; the value array is
    shared between the records then, and made read-only."""
    attrs = node.attribute
    key = None
    if cache is not None and len(attrs) == 1:
        key = attrs[0].SerializeToString()
        hit = cache.get(key)
        if hit is not None:
            return Initializer(node.output[0], *hit)
    rec = _constant_record_of(node)
    if key is not None and rec is not None:
        if rec.value is not None:
            rec.value.setflags(write=False)
        cache[key] = (rec.elem_type, rec.dims, rec.external, rec.value)  # type: ignore[index]
    return rec


def _constant_record_of(node: onnx.NodeProto) -> Initializer | None:
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            t = a.t
            dims, numel = _check_tensor(t, f"Constant node {node.name!r}: tensor")
            value = None
            if numel <= SMALL_TENSOR_ELEMENTS and t.data_location != onnx.TensorProto.EXTERNAL \
                    and t.data_type != onnx.TensorProto.STRING:
                value = _small_value(t, dims, t.raw_data)
            return Initializer(node.output[0], int(t.data_type), dims,
                               t.data_location == onnx.TensorProto.EXTERNAL, value)
        if a.name in ("value_int", "value_float"):
            if a.name == "value_int":
                return Initializer(node.output[0], onnx.TensorProto.INT64, (), False, np.array(a.i, np.int64))
            return Initializer(node.output[0], onnx.TensorProto.FLOAT, (), False, np.array(a.f, np.float32))
        if a.name in ("value_ints", "value_floats"):
            if a.name == "value_ints":
                v = np.array(list(a.ints), np.int64)
                return Initializer(node.output[0], onnx.TensorProto.INT64, v.shape, False,
                                   v if v.size <= SMALL_TENSOR_ELEMENTS else None)
            v = np.array(list(a.floats), np.float32)
            return Initializer(node.output[0], onnx.TensorProto.FLOAT, v.shape, False,
                               v if v.size <= SMALL_TENSOR_ELEMENTS else None)
    return None


def _source_key(node: int | str) -> tuple[int, int | str]:
    # Sources first, then ops by file index, then sinks: the three kinds never compare their
    # second members with each other, so ints and strings never meet.
    if isinstance(node, int):
        return (1, node)
    return (0 if not node.startswith("output:") else 2, node)


def _stable_order(g: GraphIR, in_file_order: bool) -> tuple[list[int], nx.MultiDiGraph | None]:
    """Ops in ``nx.lexicographical_topological_sort`` order keyed by file index, and the
    networkx graph if one had to be built.

    When the file is already topologically sorted (as the ONNX spec requires), that order *is*
    the file order: ``in_file_order`` says so, from the check :func:`build_graph` makes on every
    edge as it records it; otherwise networkx sorts (and finds cycles)."""
    if in_file_order:
        return list(range(len(g.nodes))), None
    import networkx as nx

    dag = _to_networkx(g.dag_nodes, g.dag_edges)
    try:
        topo = list(nx.lexicographical_topological_sort(dag, key=_source_key))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(dag)
        members = sorted({u for u, *_ in cycle if isinstance(u, int)})
        raise GraphError(f"graph {g.name!r} has a cycle through nodes {members[:10]}") from None
    return [n for n in topo if isinstance(n, int)], dag


def _string_error(g: onnx.GraphProto) -> GraphError | None:
    """The first name of ``g`` that is not text, as an error (None when all are). ONNX's proto2
    ``string`` fields are not checked for UTF-8 when parsed: protobuf hands invalid ones over as
    ``bytes``."""

    def bad(what: str, value: object) -> GraphError:
        return GraphError(f"{what} {value!r} is not valid UTF-8 text")

    for i, n in enumerate(g.node):
        for what, v in (("op type", n.op_type), ("domain", n.domain), ("name", n.name)):
            if not isinstance(v, str):
                return bad(f"node {i}: {what}", v)
        for v in tuple(n.input) + tuple(n.output) + tuple(a.name for a in n.attribute):
            if not isinstance(v, str):
                return bad(f"node {i} ({n.op_type}): tensor or attribute name", v)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if not isinstance(vi.name, str):
            return bad("value name", vi.name)
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        for d in tt.shape.dim if tt is not None else ():
            if d.HasField("dim_param") and not isinstance(d.dim_param, str):
                return bad(f"dim of {vi.name!r}", d.dim_param)
    for t in g.initializer:
        if not isinstance(t.name, str):
            return bad("initializer name", t.name)
        for e in t.external_data:
            if not (isinstance(e.key, str) and isinstance(e.value, str)):
                return bad(f"external data entry of {t.name!r}", e.value)
    for t in g.sparse_initializer:
        if not isinstance(t.values.name, str):
            return bad("sparse initializer name", t.values.name)
    if not isinstance(g.name, str):
        return bad("graph name", g.name)
    return None


_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def _read_nodes(g: onnx.GraphProto) -> tuple[list[tuple[tuple[str, ...], tuple[str, ...]]],
                                             list[tuple[str, str, str]], list[int], frozenset[int]]:
    """Each node's (input names, output names) and (op type, domain, name), read from the proto
    once, and the indices of nodes with subgraph attributes and of those with any attribute. Every name this tool reads must be
    text (see :func:`_string_error`): ``"".join`` checks them at C speed and the slow walk runs
    only to name the culprit."""
    io = []
    heads = []
    with_graphs = []
    with_attrs = []
    join = "".join
    intern = sys.intern
    # the heads of unnamed nodes repeat: one tuple per distinct (op type, domain)
    unnamed: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    try:
        for i, n in enumerate(g.node):
            # slicing first: tuple() over a repeated field is twice as slow. Op types and domains
            # are interned (a million-node graph reads a million "MatMul"s); tensor names are made
            # to share one string by build_graph
            ins, outs = tuple(n.input[:]), tuple(n.output[:])
            op, domain, name = n.op_type, n.domain, n.name
            join((op, domain, name) + ins + outs)
            op = intern(op)
            attrs = n.attribute
            if attrs:
                with_attrs.append(i)
                join([a.name for a in attrs])
                if any(a.type in _GRAPH_ATTRS for a in attrs):
                    with_graphs.append(i)
            io.append((ins, outs))
            head = (op, "" if domain == "ai.onnx" else intern(domain), name)
            heads.append(head if name else unnamed.setdefault(head, head))
        for vi in (*g.input, *g.output, *g.value_info):
            join((vi.name,))
            t = vi.type
            if t.HasField("tensor_type"):
                join([d.dim_param for d in t.tensor_type.shape.dim])
        join([t.values.name for t in g.sparse_initializer])
        join((g.name,))
    except TypeError:
        err = _string_error(g)
        if err is not None:
            raise err from None
        raise
    return io, heads, with_graphs, frozenset(with_attrs)


def _first_producer(name: str, inits, inputs: list[str], io, before: int) -> int | str:
    """What defined ``name`` first: "initializer", "input", or the index of the node (below
    ``before``) that outputs it (for the message about a tensor produced twice)."""
    if name in inits:
        return "initializer"
    if name in inputs:
        return "input"
    return next(j for j in range(before) if name in io[j][1])


def build_graph(g: onnx.GraphProto, base_dir: Path | None, missing: set[str],
                outer_scope: frozenset[str] = frozenset()) -> GraphIR:
    """Turn a GraphProto into a :class:`GraphIR`; subgraphs are built recursively."""
    io, heads, with_graphs, with_attrs = _read_nodes(g)
    dag_nodes: list[tuple[str, dict[str, Any]]] = []  # after the ops: outer references and outputs
    outer_nodes: set[str] = set()
    paths = _PathCache()
    inits: dict[str, Initializer] = {}
    for t in g.initializer:
        rec = _initializer(t, base_dir, missing, paths)
        inits[rec.name] = rec
    for t in g.sparse_initializer:
        dims = tuple(int(d) for d in t.dims)
        if t.values.data_type not in _KNOWN_TYPES or any(d < 0 for d in dims):
            raise ModelFileError(f"sparse initializer {t.values.name!r} has an invalid element type or dims")
        inits[t.values.name] = Initializer(t.values.name, int(t.values.data_type), dims, False)
    inputs = [vi.name for vi in g.input]
    # every tensor defined so far (initializers, graph inputs, node outputs in file order), mapped
    # to itself: a node's input names are replaced by the defining string, so that a tensor's
    # producer, its consumers and its records share one string (a million-node graph: ~90 MB)
    canon: dict[str, str] = {name: name for name in inits}
    for name in inputs:
        canon.setdefault(name, name)  # old-style models list initializers as inputs too

    nodes = g.node  # the proto's own sequence: node wrappers are made when read, not kept (1M nodes: ~100 MB)
    constants: dict[str, Initializer] = {}
    const_cache: dict[bytes, tuple] = {}
    get = canon.get
    # whether some node reads a tensor not defined above it (out of file order, from an outer
    # scope, or from nowhere): only then, or with subgraphs, are the edges walked again below
    unresolved = False
    for i, (op, domain, name) in enumerate(heads):
        ins, outs = io[i]
        if ins:
            same = []
            for inp in ins:
                c = get(inp)
                if c is None:
                    if inp:
                        unresolved = True
                    c = inp
                same.append(c)
            io[i] = (tuple(same), outs)
        for out in outs:
            if not out:
                continue
            if out in canon:
                first = _first_producer(out, inits, inputs, io, i)
                raise GraphError(f"tensor {out!r} is produced twice (node {i} {op} {name!r} and "
                                 f"{first if isinstance(first, int) else f'{first}:{out}'!r})")
            canon[out] = out
        if op == "Constant" and domain == "" and outs:
            rec = _constant_record(nodes[i], const_cache)
            if rec is not None:
                constants[outs[0]] = rec

    # producer: tensor -> op index, or the kind of source ("initializer", "input", "outer") whose
    # DAG id is "<kind>:<tensor>"; ids are made only when the networkx graph is asked for. Needed
    # only to walk the edges again (out-of-order nodes, outer-scope reads, subgraphs)
    producer: dict[str, int | str] = {}
    if unresolved or with_graphs:
        producer = dict.fromkeys(inits, "initializer")
        for name in inputs:
            if name not in inits:
                producer[name] = "input"
        for i, (_, outs) in enumerate(io):
            for out in outs:
                if out:
                    producer[out] = i
    outer_refs: list[str] = []
    subgraphs: dict[tuple[int, str], GraphIR] = {}
    visible = outer_scope | frozenset(producer) if with_graphs else frozenset()
    graph_nodes = set(with_graphs)
    get = producer.get
    in_file_order = True  # every op edge goes from a lower to a higher file index
    for i, (ins, _) in enumerate(io if unresolved or with_graphs else ()):
        for inp in ins:
            if not inp:
                continue
            src = get(inp)
            if src is None:
                if inp in outer_scope:
                    src = "outer"
                    if inp not in outer_nodes:
                        outer_nodes.add(inp)
                        dag_nodes.append((f"outer:{inp}", {"kind": "outer", "tensor": inp}))
                        outer_refs.append(inp)
                    producer[inp] = src
                else:
                    raise GraphError(
                        f"node {i} ({heads[i][0]} {heads[i][2]!r}) reads tensor {inp!r}, which nothing produces")
            if src.__class__ is int and src >= i:
                in_file_order = False
        if i not in graph_nodes:
            continue
        for a in nodes[i].attribute:
            bodies = [a.g] if a.type == onnx.AttributeProto.GRAPH else (
                list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else [])
            for k, body in enumerate(bodies):
                attr_key = a.name if len(bodies) == 1 else f"{a.name}[{k}]"
                sub = build_graph(body, base_dir, missing, visible)
                subgraphs[(i, attr_key)] = sub
                # The body's free variables are implicit inputs of this node.
                for ref in sub.outer_refs:
                    src = producer.get(ref)
                    if src is None and ref in outer_scope:
                        src = "outer"
                        if ref not in outer_nodes:
                            outer_nodes.add(ref)
                            dag_nodes.append((f"outer:{ref}", {"kind": "outer", "tensor": ref}))
                            outer_refs.append(ref)
                        producer[ref] = src
                    if src.__class__ is int and src >= i:
                        in_file_order = False

    outputs = [vi.name for vi in g.output]
    sinks: set[str] = set()
    for name in outputs:
        if name not in canon:
            if name in outer_scope:
                if name not in outer_nodes:
                    outer_nodes.add(name)
                    dag_nodes.append((f"outer:{name}", {"kind": "outer", "tensor": name}))
                    outer_refs.append(name)
            else:
                raise GraphError(f"graph output {name!r} is produced by nothing")
        sink = f"output:{name}"
        if sink in sinks:
            raise GraphError(f"graph output {name!r} is listed twice")
        sinks.add(sink)
        dag_nodes.append((sink, {"kind": "output", "tensor": name}))

    ir = GraphIR(g.name, nodes, dag_nodes, [], inputs, outputs, inits, constants, subgraphs, outer_refs, io, heads,
                 with_attrs)
    ir.order, ir._dag = _stable_order(ir, in_file_order)
    return ir


def _own(proto: onnx.ModelProto, given: object) -> onnx.ModelProto:
    """``proto``, or a copy of it when it is the ModelProto the caller handed over (never changed)."""
    if proto is not given:
        return proto
    mine = onnx.ModelProto()
    mine.CopyFrom(proto)
    return mine


#: how an input dim without a name is named: ``<input>_d<position>``, as onnxruntime's symbolic
#: shape inference names it
UNNAMED_DIM = "{input}_d{i}"


def name_input_dims(g: onnx.GraphProto, apply: bool = True) -> int:
    """Give every graph-input dim that has neither a value nor a name a stable name that ``--dim``
    binds: ``<input>_d<i>`` (``X_d1``). When every input (initializers aside) has such a leading dim
    (scikit-learn converters write ``[None, F]``), those leading dims are one dim, named after the
    first input's (``X_d0``): the rows of a batch, which the batch default then binds. Returns how
    many dims were (or, with ``apply=False``, would be) named; a name some dim already has is never
    reused."""
    inits = {t.name for t in g.initializer}
    real = [vi for vi in g.input if vi.name not in inits and vi.type.HasField("tensor_type")
            and vi.type.tensor_type.HasField("shape")]

    def unnamed(d) -> bool:
        return d.WhichOneof("value") is None or (d.WhichOneof("value") == "dim_param" and not d.dim_param)

    todo = [(vi, i) for vi in real for i, d in enumerate(vi.type.tensor_type.shape.dim) if unnamed(d)]
    if not todo or not apply:
        return len(todo)
    taken = {d.dim_param for vi in real for d in vi.type.tensor_type.shape.dim if d.dim_param}

    def fresh(name: str) -> str:
        base, k = name, 2
        while name in taken:
            name = f"{base}_{k}"
            k += 1
        taken.add(name)
        return name

    shared = None
    if all(vi.type.tensor_type.shape.dim and unnamed(vi.type.tensor_type.shape.dim[0]) for vi in real):
        shared = fresh(UNNAMED_DIM.format(input=real[0].name, i=0))
    for vi, i in todo:
        name = shared if i == 0 and shared is not None else fresh(UNNAMED_DIM.format(input=vi.name, i=i))
        vi.type.tensor_type.shape.dim[i].dim_param = name
    return len(todo)


def load(model: str | os.PathLike | onnx.ModelProto) -> LoadedModel:
    """Load a model from a path or an in-memory ModelProto, without reading its weights."""
    if isinstance(model, onnx.ModelProto):
        proto, path, size = model, None, None
        _check_model_proto(proto, "<ModelProto>")
        base_dir = None
    else:
        proto, path, size = read_model(model)
        base_dir = path.parent
    inlined = 0
    if len(proto.functions):
        inlined = len(proto.functions)
        try:
            proto = onnx.inliner.inline_local_functions(proto)
        except Exception as exc:
            raise ModelFileError(f"{path or '<ModelProto>'}: cannot inline model-local functions ({_short(exc)})") from None
    opsets: dict[str, int] = {}
    for imp in proto.opset_import:
        opsets[_normalize_domain(imp.domain)] = int(imp.version)
    if "" not in opsets and proto.ir_version < 3:
        opsets[""] = 1
    if name_input_dims(proto.graph, apply=False):
        proto = _own(proto, model)
        name_input_dims(proto.graph)
    missing = _Missing()
    try:
        graph = build_graph(proto.graph, base_dir, missing)
        if graph.subgraphs and scopes.clashes(proto.graph):
            # a name defined in two scopes (sibling If branches, two loop bodies) names two tensors:
            # made explicit once, on our own copy of a proto the caller handed over
            proto = _own(proto, model)
            scopes.make_unique(proto.graph)
            missing = _Missing()
            graph = build_graph(proto.graph, base_dir, missing)
    except InputError as exc:  # name the file: one line must say which model and what is wrong
        raise type(exc)(f"{path or '<ModelProto>'}: {exc}") from None
    except RecursionError:
        raise GraphError(f"{path or '<ModelProto>'}: subgraphs nested too deeply") from None
    return LoadedModel(proto, graph, path, size, opsets, sorted(missing), inlined, list(missing.problems))
