"""The decode-step graph maker (benchmarks/make_llm_decode.py) and the LLM realism benchmark's arithmetic
(benchmarks/llm_realism.py), at a tiny config: the graph is recognized as a decoder step, its decode MACs per
token are its matrix products' parameters (every parameter but the embedding, the norms and inv_freq), and the
static-batching throughput formula, the Σ over contexts and the fast kernel-model sum are checked on
hand-built cases. No published row and no real-size graph is needed."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from onnxperf.cli import main as cli
from onnxperf.cost.request import Request
from onnxperf.graph.loader import load
from onnxperf.hardware.files import load_preset
from onnxperf.insights.llm.figures import figures
from onnxperf.insights.llm.recognize import recognize
from onnxperf.predict.precision import get
from onnxperf.predict.roofline import roofline

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str, file: str):
    return benchmark(file, name)


G = _module("onnxperf_bench_make_llm_decode", "make_llm_decode.py")
R = _module("onnxperf_bench_llm_realism", "llm_realism.py")
TINY = G.Config("tiny", layers=2, hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = G.write(TINY, tmp_path_factory.mktemp("llm") / "tiny.onnx")
    loaded = load(str(path))
    return path, loaded, recognize(loaded)


def test_recognized_as_a_decoder_step(tiny, capsys):
    path, _, step = tiny
    d = TINY.head_dim
    assert (step.layers, step.kv_heads, step.head_dim) == (2, 2, d)
    assert step.prefill_capable and step.past == "past_sequence" and step.total == "total_sequence"
    assert step.kv_bytes_per_token == TINY.kv_bytes_per_token == 2 * 2 * 2 * d * 2
    assert {c.present for c in step.caches} == {f"present.{i}.{k}" for i in range(2) for k in ("key", "value")}
    assert cli(["summary", str(path), "--llm", "--context", "32", "--prompt", "8"]) == 0
    assert "Decoder LLM" in capsys.readouterr().out


@pytest.mark.parametrize("batch,context", [(1, 1), (1, 32), (3, 17)])
def test_decode_macs_per_token_are_the_parameters(tiny, batch, context):
    _, loaded, step = tiny
    c = TINY
    f = figures(Request(loaded, precision="fp16"), step, batch=batch, context=context, prompt=1, with_formulas=False)
    attention = 2 * c.layers * c.heads * c.head_dim * context  # Q·Kᵀ and P·V per token
    assert f.decode.macs == G.decode_macs(c, batch, context) == batch * (c.matmul_params + attention)
    # every parameter but the embedding table (a Gather), the norms' weights and inv_freq is a matmul weight
    assert c.params - c.matmul_params == c.vocab * c.hidden + (2 * c.layers + 1) * c.hidden + c.head_dim // 2
    assert f.weight_bytes == 2 * c.params  # every float tensor in fp16 (the what-if retypes inv_freq too)


def test_prefill_is_one_pass_of_the_same_graph(tiny):
    _, loaded, step = tiny
    c, p = TINY, 8
    f = figures(Request(loaded, precision="fp16"), step, batch=2, context=p, prompt=p, with_formulas=False)
    assert f.prefill_method == "one pass"
    # P tokens through the matmuls, and causal-free attention over P keys for each of the P queries
    assert f.prefill_macs == 2 * (p * c.matmul_params + 2 * c.layers * c.heads * c.head_dim * p * p)


def test_sum_weights_exact_for_a_linear_step():
    for lo, hi in ((5, 5), (5, 7), (129, 255), (2049, 4095)):
        w = R.sum_weights(lo, hi)
        assert sum(x for _, x in w) == pytest.approx(hi - lo + 1)
        assert sum(x * (3.0 + 0.25 * c) for c, x in w) == pytest.approx(sum(3.0 + 0.25 * c for c in range(lo, hi + 1)))
        assert [c for c, _ in w] == R.sample_contexts(lo, hi)
    assert len(R.sample_contexts(1, 600)) == 3 and len(R.sample_contexts(1, 601)) == 5


class _Linear:
    """A fake engine: the prefill takes ``pre`` s, a decode step at context C takes a + b·C."""

    def __init__(self, pre=0.05, a=0.01, b=1e-6):
        self.pre, self.a, self.b = pre, a, b

    def latency(self, pt, preset, eff=None):
        _, _, _, batch, past, new = pt
        return self.pre if past == 0 and new > 1 else self.a + self.b * (past + new)


def _entry(**kw):
    e = {"model": "llama-2-7b", "device": "a100-80gb", "device_count": 1, "runtime_class": "tensorrt-llm",
         "precision": {"label": "FP16"}, "batch": None, "input_len": None, "output_len": None, "stat": None,
         "request_rate_qps": None, "source": {"url": "u", "quoted": "q"}}
    return {**e, **kw}


def test_static_batching_throughput_formula():
    B, I, O, pub = 4, 100, 50, 1000.0
    case = R.plan(_entry(scenario="static_batch_throughput", metric="output_tokens_per_s", batch=B, input_len=I,
                         output_len=O, value=pub), {})
    eng = _Linear()
    # B·O / (pre(B, I) + Σ_{k=1..O−1} dec(B, I + k)), by hand
    t = eng.pre + sum(eng.a + eng.b * (I + k) for k in range(1, O))
    ratio, _ = R.predict(case, eng)
    assert ratio == pytest.approx(B * O / t / pub, rel=1e-12)
    assert R.predicted_value(case, ratio) == pytest.approx(B * O / t, rel=1e-12)


def test_llama_bench_tg_pp_and_ttft_recipes():
    eng = _Linear()
    tg = R.plan(_entry(runtime_class="llama.cpp", precision={"label": "F16"}, scenario="llama_bench_tg",
                       metric="output_tokens_per_s", batch=1, input_len=0, output_len=128, value=100.0), {})
    t = sum(eng.a + eng.b * c for c in range(1, 129))  # 128 tokens from an empty cache: contexts 1..128
    assert tg.category == "decode, batch 1" and R.predict(tg, eng)[0] == pytest.approx(128 / t / 100.0, rel=1e-12)
    pp = R.plan(_entry(runtime_class="llama.cpp", precision={"label": "F16"}, scenario="llama_bench_pp",
                       metric="prompt_tokens_per_s", batch=1, input_len=512, output_len=0, value=1000.0), {})
    assert R.predict(pp, eng)[0] == pytest.approx(512 / eng.pre / 1000.0)
    ttft = R.plan(_entry(scenario="first_token_latency_batch1", metric="ttft_s", batch=1, input_len=128,
                         output_len=1, value=0.1), {})
    assert ttft.latency and R.predict(ttft, eng)[0] == pytest.approx(0.1 / eng.pre)  # published / predicted


def test_rows_not_compared_say_why():
    assert R.plan(_entry(device_count=2, scenario="static_batch_throughput", metric="output_tokens_per_s",
                         value=1.0), {}).startswith("multi-GPU")
    assert "weight-only" in R.plan(_entry(runtime_class="llama.cpp", precision={"label": "Q4_0", "weights": "q4_0"},
                                          scenario="llama_bench_tg", metric="output_tokens_per_s", value=1.0), {})
    assert "fp8 peak" in R.plan(_entry(precision={"label": "FP8"}, scenario="static_batch_throughput",
                                       metric="output_tokens_per_s", batch=1, input_len=1, output_len=1, value=1.0), {})
    assert "preset" in R.plan(_entry(device="rtx4080", scenario="llama_bench_tg", metric="output_tokens_per_s",
                                     value=1.0), {})


def test_in_flight_batch_fits_the_memory():
    case = R.plan(_entry(model="llama-3.1-8b", device="h100-sxm", precision={"label": "FP8"},
                         scenario="inflight_batching_max_throughput", metric="output_tokens_per_s",
                         input_len=2048, output_len=2048, value=1.0), {})
    spec, c = load_preset("h100-sxm"), G.CONFIGS["llama-3-8b"]
    free = R.KV_FRACTION * (spec.memory_capacity_bytes - c.params)  # fp8: one byte per weight
    batches = [cand.terms[0][0][3] for cand in case.candidates]
    assert len(batches) == 2 and all(b * c.kv_bytes_per_token / 2 * 4096 <= free for b in batches)
    nxt = R.BATCH_GRID[R.BATCH_GRID.index(batches[-1]) + 1]
    assert nxt * c.kv_bytes_per_token / 2 * 4096 > free  # the next batch of the grid does not fit


def test_fast_sum_matches_the_llm_figures(tiny, tmp_path, monkeypatch):
    path, loaded, step = tiny
    monkeypatch.setitem(G.CONFIGS, "tiny", TINY)
    eng = R.Engine(path.parent, R.IN_PLACE)
    spec = load_preset("a100-80gb")
    for batch, context, prompt in ((1, 40, 8), (8, 300, 64)):
        f = figures(Request(loaded, precision="fp16"), step, batch=batch, context=context, prompt=prompt, spec=spec,
                    kv_runtime="in-place", with_formulas=False)
        dec = eng.latency(R.point("tiny", "fp16", None, batch, context - 1, 1), "a100-80gb")
        pre = eng.latency(R.point("tiny", "fp16", None, batch, 0, prompt), "a100-80gb")
        assert dec == pytest.approx(f.decode.latency_s, rel=1e-9)
        assert pre == pytest.approx(f.prefill_latency_s, rel=1e-9)
    # other constants: the searched sum equals the roofline of a spec with those constants
    pt = R.point("tiny", "fp16", None, 8, 299, 1)
    fast, a = eng.fast(pt, "a100-80gb"), eng.analysis(pt)
    for e_mm, e_mem, o in ((0.5, 0.7, 3e-6), (1.0, 1.0, 1e-9), (0.3, 0.95, 12e-6)):
        eff = {**spec.efficiency, "matmul.compute": e_mm, "default.memory": e_mem, "overhead_s": o}
        want = roofline(a, replace(spec, efficiency=eff), get("fp16")).latency_s
        assert fast.latency(e_mm, spec.efficiency["default.compute"], e_mem, o) == pytest.approx(want, rel=1e-9)
        grid = fast.latencies(np.array([e_mm, 1.0]), spec.efficiency["default.compute"], np.array([e_mem]), np.array([o]))
        assert grid[0, 0, 0] == pytest.approx(want, rel=1e-9)


def test_fast_sum_takes_the_fp8_gemm_share_as_the_llm_figures_do(tiny, monkeypatch):
    """At fp8 on a preset with ``matmul.fp8.compute`` (Hopper: fitted on TensorRT-LLM fp8 rows) the fast sum
    prices GEMMs at that share, as ``figures`` (the CLI's path) does, and a fit proposal's ``matmul.compute``
    is every GEMM's share (the fp8 key set aside)."""
    path, loaded, step = tiny
    monkeypatch.setitem(G.CONFIGS, "tiny", TINY)
    eng = R.Engine(path.parent, R.IN_PLACE)
    spec = load_preset("h100-sxm")
    e8 = spec.efficiency["matmul.fp8.compute"]
    assert e8 < spec.efficiency["matmul.compute"]
    pt = R.point("tiny", "fp8", None, 64, 299, 1)
    assert R.mm_key(spec, pt) == "matmul.fp8.compute" and R.mm_key(spec, R.point("tiny", "fp16", None, 1, 0, 1)) \
        == "matmul.compute"
    f = figures(Request(loaded, precision="fp8"), step, batch=64, context=300, prompt=8, spec=spec,
                kv_runtime="in-place", with_formulas=False)
    assert eng.latency(pt, "h100-sxm") == pytest.approx(f.decode.latency_s, rel=1e-9)
    e = spec.efficiency
    fast = eng.fast(pt, "h100-sxm")
    assert eng.latency(pt, "h100-sxm") == pytest.approx(
        fast.latency(e8, e["default.compute"], e["default.memory"], e["overhead_s"]), rel=1e-12)
    assert eng.latency(pt, "h100-sxm", {"matmul.compute": 0.7}) == pytest.approx(
        fast.latency(0.7, e["default.compute"], e["default.memory"], e["overhead_s"]), rel=1e-12)
