"""Ops that cost nothing by design, and the small families that sit beside them (ai.onnx):
views and metadata, constants, optionals and sequences, strings, random generators and
ImageDecoder.

Zero-cost declarations carry their reason (shown in reports). Ops that do move data are
rules even when they belong here by theme: ConcatFromSequence, SplitToSequence, the random
generators (they write their output), the string ops and ImageDecoder.

Sequence values have no static shape in onnxperf (only tensors do), so a rule whose input
is a sequence (ConcatFromSequence) always reports ``unknown_shape`` today; rules whose
output is a sequence (SplitToSequence) are registered with ``outputs_may_be_unknown``.
"""

from __future__ import annotations

import math

from .registry import NodeView, OpCost, arith, register, rule, zero_cost

zero_cost(["Shape", "Size"], reason="metadata only: computed from the input's shape, whose data is never read")
zero_cost(["Reshape", "Flatten", "Squeeze", "Unsqueeze"],
          reason="view: same bytes under a new shape; onnxruntime aliases the input buffer")
zero_cost("Identity", reason="view: onnxruntime aliases the buffer, and its graph optimizer removes Identity")
zero_cost("Dropout", reason=(
    "identity at inference (onnxruntime's graph optimizer removes it); with training_mode=True it would "
    "draw a mask and scale (about 3 ops per element), which an inference analysis does not model"))
zero_cost("Constant", reason="folded at load: its value is a weight, not work")
zero_cost(["Optional", "OptionalGetElement", "OptionalHasElement"],
          reason="wraps, unwraps or tests an optional value without touching its data")
zero_cost(["SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
           "SequenceLength"],
          reason=("sequence bookkeeping: moves no data by ONNX semantics (onnxruntime's CPU kernels copy "
                  "tensors into and out of sequences, its CUDA SequenceAt aliases; those copies are not counted)"))


# --- sequences that move data ------------------------------------------------------------

@rule("SplitToSequence", family="sequence", since=11, outputs_may_be_unknown=True)
def split_to_sequence(n: NodeView) -> OpCost:
    """SplitToSequence: no arithmetic; the pieces cover the whole input, so
    bytes_written = input bytes (the sequence output has no static shape), bytes_read =
    input bytes + the optional ``split`` tensor."""
    return OpCost(bytes_written=n.inp(0).nbytes)


@rule("ConcatFromSequence", family="sequence", since=11)
def concat_from_sequence(n: NodeView) -> OpCost:
    """ConcatFromSequence: no arithmetic; every element of the sequence is read once and
    written once: bytes_read = bytes_written = output bytes. (Its input is a sequence, whose
    shape onnxperf does not track: the node is reported unknown_shape until it does.)"""
    return OpCost(bytes_read=n.out(0).nbytes)


# --- strings -----------------------------------------------------------------------------

def string_op(n: NodeView) -> OpCost:
    """StringConcat, StringNormalizer, StringSplit, RegexFullMatch: counted with 0 ops and
    marked inexact. Their work scales with the characters of each string, which no static
    shape tells; strings have no fixed size, so string tensors count 0 bytes, and only the
    fixed-size outputs (RegexFullMatch's bool, StringSplit's int64 lengths) count bytes.
    Counted rather than zero-by-design: these ops do real work that onnxperf cannot size."""
    return OpCost(bytes_written=sum(t.nbytes for t in n.present_outputs), exact=False,
                  note="string work depends on string lengths: not counted")


register(["StringNormalizer"], string_op, family="misc", since=10, outputs_may_be_unknown=True)
register(["StringConcat", "RegexFullMatch"], string_op, family="misc", since=20)
register(["StringSplit"], string_op, family="misc", since=20, outputs_may_be_unknown=True)


# --- random generators -------------------------------------------------------------------

#: ops per generated element. A generator draw counts 1 op.
RANDOM_PER_ELEMENT: dict[str, int] = {
    "RandomUniform": 3,       # draw, scale by (high - low), add low
    "RandomUniformLike": 3,
    "RandomNormal": 7,        # Box-Muller, per pair: 2 draws, log, mul, sqrt, mul, cos, sin, 2 mul
    "RandomNormalLike": 7,    #   = 5 per value; then scale and mean: mul, add
    "Bernoulli": 2,           # draw, compare with p
}


def random_op(n: NodeView) -> OpCost:
    """Random generators: ops = k × output elements, k from :data:`RANDOM_PER_ELEMENT`
    (counted on the float type drawn). The *Like variants use only their input's shape and
    type: bytes_read = 0. Bernoulli reads its probabilities (default traffic)."""
    y = n.out(0)
    ops = RANDOM_PER_ELEMENT[n.op_type] * y.numel
    if n.op_type == "Bernoulli":
        return arith(ops, n.inp(0).elem_type)
    return arith(ops, y.elem_type, bytes_read=0)


register(list(RANDOM_PER_ELEMENT), random_op, family="random")


@rule("Multinomial", family="random", since=7)
def multinomial(n: NodeView) -> OpCost:
    """Multinomial: input [B, K] unnormalized log-probabilities, output [B, S] samples.
    Per row, the cumulative distribution: max (K−1), subtract (K), exp (K), running sum
    (K−1) = 4K − 2; per sample: a draw, a multiply by the row total and a binary search of
    ceil(log2 K) compares. ops = B·(4K − 2) + B·S·(2 + ceil(log2 K)), on the input's type."""
    x, y = n.inp(0), n.out(0)
    b, k = x.shape[0], x.shape[-1]
    s = y.shape[-1]
    search = math.ceil(math.log2(k)) if k > 1 else 0
    return arith(b * (4 * k - 2) + b * s * (2 + search), x.elem_type)


# --- images ------------------------------------------------------------------------------

@rule("ImageDecoder", family="misc", since=20, outputs_may_be_unknown=True)
def image_decoder(n: NodeView) -> OpCost:
    """ImageDecoder: bytes only. Reads the encoded stream and writes the decoded image
    [H, W, C] when its shape is known (H and W come from the file's header, so usually they
    are not, and bytes written is then 0). The decode arithmetic (entropy decoding, IDCT,
    colour conversion) depends on the format and is not counted: always inexact."""
    written = n.out(0).nbytes if n.has_output(0) else 0
    return OpCost(bytes_written=written, exact=False,
                  note="decode arithmetic not counted; decoded size known only from the data")
