"""``onnxperf check``: every budget limit and every lint, on tiny models built here."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxperf import cli
from onnxperf.products.check.budget import Budget, budget_from_mapping, discover_budget, parse_count, parse_rate, parse_seconds, parse_size, read_budget
from onnxperf.products.check.lints import LINTS, lint
from onnxperf.products.check.runner import FAIL, PASS, UNKNOWN, check_model, check_models
from onnxperf.base.errors import DimBindingError, OptionError
from onnxperf.analysis.compose import summarize

from .util import F32, const, model, vi

DOCS = Path(__file__).resolve().parent.parent / "docs"
F16 = TensorProto.FLOAT16
B, K, N = 2, 8, 4  # batch, input features, output features of the MLP below


def _mlp(batch=B, dtype=F32, opset=17) -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"], name="act")]
    return model(nodes, [vi("x", [batch, K], dtype)], [vi("y", None, dtype)], [const("w", [K, N], dtype)], opset=opset)


def _save(m: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> str:
    p = tmp_path / name
    onnx.save(m, str(p))
    return str(p)


def _check(m: onnx.ModelProto, tmp_path: Path, **budget):
    return check_model(_save(m, tmp_path), budget_from_mapping(budget, "test"))


def _result(v, key: str):
    (r,) = [b for b in v.budgets if b.key == key]
    return r


def _findings(v, lint_id: str):
    return [f for f in v.findings if f.lint_id == lint_id]


# ---------------------------------------------------------------- parsing the budget

def test_counts_sizes_durations_and_rates_parse_exactly():
    assert parse_count("25M", "k") == 25_000_000
    assert parse_count("4.1G", "k") == 4_100_000_000
    assert parse_count(1_000, "k") == 1000 and parse_count("1_000", "k") == 1000
    assert parse_size("100MiB", "k") == 100 * 2**20 and parse_size(4096, "k") == 4096
    assert parse_seconds("5ms", "k") == pytest.approx(0.005) and parse_seconds("250us", "k") == pytest.approx(250e-6)
    assert parse_seconds(0.2, "k") == 0.2
    assert parse_rate("1.5k/s", "k") == 1500 and parse_rate(200, "k") == 200
    for bad in (lambda: parse_count("1.5", "max_params"), lambda: parse_count("lots", "max_params"),
                lambda: parse_size("big", "max_model_size"), lambda: parse_seconds("soon", "max_latency"),
                lambda: parse_seconds(0, "max_latency"), lambda: parse_rate(True, "min_throughput")):
        with pytest.raises(OptionError):
            bad()


def test_unknown_key_is_an_error_that_names_it(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text("max_parms = 10\n")
    with pytest.raises(OptionError, match=r"b.toml: unknown budget key 'max_parms'"):
        read_budget(f)
    f.write_text("[lints]\nOP999 = 'off'\n")
    with pytest.raises(OptionError, match="unknown lint id 'OP999'"):
        read_budget(f)
    f.write_text("[lints]\nOP001 = 'loud'\n")
    with pytest.raises(OptionError, match="OP001 = 'loud'"):
        read_budget(f)
    f.write_text("[lints]\nshout = 1\n")
    with pytest.raises(OptionError, match="unknown key 'lints.shout'"):
        read_budget(f)
    f.write_text("max_params = [\n")
    with pytest.raises(OptionError, match="not valid TOML"):
        read_budget(f)
    f.write_text("allowed_dtypes = ['float33']\n")
    with pytest.raises(OptionError, match="unknown dtype 'float33'"):
        read_budget(f)
    f.write_text("min_opset = 18\nmax_opset = 13\n")
    with pytest.raises(OptionError, match="above max_opset"):
        read_budget(f)


def test_budget_file_values(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('hw = "t4"\ndims = { batch = 4 }\nmax_params = "25M"\nmax_model_size = "100MiB"\n'
                 'max_latency = "5ms"\nmin_throughput = "1k/s"\n[lints]\nOP002 = "error"\nmin_opset = 15\n')
    b = read_budget(f)
    assert (b.hw, b.dims, b.max_params, b.max_model_size_bytes) == ("t4", (("batch", 4),), 25_000_000, 100 << 20)
    assert b.max_latency_s == pytest.approx(5e-3) and b.min_throughput_per_s == 1000
    assert b.lints.level("OP002", "info") == "error" and b.lints.min_opset == 15


def test_pyproject_is_found_upward_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.onnxperf.budget]\nmax_params = "1k"\n'
                                             '[tool.onnxperf.lints]\nOP003 = "off"\n')
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    b = discover_budget()
    assert b.max_params == 1000 and b.lints.level("OP003", "warning") == "off"
    assert "pyproject.toml [tool.onnxperf.budget]" in b.source
    (tmp_path / "pyproject.toml").write_text('[tool.onnxperf]\nmax_macs = 5\n')
    assert discover_budget().max_macs == 5
    (tmp_path / "pyproject.toml").write_text('[tool.onnxperf]\nmax_macs = 5\nfoo = 1\n')
    with pytest.raises(OptionError, match="unknown budget key 'foo'"):
        discover_budget()


def test_pyproject_search_stops_at_the_repository_root(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.onnxperf]\nmax_macs = 5\n')
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert discover_budget() == Budget()


def test_check_reads_the_pyproject_budget(tmp_path, monkeypatch, capsys):
    p = _save(_mlp(), tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.onnxperf.budget]\nmax_params = 10\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", p]) == 1
    assert "max_params: 32 is over the limit 10" in capsys.readouterr().out
    assert cli.main(["check", p, "--no-pyproject"]) == 0


def test_latency_without_hardware_is_refused(tmp_path, capsys):
    f = tmp_path / "b.toml"
    f.write_text('max_latency = "1ms"\n')
    assert cli.main(["check", _save(_mlp(), tmp_path), "--budget", str(f)]) == 2
    assert "need a hardware spec" in capsys.readouterr().err


# ---------------------------------------------------------------- every budget limit

def test_max_params(tmp_path):
    params = K * N
    assert _result(_check(_mlp(), tmp_path, max_params=params), "max_params").status == PASS
    r = _result(_check(_mlp(), tmp_path, max_params=params - 1), "max_params")
    assert r.status == FAIL and r.actual == params


def test_max_model_size(tmp_path):
    size = K * N * 4  # float32 weights
    assert _result(_check(_mlp(), tmp_path, max_model_size=size), "max_model_size").status == PASS
    assert _result(_check(_mlp(), tmp_path, max_model_size=f"{size - 1}"), "max_model_size").status == FAIL
    half = _result(_check(_mlp(dtype=F16), tmp_path, max_model_size=size // 2), "max_model_size")
    assert half.status == PASS and half.actual == size // 2


def test_max_macs_and_flops(tmp_path):
    macs = B * K * N
    flops = 2 * macs + B * N  # MatMul: 2 per MAC; Relu: 1 per element
    v = _check(_mlp(), tmp_path, max_macs=macs, max_flops=flops)
    assert [_result(v, k).status for k in ("max_macs", "max_flops")] == [PASS, PASS]
    v = _check(_mlp(), tmp_path, max_macs=macs - 1, max_flops=flops - 1)
    assert [(_result(v, k).status, _result(v, k).actual) for k in ("max_macs", "max_flops")] == \
        [(FAIL, macs), (FAIL, flops)]
    assert v.status == FAIL and v.exit_code == 1


def test_partial_totals_cannot_pass_unless_allowed(tmp_path):
    m = _mlp(batch="tokens")  # a length, not a batch: left unbound (a batch dim would be set to 1)
    r = _result(_check(m, tmp_path, max_macs=10**9), "max_macs")
    assert r.status == UNKNOWN and "cannot verify" in r.message and "--dim tokens=N" in r.message
    # nothing is counted (every node waits for tokens): the MACs are unknown, not 0, and there is no lower
    # bound for allow_partial to accept (issue 28, item 12)
    r = _result(_check(m, tmp_path, max_macs=10**9, allow_partial=True), "max_macs")
    assert r.status == UNKNOWN and r.actual is None
    assert _result(_check(m, tmp_path, max_macs=10**9, dims={"tokens": 3}), "max_macs").actual == 3 * K * N
    # a partial total that counted something (the MLP, then an op no rule knows) is a lower bound:
    # allow_partial accepts it within the limit
    mlp = _mlp()
    part = model([*mlp.graph.node, helper.make_node("Mystery", ["y"], ["z"], domain="com.example")],
                 [vi("x", [B, K])], [vi("z", None)], [const("w", [K, N])], extra_opsets={"com.example": 1})
    assert _result(_check(part, tmp_path, max_macs=10**9), "max_macs").status == UNKNOWN
    r = _result(_check(part, tmp_path, max_macs=10**9, allow_partial=True), "max_macs")
    assert (r.status, r.actual) == (PASS, B * K * N)


def test_an_unbound_batch_dim_is_checked_at_1_with_a_note(tmp_path, capsys):
    v = _check(_mlp(batch="batch"), tmp_path, max_macs=10**9)
    assert _result(v, "max_macs").actual == 1 * K * N and v.dims == (("batch", 1),)
    assert v.defaulted == ("unbound batch dim 'batch' set to 1; pass --dim batch=N for another batch",)
    assert cli.main(["check", _save(_mlp(batch="batch"), tmp_path), "--no-pyproject"]) == 0
    assert "    note    unbound batch dim 'batch' set to 1" in capsys.readouterr().out


def test_max_activation_peak_and_total_memory(tmp_path):
    peak = B * K * 4 + B * N * 4  # MatMul reads x while writing h
    total = K * N * 4 + peak
    v = _check(_mlp(), tmp_path, max_activation_peak=peak, max_total_memory=total)
    assert [_result(v, k).status for k in ("max_activation_peak", "max_total_memory")] == [PASS, PASS]
    v = _check(_mlp(), tmp_path, max_activation_peak=peak - 1, max_total_memory=total - 1)
    assert [_result(v, k).actual for k in ("max_activation_peak", "max_total_memory")] == [peak, total]
    assert {_result(v, k).status for k in ("max_activation_peak", "max_total_memory")} == {FAIL}


def test_max_latency_and_min_throughput_on_a_spec(tmp_path):
    p = _save(_mlp(), tmp_path)
    rl = summarize(p, hw="t4").roofline
    lat, tput = rl.latency_s, rl.throughput_per_s(B)
    ok = check_model(p, budget_from_mapping({"hw": "t4", "max_latency": lat * 1.01, "min_throughput": tput * 0.99}, "t"))
    assert [_result(ok, k).status for k in ("max_latency", "min_throughput")] == [PASS, PASS]
    bad = check_model(p, budget_from_mapping({"hw": "t4", "max_latency": lat * 0.99, "min_throughput": tput * 1.01}, "t"))
    assert [_result(bad, k).status for k in ("max_latency", "min_throughput")] == [FAIL, FAIL]
    assert _result(bad, "min_throughput").actual == pytest.approx(B / lat)


def test_opset_range(tmp_path):
    assert _result(_check(_mlp(), tmp_path, min_opset=13, max_opset=17), "opset").status == PASS
    assert _result(_check(_mlp(), tmp_path, max_opset=16), "opset").status == FAIL
    r = _result(_check(_mlp(), tmp_path, min_opset=18), "opset")
    assert r.status == FAIL and "ai.onnx 17 is outside 18.." in r.message


def test_allowed_op_types_and_domains(tmp_path):
    r = _result(_check(_mlp(), tmp_path, allowed_op_types=["MatMul"]), "allowed_op_types")
    assert r.status == FAIL and r.actual == ["Relu"] and [n.name for n in r.nodes] == ["act"]
    assert _result(_check(_mlp(), tmp_path, allowed_op_types=["MatMul", "ai.onnx::Relu"]),
                   "allowed_op_types").status == PASS
    nodes = [helper.make_node("FusedGemm", ["x", "w"], ["y"], domain="com.microsoft", name="fg")]
    ms = model(nodes, [vi("x", [B, K])], [vi("y", None)], [const("w", [K, N])], extra_opsets={"com.microsoft": 1})
    r = _result(_check(ms, tmp_path, allowed_domains=["ai.onnx"]), "allowed_domains")
    assert r.status == FAIL and r.actual == ["com.microsoft"]
    assert _result(_check(ms, tmp_path, allowed_op_types=["com.microsoft::FusedGemm"]), "allowed_op_types").status == PASS


def test_static_shapes(tmp_path):
    m = _mlp()
    m.graph.output[0].CopyFrom(vi("y", [B, N]))
    assert _result(_check(m, tmp_path, static_shapes=True), "static_shapes").status == PASS
    r = _result(_check(_mlp(batch="batch"), tmp_path, static_shapes=True, dims={"batch": 1}), "static_shapes")
    assert r.status == FAIL and [n.name for n in r.nodes] == ["x", "y"]  # bindings do not make the file static


def test_allowed_dtypes(tmp_path):
    assert _result(_check(_mlp(), tmp_path, allowed_dtypes=["float32"]), "allowed_dtypes").status == PASS
    r = _result(_check(_mlp(), tmp_path, allowed_dtypes=["float16"]), "allowed_dtypes")
    assert r.status == FAIL and r.actual == ["float32"]


@pytest.mark.parametrize("dtype,runs", [(F32, True), (F16, True), (TensorProto.BFLOAT16, False)])
def test_execution_provider_agrees_with_onnxruntime(tmp_path, dtype, runs):
    import onnxruntime as ort

    p = _save(_mlp(dtype=dtype), tmp_path)
    ep = "CPUExecutionProvider"
    r = _result(check_model(p, budget_from_mapping({"execution_provider": ep}, "t")), "execution_provider")
    # the ground truth: onnxruntime itself (float16 runs on CPU through Casts it inserts)
    if runs:
        assert r.status == PASS and r.actual == 0
        ort.InferenceSession(p, providers=[ep])
    else:
        assert r.status == FAIL and "no MatMul kernel for T=tensor(bfloat16)" in r.message
        assert [n.name for n in r.nodes] == ["mm", "act"]  # no bfloat16 MatMul or Relu on the CPU
        with pytest.raises(Exception, match="Could not find an implementation for MatMul"):
            ort.InferenceSession(p, providers=[ep])


@pytest.mark.parametrize("dtype,runs", [(F32, True), (TensorProto.DOUBLE, False)])
def test_execution_provider_function_ops_are_checked_by_expansion(tmp_path, dtype, runs):
    import onnxruntime as ort

    # Mish has no CPU kernel: onnxruntime runs its ONNX function body, whose Softplus has no float64 kernel
    m = model([helper.make_node("Mish", ["x"], ["y"], name="mish")], [vi("x", [B, K], dtype)],
              [vi("y", None, dtype)], opset=22, ir_version=10)
    p = _save(m, tmp_path)
    r = _result(check_model(p, budget_from_mapping({"execution_provider": "CPUExecutionProvider"}, "t")),
                "execution_provider")
    if runs:
        assert r.status == PASS
        ort.InferenceSession(p, providers=["CPUExecutionProvider"])
    else:
        assert r.status == FAIL and "Mish as its function body, which has no implementation for Softplus" in r.message
        with pytest.raises(Exception, match="Softplus"):
            ort.InferenceSession(p, providers=["CPUExecutionProvider"])


def test_execution_provider_function_ops_and_unknown_domains(tmp_path):
    nodes = [helper.make_node("Mish", ["x"], ["t"]), helper.make_node("Foo", ["t"], ["y"], domain="evil", name="f")]
    m = model(nodes, [vi("x", [B, K])], [vi("y", None)], opset=22, extra_opsets={"evil": 1})
    r = _result(_check(m, tmp_path, execution_provider="CPUExecutionProvider"), "execution_provider")
    assert [n.name for n in r.nodes] == ["f"]  # Mish runs by function expansion; evil::Foo has no kernel


def test_execution_provider_without_a_kernel_table_is_refused(tmp_path, capsys):
    assert cli.main(["check", _save(_mlp(), tmp_path), "--ep", "TensorrtExecutionProvider"]) == 2
    err = capsys.readouterr().err
    assert "TensorrtExecutionProvider" in err and "no kernel table" in err and err.count("\n") == 1


# ---------------------------------------------------------------- every lint

def test_lint_registry_is_complete_and_documented():
    doc = (DOCS / "check.md").read_text()
    for lint_id, info in LINTS.items():
        assert info.severity in ("error", "warning", "info") and info.summary and info.fix
        assert f"`{lint_id}`" in doc, f"{lint_id} missing from docs/check.md"
    with pytest.raises(ValueError, match="registered twice"):
        lint("OP001", "again", severity="info", summary="s", fix="f")(lambda ctx: iter(()))


def test_op001_unbound_dim(tmp_path):
    (f,) = _findings(_check(_mlp(batch="tokens"), tmp_path), "OP001")
    assert "'tokens' is unbound" in f.message and "--dim tokens=N" in f.fix
    assert [n.name for n in f.nodes] == ["mm", "act"]
    assert not _findings(_check(_mlp(batch="tokens"), tmp_path, dims={"tokens": 1}), "OP001")


def test_op002_fp32_weights(tmp_path):
    (f,) = _findings(_check(_mlp(), tmp_path, lints={"fp32_weights_min": 64}), "OP002")
    assert f.severity == "info" and "128 B of float32 weights" in f.message and "64 B" in f.message
    assert [n.name for n in f.nodes] == ["mm"]
    assert not _findings(_check(_mlp(), tmp_path), "OP002")  # under the default 1 MiB
    assert not _findings(_check(_mlp(dtype=F16), tmp_path, lints={"fp32_weights_min": 1}), "OP002")


def _transposes(perms: list[list[int]], fanout: bool = False) -> onnx.ModelProto:
    nodes, prev = [], "x"
    for i, p in enumerate(perms):
        nodes.append(helper.make_node("Transpose", [prev], [f"t{i}"], perm=p, name=f"T{i}"))
        prev = f"t{i}"
    nodes.append(helper.make_node("Relu", [prev], ["y"]))
    outs = [vi("y", None)] + ([vi("t0", None)] if fanout else [])
    return model(nodes, [vi("x", [2, 3, 4])], outs)


def test_op003_transpose_chains(tmp_path):
    (f,) = _findings(_check(_transposes([[0, 2, 1], [0, 2, 1]]), tmp_path), "OP003")
    assert "cancel out" in f.message and [n.name for n in f.nodes] == ["T0", "T1"]
    (f,) = _findings(_check(_transposes([[1, 0, 2], [0, 2, 1]]), tmp_path), "OP003")
    # x.transpose(1,0,2).transpose(0,2,1) == x.transpose(1,2,0)
    assert np.array_equal(np.zeros((2, 3, 4)).transpose(1, 0, 2).transpose(0, 2, 1).shape, (3, 4, 2))
    assert "perm [1, 2, 0]" in f.message
    (f,) = _findings(_check(_transposes([[2, 0, 1], [1, 2, 0], [0, 2, 1], [0, 2, 1]]), tmp_path), "OP003")
    assert "4 consecutive Transposes cancel out" in f.message
    assert not _findings(_check(_transposes([[0, 2, 1]]), tmp_path), "OP003")
    # the first Transpose's result is also a graph output: it cannot go, no chain
    assert not _findings(_check(_transposes([[0, 2, 1], [0, 2, 1]], fanout=True), tmp_path), "OP003")


def test_op004_constant_subgraph(tmp_path):
    nodes = [helper.make_node("Add", ["a", "b"], ["ab"], name="fold_me"),
             helper.make_node("Mul", ["ab", "a"], ["c"], name="and_me"),
             helper.make_node("Add", ["x", "c"], ["y"], name="keep"),
             helper.make_node("DequantizeLinear", ["q", "s"], ["dq"], name="qdq"),
             helper.make_node("Add", ["y", "dq"], ["z"])]
    inits = [const("a", [4]), const("b", [4]), const("q", [4], TensorProto.INT8), const("s", [])]
    m = model(nodes, [vi("x", [4])], [vi("z", None)], inits, opset=17)
    (f,) = _findings(_check(m, tmp_path), "OP004")
    assert [n.name for n in f.nodes] == ["fold_me", "and_me"] and "Add ×1, Mul ×1" in f.message
    # an initializer that is also a graph input can be overridden at run time: not a constant
    m.graph.input.append(vi("a", [4]))
    assert not _findings(_check(m, tmp_path), "OP004")


def test_op005_unused_initializer_and_op006_dead_node(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["unused"], name="dead")]
    m = model(nodes, [vi("x", [4])], [vi("y", None)], [const("spare", [16, 16])])
    v = _check(m, tmp_path)
    (f5,) = _findings(v, "OP005")
    assert "1 initializer never used (1 KiB)" in f5.message and f5.nodes[0].name == "spare"
    (f6,) = _findings(v, "OP006")
    assert [n.name for n in f6.nodes] == ["dead"]
    assert not _findings(_check(_mlp(), tmp_path), "OP005") and not _findings(_check(_mlp(), tmp_path), "OP006")


def test_op007_duplicate_initializers(tmp_path):
    vals = np.arange(K * N, dtype=np.float32).reshape(K, N)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("MatMul", ["x", "w2"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]

    def build(w2_values):
        return model(nodes, [vi("x", [B, K])], [vi("y", None)],
                     [onnx.numpy_helper.from_array(vals, "w1"), onnx.numpy_helper.from_array(w2_values, "w2")])

    same = build(vals.copy())
    (f,) = _findings(_check(same, tmp_path, lints={"duplicate_min": 1}), "OP007")
    assert [n.name for n in f.nodes] == ["w1", "w2"] and "128 B to save" in f.message
    assert not _findings(_check(build(vals + 1), tmp_path, lints={"duplicate_min": 1}), "OP007")
    assert not _findings(_check(same, tmp_path), "OP007")  # under the default 1 KiB


def test_op008_old_opset(tmp_path):
    (f,) = _findings(_check(_mlp(opset=11), tmp_path), "OP008")
    assert "opset 11 is older than 13" in f.message
    assert not _findings(_check(_mlp(opset=13), tmp_path), "OP008")
    assert _findings(_check(_mlp(opset=17), tmp_path, lints={"min_opset": 18}), "OP008")


def test_op009_unsupported_op(tmp_path):
    nodes = [helper.make_node("Foo", ["x"], ["y"], domain="evil", name="f")]
    (f,) = _findings(_check(model(nodes, [vi("x", [4])], [vi("y", None)], extra_opsets={"evil": 1}), tmp_path), "OP009")
    assert f.message.startswith("evil::Foo ×1: cost unknown") and f.nodes[0].name == "f"


def test_op010_large_constant(tmp_path):
    big = onnx.numpy_helper.from_array(np.zeros((512, 1024), np.float32))  # 2 MiB
    nodes = [helper.make_node("Constant", [], ["c"], value=big, name="blob"), helper.make_node("Add", ["x", "c"], ["y"])]
    m = model(nodes, [vi("x", [512, 1024])], [vi("y", None)])
    (f,) = _findings(_check(m, tmp_path), "OP010")
    assert "Constant node holds 2 MiB (float32 [512, 1024])" in f.message and f.nodes[0].name == "blob"
    assert not _findings(_check(m, tmp_path, lints={"large_constant": "4MiB"}), "OP010")


def test_op011_opset_newer_than_onnx(tmp_path):
    from onnxperf.cost.analysis import known_opsets

    (f,) = _findings(_check(_mlp(opset=known_opsets()[""] + 1), tmp_path), "OP011")
    assert "newer than the installed onnx" in f.message
    assert not _findings(_check(_mlp(), tmp_path), "OP011")


def test_op012_missing_external_data(tmp_path):
    m = _mlp()
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="w.bin")
    (f,) = _findings(_check(m, tmp_path), "OP012")
    assert f.severity == "info" and "w.bin" in f.message


def test_lint_levels_from_the_budget(tmp_path):
    m = _transposes([[0, 2, 1], [0, 2, 1]])
    v = _check(m, tmp_path)
    assert v.status == PASS and _findings(v, "OP003")[0].severity == "warning"
    v = _check(m, tmp_path, lints={"OP003": "error"})
    assert v.status == FAIL and v.exit_code == 1 and _findings(v, "OP003")[0].severity == "error"
    assert not _findings(_check(m, tmp_path, lints={"OP003": "off"}), "OP003")


# ---------------------------------------------------------------- many models, exit codes, formats

def test_many_models_in_parallel_keep_their_order(tmp_path):
    paths = [_save(_mlp(batch=b), tmp_path, f"m{b}.onnx") for b in range(1, 7)]
    budget = budget_from_mapping({"max_macs": 4 * K * N}, "t")
    with mock.patch("onnxperf.products.check.runner.ProcessPoolExecutor", wraps=ProcessPoolExecutor) as pool:
        serial = check_models(paths, budget, jobs=1)
        pool.assert_not_called()  # one job: everything in this process
        parallel = check_models(paths, budget, jobs=3)
    pool.assert_called_once()
    assert pool.call_args.kwargs["max_workers"] == 3  # worker processes really used
    assert [v.model for v in parallel] == paths
    assert [v.to_dict() for v in parallel] == [v.to_dict() for v in serial]
    assert [v.status for v in parallel] == [PASS] * 4 + [FAIL] * 2


@pytest.mark.parametrize("bad,code", [(False, 1), (True, 2)])
def test_exit_codes_for_many_models(tmp_path, capsys, bad, code):
    paths = [_save(_mlp(batch=1), tmp_path, "ok.onnx"), _save(_mlp(batch=64), tmp_path, "big.onnx")]
    if bad:
        (tmp_path / "bad.onnx").write_bytes(b"not a model at all")
        paths.append(str(tmp_path / "bad.onnx"))
    b = tmp_path / "b.toml"
    b.write_text(f"max_macs = {8 * K * N}\n")
    assert cli.main(["check", *paths, "--budget", str(b), "-j", "2"]) == code
    lines = capsys.readouterr().out.splitlines()
    verdicts = [ln.split()[0] for ln in lines if ln[:5] in ("PASS ", "FAIL ", "ERROR")]
    assert verdicts == ["PASS", "FAIL"] + (["ERROR"] if bad else [])
    assert lines[-1].startswith(f"{len(paths)} models: 1 passed, 1 failed, {int(bad)} unreadable")


def test_all_pass_exit_0(tmp_path, capsys):
    assert cli.main(["check", _save(_mlp(), tmp_path), "--no-pyproject"]) == 0


def test_bindings_a_model_lacks_are_a_note_per_model(tmp_path, capsys):
    """A budget's dims apply per model: a lone static export checked with dims = {batch = 1}
    passes, and says which bindings it does not use (a typo shows there, on every model)."""
    dyn, fixed = _save(_mlp(batch="batch"), tmp_path, "dyn.onnx"), _save(_mlp(), tmp_path, "fixed.onnx")
    v = check_models([dyn, fixed], Budget(dims=(("batch", 2),)), jobs=1)
    assert v[0].dims == (("batch", 2),) and v[1].ignored_dims == ("batch",)
    (lone,) = check_models([fixed], Budget(dims=(("batch", 2),)), jobs=1)
    assert lone.status == PASS and lone.ignored_dims == ("batch",)
    typo = check_models([dyn, fixed], Budget(dims=(("bacth", 2),)), jobs=1)
    assert [t.ignored_dims for t in typo] == [("bacth",), ("bacth",)]
    b = tmp_path / "b.toml"
    b.write_text("dims = { batch = 1 }\n")
    assert cli.main(["check", fixed, "--budget", str(b)]) == 0
    assert "note    bindings this model does not use: batch" in capsys.readouterr().out


def _report(tmp_path, capsys, fmt: str) -> str:
    paths = [_save(_mlp(), tmp_path, "ok.onnx"), _save(_transposes([[0, 2, 1], [0, 2, 1]]), tmp_path, "tt.onnx")]
    b = tmp_path / "b.toml"
    b.write_text('max_params = 16\n[lints]\nOP003 = "error"\n')
    out = tmp_path / f"r.{fmt}"
    assert cli.main(["check", *paths, "--budget", str(b), "--format", fmt, "-o", str(out)]) == 1
    return out.read_text()


def test_json_report_is_versioned_and_deterministic(tmp_path, capsys):
    first = _report(tmp_path, capsys, "json")
    assert _report(tmp_path, capsys, "json") == first
    d = json.loads(first)
    assert d["schema"] == "onnxperf.check/1" and d["exit_code"] == 1
    assert d["summary"] == {"models": 2, "passed": 0, "failed": 2, "unreadable": 0}
    assert [m["verdict"] for m in d["models"]] == ["fail", "fail"]
    assert d["models"][0]["budgets"][0] == {"key": "max_params", "status": "fail", "limit": 16, "actual": 32,
                                            "message": "max_params: 32 is over the limit 16", "nodes": []}
    assert d["models"][1]["findings"][0]["id"] == "OP003" and d["models"][1]["findings"][0]["severity"] == "error"
    assert d["models"][0]["figures"]["macs"] == B * K * N


def test_junit_one_testcase_per_limit_and_lint(tmp_path, capsys):
    root = ET.fromstring(_report(tmp_path, capsys, "junit"))
    suites = root.findall("testsuite")
    assert [s.get("name").rsplit("/", 1)[1] for s in suites] == ["ok.onnx", "tt.onnx"]
    for s in suites:
        names = [c.get("name") for c in s.findall("testcase")]
        assert names == ["budget max_params"] + [f"lint {i.lint_id} {i.name}" for i in LINTS.values()]
        assert s.get("tests") == str(len(names))
    failed = [c.get("name") for s in suites for c in s.findall("testcase") if c.find("failure") is not None]
    assert failed == ["budget max_params", "lint OP003 transpose-chain"]
    assert root.get("failures") == "2"


def test_sarif_2_1_0(tmp_path, capsys):
    doc = json.loads(_report(tmp_path, capsys, "sarif"))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= set(LINTS) | {"budget/max_params"}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note") and res["message"]["text"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".onnx")
    op3 = [r for r in run["results"] if r["ruleId"] == "OP003"][0]
    assert op3["level"] == "error" and [x["name"] for x in op3["locations"][0]["logicalLocations"]] == ["T0", "T1"]


def test_md_for_a_pull_request(tmp_path, capsys):
    md = _report(tmp_path, capsys, "md")
    assert md.startswith("### onnxperf check: 0 of 2 pass")
    rows = [ln for ln in md.splitlines() if ln.startswith("| ❌")]
    assert len(rows) == 2 and "ok.onnx" in rows[0].replace("\\", "")
    assert "<details><summary>" in md and "**OP003**" in md


def test_text_has_one_verdict_line_per_model(tmp_path, capsys):
    text = _report(tmp_path, capsys, "text")
    lines = text.splitlines()
    assert [ln.split()[0] for ln in lines if not ln.startswith(" ")][:2] == ["FAIL", "FAIL"]
    assert "fix: remove them" in text


def test_partial_figures_are_unknown_or_a_lower_bound_never_zero(tmp_path, capsys):
    """Unknown is not zero: with a length dim unbound no MAC is costed, and the verdict says
    "unknown", in text and in Markdown."""
    p = tmp_path / "m.onnx"
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    onnx.save(model(nodes, [vi("x", ["tokens", 8])], [vi("y", None)], [const("w", [8, 4])]), str(p))
    for fmt in ("text", "md"):
        assert cli.main(["check", str(p), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "unknown" in out and "MACs 0" not in out and "| 0 |" not in out
