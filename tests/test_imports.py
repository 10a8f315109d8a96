"""What a command loads. ``onnxperf summary`` is run by users who wait for it: a whole process costs
its imports, so the CLI imports only the command it runs, and that command only what it uses.

Checked structurally, in a fresh interpreter (``sys.modules`` after the run), never by wall clock.
"""

from __future__ import annotations

import argparse
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
    assert commands == ["onnxperf.cli.common", "onnxperf.cli.request", "onnxperf.cli.summary"]


def test_summary_json_does_not_load_networkx(summary_run):
    """The DAG is built on first access (or when a file's nodes must be sorted): networkx with it."""
    assert _loaded(summary_run["run"], ("networkx",)) == []


def test_hw_list_loads_no_onnx():
    """A command that analyzes nothing loads neither onnx nor numpy nor the cost rules."""
    run = _modules_of("hw", "list")
    assert run["rc"] == 0 and run["stdout"]
    assert _loaded(run["run"], ("onnx", "numpy", "networkx", "onnxperf.cost.analysis", "onnxperf.cost.ops",
                                "onnxperf.cli.request")) == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h", "summary"], ["--debug", "--version"], [],
                                  ["summry", "m.onnx"]])
def test_version_and_help_load_no_command(argv):
    """``onnxperf --version``, ``--help``, no command or a misspelt one: the list of commands comes from
    cli.COMMANDS, no command's module is imported, and nothing outside onnxperf.cli, .ui and .base."""
    run = _modules_of(*argv)
    assert run["rc"] in (0, 2)
    assert _loaded(run["run"], ("onnx", "numpy", "networkx", "google.protobuf")) == []
    ours = [m for m in run["run"] if m.startswith("onnxperf.")]
    assert [m for m in ours if not m.startswith(("onnxperf.cli", "onnxperf.ui", "onnxperf.base"))] == []
    assert [m for m in ours if m.startswith("onnxperf.cli.")] == []


def test_the_help_lists_every_command_from_the_table(capsys):
    """The lazy parser that main() reads prints the same help as the parser with every command made,
    and a misspelt command is told every command's name."""
    assert cli.build_parser(lazy=True).format_help() == cli.build_parser().format_help()
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out and " ".join(line.split()) in " ".join(out.split()) for name, line in cli.COMMANDS.items())
    assert cli.main(["summry"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in cli.COMMANDS)


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_a_command_made_when_reached_is_the_command_made_up_front(name, capsys):
    """A command's parser, made when argparse reaches its name, prints the help and parses as the one
    build_parser() makes up front; the others stay unmade."""
    parser = cli.build_parser(lazy=True)
    with pytest.raises(SystemExit):
        parser.parse_args([name, "--help"])
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert [n for n, p in sub.choices.items() if p is not None] == [name]
    full = cli.build_parser()
    (made,) = [a for a in full._actions if isinstance(a, argparse._SubParsersAction)]
    assert capsys.readouterr().out == made.choices[name].format_help()


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
