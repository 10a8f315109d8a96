"""Tensor parallelism (issue 29, item 6): ``--devices N`` gives one device's share of a decoder step and the
all-reduces that join the shares. Expected figures are derived from the Llama export's config
(models/corpus/make_nlp.py: 4 layers, hidden 256, 8 query / 2 KV heads of 32, MLP 688, vocab 1000, fp32)."""

from __future__ import annotations

import dataclasses

import json
from math import ceil
from pathlib import Path

import pytest

from onnxperf import cli
from onnxperf.cost.request import Request
from onnxperf.graph.loader import load
from onnxperf.hardware import load_spec
from onnxperf.insights.llm import recognize
from onnxperf.predict.parallel import allreduce_s, shard, shard_plan
from onnxperf.predict.precision import priced

MODEL = Path(__file__).resolve().parents[1] / "models" / "corpus" / "llama_decode_legacy.onnx"
L, HIDDEN, H, KV, D, MLP, VOCAB, F32 = 4, 256, 8, 2, 32, 688, 1000, 4
LINEAR = L * (HIDDEN * H * D + 2 * HIDDEN * KV * D + H * D * HIDDEN + 3 * HIDDEN * MLP) + HIDDEN * VOCAB
EMBEDDING = VOCAB * HIDDEN
REPLICATED = (2 * L + 1) * HIDDEN + D // 2  # the RMSNorm weights and the rotary frequencies
B, C = 4, 512


@pytest.fixture(scope="module")
def step():
    ld = load(MODEL)
    st = recognize(ld)
    a = priced(Request(ld).at(**st.bindings(B, C - 1, 1)), empty_dims=True)
    return a, tuple(c.name for c in st.caches), st.kv_heads


@pytest.mark.parametrize("n", [2, 4, 8])
def test_the_plan_splits_the_products_and_all_reduces_twice_per_layer(step, n):
    """Two row-parallel products per layer (attention output, MLP down) and the vocabulary-split
    embedding are all-reduced: 2·L + 1 all-reduces of the hidden state, batch·1·hidden·4 bytes each."""
    a, caches, kv_heads = step
    plan = shard_plan(a, caches, kv_heads, n)
    assert len(plan.allreduces) == 2 * L + 1
    assert {b for _, b in plan.allreduces} == {B * 1 * HIDDEN * F32}
    assert plan.kv_share == ceil(KV / n) / KV  # fewer KV heads than devices: each holds a whole one


@pytest.mark.parametrize("n", [2, 4])
def test_one_device_does_a_share_of_the_arithmetic_and_holds_a_share_of_the_weights(step, n):
    a, caches, kv_heads = step
    one = shard(a, shard_plan(a, caches, kv_heads, n))
    assert one.totals.macs * n == a.totals.macs  # every MAC is in a split product or head
    split = LINEAR + EMBEDDING
    assert a.totals.params == split + REPLICATED
    assert one.totals.param_bytes == F32 * REPLICATED + ceil(F32 * split / n)


def test_an_all_reduce_is_a_ring_over_the_interconnect():
    """α + 2 (N - 1) / N · M / B, α = base + 2 (N - 1) · hop: NCCL's latency model (ring, LL: 6.6 µs and
    0.6 µs per step over NVLink, 1 µs over PCIe) on an H100 SXM (NVLink 450 GB/s per direction) and an
    L40S (PCIe 32 GB/s); a spec without the two pays one kernel launch (overhead_s)."""
    spec = load_spec("h100-sxm")
    m = 1 << 20
    assert allreduce_s(m, 8, spec) == pytest.approx(6.6e-6 + 2 * 7 * 0.6e-6 + 2 * 7 / 8 * m / 450e9)
    assert allreduce_s(m, 2, load_spec("l40s")) == pytest.approx(6.6e-6 + 2 * 1 * 1e-6 + 2 * 1 / 2 * m / 32e9)
    bare = dataclasses.replace(spec, **{t: {k: v for k, v in getattr(spec, t).items() if not k.startswith("allreduce.")}
                                        for t in ("efficiency", "efficiency_sources")})
    assert allreduce_s(m, 8, bare) == pytest.approx(spec.efficiency["overhead_s"] + 2 * 7 / 8 * m / 450e9)
    assert allreduce_s(m, 1, spec) == 0.0
    assert allreduce_s(m, 2, load_spec("epyc-9654")) is None  # a CPU: no interconnect given


def _llm(capsys, *extra) -> dict:
    capsys.readouterr()
    rc = cli.main(["summary", str(MODEL), "--dim", f"batch={B}", "--context", str(C), "--format", "json",
                   "--no-progress", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)["llm"]["figures"]


@pytest.mark.slow
def test_the_step_time_adds_the_all_reduces(capsys):
    one, two = _llm(capsys, "--hw", "h100-sxm"), _llm(capsys, "--hw", "h100-sxm", "--devices", "2")
    d = two["devices"]
    assert d["count"] == 2 and d["allreduces_per_step"] == 2 * L + 1
    assert d["allreduce_bytes_per_step"] == (2 * L + 1) * B * HIDDEN * F32
    spec = load_spec("h100-sxm")
    assert d["allreduce_s"] == pytest.approx((2 * L + 1) * allreduce_s(B * HIDDEN * F32, 2, spec))
    assert two["decode"]["macs"] * 2 == one["decode"]["macs"]
    assert d["per_device_kv_cache_bytes"] * 2 == one["memory"]["kv_cache_bytes"]  # 2 KV heads over 2 devices
    assert two["memory"]["weight_bytes"] < one["memory"]["weight_bytes"]


@pytest.mark.slow
def test_the_fewest_devices_that_hold_it(capsys):
    """With a capacity, the smallest power of 2 whose per-device memory fits: here a budget between what
    four and what two devices each need."""
    four, two = (_llm(capsys, "--devices", str(n))["memory"]["total_bytes"] for n in (4, 2))
    budget = (four + two) // 2
    f = _llm(capsys, "--devices", "2", "--memory", str(budget))
    fit = f["devices"]["smallest_count"]
    assert fit["value"] == 4 and fit["total_bytes"] == four and fit["budget_bytes"] == budget


@pytest.mark.slow
def test_every_output_says_the_device_count(capsys, tmp_path):
    for fmt, needle in (("text", "Devices      2, tensor parallel"), ("md", "| Devices (--devices) | 2, tensor parallel")):
        capsys.readouterr()
        assert cli.main(["summary", str(MODEL), "--devices", "2", "--format", fmt, "--no-progress"]) == 0
        assert needle in capsys.readouterr().out, fmt
    html = tmp_path / "r.html"
    assert cli.main(["report", str(MODEL), "--devices", "2", "-o", str(html), "--no-progress"]) == 0
    assert 'id="llm-devices"' in html.read_text()
    budget = tmp_path / "b.toml"
    budget.write_text('hw = "h100-sxm"\ndevices = 2\nmin_decode_tokens_per_s = 1\n')
    capsys.readouterr()
    assert cli.main(["check", str(MODEL), "--budget", str(budget), "--format", "json", "--no-progress"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["budget"]["devices"] == 2
    assert "one device of 2" in r["models"][0]["budgets"][0]["message"]


def test_a_bad_device_count_is_one_line_exit_2(capsys):
    assert cli.main(["summary", str(MODEL), "--devices", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
