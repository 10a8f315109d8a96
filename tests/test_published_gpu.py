"""benchmarks/published/gpu_inference.json and bert_extra.json: every entry is sourced and well formed, and
benchmarks/gpu_realism.py reads both (issue 18 input; issue 29, item 2)."""

import json
from pathlib import Path

import pytest

from onnxperf.hardware import load_spec

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]
PATH = ROOT / "benchmarks" / "published" / "gpu_inference.json"
EXTRA = ROOT / "benchmarks" / "published" / "bert_extra.json"
MLPERF = ROOT / "benchmarks" / "published" / "mlperf_resnet.json"
#: devices of mlperf_resnet.json that onnxperf has no preset for (kept as published, never compared)
NO_PRESET = {"a100-pcie-80gb", "a2", "l40"}


@pytest.mark.parametrize("path", [PATH, EXTRA, MLPERF], ids=["gpu_inference", "bert_extra", "mlperf_resnet"])
def test_entries_are_sourced_and_name_known_presets(path):
    d = json.loads(path.read_text())
    assert d["schema"] == "onnxperf.published-gpu/1" and d["entries"]
    for e in d["entries"]:
        assert e["model"] and e["precision"] and e["runtime_class"] in ("tensorrt", "framework", "triton")
        if e["device"] not in NO_PRESET:
            load_spec(e["device"])  # a preset of onnxperf
        src = e["source"]
        assert src["repo"] and src["path"] and len(src["commit"]) == 40
        assert e.get("throughput_items_per_s") or e.get("latency_s")


def test_gpu_realism_reads_both_files_and_keeps_the_relabelled_table_apart():
    """bert_extra.json's L40S, L4 and A30 rows join gpu_inference.json's; the table headed L4 that a later
    commit relabelled A30 (``device_label_conflict``) is neither fitted nor scored. A latency-only row's
    throughput is batch / average latency."""
    G = benchmark("gpu_realism.py", "onnxperf_bench_gpu_realism_pub")
    rows = G.entries()
    files = {e["_file"] for e in rows}
    assert {"gpu_inference.json", "bert_extra.json"} <= files
    extra = [e for e in rows if e["_file"] == "bert_extra.json"]
    assert len(extra) == len(json.loads(EXTRA.read_text())["entries"])
    assert {e["device"] for e in extra} == {"l40s", "l4", "a30"}
    conflict = [e for e in extra if e.get("device_label_conflict")]
    assert conflict and all("label conflict" in G.not_comparable(e) for e in conflict)
    halves = G.split(rows)
    assert not any(e["_id"] in halves for e in conflict)
    e = next(e for e in extra if e["batch"] == 8 and not e.get("device_label_conflict"))
    assert G.published_throughput(e) == pytest.approx(8 / e["latency_s"]["avg"])


def test_mlperf_rows_quote_their_log_and_are_split_or_apart():
    """mlperf_resnet.json: every figure is the one its mlperf_log_summary.txt line quotes (latencies in ns there,
    s here); gpu_realism splits the comparable rows into the mlperf profile's fit and held-out halves and keeps
    MIG slices, MaxQ systems, Jetson rows that may use the DLAs and Server runs apart."""
    G = benchmark("gpu_realism.py", "onnxperf_bench_gpu_realism_mlperf")
    d = json.loads(MLPERF.read_text())
    for e in d["entries"]:
        src = e["source"]
        assert src["path"].endswith("mlperf_log_summary.txt") and src["url"].endswith(src["path"])
        assert e["mlperf"]["result"] == "VALID" and src["commit"] in src["url"]
        q = src["quoted"]
        if e["scenario"] in ("mlperf_offline", "mlperf_server"):
            assert f"{e['throughput_items_per_s']:g}" in q.replace(",", "") or str(e["throughput_items_per_s"]) in q
        else:
            for v in e["latency_s"].values():
                assert str(round(v * 1e9)) in q
    rows = [e for e in G.entries() if e["_file"] == G.LATE]
    assert {e["device"] for e in rows} <= {p for ps in G.CLASSES.values() for p in ps}
    halves = G.split(rows)
    apart = [e for e in rows if G.not_comparable(e)]
    assert apart and all(e["_id"] not in halves for e in apart)
    assert {e["_id"] for e in rows if e not in apart} == set(halves) and set(halves.values()) == {"fit", "held"}
    assert all(G.harness(e) for e in rows if e not in apart)  # NVIDIA's harness: they fit the mlperf profile
    why = {G.not_comparable(e).split(" ")[0] for e in apart}
    assert {"a", "MLPerf"} <= why  # MIG / MaxQ ("a ..."), Server
    assert all(e.get("mig") or e.get("power_capped") or e["scenario"] == "mlperf_server"
               or e.get("uses_dla") not in (None, False) for e in apart)
