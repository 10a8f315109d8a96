"""The summary's JSON text (onnxperf.ui.jsonrows): the same data as the standard library's
encoder, deterministic, with one table row per line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onnxperf.cost.analysis import _node_dict, to_dict
from onnxperf.cost.walker import NodeCost, TensorRef
from onnxperf.ui.jsonrows import _ROW, dumps, iter_dumps, node_rows
from onnxperf.products.render.summary import RENDERERS
from onnxperf.analysis.compose import summarize

MODELS = Path(__file__).resolve().parent.parent / "models"

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_same_data_as_the_standard_library(obj):
    assert json.loads(dumps(obj)) == json.loads(json.dumps(obj))


@pytest.mark.parametrize("name,dims", [("resnet50_torch", {"batch": 1}),
                                       ("bert_encoder_torch", {"batch": 1, "sequence": 16})])
def test_summary_json_rows_one_per_line_and_parse_back(name, dims):
    text = RENDERERS["json"](summarize(MODELS / f"{name}.onnx", dims=dims))
    d = json.loads(text)
    node_lines = [ln for ln in text.splitlines() if ln.startswith('    {"id": ')]
    assert len(node_lines) == len(d["nodes"]) > 0
    assert [json.loads(ln.strip().rstrip(",")) for ln in node_lines] == d["nodes"]
    assert text == RENDERERS["json"](summarize(MODELS / f"{name}.onnx", dims=dims))  # deterministic


_names = st.text(max_size=12)
_dims = st.lists(st.one_of(st.integers(0, 2**62), st.text(max_size=4), st.none()), max_size=4)
_refs = st.one_of(st.none(), st.builds(TensorRef, _names, st.sampled_from(["float32", "int64", "undefined"]),
                                       st.one_of(st.none(), _dims.map(tuple))))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(
    NodeCost, st.integers(0, 10**6), st.sampled_from(["", "3/body", "3/body/7/then_branch"]), _names,
    _names, st.sampled_from(["", "com.microsoft"]), st.sampled_from(["conv", "misc"]),
    st.one_of(st.none(), st.integers(1, 23)), st.sampled_from(["counted", "zero", "unknown_shape"]),
    st.lists(_refs, max_size=3).map(tuple), st.lists(_refs, max_size=3).map(tuple),
    *[st.integers(0, 2**70)] * 6, st.booleans(), st.lists(_names, max_size=2).map(tuple), _names), max_size=5))
def test_node_rows_are_the_encoders_text_of_the_node_records(nodes):
    """The fast node writer gives, byte for byte, the C encoder's text of each node's dict: names
    with quotes, control characters and non-ASCII, symbolic and unknown dims, unknown shapes,
    absent inputs, tensors shared between nodes."""
    if len(nodes) > 1 and nodes[0].outputs:  # a tensor record shared with the next node
        nodes[1] = nodes[1]._replace(inputs=nodes[0].outputs)
    assert list(node_rows(nodes, _node_dict)) == [_ROW(_node_dict(n)) for n in nodes]


@pytest.mark.parametrize("name", ["corpus/swin_t_torch", "corpus/gru_greedy_loop_legacy", "bert_encoder_torch"])
def test_summary_json_is_the_same_with_and_without_the_fast_rows(name):
    a = summarize(MODELS / f"{name}.onnx", dims={"batch": 1} if "swin" in name else None)
    text = dumps(to_dict(a))
    assert dumps(to_dict(a, encoded_rows=True)) == text
    # written in pieces (as summary -o writes it): the same text, whatever the batch of rows
    assert "".join(iter_dumps(to_dict(a, encoded_rows=True), batch=7)) == text
    assert "".join(iter_dumps(to_dict(a, encoded_rows=True))) == text
