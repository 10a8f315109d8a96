"""Documentation that must not drift from the code."""

from pathlib import Path

from onnxperf.catalog import catalog_markdown
from onnxperf.ops import REGISTRY

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_rules_reference_matches_registry():
    # Regenerate with: python -m onnxperf.catalog > docs/rules.md
    assert (DOCS / "rules.md").read_text() == catalog_markdown()


def test_every_rule_documents_its_formula():
    missing = [f"{e.domain or 'ai.onnx'}::{e.op_type}@{e.since}" for e in REGISTRY.entries()
               if (e.is_zero and not e.zero_reason) or (not e.is_zero and not (e.fn.__doc__ or "").strip())]
    assert not missing, f"rules without a docstring/reason: {missing}"


def test_conventions_page_states_the_worked_example():
    text = (DOCS / "conventions.md").read_text()
    for figure in ("18,375,000", "3,001,176", "500,000", "1×3×500×500"):
        assert figure in text


def test_spec_file_example_in_hw_docs_loads(tmp_path):
    import re

    from onnxperf.hardware import load_spec
    toml = re.search(r"```toml\n(.*?)```", (DOCS / "hw.md").read_text(), re.S).group(1)
    p = tmp_path / "my.toml"
    p.write_text(toml)
    spec = load_spec(str(p))
    assert spec.peak_for("float32") == 2 * 10 * 1.5e9 * 16 * 1 * 2
    assert spec.memory_bandwidth_bytes_per_s == 76.8e9
