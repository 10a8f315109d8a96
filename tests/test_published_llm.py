"""The published LLM inference truth set (benchmarks/published/llm_inference.json) and the TensorRT demo/BERT
rows kept beside gpu_inference.json (bert_extra.json): they load, every entry names its source (a repository
and a pinned commit, or a page's address and date), every value is positive and finite and equals the number
the quoted source row shows times the stated unit factor, and a few copied values match their sources."""
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUB = ROOT / "benchmarks" / "published"
LLM = PUB / "llm_inference.json"
BERT = PUB / "bert_extra.json"
PRESETS = ROOT / "onnxperf" / "hardware" / "presets"

METRICS = {"output_tokens_per_s", "output_tokens_per_s_per_gpu", "prompt_tokens_per_s", "samples_per_s",
           "latency_s", "ttft_s", "tpot_s", "itl_s"}
REQUIRED = ("model", "device", "device_name", "device_count", "precision", "runtime", "runtime_class", "scenario",
            "batch", "concurrency", "input_len", "output_len", "metric", "stat", "value", "unit",
            "value_as_written", "unit_as_written", "scale", "source", "source_kind")


@pytest.fixture(scope="module")
def llm():
    return json.loads(LLM.read_text())


@pytest.fixture(scope="module")
def bert():
    return json.loads(BERT.read_text())


def _sourced(src):
    """A repository at a full commit, or a page with its address and date."""
    if src.get("repo"):
        return bool(re.fullmatch(r"[0-9a-f]{40}", src.get("commit", ""))) and src["url"].startswith("https://github.com/")
    return src.get("url", "").startswith("https://") and bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", src.get("date", "")))


def test_files_load_with_their_schemas(llm, bert):
    assert llm["schema"] == "onnxperf.published-llm/1"
    assert bert["schema"] == "onnxperf.published-gpu/1"
    assert llm["notes"] and all(isinstance(n, str) for n in llm["notes"])
    assert len(llm["entries"]) > 1000 and len(bert["entries"]) > 100


def test_every_llm_entry_has_the_schema_fields(llm):
    for e in llm["entries"]:
        missing = [k for k in REQUIRED if k not in e]
        assert not missing, (missing, e.get("source"))
        assert e["metric"] in METRICS, e["metric"]
        assert isinstance(e["device_count"], int) and e["device_count"] >= 1
        assert isinstance(e["precision"], dict)
        assert e["device"] == e["device"].lower() and " " not in e["device"]


def test_every_entry_is_sourced(llm, bert):
    for e in llm["entries"] + bert["entries"]:
        assert _sourced(e["source"]), e["source"]


def test_values_positive_finite_and_equal_to_the_quoted_number(llm):
    for e in llm["entries"]:
        v = e["value"]
        assert isinstance(v, float) and math.isfinite(v) and v > 0, e
        w = e["value_as_written"]
        assert w in e["source"]["quoted"], (w, e["source"]["quoted"])
        assert math.isclose(float(w.replace(",", "")) * e["scale"], v, rel_tol=1e-9), e
        assert e["scale"] in (1, 1e-3, 1e-9)
        assert (e["unit"] == "s") == (e["metric"] in {"latency_s", "ttft_s", "tpot_s", "itl_s"})


def test_bert_extra_latencies_match_their_quoted_rows(bert):
    for e in bert["entries"]:
        cells = [c.strip() for c in e["source"]["quoted"].strip("|").split("|")]
        assert int(cells[0]) == e["seq_len"] and int(cells[1]) == e["batch"]
        off = 2 if e["precision"] == "int8" else 5
        for j, k in enumerate(("p95", "p99", "avg")):
            ms = float(cells[off + j])
            assert math.isclose(e["latency_s"][k], ms / 1000.0, rel_tol=1e-9), (e, k)
            assert 0 < e["latency_s"][k] < 10


def test_no_duplicate_figures(llm):
    keys = [(e["source"].get("commit") or e["source"]["url"], e["source"].get("path"), e["source"]["quoted"], e["device"],
             e["metric"], e["stat"],
             e.get("input_len"), e.get("output_len")) for e in llm["entries"]]
    assert len(keys) == len(set(keys))


def test_preset_ids_used_exist():
    for dev in ("h100-sxm", "h100-pcie", "h200", "l40s", "l4", "b200", "mi300x", "rtx4090", "rtx3090", "rtx6000-ada",
                "a100-80gb", "gh200-144gb", "gh200-96gb", "jetson-orin", "apple-m2"):
        assert (PRESETS / f"{dev}.toml").exists(), dev


def _one(entries, **kw):
    """The single entry whose fields equal ``kw`` (``commit``: a prefix of source.commit)."""
    commit = kw.pop("commit", None)
    found = [e for e in entries if all(e.get(k) == v for k, v in kw.items())
             and (commit is None or e["source"].get("commit", "").startswith(commit))]
    assert len(found) == 1, (kw, commit, len(found))
    return found[0]


@pytest.mark.parametrize("kw, value, quoted", [
    # TensorRT-LLM v0.9.0 static batching, H100 FP8, LLaMA 7B 128/128 at batch 896
    (dict(commit="71d8d4d3", model="llama-2-7b", device="h100-sxm", metric="output_tokens_per_s_per_gpu",
          input_len=128, output_len=128), 19854.0, "| LLaMA 7B | 896 | 1 | 128 | 128 | 19,854 |"),
    # TensorRT-LLM v0.9.0 first-token latency, A100 FP16, LLaMA 7B, 2048-token prompt
    (dict(commit="71d8d4d3", model="llama-2-7b", device="a100", metric="ttft_s", input_len=2048), 0.1324,
     "| LLaMA 7B | 1 | 1 | 2048 | 132.4 |"),
    # TensorRT-LLM v0.17, LLaMA v3.1 8B on H200 FP8, TP1, 128/128
    (dict(commit="258c7540", model="llama-3.1-8b", device="h200", metric="output_tokens_per_s", input_len=128,
          output_len=128, scenario="inflight_batching_max_throughput"), 29526.04, "29526.04"),
    # TensorRT-LLM v1.0 table, Llama 3.3 70B FP4 on one B200
    (dict(commit="00f37686", model="llama-3.3-70b", device="b200", input_len=128, output_len=128), 11147.0,
     "| 128/128 | 11,147 | 12,189 | 3,803 | 6,378 |"),
    # MLPerf v4.1 closed, one H200 (CTS), Llama-2-70B Offline tokens/s and Server mean TTFT
    (dict(device="h200", model="llama-2-70b", metric="output_tokens_per_s", scenario="mlperf_offline",
          device_name="NVIDIA H200-SXM-141GB-CTS (NVIDIA H200 (1x H200-SXM-141GB-CTS, TensorRT))"), 4487.88,
     "Tokens per second: 4487.88"),
    (dict(device="h200", model="llama-2-70b", metric="ttft_s", stat="mean", scenario="mlperf_server",
          device_name="NVIDIA H200-SXM-141GB-CTS (NVIDIA H200 (1x H200-SXM-141GB-CTS, TensorRT))"), 0.238221119,
     "Mean First Token latency (ns) : 238221119"),
    # MLPerf v4.1 closed, NeuralMagic vLLM 0.5.2 on 8x L40S (the L40S is not mistaken for an L4), Llama-2-70B Offline
    (dict(device="l40s", device_count=8, model="llama-2-70b", metric="output_tokens_per_s", scenario="mlperf_offline",
          runtime_class="mlperf-neuralmagic"), 948.198, "Tokens per second: 948.198"),
    # MLPerf v4.0 closed, one H100 SXM, ResNet-50 Offline
    (dict(commit="3c4a1cf1", model="resnet50", device="h100-sxm", metric="samples_per_s", scenario="mlperf_offline"),
     88714.3, "Samples per second: 88714.3"),
    # llama.cpp llama-bench README (CSV example): RTX 3090 Ti, LLaMA 7B Q4_0, tg128
    (dict(device="rtx3090ti", metric="output_tokens_per_s", value_as_written="132.052051"), 132.052051, "\"132.052051\""),
    # r/LocalLLaMA 2024-11-02: RTX 4090, Llama-2-7B Q4_0, pp512 and tg128 (build b4011, CUDA FA)
    (dict(runtime_class="llama.cpp", device="rtx4090", model="llama-2-7b", metric="prompt_tokens_per_s", input_len=512,
          source_kind="community", value_as_written="13944.43"), 13944.43, "| RTX 4090 | CUDA (FA) |"),
    (dict(runtime_class="llama.cpp", device="rtx4090", model="llama-2-7b", metric="output_tokens_per_s", output_len=128,
          source_kind="community", value_as_written="187.7"), 187.7, "187.7"),
    # XiongjieDai (May 2024): RTX 4090, Llama 3 8B Q4_K_M, tg 1024
    (dict(device="rtx4090", model="llama-3-8b", metric="output_tokens_per_s", output_len=1024, device_count=1,
          value_as_written="127.74"), 127.74, "| 4090 24GB | 8B Q4_K_M | 130.58 | 127.74 |"),
    # vLLM blog (FP8 KV cache post): Llama-3.1-8B on one H100, BF16 KV cache, concurrency 8
    (dict(runtime_class="vllm", metric="output_tokens_per_s", value_as_written="450.3"), 450.3,
     "| BF16 | 763.6 | 15.18 | 672.6 | 450.3 |"),
])
def test_spot_checks(llm, kw, value, quoted):
    e = _one(llm["entries"], **kw)
    assert math.isclose(e["value"], value, rel_tol=1e-12)
    assert quoted in e["source"]["quoted"]


def test_bert_extra_spot_checks(bert):
    rows = [e for e in bert["entries"] if e["device"] == "l40s" and e["model"] == "bert-large" and e["seq_len"] == 384
            and e["batch"] == 128 and e["precision"] == "fp16" and e["source"]["commit"].startswith("37c01d41")]
    assert len(rows) == 1
    assert rows[0]["latency_s"] == {"p95": 0.19698, "p99": 0.19783, "avg": 0.19418}
    assert rows[0]["source"]["quoted"] == "| 384 | 128 | 84.15 | 84.40 | 83.34 | 196.98 | 197.83 | 194.18 |"
    disputed = [e for e in bert["entries"] if e.get("device_label_conflict")]
    assert disputed and {e["source"]["commit"][:8] for e in disputed} == {"37c01d41"}
