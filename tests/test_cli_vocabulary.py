"""One vocabulary on every command (issue 19, points 2 and 3): the parser of every command walked,
the flags every command shares, progress, colour, "wrote FILE (size)", shell completion, the
output format from -o's suffix, and --input-shape with a named dim (a static export swept by batch)."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.ui import colour
from onnxperf.ui import output
from onnxperf.cli import completion
from onnxperf.ui.progress import Progress, advance
from onnxperf.ui.numbers import binary_bytes

from .util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "models" / "resnet50_torch.onnx"


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, action) for every argument of every command and action."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _walk(sp, path + (name,))
        else:
            yield path, a


def _commands() -> dict[tuple[str, ...], dict[str, argparse.Action]]:
    out: dict[tuple[str, ...], dict[str, argparse.Action]] = {}
    for path, a in _walk(cli.build_parser()):
        for flag in a.option_strings or [a.dest]:
            out.setdefault(path, {})[flag] = a
    return out


# ------------------------------------------------------------------------------------ the parsers

def test_every_argument_of_every_command_has_help_text():
    missing = [(" ".join(path), a.option_strings or a.dest) for path, a in _walk(cli.build_parser())
               if not a.help or a.help == argparse.SUPPRESS or len(a.help.split()) < 2]
    assert missing == []


#: what each command offers of the shared vocabulary (where the option makes sense)
VOCABULARY = {
    ("summary",): {"--dim", "--input-shape", "--convention", "--hw", "--memory", "--memory-dim", "--precision",
                   "--strict", "--trace", "--no-progress", "--format", "-o", "--color", "--json", "--md"},
    ("report",): {"--dim", "--input-shape", "--convention", "--hw", "--memory", "--memory-dim", "--precision",
                  "--strict", "--trace", "--no-progress", "--format", "-o", "--color", "--json", "--md",
                  "--provider", "--validate"},
    ("sweep",): {"--dim", "--input-shape", "--convention", "--hw", "--memory", "--memory-dim", "--precision",
                 "--strict", "--no-progress", "--format", "-o", "--color", "--json"},
    ("validate",): {"--dim", "--input-shape", "--hw", "--memory", "--provider", "--strict", "--trace",
                    "--no-progress", "--format", "-o", "--color", "--json"},
    ("compare",): {"--dim", "--input-shape", "--convention", "--hw", "--memory", "--precision", "--provider",
                   "--strict", "--no-progress", "--format", "-o", "--color", "--json", "--md", "--validate"},
    ("check",): {"--dim", "--input-shape", "--convention", "--hw", "--memory", "--precision", "--provider",
                 "--strict", "--no-progress", "--format", "-o", "--color", "--json", "--md"},
    ("hw", "probe"): {"--no-progress", "--format", "-o", "--color", "--json"},
    ("hw", "calibrate"): {"--hw", "--no-progress", "--format", "-o", "--color", "--json"},
    ("hw", "list"): {"--format", "-o", "--color", "--json"},
    ("hw", "show"): {"--format", "-o", "--color", "--json"},
}

#: the same flag with a different default or choices, and why
EXCEPTIONS = {
    "--format": "each command has its own formats",
    "--provider": "check verifies a provider only when one is named; a run needs one (CPU)",
    "--ep": "the same option as --provider",
    "--repeats": "hw probe repeats each kernel (7), hw calibrate the whole suite (3)",
    "--dim": "sweep takes a list of values (NAME=V[,V...]) where the others take one",
}


def test_the_shared_flags_are_on_every_command_where_they_make_sense():
    cmds = _commands()
    for path, want in VOCABULARY.items():
        assert want <= set(cmds[path]), (path, sorted(want - set(cmds[path])))


def test_a_flag_means_the_same_on_every_command():
    seen: dict[str, list[tuple[tuple[str, ...], argparse.Action]]] = {}
    for path, a in _walk(cli.build_parser()):
        for flag in a.option_strings:
            seen.setdefault(flag, []).append((path, a))
    for flag, uses in seen.items():
        kinds = {(a.dest, type(a).__name__, a.nargs) for _, a in uses}
        assert len(kinds) == 1, (flag, [(p, a.dest, a.nargs) for p, a in uses])
        if flag in EXCEPTIONS:
            continue
        assert len({a.metavar for _, a in uses}) == 1, (flag, [(p, a.metavar) for p, a in uses])
        values = {(repr(a.default), tuple(a.choices or ())) for _, a in uses}
        assert len(values) == 1, (flag, [(p, a.default, a.choices) for p, a in uses])


def test_ep_and_max_memory_are_the_same_options_as_provider_and_memory():
    parser = cli.build_parser()
    a = parser.parse_args(["check", "m.onnx", "--ep", "CPUExecutionProvider"])
    b = parser.parse_args(["check", "m.onnx", "--provider", "CPUExecutionProvider"])
    assert a.provider == b.provider == "CPUExecutionProvider"
    v = parser.parse_args(["validate", "m.onnx", "--hw", "t4", "--max-memory", "2GiB"])
    assert v.memory == "2GiB"


@pytest.mark.parametrize("argv,want", [
    (["summary", "m.onnx", "-o", "x.json"], "json"), (["summary", "m.onnx", "-o", "x.md"], "md"),
    (["summary", "m.onnx", "-o", "x.csv"], "csv"), (["summary", "m.onnx", "-o", "x.txt"], "text"),
    (["summary", "m.onnx", "-o", "x.html"], "text"),  # summary has no html: the default
    (["report", "m.onnx", "-o", "x.json"], "json"), (["report", "m.onnx", "-o", "r.html"], "html"),
    (["report", "m.onnx"], "html"), (["report", "m.onnx", "--md"], "md"),
    (["check", "m.onnx", "-o", "r.sarif"], "sarif"), (["check", "m.onnx", "-o", "r.xml"], "junit"),
    (["compare", "a.onnx", "b.onnx", "-o", "d.html"], "html"),
    (["hw", "show", "t4", "-o", "t4.toml"], "toml"), (["summary", "m.onnx", "-o", "x.json", "--format", "text"], "text"),
])
def test_the_format_follows_the_output_suffix_unless_given(argv, want):
    from onnxperf.cli.common import output_format

    assert output_format(cli.build_parser().parse_args(argv)) == want


# ------------------------------------------------------------------------------------ dims

def _static_mlp(tmp_path: Path, batch=1) -> str:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    p = tmp_path / "static.onnx"
    onnx.save(model(nodes, [vi("x", [batch, 16])], [vi("y", None)], [const("w", [16, 8])]), str(p))
    return str(p)


def test_a_static_export_is_swept_by_batch_through_a_named_input_shape(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    assert cli.main(["sweep", p, "--input-shape", "x=batchx16", "--dim", "batch=1,2,4", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["macs"] for r in d["rows"]] == [b * 16 * 8 for b in (1, 2, 4)]
    assert d["formulas"]["macs"]["terms"] if "terms" in d["formulas"]["macs"] else d["formulas"]["macs"]
    assert cli.main(["sweep", p, "--input-shape", "x=batchx16", "--dim", "batch=1,2", "--no-formulas"]) == 0
    assert "MACs" in capsys.readouterr().out
    # and by resolution, the same way, in every command that takes --input-shape
    assert cli.main(["summary", p, "--input-shape", "x=Bx16", "--dim", "B=3", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["macs"] == 3 * 16 * 8


def test_sweep_memory_marks_the_rows_that_fit_and_finds_the_largest(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    budget = 16 * 8 * 4 + 40 * (16 + 8) * 4  # the weights + the activation peak of 40 rows
    assert cli.main(["sweep", p, "--input-shape", "x=batchx16", "--dim", "batch=1,64", "--memory", str(budget),
                     "--format", "json", "--no-formulas"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["fits_memory"] for r in d["rows"]] == [True, False]
    assert d["memory"]["largest"]["value"] == 40 and d["memory"]["budget_bytes"] == budget


def test_memory_dim_the_model_lacks_names_what_to_do(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    assert cli.main(["summary", p, "--memory", "1GiB"]) == 2
    err = capsys.readouterr().err
    assert "no dim named 'batch' to grow" in err and "--input-shape INPUT=batchx3x224x224" in err


def test_prose_is_cut_between_words_and_a_markdown_note_is_whole(tmp_path, capsys):
    from onnxperf.ui.numbers import cut

    assert cut("the quick brown fox jumps", 20) == "the quick brown fox…"
    assert cut("the quick brown foxes jump", 20) == "the quick brown…"
    assert cut("/a/very/long/node/name/without/any/space", 16) == "/a/very/long/no…"  # a name: where it must
    assert cut("short", 16) == "short"
    p = _static_mlp(tmp_path)
    assert cli.main(["summary", p, "--dim", "nope=3", "--format", "md"]) == 0
    md = capsys.readouterr().out
    note = "--dim nope=3 not applied: the model's inputs have no dim named 'nope' (symbolic dims: none)"
    assert f"> {note}" in md.replace("\\", "")


# ------------------------------------------------------------------------------------ progress

def test_progress_in_a_log_is_a_line_per_period_with_the_time_left():
    buf = io.StringIO()
    with Progress(["measuring", "writing"], stream=buf, terminal=False, interval_s=0.005, first_line_s=0.02,
                  every_s=0.05) as p:
        p.stage("measuring")
        for i in range(4):
            advance(i, 4, "runs")  # reaches the progress shown now, as library code does
            time.sleep(0.03)
        time.sleep(0.08)
    lines = buf.getvalue().splitlines()
    assert lines and all(ln.startswith("onnxperf: [1/2] measuring") for ln in lines)
    assert any(" runs, ~" in ln and " left (" in ln for ln in lines), lines


def test_progress_says_nothing_on_a_quick_run_or_when_turned_off():
    buf = io.StringIO()
    with Progress(["a"], stream=buf, terminal=False) as p:
        p.stage("a")  # done before the first line is due (2 s)
    with Progress(["a"], stream=buf, enabled=False, terminal=True, first_line_s=0) as p:
        p.stage("a")
        time.sleep(0.05)
    assert buf.getvalue() == ""
    advance(1, 2)  # no progress shown: nothing happens


def test_time_left_follows_the_rate_of_the_counted_units():
    p = Progress(["a"], terminal=False, enabled=False)
    p.stage("a")
    p.advance(2, 5)
    p._t_counted = p._t_base + 10.0  # 10 s spent on the first 2 of 5 units since the stage began
    assert p.left_s() == pytest.approx(15.0)
    assert "2/5" in p.log_line() and "~15 s left" in p.log_line()
    # another count in the same stage (the shapes, then the costs) has its own rate, from its start
    p.advance(0, 100, "nodes costed")
    assert p.left_s() is None and p._base_done == 0
    p.advance(25, 100, "nodes costed")
    p._t_counted = p._t_base + 1.0
    assert p.left_s() == pytest.approx(3.0)


def test_a_note_during_the_bar_clears_its_line_and_the_bar_comes_back_under_it():
    from onnxperf.ui.progress import say

    buf = io.StringIO()
    with Progress(["analyzing"], stream=buf, terminal=True, threaded=False) as p:
        p.stage("analyzing")
        say("onnxperf: note: batch set to 1")
    text = buf.getvalue()
    assert "\r\033[2Konnxperf: note: batch set to 1\n\r\033[2K" in text and text.count("analyzing") == 2


def test_the_cost_walk_of_a_large_graph_counts_its_nodes_for_the_progress(monkeypatch):
    import onnxperf
    from onnxperf.cost import walker as cost

    monkeypatch.setattr(cost, "PROGRESS_CHUNK", 10)
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(35)]
    m = model(nodes, [vi("t0", [1, 8])], [vi("t35", None)])
    seen = []
    with Progress(["analyzing"], enabled=False) as p:
        p.stage("analyzing")
        p.advance = lambda done, total, what="": seen.append((done, total, what))
        onnxperf.analyze(m)
    assert seen == [(0, 35, "nodes costed"), (10, 35, "nodes costed"), (20, 35, "nodes costed"),
                    (30, 35, "nodes costed")]


def test_a_progress_without_a_thread_draws_on_each_step():
    buf = io.StringIO()
    with Progress(["checking"], stream=buf, terminal=True, threaded=False) as p:
        p.stage("checking")
        p.advance(1, 3, "models")
        assert p._thread is None
    assert "1/3 models" in buf.getvalue()


# ------------------------------------------------------------------------------------ colour

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour.wanted(_Tty()) and not colour.wanted(io.StringIO())
    assert not colour.wanted(_Tty(), "never") and colour.wanted(io.StringIO(), "always")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour.wanted(_Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour.wanted(io.StringIO())


def test_verdicts_warnings_partial_totals_and_bounds_are_coloured():
    text = ("PASS   a.onnx  fine\nFAIL   b.onnx  over\nMACs  ≥ 1.06 G (partial)\nWarning: noisy\n"
            "Conv  12 us  memory\nGemm  3 us  compute\n")
    out = colour.highlight(text)
    assert colour.paint("PASS", "green") in out and colour.paint("FAIL", "red") in out
    assert colour.paint("(partial)", "yellow") in out and colour.paint("Warning", "yellow") in out
    assert colour.paint("memory", "yellow") in out and colour.paint("compute", "cyan") in out
    assert out.replace("\033[0m", "").replace("\033[32m", "").replace("\033[31m", "").replace(
        "\033[33m", "").replace("\033[36m", "").replace("\033[1m", "") == text  # only escapes added


def test_text_to_a_terminal_is_coloured_and_a_file_never(tmp_path, monkeypatch, capsys):
    p = _static_mlp(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli.main(["check", p, "--no-pyproject"]) == 0
    assert "\033[32mPASS\033[0m" in capsys.readouterr().out
    out = tmp_path / "check.txt"
    assert cli.main(["check", p, "--no-pyproject", "-o", str(out)]) == 0
    assert "\033[" not in out.read_text()
    assert cli.main(["check", p, "--no-pyproject", "--format", "json"]) == 0
    assert "\033[" not in capsys.readouterr().out  # JSON never
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR")
    assert cli.main(["check", p, "--no-pyproject", "--color", "auto"]) == 0
    assert "\033[" not in capsys.readouterr().out


# ------------------------------------------------------------------------------------ wrote FILE

def test_every_file_written_is_named_on_stderr_with_its_size(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    out, trace = tmp_path / "r.html", tmp_path / "t.json"
    assert cli.main(["report", p, "--hw", "t4", "-o", str(out), "--trace", str(trace)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"onnxperf: wrote {out} ({binary_bytes(out.stat().st_size)})" in err
    assert f"onnxperf: wrote {trace} ({binary_bytes(trace.stat().st_size)})" in err
    assert cli.main(["summary", p, "-o", "-"]) == 0  # standard output: nothing to name
    assert "wrote" not in capsys.readouterr().err


def test_two_outputs_of_one_run_may_not_be_the_same_file(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    out = str(tmp_path / "x.json")
    assert cli.main(["report", p, "--hw", "t4", "-o", out, "--trace", out]) == 2
    assert "--trace" in capsys.readouterr().err and not Path(out).exists()


# ------------------------------------------------------------------------------------ trace

def test_trace_on_summary_report_and_validate_has_every_node_once(tmp_path, capsys):
    p = _static_mlp(tmp_path)
    for argv in (["summary", p, "--hw", "t4"], ["report", p, "--hw", "t4", "-o", str(tmp_path / "r.html")]):
        t = tmp_path / f"{argv[0]}.json"
        assert cli.main(argv + ["--trace", str(t)]) == 0
        events = json.loads(t.read_text())["traceEvents"]
        slices = [e for e in events if e["ph"] == "X" and e["pid"] == 1 and not e["name"].startswith("(")]
        assert [e["name"] for e in slices] == ["MatMul", "Relu"]
    assert cli.main(["summary", p, "--trace", str(tmp_path / "no.json")]) == 2
    assert "--trace needs --hw" in capsys.readouterr().err
    spec = tmp_path / "here.toml"
    assert cli.main(["hw", "show", "xeon-silver-4210x2", "-o", str(spec)]) == 0
    t = tmp_path / "validate.json"
    assert cli.main(["validate", p, "--hw", str(spec), "--runs", "2", "--warmup", "1", "--trace", str(t),
                     "-o", str(tmp_path / "v.txt")]) == 0
    pids = {e["pid"] for e in json.loads(t.read_text())["traceEvents"] if e["ph"] == "X"}
    assert pids == {1, 2}  # the predicted schedule and the measured one
    t = tmp_path / "report-validated.json"
    assert cli.main(["report", p, "--hw", str(spec), "--validate", "--runs", "2", "--warmup", "1", "--trace", str(t),
                     "-o", str(tmp_path / "rv.html")]) == 0
    events = [e for e in json.loads(t.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in events} == {1, 2}
    assert [e["name"] for e in events if e["pid"] == 1 and not e["name"].startswith("(")] == ["MatMul", "Relu"]


def test_validate_strict_exits_1_on_a_partial_prediction(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Mystery", ["t"], ["y"], domain="example.x")]
    m = model(nodes, [vi("x", [1, 16])], [vi("y", [1, 16])])
    m.opset_import.append(helper.make_opsetid("example.x", 1))
    p = tmp_path / "partial.onnx"
    onnx.save(m, str(p))
    spec = tmp_path / "here.toml"
    assert cli.main(["hw", "show", "xeon-silver-4210x2", "-o", str(spec)]) == 0
    capsys.readouterr()
    # onnxruntime cannot run an op it does not know: the run stops with exit 2 before --strict counts
    rc = cli.main(["validate", str(p), "--hw", str(spec), "--runs", "1", "--warmup", "0", "--strict"])
    assert rc == 2 and "onnxperf: error:" in capsys.readouterr().err
    ok = _static_mlp(tmp_path)
    assert cli.main(["validate", ok, "--hw", str(spec), "--runs", "1", "--warmup", "0", "--strict",
                     "-o", str(tmp_path / "v.txt")]) == 0


# ------------------------------------------------------------------------------------ completion

def test_completion_scripts_name_every_command_and_option():
    cmds = completion.commands(cli.build_parser())
    paths = {c.path for c in cmds}
    assert {("summary",), ("hw", "calibrate"), ("completion",)} <= paths
    for shell in completion.SHELLS:
        text = completion.script(shell)
        for c in cmds:
            for o in c.options:
                for flag in o.flags:
                    word = flag if shell != "fish" else (f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
                    assert word in text, (shell, c.path, flag)
        assert "t4" in text and "fp16" in text  # presets and choices complete


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
@pytest.mark.parametrize("line,want,unwanted", [
    ("onnxperf s", {"summary", "sweep"}, {"report"}),
    ("onnxperf summary --pre", {"--precision"}, set()),
    ("onnxperf summary m.onnx --precision f", {"fp16", "fp32", "fp8", "fp4"}, {"int8"}),
    ("onnxperf hw ca", {"calibrate"}, set()),
    ("onnxperf hw calibrate --sh", {"--short"}, set()),
    ("onnxperf validate m.onnx --hw a1", {"a10", "a100-40gb", "a100-80gb"}, set()),
    ("onnxperf completion ", {"bash", "zsh", "fish"}, set()),
])
def test_bash_completion_completes(tmp_path, line, want, unwanted):
    script = tmp_path / "c.bash"
    script.write_text(completion.script("bash"))
    words = line.split(" ")
    prog = (f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
            "_onnxperf; printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    got = set(done.stdout.split())
    assert done.returncode == 0 and want <= got and not (unwanted & got), (done.stdout, done.stderr)


def test_the_completion_command_writes_the_script(tmp_path, capsys):
    assert cli.main(["completion", "fish"]) == 0
    assert capsys.readouterr().out.startswith("# fish completion for onnxperf")
    assert cli.main(["completion", "zsh", "-o", str(tmp_path / "_onnxperf")]) == 0
    assert (tmp_path / "_onnxperf").read_text().startswith("#compdef onnxperf")


def test_completion_quotes_help_and_drops_choices_that_are_not_plain_words(tmp_path):
    """A help text with a backslash, quotes, a backtick, $(...) and brackets stays text in every
    script; a choice that is not a plain word (it would run in bash's compgen or zsh's (...)) is left out."""
    p = argparse.ArgumentParser(prog="onnxperf")
    sub = p.add_subparsers()
    q = sub.add_parser("x", help="x")
    q.add_argument("--ab", help="trailing backslash\\ and 'q' `b` $(touch pwned) [x]")
    q.add_argument("--ch", choices=["ok", "x'y", "$(touch pwned)"], help="a choice")
    cmds = completion.commands(p)
    (x,) = [c for c in cmds if c.path == ("x",)]
    assert [o.choices for o in x.options if o.flags == ("--ch",)] == [("ok",)]
    for shell, check in (("bash", ["bash", "-n"]), ("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])):
        script = tmp_path / f"c.{shell}"
        script.write_text(getattr(completion, shell)(cmds, ("t4",)))
        if shutil.which(check[0]):
            assert subprocess.run(check + [str(script)], capture_output=True, timeout=30).returncode == 0, shell
    assert not (tmp_path / "pwned").exists()


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_completion_parses(tmp_path):
    script = tmp_path / "_onnxperf"
    script.write_text(completion.script("zsh"))
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_completion_parses_and_completes(tmp_path):
    script = tmp_path / "onnxperf.fish"
    script.write_text(completion.script("fish"))
    assert subprocess.run(["fish", "--no-execute", str(script)], capture_output=True, timeout=30).returncode == 0

    def complete(line: str) -> set[str]:
        done = subprocess.run(["fish", "-c", f"source {script}; complete -C '{line}'"], capture_output=True,
                              text=True, timeout=30)
        return {row.split("\t")[0] for row in done.stdout.splitlines()}

    assert complete("onnxperf s") == {"summary", "sweep"}
    assert complete("onnxperf summary m.onnx --precision ") == {"fp32", "tf32", "fp16", "bf16", "fp8", "int8",
                                                               "w8a16", "w4a16", "fp4"}
    assert complete("onnxperf hw c") == {"calibrate"} and complete("onnxperf hw calibrate --sh") == {"--short"}
    assert {"a10", "a100-40gb", "a100-80gb"} <= complete("onnxperf validate m.onnx --hw a1")


def teardown_module(module):
    output.announce_writes(False)
    os.environ.pop("FORCE_COLOR", None)
