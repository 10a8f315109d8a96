"""benchmarks/state_probe.py: the measured file is whole, the correlation is Pearson's, and the page is what
``report`` writes from it."""

from __future__ import annotations

import json
import math

import pytest

from .util import benchmark

SP = benchmark("state_probe.py", "onnxperf_bench_state_probe")


def test_correlation_is_pearsons():
    assert SP.correlation([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert SP.correlation([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    # x = (-1, 0, 1), y = (1, 0, 2) centred (0, -1, 1): Σxy = 1, |x| = √2, |y| = √2 -> 0.5
    assert SP.correlation([1.0, 2.0, 3.0], [2.0, 1.0, 3.0]) == pytest.approx(0.5)
    assert SP.correlation([1.0, 1.0], [1.0, 2.0]) is None


def test_slope_is_least_squares():
    assert SP.slope([0.0, 1.0, 2.0], [1.0, 0.5, 0.0]) == pytest.approx(-0.5)
    assert SP.slope([1.0, 1.0], [0.0, 1.0]) is None


def test_the_report_reads_each_versions_blocks_and_errors():
    """Blocks whose time is exactly inverse to the probe's rate give -1; spreads are max - min in points."""
    def win(rate, t):
        return {"measured_s": t, "matmul_flops_per_s": rate, "dispatch_s_per_node": 1e-6 * (1 + t), "triad_bytes_per_s": 1e10}
    res = {"models": ["m"], "rounds": 2, "runs": 40, "blocks": 10, "started": "now",
           "versions": {"baseline": {"commit": "a", "spec": "a.toml"}, "this": {"commit": "b", "spec": "b.toml"}},
           "validations": [
               {"round": 0, "model": "m", "version": "this", "raw_error": 0.10, "normalized_error": -0.02,
                "windows": [win(100e9, 0.010), win(200e9, 0.005)]},
               {"round": 1, "model": "m", "version": "this", "raw_error": -0.20, "normalized_error": 0.01,
                "windows": [win(50e9, 0.020)]},
               {"round": 0, "model": "m", "version": "baseline", "raw_error": 0.0, "normalized_error": 0.3,
                "windows": [win(100e9, 0.010), win(100e9, 0.020)]},
               {"round": 1, "model": "m", "version": "baseline", "raw_error": 0.0, "normalized_error": 0.1,
                "windows": [win(100e9, 0.015)]}]}
    text = SP.report([res])
    this = next(ln for ln in text.splitlines() if ln.startswith("| m | this |"))
    cells = [c.strip() for c in this.split("|")[1:-1]]
    assert cells[2] == "3" and cells[3] == "-1.00" and cells[4] == "-1.00"  # t = 1e9 / rate: slope -1
    assert cells[6] == "-2.0%, +1.0%" and cells[7] == "3.0" and cells[9] == "30.0"
    base = next(ln for ln in text.splitlines() if ln.startswith("| m | baseline |"))
    assert [c.strip() for c in base.split("|")[1:-1]][3] == "-"  # a constant probe: no correlation


@pytest.mark.parametrize("path", SP.RUNS_SHOWN, ids=lambda p: p.name)
def test_the_measured_file_alternates_both_versions_every_round(path):
    res = json.loads(path.read_text())
    assert res["runs"] == SP.RUNS and res["blocks"] == SP.BLOCKS
    for model in res["models"]:
        for name in ("baseline", "this"):
            vs = [x for x in res["validations"] if x["model"] == model and x["version"] == name]
            assert sorted(x["round"] for x in vs) == list(range(res["rounds"]))
            for x in vs:
                assert x["windows"] and all(math.isfinite(w["measured_s"]) and w["measured_s"] > 0 for w in x["windows"])


def test_the_page_is_what_report_writes():
    """The page is ``report`` and then the ``elasticity`` section (its own command, which rewrites only it)."""
    page = SP.OUT.read_text()
    head, sep, _ = page.partition(SP.ELASTICITY_HEAD)
    assert sep, "the elasticity section is on the page"
    assert SP.report([json.loads(p.read_text()) for p in SP.RUNS_SHOWN]) == head.rstrip("\n") + "\n"
