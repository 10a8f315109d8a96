"""What a command loads. ``onnxperf summary`` is run by users who wait for it: a whole process costs
its imports, so the CLI imports only the command it runs, and that command only what it uses.

Checked structurally, in a fresh interpreter (``sys.modules`` after the run), never by wall clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from onnxperf import cli

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "resnet50_torch.onnx"

#: never needed by ``summary --format json``: other commands' packages and the heavy optional libraries
NOT_FOR_SUMMARY = ("jinja2", "onnxruntime", "numba", "onnxperf.products.compare", "onnxperf.products.check",
                   "onnxperf.products.validate", "onnxperf.hardware.probe", "onnxperf.products.report",
                   "onnxperf.products.sweep", "onnx.reference")

CHILD = r"""
import contextlib, io, json, sys
import onnxperf.cli
after_import = sorted(sys.modules)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = onnxperf.cli.main(sys.argv[1:])
print(json.dumps({"rc": rc, "import": after_import, "run": sorted(sys.modules), "stdout": out.getvalue()}))
"""


def _modules_of(*argv: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.fixture(scope="module")
def summary_run() -> dict:
    return _modules_of("summary", str(MODEL), "--dim", "batch=1", "--format", "json")


def test_importing_the_cli_loads_no_analysis(summary_run):
    """argparse-level only: no onnx, numpy or command module until a command is chosen."""
    assert _loaded(summary_run["import"], ("onnx", "numpy", "networkx", "onnxperf.cost", "onnxperf.cost.ops")) == []
    assert [m for m in summary_run["import"] if m.startswith("onnxperf.cli.")] == []


def test_summary_json_loads_only_what_it_uses(summary_run):
    assert summary_run["rc"] == 0
    assert json.loads(summary_run["stdout"])["schema"] == "onnxperf.analysis/1"
    assert _loaded(summary_run["run"], NOT_FOR_SUMMARY) == []
    commands = sorted(m for m in summary_run["run"] if m.startswith("onnxperf.cli."))
    assert commands == ["onnxperf.cli.common", "onnxperf.cli.summary"]


def test_summary_json_does_not_load_networkx(summary_run):
    """The DAG is built on first access (or when a file's nodes must be sorted): networkx with it."""
    assert _loaded(summary_run["run"], ("networkx",)) == []


def test_hw_list_loads_no_onnx():
    """A command that analyzes nothing loads neither onnx nor numpy nor the cost rules."""
    run = _modules_of("hw", "list")
    assert run["rc"] == 0 and run["stdout"]
    assert _loaded(run["run"], ("onnx", "numpy", "networkx", "onnxperf.cost.analysis", "onnxperf.cost.ops")) == []


@pytest.mark.parametrize("argv, command", [
    (["summary", "m.onnx"], "summary"),
    (["--debug", "check", "m.onnx"], "check"),
    (["--deb", "hw", "list"], "hw"),
    (["--", "sweep", "m.onnx"], "sweep"),
    (["-h", "summary"], None),          # -h prints the list of every command
    (["--help", "summary"], None),
    (["summry", "m.onnx"], None),       # argparse names every choice in its error
    (["-", "summary"], None),
    (["--", "--debug", "summary"], None),
    ([], None),
])
def test_only_the_command_that_runs_is_imported(argv, command):
    assert cli._command_in(argv) == command


def test_the_full_parser_lists_every_command(capsys):
    assert cli.main(["summry"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in cli.COMMANDS)
    parser = cli.build_parser("summary")
    assert parser.parse_args(["summary", "m.onnx"]).model == "m.onnx"
    with pytest.raises(SystemExit):
        parser.parse_args(["hw", "list"])


def test_the_console_command_runs_main_with_the_cyclic_collector_off(monkeypatch):
    """``onnxperf`` (the console script) is cli.console: main() in a process without the cyclic
    collector, which would otherwise rescan every object of a large analysis as it grows."""
    import gc

    from onnxperf import cli

    seen = []
    monkeypatch.setattr(cli, "main", lambda argv=None: seen.append(gc.isenabled()) or 0)
    was = gc.isenabled()
    try:
        with pytest.raises(SystemExit) as ended:  # tests/conftest.py: instead of os._exit
            cli.console()
        assert ended.value.code == 0
    finally:
        if was:
            gc.enable()
    assert seen == [False]
    meta = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'onnxperf = "onnxperf.cli:console"' in meta
