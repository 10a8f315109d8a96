"""validate on a GPU provider (measured on an H200 through onnxruntime's CUDA provider,
benchmarks/results/ort_cuda.md): onnxruntime's profiler times each node's launch on the host there, not its
kernel, so the per-node figures are said to be host times, and a run whose launches take most of its
latency is called host-bound (the GPU waited on them) instead of being read as the model's error."""

from __future__ import annotations

import dataclasses
import json

import onnx
import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.products.validate import compare as C
from onnxperf.products.validate.machine import HOST_BOUND_SHARE, gpu_node_times
from onnxperf.products.validate.runner import run_session as real_run_session

from .util import benchmark, const, model, vi

OC = benchmark("ort_cuda.py", "onnxperf_bench_ort_cuda")
GPU = ("CUDAExecutionProvider", "CPUExecutionProvider")


def test_the_measured_runs_are_called_host_bound_where_their_launches_outlast_the_gpu():
    """The H200 runs: ResNet-50 at batch 1 (122 nodes: 2.3 ms of launches, 1.44 ms per run) and BERT at
    every batch are host-bound; ResNet-50 at batch 32 (3.7 ms of launches, 8.3 ms per run) is not."""
    runs = json.loads(OC.VALIDATE.read_text())["runs"]
    got = {(r["model"].split("/")[-1], r["batch"]):
           gpu_node_times(r["providers"], r["measured_kernels_s"], r["measured_latency"]["mean_s"])[1] for r in runs}
    assert got == {("resnet50_torch.onnx", 1): True, ("resnet50_torch.onnx", 32): False,
                   ("bert_encoder_torch.onnx", 1): True, ("bert_encoder_torch.onnx", 8): True,
                   ("bert_encoder_torch.onnx", 32): True}


@pytest.mark.parametrize("providers, host, latency, want", [
    (("CPUExecutionProvider",), 5e-3, 1e-3, ("kernel", None, 0)),
    ((), 5e-3, 1e-3, ("kernel", None, 0)),
    (GPU, HOST_BOUND_SHARE * 1e-3, 1e-3, ("host", True, 2)),
    (GPU, 0.99 * HOST_BOUND_SHARE * 1e-3, 1e-3, ("host", False, 1)),
    (("TensorrtExecutionProvider", "CUDAExecutionProvider"), 0.0, 1e-3, ("host", False, 1)),
])
def test_gpu_node_times(providers, host, latency, want):
    times, bound, said = gpu_node_times(providers, host, latency)
    assert (times, bound, len(said)) == want
    if times == "host":
        assert said[0].startswith("onnxruntime's profiler times each node's launch on the host")
    if bound:
        assert said[1].startswith("host-bound run:")


def test_validate_on_a_gpu_provider_says_what_its_node_times_are(tmp_path, monkeypatch, capsys):
    """The whole command, the session run on the CPU here and reported as the CUDA provider's (no GPU on
    this machine): the JSON says ``node_times: host`` and whether the run was host-bound, the text labels
    the per-node figures as launch times."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    p = tmp_path / "mlp.onnx"
    onnx.save(model(nodes, [vi("x", [4, 64])], [vi("y", None)], [const("w", [64, 64])]), str(p))

    def as_if_on_the_gpu(*args, **kw):
        rr = real_run_session(*args, **{**kw, "providers": ("CPUExecutionProvider",), "memory_limit_bytes": None})
        return dataclasses.replace(rr, providers=GPU)

    monkeypatch.setattr(C, "check_provider", lambda name: GPU)
    monkeypatch.setattr(C, "run_session", as_if_on_the_gpu)
    args = ["validate", str(p), "--hw", "h200", "--provider", "CUDAExecutionProvider", "--runs", "3", "--warmup", "1"]
    assert cli.main(args + ["--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["providers"] == list(GPU) and v["node_times"] == "host"
    bound = v["measured_kernels_s"] >= HOST_BOUND_SHARE * v["measured_latency"]["mean_s"]
    assert v["host_bound"] is bound
    said = [w for w in v["warnings"] if w.startswith("onnxruntime's profiler times each node's launch")]
    assert len(said) == 1 and sum(w.startswith("host-bound run:") for w in v["warnings"]) == int(bound)
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "per node (host launch times, not kernels):" in text and "node launches on the host" in text


def test_on_the_cpu_provider_node_times_are_kernels(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    p = tmp_path / "relu.onnx"
    onnx.save(model(nodes, [vi("x", [64, 64])], [vi("y", None)], []), str(p))
    assert cli.main(["validate", str(p), "--hw", "xeon-silver-4210x2", "--runs", "2", "--warmup", "0",
                     "--format", "json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["node_times"] == "kernel" and v["host_bound"] is None
    assert not any("launch on the host" in w for w in v["warnings"])
