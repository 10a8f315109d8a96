"""``--precision``: what if the model ran in another precision? (issue 18, point 3)

Models are deployed in fp16, bf16, int8 ... while the file is often fp32: the question is what
the figures would be in the deployment precision. A precision what-if takes an analysis and
re-types every floating-point tensor (float32, float16, bfloat16, float64: weights and
activations alike) to the precision asked for; integer and bool tensors (indices, shapes, masks)
stay as they are. Then:

* **bytes**: a node's bytes read scale by (its input tensors' bytes in the new precision) / (their
  bytes as stored), its bytes written likewise over its outputs. For rules that count whole
  tensors (almost all) this is exact; for the few that count part of a tensor (a Gather reads its
  rows, not its table) it keeps the same part;
* **weights**: parameter bytes of floating-point weights at the new width (:attr:`Totals.param_bytes`,
  by dtype); activation memory (liveness) at the new width;
* **peak**: every node whose arithmetic is floating point uses the precision's peak
  (``tf32``: the tensor-core rate for fp32 data, bytes unchanged; ``int8``: the integer peak, as a
  fully quantized deployment would); MACs and FLOPs do not change: the same arithmetic is done.

Weight-only and block-scaled precisions (issue 29, item 5), as LLMs are deployed:

* ``w8a16`` / ``w4a16``: the weights of the matrix products (2-D or larger floating-point initializers
  that a MatMul, Gemm or Conv reads, directly or through a Transpose) stored as int8 / int4 with one
  fp16 scale per group of 128 weights (and, for int4, a 4-bit zero point: AWQ / GPTQ layouts):
  8 + 16/128 = 8.125 and 4 + 20/128 = 4.15625 bits per weight; every other floating-point tensor
  (activations, embeddings, norms) fp16; arithmetic at the fp16 peak (the kernel dequantizes: the
  dequantization's own arithmetic is not counted);
* ``fp4``: every floating-point tensor as NVFP4 (4-bit e2m1 with an fp8 scale per 16 elements: 4.5
  bits), arithmetic at the fp4 peak (Blackwell; another device falls back to its fp8, then fp16 peak,
  :meth:`onnxperf.hardware.spec.HardwareSpec.resolve_peak`).

A tensor's bytes are ``ceil(elements · bits / 8)`` at these effective bits.

This is a what-if, not a conversion: accuracy is not modelled, nor the Quantize/Cast nodes a real
conversion inserts at the graph's edges. Every output says which precision its figures are for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError
from onnxperf.cost.analysis import Costs, _by_op_type, costs
from onnxperf.cost.request import Request

_T = onnx.TensorProto
#: the floating-point types a what-if re-types
FLOAT_TYPES = frozenset({_T.FLOAT, _T.FLOAT16, _T.BFLOAT16, _T.DOUBLE})
_FLOAT_NAMES = frozenset(dtypes.name(t) for t in FLOAT_TYPES)
#: every floating-point element type's name (float8 and float4 included: what a what-if may leave a cache in)
_ANY_FLOAT_NAMES = frozenset(dtypes.name(t) for t in onnx.TensorProto.DataType.values() if t and dtypes.is_float(t))


@dataclass(frozen=True)
class Precision:
    name: str  # the --precision value
    elem_type: int  # what floating-point tensors become
    peak_key: str  # HardwareSpec.peak_flops_per_s key for their arithmetic
    text: str  # one line for every output
    #: block scaling of every floating-point tensor: elements per block and the scale's bits (fp4: 16, 8)
    block: int = 0
    block_bits: int = 0
    #: weight-only: what the matrix products' weights become (None: like every other tensor), with
    #: their group size and the bits of a group's scale and zero point
    weight_elem_type: int | None = None
    weight_group: int = 0
    weight_group_bits: int = 0

    @property
    def dtype(self) -> str:
        return dtypes.name(self.elem_type)

    @property
    def weight_dtype(self) -> str:
        return dtypes.name(self.weight_elem_type if self.weight_elem_type is not None else self.elem_type)

    @property
    def tensor_bits(self) -> Fraction:
        """Effective bits per element of a floating-point tensor (its scale included)."""
        extra = Fraction(self.block_bits, self.block) if self.block else Fraction(0)
        return Fraction(dtypes.bits(self.elem_type)) + extra

    @property
    def weight_bits(self) -> Fraction:
        """Effective bits per weight of a matrix product (its group's scale and zero point included)."""
        if self.weight_elem_type is None:
            return self.tensor_bits
        extra = Fraction(self.weight_group_bits, self.weight_group) if self.weight_group else Fraction(0)
        return Fraction(dtypes.bits(self.weight_elem_type)) + extra

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tensor_dtype": self.dtype, "peak": self.peak_key, "what_if": self.text,
                "weight_dtype": self.weight_dtype, "bits_per_weight": float(self.weight_bits),
                "bits_per_activation": float(self.tensor_bits)}


PRECISIONS: dict[str, Precision] = {p.name: p for p in (
    Precision("fp32", _T.FLOAT, "fp32", "floating-point tensors as float32, arithmetic at the fp32 peak"),
    Precision("tf32", _T.FLOAT, "tf32", "floating-point tensors as float32, arithmetic at the tf32 (tensor-core) peak"),
    Precision("fp16", _T.FLOAT16, "fp16", "floating-point tensors as float16, arithmetic at the fp16 peak"),
    Precision("bf16", _T.BFLOAT16, "bf16", "floating-point tensors as bfloat16, arithmetic at the bf16 peak"),
    Precision("fp8", _T.FLOAT8E4M3FN, "fp8", "floating-point tensors as float8 (e4m3), arithmetic at the fp8 peak"),
    Precision("int8", _T.INT8, "int8", "floating-point tensors as int8 (fully quantized), arithmetic at the int8 peak"),
    Precision("w8a16", _T.FLOAT16, "fp16", "weight-only int8: matrix-product weights as int8 with an fp16 scale per "
              "128 (8.125 bits), other tensors float16, arithmetic at the fp16 peak",
              weight_elem_type=_T.INT8, weight_group=128, weight_group_bits=16),
    Precision("w4a16", _T.FLOAT16, "fp16", "weight-only int4 (AWQ/GPTQ): matrix-product weights as int4 with an fp16 "
              "scale and a 4-bit zero per 128 (4.156 bits), other tensors float16, arithmetic at the fp16 peak",
              weight_elem_type=_T.INT4, weight_group=128, weight_group_bits=20),
    Precision("fp4", _T.FLOAT4E2M1, "fp4", "floating-point tensors as NVFP4 (e2m1 with an fp8 scale per 16: 4.5 bits), "
              "arithmetic at the fp4 peak", block=16, block_bits=8),
)}


def get(name: str) -> Precision:
    p = PRECISIONS.get(str(name).lower())
    if p is None:
        raise OptionError(f"--precision {name!r}: choose one of {', '.join(PRECISIONS)}")
    return p


class _Retyped:
    """A tensor record seen in another element type (what liveness and the LLM figures read), at
    ``bits`` per element when a block or group scale widens it."""

    __slots__ = ("name", "elem_type", "shape", "is_static", "bits")

    def __init__(self, ti, elem_type: int, bits: Fraction | None = None):
        self.name, self.elem_type, self.shape, self.is_static = ti.name, elem_type, ti.shape, ti.is_static
        self.bits = bits

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape or ():
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        if self.bits is not None and self.bits.denominator != 1:
            return _nbytes(self.numel, self.bits)
        return dtypes.nbytes(self.elem_type, self.numel)


def _ref_bytes(ref, dtype_name: str | None = None) -> int | None:
    if ref is None or ref.shape is None or not all(isinstance(d, int) for d in ref.shape):
        return None
    bits = _BITS_BY_NAME.get(dtype_name or ref.dtype)
    if bits is None:
        return None
    n = 1
    for d in ref.shape:
        n *= d
    return (n * bits + 7) // 8


_BITS_BY_NAME = {dtypes.name(t): dtypes.bits(t) for t in onnx.TensorProto.DataType.values()
                 if t and dtypes.bits(t) is not None}


#: ops whose weight operand a weight-only precision stores quantized (its index among the inputs)
_WEIGHT_INPUT = {"MatMul": 1, "Gemm": 1, "Conv": 1, "ConvTranspose": 1, "FusedMatMul": 1}


def quantized_weights(a: Costs) -> frozenset[str]:
    """The weights of the matrix products: floating-point initializers of rank 2 or more that a MatMul,
    Gemm or Conv reads as its weight, directly or through a Transpose (what weight-only precisions store
    quantized; embeddings, norms and biases stay)."""
    lm = a.loaded
    inits = lm.graph.initializers if lm is not None else {}
    transposed: dict[str, str] = {}
    for n in a.nodes:
        if n.op_type == "Transpose" and n.inputs and n.inputs[0] is not None and n.outputs and n.outputs[0] is not None:
            transposed[n.outputs[0].name] = n.inputs[0].name
    out = set()
    for n in a.nodes:
        k = _WEIGHT_INPUT.get(n.op_type)
        if k is None or len(n.inputs) <= k or n.inputs[k] is None:
            continue
        name = n.inputs[k].name
        name = transposed.get(name, name)
        rec = inits.get(name)
        if rec is not None and rec.elem_type in FLOAT_TYPES and len(rec.dims) >= 2:
            out.add(name)
    return frozenset(out)


def _bits_of(p: Precision, weights: frozenset[str]):
    """The effective bits of a floating-point tensor record under ``p`` (None: not floating point, kept)."""
    tb, wb = p.tensor_bits, p.weight_bits

    def bits(ref) -> Fraction | None:
        if ref is None or ref.dtype not in _FLOAT_NAMES:
            return None
        return wb if ref.name in weights else tb
    return bits


def _nbytes(numel: int, bits: Fraction) -> int:
    return -(-(numel * bits.numerator) // (8 * bits.denominator))


def rescaled(total: int, refs, bits) -> int:
    """``total`` scaled by the refs' bytes at their what-if bits over their bytes as stored."""
    before = after = 0
    for r in refs:
        b = _ref_bytes(r)
        if b is None:
            continue
        before += b
        nb = bits(r)
        after += b if nb is None else _nbytes(_numel(r.shape), nb)
    if before == 0 or before == after:
        return total
    return (total * after + before // 2) // before  # rounded, exact integers


def _fractional(bits: Fraction | None) -> Fraction | None:
    """``bits`` where a scale makes them fractional (what :class:`_Retyped` must be told), else None."""
    return bits if bits is not None and bits.denominator != 1 else None


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def what_if(a: Costs, precision: Precision | str) -> Costs:
    """``a`` with every floating-point tensor in ``precision`` (see the module docstring)."""
    p = get(precision) if isinstance(precision, str) else precision
    new = p.dtype
    weights = quantized_weights(a) if p.weight_elem_type is not None else frozenset()
    wdt = p.weight_dtype
    bits = _bits_of(p, weights)
    cache: dict[int, object] = {}

    def retype(refs):
        out = []
        for r in refs:
            if r is not None and r.dtype in _FLOAT_NAMES:
                hit = cache.get(id(r))
                if hit is None:
                    hit = cache[id(r)] = type(r)(r.name, wdt if r.name in weights else new, r.shape)
                r = hit
            out.append(r)
        return tuple(out)

    nodes = []
    for n in a.nodes:
        ins, outs = retype(n.inputs), retype(n.outputs)
        nodes.append(_node(n, ins, outs, rescaled(n.bytes_read, n.inputs, bits), rescaled(n.bytes_written, n.outputs, bits)))
    nodes_t = tuple(nodes)
    main = [n for n in nodes_t if not n.scope]
    t = a.totals
    # parameters by dtype: the quantized weights apart (a weight-only precision), the other floats at the
    # tensors' width, each at its effective bits (scales included)
    inits = a.loaded.graph.initializers if a.loaded is not None else {}
    q_count = sum(_numel(inits[w].dims) for w in weights if w in inits)
    by_bytes: dict[str, int] = {}
    by_count: dict[str, int] = {}
    for dt, count in t.params_by_dtype:
        if dt in _FLOAT_NAMES:
            parts = ((wdt, q_count, p.weight_bits), (new, count - q_count, p.tensor_bits)) if q_count else \
                ((new, count, p.tensor_bits),)
            q_count = 0  # counted once, with the first floating-point dtype
            for key, k, b in parts:
                if k > 0:
                    by_count[key] = by_count.get(key, 0) + k
                    by_bytes[key] = by_bytes.get(key, 0) + _nbytes(k, b)
        else:
            by_count[dt] = by_count.get(dt, 0) + count
            by_bytes[dt] = by_bytes.get(dt, 0) + dict(t.param_bytes_by_dtype)[dt]
    totals = replace(t, bytes_read=sum(n.bytes_read for n in main), bytes_written=sum(n.bytes_written for n in main),
                     param_bytes=sum(by_bytes.values()), param_bytes_by_dtype=tuple(sorted(by_bytes.items())),
                     params_by_dtype=tuple(sorted(by_count.items())))
    tensors = None
    if a.tensors is not None:
        tensors = {k: (_Retyped(ti, p.weight_elem_type if k in weights else p.elem_type, _fractional(bits(_Ref(ti))))
                       if ti.elem_type in FLOAT_TYPES else ti) for k, ti in a.tensors.items()}
    model = replace(a.model, inputs=retype(a.model.inputs), outputs=retype(a.model.outputs))
    return replace(a, model=model, nodes=nodes_t, totals=totals, by_op_type=_by_op_type(nodes_t), tensors=tensors)


def kv_what_if(a: Costs, names: frozenset[str] | set[str], precision: Precision | str) -> Costs:
    """``a`` with the floating-point tensors ``names`` (a decoder's KV cache: its inputs, presents and
    their copies) in ``precision`` (``--kv-precision``: an fp8 or int8 cache beside fp16 weights); every
    node's bytes rescaled over those tensors only; weights and arithmetic unchanged."""
    p = get(precision) if isinstance(precision, str) else precision
    tb = p.tensor_bits

    def bits(ref) -> Fraction | None:
        # any floating-point cache: fp32 as exported, or fp8 / fp4 after a --precision what-if
        return tb if ref is not None and ref.name in names and ref.dtype in _ANY_FLOAT_NAMES else None

    cache: dict[int, object] = {}

    def retype(refs):
        out = []
        for r in refs:
            if bits(r) is not None:
                hit = cache.get(id(r))
                if hit is None:
                    hit = cache[id(r)] = type(r)(r.name, p.dtype, r.shape)
                r = hit
            out.append(r)
        return tuple(out)

    nodes = tuple(_node(n, retype(n.inputs), retype(n.outputs), rescaled(n.bytes_read, n.inputs, bits),
                        rescaled(n.bytes_written, n.outputs, bits)) for n in a.nodes)
    tensors = None
    if a.tensors is not None:
        tensors = {k: (_Retyped(ti, p.elem_type, _fractional(tb)) if k in names and dtypes.is_float(ti.elem_type) else ti)
                   for k, ti in a.tensors.items()}
    model = replace(a.model, inputs=retype(a.model.inputs), outputs=retype(a.model.outputs))
    return a.with_nodes(nodes, model=model, tensors=tensors)


class _Ref:
    """A tensor record as :func:`_bits_of` reads it (name and dtype name)."""

    __slots__ = ("name", "dtype")

    def __init__(self, ti):
        self.name, self.dtype = ti.name, dtypes.name(ti.elem_type)


def priced(request: Request, empty_dims: bool = False) -> Costs:
    """The costs ``request`` names (:func:`onnxperf.cost.analysis.costs`), at its precision what-if when it
    asks for one (:func:`what_if`)."""
    a = costs(request, empty_dims)
    return what_if(a, get(request.precision)) if request.precision is not None else a


def _node(n, ins, outs, bytes_read: int, bytes_written: int):
    """A copy of NodeCost ``n`` with new tensor records and byte counts (every other field kept)."""
    return type(n)(n.id, n.scope, n.name, n.op_type, n.domain, n.family, n.rule_since, n.status, ins, outs,
                   n.macs, n.flops, n.int_ops, bytes_read, bytes_written, n.params, n.exact, n.blocking, n.note, n.bound)
