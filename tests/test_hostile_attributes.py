"""Attributes no runtime accepts (issue 28, item 5): every ONNX operator, every attribute set to what a
hostile file may hold, through the command line: a labelled result, never a traceback.

A Conv with a stride of 0 divided by zero in the shape pass and ``Cast(to=10**12)`` raised out of the
element-type table (exit 1 with a traceback). Now :mod:`onnxperf.shapes.validity` names such a node,
the shape pass leaves it unshaped, the walker counts it ``unknown_shape`` with ``invalid attribute: ...``
as its note and the warnings say the model is invalid. The sweep below builds one node per ONNX
operator (opset 21, every schema onnx knows) with each attribute set in turn to 0, -1, -2^63,
2^63-1, 10^12, empty and long lists, NaN and infinities and control characters, and runs ``summary
--format json --hw a100-80gb`` and the text output on each: exit 0 with strict JSON (no NaN or
Infinity) or exit 2 with one line.
"""

from __future__ import annotations

import json

import onnx
import pytest
from onnx import TensorProto, defs, helper

import onnxperf
from onnxperf import cli
from onnxperf.shapes import validity
from tests.util import const, model, vi

OPSET = 21
A = defs.OpSchema.AttrType
OPTIONAL = defs.OpSchema.FormalParameterOption.Optional
VARIADIC = defs.OpSchema.FormalParameterOption.Variadic
#: what a hostile file may put in an attribute of each type
HOSTILE = {
    A.INT: [0, -1, -(2**63), 2**63 - 1, 10**12],
    A.INTS: [[], [0], [-1, -1, -1, -1], [2**63 - 1] * 4, [0] * 64, [1] * 4],
    A.FLOAT: [float("nan"), float("inf"), -float("inf"), 0.0, -1e308],
    A.FLOATS: [[], [float("nan")] * 4, [0.0] * 4, [1e308] * 4],
    A.STRING: [b"", b"\x1b[31m\x07", b"nonsense"],
    A.STRINGS: [[], [b"\x1b"]],
}
SHAPE = [2, 3, 8, 8]


def _schemas() -> list[defs.OpSchema]:
    latest: dict[str, defs.OpSchema] = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain != "" or s.since_version > OPSET or s.deprecated or s.name in ("If", "Loop", "Scan"):
            continue
        if s.name not in latest or s.since_version > latest[s.name].since_version:
            latest[s.name] = s
    return [latest[k] for k in sorted(latest)]


SCHEMAS = {s.name: s for s in _schemas()}


def _build(s: defs.OpSchema, attr: str | None, value) -> onnx.ModelProto:
    """One node of ``s``: its required inputs (two for a variadic one) as float graph inputs of
    SHAPE, or as int64/int32 constants holding SHAPE where the op takes no float there."""
    inputs, inits, names = [], [], []
    for i, f in enumerate(s.inputs):
        if f.option == OPTIONAL and i > 0:
            break
        allowed = next((set(tc.allowed_type_strs) for tc in s.type_constraints if tc.type_param_str == f.type_str),
                       {f.type_str})
        for j in range(2 if f.option == VARIADIC else 1):
            name = f"in{i}_{j}"
            names.append(name)
            if "tensor(float)" in allowed:
                inputs.append(vi(name, SHAPE))
            elif "tensor(int64)" in allowed:
                inits.append(const(name, [4], TensorProto.INT64, SHAPE))
            elif "tensor(int32)" in allowed:
                inits.append(const(name, [4], TensorProto.INT32, SHAPE))
            elif "tensor(bool)" in allowed:
                inputs.append(vi(name, SHAPE, TensorProto.BOOL))
            elif "tensor(uint8)" in allowed:
                inputs.append(vi(name, SHAPE, TensorProto.UINT8))
            else:
                inputs.append(vi(name, SHAPE))
    n_out = max(1, sum(1 for f in s.outputs if f.option != OPTIONAL))
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(s.name, names, outs, name="n", **({attr: value} if attr else {}))
    return model([node], inputs, [vi(o, None) for o in outs], inits, opset=OPSET)


def _cases(s: defs.OpSchema):
    yield None, None
    for name, a in sorted(s.attributes.items()):
        for v in HOSTILE.get(a.type, []):
            yield name, v


def _strict(text: str):
    def refuse(c):
        raise ValueError(f"{c} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _summary(capsys, path, *extra) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(["summary", str(path), "--no-progress", *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_sweep_covers_every_operator():
    """The sweep is a sweep: ~190 operators, every attribute type that holds a number or a string."""
    assert len(SCHEMAS) > 150
    assert {"Conv", "ConvTranspose", "MaxPool", "Cast", "DepthToSpace", "Resize", "Reshape"} <= set(SCHEMAS)
    assert sum(1 for s in SCHEMAS.values() for _ in _cases(s)) > 1200


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(SCHEMAS))
def test_every_hostile_attribute_gives_a_labelled_result(op, tmp_path, capsys):
    s = SCHEMAS[op]
    path = tmp_path / "m.onnx"
    for attr, value in _cases(s):
        try:
            m = _build(s, attr, value)
        except (ValueError, TypeError):  # onnx.helper refuses to write it (a float into an int field)
            continue
        onnx.save(m, path)
        what = f"{op} {attr}={value!r:.60}"
        rc, out, err = _summary(capsys, path, "--format", "json", "--hw", "a100-80gb")
        assert rc in (0, 2), f"{what}: exit {rc}: {err[-600:]}"
        if rc == 0:
            _strict(out)
        else:
            assert err.count("\n") == 1 and "Traceback" not in err, what
        rc, out, err = _summary(capsys, path)
        assert rc in (0, 2) and "Traceback" not in err, f"{what}: exit {rc}: {err[-600:]}"


@pytest.mark.parametrize("op,attrs,why", [
    ("Conv", {"strides": [0, 0]}, "strides 0: each must be at least 1"),
    ("Conv", {"dilations": [1, -1]}, "dilations -1: each must be at least 1"),
    ("Conv", {"group": 0}, "group 0: must be at least 1"),
    ("Conv", {"pads": [0, 0, -2, 0]}, "pads -2: each must be at least 0"),
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [0, 1]}, "strides 0: each must be at least 1"),
    ("AveragePool", {"kernel_shape": [0, 2]}, "kernel_shape 0: each must be at least 1"),
    ("DepthToSpace", {"blocksize": 0}, "blocksize 0: must be at least 1"),
    ("Cast", {"to": 10**12}, "to = 1000000000000: names no ONNX element type"),
    ("EyeLike", {"dtype": 77}, "dtype = 77: names no ONNX element type"),
])
def test_an_invalid_attribute_is_named_and_the_node_is_not_costed(op, attrs, why, tmp_path, capsys):
    """The node is ``unknown_shape`` with the line that says why, the totals are partial (a lower
    bound), the warning says the model is invalid; exit 0 (the model is analyzed, as far as it can be)."""
    x = vi("x", [1, 4, 8, 8])
    inits = [const("w", [4, 4, 3, 3])] if op == "Conv" else []
    node = helper.make_node(op, ["x", "w"] if op == "Conv" else ["x"], ["y"], name="bad", **attrs)
    relu = helper.make_node("Relu", ["y"], ["z"], name="after")
    m = model([node, relu], [x], [vi("z", None)], inits)
    path = tmp_path / "bad.onnx"
    onnx.save(m, path)
    rc, out, err = _summary(capsys, path, "--format", "json")
    assert rc == 0, err
    d = _strict(out)
    first = d["nodes"][0]
    assert (first["status"], first["note"]) == ("unknown_shape", f"invalid attribute: {why}")
    assert d["totals"]["complete"] is False and d["totals"]["bound"] == "lower"
    a = onnxperf.analyze(str(path))
    w = a.warnings()[0]
    assert w["code"] == "invalid_attributes" and why in w["message"] and f"#0 {op} 'bad'" in w["message"]
    rc, out, err = _summary(capsys, path)
    assert rc == 0 and "Invalid model: 1 node with an attribute no runtime accepts" in out and why in out


def test_a_valid_attribute_is_not_flagged():
    """The rules flag only what the operator specs forbid: a stride of 2, pads of 0, a known type."""
    assert validity.problem("Conv", {"strides": [2, 2], "pads": [0, 0, 0, 0], "group": 1, "dilations": [1, 1]}) is None
    assert validity.problem("Cast", {"to": TensorProto.BFLOAT16}) is None
    assert validity.problem("EyeLike", {"dtype": 0}) is None  # 0: not set, the input's type
    assert validity.problem("Relu", {"strides": [0]}) is None  # not an attribute of Relu: nothing to check


def test_the_internal_exception_of_a_third_party_pass_does_not_reach_the_notes(tmp_path, capsys):
    """Issue 28, item 15: onnxruntime's symbolic inference failing on a graph was noted with its own
    exception text ("TypeError: object of type 'NoneType' has no len()"); the note now says what it
    means for the result."""
    x = vi("x", [1, 4, 8, 8])
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="bad", strides=[0, 0])
    m = model([node], [x], [vi("y", None)], [const("w", [4, 4, 3, 3])])
    path = tmp_path / "bad.onnx"
    onnx.save(m, path)
    rc, out, err = _summary(capsys, path, "--format", "json")
    assert rc == 0, err
    notes = _strict(out)["notes"]
    assert any("onnxruntime's symbolic shape inference could not run on this graph" in n for n in notes), notes
    assert not any("Error" in n or "NoneType" in n for n in notes), notes
