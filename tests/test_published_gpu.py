"""benchmarks/published/gpu_inference.json: every entry is sourced and well formed (issue 18 input)."""

import json
from pathlib import Path

from onnxperf.hardware import load_spec

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "published" / "gpu_inference.json"


def test_entries_are_sourced_and_name_known_presets():
    d = json.loads(PATH.read_text())
    assert d["schema"] == "onnxperf.published-gpu/1" and d["entries"]
    for e in d["entries"]:
        assert e["model"] and e["precision"] and e["runtime_class"] in ("tensorrt", "framework", "triton")
        load_spec(e["device"])  # a preset of onnxperf
        src = e["source"]
        assert src["repo"] and src["path"] and len(src["commit"]) == 40
        assert e.get("throughput_items_per_s") or e.get("latency_s")
