"""The precisions LLMs are deployed in (issue 29, item 5): weight-only int8/int4 with group scales, NVFP4,
and a KV cache in a precision of its own. Expected bytes are derived from the Llama export's config
(models/corpus/make_nlp.py: 4 layers, hidden 256, 8 query / 2 KV heads of 32, MLP 688, vocab 1000, fp32)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from onnxperf import cli
from onnxperf.predict.precision import get

MODEL = str(Path(__file__).resolve().parents[1] / "models" / "corpus" / "llama_decode_legacy.onnx")
L, HIDDEN, H, KV, D, MLP, VOCAB = 4, 256, 8, 2, 32, 688, 1000
#: the matrix-product weights: q, k, v, o and the gated MLP of every layer, and the LM head
LINEAR = L * (HIDDEN * H * D + 2 * HIDDEN * KV * D + H * D * HIDDEN + 3 * HIDDEN * MLP) + HIDDEN * VOCAB
#: the rest: the embedding table, the RMSNorm weights (2 per layer and the final one) and the rotary
#: embedding's inverse frequencies (head_dim / 2, a Constant node)
OTHER = VOCAB * HIDDEN + (2 * L + 1) * HIDDEN + D // 2


def _ceil_bytes(n: int, bits: Fraction) -> int:
    return -(-(n * bits.numerator) // (8 * bits.denominator))


def _summary(capsys, *extra) -> dict:
    capsys.readouterr()
    rc = cli.main(["summary", MODEL, "--format", "json", "--no-progress", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def _float_peaks(d: dict) -> set:
    """(dtype, named peak) of the roofline rows with floating-point arithmetic (integer ones: shape math)."""
    return {(r["dtype"], r["peak_ops_per_s"]) for r in d["roofline"]["nodes"] if r["ops"] and r["dtype"] != "int32"}


def test_the_effective_bits_include_the_scales():
    assert get("w8a16").weight_bits == 8 + Fraction(16, 128)  # int8 + an fp16 scale per 128
    assert get("w4a16").weight_bits == 4 + Fraction(16 + 4, 128)  # int4 + an fp16 scale and a 4-bit zero per 128
    assert get("fp4").tensor_bits == get("fp4").weight_bits == 4 + Fraction(8, 16)  # e2m1 + an fp8 scale per 16
    assert get("w4a16").tensor_bits == 16 and get("fp16").weight_bits == 16


@pytest.mark.parametrize("precision,expected", [
    ("w8a16", {"int8": _ceil_bytes(LINEAR, 8 + Fraction(16, 128)), "float16": 2 * OTHER}),
    ("w4a16", {"int4": _ceil_bytes(LINEAR, 4 + Fraction(20, 128)), "float16": 2 * OTHER}),
    ("fp4", {"float4e2m1": _ceil_bytes(LINEAR + OTHER, Fraction(9, 2))}),
    ("fp16", {"float16": 2 * (LINEAR + OTHER)}),
])
def test_weight_bytes_by_dtype(capsys, precision, expected):
    d = _summary(capsys, "--precision", precision)
    assert d["totals"]["param_bytes_by_dtype"] == expected
    assert d["totals"]["param_bytes"] == sum(expected.values())
    p = d["precision"]
    assert p["name"] == precision and p["bits_per_weight"] == float(get(precision).weight_bits)


def test_weight_only_keeps_the_arithmetic_at_the_fp16_peak(capsys):
    """w4a16 moves a quarter of the fp16 weight bytes (plus scales) and does the same MACs at the same
    peak: a MatMul of the step is named at the fp16 peak."""
    fp16, w4 = (_summary(capsys, "--precision", p, "--hw", "h100-sxm") for p in ("fp16", "w4a16"))
    assert w4["totals"]["macs"] == fp16["totals"]["macs"]
    assert w4["totals"]["bytes_read"] < fp16["totals"]["bytes_read"]
    assert _float_peaks(w4) == {("fp16", 989.4e12)}


def test_fp4_runs_at_the_fp4_peak_where_there_is_one(capsys):
    b200, h100 = (_summary(capsys, "--precision", "fp4", "--hw", hw) for hw in ("b200", "h100-sxm"))
    assert _float_peaks(b200) == {("fp4", 9e15)}
    assert _float_peaks(h100) == {("fp4", 1978.9e12)}  # no fp4 on Hopper: its fp8 peak


@pytest.mark.parametrize("kv,bits", [("fp8", 8), ("int8", 8), ("fp4", Fraction(9, 2)), ("fp16", 16)])
def test_the_kv_cache_in_its_own_precision(capsys, kv, bits):
    """KV bytes per token = 2 (K, V) · layers · kv_heads · head_dim · bits / 8; the weights unchanged."""
    d = _summary(capsys, "--precision", "fp16", "--kv-precision", kv, "--context", "1024")
    f = d["llm"]["figures"]
    per_token = _ceil_bytes(2 * L * KV * D, Fraction(bits))
    assert f["kv_bytes_per_token"] == per_token
    assert f["memory"]["kv_cache_bytes"] == per_token * 1 * 1024
    assert f["memory"]["weight_bytes"] == 2 * (LINEAR + OTHER)
    assert f["kv_precision"]["name"] == kv and f["kv_precision"]["bits_per_element"] == float(bits)


@pytest.mark.parametrize("kv,bits", [("fp16", 16), ("fp8", 8), ("fp4", Fraction(9, 2))])
def test_a_narrower_cache_moves_fewer_bytes(capsys, kv, bits):
    """In place at context C = 1024: the cache read once at its width, and per cache tensor (2·L) the new
    token read as computed (fp16: KV·D·2 B) and appended at the cache's width (KV·D·bits/8)."""
    f = _summary(capsys, "--precision", "fp16", "--kv-precision", kv, "--context", "1024",
                 "--kv-runtime", "in-place")["llm"]["figures"]
    cache = _ceil_bytes(2 * L * KV * D * 1024, Fraction(bits))
    assert f["decode"]["kv_bytes"] == cache + 2 * L * (KV * D * 2 + _ceil_bytes(KV * D, Fraction(bits)))


@pytest.mark.slow
def test_every_output_names_the_kv_precision(capsys, tmp_path):
    for fmt, needle in (("text", "per token in the --kv-precision fp8 what-if"), ("md", "| KV precision (--kv-precision) | fp8")):
        capsys.readouterr()
        assert cli.main(["summary", MODEL, "--kv-precision", "fp8", "--format", fmt, "--no-progress"]) == 0
        assert needle in capsys.readouterr().out, fmt
    html = tmp_path / "r.html"
    assert cli.main(["report", MODEL, "--kv-precision", "fp8", "-o", str(html), "--no-progress"]) == 0
    assert "<code>--kv-precision</code>" in html.read_text()


def test_bad_precisions_are_one_line_exit_2(capsys, tmp_path):
    for argv in (["--kv-precision", "int3"], ["--precision", "w3a16"]):
        capsys.readouterr()
        assert cli.main(["summary", MODEL, *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
    budget = tmp_path / "b.toml"
    budget.write_text('max_kv_cache = "1GiB"\nkv_precision = "int3"\n')
    assert cli.main(["check", MODEL, "--budget", str(budget)]) == 2
    assert "kv_precision" in capsys.readouterr().err


def test_the_kv_precision_applies_on_top_of_an_fp8_or_fp4_what_if(capsys):
    """--precision fp4 leaves the cache in float4; --kv-precision fp8 puts it back at 8 bits: the step's KV
    traffic follows the cache's own width (in place: the cache read once at 8 bits per element)."""
    f = _summary(capsys, "--precision", "fp4", "--kv-precision", "fp8", "--context", "1024",
                 "--kv-runtime", "in-place")["llm"]["figures"]
    cache = 2 * L * KV * D * 1024  # bytes at 8 bits
    assert f["kv_bytes_per_token"] * 1024 == cache == f["memory"]["kv_cache_bytes"]
    # the cache read once at 8 bits; per cache tensor the new token read as computed (fp4: 4.5 bits) and
    # appended at 8 bits
    assert f["decode"]["kv_bytes"] == cache + 2 * L * (_ceil_bytes(KV * D, Fraction(9, 2)) + KV * D)
