"""The rule catalog: every registered rule with its key, family and documented formula.

``python -m onnxperf.cost.catalog > docs/rules.md`` regenerates the reference; a test fails when the
file and the registry disagree, so a formula never changes silently.
"""

from __future__ import annotations

import inspect

from onnxperf.cost.ops import REGISTRY


def _doc(fn) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split())


def _table_entries(fn, op_type: str) -> str:
    """Entries of module-level tables (UPPER_CASE dicts) of the rule's module keyed by this op."""
    mod = inspect.getmodule(fn)
    found = []
    for name, value in sorted(vars(mod).items()):
        if name.isupper() and isinstance(value, dict) and op_type in value:
            found.append(f"`{name}[{op_type}] = {value[op_type]!r}`")
    return " ".join(found)


def catalog_markdown() -> str:
    lines = ["# Cost rules", "",
             "Generated from the registry by `python -m onnxperf.cost.catalog > docs/rules.md`; "
             "`tests/test_docs.py` fails when this file and the code disagree. "
             "Definitions (MAC, FLOP, bytes) are in [conventions.md](conventions.md).", ""]
    by_domain: dict[str, list] = {}
    for e in REGISTRY.entries():
        by_domain.setdefault(e.domain or "ai.onnx", []).append(e)
    for domain in sorted(by_domain, key=lambda d: (d != "ai.onnx", d)):
        entries = sorted(by_domain[domain], key=lambda e: (e.op_type, e.since))
        lines += [f"## {domain} ({len(entries)} rules)", "", "| op | since | family | cost |", "|---|---:|---|---|"]
        for e in entries:
            text = f"zero by design: {e.zero_reason}" if e.is_zero else _doc(e.fn)
            if not e.is_zero:
                table = _table_entries(e.fn, e.op_type)
                text = f"{table} {text}" if table else text
            text = text.replace("|", "\\|")
            lines.append(f"| {e.op_type} | {e.since} | {e.family} | {text} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(catalog_markdown(), end="")
