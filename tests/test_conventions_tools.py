"""``--convention torch`` and ``--convention fvcore`` against the tools themselves.

``models/conventions/make_conventions.py`` (run by hand, not by CI) built one small PyTorch module
per case, counted it with ``torch.utils.flop_counter.FlopCounterMode`` and fvcore's
``FlopCountAnalysis``, exported it with the legacy exporter and recorded both totals in
``tests/fixtures/conventions_tools.json``. Units: FlopCounterMode counts FLOPs (2 per
multiply-add), fvcore multiply-adds (which it calls flops); onnxperf's ``totals.flops`` under each
convention is in that convention's unit, so the totals compare like with like.

Where the ONNX graph cannot carry what the tool saw, the fixture names the limit (one of
``onnxperf.cost.conventions.ONNX_LIMITS``, listed in docs/conventions.md) and the figure onnxperf gives
instead, derived from the tool by the script (a second run of the tool, or the tool's own formula
for the part it did not see); the test then checks that figure, and that the gap is real.
"""

import json
from pathlib import Path

import pytest

import onnxperf
from onnxperf.cost.conventions import ONNX_LIMITS, TABLES

ROOT = Path(__file__).resolve().parent.parent
FX = json.loads((ROOT / "tests" / "fixtures" / "conventions_tools.json").read_text())
CASES = FX["cases"]
TOOLS = sorted(FX["units"])  # the conventions of the PyTorch tools (tf: tests/test_conventions_tf.py)

#: the op families issue 16 asks the fixtures to cover, each with at least one case
FAMILIES = ("conv", "matmul", "attention", "norm", "pool", "resize", "rnn", "elementwise", "activation")


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_convention_gives_the_tools_total(name, tool):
    case = CASES[name]
    a = onnxperf.analyze(ROOT / case["onnx_file"], convention=tool)
    assert a.totals.complete, a.totals.uncosted
    tool_total = case[tool]["flops"]
    gap = case["gaps"].get(tool)
    if gap is None:
        assert a.totals.flops == tool_total
    else:
        assert gap["reason"] == ONNX_LIMITS[gap["limit"]]
        assert tool_total != gap["onnxperf_flops"]  # a gap that is not one would hide a fix
        assert a.totals.flops == gap["onnxperf_flops"], gap["derived_as"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_convention_macs_are_half_its_flops(name):
    a = onnxperf.analyze(ROOT / CASES[name]["onnx_file"], convention="torch")
    assert 2 * a.totals.macs == a.totals.flops


def test_fixtures_cover_every_family_and_the_transposed_grouped_3d_cases():
    assert {c["family"] for c in CASES.values()} >= set(FAMILIES)
    for needed in ("conv1d", "conv2d", "conv3d", "conv_transpose2d", "conv2d_grouped", "linear_2d", "matmul_2d",
                   "bmm", "einsum_bmm", "sdpa", "multihead_attention", "batchnorm2d", "layernorm", "groupnorm",
                   "instancenorm2d", "maxpool2d", "adaptive_avgpool2d_1", "upsample_nearest2d",
                   "upsample_bilinear2d", "upsample_linear1d", "upsample_trilinear3d", "lstm", "gru", "rnn_tanh",
                   "relu", "add_mul"):
        assert needed in CASES


def test_fixture_states_units_and_exporter():
    assert FX["units"]["torch"].startswith("FLOPs")
    assert FX["units"]["fvcore"].startswith("multiply-adds")
    assert "dynamo=False" in FX["exporter"]
    for case in CASES.values():
        assert (ROOT / case["onnx_file"]).is_file()
        assert set(case["gaps"]) <= set(TOOLS)


def test_conventions_page_shows_the_table_the_code_uses():
    # Regenerate with: python -m onnxperf.cost.conventions --update
    from onnxperf.cost.conventions import conventions_markdown, updated_page

    page = (ROOT / "docs" / "conventions.md").read_text()
    assert conventions_markdown() in page
    assert updated_page(page) == page
    for text in ONNX_LIMITS.values():
        assert text.replace("|", "\\|") in page


def test_convention_table_keys_name_registered_families_and_ops():
    from onnxperf.cost.ops import REGISTRY
    from onnxperf.cost.ops.registry import FAMILIES as REGISTERED

    for table in TABLES.values():
        assert set(table.families) <= set(REGISTERED)
        for key in table.ops:
            domain, _, op = key.rpartition("::")
            assert REGISTRY.lookup(domain, op, None) is not None, key
