"""The command line against a hostile or careless user (issue 28, items 7, 8 and 9).

- Item 7: two outputs of one run never go to one stream or file: ``--trace -`` beside the result on
  standard output, ``--trace /dev/stdout`` with standard output redirected; refused in one line, exit 2,
  before any work.
- Item 8: a signal (SIGTERM, SIGHUP, SIGINT) while a file is written leaves no temporary file and the
  old file as it was; the run ends with 128 + the signal's number and one line on stderr.
- Item 9: what argparse refuses is one line (``onnxperf: error: ...``, exit 2, no usage block), with
  "did you mean" for an option or a choice close to a real one; ``--help`` is unchanged.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.ui import output

from .util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
#: a subprocess that takes longer than this is hung (a guard, not a measurement)
HANG_S = 120


@pytest.fixture()
def mlp(tmp_path) -> Path:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    p = tmp_path / "mlp.onnx"
    onnx.save(model(nodes, [vi("x", ["batch", 8])], [vi("y", None)], [const("w", [8, 4])]), str(p))
    return p


def _one_line_error(capsys, argv: list[str]) -> str:
    """``cli.main(argv)``: exit 2, nothing on stdout, exactly one line on stderr, no usage block."""
    rc = cli.main(argv)
    cap = capsys.readouterr()
    assert rc == 2, cap.err
    assert cap.out == ""
    assert cap.err.startswith("onnxperf: error: ") and cap.err.count("\n") == 1, cap.err
    assert "usage:" not in cap.err and "Traceback" not in cap.err
    return cap.err


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


# --- item 9: argparse's errors --------------------------------------------------------------------------

@pytest.mark.parametrize("argv,says,hint", [
    (["summary", "{m}", "--precision", "double"], "argument --precision: invalid choice: 'double'", None),
    (["summary", "{m}", "--precision", "fp3"], "invalid choice: 'fp3'", "did you mean 'fp32'?"),
    (["summary", "{m}", "--format", "jsn"], "invalid choice: 'jsn'", "did you mean 'json'?"),
    (["summary", "{m}", "--context", "0"], "argument --context: '0': must be a positive integer", None),
    (["summary", "{m}", "--prompt", "0"], "argument --prompt: '0': must be a positive integer", None),
    (["summary", "{m}", "--prompt", "many"], "argument --prompt: 'many' is not an integer", None),
    (["completion", "tcsh"], "argument shell: invalid choice: 'tcsh'", None),
    (["completion", "bsh"], "invalid choice: 'bsh'", "did you mean 'bash'?"),
    (["summry", "{m}"], "invalid choice: 'summry'", "did you mean 'summary'?"),
    (["hw", "lst"], "invalid choice: 'lst'", "did you mean 'list'?"),
    (["summary", "{m}", "--dims", "batch=1"], "unrecognized arguments: --dims batch=1", "did you mean --dim?"),
    (["summary", "{m}", "--dims=batch=1"], "unrecognized arguments: --dims=batch=1", "did you mean --dim?"),
    (["report", "{m}", "--input_shape", "x=1x8"], "unrecognized arguments", "did you mean --input-shape?"),
    (["hw", "probe", "--repets", "3"], "unrecognized arguments: --repets 3", "did you mean --repeats?"),
    (["summary", "{m}", "--zzzz"], "unrecognized arguments: --zzzz", None),
    (["summary", "{m}", "{m}"], "unrecognized arguments: ", None),
    (["summary"], "the following arguments are required: MODEL; see onnxperf summary --help", None),
    (["hw"], "the following arguments are required: ACTION; see onnxperf hw --help", None),
    (["summary", "{m}", "--dim"], "argument --dim: expected one argument", None),
])
def test_a_bad_command_line_is_one_line_with_a_suggestion_when_close(argv, says, hint, mlp, capsys):
    err = _one_line_error(capsys, [a.format(m=mlp) for a in argv])
    assert says in err
    if hint is None:
        assert "did you mean" not in err
    else:
        assert err.rstrip("\n").endswith(hint), err


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_suggests_its_own_option_for_a_typo(name, capsys):
    """Each command's long options, mistyped by a letter, are suggested back (the command's own, not
    another command's)."""
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    command = sub.choices[name]
    nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
    argv = [name]
    if nested:  # hw: its first action
        action, command = next(iter(nested[0].choices.items()))
        argv.append(action)
    for a in command._actions:  # what the command requires, so that the typo is the only error
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction):
            argv.append(str(next(iter(a.choices))) if a.choices else "m.onnx")
        elif a.required:
            argv += [a.option_strings[0], str(next(iter(a.choices))) if a.choices else "x"]
    option = next(o for a in command._actions for o in a.option_strings if o.startswith("--") and o != "--help")
    err = _one_line_error(capsys, argv + [option + "x"])
    assert f"did you mean {option}?" in err


def test_help_is_unchanged(capsys):
    """``--help`` still prints argparse's usage and options on stdout, exit 0."""
    assert cli.main(["summary", "--help"]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("usage: onnxperf summary") and "--precision {fp32," in cap.out and cap.err == ""
    made = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0]
    assert cap.out == made.choices["summary"].format_help()
    assert cli.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: onnxperf [-h] [--version] [--debug] COMMAND ...")


def test_a_prompt_longer_than_the_context_is_refused(mlp, capsys):
    err = _one_line_error(capsys, ["summary", str(mlp), "--context", "100", "--prompt", "200"])
    assert "--prompt 200: longer than --context 100" in err and "give --context 200 or more" in err


def test_a_bad_command_line_through_the_console_script(mlp):
    """The installed entry point: the same one line, exit 2."""
    r = subprocess.run([sys.executable, "-m", "onnxperf", "summary", str(mlp), "--dims", "batch=2"],
                       capture_output=True, text=True, env=_env(), timeout=HANG_S)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "onnxperf: error: unrecognized arguments: --dims batch=2; did you mean --dim?\n"


# --- item 7: two outputs, one stream ------------------------------------------------------------------

@pytest.mark.parametrize("argv,says", [
    (["summary", "{m}", "--hw", "t4", "--trace", "-"],
     "--trace -: standard output, where the result (no -o) goes too; write one of them to a file"),
    (["summary", "{m}", "--hw", "t4", "-o", "-", "--trace", "-"], "--trace -: standard output, where -o - goes too"),
    (["report", "{m}", "--hw", "t4", "--format", "json", "--trace", "-"], "--trace -: standard output"),
    (["report", "{m}", "--hw", "t4", "-o", "{d}/t.json", "--trace", "{d}/t.json"],
     "--trace {d}/t.json: is also the -o file; give them two names"),
])
@pytest.mark.parametrize("model_exists", [True, False])
def test_two_outputs_to_one_stream_are_refused_before_any_work(argv, says, model_exists, mlp, tmp_path, capsys):
    """Refused before the model is read: a model that does not exist is not what the error is about."""
    m = mlp if model_exists else tmp_path / "missing.onnx"
    err = _one_line_error(capsys, [a.format(m=m, d=tmp_path) for a in argv])
    assert says.format(d=tmp_path) in err
    assert not (tmp_path / "t.json").exists()


def test_the_trace_on_standard_output_beside_a_result_file_is_fine(mlp, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert cli.main(["summary", str(mlp), "--hw", "t4", "--format", "json", "-o", str(out), "--trace", "-"]) == 0
    trace = capsys.readouterr().out
    assert '"traceEvents"' in trace and out.read_text().startswith("{")


def test_the_null_device_takes_any_number_of_outputs(mlp, capsys):
    assert cli.main(["summary", str(mlp), "--hw", "t4", "-o", os.devnull, "--trace", os.devnull]) == 0


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
@pytest.mark.parametrize("trace", ["/dev/stdout", "/proc/self/fd/1", "{d}/out.txt"])
def test_a_name_of_redirected_standard_output_is_standard_output(trace, mlp, tmp_path):
    """``--trace /dev/stdout > out.txt``: the trace and the summary would both go to out.txt (the
    trace lost, or two documents in one file): refused, out.txt untouched. The same when the trace
    names the file standard output is redirected to."""
    trace = trace.format(d=tmp_path)
    if trace.startswith("/proc/") and not os.path.exists("/proc/self/fd/1"):
        pytest.skip("no /proc")
    target = tmp_path / "out.txt"
    with open(target, "w") as stdout:
        r = subprocess.run([sys.executable, "-m", "onnxperf", "summary", str(mlp), "--hw", "t4", "--trace", trace],
                           stdout=stdout, stderr=subprocess.PIPE, text=True, env=_env(), timeout=HANG_S)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"onnxperf: error: --trace {trace}: is standard output, where the result (no -o) goes too; "
                        "write one of them to a file\n")
    assert target.read_text() == ""
    # redirected elsewhere, the same names are fine: one output each
    with open(tmp_path / "other.txt", "w") as stdout:
        r = subprocess.run([sys.executable, "-m", "onnxperf", "summary", str(mlp), "--hw", "t4", "--trace",
                            str(tmp_path / "t.json"), "-o", "/dev/stdout"],
                           stdout=stdout, stderr=subprocess.PIPE, text=True, env=_env(), timeout=HANG_S)
    assert r.returncode == 0, r.stderr
    assert "MACs" in (tmp_path / "other.txt").read_text() and '"traceEvents"' in (tmp_path / "t.json").read_text()


def test_destination_tells_files_apart_by_what_they_are(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("x")
    os.link(a, tmp_path / "hard.txt")
    os.symlink(a, tmp_path / "soft.txt")
    same = {output.destination(str(p)) for p in (a, tmp_path / "hard.txt", tmp_path / "soft.txt")}
    assert len(same) == 1
    assert output.destination(str(tmp_path / "new.txt")) == output.destination(str(tmp_path / "." / "new.txt"))
    assert output.destination(str(tmp_path / "new.txt")) != output.destination(str(tmp_path / "new2.txt"))
    assert output.destination(os.devnull) is None
    assert output.destination("-") == output.destination(None)


# --- item 8: a signal while writing ------------------------------------------------------------------

@pytest.fixture()
def default_signals():
    """The in-process signal tests need SIGTERM at its default (as a shell starts a command): the run
    takes it over only then. Under a runner that handles or ignores it they are skipped."""
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("SIGTERM is not at its default in this test process")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_sigterm_while_writing_removes_the_temporary_file_in_process(mlp, tmp_path, capsys, monkeypatch,
                                                                     default_signals):
    """In this process: the signal arrives while the report is half written; the run ends with
    143 and one line, the old file stays and no temporary file is left."""
    out = tmp_path / "r.json"
    out.write_text("OLD")
    real = output._write_all

    def write_then_signal(fh, text):
        fh.write("half")
        # the handler is the run's, not the default that would end pytest
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
        os.kill(os.getpid(), signal.SIGTERM)
        real(fh, text)  # not reached: the handler raises at the next bytecode
        pytest.fail("the signal did not stop the write")

    monkeypatch.setattr(output, "_write_all", write_then_signal)
    rc = cli.main(["report", str(mlp), "--dim", "batch=1", "--format", "json", "-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 128 + signal.SIGTERM
    assert cap.err == f"onnxperf: stopped by SIGTERM while writing {out}; nothing half-written is left\n"
    assert out.read_text() == "OLD" and _leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # given back after the write


def test_a_signal_while_the_temporary_file_is_made_waits_until_its_name_is_kept(mlp, tmp_path, capsys, monkeypatch,
                                                                                default_signals):
    """The signal arrives inside mkstemp (the file exists, its name not yet returned): it is held,
    then delivered, and the file is still removed."""
    out = tmp_path / "r.json"
    real = output.tempfile.mkstemp

    def mkstemp_then_signal(*a, **k):
        made = real(*a, **k)
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None)  # not pytest's end
        os.kill(os.getpid(), signal.SIGTERM)
        return made

    monkeypatch.setattr(output.tempfile, "mkstemp", mkstemp_then_signal)
    rc = cli.main(["summary", str(mlp), "--dim", "batch=1", "--format", "json", "-o", str(out)])
    assert rc == 128 + signal.SIGTERM, capsys.readouterr().err
    assert not out.exists() and _leftovers(tmp_path) == []


def test_a_signal_outside_a_write_keeps_its_default_and_an_ignored_one_stays_ignored(mlp, tmp_path, monkeypatch,
                                                                                      default_signals):
    """The handlers are the run's only while a file is written; a signal the parent ignores (nohup)
    is left ignored."""
    seen = []
    real = output._write_all

    def record(fh, text):
        seen.append((signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)))
        real(fh, text)

    monkeypatch.setattr(output, "_write_all", record)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert cli.main(["summary", str(mlp), "--dim", "batch=1", "-o", str(tmp_path / "s.txt")]) == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    ((term, hup),) = seen
    assert term not in (signal.SIG_DFL, signal.SIG_IGN) and hup is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    # the Python API keeps the process's own handling: no handler is installed without the command line
    seen.clear()
    before = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP))
    output.write_output("x", str(tmp_path / "api.txt"))
    assert seen == [before]


#: a child that runs the console script with a write that never ends, after telling the parent it began
CHILD = r"""
import os, signal, sys, time
from onnxperf import cli
from onnxperf.ui import output

# as a shell starts a command in the foreground, whatever this test runs under (nohup, a background job)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)

def blocked(fh, text):
    fh.write("<half a report>")
    fh.flush()
    os.write(int(os.environ["BEGAN_FD"]), b"w")
    while True:  # until the signal
        time.sleep(0.05)

output._write_all = blocked
sys.argv = ["onnxperf", *sys.argv[1:]]
cli.console()
"""


@pytest.mark.parametrize("name,line", [
    ("SIGTERM", "onnxperf: stopped by SIGTERM while writing {out}; nothing half-written is left"),
    ("SIGHUP", "onnxperf: stopped by SIGHUP while writing {out}; nothing half-written is left"),
    ("SIGINT", "onnxperf: interrupted"),
])
def test_a_signal_while_report_writes_leaves_the_old_file_and_no_temporary_file(name, line, mlp, tmp_path):
    """The real process (the console script, which ends without teardown), signalled while its write
    is blocked half-way: exit 128 + signal, one line on stderr, r.html as it was, no .tmp beside it."""
    if not hasattr(signal, name):
        pytest.skip(f"no {name} here")
    sig = getattr(signal, name)
    out = tmp_path / "r.html"
    out.write_text("<old report>")
    began, tell = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, "report", str(mlp), "--dim", "batch=1", "--no-progress",
                             "-o", str(out)],
                            env=dict(_env(), BEGAN_FD=str(tell)), pass_fds=(tell,), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(tell)
    try:
        assert os.read(began, 1) == b"w", proc.communicate(timeout=HANG_S)
        assert len(_leftovers(tmp_path)) == 1  # the write has begun: its temporary file is there
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=HANG_S)
    finally:
        os.close(began)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, stderr
    assert stderr == line.format(out=out) + "\n" and stdout == ""
    assert out.read_text() == "<old report>"
    assert _leftovers(tmp_path) == []
