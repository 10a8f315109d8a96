"""Ops that cost nothing by design, and the small families that sit beside them (ai.onnx):
views and metadata, constants, optionals and sequences, strings, random generators, Dropout
and ImageDecoder.

Zero-cost declarations carry their reason (shown in reports). Ops that do move data are
rules even when they belong here by theme: ConcatFromSequence, SplitToSequence, the random
generators (they write their output), the string ops and ImageDecoder. Dropout is zero-cost
before opset 12 (no training_mode input: the identity at inference); from opset 12 it is a
rule, because its cost depends on the training_mode input: 0 at inference, 3 ops per element
in training.

Sequence values are not tensors: the forward pass follows their element shape and length
(:mod:`onnxperf.shapes.sequences`), and a rule reading one gets no view of it; a rule whose output is
a sequence (SplitToSequence) is registered with ``outputs_may_be_unknown``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from onnxperf.cost.ops.registry import NodeView, OpCost, arith, register, rule, scalar, zero_cost

zero_cost(["Shape", "Size"], reason="metadata only: computed from the input's shape, whose data is never read")
zero_cost(["Reshape", "Flatten", "Squeeze", "Unsqueeze"],
          reason="view: same bytes under a new shape; onnxruntime aliases the input buffer")
zero_cost("Identity", reason="view: onnxruntime aliases the buffer, and its graph optimizer removes Identity")
zero_cost("Dropout", reason=(
    "identity at inference (onnxruntime's graph optimizer removes it); before opset 12 Dropout has no "
    "training_mode input (from opset 12 a rule decides by training_mode)"))
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
    written once: bytes_read = bytes_written = output bytes (the output's shape comes from the
    sequence's element shape and length, :func:`onnxperf.shapes.sequences.concat`)."""
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

#: ops per generated element. A generator draw counts 1 op. docs/rules.md reproduces it.
RANDOM_PER_ELEMENT: dict[str, int] = {
    "RandomUniform": 3,       # draw, scale by (high - low), add low
    "RandomUniformLike": 3,
    "RandomNormal": 7,        # Box-Muller, per pair: 2 draws, log, mul, sqrt, mul, cos, sin, 2 mul
    "RandomNormalLike": 7,    #   = 5 per value; then scale and mean: mul, add
    "Bernoulli": 2,           # draw, compare with p
}


#: generators that read their input's values (Bernoulli's probabilities, on whose float type
#: the ops are counted); the others read nothing (the *Like variants use only the input's
#: shape and type) and count the ops on their output's type.
READS_INPUT = frozenset({"Bernoulli"})


def _random_rule(per_elem: int, reads_input: bool) -> Callable[[NodeView], OpCost]:
    def random_op(n: NodeView) -> OpCost:
        """Random generators: ops = k × output elements, k from :data:`RANDOM_PER_ELEMENT`
        (counted on the float type drawn). The *Like variants use only their input's shape and
        type: bytes_read = 0. Bernoulli reads its probabilities (default traffic)."""
        y = n.out(0)
        if reads_input:
            return arith(per_elem * y.numel, n.inp(0).elem_type)
        return arith(per_elem * y.numel, y.elem_type, bytes_read=0)

    return random_op


for _op, _k in RANDOM_PER_ELEMENT.items():
    register(_op, _random_rule(_k, _op in READS_INPUT), family="random")


#: Dropout in training mode, per element: a random draw, a compare with the ratio (the mask)
#: and a multiply by 1 / (1 − ratio) (the scale).
DROPOUT_TRAINING_PER_ELEMENT = 3


@rule("Dropout", family="random", since=12)
def dropout_12(n: NodeView) -> OpCost:
    """Dropout (data, ratio, training_mode) from opset 12. training_mode absent or the
    constant false: the identity at inference (ratio ignored): no arithmetic and no traffic
    (onnxruntime aliases or removes it), except an optional mask output, written (all true).
    training_mode the constant true: 3 ops per element (random draw, compare, scale
    multiply), default traffic (data read, output and mask written). training_mode not a
    constant: counted as training, an upper bound (exact=False)."""
    x = n.inp(0)
    training = scalar(n.const(2)) if n.has_input(2) else 0
    if training == 0:
        mask = n.out(1).nbytes if n.has_output(1) else 0
        return OpCost(bytes_read=0, bytes_written=mask, note="identity at inference (training_mode absent or false)")
    if training is None:
        return arith(DROPOUT_TRAINING_PER_ELEMENT * x.numel, x.elem_type, exact=False,
                     note="training_mode is not a constant: counted as training (an upper bound)")
    return arith(DROPOUT_TRAINING_PER_ELEMENT * x.numel, x.elem_type, note="training mode: mask and scale")


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
