"""float16 nodes on onnxruntime's CPU provider (issue 30, item 4): most run on the float kernel between Casts
onnxruntime inserts (onnxperf/predict/float_kernels.py). Which nodes, which Casts, and what the roofline of
an onnxruntime CPU spec charges, from named dims."""

import dataclasses

import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.float_kernels import float_kernels, on_float_kernel
from onnxperf.predict.roofline import node_roofline, roofline

N, M = 64, 32  # the tensors are N x M


def _chain(tmp_path, elem=TensorProto.FLOAT16):
    """x -> Tanh -> Sqrt -> Transpose -> y: Tanh and Sqrt have no float16 CPU kernel, Transpose has one."""
    nodes = [helper.make_node("Tanh", ["x"], ["t1"], name="tanh"), helper.make_node("Sqrt", ["t1"], ["t2"], name="sqrt"),
             helper.make_node("Transpose", ["t2"], ["y"], name="tr", perm=[1, 0])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, [N, M])],
                          [helper.make_tensor_value_info("y", elem, [M, N])])
    p = tmp_path / f"chain{elem}.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
    return onnxperf.analyze(p, dims={})


def test_which_nodes_and_which_casts(tmp_path):
    """Tanh reads the graph's float16 input: one Cast in (N·M elements); its output stays float for Sqrt
    (no Cast); Sqrt's output goes to Transpose, which runs in float16: one Cast out. Both read and write
    at float32 width: 4·N·M bytes each way. A float32 graph has none."""
    a = _chain(tmp_path)
    opsets = dict(a.model.opsets)
    by = {n.name: n for n in a.main_nodes}
    assert [on_float_kernel(by[k], opsets) for k in ("tanh", "sqrt", "tr")] == [True, True, False]
    fk = float_kernels(a, set, set())
    assert set(fk) == {by["tanh"].key, by["sqrt"].key}
    assert fk[by["tanh"].key].casts == (N * M,) and fk[by["sqrt"].key].casts == (N * M,)
    assert (fk[by["tanh"].key].bytes_read, fk[by["tanh"].key].bytes_written) == (4 * N * M, 4 * N * M)
    assert by["tanh"].bytes_read == 2 * N * M  # as written
    assert float_kernels(_chain(tmp_path, TensorProto.FLOAT), set, set()) == {}


def test_the_roofline_of_an_onnxruntime_cpu_spec_charges_them(tmp_path):
    """On a spec that models onnxruntime's CPU provider (fusion.epilogue), Tanh's time is its arithmetic
    against its bytes at float32 width (2x as written), plus one Cast of N·M elements moving 6·N·M bytes at
    the movement family's memory share, and one more kernel overhead:
    t = max(c, 2m) + o + 6·N·M / (e_mv·β) + o. Without the key (a plain or GPU spec) nothing changes."""
    a = _chain(tmp_path)
    base = load_spec("xeon-silver-4210x2")
    eff = {"fusion.epilogue": 1, "default.memory": 0.8, "movement.memory": 0.5, "overhead_s": 2e-6}
    spec = dataclasses.replace(base, efficiency=eff, efficiency_sources={})
    tanh = next(n for n in a.main_nodes if n.name == "tanh")
    own = node_roofline(tanh, spec)
    bw = spec.memory_bandwidth_bytes_per_s
    want = max(own.compute_s, 2 * own.memory_s) + 2e-6 + 6 * N * M / (0.5 * bw) + 2e-6
    got = next(r for r in roofline(a, spec).nodes if r.key == tanh.key)
    assert got.time_s == pytest.approx(want, rel=1e-12)
    assert got.bytes == 2 * (tanh.bytes_read + tanh.bytes_written) + 6 * N * M
    assert got.dispatch_s == pytest.approx(4e-6)
    no_key = dataclasses.replace(spec, efficiency={k: v for k, v in eff.items() if k != "fusion.epilogue"})
    assert next(r for r in roofline(a, no_key).nodes if r.key == tanh.key).time_s == pytest.approx(own.time_s)


def test_without_a_registry_the_graph_is_priced_as_written(tmp_path, monkeypatch):
    """Where onnxruntime's kernel registry cannot be read, no node is moved to a float kernel (nothing raises)."""
    from onnxperf.base.errors import OptionError
    from onnxperf.predict import float_kernels as fk_mod

    def refuse(provider):
        raise OptionError("no registry")

    a = _chain(tmp_path)
    monkeypatch.setattr(fk_mod, "kernel_table", refuse)
    assert fk_mod.float_kernels(a, set, set()) == {}


def test_the_thread_pool_threshold_reads_float16_at_float32_width(tmp_path):
    """onnxruntime's CPU thread pool splits a kernel by its work per element, and its float16 kernels compute as
    float: a float16 Tanh of N·M elements pays overhead_parallel_s exactly where its float32 twin does, although
    it moves half the bytes (threshold between 2·N·M·2 and 2·N·M·4 bytes)."""
    from onnxperf.predict.roofline import pool_bytes

    base = load_spec("xeon-silver-4210x2")
    eff = {"overhead_s": 1e-6, "overhead_parallel_s": 10e-6, "parallel_min_bytes": 3 * 2 * N * M}
    spec = dataclasses.replace(base, efficiency=eff, efficiency_sources={})
    for elem in (TensorProto.FLOAT16, TensorProto.FLOAT):
        a = _chain(tmp_path, elem)
        tanh = next(n for n in a.main_nodes if n.name == "tanh")
        assert pool_bytes(tanh) == 2 * 4 * N * M
        assert node_roofline(tanh, spec).dispatch_s == pytest.approx(11e-6)


def test_the_result_counts_them_and_the_summary_says_so(tmp_path, capsys):
    """The roofline result carries the float-kernel nodes, the Casts and the Casts' time (two Casts of N·M
    elements: 2·(6·N·M / (e_mv·β) + o)); the JSON and the text summary read them; a float32 graph has none."""
    import json

    from onnxperf import cli
    from onnxperf.hardware import to_toml

    base = load_spec("xeon-silver-4210x2")
    eff = {"fusion.epilogue": 1, "default.memory": 0.8, "movement.memory": 0.5, "overhead_s": 2e-6}
    spec = dataclasses.replace(base, id="cpu-ort", efficiency=eff, efficiency_sources={})
    r = roofline(_chain(tmp_path), spec)
    want = 2 * (6 * N * M / (0.5 * spec.memory_bandwidth_bytes_per_s) + 2e-6)
    assert (r.float_kernel_nodes, r.inserted_casts) == (2, 2) and r.inserted_cast_s == pytest.approx(want, rel=1e-12)
    f32 = roofline(_chain(tmp_path, TensorProto.FLOAT), spec)
    assert (f32.float_kernel_nodes, f32.inserted_casts, f32.inserted_cast_s) == (0, 0, 0.0)
    sp = tmp_path / "cpu.toml"
    sp.write_text(to_toml(spec))
    model_path = tmp_path / f"chain{TensorProto.FLOAT16}.onnx"
    assert cli.main(["summary", str(model_path), "--hw", str(sp), "--format", "json"]) == 0
    j = json.loads(capsys.readouterr().out)["roofline"]
    assert (j["float16_on_float_kernels"], j["inserted_casts"]) == (2, 2)
    assert j["inserted_cast_s"] == pytest.approx(want, rel=1e-12)
    assert cli.main(["summary", str(model_path), "--hw", str(sp)]) == 0
    assert "2 nodes without a float16 kernel run on float kernels at float32 width, between 2 Casts" in capsys.readouterr().out
