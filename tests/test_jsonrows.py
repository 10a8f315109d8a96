"""The summary's JSON text (onnxperf.render.jsonrows): the same data as the standard library's
encoder, deterministic, with one table row per line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onnxperf.render.jsonrows import dumps
from onnxperf.render.summary import RENDERERS
from onnxperf.summary import summarize

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
