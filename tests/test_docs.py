"""Documentation that must not drift from the code."""

import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from onnxperf.cost.catalog import catalog_markdown
from onnxperf.cost.ops import REGISTRY

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_rules_reference_matches_registry():
    # Regenerate with: python -m onnxperf.cost.catalog > docs/rules.md
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


def _block(page: str, lang: str) -> str:
    blocks = re.findall(r"```" + lang + r"\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert len(blocks) == 1, f"{page}: expected one ```{lang} block, found {len(blocks)}"
    return blocks[0]


def test_ci_workflow_is_valid_yaml_and_its_check_commands_parse():
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed: the workflow YAML cannot be parsed")
    from onnxperf.cli import build_parser

    wf = yaml.safe_load(_block("ci.md", "yaml"))
    assert wf[True]["pull_request"]["paths"] == ["models/**", "pyproject.toml"]  # YAML 1.1 reads `on` as true
    steps = wf["jobs"]["check"]["steps"]
    assert all(isinstance(s, dict) and ("uses" in s or "run" in s) for s in steps)
    commands = [line.strip() for s in steps for line in s.get("run", "").splitlines()
                if line.strip().startswith("onnxperf check")]
    assert len(commands) == 2
    formats = []
    for line in commands:
        words = shlex.split(line)
        if ">>" in words:  # a shell redirection ends the command's own arguments
            words = words[: words.index(">>")]
        try:
            args = build_parser().parse_args(words[1:])
        except SystemExit as exc:  # argparse refused the line (and printed why)
            pytest.fail(f"docs/ci.md: {line!r} does not parse (exit {exc.code})")
        assert args.command == "check" and args.models == ["models/*.onnx"] and args.output
        formats.append(args.format)
    assert formats == ["md", "sarif"]
    uploaded = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif")]
    assert uploaded[0]["with"]["sarif_file"] == "onnxperf-check.sarif"


def test_check_budget_example_loads(tmp_path):
    """docs/check.md's budget, read as a pyproject.toml (found from the working folder as `check`
    finds it) and as a budget file (keys at the top level, a [lints] table): the same limits."""
    from onnxperf.products.check.budget import discover_budget, read_budget

    toml = _block("check.md", "toml")
    (tmp_path / "pyproject.toml").write_text(toml)
    b = discover_budget(tmp_path)
    assert b.source == f"{tmp_path / 'pyproject.toml'} [tool.onnxperf.budget]"
    assert (b.hw, b.dims) == ("t4", (("batch", 1), ("sequence", 128)))
    assert (b.max_params, b.max_macs, b.max_flops) == (25_000_000, 4_100_000_000, 8_200_000_000)
    assert (b.max_model_size_bytes, b.max_activation_peak_bytes, b.max_total_memory_bytes) == (
        100 << 20, 512 << 20, 1 << 30)
    assert (b.max_latency_s, b.min_throughput_per_s, b.min_opset, b.max_opset) == (0.005, 200, 13, 21)
    assert b.allowed_op_types == ("Conv", "Relu", "com.microsoft::FusedConv")
    assert b.allowed_domains == ("ai.onnx", "com.microsoft")
    assert b.static_shapes and b.allowed_dtypes == ("float32", "float16", "int64")
    assert (b.execution_provider, b.allow_partial) == ("CPUExecutionProvider", False)
    lints = b.lints
    assert dict(lints.levels) == {"OP002": "error", "OP006": "off"}
    assert (lints.min_opset, lints.large_constant_bytes, lints.fp32_weights_min_bytes, lints.duplicate_min_bytes) == (
        13, 1 << 20, 1 << 20, 1 << 10)

    plain = tmp_path / "budget.toml"
    plain.write_text(toml.replace("[tool.onnxperf.budget]\n", "").replace("[tool.onnxperf.lints]", "[lints]"))
    assert replace(read_budget(plain), source=None) == replace(b, source=None)
