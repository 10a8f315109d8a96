"""Decoder LLMs (issue 17): KV-cache recognition and the deployment figures, on the decode-step
exports of models/corpus, with every expected value derived by hand from the model's config
(models/corpus/README.md and tests/fixtures/corpus_nlp.json give the configs)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from onnxperf.cli import main
from onnxperf.hardware import load_spec
from onnxperf.insights.llm import NotRecognized, Overrides
from onnxperf.insights.llm import recognize
from onnxperf.insights.llm.figures import PREFILL_SAMPLES, figures
from onnxperf.graph.loader import load

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "models" / "corpus"


def _config(layers, q_heads, kv_heads, hidden, mlp, vocab, *, gated, fused_qkv_bias=False):
    """What a decoder's config implies: head dim, KV bytes per token (float32), the linear-layer
    MACs per token (q, k, v, o projections, the MLP, the LM head) and the attention MACs per token
    of context (QK^T and AV)."""
    d = hidden // q_heads
    proj = hidden * (q_heads * d) + 2 * hidden * (kv_heads * d) + (q_heads * d) * hidden
    ffn = (3 if gated else 2) * hidden * mlp
    return {
        "layers": layers, "kv_heads": kv_heads, "head_dim": d,
        "kv_bytes_per_token": 2 * layers * kv_heads * d * 4,
        "linear_macs": layers * (proj + ffn) + hidden * vocab,
        "attention_macs_per_context": 2 * layers * q_heads * d,
    }


# the configs of the corpus exports (models/corpus/make_nlp.py)
GPT2 = _config(4, 4, 4, 256, 1024, 8000, gated=False)  # n_embd 256, n_layer 4, n_head 4, MLP 4·256, vocab 8000
QWEN2 = _config(4, 8, 2, 256, 704, 1000, gated=True)  # hidden 256, 8 query / 2 KV heads, MLP 704, vocab 1000
LLAMA = _config(4, 8, 2, 256, 688, 1000, gated=True)  # hidden 256, 8 query / 2 KV heads, MLP 688, vocab 1000

DECODERS = {
    "gpt2_decode_legacy.onnx": (GPT2, {"batch": "batch", "past": "past", "new": 1, "total": "total_sequence"}),
    "gpt2_decode_dynamo18.onnx": (GPT2, {"batch": "batch", "past": "past", "new": 1, "total": None}),
    "llama_decode_legacy.onnx": (LLAMA, {"batch": "batch", "past": "past", "new": 1, "total": "total_sequence"}),
    "qwen2_decode_dynamo18.onnx": (QWEN2, {"batch": "batch", "past": "past", "new": 1, "total": None}),
    "qwen2_decode_dynamo18_fp16.onnx": (QWEN2, {"batch": "batch", "past": "past", "new": 1, "total": None}),
    "llama_decode_dynamo23.onnx": (LLAMA, {"batch": "batch", "past": "past", "new": 1, "total": None}),
    "qwen2_chunk_dynamo18.onnx": (QWEN2, {"batch": "batch", "past": "past", "new": "sequence",
                                          "total": "total_sequence"}),
}


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = load(CORPUS / name)
        return cache[name]
    return get


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_recognizes_the_cache_and_its_dims(loaded, name):
    cfg, roles = DECODERS[name]
    st = recognize(loaded(name))
    assert (st.layers, st.kv_heads, st.head_dim) == (cfg["layers"], cfg["kv_heads"], cfg["head_dim"])
    assert {"batch": st.batch, "past": st.past, "new": st.new, "total": st.total} == roles
    assert st.kv_bytes_per_token == cfg["kv_bytes_per_token"]
    assert st.kv_dtype == "float32"  # the fp16 export keeps float32 cache inputs (keep_io_types)
    assert st.token_input == "input_ids"
    assert len(st.caches) == 2 * cfg["layers"]
    for c in st.caches:
        assert c.layout == ("batch", "kv_heads", "past", "head_dim")
        assert c.kind in ("key", "value") and c.name.endswith(c.kind)
        assert c.present == c.name.replace("past_key_values", "present")
        assert "Concat axis 2" in c.how
    assert [c.layer for c in st.caches] == [i // 2 for i in range(2 * cfg["layers"])]


@pytest.mark.parametrize("path", sorted(p.name for p in (ROOT / "models").glob("*.onnx")) + [
    "corpus/bert_torch_legacy.onnx", "corpus/gpt2_torch_legacy.onnx", "corpus/t5_torch_legacy.onnx",
    "corpus/whisper_dynamo18.onnx", "corpus/vit_b_16_torch.onnx", "corpus/lstm_classifier_legacy.onnx"])
def test_other_models_are_not_decoder_steps(path):
    """Encoders, CNNs, a GPT-2 without cache, encoder-decoders without cache, an LSTM: no section."""
    with pytest.raises(NotRecognized):
        recognize(load(ROOT / "models" / path))


@pytest.mark.parametrize("name", ["gpt2_decode_legacy.onnx", "gpt2_decode_dynamo18.onnx", "qwen2_decode_dynamo18.onnx",
                                  "llama_decode_dynamo23.onnx", "llama_decode_legacy.onnx", "qwen2_chunk_dynamo18.onnx"])
def test_decode_formulas_from_the_config(loaded, name):
    """decode MACs = batch·(linear MACs per token + attention MACs per context token · context),
    exactly; KV bytes = kv_bytes_per_token · batch · context."""
    cfg, _ = DECODERS[name]
    L = loaded(name)
    fg = figures(L, recognize(L), batch=3, context=100, prompt=8)
    macs = fg.formula("decode.macs")
    assert dict(macs.terms) == {(1, 0): cfg["linear_macs"], (1, 1): cfg["attention_macs_per_context"]}
    assert fg.decode.macs == 3 * (cfg["linear_macs"] + 100 * cfg["attention_macs_per_context"])
    assert fg.kv_cache_bytes == cfg["kv_bytes_per_token"] * 3 * 100
    # the weights are read once per step whatever the batch; the KV traffic grows with batch·context
    w = fg.formula("decode.weight_read_bytes")
    assert w is not None and all(e[1] == 0 for e, _ in w.terms)
    kv = fg.formula("decode.kv_bytes")
    assert kv is not None and kv.degree == 2 and dict(kv.terms).get((1, 1), 0) >= 2 * cfg["kv_bytes_per_token"]


def test_decode_matches_the_flop_counter_truth(loaded):
    """At batch 1, context 128 (past 127), the corpus truth (torch.utils.flop_counter)."""
    truth = {e["file"].split("/")[-1]: e["truth_macs"] for e in json.loads(
        (ROOT / "tests" / "fixtures" / "corpus_nlp.json").read_text())["models"]}
    for name in ("gpt2_decode_legacy.onnx", "gpt2_decode_dynamo18.onnx", "qwen2_decode_dynamo18.onnx",
                 "llama_decode_dynamo23.onnx", "llama_decode_legacy.onnx"):
        L = loaded(name)
        fg = figures(L, recognize(L), batch=1, context=128, prompt=4, with_formulas=False)
        assert fg.decode.macs == truth[name], name


@pytest.mark.slow
def test_prefill_token_by_token_is_the_exact_sum_of_steps(loaded):
    """A decode-only export prefills P tokens in P steps at contexts 1..P:
    MACs = batch·(P·linear + attention·P(P+1)/2)."""
    L = loaded("gpt2_decode_legacy.onnx")
    for prompt in (5, 300):
        fg = figures(L, recognize(L), batch=2, context=512, prompt=prompt)
        assert fg.prefill_method == "token by token"
        assert fg.prefill_macs == 2 * (prompt * GPT2["linear_macs"]
                                       + GPT2["attention_macs_per_context"] * prompt * (prompt + 1) // 2)


def test_prefill_one_pass_formula(loaded):
    """A graph that takes many new tokens prefills in one pass (past 0): attention over the whole
    prompt, MACs = batch·(P·linear + attention·P²)."""
    L = loaded("qwen2_chunk_dynamo18.onnx")
    fg = figures(L, recognize(L), batch=2, context=256, prompt=48)
    assert fg.prefill_method == "one pass"
    p = fg.formula("prefill.macs")
    assert dict(p.terms) == {(1, 1): QWEN2["linear_macs"], (1, 2): QWEN2["attention_macs_per_context"]}
    assert fg.prefill_macs == 2 * (48 * QWEN2["linear_macs"] + 48 * 48 * QWEN2["attention_macs_per_context"])


def test_a_peak_that_changes_branch_gets_no_formula(loaded):
    """The prefill's activation peak is linear in the prompt at the small fit points, quadratic
    (the attention scores) beyond: the fit is refused, not published."""
    L = loaded("qwen2_chunk_dynamo18.onnx")
    fg = figures(L, recognize(L), batch=1, context=256, prompt=256)
    names = {n: (p, why) for n, p, why in fg.formulas}
    p, why = names["prefill.activation_peak_bytes"]
    assert p is None and "piecewise" in why


def test_decode_speed_and_what_dominates(loaded):
    """On a GPU preset, this small decoder's step at batch 1 is ~300 kernels each moving too little to
    outlast its launch: dispatch-bound; at a long context and a large batch the KV cache dominates the
    bytes and the step turns memory-bound. At a short context the weights dominate the bytes."""
    L = loaded("qwen2_decode_dynamo18.onnx")
    st = recognize(L)
    spec = load_spec("a100-80gb")
    short = figures(L, st, batch=1, context=64, prompt=8, spec=spec, with_formulas=False)
    assert short.decode.dominant == "weights"
    assert short.decode.bound == "dispatch" and short.decode.bound_share > 0.999
    assert not short.decode.latency_is_lower_bound  # the preset's kernel model, not a plain roofline
    assert short.decode_tokens_per_s == pytest.approx(1 / short.decode.latency_s)
    long = figures(L, st, batch=16, context=8192, prompt=8, spec=spec, with_formulas=False)
    assert long.decode.dominant == "kv_cache"
    assert long.decode.kv_bytes > long.decode.weight_read_bytes
    # bound by moving bytes: through memory, or by kernels with too few blocks to reach the bandwidth (the
    # attention MatMuls over the cache at one query row: "fill"), no longer by a copy of K for its transpose
    # (the GEMM reads K transposed: onnxperf.predict.gpu_kernels)
    assert long.decode.bound in ("memory", "fill")
    if long.decode.bound == "memory":
        assert long.decode.bound_share == pytest.approx(long.decode.memory_bound_share)
    assert long.decode_tokens_per_s == pytest.approx(16 / long.decode.latency_s)
    # the roofline time is at least the bytes at the bandwidth
    assert long.decode.latency_s >= long.decode.bytes / spec.memory_bandwidth_bytes_per_s * (1 - 1e-9)


@pytest.mark.slow
def test_token_by_token_prefill_time_is_the_sum_of_step_times(loaded):
    """Few prompt tokens: every step is evaluated and summed exactly; many: interpolated between
    evaluated steps, never below the exact sum (the step time is convex in the context)."""
    L = loaded("qwen2_decode_dynamo18.onnx")
    st = recognize(L)
    spec = load_spec("h100-sxm")
    few = figures(L, st, batch=1, context=64, prompt=PREFILL_SAMPLES, spec=spec, with_formulas=False)
    exact = sum(figures(L, st, batch=1, context=c, prompt=1, spec=spec, with_formulas=False).decode.latency_s
                for c in range(1, PREFILL_SAMPLES + 1))
    assert few.prefill_latency_s == pytest.approx(exact, rel=1e-12)
    many_tokens = PREFILL_SAMPLES + 9  # above the samples: interpolated
    many = figures(L, st, batch=1, context=64, prompt=many_tokens, spec=spec, with_formulas=False)
    exact_many = sum(figures(L, st, batch=1, context=c, prompt=1, spec=spec, with_formulas=False).decode.latency_s
                     for c in range(1, many_tokens + 1))
    assert exact_many <= many.prefill_latency_s <= exact_many * 1.01


@pytest.mark.slow
@pytest.mark.parametrize("dim", ["context", "batch"])
def test_largest_context_and_batch_that_fit(loaded, dim):
    """The answer fits the budget and one more does not (each checked by its own analysis)."""
    L = loaded("qwen2_decode_dynamo18.onnx")  # RoPE: no position table caps the context
    st = recognize(L)
    budget = 64 << 20
    fg = figures(L, st, batch=2, context=512, prompt=8, budget_bytes=budget)
    fit = fg.context_fit if dim == "context" else fg.batch_fit
    assert fit.value is not None and fit.total_bytes <= budget

    def total(v):
        b, c = (2, v) if dim == "context" else (v, 512)
        return figures(L, st, batch=b, context=c, prompt=1, with_formulas=False).decode.total_memory_bytes
    assert total(fit.value) == fit.total_bytes
    assert total(fit.value + 1) > budget
    # weights + the step's peak, and the peak holds at least the past and the present cache
    one = figures(L, st, batch=2, context=fit.value if dim == "context" else 512, prompt=1, with_formulas=False)
    assert one.decode.total_memory_bytes == one.weight_bytes + one.decode.activation_peak_bytes


# ---------------------------------------------------------------- synthetic graphs: evidence and overrides

def _toy_decoder(path: Path, cache_names=("past.0.key", "past.0.value"), past_dim="past", extra_sym=None,
                 fused=False) -> Path:
    """input_ids [b, 1] -> embedding [b, 1, 8] -> per cache a K or V of [b, 2, 1, 4] concatenated
    with the past [b, 2, past, 4] on axis 2 (or, ``fused``, read by com.microsoft
    GroupQueryAttention at its past slots)."""
    nodes = [helper.make_node("Gather", ["emb", "input_ids"], ["h"]),
             helper.make_node("Reshape", ["h", "kv_shape"], ["kv_new"])]
    inits = [helper.make_tensor("emb", TensorProto.FLOAT, [16, 8], [0.0] * 128),
             helper.make_tensor("kv_shape", TensorProto.INT64, [4], [0, 2, 1, 4])]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", 1])]
    outputs = []
    shape = ["b", 2, past_dim, 4] if extra_sym is None else ["b", extra_sym, past_dim, 4]
    for k, name in enumerate(cache_names):
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        out = f"out{k}"
        nodes.append(helper.make_node("Concat", [name, "kv_new"], [out], axis=2))
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "toy", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)
    return path


def test_structural_evidence_without_cache_names(tmp_path):
    p = _toy_decoder(tmp_path / "t.onnx", cache_names=("a0", "a1"), past_dim="n")
    st = recognize(load(p))
    assert st.past == "n" and st.batch == "b" and st.new == 1
    assert [c.how for c in st.caches] == ["Concat axis 2"] * 2
    assert st.kv_bytes_per_token == 2 * 2 * 4 * 4
    assert st.caches[0].present == "out0"


def test_ambiguous_past_is_named_by_the_user(tmp_path):
    """Names only (no structural read) and two symbols: the user names the past dim."""
    p = tmp_path / "amb.onnx"
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", 1]),
              helper.make_tensor_value_info("cache_k", TensorProto.FLOAT, ["b", "h", "p", 4]),
              helper.make_tensor_value_info("cache_v", TensorProto.FLOAT, ["b", "h", "p", 4])]
    nodes = [helper.make_node("ReduceSum", ["cache_k"], ["s0"], keepdims=0),
             helper.make_node("ReduceSum", ["cache_v"], ["s1"], keepdims=0)]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("s0", "s1")]
    onnx.save(helper.make_model(helper.make_graph(nodes, "amb", inputs, outs),
                                opset_imports=[helper.make_opsetid("", 13)]), p)
    with pytest.raises(NotRecognized, match="--kv-dim past"):
        recognize(load(p))
    st = recognize(load(p), Overrides.parse(["past=p"], None))
    assert st.past == "p" and [c.kind for c in st.caches] == ["key", "value"]
    assert st.kv_bytes_per_token is None  # the heads dim "h" is symbolic: unknown, never a guess
    assert any("names only" in n for n in st.notes)


def test_kv_cache_option_limits_the_inputs(tmp_path):
    p = _toy_decoder(tmp_path / "t.onnx", cache_names=("past.0.key", "past.0.value"))
    st = recognize(load(p), Overrides.parse(None, ["*.key"]))
    assert [c.name for c in st.caches] == ["past.0.key"]


def test_bad_override_is_an_option_error():
    from onnxperf.base.errors import OptionError

    with pytest.raises(OptionError, match="ROLE=DIM"):
        Overrides.parse(["heads=h"], None)


# ---------------------------------------------------------------- the command line

def _run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.slow
def test_summary_json_llm_section(capsys, tmp_path):
    model = str(CORPUS / "qwen2_decode_dynamo18.onnx")
    argv = ["summary", model, "--dim", "batch=2", "--dim", "past=255", "--hw", "h100-sxm", "--llm",
            "--memory", "1GiB", "--format", "json", "-o"]
    assert _run(argv + [str(tmp_path / "a.json")], capsys)[0] == 0
    assert _run(argv + [str(tmp_path / "b.json")], capsys)[0] == 0
    a = (tmp_path / "a.json").read_bytes()
    assert a == (tmp_path / "b.json").read_bytes()  # deterministic
    d = json.loads(a)["llm"]
    assert d["cache"]["bytes_per_token"] == QWEN2["kv_bytes_per_token"]
    f = d["figures"]
    assert (f["batch"], f["context"]) == (2, 256)
    assert f["sources"]["context"] == "bound past + 1 new"
    assert f["memory"]["kv_cache_bytes"] == QWEN2["kv_bytes_per_token"] * 2 * 256
    assert f["decode"]["macs"] == 2 * (QWEN2["linear_macs"] + 256 * QWEN2["attention_macs_per_context"])
    assert f["decode"]["tokens_per_s"] == pytest.approx(2 / f["decode"]["latency_s"])
    assert f["decode"]["dominant_bytes"] in ("weights", "kv_cache", "activations")
    macs = f["formulas"]["decode.macs"]
    assert {t["coefficient"] for t in macs["terms"]} == {str(QWEN2["linear_macs"]),
                                                         str(QWEN2["attention_macs_per_context"])}
    assert f["largest_context"]["value"] > 0 and f["largest_batch"]["value"] > 0


@pytest.mark.slow
def test_summary_text_and_md(capsys):
    model = str(CORPUS / "gpt2_decode_legacy.onnx")
    rc, out, _ = _run(["summary", model, "--context", "1024", "--prompt", "64", "--hw", "a100-80gb"], capsys)
    assert rc == 0
    assert "Decoder LLM (KV cache)" in out
    assert "2 (K, V) × 4 layers × 4 kv_heads × 64 head_dim × 4 B = 8,192 B" in out
    assert "context 1,024 (--context)" in out and "tokens/s" in out and "TTFT" in out
    rc, out, _ = _run(["summary", model, "--llm", "--format", "md"], capsys)
    assert rc == 0 and "| KV cache | 8 inputs, 4 layers, float32, 8 KiB per token |" in out
    assert "| Memory at batch 1, context 2048 |" in out  # the default context, said


def test_recognition_alone_without_llm(capsys):
    """Without --llm the section says what was recognized and how to ask for more: no extra analyses."""
    rc, out, _ = _run(["summary", str(CORPUS / "llama_decode_dynamo23.onnx"), "--dim", "batch=1",
                       "--dim", "past=7"], capsys)
    assert rc == 0 and "KV per token 2 KiB" in out and "add --llm" in out


@pytest.mark.parametrize("argv, message", [
    (["--llm"], "--llm: not a decoder step with a KV cache"),
    (["--kv-dim", "heads=3"], "--kv-dim 'heads=3'"),
])
def test_bad_llm_requests_exit_2(capsys, argv, message):
    rc, out, err = _run(["summary", str(ROOT / "models" / "resnet50_torch.onnx")] + argv, capsys)
    assert rc == 2 and message in err and "Traceback" not in err and out == ""


def test_formula_values_are_exact_rationals(loaded):
    L = loaded("llama_decode_dynamo23.onnx")
    fg = figures(L, recognize(L), batch=1, context=16, prompt=4)
    for _, p, _ in fg.formulas:
        if p is not None:
            assert all(isinstance(c, Fraction) for _, c in p.terms)


# ---------------------------------------------------------------- check: the LLM budget keys

def _budget(tmp_path, text):
    p = tmp_path / "budget.toml"
    p.write_text(text)
    return str(p)


@pytest.mark.slow
def test_check_llm_limits(tmp_path, capsys):
    """KV bytes at (batch 4, context 4096) = 2048·4·4096 = 32 MiB: over 16 MiB, under 64 MiB; the
    context binds the past dim for the whole check (no unbound-dim warning)."""
    model = str(CORPUS / "qwen2_decode_dynamo18.onnx")
    over = _budget(tmp_path, 'hw = "a100-80gb"\ndims = { batch = 4 }\ncontext = 4096\nmax_kv_cache = "16MiB"\n'
                             'min_decode_tokens_per_s = 1\n')
    rc, out, _ = _run(["check", model, "--budget", over, "--format", "json"], capsys)
    assert rc == 1
    v = json.loads(out)["models"][0]
    res = {b["key"]: b for b in v["budgets"]}
    assert res["max_kv_cache"]["status"] == "fail" and res["max_kv_cache"]["actual"] == 32 << 20
    assert res["min_decode_tokens_per_s"]["status"] == "pass"
    assert v["figures"]["kv_cache_bytes"] == 32 << 20 and v["figures"]["context"] == 4096
    assert v["dims"]["past"] == 4095
    assert not any(f["id"] == "OP001" for f in v["findings"])
    ok = _budget(tmp_path, 'dims = { batch = 4 }\ncontext = 4096\nmax_kv_cache = "64MiB"\n')
    rc, out, _ = _run(["check", model, "--budget", ok, "--format", "json"], capsys)
    assert rc == 0, out


@pytest.mark.slow
def test_check_min_context_fit_and_non_decoders(tmp_path, capsys):
    """min_context_fit: the largest context that fits device_memory; a CNN in the same run skips
    the LLM limits; min_context_fit without device_memory is refused."""
    b = _budget(tmp_path, 'context = 256\ndevice_memory = "40MiB"\nmin_context_fit = 100000\n')
    rc, out, _ = _run(["check", str(CORPUS / "qwen2_decode_dynamo18.onnx"), str(ROOT / "models" / "resnet50_torch.onnx"),
                       "--budget", b, "--format", "json", "--jobs", "1"], capsys)
    assert rc == 1
    qwen, resnet = json.loads(out)["models"]
    fit = {r["key"]: r for r in qwen["budgets"]}["min_context_fit"]
    assert fit["status"] == "fail" and 0 < fit["actual"] < 100000
    assert resnet["verdict"] == "pass" and not any(r["key"] == "min_context_fit" for r in resnet["budgets"])
    bad = _budget(tmp_path, "min_context_fit = 8192\n")
    rc, _, err = _run(["check", str(CORPUS / "qwen2_decode_dynamo18.onnx"), "--budget", bad], capsys)
    assert rc == 2 and "needs device_memory" in err


@pytest.mark.slow
def test_learned_position_table_bounds_the_context(loaded):
    """GPT-2 (n_positions 1024) gathers a [1024, 256] position table: no context fits beyond it,
    and a context past it is said; RoPE models (Qwen2) have no such table."""
    L = loaded("gpt2_decode_legacy.onnx")
    st = recognize(L)
    assert st.max_context == 1024
    fg = figures(L, st, batch=1, context=2048, prompt=4, budget_bytes=1 << 30)
    assert fg.context_fit.value == 1024 and "position table" in fg.context_fit.method
    assert any("beyond the model's position table" in n for n in fg.notes)
    assert recognize(loaded("qwen2_decode_dynamo18.onnx")).max_context is None
    assert recognize(loaded("gpt2_decode_dynamo18.onnx")).max_context == 1024
    assert recognize(loaded("llama_decode_legacy.onnx")).max_context is None


# ---------------------------------------------------------------- the report

@pytest.mark.slow
def test_report_llm_section_and_chart_data(tmp_path):
    """The report carries the section and a grid of decode steps for the chart: tokens/s = batch /
    latency at each (batch, context), memory = weights + step peak; contexts stop at GPT-2's
    position table (1024)."""
    from onnxperf.insights.llm.figures import curve_grid
    from onnxperf.insights.llm.section import LLMOptions
    from onnxperf.products.render.report import RENDERERS
    from onnxperf.products.report import build_report
    from onnxperf.analysis.compose import summarize

    sm = summarize(str(CORPUS / "gpt2_decode_legacy.onnx"), dims={"batch": 2}, hw="a100-80gb",
                   llm=LLMOptions(full=True, context=512, prompt=16, curve=True), memory_budget=256 << 20)
    model = build_report(sm)
    f = model["llm"]["figures"]
    batches, contexts = curve_grid(2, 512, 1024)
    assert batches == [1, 2, 8] and contexts[-1] == 1024 and 512 in contexts
    assert [(p["batch"], p["context"]) for p in f["curve"]] == [(b, c) for b in batches for c in contexts]
    for p in f["curve"]:
        assert p["tokens_per_s"] == pytest.approx(p["batch"] / p["latency_s"])
        assert p["kv_cache_bytes"] == GPT2["kv_bytes_per_token"] * p["batch"] * p["context"]
    html = RENDERERS["html"](model)
    assert 'id="llm"' in html and 'id="llm-speed-chart"' in html and 'href="#llm"' in html
    # the deployment answers are cards under the summary's, with the verdict of the plan below them
    import re
    from markupsafe import escape

    from onnxperf.ui.numbers import si

    summary = html[html.index('<section id="summary">'):html.index("</section>", html.index('<section id="summary">'))]
    cards = summary[summary.index('id="llm-cards"'):]
    assert f"{si(f['decode']['tokens_per_s'])} <small>tokens/s</small>" in cards
    assert "Time to first token" in cards and "KV cache per token" in cards
    verdict = re.search(r'<div class="verdict" id="verdict">(.*?)</div>', summary, re.S).group(1)
    assert [str(escape(v)) for v in model["verdict"]] == re.findall(r"<p>(.*?)</p>", verdict) and model["verdict"]


def test_report_escapes_cache_names(tmp_path):
    """Cache names come from the model: the HTML escapes them."""
    from onnxperf.insights.llm.section import LLMOptions
    from onnxperf.products.render.report import RENDERERS
    from onnxperf.products.report import build_report
    from onnxperf.analysis.compose import summarize

    evil = "<script>alert(1)</script>.key"
    p = _toy_decoder(tmp_path / "x.onnx", cache_names=(evil, "past.0.value"))
    sm = summarize(str(p), dims={"b": 1}, llm=LLMOptions(full=True, context=8, prompt=2, curve=True))
    html = RENDERERS["html"](build_report(sm))
    assert "<script>alert(1)" not in html
    assert sm.llm is not None and evil in [c.name for c in sm.llm.step.caches]


# ---------------------------------------------------------------- validate: decode latency by context

@pytest.mark.slow
def test_validate_measures_the_decode_step_at_each_context(capsys):
    """onnxruntime runs the decode step (random weights) at each context beside the predictions;
    the predictions are those of the step analyzed at that context: the plain roofline, and the
    preset's GPU kernel model beside it."""
    from onnxperf.cost.analysis import cost_analysis as analyze
    from onnxperf.hardware.spec import uncalibrated
    from onnxperf.predict.roofline import roofline

    model = CORPUS / "qwen2_decode_dynamo18.onnx"
    rc, out, err = _run(["validate", str(model), "--hw", "h100-sxm", "--random-weights", "--dim", "batch=1",
                         "--dim", "past=15", "--decode-context", "16,128", "--runs", "2", "--warmup", "0",
                         "--format", "json"], capsys)
    assert rc == 0, err
    d = json.loads(out)["decode"]
    assert [p["context"] for p in d] == [16, 128]
    spec = load_spec("h100-sxm")
    for p in d:
        assert p["measured"]["mean_s"] > 0 and p["measured_tokens_per_s"] == pytest.approx(1 / p["measured"]["mean_s"])
        a = analyze(model, dims={"batch": 1, "past": p["context"] - 1})
        assert p["predicted_s"] == pytest.approx(roofline(a, uncalibrated(spec)).latency_s)
        assert p["predicted_calibrated_s"] == pytest.approx(roofline(a, spec).latency_s)
    rc, _, err = _run(["validate", str(ROOT / "models" / "resnet50_torch.onnx"), "--hw", "t4", "--random-weights",
                       "--dim", "batch=1", "--decode-context", "16", "--runs", "1"], capsys)
    assert rc == 2 and "not a decoder step" in err


def _gqa_decoder(path: Path, fused_op: str = "GroupQueryAttention") -> Path:
    """An onnxruntime-fused decode step: input_ids [batch, seq] -> embedding -> q/k/v MatMuls ->
    com.microsoft GroupQueryAttention(query, key, value, past_key, past_value, seqlens_k,
    total_sequence_length) with past [batch, 2, past, 16] -> present [batch, 2, total, 16]; 8 query
    heads of 16 (hidden 128), 2 KV heads; one layer. ``fused_op`` MultiHeadAttention puts the past
    at its slots 6 and 7 instead."""
    hidden, hq, hkv, d = 128, 8, 2, 16
    f = TensorProto.FLOAT
    inits = [helper.make_tensor("emb", f, [100, hidden], [0.0] * 100 * hidden),
             helper.make_tensor("wq", f, [hidden, hq * d], [0.0] * hidden * hq * d),
             helper.make_tensor("wk", f, [hidden, hkv * d], [0.0] * hidden * hkv * d),
             helper.make_tensor("wv", f, [hidden, hkv * d], [0.0] * hidden * hkv * d)]
    nodes = [helper.make_node("Gather", ["emb", "input_ids"], ["h"]),
             helper.make_node("MatMul", ["h", "wq"], ["q"]),
             helper.make_node("MatMul", ["h", "wk"], ["k"]),
             helper.make_node("MatMul", ["h", "wv"], ["v"])]
    if fused_op == "GroupQueryAttention":
        nodes += [helper.make_node("ReduceSum", ["attention_mask"], ["seqlen64"], keepdims=0, axes=None),
                  helper.make_node("Cast", ["seqlen64"], ["seqlens_k"], to=TensorProto.INT32),
                  helper.make_node("Shape", ["attention_mask"], ["mshape"], start=1, end=2),
                  helper.make_node("Cast", ["mshape"], ["total_len"], to=TensorProto.INT32),
                  helper.make_node("Squeeze", ["total_len"], ["total_len_s"]),
                  helper.make_node("GroupQueryAttention",
                                   ["q", "k", "v", "past_key_values.0.key", "past_key_values.0.value", "seqlens_k",
                                    "total_len_s"], ["attn", "present.0.key", "present.0.value"],
                                   domain="com.microsoft", num_heads=hq, kv_num_heads=hkv)]
        kv_heads_in_cache = hkv
    else:  # MultiHeadAttention: K/V heads = query heads
        nodes += [helper.make_node("MultiHeadAttention",
                                   ["q", "k", "v", "", "", "", "past_key_values.0.key", "past_key_values.0.value"],
                                   ["attn", "present.0.key", "present.0.value"], domain="com.microsoft",
                                   num_heads=hq)]
        kv_heads_in_cache = hq
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    cache = ["batch_size", kv_heads_in_cache, "past_sequence_length", d]
    inputs += [helper.make_tensor_value_info(n, f, cache) for n in ("past_key_values.0.key", "past_key_values.0.value")]
    outputs = [helper.make_tensor_value_info("attn", f, None)] + [
        helper.make_tensor_value_info(n, f, ["batch_size", kv_heads_in_cache, "total_sequence_length", d])
        for n in ("present.0.key", "present.0.value")]
    g = helper.make_graph(nodes, "gqa", inputs, outputs, inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]),
              path)
    return path


@pytest.mark.parametrize("op, kv_heads", [("GroupQueryAttention", 2), ("MultiHeadAttention", 8)])
def test_fused_attention_past_slots(tmp_path, op, kv_heads):
    """com.microsoft GroupQueryAttention reads the cache at inputs 3 and 4, MultiHeadAttention at
    6 and 7: the evidence, the layout and the symbolic new-token dim (a graph that prefills in one
    pass, genai-style) come from there; KV bytes per token = 2 · 1 layer · kv_heads · 16 · 4."""
    st = recognize(load(_gqa_decoder(tmp_path / "m.onnx", op)))
    assert st.attention == (f"com.microsoft::{op}",)
    assert [c.how.split(" input")[0] for c in st.caches] == [f"com.microsoft::{op}"] * 2
    assert (st.past, st.batch, st.new, st.total) == ("past_sequence_length", "batch_size", "sequence_length",
                                                      "total_sequence_length")
    assert st.kv_heads == kv_heads and st.head_dim == 16 and st.layers == 1
    assert st.kv_bytes_per_token == 2 * kv_heads * 16 * 4
    assert st.prefill_capable
    assert [c.present for c in st.caches] == ["present.0.key", "present.0.value"]


def test_fused_gqa_figures(tmp_path):
    """The figures of the fused step: decode MACs per token = the three projections + attention
    over the context (QK^T and AV: 2 · 8 heads · 16 · context); one-pass prefill of P tokens."""
    L = load(_gqa_decoder(tmp_path / "m.onnx"))
    st = recognize(L)
    fg = figures(L, st, batch=2, context=64, prompt=16)
    linear = 128 * 128 + 2 * 128 * 32
    assert fg.decode.complete
    assert dict(fg.formula("decode.macs").terms) == {(1, 0): linear, (1, 1): 2 * 8 * 16}
    assert fg.prefill_method == "one pass" and fg.prefill_complete
    assert fg.prefill_macs == 2 * (16 * linear + 2 * 8 * 16 * 16 * 16)


def test_merged_decoder_reads_its_cache_inside_an_if(tmp_path):
    """optimum's merged decoder: a use_cache_branch input picks an If branch; the cache is read
    (concatenated) inside the then-branch: the evidence is found there."""
    f = TensorProto.FLOAT
    kv_new = helper.make_tensor_value_info("kv_new", f, ["b", 2, 1, 4])
    then_nodes = [helper.make_node("Concat", [n, "kv_new"], [f"t{k}"], axis=2)
                  for k, n in enumerate(("past_key_values.0.key", "past_key_values.0.value"))]
    then_g = helper.make_graph(then_nodes, "then", [], [helper.make_tensor_value_info(f"t{k}", f, None) for k in range(2)])
    else_nodes = [helper.make_node("Identity", ["kv_new"], [f"e{k}"]) for k in range(2)]
    else_g = helper.make_graph(else_nodes, "else", [], [helper.make_tensor_value_info(f"e{k}", f, None) for k in range(2)])
    nodes = [helper.make_node("Gather", ["emb", "input_ids"], ["h"]),
             helper.make_node("Reshape", ["h", "kv_shape"], ["kv_new"]),
             helper.make_node("If", ["use_cache_branch"], ["present.0.key", "present.0.value"],
                              then_branch=then_g, else_branch=else_g)]
    inits = [helper.make_tensor("emb", f, [16, 8], [0.0] * 128),
             helper.make_tensor("kv_shape", TensorProto.INT64, [4], [0, 2, 1, 4])]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", 1]),
              helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])]
    inputs += [helper.make_tensor_value_info(n, f, ["batch_size", 2, "past_sequence_length", 4])
               for n in ("past_key_values.0.key", "past_key_values.0.value")]
    outputs = [helper.make_tensor_value_info(n, f, None) for n in ("present.0.key", "present.0.value")]
    p = tmp_path / "merged.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "merged", inputs, outputs, inits),
                                opset_imports=[helper.make_opsetid("", 17)]), p)
    del kv_new
    st = recognize(load(p))
    assert st.past == "past_sequence_length" and st.batch == "batch_size"
    assert [c.how for c in st.caches] == ["Concat axis 2 (in a subgraph)"] * 2
    assert [c.present for c in st.caches] == ["present.0.key", "present.0.value"]
    assert not st.notes  # structural evidence: no "names only" warning


def _params_gpt2(layers=4, d=256, vocab=8000, positions=1024, ffn=1024):
    """GPT-2's parameters from its config: wte, wpe, per layer 2 LayerNorms, c_attn (d·3d + 3d),
    c_proj (d² + d), c_fc (d·ffn + ffn), mlp c_proj (ffn·d + d), the final LayerNorm. The LM head
    is tied to wte in the model, but the legacy export writes it again (a transposed copy for the
    MatMul): + vocab·d."""
    per_layer = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * ffn + ffn) + (ffn * d + d)
    tied = vocab * d + positions * d + layers * per_layer + 2 * d
    return tied, tied + vocab * d


def _params_qwen_llama(layers=4, d=256, hq=8, hkv=2, ffn=704, vocab=1000, qkv_bias=True):
    """Qwen2 / Llama from the config: embeddings, per layer q/k/v/o (Qwen2 has q/k/v biases), the
    gated MLP (3·d·ffn), 2 RMSNorm weights, the final norm, an untied LM head; the export adds the
    rotary inv_freq buffer (head_dim / 2 floats)."""
    hd = d // hq
    per_layer = d * hq * hd + 2 * d * hkv * hd + hq * hd * d + 3 * d * ffn + 2 * d
    if qkv_bias:
        per_layer += hq * hd + 2 * hkv * hd
    return vocab * d + layers * per_layer + d + d * vocab + hd // 2


@pytest.mark.parametrize("name, params, bytes_per", [
    ("gpt2_decode_legacy.onnx", _params_gpt2()[1], 4),
    ("gpt2_decode_dynamo18.onnx", _params_gpt2()[0], 4),  # the dynamo exporter keeps the tied head once
    ("llama_decode_legacy.onnx", _params_qwen_llama(ffn=688, qkv_bias=False), 4),
    ("qwen2_decode_dynamo18.onnx", _params_qwen_llama(), 4),
    ("qwen2_decode_dynamo18_fp16.onnx", _params_qwen_llama(), 2),
    ("llama_decode_dynamo23.onnx", _params_qwen_llama(ffn=688, qkv_bias=False), 4),
])
def test_weight_bytes_from_the_config(loaded, name, params, bytes_per):
    """The LLM section's weights = parameters derived from the config × the element size."""
    L = loaded(name)
    fg = figures(L, recognize(L), batch=1, context=32, prompt=2, with_formulas=False)
    assert fg.weight_bytes == params * bytes_per
    # GPT-2 ties its head: the exported file holds vocab·d more than the config's own count
    if name.startswith("gpt2"):
        assert _params_gpt2()[1] - _params_gpt2()[0] == 8000 * 256


def test_int4_weight_only_decoder(tmp_path):
    """onnxruntime's int4 weight-only quantization (com.microsoft MatMulNBits: uint8-packed 4-bit
    weights [N, K/32, 16] with float scales [N·K/32]) in the fused GQA step: the same decode MACs
    as float projections, weights read as packed bytes + scales (N·K/2 + N·K/32·4 per projection)."""
    hidden, hq, hkv, d, block = 128, 8, 2, 16, 32
    f, u8 = TensorProto.FLOAT, TensorProto.UINT8
    p = _gqa_decoder(tmp_path / "fp.onnx")
    m = onnx.load(p)
    g = m.graph
    keep = [t for t in g.initializer if t.name in ("emb",)]
    del g.initializer[:]
    g.initializer.extend(keep)
    sizes = {"wq": hq * d, "wk": hkv * d, "wv": hkv * d}
    new_nodes = []
    for node in g.node:
        if node.op_type == "MatMul" and node.input[1] in sizes:
            w, n_out = node.input[1], sizes[node.input[1]]
            blocks = hidden // block
            g.initializer.extend([
                helper.make_tensor(f"{w}_q", u8, [n_out, blocks, block // 2], [0] * (n_out * blocks * block // 2)),
                helper.make_tensor(f"{w}_s", f, [n_out * blocks], [1.0] * (n_out * blocks))])
            new_nodes.append(helper.make_node("MatMulNBits", [node.input[0], f"{w}_q", f"{w}_s"], list(node.output),
                                              domain="com.microsoft", K=hidden, N=n_out, bits=4, block_size=block))
        else:
            new_nodes.append(node)
    del g.node[:]
    g.node.extend(new_nodes)
    q = tmp_path / "int4.onnx"
    onnx.save(m, q)
    L = load(q)
    st = recognize(L)
    fg = figures(L, st, batch=1, context=64, prompt=4)
    fp = figures(load(p), recognize(load(p)), batch=1, context=64, prompt=4)
    assert fg.decode.macs == fp.decode.macs
    packed = sum(n * hidden // 2 + n * hidden // block * 4 for n in sizes.values())
    assert fg.weight_bytes == 100 * hidden * 4 + packed
    # the projections read their packed weights and scales (the embedding Gather reads one row)
    assert fg.decode.weight_read_bytes == packed + hidden * 4
    assert fp.decode.weight_read_bytes == sum(n * hidden * 4 for n in sizes.values()) + hidden * 4


# ---------------------------------------------------------------- onnxruntime-genai exports (real ones)

def _genai_weight_bytes(int4: bool, layers=4, d=256, qkv=384, ffn=688, vocab=1000, rot=16, max_pos=4096, block=32):
    """The builder's weights from the config: the embedding, 2 norms a layer and the final one, the
    cos/sin caches [max_pos, rotary/2]; the projections (packed QKV, O, gate, up, down) and the LM head
    as float32, or (int4) as MatMulNBits blocks: N·ceil(K/32)·16 packed bytes + N·ceil(K/32) float
    scales (symmetric: no zero points)."""
    def proj(k, n):
        blocks = -(-k // block)
        return n * blocks * 16 + n * blocks * 4 if int4 else 4 * k * n
    linear = layers * (proj(d, qkv) + proj(d, d) + 2 * proj(d, ffn) + proj(ffn, d)) + proj(d, vocab)
    return linear + 4 * (vocab * d + (2 * layers + 1) * d + 2 * max_pos * rot)


@pytest.mark.parametrize("name, int4", [("llama_genai_gqa_fp32.onnx", False), ("llama_genai_gqa_int4.onnx", True)])
def test_genai_decoders(loaded, name, int4):
    """onnxruntime-genai's GQA decoder (the Llama of the corpus through its builder): the cache at
    GroupQueryAttention's past slots, its symbolic head size (kv_cache_dim) inferred as 384 / 12
    heads = 32, a symbolic new-token dim (one-pass prefill); decode MACs as the torch exports', weights
    as the builder lays them out."""
    L = loaded(name)
    st = recognize(L)
    assert st.attention == ("com.microsoft::GroupQueryAttention",)
    assert (st.batch, st.past, st.new, st.total) == ("batch_size", "past_sequence_length", "sequence_length",
                                                      "total_sequence_length")
    assert st.inferred == (("kv_cache_dim", 32, "the packed Q, K, V width 384 over 12 heads of GroupQueryAttention"),)
    assert (st.layers, st.kv_heads, st.head_dim, st.kv_bytes_per_token) == (4, 2, 32, LLAMA["kv_bytes_per_token"])
    fg = figures(L, st, batch=1, context=128, prompt=16, fixed={"kv_cache_dim": 32})
    assert fg.decode.complete and fg.prefill_method == "one pass"
    assert dict(fg.formula("decode.macs").terms) == {(1, 0): LLAMA["linear_macs"],
                                                     (1, 1): LLAMA["attention_macs_per_context"]}
    assert fg.weight_bytes == _genai_weight_bytes(int4)


def test_genai_summary_binds_the_inferred_head_size(capsys):
    """summary --llm binds kv_cache_dim (and the past) itself: every node is costed."""
    rc, out, err = _run(["summary", str(CORPUS / "llama_genai_gqa_int4.onnx"), "--llm", "--context", "512",
                         "--format", "json"], capsys)
    assert rc == 0, err
    d = json.loads(out)
    assert d["coverage"]["unknown_shape"] == 0 and d["bindings"]["dims"]["kv_cache_dim"] == 32
    assert d["llm"]["figures"]["decode"]["macs"] == LLAMA["linear_macs"] + 512 * LLAMA["attention_macs_per_context"]


def test_onnx_attention_23_past_slots(tmp_path):
    """ai.onnx Attention (opset 23) reading its cache at inputs 4 and 5 (past_key, past_value
    [batch, kv_heads, past, head_dim]), 4-D Q/K/V: recognized by its slots."""
    f = TensorProto.FLOAT
    q = helper.make_tensor_value_info("q", f, ["b", 8, 1, 16])
    k = helper.make_tensor_value_info("k", f, ["b", 2, 1, 16])
    v = helper.make_tensor_value_info("v", f, ["b", 2, 1, 16])
    pk = helper.make_tensor_value_info("cache_a", f, ["b", 2, "p", 16])
    pv = helper.make_tensor_value_info("cache_b", f, ["b", 2, "p", 16])
    node = helper.make_node("Attention", ["q", "k", "v", "", "cache_a", "cache_b"], ["y", "pk_out", "pv_out"])
    outs = [helper.make_tensor_value_info(n, f, None) for n in ("y", "pk_out", "pv_out")]
    p = tmp_path / "attn23.onnx"
    onnx.save(helper.make_model(helper.make_graph([node], "a", [q, k, v, pk, pv], outs),
                                opset_imports=[helper.make_opsetid("", 23)]), p)
    st = recognize(load(p))
    assert st.attention == ("Attention",)
    assert [c.how for c in st.caches] == ["Attention input 4", "Attention input 5"]
    assert [c.kind for c in st.caches] == ["key", "value"]
    assert st.past == "p" and st.kv_bytes_per_token == 2 * 2 * 16 * 4
    assert [c.present for c in st.caches] == ["pk_out", "pv_out"]


def test_token_by_token_prefill_formula(loaded):
    """The prefill of a decode-only export as a formula of batch and prompt: the sum of the P steps,
    batch·(P·linear + attention·P(P+1)/2), fitted exactly."""
    L = loaded("qwen2_decode_dynamo18.onnx")
    fg = figures(L, recognize(L), batch=1, context=64, prompt=8)
    p = fg.formula("prefill.macs")
    a = QWEN2["attention_macs_per_context"]
    assert dict(p.terms) == {(1, 1): QWEN2["linear_macs"] + Fraction(a, 2), (1, 2): Fraction(a, 2)}
    for b, prompt in ((1, 8), (3, 100)):
        assert p({"batch": b, "prompt": prompt}) == b * (prompt * QWEN2["linear_macs"] + a * prompt * (prompt + 1) // 2)


@pytest.mark.parametrize("name, cfg, kv_dtype_bytes, attention", [
    ("gpt2_decode_ort_fused.onnx", GPT2, 4, "com.microsoft::Attention"),
    ("llama_genai_mha_fp16.onnx", LLAMA, 2, None),
    ("llama_genai_gqa_int8.onnx", LLAMA, 4, "com.microsoft::GroupQueryAttention"),
    ("llama_genai_gqa_int4_asym.onnx", LLAMA, 4, "com.microsoft::GroupQueryAttention"),
])
@pytest.mark.slow
def test_more_fused_and_quantized_decoders(loaded, name, cfg, kv_dtype_bytes, attention):
    """models/corpus/make_llm.py's exports (tests/fixtures/llm_truth.json holds their config-derived
    figures): GPT-2 fused by onnxruntime into com.microsoft Attention with one stacked past
    [2, batch, heads, past, head_dim] per layer; genai's fp16 MultiHeadAttention build (its head
    size left symbolic, read off the step's shapes), int8 and asymmetric int4 MatMulNBits. Decode MACs
    as the config gives them; KV bytes per token = 2 · layers · kv_heads · head_dim · bytes."""
    L = loaded(name)
    st = recognize(L)
    if attention:
        assert st.attention == (attention,)
    fg = figures(L, st, batch=1, context=128, prompt=4, fixed={d: v for d, v, _ in st.inferred})
    assert fg.decode.complete
    assert fg.decode.macs == cfg["linear_macs"] + 128 * cfg["attention_macs_per_context"]
    assert fg.kv_bytes_per_token == cfg["kv_bytes_per_token"] // 4 * kv_dtype_bytes


def test_every_decode_step_against_the_config_fixture():
    """tests/fixtures/llm_truth.json (models/corpus/make_llm.py: figures derived from each HF config,
    not from onnxperf): onnxperf's decode MACs at the fixture's bind equal the config's on all 13
    decode steps; its weight bytes are the fixture's parameter bytes as stored plus the float buffers
    the fixture does not call parameters (rotary inv_freq, genai's cos/sin caches), which onnxperf's
    convention counts (docs/conventions.md: float tensors of more than one element)."""
    from onnxperf.cost.analysis import cost_analysis as analyze

    fixture = json.loads((ROOT / "tests" / "fixtures" / "llm_truth.json").read_text())["models"]
    assert len(fixture) == 13
    for e in fixture:
        a = analyze(ROOT / e["file"], dims=e["bind"])
        total = e["decode_macs"]["total"]
        assert a.totals.macs == (total["value"] if isinstance(total, dict) else total), e["file"]
        p = e["parameters"]
        buffers = p["initializers"].get("non_parameter_float", {})
        extra = sum(v["value"] for v in buffers.values()) if isinstance(buffers, dict) else 0
        if e["file"].endswith("llama_decode_legacy.onnx"):
            extra = 16  # its inv_freq buffer, which the fixture does not list for this file
        width = e["dtypes"]["weight_bits"] if e["dtypes"]["weights"] in ("float16",) else 32
        assert a.totals.param_bytes - p["param_bytes_stored"]["value"] == extra * width // 8, e["file"]


def test_a_partial_step_says_so(tmp_path, capsys):
    """A node without a cost rule in the step: its MACs and bytes are lower bounds, said as such,
    and no decode speed is predicted from them."""
    p = _toy_decoder(tmp_path / "t.onnx")
    m = onnx.load(p)
    m.graph.node.append(helper.make_node("Mystery", ["h"], ["mystery_out"], domain="example.custom"))
    m.graph.output.append(helper.make_tensor_value_info("mystery_out", TensorProto.FLOAT, None))
    m.opset_import.append(helper.make_opsetid("example.custom", 1))
    onnx.save(m, p)
    rc, out, _ = _run(["summary", str(p), "--dim", "b=1", "--llm", "--context", "16", "--hw", "a100-80gb"], capsys)
    assert rc == 0
    section = out.split("Decoder LLM")[1]
    decode_line = next(ln for ln in section.splitlines() if ln.startswith("  Decode step"))
    assert "unknown" in decode_line and "(partial)" in decode_line  # no MAC counted is not 0 MACs
    assert "Prefill      unknown" in section
    assert "tokens/s at batch" not in section  # no speed from a partial step
