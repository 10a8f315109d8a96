"""The command line: ``cli.main([...])`` called directly."""

import csv
import io
import json
from pathlib import Path

import onnx
import pytest

from onnxperf import cli

from .util import const, model, vi

MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.fixture()
def mlp(tmp_path):
    from onnx import helper
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    m = model(nodes, [vi("x", ["batch", 8])], [vi("y", None)], [const("w", [8, 4])])
    p = tmp_path / "mlp.onnx"
    onnx.save(m, str(p))
    return p


def test_summary_text(mlp, capsys):
    assert cli.main(["summary", str(mlp), "--dim", "batch=3"]) == 0
    out = capsys.readouterr().out
    assert "MACs" in out and f"{3 * 8 * 4:,}" in out
    assert "Coverage   2/2 nodes" in out


def test_summary_json_to_file_is_the_contract(mlp, tmp_path):
    out = tmp_path / "a.json"
    assert cli.main(["summary", str(mlp), "--dim", "batch=3", "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["schema"] == "onnxperf.analysis/1"
    assert d["totals"]["macs"] == 3 * 8 * 4
    assert d["bindings"]["dims"] == {"batch": 3}
    assert [n["op_type"] for n in d["nodes"]] == ["MatMul", "Relu"]
    # byte-identical on a second run
    out2 = tmp_path / "b.json"
    cli.main(["summary", str(mlp), "--dim", "batch=3", "--format", "json", "-o", str(out2)])
    assert out.read_bytes() == out2.read_bytes()


def test_summary_csv_and_md(mlp, capsys):
    assert cli.main(["summary", str(mlp), "--dim", "batch=2", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["op_type"] for r in rows] == ["MatMul", "Relu"]
    assert int(rows[0]["macs"]) == 2 * 8 * 4
    assert cli.main(["summary", str(mlp), "--dim", "batch=2", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### onnxperf summary") and "| MatMul | 1 |" in md


def test_an_unbound_batch_dim_is_1_with_a_notice_naming_the_flag(mlp, capsys):
    """A first run answers: the batch dim left unbound is 1, said once on stderr and in the output."""
    assert cli.main(["summary", str(mlp), "--format", "json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["bindings"]["dims"] == {"batch": 1} and d["totals"]["macs"] == 1 * 8 * 4
    note = "unbound batch dim 'batch' set to 1; pass --dim batch=N for another batch"
    assert cap.err == f"onnxperf: note: {note}\n"
    assert note in d["notes"]
    assert cli.main(["summary", str(mlp), "--dim", "batch=3", "--format", "json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["totals"]["macs"] == 3 * 8 * 4 and cap.err == ""


def test_a_dim_the_model_lacks_is_a_note_in_every_command(mlp, tmp_path, capsys):
    """A loop over a folder with --dim batch=1 goes on through static exports."""
    note = "--dim nope=3 not applied: the model's inputs have no dim named 'nope' (symbolic dims: batch)"
    for argv in (["summary", str(mlp)], ["report", str(mlp), "--format", "json"],
                 ["sweep", str(mlp), "--dim", "batch=1,2"], ["compare", str(mlp), str(mlp)],
                 ["check", str(mlp), "--no-pyproject"]):
        assert cli.main(argv + ["--dim", "nope=3", "-o", str(tmp_path / "out")]) == 0, argv
        err = capsys.readouterr().err
        if argv[0] in ("summary", "report", "sweep"):
            assert f"onnxperf: note: {note}" in err, argv
    text = (tmp_path / "out").read_text()  # check's own report names it per model
    assert "bindings this model does not use: nope" in text


@pytest.mark.parametrize("args,msg", [
    (["summary", "{missing}"], "no such file"),
    (["summary", "{mlp}", "--dim", "batch"], "expected NAME=VALUE"),
    (["summary", "{mlp}", "--input-shape", "x=1x2.5"], "bad shape"),
    (["summary", "{garbage}"], "not"),
])
def test_bad_input_one_line_exit_2_no_output_file(args, msg, mlp, tmp_path, capsys):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(bytes(range(256)) * 8)
    out = tmp_path / "out.json"
    argv = [a.format(missing=tmp_path / "missing.onnx", mlp=mlp, garbage=garbage) for a in args]
    assert cli.main(argv + ["-o", str(out), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert msg in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


def test_debug_shows_traceback(tmp_path):
    with pytest.raises(Exception):
        cli.main(["--debug", "summary", str(tmp_path / "missing.onnx")])


def test_no_command_and_bad_flag_exit_2(capsys):
    assert cli.main([]) == 2
    assert cli.main(["summary"]) == 2


def test_python_m_entry_point(mlp):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "onnxperf", "summary", str(mlp), "--dim", "batch=1",
                        "--format", "json"], capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout)["totals"]["macs"] == 32


@pytest.mark.skipif(not (MODELS / "resnet50_torch.onnx").exists(), reason="models/ not present")
def test_shipped_model_runs_without_its_weights(capsys):
    assert cli.main(["summary", str(MODELS / "resnet50_torch.onnx"), "--dim", "batch=1"]) == 0
    out = capsys.readouterr().out
    assert "external weight file(s) not found" in out


def test_output_file_gets_the_umask_mode(mlp, tmp_path):
    import os
    out = tmp_path / "o.txt"
    old = os.umask(0o022)
    try:
        assert cli.main(["summary", str(mlp), "--dim", "batch=1", "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert (out.stat().st_mode & 0o777) == 0o644
