"""``--precision`` what-ifs (issue 18, point 3): bytes, weights, activation memory and peaks of
another precision, checked against a real fp16 export of the same network and against formulas."""

import json
from pathlib import Path

import pytest

from onnxperf.cost.analysis import cost_analysis as analyze
from onnxperf.cli import main
from onnxperf.hardware import load_spec
from onnxperf.predict.memory import liveness
from onnxperf.predict.precision import PRECISIONS, get, what_if
from onnxperf.predict.roofline import roofline
from onnxperf.cost.request import Request

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "models" / "corpus"


@pytest.fixture(scope="module")
def effnet():
    return (analyze(CORPUS / "efficientnet_b0_torch.onnx", dims={"batch": 1}),
            analyze(CORPUS / "efficientnet_b0_fp16.onnx", dims={"batch": 1}))


def test_fp16_what_if_equals_the_real_fp16_export(effnet):
    """EfficientNet-B0 as exported (fp32) seen in fp16 is the fp16 export of it (onnxruntime's
    float16 converter, keep_io_types), but for the two Casts that export adds at its edges: the
    same parameter bytes, activation peak, MACs and FLOPs, and the same bytes once those Casts'
    own traffic is taken out."""
    a32, a16 = effnet
    w = what_if(a32, "fp16")
    assert w.totals.param_bytes == a16.totals.param_bytes == 2 * a32.totals.params
    assert w.totals.param_bytes_by_dtype == (("float16", 2 * a32.totals.params),)
    assert liveness(w).peak_bytes == liveness(a16).peak_bytes
    assert (w.totals.macs, w.totals.flops) == (a16.totals.macs, a16.totals.flops)
    casts = [n for n in a16.main_nodes if n.op_type == "Cast"]
    assert len(casts) == 2
    assert w.totals.bytes_read == a16.totals.bytes_read - sum(n.bytes_read for n in casts)
    assert w.totals.bytes_written == a16.totals.bytes_written - sum(n.bytes_written for n in casts)


@pytest.mark.parametrize("name, bits", [("fp32", 32), ("tf32", 32), ("fp16", 16), ("bf16", 16), ("fp8", 8),
                                        ("int8", 8)])
def test_every_float_tensor_at_the_new_width(name, bits):
    """ResNet-50 holds only float32 tensors (but its shape constants): bytes and memory scale by
    bits / 32 exactly; MACs do not change."""
    a = analyze(ROOT / "models" / "resnet50_torch.onnx", dims={"batch": 2})
    w = what_if(a, name)
    assert w.totals.bytes_read * 32 == a.totals.bytes_read * bits
    assert w.totals.bytes_written * 32 == a.totals.bytes_written * bits
    assert w.totals.param_bytes * 32 == a.totals.param_bytes * bits
    assert liveness(w).peak_bytes * 32 == liveness(a).peak_bytes * bits
    assert (w.totals.macs, w.totals.flops, w.totals.params) == (a.totals.macs, a.totals.flops, a.totals.params)
    assert {i.dtype for i in w.model.inputs} == {get(name).dtype}


def test_integer_tensors_keep_their_type():
    """BERT's int64 token ids, masks and shape arithmetic stay int64; its float tensors change."""
    a = analyze(ROOT / "models" / "bert_encoder_torch.onnx", dims={"batch": 1, "sequence": 64})
    w = what_if(a, "bf16")
    assert [i.dtype for i in w.model.inputs] == ["int64", "int64"]
    kinds = {r.dtype for n in w.nodes for r in (*n.inputs, *n.outputs) if r is not None}
    assert "float32" not in kinds and "bfloat16" in kinds and "int64" in kinds


@pytest.mark.parametrize("name", ["tf32", "fp16", "int8"])
def test_compute_at_the_precision_peak(name):
    """A conv's predicted time is max(FLOPs at the precision's peak, its bytes at the new width over
    the bandwidth) (tf32: tensor cores on float32 data; int8: the integer rate): the plain roofline."""
    spec = load_spec("a100-80gb:plain")  # the plain DRAM roofline
    a = analyze(ROOT / "models" / "resnet50_torch.onnx", dims={"batch": 32})
    p = get(name)
    w = what_if(a, p)
    r = roofline(w, spec, p)
    node = max((n for n in w.main_nodes if n.op_type == "Conv"), key=lambda n: n.flops)
    nr = next(x for x in r.nodes if x.key == node.key)
    compute_s = node.flops / spec.peak_for(p.peak_key)
    memory_s = (node.bytes_read + node.bytes_written) / spec.memory_bandwidth_bytes_per_s
    assert nr.time_s == pytest.approx(max(compute_s, memory_s))
    assert nr.bound == ("compute" if compute_s >= memory_s else "memory")
    plain = roofline(a, spec)
    assert r.latency_s < plain.latency_s


def test_unknown_precision_is_refused():
    from onnxperf.base.errors import OptionError

    with pytest.raises(OptionError, match="choose one of"):
        get("fp6")
    assert list(PRECISIONS) == ["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "w8a16", "w4a16", "fp4"]


def _run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_every_output_states_the_precision(capsys, tmp_path):
    model = str(ROOT / "models" / "resnet50_torch.onnx")
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--precision", "fp16"], capsys)
    assert rc == 0 and "Precision  fp16 (what-if: floating-point tensors as float16" in out
    assert "48.7 MiB (float16 48.7 MiB)" in out
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--precision", "fp16", "--format", "json"], capsys)
    d = json.loads(out)
    assert d["precision"] == {"name": "fp16", "tensor_dtype": "float16", "peak": "fp16",
                              "what_if": PRECISIONS["fp16"].text, "weight_dtype": "float16", "bits_per_weight": 16.0,
                              "bits_per_activation": 16.0}
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--precision", "int8", "--format", "md"], capsys)
    assert "| Precision | int8 (what-if:" in out
    rc, out, _ = _run(["sweep", model, "--dim", "batch=1,2", "--precision", "bf16", "--no-formulas"], capsys)
    assert rc == 0 and "precision: bf16 (what-if)" in out
    rc, out, _ = _run(["check", model, "--dim", "batch=1", "--precision", "fp8", "--format", "json"], capsys)
    v = json.loads(out)["models"][0]
    assert v["figures"]["precision"] == "fp8" and v["figures"]["model_size_bytes"] * 4 == 102121888
    page = tmp_path / "r.html"
    rc, _, _ = _run(["report", model, "--dim", "batch=1", "--precision", "tf32", "--hw", "a100-80gb", "-o",
                     str(page), "--no-progress"], capsys)
    assert rc == 0 and "precision: tf32 (what-if)" in page.read_text()
    rc, _, err = _run(["summary", model, "--precision", "fp6"], capsys)
    assert rc == 2


def test_budget_precision_key(tmp_path, capsys):
    model = str(ROOT / "models" / "resnet50_torch.onnx")
    b = tmp_path / "b.toml"
    b.write_text('precision = "fp16"\ndims = { batch = 1 }\nmax_model_size = "50MiB"\n')
    rc, out, _ = _run(["check", model, "--budget", str(b), "--format", "json"], capsys)
    assert rc == 0, out  # 97.4 MiB as stored, 48.7 MiB in fp16
    b.write_text('precision = "fp6"\n')
    rc, _, err = _run(["check", model, "--budget", str(b)], capsys)
    assert rc == 2 and "expected one of" in err


def test_hw_list_shows_every_precision(capsys):
    rc, out, _ = _run(["hw", "list"], capsys)
    head = out.splitlines()[0]
    for col in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
        assert col in head


def test_llm_figures_follow_the_precision():
    """A decode step in an fp16 what-if: the KV cache at 2 bytes an element (2·4·2·32·2 = 1024 B
    per token), weights halved, the same MACs."""
    from onnxperf.insights.llm import recognize
    from onnxperf.insights.llm.figures import figures
    from onnxperf.graph.loader import load

    L = load(CORPUS / "qwen2_decode_dynamo18.onnx")
    st = recognize(L)
    base = figures(L, st, batch=2, context=256, prompt=4, with_formulas=False)
    half = figures(L, st, batch=2, context=256, prompt=4, with_formulas=False, precision=get("fp16"))
    assert base.kv_bytes_per_token == 2048 and half.kv_bytes_per_token == 1024
    assert half.kv_cache_bytes == 1024 * 2 * 256
    assert half.weight_bytes * 2 == base.weight_bytes
    assert half.decode.macs == base.decode.macs


def test_plain_roofline_figures_are_labelled_estimates_not_bounds(capsys, tmp_path):
    """A preset without efficiencies predicts every node at its roof with every tensor through main
    memory: an estimate that runtimes beat when they fuse and keep activations in cache (published CPU
    runs took 0.27-5.5x of it, benchmarks/results/cpu_realism.md), so no output calls it a lower bound;
    the arithmetic alone at the peaks is given as the bound. A calibrated spec's is not plain."""
    model = str(ROOT / "models" / "resnet50_torch.onnx")
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--hw", "xeon-silver-4210x2"], capsys)
    assert "an estimate, not a bound" in out and "the latency is a lower bound" not in out
    assert "the arithmetic alone at peak takes" in out
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--hw", "xeon-silver-4210x2", "--format", "json"], capsys)
    r = json.loads(out)["roofline"]
    assert r["latency_is_lower_bound"] is False and r["plain_roofline"] is True
    assert 0 < r["compute_floor_s"] < r["latency_s"]
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--hw", "xeon-silver-4210x2", "--format", "md"], capsys)
    assert "(plain roofline: an estimate, not a bound)" in out
    cal = str(ROOT / "benchmarks" / "results" / "calibrated-spec.toml")
    rc, out, _ = _run(["summary", model, "--dim", "batch=1", "--hw", cal, "--format", "json"], capsys)
    assert json.loads(out)["roofline"]["plain_roofline"] is False
    page = tmp_path / "r.html"
    assert _run(["report", model, "--dim", "batch=1", "--hw", "xeon-silver-4210x2", "-o", str(page), "--no-progress"], capsys)[0] == 0
    assert "plain roofline: an estimate, not a bound" in page.read_text()


def test_sweep_and_check_label_plain_roofline_latency(capsys, tmp_path):
    model = str(ROOT / "models" / "resnet50_torch.onnx")
    rc, out, _ = _run(["sweep", model, "--dim", "batch=1,2", "--hw", "xeon-silver-4210x2", "--no-formulas"], capsys)
    assert rc == 0 and "an estimate, not a bound" in out
    rc, out, _ = _run(["sweep", model, "--dim", "batch=1,2", "--hw", "xeon-silver-4210x2", "--no-formulas", "--format", "json"], capsys)
    assert json.loads(out)["plain_roofline"] is True and json.loads(out)["latency_is_lower_bound"] is False
    b = tmp_path / "b.toml"
    b.write_text('hw = "xeon-silver-4210x2"\ndims = { batch = 1 }\nmax_latency = "1s"\n')
    rc, out, _ = _run(["check", model, "--budget", str(b), "--format", "json"], capsys)
    msg = {r["key"]: r["message"] for r in json.loads(out)["models"][0]["budgets"]}["max_latency"]
    assert "(plain roofline: an estimate, not a bound)" in msg


def test_memory_budget_at_a_precision():
    """--memory with --precision: the largest batch whose fp16 weights + fp16 activation peak fit
    is the one whose float32 figures fit twice the budget (ResNet-50 holds only float tensors but
    for its shape constants), and summary states the precision."""
    from onnxperf.predict.memory import largest_fitting

    model = ROOT / "models" / "resnet50_torch.onnx"
    budget = 512 * 2 ** 20
    half = largest_fitting(Request(model, memory_budget=budget, precision="fp16"))
    full = largest_fitting(Request(model, memory_budget=2 * budget))
    assert half.value is not None and abs(half.value - full.value) <= 1
    w = what_if(analyze(model, dims={"batch": half.value}), "fp16")
    assert liveness(w).total_bytes == half.total_bytes <= budget


def _matmul_model(path, m, k, n):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.zeros((k, n), np.float32), "W")
    g = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"])], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("device, name, key", [("h100-sxm", "fp8", "matmul.fp8.compute"),
                                                ("h100-sxm", "fp4", "matmul.fp8.compute"),  # fp4 runs at fp8's peak
                                                ("h100-sxm", "fp16", "matmul.compute"),
                                                ("b200", "fp4", "matmul.compute"),  # no matmul.fp4 key
                                                ("b200", "fp8", "matmul.fp8.compute")])
def test_a_low_precision_gemm_at_its_own_share(tmp_path, device, name, key):
    """A GEMM whose arithmetic runs at the fp8 peak (an fp8 what-if, or fp4 on a device without an fp4
    peak) attains ``matmul.fp8.compute`` of it where the spec has the key (the TensorRT-LLM fp8 rows:
    0.575 on Hopper where fp16 BERT attains 0.9), else ``matmul.compute``:
    c = 2·M·K·N / (e·π_peak)."""
    import dataclasses

    from onnxperf.predict.roofline import families, node_roofline

    m, k, n = 512, 4096, 4096
    a = analyze(_matmul_model(tmp_path / "mm.onnx", m, k, n), dims={})
    p = get(name)
    w = what_if(a, p)
    base = load_spec(device)
    eff = {"matmul.compute": 0.9, "matmul.fp8.compute": 0.6, "default.memory": 1.0}
    spec = dataclasses.replace(base, efficiency=eff, efficiency_sources={})
    node = next(x for x in w.main_nodes if x.op_type == "MatMul")
    r = node_roofline(node, spec, p.peak_key)
    assert r.compute_s == pytest.approx(2 * m * k * n / (eff[key] * spec.peak_for(p.peak_key)))
    assert families("matmul", precision="fp8") == ("matmul.fp8", "matmul")
    assert families("matmul", integer=True, precision="fp8") == ("matmul.int8", "matmul")  # integer arithmetic: its own
