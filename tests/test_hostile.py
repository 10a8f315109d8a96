"""Hostile and broken input, through the command line (``cli.main([...])``).

Every unreadable input: exit code 2, one line on stderr that names the file and the problem, no
traceback, and no output file (not even a temporary one). Inputs the analysis can go on with
(an unknown domain, an opset newer than onnx knows, missing external weights, huge or zero dims)
exit 0 and say what they assumed.
"""

from __future__ import annotations

import builtins
import errno
import csv
import io
import json
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxperf import cli
from onnxperf.cost.analysis import known_opsets

from .bombs import BOMB_CHILD, CASES, bomb_cases, range_bomb
from .util import const, model, vi


def _mlp(x_shape=("batch", 8)) -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"], name="act")]
    return model(nodes, [vi("x", list(x_shape))], [vi("y", None)], [const("w", [8, 4])])


def _save(m: onnx.ModelProto, path: Path) -> Path:
    onnx.save(m, str(path))
    return path


def _refused(tmp_path: Path, capsys, model_path: Path | str, *extra: str, fmt: str = "json") -> str:
    """Run summary on a bad input: exit 2, one line naming the file, no output file at all."""
    out = tmp_path / "out.json"
    code = cli.main(["summary", str(model_path), *extra, "--format", fmt, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("onnxperf: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]  # no temporary left
    return err


# ---------------------------------------------------------------- files that are not models

def test_missing_file(tmp_path, capsys):
    err = _refused(tmp_path, capsys, tmp_path / "missing.onnx")
    assert "missing.onnx: no such file" in err


def test_directory(tmp_path, capsys):
    (tmp_path / "dir.onnx").mkdir()
    err = _refused(tmp_path, capsys, tmp_path / "dir.onnx")
    assert "dir.onnx: is a directory" in err


def test_empty_file(tmp_path, capsys):
    (tmp_path / "e.onnx").write_bytes(b"")
    assert "e.onnx: empty file" in _refused(tmp_path, capsys, tmp_path / "e.onnx")


def test_png(tmp_path, capsys):
    (tmp_path / "cat.onnx").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    assert "cat.onnx: a PNG image, not an ONNX model" in _refused(tmp_path, capsys, tmp_path / "cat.onnx")


@pytest.mark.parametrize("head,what", [(b"PK\x03\x04", "ZIP archive"), (b"\x1f\x8b\x08", "gzip"),
                                       (b"\x80\x04\x95", "pickle"), (b"\x89HDF\r\n\x1a\n", "HDF5")])
def test_other_formats_are_named(tmp_path, capsys, head, what):
    (tmp_path / "m.onnx").write_bytes(head + bytes(range(64)))
    assert what in _refused(tmp_path, capsys, tmp_path / "m.onnx")


def test_text_file(tmp_path, capsys):
    (tmp_path / "notes.onnx").write_text("hello, I am not a model\n" * 10)
    err = _refused(tmp_path, capsys, tmp_path / "notes.onnx")
    assert "notes.onnx: not a readable ONNX model (a text file" in err


def test_random_bytes(tmp_path, capsys):
    (tmp_path / "r.onnx").write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    assert "r.onnx: not a readable ONNX model" in _refused(tmp_path, capsys, tmp_path / "r.onnx")


def test_truncated_model_inside_the_graph(tmp_path, capsys):
    raw = _mlp().SerializeToString()
    (tmp_path / "t.onnx").write_bytes(raw[: len(raw) // 2])
    assert "t.onnx: not a readable ONNX model (corrupt or truncated" in _refused(tmp_path, capsys, tmp_path / "t.onnx")


def test_truncated_model_at_a_field_boundary(tmp_path, capsys):
    # exporters write opset_import after the graph: a cut there still parses, without opsets
    m = _mlp()
    raw = m.SerializeToString()
    tail = len(m.opset_import[0].SerializeToString()) + 2  # field tag + length + message
    (tmp_path / "t.onnx").write_bytes(raw[:-tail])
    onnx.load_from_string(raw[:-tail])  # really parses
    assert "t.onnx: the model imports no opset" in _refused(tmp_path, capsys, tmp_path / "t.onnx")


# ---------------------------------------------------------------- malformed graphs

def test_cycle(tmp_path, capsys):
    nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    p = _save(model(nodes, [vi("x", [3])], [vi("b", None)]), tmp_path / "cyc.onnx")
    assert "cyc.onnx: graph 'test' has a cycle" in _refused(tmp_path, capsys, p)


def test_dangling_input(tmp_path, capsys):
    p = _save(model([helper.make_node("Relu", ["nope"], ["y"])], [vi("x", [3])], [vi("y", None)]), tmp_path / "d.onnx")
    assert "d.onnx: node 0 (Relu '') reads tensor 'nope', which nothing produces" in _refused(tmp_path, capsys, p)


def test_duplicate_output_names(tmp_path, capsys):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [3])], [vi("y", None), vi("y", None)])
    p = _save(m, tmp_path / "dup.onnx")
    assert "dup.onnx: graph output 'y' is listed twice" in _refused(tmp_path, capsys, p)


def test_tensor_produced_twice(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])]
    p = _save(model(nodes, [vi("x", [3])], [vi("y", None)]), tmp_path / "two.onnx")
    assert "two.onnx: tensor 'y' is produced twice" in _refused(tmp_path, capsys, p)


def test_weights_whose_data_contradicts_their_dims(tmp_path, capsys):
    m = _mlp((2, 8))
    m.graph.initializer[0].dims[0] = 2**40  # 2^42 elements declared, 128 bytes held
    p = _save(m, tmp_path / "lie.onnx")
    assert "lie.onnx: initializer 'w' declares dims [1099511627776, 4]" in _refused(tmp_path, capsys, p)


def test_invalid_element_type(tmp_path, capsys):
    m = _mlp((2, 8))
    m.graph.initializer[0].data_type = 99
    assert "initializer 'w' has an invalid element type (99)" in _refused(tmp_path, capsys, _save(m, tmp_path / "t.onnx"))


def test_names_that_are_not_utf8(tmp_path, capsys):
    raw = _mlp((2, 8)).SerializeToString().replace(b"act", b"\xff\xfe\xfd")
    (tmp_path / "u.onnx").write_bytes(raw)
    assert "u.onnx: node 1: name b'\\xff\\xfe\\xfd' is not valid UTF-8" in _refused(tmp_path, capsys, tmp_path / "u.onnx")


# ---------------------------------------------------------------- inputs the analysis goes on with

def test_unknown_domain_goes_on_and_the_node_is_unsupported(tmp_path, capsys):
    nodes = [helper.make_node("Foo", ["x"], ["t"], domain="evil.corp"), helper.make_node("Relu", ["t"], ["y"])]
    p = _save(model(nodes, [vi("x", [2, 8])], [vi("y", None)], extra_opsets={"evil.corp": 1}), tmp_path / "u.onnx")
    out = tmp_path / "a.json"
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["coverage"]["unsupported_op_types"] == {"evil.corp::Foo": 1}
    assert d["nodes"][0]["status"] == "unsupported" and "not supported" in d["nodes"][0]["note"]


def test_opset_newer_than_installed_onnx_goes_on_with_a_note(tmp_path, capsys):
    # Choice: analysis goes on. Rules are looked up at or below the model's opset and ONNX's
    # inference uses its newest schema, so the model is costed as in the newest known opset;
    # the note says so (and check's OP011 warns). Refusing would block every model exported by a
    # newer toolchain, for ops whose meaning almost never changed.
    newest = known_opsets()[""]
    m = _mlp((2, 8))
    m.opset_import[0].version = newest + 5
    p = _save(m, tmp_path / "new.onnx")
    assert cli.main(["summary", str(p)]) == 0
    out = capsys.readouterr().out
    assert f"opset ai.onnx {newest + 5} is newer than the installed onnx" in out
    assert f"{2 * 8 * 4:,}" in out  # MatMul still costed exactly


def test_missing_external_weights_go_on(tmp_path, capsys):
    m = _mlp((2, 8))
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    p = _save(m, tmp_path / "ext.onnx")
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model"]["missing_external_files"] == ["weights.bin"]
    assert d["totals"]["macs"] == 2 * 8 * 4


#: the shape a Reshape reads from an external int64 tensor: [2, 8] -> [4, 4]
SHAPE = np.array([4, 4], dtype="<i8")


def _external_shape(folder: Path, location: str) -> Path:
    """``y = Reshape(x[2, 8], shape)`` with ``shape`` a small int64 external tensor: the loader reads
    such tensors (shape computations need their values), so a location it accepts IS opened."""
    shape = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[2])
    shape.data_location = TensorProto.EXTERNAL
    shape.external_data.add(key="location", value=location)
    shape.external_data.add(key="length", value=str(SHAPE.nbytes))
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    m = model(nodes, [vi("x", [2, 8])], [vi("y", None)])
    m.graph.initializer.append(shape)
    return _save(m, folder / "ext.onnx")


@pytest.fixture()
def opened(monkeypatch):
    """Every path opened from Python during the test."""
    seen: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *a, **k):
        seen.append(os.path.realpath(file) if isinstance(file, (str, os.PathLike)) else str(file))
        return real_open(file, *a, **k)

    def spy_os_open(path, *a, **k):
        seen.append(os.path.realpath(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return seen


def test_external_shape_inside_the_folder_is_opened_and_read(tmp_path, capsys, opened):
    """The control for the refusals below: a legal location is opened, and its value used."""
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "shape.bin").write_bytes(SHAPE.tobytes())
    p = _external_shape(folder, "shape.bin")
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["nodes"][0]["outputs"][0]["shape"] == [4, 4]
    assert str((folder / "shape.bin").resolve()) in opened


@pytest.mark.parametrize("location,msg", [("../../etc/passwd", "leaves the model's folder"),
                                          ("/etc/passwd", "is an absolute path"),
                                          ("../secret.bin", "leaves the model's folder"),
                                          ("sub/../../secret.bin", "leaves the model's folder")])
def test_external_data_outside_the_folder_is_refused_and_never_opened(tmp_path, capsys, opened, location, msg):
    folder = tmp_path / "models"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(SHAPE.tobytes())  # a valid shape: reading it would succeed
    p = _external_shape(folder, location)
    err = _refused(tmp_path, capsys, p)
    assert "ext.onnx: tensor 'shape': external data location" in err and msg in err
    assert not [o for o in opened if o.endswith(("passwd", "secret.bin"))]


def test_external_data_symlink_out_of_the_folder_is_refused_and_never_opened(tmp_path, capsys, opened):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SHAPE.tobytes())
    folder = tmp_path / "models"
    folder.mkdir()
    os.symlink(secret, folder / "shape.bin")
    p = _external_shape(folder, "shape.bin")
    assert "leaves the model's folder" in _refused(tmp_path, capsys, p)
    assert str(secret) not in opened


# ---------------------------------------------------------------- dims: huge and zero

def test_huge_dims_stay_exact_and_nothing_is_allocated(tmp_path, capsys):
    import tracemalloc

    n = 2**40
    p = _save(_mlp((n, 8)), tmp_path / "huge.onnx")
    tracemalloc.start()
    code = cli.main(["summary", str(p), "--format", "json", "--hw", "t4"])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert d["totals"]["macs"] == n * 8 * 4  # exact integer, far beyond float precision needs
    assert d["memory"]["activation_peak_bytes"] == n * 4 * 4 + n * 8 * 4
    assert peak < 200 << 20  # nothing sized by the dims was allocated


@pytest.mark.parametrize("shape", [(2**40, 8), (2**32, 2**32)])
def test_validate_refuses_to_allocate_beyond_the_memory_limit(tmp_path, capsys, shape):
    # (2**32, 2**32) overflowed an int64 product to 0 bytes before: it must be refused too
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    p = _save(model(nodes, [vi("x", list(shape))], [vi("y", None)]), tmp_path / "huge.onnx")
    out = tmp_path / "out.json"
    assert cli.main(["validate", str(p), "--hw", "t4", "--max-memory", "1GiB", "--format", "json",
                     "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "over the 1,073,741,824-byte limit" in err and err.count("\n") == 1
    assert not out.exists()


def test_zero_dims_cost_nothing_and_render_everywhere(tmp_path, capsys):
    p = _save(_mlp((0, 8)), tmp_path / "zero.onnx")
    for fmt in ("text", "json", "csv", "md"):
        assert cli.main(["summary", str(p), "--format", fmt, "--hw", "t4"]) == 0
    out = capsys.readouterr().out
    assert "MACs" in out
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["totals"]["macs"] == 0 and d["totals"]["flops"] == 0
    assert d["nodes"][0]["outputs"][0]["shape"] == [0, 4]
    for fmt in ("text", "json", "junit", "sarif", "md"):
        assert cli.main(["check", str(p), "--format", fmt, "--hw", "t4"]) == 0


def test_negative_declared_dim_is_unknown_not_a_size(tmp_path, capsys):
    p = _save(_mlp((-1, 8)), tmp_path / "neg.onnx")
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model"]["inputs"][0]["shape"] == [None, 8]
    assert d["coverage"]["unknown_shape"] == 2


# ---------------------------------------------------------------- hostile names, every format

EVIL = '<script>alert("x")</script>\n\x1b[31m\'"&\x00\u202e'


def _evil_model(tmp_path: Path) -> Path:
    nodes = [helper.make_node("MatMul", [EVIL, "w"], ["h"], name=EVIL),
             helper.make_node("Relu", ["h"], ["y"], name="r\r\n|`@team")]
    m = model(nodes, [vi(EVIL, ["batch", 8])], [vi("y", None)], [const("w", [8, 4])])
    m.producer_name = EVIL
    m.graph.name = EVIL
    return _save(m, tmp_path / "evil.onnx")


_RAW_CONTROL = ("\x1b", "\x00", "\r", "\u202e")


def test_hostile_names_in_summary_text_and_md(tmp_path, capsys):
    p = _evil_model(tmp_path)
    assert cli.main(["summary", str(p)]) == 0
    text = capsys.readouterr().out
    assert not any(c in text for c in _RAW_CONTROL)
    assert "\\x1b[31m" in text  # escaped, visible
    assert cli.main(["summary", str(p), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert not any(c in md for c in _RAW_CONTROL)
    assert "<script" not in md and "&lt;script&gt;" in md
    assert all(line.startswith("|") and line.endswith("|") for line in md.splitlines() if line.startswith("| "))


def _raw_controls(text: str) -> list[str]:
    """Control and format characters (categories Cc, Cf) other than the line breaks of the output."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]


def test_hostile_names_in_report_md(tmp_path, capsys):
    p = _evil_model(tmp_path)
    assert cli.main(["report", str(p), "--format", "md", "--no-progress"]) == 0
    md = capsys.readouterr().out
    assert _raw_controls(md) == []
    assert "<script" not in md and "&lt;script&gt;" in md
    [producer] = [line for line in md.splitlines() if line.startswith("| Producer")]
    assert "\\\\x1b\\[31m" in producer and "\\\\u202e" in producer  # escaped, shown as \x1b[31m
    for line in md.splitlines():
        if line.startswith("| "):
            assert line.endswith("|")


def test_hostile_names_in_summary_json_and_csv_are_exact(tmp_path, capsys):
    p = _evil_model(tmp_path)
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["nodes"][0]["name"] == EVIL and d["model"]["producer_name"] == EVIL
    assert cli.main(["summary", str(p), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["name"] == EVIL and rows[1]["name"] == "r\r\n|`@team"


def _evil_budget(tmp_path: Path) -> Path:
    b = tmp_path / "budget.toml"
    b.write_text('allowed_op_types = ["MatMul"]\nstatic_shapes = true\n[lints]\nOP006 = "error"\n')
    return b


def test_hostile_names_in_check_text_json_sarif(tmp_path, capsys):
    p = _evil_model(tmp_path)
    b = _evil_budget(tmp_path)
    assert cli.main(["check", str(p), "--budget", str(b)]) == 1
    text = capsys.readouterr().out
    assert not any(c in text for c in _RAW_CONTROL)
    assert cli.main(["check", str(p), "--budget", str(b), "--format", "json"]) == 1
    d = json.loads(capsys.readouterr().out)
    nodes = [n["name"] for r in d["models"][0]["budgets"] for n in r["nodes"]]
    assert "r\r\n|`@team" in nodes and EVIL in nodes  # exact in JSON
    assert cli.main(["check", str(p), "--budget", str(b), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    names = [loc["name"] for r in sarif["runs"][0]["results"] for x in r["locations"]
             for loc in x.get("logicalLocations", [])]
    assert "r\r\n|`@team" in names


def test_hostile_names_in_check_junit_and_md(tmp_path, capsys):
    p = _evil_model(tmp_path)
    b = _evil_budget(tmp_path)
    assert cli.main(["check", str(p), "--budget", str(b), "--format", "junit"]) == 1
    xml = capsys.readouterr().out
    ET.fromstring(xml.encode())  # well-formed XML 1.0: no raw control characters, markup escaped
    assert "<script" not in xml and not any(c in xml for c in _RAW_CONTROL)
    assert cli.main(["check", str(p), "--budget", str(b), "--format", "md"]) == 1
    md = capsys.readouterr().out
    assert "<script" not in md and "&lt;script&gt;" in md
    assert "\\@team" in md and not re.search(r"(?<!\\)@team", md)  # no @-mention from a node name
    assert not any(c in md for c in _RAW_CONTROL)
    for line in md.splitlines():
        if line.startswith("| "):
            assert line.endswith("|")


def test_error_messages_escape_control_characters(tmp_path, capsys):
    p = _save(_mlp(("b\x1b[2Jatch", 8)), tmp_path / "m.onnx")
    assert cli.main(["summary", str(p), "--input-shape", "nope=1x8"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1
    assert cli.main(["summary", str(p), "--dim", "nope=1", "-o", str(tmp_path / "o.txt")]) == 0  # a note
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2J" in err and err.startswith("onnxperf: note: --dim nope=1 not applied")


# ---------------------------------------------------------------- check: unreadable models

@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "md"])
def test_check_unreadable_model_exit_2_and_a_complete_report(tmp_path, capsys, fmt):
    good = _save(_mlp((2, 8)), tmp_path / "good.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    out = tmp_path / f"report.{fmt}"
    assert cli.main(["check", str(good), str(tmp_path / "bad.onnx"), "--format", fmt, "-o", str(out),
                     "--no-pyproject"]) == 2
    text = out.read_text()
    assert "bad.onnx: a PNG image, not an ONNX model" in text
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".report")]


def test_check_missing_budget_file_is_one_line_exit_2(tmp_path, capsys):
    good = _save(_mlp((2, 8)), tmp_path / "good.onnx")
    out = tmp_path / "r.json"
    assert cli.main(["check", str(good), "--budget", str(tmp_path / "nope.toml"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nope.toml: no such file" in err and err.count("\n") == 1 and not out.exists()


# ---------------------------------------------------------------- nothing half-written

def _write_fails(monkeypatch, where: str) -> None:
    """Make the atomic write in :mod:`onnxperf.ui.output` fail at ``where`` as a full disk or a
    refused permission would."""
    from onnxperf.ui import output

    def enospc(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "mkstemp":  # the folder refuses new files
        def eacces(*a, **k):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        monkeypatch.setattr(output.tempfile, "mkstemp", eacces)
    elif where == "write":  # the disk fills up half-way through
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, text):
                self.fh.write(text[:10])
                self.fh.flush()
                enospc()

        monkeypatch.setattr(output.os, "fdopen", lambda fd, *a, **k: Full(real_fdopen(fd, *a, **k)))
    elif where == "replace":  # the rename fails (a directory created in the way meanwhile)
        def eisdir(*a, **k):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        monkeypatch.setattr(output.os, "replace", eisdir)


@pytest.mark.parametrize("where,reason", [("mkstemp", os.strerror(errno.EACCES)),
                                          ("write", os.strerror(errno.ENOSPC)),
                                          ("replace", os.strerror(errno.EISDIR))])
def test_a_failed_write_is_one_line_exit_2_and_leaves_the_old_file(tmp_path, capsys, monkeypatch, where, reason):
    p = _save(_mlp((2, 8)), tmp_path / "m.onnx")
    target = tmp_path / "r.json"
    target.write_text("old\n")
    _write_fails(monkeypatch, where)
    assert cli.main(["summary", str(p), "--format", "json", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"onnxperf: error: -o {target}: cannot write: {reason}\n"
    assert target.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.onnx", "r.json"]  # no temporary left


def test_an_output_name_too_long_is_one_line_exit_2(tmp_path, capsys):
    """A real failure, not a mocked one: the file system refuses the name."""
    p = _save(_mlp((2, 8)), tmp_path / "m.onnx")
    target = tmp_path / ("x" * 300 + ".json")
    assert cli.main(["summary", str(p), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("onnxperf: error: -o ") and err.count("\n") == 1 and "Traceback" not in err
    assert err.endswith(f"cannot write: {os.strerror(errno.ENAMETOOLONG)}\n")
    assert [x.name for x in tmp_path.iterdir()] == ["m.onnx"]


def test_nul_byte_in_an_external_data_location_is_one_line_exit_2(tmp_path, capsys):
    m = _mlp((2, 8))
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights\x00.bin")
    err = _refused(tmp_path, capsys, _save(m, tmp_path / "nul.onnx"))
    assert "NUL byte" in err


@pytest.mark.parametrize("flag", [["--dim", "batch=" + "1" * 40], ["--input-shape", "x=" + "9" * 40 + "x8"]])
def test_a_dim_beyond_int64_is_one_line_exit_2(tmp_path, capsys, flag):
    err = _refused(tmp_path, capsys, _save(_mlp(), tmp_path / "m.onnx"), *flag)
    assert "int64" in err


# ---------------------------------------------------------------- memory bombs (issue 15, item 1)


def test_a_range_of_10_to_the_15_is_shaped_not_built(tmp_path):
    """A 400-byte model whose Range would hold 10^15 values: ONNX's data propagation would build
    them (std::bad_alloc after ~20 GB); under a 1 GiB address-space limit the run is clean, the
    Range and the Cast are costed on their shapes, and a note names the node and the cap."""
    import subprocess
    import sys

    p = range_bomb(tmp_path / "bomb.onnx", 10**15)
    assert p.stat().st_size < 1000
    proc = subprocess.run([sys.executable, "-c", BOMB_CHILD, "summary", str(p), "--format", "json"],
                          capture_output=True, text=True, timeout=300)  # a hang guard, not a speed limit
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(proc.stdout)
    assert d["totals"]["bytes_written"] == 10**15 * 8 + 10**15 * 4
    assert any("Range node 0 'range'" in n and "1,048,576" in n for n in d["notes"])
    assert not any("bad_alloc" in n for n in d["notes"])


@pytest.mark.parametrize("case", CASES)
def test_memory_bombs_run_clean_under_an_address_space_limit(tmp_path, case):
    """Issue 15, item 1 and issue 28, item 1: the other worst cases, each in a child limited to 1 GiB
    of address space (Python, numpy, onnx, onnxruntime and all they map): a clean exit (0, or 2 with
    one line), never a crash or a kill."""
    import subprocess
    import sys

    args = bomb_cases(tmp_path)[case]
    proc = subprocess.run([sys.executable, "-c", BOMB_CHILD, "summary", *args, "--format", "json"],
                          capture_output=True, text=True, timeout=300)  # a hang guard, not a speed limit
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    err = [line for line in proc.stderr.splitlines() if not line.startswith("maxrss_kib ")]
    if proc.returncode == 0:
        d = json.loads(proc.stdout)
        assert not any("bad_alloc" in n for n in d["notes"])
    else:
        assert len(err) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("bert")] + ["range_1e15"])
def test_memory_bombs_build_no_value_beyond_the_budget(tmp_path, case, capsys):
    """Issue 28, item 1: memory bounded by design. What Python and numpy allocate while a bomb is
    analyzed, summarized and priced on a device (tracemalloc's peak: every numpy array is traced) stays
    under the 64 MiB value budget: no value of more than MAX_ELEMENTS (65,536) elements is computed,
    and onnx's data propagation and onnxruntime's symbolic inference are never handed one (their
    C++ side is bounded by the 1 GiB address-space test above)."""
    import tracemalloc

    from onnxperf.shapes.values import MAX_ELEMENTS

    args = bomb_cases(tmp_path)[case] if case != "range_1e15" else [str(range_bomb(tmp_path / "r.onnx", 10**15))]
    assert Path(args[0]).stat().st_size < 1000
    tracemalloc.start()
    try:
        rc = cli.main(["summary", *args, "--format", "json", "--hw", "a100-80gb", "--no-progress"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rc == 0, capsys.readouterr().err
    assert MAX_ELEMENTS * 8 <= 1 << 20  # one value at most 512 KiB (int64)
    assert peak < 64 << 20, f"{peak / 2**20:.1f} MiB"


def test_a_small_constant_range_still_reaches_onnx_data_propagation(tmp_path, capsys):
    p = range_bomb(tmp_path / "small.onnx", 100)
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["totals"]["bytes_written"] == 100 * 8 + 100 * 4
    assert not any("Range node" in n for n in d["notes"])


def test_hostile_domain_and_op_type_reach_no_terminal_in_text_or_md(tmp_path, capsys):
    """The opsets line, the coverage list of unsupported op types and the md Opsets row carry names
    from the model (issue 15, item 6): escaped like every other name."""
    evil_domain, evil_op = "\x1b]0;pwn\x07dom\u202e", "Op\x1b[2J\u202eX"
    nodes = [helper.make_node(evil_op, ["x"], ["y"], domain=evil_domain, name="n")]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], extra_opsets={evil_domain: 1})
    p = _save(m, tmp_path / "dom.onnx")
    for fmt in ("text", "md"):
        assert cli.main(["summary", str(p), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert not _raw_controls(out), (fmt, _raw_controls(out))
        assert "\\x1b" in out


@pytest.mark.parametrize("fields,what", [
    ({"offset": "64"}, "ends before"),                   # past the end of the file
    ({"length": "64"}, "has length 64"),                 # longer than the tensor
    ({"offset": "-8"}, "not a file position"),
    ({"offset": "abc"}, "not a number"),
    ({"length": str(2**64)}, "has length"),
    ({"offset": str(2**64)}, "not a file position"),
])
def test_corrupt_external_data_fields_of_a_shape_constant_are_named(tmp_path, capsys, fields, what):
    """Issue 15, item 5: a shape constant's external-data fields that cannot be right are not
    accepted silently: the run goes on (the value stays unknown, so the Reshape's output dims do)
    and a note names the tensor and what is wrong."""
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    p = _external_shape(tmp_path, "shape.bin")
    m = onnx.load(str(p), load_external_data=False)
    t = m.graph.initializer[0]
    kv = {e.key: e.value for e in t.external_data}
    kv.update(fields)
    del t.external_data[:]
    for k, v in kv.items():
        t.external_data.add(key=k, value=v)
    onnx.save(m, str(p))
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    notes = [n for n in d["notes"] if "tensor 'shape'" in n]
    assert len(notes) == 1 and what in notes[0] and "value stays unknown" in notes[0], d["notes"]


def test_external_data_that_is_a_directory_is_named(tmp_path, capsys):
    (tmp_path / "shape.bin").mkdir()
    p = _external_shape(tmp_path, "shape.bin")
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert any("tensor 'shape'" in n and "not a regular file" in n for n in d["notes"]), d["notes"]


def test_sound_external_shape_constant_gives_no_note(tmp_path, capsys):
    (tmp_path / "shape.bin").write_bytes(SHAPE.tobytes())
    p = _external_shape(tmp_path, "shape.bin")
    assert cli.main(["summary", str(p), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert not [n for n in d["notes"] if "tensor 'shape'" in n] and d["totals"]["complete"] is True


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (strings and messages)."""
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _nested_if_model(depth: int) -> bytes:
    """A valid model whose If nodes nest ``depth`` deep, serialized by hand: protobuf in Python
    cannot even build one deeper than its parser's limit."""
    out_vi = lambda name: _field(1, name.encode()) + _field(2, _field(1, _varint(1 << 3 | 0) + _varint(1)))  # noqa: E731
    identity = _field(1, b"x") + _field(2, b"o") + _field(4, b"Identity")
    leaf = graph = _field(1, identity) + _field(2, b"b") + _field(12, out_vi("o"))
    for d in range(depth):
        attr = lambda name, g: _field(1, name.encode()) + _field(6, g) + _varint(20 << 3) + _varint(5)  # noqa: E731
        node = _field(1, b"c") + _field(2, b"o") + _field(4, b"If") + _field(5, attr("then_branch", graph)) \
            + _field(5, attr("else_branch", leaf))
        graph = _field(1, node) + _field(2, f"g{d}".encode()) + _field(12, out_vi("o"))
    inputs = _field(11, out_vi("x")) + _field(11, _field(1, b"c") + _field(2, _field(1, _varint(1 << 3) + _varint(9))))
    opset = _field(8, _varint(2 << 3) + _varint(17))
    return _varint(1 << 3) + _varint(9) + opset + _field(7, graph + inputs)


def test_subgraphs_nested_beyond_the_protobuf_limit_are_named_not_called_corrupt(tmp_path, capsys):
    """Issue 15, item 7: If nested ~40 deep is beyond what protobuf parses (100 message levels);
    the one-line error says that, not "corrupt or truncated"; a model nested 20 deep is analyzed."""
    ok = tmp_path / "ok.onnx"
    ok.write_bytes(_nested_if_model(20))
    assert cli.main(["summary", str(ok), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["nodes_in_subgraphs"] >= 20
    deep = tmp_path / "deep.onnx"
    deep.write_bytes(_nested_if_model(40))
    err = _refused(tmp_path, capsys, deep)
    assert "nested deeper than protobuf can parse" in err and "corrupt" not in err
