"""Fresh-install truth (issue 14, point 3): every third-party module the package or the tests import
is declared in pyproject.toml, so a new user's ``pip install -e ".[test]"`` in a fresh venv (what
``.ci/run`` does) has all of it; a test may skip only for an extra that pyproject declares."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

#: import name -> distribution name, where they differ
DIST_OF = {"yaml": "pyyaml", "tomli": "tomli"}


def _requirements() -> tuple[set[str], set[str]]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(reqs: list[str]) -> set[str]:
        return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].strip().lower() for r in reqs}

    return names(meta["dependencies"]), names(meta["optional-dependencies"]["test"])


def _imports(folder: Path) -> dict[str, str]:
    """Top-level third-party modules imported anywhere under ``folder`` -> one file importing it."""
    out: dict[str, str] = {}
    local = {p.stem for p in folder.glob("*.py")} | {"onnxperf", "tests", "make_llm"}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                top = mod.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local and top != "__future__":
                    out.setdefault(top, str(path.relative_to(ROOT)))
    return out


def test_every_runtime_import_is_a_declared_dependency():
    deps, _ = _requirements()
    missing = {m: f for m, f in _imports(ROOT / "onnxperf").items() if DIST_OF.get(m, m).lower() not in deps}
    assert not missing, f"imported by the package but not in [project].dependencies: {missing}"


def test_sympy_is_declared_because_the_onnxruntime_fallback_imports_it():
    """onnxruntime >= 1.32 no longer installs sympy, which its symbolic shape inference (the last
    fallback in onnxperf.shapes.infer) imports: without the declaration the fallback is silently gone."""
    deps, _ = _requirements()
    assert "sympy" in deps
    import onnxruntime.tools.symbolic_shape_infer  # noqa: F401  (must import in the installed env)


def test_every_test_import_is_declared_by_the_package_or_the_test_extra():
    deps, test = _requirements()
    missing = {m: f for m, f in _imports(ROOT / "tests").items()
               if DIST_OF.get(m, m).lower() not in deps | test}
    assert not missing, f"imported by the tests but not declared: {missing}"


def test_tests_skip_only_for_declared_extras():
    """``importorskip("X")`` is allowed only for an X that pyproject declares (an optional extra that
    may be absent elsewhere); anything else the tests need must simply be installed."""
    deps, test = _requirements()
    bad = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for m in re.finditer(r"importorskip\(\s*[\"']([\w.]+)[\"']", path.read_text(encoding="utf-8")):
            top = m.group(1).split(".")[0]
            if DIST_OF.get(top, top).lower() not in deps | test and not (ROOT / "onnxperf").joinpath(
                    *m.group(1).split(".")[1:]).exists():
                bad.append((path.name, m.group(1)))
    assert not bad, bad


def test_ci_runs_the_readme_test_command_in_a_fresh_venv():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    test_cmd = next(b for b in blocks if "pytest" in b).strip()
    assert test_cmd in ci
    assert "-m venv" in ci and ci.index("-m venv") < ci.index(test_cmd)
    assert "activate" in ci
