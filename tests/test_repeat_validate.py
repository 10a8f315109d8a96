"""benchmarks/repeat_validate.py (issue 30, item 5): two validations of the same models an hour apart, their
state-normalized errors within 5 points of each other."""

from __future__ import annotations

import json
from pathlib import Path

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]


def _load():
    return benchmark("repeat_validate.py", "onnxperf_bench_repeat")


def _run(path: Path, label: str, rows):
    drift = {"triad_bytes_per_s": 0.1, "matmul_flops_per_s": 0.0, "dispatch_s_per_node": -0.05}
    path.write_text(json.dumps({"label": label, "started": "2026-11-28 10:00:00 UTC", "spec": "probed-vm-calibrated",
                                "spec_file": "spec.toml", "runs": 20,
                                "models": [{"model": m, "raw_error": r, "normalized_error": n,
                                            "drift_since_calibration": drift} for m, r, n in rows]}))
    return path


def test_compare_counts_the_models_within_five_points(tmp_path, capsys):
    mod = _load()
    a = _run(tmp_path / "a.json", "A", [("m1", 0.10, 0.05), ("m2", -0.20, -0.10), ("m3", 0.0, 0.02)])
    b = _run(tmp_path / "b.json", "B", [("m1", 0.18, 0.099), ("m2", -0.05, -0.16), ("m3", 0.01, 0.02)])
    out = tmp_path / "repeat.md"
    assert mod.main(["compare", str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    rows = {ln.split("|")[1].strip(): ln for ln in text.splitlines() if ln.startswith("| m")}
    assert "| +4.9 | +8.0 | yes |" in rows["m1"]   # 4.9 points apart: within, though the raw moved 8
    assert "| -6.0 | +15.0 | no |" in rows["m2"]
    assert "2 of 3 models within 5 points." in text


def test_a_run_without_a_normalized_verdict_counts_as_not_within(tmp_path):
    """Every block of one run on a contended host: no normalized error; the pair is listed, not skipped, and
    counted as not within."""
    mod = _load()
    a = _run(tmp_path / "a.json", "A", [("m1", 0.10, 0.05), ("m2", 0.0, 0.01)])
    b = _run(tmp_path / "b.json", "B", [("m1", None, None), ("m2", 0.01, 0.02)])
    out = tmp_path / "repeat.md"
    assert mod.main(["compare", str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| m1 | +10.0% | +5.0% | - | - | - | - | no verdict |" in text
    assert "1 of 2 models within 5 points. 1 without a normalized verdict" in text
