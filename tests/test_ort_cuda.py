"""Decode steps run by onnxruntime's CUDA provider on a GPU (issue 29: "measure decode steps there through
onnxruntime-genai or onnxruntime's CUDA provider at batch 1, 8, 32 and two contexts, and put the points
beside the published ones"): the measured file is complete and sound, the script that measured it runs
(here on the CPU provider, at toy widths), and the page is what ``benchmarks/ort_cuda.py compare`` writes."""

from __future__ import annotations

import json
import math

import onnx
import pytest

from .util import benchmark

OC = benchmark("ort_cuda.py", "onnxperf_bench_ort_cuda")
MEASURED = json.loads(OC.MEASURED.read_text())


def test_every_point_ran_on_the_cuda_provider_at_three_batches_and_two_contexts():
    assert MEASURED["provider"] == "CUDAExecutionProvider" and MEASURED["device"] in OC.PRESETS
    assert not MEASURED["tiny"] and MEASURED["layers"] == 32
    got = {(p["model"], p["batch"], p["context"]) for p in MEASURED["points"]}
    assert got == {(m, b, c) for m in OC.MODELS for b in OC.BATCHES for c in OC.CONTEXTS}
    for s in MEASURED["sessions"].values():
        assert s["providers"][0] == "CUDAExecutionProvider"
    for p in MEASURED["points"]:
        assert "error" not in p and p["finite"]
        st = p["step"]
        assert 0 < st["p10_s"] <= st["median_s"] <= st["p90_s"] and st["repeats"] == MEASURED["repeats"]


def test_the_profiled_kernels_fit_inside_the_step():
    """Σ kernel device time per step is at most the step's wall time (the rest: the host's launches)."""
    prof = [p for p in MEASURED["points"] if "kernels" in p]
    assert {(p["batch"], p["context"]) for p in prof} == OC.PROFILED
    for p in prof:
        assert 0.3 * p["step"]["median_s"] < sum(p["kernels"]["family_s"].values()) <= 1.02 * p["step"]["median_s"]


@pytest.mark.parametrize("name, op", [
    ("void onnxruntime::cuda::_ConcatKernelInputMajor<short>(onnxruntime::cuda::TArray)", "Concat"),
    ("void onnxruntime::cuda::ExpandKernel<unsigned short, 256, 4>(int, int)", "Expand"),
    ("nvjet_sm90_hsh_128x8_64x12_4x1_v_bz_splitK_NNT", "MatMul"),
    ("void cudnn::ops::softmax_fw_kernel<2, __half, float, 256, 1, 0, 0>", "Softmax"),
    ("void onnxruntime::cuda::cuApplyLayerNorm<__half, float, __half, true>", "normalization"),
    ("void onnxruntime::cuda::_BinaryElementWiseSimple<true, true, __half>", "other"),
])
def test_kernel_op(name, op):
    assert OC.kernel_op(name) == op


def test_the_weights_written_are_the_bytes_the_graph_references(tmp_path):
    cfg = OC.config("llama-3-8b", 2, tiny=True)
    path = OC.graph(cfg, tmp_path)
    size = OC.write_weights(path)
    m = onnx.load(str(path), load_external_data=False)
    ext = [t for t in m.graph.initializer if t.external_data]
    assert ext and all(t.data_type == onnx.TensorProto.FLOAT16 for t in ext)
    # the Builder lays the fp16 weights at 4 KiB-aligned offsets: the file ends where the last one does
    info = [{e.key: e.value for e in t.external_data} for t in ext]
    assert all(int(i["length"]) == 2 * math.prod(t.dims) for i, t in zip(info, ext))
    end = max(int(i["offset"]) + int(i["length"]) for i in info)
    assert size == end == (tmp_path / f"{path.name}.data").stat().st_size


def test_the_script_measures_on_the_cpu_provider_at_toy_widths(tmp_path):
    out = tmp_path / "m.json"
    res = OC.measure(out, "CPUExecutionProvider", tiny=True, layers=2, models=("llama-3-8b",), batches=(2,),
                     contexts=(16,), repeats=2)
    assert json.loads(out.read_text()) == res
    (p,) = res["points"]
    assert "error" not in p and p["finite"] and p["step"]["repeats"] == 2
    assert res["sessions"]["llama-3-8b"]["providers"] == ["CPUExecutionProvider"]


@pytest.mark.slow
def test_the_pages_profiled_points_are_what_compare_writes(tmp_path):
    """The two profiled points (batch 1 and 32 at context 2048) of the first model predicted again through
    the command line, cache as exported and in place: their rows of the step table and of the op table are
    the page's, verbatim. (The page's other rows and its summary lines come from the same code: ``compare``
    rewrites the whole page in ~85 s, 24 ``summary --llm`` runs on the 32-layer graphs; this checks 4 of them:
    the other model's 4 cost another ~30 s of the suite's ten minutes and run the same code.)"""
    sub = dict(MEASURED, points=[p for p in MEASURED["points"]
                                 if (p["batch"], p["context"]) in OC.PROFILED and p["model"] == OC.MODELS[0]])
    assert len(sub["points"]) == len(OC.PROFILED)
    rows = OC.predictions(sub, tmp_path)
    page = OC.OUT.read_text().splitlines()
    table = [ln for ln in OC.report(sub, rows, OC.load(OC.REPEAT)).splitlines()
             if ln.startswith("| ") and not ln.startswith("| model")]
    assert len(table) >= 2 * len(rows)  # a step row and a kernel row per point, op rows besides
    for ln in table:
        assert ln in page, ln
