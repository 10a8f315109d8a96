"""ONNX's own node test cases (issue 26, point 5): every operator's spec examples, with reference
outputs (``onnx.backend.test.case.node.collect_testcases()``, from the installed onnx: the version is in
the pytest header and in every failure message). Each case is analyzed with its inputs' shapes; each
output shape onnxperf gives must be the reference output's, or a data-dependent dim left symbolic, or an
upper bound no smaller than the reference, labelled so (the producing node's ``bound`` is ``upper``).
None may be wrong."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx
import pytest
from onnx.backend.test.case.node import collect_testcases

import onnxperf

#: slow (a browser, onnxruntime, every doc page or every ONNX node case): left out by -m "not slow"
pytestmark = pytest.mark.slow


@functools.lru_cache(maxsize=1)
def _cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cases' own numpy warnings (log of 0 ...)
        with np.errstate(all="ignore"):
            return collect_testcases()


def _check(case) -> tuple[list[str], int, int]:
    """(wrong outputs, exact outputs, upper-bound or symbolic outputs) of one case."""
    m = case.model
    inits = {t.name for t in m.graph.initializer}
    real = [vi for vi in m.graph.input if vi.name not in inits]
    ins, outs = case.data_sets[0]
    shapes = {vi.name: tuple(v.shape) for vi, v in zip(real, ins) if isinstance(v, np.ndarray)}
    a = onnxperf.analyze(m, input_shapes=shapes)
    producer = {o.name: n for n in a.nodes for o in n.outputs if o is not None}
    wrong, exact, bounded = [], 0, 0
    for vi, ref in zip(m.graph.output, outs):
        if not isinstance(ref, np.ndarray):
            continue  # a sequence or an optional: no tensor shape to compare
        ti = a.tensors.get(vi.name)
        got = None if ti is None else ti.shape
        want = tuple(ref.shape)
        if got == want:
            exact += 1
        elif got is None or any(not isinstance(d, int) for d in got):
            bounded += 1  # left unknown or symbolic: a data-dependent dim, never a wrong number
        elif len(got) == len(want) and all(g >= w for g, w in zip(got, want)) and \
                vi.name in producer and producer[vi.name].bound in ("upper", "unknown"):
            bounded += 1
        else:
            wrong.append(f"{case.name} output {vi.name!r}: onnxperf {got}, reference {want}")
    return wrong, exact, bounded


def test_every_node_test_case_is_shaped_right_or_labelled():
    cases = _cases()
    assert len(cases) > 1000, len(cases)
    wrong, exact, bounded = [], 0, 0
    for case in cases:
        w, e, b = _check(case)
        wrong += w
        exact += e
        bounded += b
    assert not wrong, f"onnx {onnx.__version__}: {len(wrong)} wrong shapes: {wrong[:10]}"
    assert exact > 1900 and bounded < 100, (exact, bounded)


@pytest.mark.parametrize("name,want", [("test_averagepool_2d_ceil_last_window_starts_on_pad", (1, 3, 1, 1)),
                                       ("test_maxpool_2d_ceil_output_size_reduce_by_one", (1, 1, 1, 1))])
def test_ceil_mode_pooling_drops_a_last_window_that_starts_in_the_padding(name, want):
    case = next(c for c in _cases() if c.name == name)
    a = onnxperf.analyze(case.model, input_shapes={case.model.graph.input[0].name: case.data_sets[0][0][0].shape})
    assert a.tensors[case.model.graph.output[0].name].shape == want


def test_data_dependent_outputs_are_labelled_upper_bounds():
    """NonZero, TopK with k an input, NonMaxSuppression, Unique, Compress: the largest size, said so."""
    seen = set()
    for case in _cases():
        op = case.model.graph.node[0].op_type if len(case.model.graph.node) == 1 else None
        if op not in ("NonZero", "TopK", "NonMaxSuppression", "Unique", "Compress"):
            continue
        w, e, b = _check(case)
        assert not w
        if b:
            seen.add(op)
            a = onnxperf.analyze(case.model, input_shapes={vi.name: tuple(v.shape) for vi, v in
                                                           zip(case.model.graph.input, case.data_sets[0][0])
                                                           if isinstance(v, np.ndarray)})
            assert a.totals.bound in ("upper", "unknown") and op in dict(a.totals.upper_bounded), case.name
    assert seen == {"NonZero", "TopK", "NonMaxSuppression", "Unique", "Compress"}
