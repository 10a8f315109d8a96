"""Softmax inputs whose exponentials underflow: the elements that go subnormal, counted from the graph.

An additive attention mask is a constant the exporter computes from the shapes: a shifted-window mask
(torchvision's Swin: -100 where two tokens lie in different regions), a causal mask (GPT-2: the
float32 minimum above the diagonal), a padding mask from an ``attention_mask`` input. A Softmax subtracts
its row's maximum, so a masked element x has d = x - max(row) near the mask value, and exp(d) is

* a normal float when d >= ln 2^-126 = -87.34 (:data:`LN_MIN_NORMAL`),
* a nonzero **subnormal** when ln 2^-150 = -103.97 <= d < -87.34 (:data:`LN_ROUNDS_TO_ZERO`): a mask of
  -100 lands there,
* zero below, after an underflow (-1e4, the float32 minimum, -inf).

On an x86 core without flush-to-zero (onnxruntime's default: ``session.set_denormal_as_zero`` is off),
a vector instruction that produces or reads a subnormal value takes a microcode assist of ~150 cycles
instead of one (this VM, onnxruntime 1.32, one thread: 60-62 ns per MatMul vector operation reading a
subnormal operand, whatever its width N; 70 ns per 16-lane vector of a Softmax holding an underflowing
element, 3 x 56 ns when its results stay subnormal; benchmarks/results/subnormal.md). The attention product after a -100 mask reads every subnormal
probability once per 16 output columns: Swin-T's shifted-window blocks spend 3 ms where 0.07 ms
would do.

What is counted here, per Softmax of float32 (:class:`Underflow`): the elements of its input, the
underflowing and subnormal ones, the 16-lane vectors along its rows that hold at least one of each
(:data:`LANES`: an AVX-512 register; a machine of narrower vectors has its per-vector cost calibrated
on the same count), and for each MatMul reading the probabilities as its left operand the vector
operations that read a subnormal value, ``subnormal x ceil(N / 16)`` (N: its output columns). The
offsets are the graph's own values, evaluated with numpy (:mod:`onnxperf.shapes.values`) on at most
:data:`MAX_ELEMENTS` elements per tensor, on the assumption that the scores themselves are small
beside the mask (|scores| << 87): the dynamic part of the Softmax input (what depends on the model's
inputs and weights) is taken as 0. Graph inputs named like a mask (``attention_mask``) are taken as
all ones, no padding, as ``validate`` feeds them (:attr:`Underflows.assumed` names them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx

from onnxperf.graph.loader import GraphIR
from onnxperf.shapes.values import EVALUATORS, evaluate

#: ln of the smallest normal float32, 2^-126: exp(d) below it is subnormal or zero
LN_MIN_NORMAL = math.log(2.0 ** -126)
#: ln of half the smallest subnormal float32, 2^-150: exp(d) below it rounds to zero
LN_ROUNDS_TO_ZERO = math.log(2.0 ** -150)
#: float32 lanes of the vector the counts are made in (an AVX-512 register)
LANES = 16
#: the largest tensor evaluated here, in elements (16 MiB of float32): what one Softmax's evaluation
#: allocates stays within the 64 MiB value budget of the hostile-input tests (tests/test_subnormal.py)
MAX_ELEMENTS = 1 << 22
#: ops that carry a tensor's values to their output unchanged in value (only moved or retyped)
_MOVES = frozenset({"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Transpose", "Expand", "Identity", "Cast",
                    "Dropout"})
#: ops between a Softmax and the MatMul reading its probabilities that keep the values as they are
_PASS = frozenset({"Identity", "Dropout", "Cast", "Reshape", "Unsqueeze", "Squeeze"})
_FLOAT = onnx.TensorProto.FLOAT
#: element types of the stored tensors read as values (a mask, a mask's fill value, its condition)
_VALUE_TYPES = frozenset({onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
                          onnx.TensorProto.BOOL, onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                          onnx.TensorProto.INT8, onnx.TensorProto.UINT8})


@dataclass(frozen=True)
class Underflow:
    """A float32 Softmax whose input has elements far below its row's maximum (module docstring).

    ``elements``: of its input; ``underflow``: elements whose exponential is below the smallest normal
    float (d < -87.34); ``subnormal``: those of them whose exponential is a nonzero subnormal
    (-103.97 <= d < -87.34), what the Softmax writes; ``underflow_vectors``, ``subnormal_vectors``: the
    16-lane vectors along its rows holding at least one such element; ``readers``: (node key, vector
    operations reading a subnormal value) for each MatMul that reads the probabilities as its left
    operand, ``subnormal x ceil(N / 16)``."""

    key: str
    name: str
    elements: int
    underflow: int
    subnormal: int
    underflow_vectors: int
    subnormal_vectors: int
    readers: tuple[tuple[str, int], ...] = ()

    @property
    def assists(self) -> int:
        """The Softmax's own assisted vector operations: one per vector with an underflowing element
        (computing its exponential), two more per vector whose results stay subnormal (the row sum
        and the scaling read them): ``underflow_vectors + 2 * subnormal_vectors``."""
        return self.underflow_vectors + 2 * self.subnormal_vectors

    @property
    def reader_assists(self) -> int:
        return sum(v for _, v in self.readers)


@dataclass(frozen=True)
class Underflows:
    """Every Softmax of a model's main graph that underflows (:class:`Underflow`), those whose input
    could not be evaluated (node key, why), and the graph inputs taken as all ones (attention masks)."""

    found: tuple[Underflow, ...] = ()
    not_evaluated: tuple[tuple[str, str], ...] = ()
    assumed: tuple[str, ...] = ()

    def assists_by_node(self) -> dict[str, int]:
        """Node key -> assisted vector operations it runs (a Softmax's own, a MatMul's reads)."""
        out: dict[str, int] = {}
        for u in self.found:
            if u.assists:
                out[u.key] = out.get(u.key, 0) + u.assists
            for k, v in u.readers:
                if v:
                    out[k] = out.get(k, 0) + v
        return out


class _TooLarge(Exception):
    pass


def _numel(shape) -> int:
    k = 1
    for d in shape:
        k *= int(d)
    return k


class _Offsets:
    """The values reaching a Softmax input, with everything that depends on the model's inputs and
    weights taken as 0. ``static(name)``: the tensor's value when it is computed from constants and
    shapes alone, else None; ``offset(name)``: for any tensor, the array (broadcastable to its shape)
    that the dynamic part is offset by, or None when no offset is known (0)."""

    def __init__(self, g: GraphIR, tensors: dict, opset: int, proto: onnx.GraphProto | None = None):
        self.g = g
        self.proto = proto
        self._inline: dict[str, onnx.TensorProto] | None = None
        self.tensors = tensors
        self.opset = opset
        self.producer: dict[str, int] = {}
        for i, (_, outs) in enumerate(g.io):
            for o in outs:
                if o:
                    self.producer[o] = i
        self.inputs = set(g.inputs) - set(g.initializers)
        self.assumed: set[str] = set()
        self._static: dict[str, np.ndarray | None] = {}
        self._offset: dict[str, np.ndarray | None] = {}

    def shape(self, name: str) -> tuple[int, ...] | None:
        t = self.tensors.get(name)
        if t is None or not t.is_static:
            return None
        return tuple(int(d) for d in t.shape)

    def _attrs(self, i: int) -> dict:
        return {a.name: onnx.helper.get_attribute_value(a) for a in self.g.nodes[i].attribute}

    def static(self, name: str, depth: int = 0) -> np.ndarray | None:
        if name in self._static:
            return self._static[name]
        self._static[name] = None  # a cycle guard while computing
        v = self._compute_static(name, depth)
        if v is not None and v.size > MAX_ELEMENTS:
            v = None
        self._static[name] = v
        return v

    def _stored(self, name: str) -> np.ndarray | None:
        """An initializer's or a Constant's value: the loader keeps the small ones; a larger one (a mask
        baked as a weight) is read from the proto when its bytes are inline, never from external data."""
        v = self.g.const_value(name)
        if v is not None or self.proto is None:
            return v
        rec = self.g.initializers.get(name) or self.g.constants.get(name)
        if rec is None or rec.external or rec.numel > MAX_ELEMENTS or rec.elem_type not in _VALUE_TYPES:
            return None
        if self._inline is None:
            self._inline = {t.name: t for t in self.proto.initializer
                            if t.data_location != onnx.TensorProto.EXTERNAL}
            for n in self.proto.node:
                if n.op_type == "Constant" and n.output:
                    for a in n.attribute:
                        if a.name == "value" and a.t.data_location != onnx.TensorProto.EXTERNAL:
                            self._inline.setdefault(n.output[0], a.t)
        t = self._inline.get(name)
        if t is None:
            return None
        try:
            return onnx.numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - a tensor whose bytes do not match its dims: not a value
            return None

    def _compute_static(self, name: str, depth: int) -> np.ndarray | None:
        v = self._stored(name)
        if v is not None:
            return v
        if name in self.g.initializers or name in self.g.constants:
            return None
        if name in self.inputs:
            t = self.tensors.get(name)
            shape = self.shape(name)
            if t is not None and shape is not None and "mask" in name.lower() and (
                    t.elem_type == onnx.TensorProto.BOOL or np.dtype(
                        onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)).kind in "iu"):
                if _numel(shape) > MAX_ELEMENTS:
                    return None
                self.assumed.add(name)
                return np.ones(shape, dtype=onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))
            return None
        i = self.producer.get(name)
        if i is None or depth > 400:
            return None
        op, domain, _ = self.g.heads[i]
        if domain or len(self.g.io[i][1]) != 1:
            return None
        ins_names = self.g.io[i][0]
        node = self.g.nodes[i]
        if op in ("Shape", "Size"):
            shape = self.shape(ins_names[0]) if ins_names and ins_names[0] else None
            return None if shape is None else evaluate(node, op, [], self.opset, shape)
        if op not in EVALUATORS:
            return None
        ins = []
        for x in ins_names:
            if not x:
                ins.append(None)
                continue
            v = self.static(x, depth + 1)
            if v is None:
                return None
            ins.append(v)
        with np.errstate(all="ignore"):
            return evaluate(node, op, ins, self.opset, max_elements=MAX_ELEMENTS)

    def offset(self, name: str, depth: int = 0) -> np.ndarray | None:
        """The offset of a tensor (class docstring); raises :class:`_TooLarge` past :data:`MAX_ELEMENTS`."""
        if name in self._offset:
            return self._offset[name]
        self._offset[name] = None
        v = self.static(name)
        out = v if v is not None else self._compute_offset(name, depth)
        self._offset[name] = out
        return out

    def _full(self, off: np.ndarray, name: str) -> np.ndarray | None:
        shape = self.shape(name)
        if shape is None:
            return None
        if _numel(shape) > MAX_ELEMENTS:
            raise _TooLarge(name)
        try:
            return np.broadcast_to(off, shape)
        except ValueError:
            return None

    def _compute_offset(self, name: str, depth: int) -> np.ndarray | None:
        i = self.producer.get(name)
        if i is None or depth > 400:
            return None
        op, domain, _ = self.g.heads[i]
        if domain:
            return None
        ins = self.g.io[i][0]
        if op in ("Add", "Sub") and len(ins) == 2 and all(ins):
            a, b = self.offset(ins[0], depth + 1), self.offset(ins[1], depth + 1)
            if a is None and b is None:
                return None
            a = np.float32(0) if a is None else a
            b = np.float32(0) if b is None else b
            with np.errstate(all="ignore"):
                out = np.add(a, b, dtype=np.float32) if op == "Add" else np.subtract(a, b, dtype=np.float32)
            return out if out.size <= MAX_ELEMENTS else None
        if op in ("Mul", "Div") and len(ins) == 2 and all(ins):
            a, b = self.offset(ins[0], depth + 1), self.static(ins[1])
            if a is None or b is None or not np.issubdtype(np.asarray(b).dtype, np.number):
                return None
            with np.errstate(all="ignore"):
                out = np.multiply(a, b, dtype=np.float32) if op == "Mul" else np.divide(a, b, dtype=np.float32)
            return out if out.size <= MAX_ELEMENTS else None
        if op == "Where" and len(ins) == 3 and all(ins):
            c = self.static(ins[0])
            if c is None:
                return None
            a, b = self.offset(ins[1], depth + 1), self.offset(ins[2], depth + 1)
            if a is None and b is None:
                return None
            with np.errstate(all="ignore"):
                out = np.where(c, np.float32(0) if a is None else a, np.float32(0) if b is None else b)
            return out.astype(np.float32, copy=False) if out.size <= MAX_ELEMENTS else None
        if op in _MOVES and ins and ins[0]:
            off = self.offset(ins[0], depth + 1)
            if off is None:
                return None
            full = self._full(off, ins[0])
            out_name = self.g.io[i][1][0]
            out_shape = self.shape(out_name)
            if full is None or out_shape is None:
                return None
            if op == "Transpose":
                perm = self._attrs(i).get("perm")
                return np.transpose(full, perm)
            if op == "Cast":
                return full if self.tensors[out_name].elem_type == _FLOAT else None
            if _numel(out_shape) > MAX_ELEMENTS:
                raise _TooLarge(out_name)
            if op == "Expand":
                return np.broadcast_to(full, out_shape)
            return full.reshape(out_shape) if _numel(out_shape) == full.size else None
        return None


def _row_counts(x: np.ndarray, axis: int, opset: int) -> tuple[int, int, int, int]:
    """(underflow, subnormal, underflow vectors, subnormal vectors) of a Softmax on ``x``."""
    if opset >= 13:
        rows = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
    else:  # the input is coerced to 2-D at ``axis``
        rows = x.reshape(_numel(x.shape[:axis]), -1)
    with np.errstate(all="ignore"):
        d = rows - rows.max(axis=1, keepdims=True)
    under = d < LN_MIN_NORMAL
    sub = under & (d >= LN_ROUNDS_TO_ZERO)
    length = rows.shape[1]
    pad = -length % LANES

    def vectors(mask: np.ndarray) -> int:
        if pad:
            mask = np.concatenate([mask, np.zeros((mask.shape[0], pad), dtype=bool)], axis=1)
        return int(mask.reshape(mask.shape[0], -1, LANES).any(axis=2).sum())

    return int(under.sum()), int(sub.sum()), vectors(under), vectors(sub)


def _readers(g: GraphIR, tensors: dict, start: str, users: dict[str, list[int]]) -> list[tuple[str, str]]:
    """(MatMul node index as key, its B input name) for MatMuls reading ``start`` as their left operand,
    through ops that keep the values (:data:`_PASS`)."""
    out: list[tuple[str, str]] = []
    todo, seen = [start], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for j in users.get(name, ()):
            op, domain, _ = g.heads[j]
            ins, outs = g.io[j]
            if domain:
                continue
            if op == "MatMul" and ins and ins[0] == name and len(ins) > 1:
                out.append((str(j), ins[1]))
            elif op in _PASS and ins and ins[0] == name and outs and outs[0]:
                todo.append(outs[0])
    return out


def find_underflows(g: GraphIR, tensors: dict, opset: int, proto: onnx.GraphProto | None = None) -> Underflows:
    """The Softmax nodes of ``g`` whose input underflows (:class:`Underflows`), keys as node indices;
    ``proto``: the graph's proto, to read stored masks larger than the loader keeps."""
    softmaxes = [i for i in g.order if g.heads[i][0] == "Softmax" and not g.heads[i][1]]
    if not softmaxes:
        return Underflows()
    ev = _Offsets(g, tensors, opset, proto)
    users: dict[str, list[int]] = {}
    for j, (ins, _) in enumerate(g.io):
        for x in ins:
            if x:
                users.setdefault(x, []).append(j)
    found: list[Underflow] = []
    skipped: list[tuple[str, str]] = []
    for i in softmaxes:
        ins, outs = g.io[i]
        t = tensors.get(ins[0]) if ins and ins[0] else None
        if t is None or t.elem_type != _FLOAT:
            continue
        shape = ev.shape(ins[0])
        if shape is None:
            skipped.append((str(i), "its input's shape is not known"))
            continue
        if _numel(shape) > MAX_ELEMENTS:
            skipped.append((str(i), f"its input has {_numel(shape):,} elements, over {MAX_ELEMENTS:,}"))
            continue
        try:
            off = ev.offset(ins[0])
        except _TooLarge as e:
            skipped.append((str(i), f"a tensor on the way to it ({e.args[0]}) is over {MAX_ELEMENTS:,} elements"))
            continue
        if off is None or not shape:
            continue
        try:
            x = np.broadcast_to(np.asarray(off, dtype=np.float32), shape)
        except ValueError:
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in g.nodes[i].attribute}
        axis = int(attrs.get("axis", -1 if opset >= 13 else 1))
        axis = axis + len(shape) if axis < 0 else axis
        under, sub, uv, sv = _row_counts(x, axis, opset)
        if not under:
            continue
        readers = []
        if sub:
            for key, b in _readers(g, tensors, outs[0], users):
                bs = ev.shape(b)
                n_cols = bs[-1] if bs else None
                if n_cols:
                    readers.append((key, sub * -(-n_cols // LANES)))
        found.append(Underflow(str(i), g.heads[i][2], _numel(shape), under, sub, uv, sv, tuple(readers)))
    return Underflows(tuple(found), tuple(skipped), tuple(sorted(ev.assumed)) if found else ())


def underflows(a) -> Underflows:
    """:func:`find_underflows` of an analysis's main graph at its bound shapes."""
    loaded = getattr(a, "loaded", None)
    if loaded is None or a.tensors is None:
        return Underflows()
    return find_underflows(loaded.graph, a.tensors, loaded.opsets.get("", 1), loaded.proto.graph)


__all__ = ["LANES", "LN_MIN_NORMAL", "LN_ROUNDS_TO_ZERO", "MAX_ELEMENTS", "Underflow", "Underflows",
           "find_underflows", "underflows"]
