"""``-o`` never destroys anything: not the input model (by any name), not its external data, not a
spec or budget file the run reads, not a device, not a symlink. Devices and pipes are streamed to,
with their write errors reported (issue 15, items 2 and 3)."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxperf import cli

from .util import const, model, vi


def _mlp_path(folder: Path, name: str = "m.onnx") -> Path:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"])]
    p = folder / name
    onnx.save(model(nodes, [vi("x", [2, 8])], [vi("y", None)], [const("w", [8, 4])]), str(p))
    return p


def _refused_over(capsys, argv: list[str], victim: Path) -> str:
    before = victim.read_bytes()
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "refusing to write over it" in err, err
    assert victim.read_bytes() == before
    return err


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink", "dotdot"])
@pytest.mark.parametrize("command", ["summary", "report", "check", "sweep"])
def test_o_naming_the_input_model_is_refused_and_the_model_is_kept(tmp_path, capsys, monkeypatch, how, command):
    p = _mlp_path(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = {"same": str(p), "relative": "m.onnx", "dotdot": f"../{tmp_path.name}/m.onnx"}.get(how)
    if how == "symlink":
        os.symlink(p, tmp_path / "link.onnx")
        out = str(tmp_path / "link.onnx")
    elif how == "hardlink":
        os.link(p, tmp_path / "hard.onnx")
        out = str(tmp_path / "hard.onnx")
    extra = {"sweep": ["--dim", "x=1"], "report": ["--no-progress"]}.get(command, [])
    argv = [command, str(p), *extra, "-o", out]
    if command == "sweep":  # a static model has no dim to sweep: the refusal must come first anyway
        argv = ["sweep", str(p), "--format", "json", "-o", out]
    _refused_over(capsys, argv, p)
    assert os.path.isfile(p) and onnx.load(str(p)).graph.node[0].op_type == "MatMul"


def test_o_naming_the_second_model_of_compare_is_refused(tmp_path, capsys):
    a, b = _mlp_path(tmp_path, "a.onnx"), _mlp_path(tmp_path, "b.onnx")
    _refused_over(capsys, ["compare", str(a), str(b), "-o", str(b)], b)


def test_o_naming_the_models_external_data_is_refused(tmp_path, capsys):
    """An input the command line does not name: the loader records the external-data file it resolves."""
    w = np.arange(32, dtype=np.float32).reshape(8, 4)
    t = onnx.numpy_helper.from_array(w, "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    (tmp_path / "weights.bin").write_bytes(w.tobytes())
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    m = model(nodes, [vi("x", [2, 8])], [vi("y", None)])
    m.graph.initializer.append(t)
    p = tmp_path / "ext.onnx"
    onnx.save(m, str(p))
    _refused_over(capsys, ["summary", str(p), "--format", "json", "-o", str(tmp_path / "weights.bin")],
                  tmp_path / "weights.bin")


def test_o_naming_the_budget_or_the_spec_file_is_refused(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    budget = tmp_path / "budget.toml"
    budget.write_text("max_params = 1000000\n")
    _refused_over(capsys, ["check", str(p), "--budget", str(budget), "-o", str(budget)], budget)
    spec = tmp_path / "spec.toml"
    assert cli.main(["hw", "show", "t4", "--format", "toml", "-o", str(spec)]) == 0
    capsys.readouterr()
    _refused_over(capsys, ["summary", str(p), "--hw", str(spec), "-o", str(spec)], spec)


def test_netron_naming_the_input_is_refused(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    _refused_over(capsys, ["report", str(p), "--no-progress", "-o", str(tmp_path / "r.html"),
                           "--netron", str(p)], p)
    assert not (tmp_path / "r.html").exists()


def test_o_dev_null_is_streamed_to_and_stays_a_device(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    assert cli.main(["summary", str(p), "--format", "json", "-o", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not os.path.islink("/dev/null")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_o_dev_full_reports_the_full_disk(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    assert cli.main(["summary", str(p), "--format", "json", "-o", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert err == f"onnxperf: error: -o /dev/full: cannot write: {os.strerror(28)}\n"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_o_to_a_fifo_streams_the_whole_output(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(fifo)]) == 0
    reader.join(30)
    assert json.loads(got[0])["totals"]["macs"] == 2 * 8 * 4
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_o_to_a_socket_is_refused(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
        assert cli.main(["summary", str(p), "-o", str(path)]) == 2
        assert "not a regular file" in capsys.readouterr().err
        assert stat.S_ISSOCK(os.stat(path).st_mode)
    finally:
        s.close()


def test_no_new_files_under_dev(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    assert cli.main(["summary", str(p), "-o", "/dev/onnxperf-test-never-created"]) == 2
    assert not os.path.exists("/dev/onnxperf-test-never-created")


def test_o_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.json"
    target.write_text("old")
    link = tmp_path / "out.json"
    os.symlink(target, link)
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(link)]) == 0
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["totals"]["macs"] == 2 * 8 * 4
    assert sorted(x.name for x in (tmp_path / "real").iterdir()) == ["out.json"]  # no temporary left


def test_o_through_a_dangling_symlink_creates_its_target(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    link = tmp_path / "out.json"
    os.symlink(tmp_path / "new.json", link)
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(link)]) == 0
    assert os.path.islink(link) and json.loads((tmp_path / "new.json").read_text())["totals"]["macs"] == 64


def test_o_over_an_existing_file_keeps_its_permissions(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    out = tmp_path / "out.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(out)]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640 and json.loads(out.read_text())["totals"]["macs"] == 64


def test_o_to_a_missing_folder_is_exit_2(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    assert cli.main(["summary", str(p), "-o", str(tmp_path / "nope" / "out.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_netron_and_o_naming_one_file_is_refused(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    assert cli.main(["report", str(p), "--no-progress", "-o", str(tmp_path / "r.html"),
                     "--netron", str(tmp_path / "r.html")]) == 2
    assert "give them two names" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


@pytest.mark.skipif(not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_o_into_dev_shm_is_an_ordinary_atomic_write(tmp_path, capsys):
    p = _mlp_path(tmp_path)
    out = Path("/dev/shm") / f"onnxperf-test-{os.getpid()}.json"
    try:
        assert cli.main(["summary", str(p), "--format", "json", "-o", str(out)]) == 0
        assert stat.S_ISREG(os.stat(out).st_mode) and json.loads(out.read_text())["totals"]["macs"] == 64
    finally:
        out.unlink(missing_ok=True)


def test_output_written_in_pieces_is_all_or_nothing(tmp_path):
    """summary --format json writes its text as it is made: an error while making a piece leaves
    the earlier file as it was (no half-written output), and a complete write replaces it."""
    from onnxperf.ui.output import write_output

    out = tmp_path / "out.json"
    out.write_text("old\n")

    def pieces(fail: bool):
        yield "first piece\n"
        if fail:
            raise RuntimeError("a renderer bug")
        yield "second piece\n"

    with pytest.raises(RuntimeError):
        write_output(pieces(True), str(out))
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left behind
    write_output(pieces(False), str(out))
    assert out.read_text() == "first piece\nsecond piece\n"


def test_the_onnxperf_process_writes_everything_then_exits_fast(tmp_path):
    """The ``onnxperf`` process ends without the interpreter's teardown (cli._exit_now): its whole
    output still arrives through a pipe, a reader that stops early ends it quietly (exit 0), and
    standard output on a full disk is a one-line error, exit 2, not a traceback."""
    import subprocess
    import sys

    p = _mlp_path(tmp_path)
    run = [sys.executable, "-m", "onnxperf", "summary", str(p), "--format", "json"]
    done = subprocess.run(run, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["schema"] == "onnxperf.analysis/1"
    with open("/dev/full", "w") as full:
        failed = subprocess.run(run, stdout=full, stderr=subprocess.PIPE, text=True)
    assert failed.returncode == 2
    assert failed.stderr == f"onnxperf: error: standard output: cannot write: {os.strerror(28)}\n"
    early = subprocess.run(" ".join(run) + " | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}", shell=True,
                           executable="/bin/bash", capture_output=True, text=True)
    assert early.returncode == 0 and "Traceback" not in early.stderr
