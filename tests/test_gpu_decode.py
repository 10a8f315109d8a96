"""Decode steps measured on a GPU (issue 29: "measure decode steps there ... at batch 1, 8, 32 and two
contexts, and put the points beside the published ones"): the measured file is complete and sound, the
comparison page is what ``benchmarks/gpu_decode.py compare`` writes from it, and the onnxperf figure in
it is the command line's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]
GD = benchmark("gpu_decode.py", "onnxperf_bench_gpu_decode")

MEASURED = json.loads(GD.MEASURED.read_text())


def test_every_point_was_measured_on_fused_attention_and_computed_what_the_eager_step_computes():
    pts = MEASURED["points"]
    want = {(m, v, "decode", b, c + 1) for m in GD.MODELS for v in ("eager-kernels", "compiled")
            for b in GD.BATCHES for c in GD.CONTEXTS}
    want |= {(m, v, "prefill", 1, p) for m in GD.MODELS for v in ("eager-kernels", "compiled") for p in GD.PROMPTS}
    got = {(p["model"], p["variant"], p["phase"], p["batch"], p["context"]) for p in pts}
    assert got == want  # batch 1, 8, 32 (and 64) at two contexts, both models, both variants
    for p in pts:
        assert "error" not in p and p["attention"] == "fused" and p["finite"]
        # the CUDA graph's logits are the eager step's (fp16 rounding: under 1% of their size)
        assert p["graph_vs_eager_max_abs_diff"] <= 0.01 * p["logits_max_abs"]
        g = p["graph"]
        assert 0 < g["p10_s"] <= g["median_s"] <= g["p90_s"] < 1.25 * g["p10_s"]
    assert MEASURED["device"] in GD.PRESETS and not MEASURED["skipped"]


def test_the_profiled_kernels_account_for_the_step():
    """Σ kernel time per step is 85-100% of the graph's time (the rest: gaps between kernels)."""
    for p in MEASURED["points"]:
        if "profile" in p:
            total = sum(p["profile"]["family_s"].values())
            assert 0.85 * p["graph"]["median_s"] <= total <= 1.02 * p["graph"]["median_s"], p


@pytest.mark.parametrize("name, family", [
    ("nvjet_sm90_hsh_192x8_64x8_4x1_v_bz_TNT", "gemm"),
    ("void cublasLt::splitKreduce_kernel<32, 16, int>", "gemm"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16", "attention"),
    ("triton_red_fused__fused_rms_norm_0", "other"),
    ("void at::native::elementwise_kernel<128, 4>", "other"),
])
def test_kernel_family(name, family):
    assert GD.kernel_family(name) == family


@pytest.mark.slow
def test_the_page_is_what_compare_writes_and_its_figure_is_the_command_lines(tmp_path):
    rows = GD.predictions(MEASURED, tmp_path)
    check = GD.cli_check(MEASURED, tmp_path)
    assert check["cli_s"] == pytest.approx(check["table_s"], rel=1e-9)
    kernels = json.loads(GD.KERNELS.read_text())
    assert GD.report(MEASURED, rows, check, kernels) == GD.OUT.read_text()


def test_the_measured_layer_is_a_decoder_step():
    """The layer the GPU ran (CPU here, where PyTorch is installed): decoding token n+1 after a prefill of n
    gives the logits a prefill of n+1 gives, with and without grouped-query attention; a wrong position
    does not."""
    torch = pytest.importorskip("torch")
    for kv_heads in (2, 4):
        m = GD.Llama(torch, "tiny", 2, 16, "cpu", (2, 64, 4, kv_heads, 128, 100, 1e4))
        ids = torch.randint(0, 100, (2, 9), generator=torch.Generator().manual_seed(1))
        with torch.inference_mode():
            full = m.forward(ids, 0).float()
            m.forward(ids[:, :8], 0)
            step = m.forward(ids[:, 8:], 8).float()
            m.forward(ids[:, :8], 0)
            wrong = m.forward(ids[:, 8:], 7).float()
        assert torch.allclose(full, step, atol=1e-2)
        assert not torch.allclose(full, wrong, atol=1e-2)
