"""The house in layers (issue 27, point 5): folders that show the architecture, imports strictly
downward, no function-local import that dodges a cycle.

- The import-linter contracts in pyproject.toml hold (layers cli > api|report > products > analysis >
  insights > predict > hardware|patterns > cost > shapes > graph > ui > base; no circle among the
  modules of a folder; the engines never import a product, a command or a view library; renderers do
  not import the engines that compute).
- Below the command layer no function imports an onnxperf module: a function-local import there could
  only hide a cycle or an upward import from the contracts' reader. Lazy imports stay for heavy
  optional packages (onnxruntime, numba, jinja2, pandas), and in onnxperf/cli, where each command
  imports what it runs.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "onnxperf"

pytest.importorskip("importlinter", reason="import-linter is in the test extra: pip install -e .[test]")


def test_import_contracts_hold():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Contracts: 4 kept, 0 broken." in out, out


def _local_onnxperf_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            names = [n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level else \
                [a.name for a in n.names] if isinstance(n, ast.Import) else []
            if isinstance(n, ast.ImportFrom) and n.level:
                names = ["." * n.level + (n.module or "")]
            for name in names:
                if name.startswith(("onnxperf", ".")):
                    found.append(f"{path.relative_to(ROOT)}:{n.lineno} {name}")
    return found


def test_no_function_local_onnxperf_import_below_the_commands():
    found = [x for p in sorted(PACKAGE.rglob("*.py")) if PACKAGE / "cli" not in p.parents
             for x in _local_onnxperf_imports(p)]
    assert found == []
