"""Hostile hardware specs, check budgets and sizes, through the command line (issue 28, items 2, 3, 4).

A spec (``--hw FILE.toml``, ``hw show FILE``) or a budget (``check --budget FILE``, pyproject.toml's
``[tool.onnxperf.budget]``) with a figure that is tiny, infinite, NaN, past the float range or nested
hundreds of levels deep is refused when it is read: exit 2, one line on stderr naming the file and the
key, no traceback, no output file. A spec or budget at the edges of the bounds gives strict JSON (no
``NaN`` or ``Infinity``, which are not JSON).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from onnx import helper

from onnxperf import cli

from .util import const, model, vi

BIG = "1" + "0" * 400  # 10^400: past the float range (1.8e308)
HUGE = "9" * 5000      # more digits than Python reads as an int (4300)
SPEC = 'id = "box"\nname = "Box"\nkind = "cpu"\n'
GOOD_FIGURES = "memory_bandwidth_bytes_per_s = 50e9\n[peak_flops_per_s]\nfp32 = 1e12\n"


def _model(tmp_path: Path) -> Path:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"], name="act")]
    path = tmp_path / "m.onnx"
    path.write_bytes(model(nodes, [vi("x", ["batch", 8])], [vi("y", None)], [const("w", [8, 4])]).SerializeToString())
    return path


def _refused(capsys, out: Path, argv: list[str]) -> str:
    """Exit 2, one line on stderr, no traceback, no output file nor a temporary of it. (``--no-progress``
    where the command has it: on a loaded machine a step may take the 2 s after which progress shows.)"""
    quiet = [] if argv[0] == "hw" else ["--no-progress"]
    code = cli.main([*argv, *quiet, "-o", str(out)])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, err
    assert err.startswith("onnxperf: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "Error:" not in err  # no exception text (OverflowError: ...)
    assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]
    return err


def _strict_json(text: str) -> dict:
    """JSON as the standard has it: ``NaN`` and ``Infinity`` are refused."""
    def refuse(constant: str):
        raise AssertionError(f"{constant} in the JSON output")
    return json.loads(text, parse_constant=refuse)


def _deep_array(n: int) -> str:
    return "[" * n + "]" * n


def _deep_table(n: int) -> str:
    return "{a = " * n + "1" + "}" * n


# ---------------------------------------------------------------- spec files

BAD_SPECS = [  # (the file's figures, what the message names)
    ("memory_bandwidth_bytes_per_s = 5e-324\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = inf\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = nan\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = 0\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = -5e9\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    (f"memory_bandwidth_bytes_per_s = {BIG}\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = 1e400\n[peak_flops_per_s]\nfp32 = 1e12\n", "memory_bandwidth_bytes_per_s"),
    ("memory_bandwidth_bytes_per_s = 50e9\n[peak_flops_per_s]\nfp32 = 1e-320\n", "peak_flops_per_s.fp32"),
    ("memory_bandwidth_bytes_per_s = 50e9\n[peak_flops_per_s]\nfp32 = 1e12\nfp16 = inf\n", "peak_flops_per_s.fp16"),
    ("memory_bandwidth_bytes_per_s = 50e9\n[peak_flops_per_s]\nfp32 = 1e31\n", "peak_flops_per_s.fp32"),
    (f"memory_capacity_gib = 1e300\n{GOOD_FIGURES}", "memory_capacity_gib"),
    (f"memory_capacity_bytes = {BIG}\n{GOOD_FIGURES}", "memory_capacity_bytes"),
    (f"memory_capacity_bytes = nan\n{GOOD_FIGURES}", "memory_capacity_bytes"),
    (f"{GOOD_FIGURES}[efficiency]\nmatmul = 1e-320\n", "efficiency.matmul"),
    (f"{GOOD_FIGURES}[efficiency]\nmatmul = nan\n", "efficiency.matmul"),
    (f"{GOOD_FIGURES}[[memory_levels]]\nname = 'L1d'\ncapacity_bytes = 32768\nbandwidth_bytes_per_s = 5e-324\n",
     "memory_levels[0].bandwidth_bytes_per_s"),
    (f"{GOOD_FIGURES}[[memory_levels]]\nname = 'L1d'\ncapacity_bytes = {BIG}\nbandwidth_bytes_per_s = 1e11\n",
     "memory_levels[0].capacity_bytes"),
    ("memory_bandwidth_bytes_per_s = 50e9\n[cpu]\ncores = 8\nclock_ghz = 1e-320\nsimd_fp32_lanes = 8\n"
     "fma_units = 2\n", "clock_ghz"),
    (f"memory_bandwidth_bytes_per_s = 50e9\n[cpu]\ncores = {BIG}\nclock_ghz = 3.0\nsimd_fp32_lanes = 8\n"
     "fma_units = 2\n", "cores"),
    ("memory_bandwidth_bytes_per_s = 50e9\n[gpu]\ncores = 100000000000000000000000000000\nclock_ghz = 1000\n",
     "the fp32 peak that [gpu] gives"),
    (f"memory_bandwidth_bytes_per_s = {HUGE}\n[peak_flops_per_s]\nfp32 = 1e12\n", "too long to read"),
    (f"notes = {_deep_array(500)}\n{GOOD_FIGURES}", "nested more than 64 levels deep"),
    (f"notes = {_deep_array(5000)}\n{GOOD_FIGURES}", "nested more than 64 levels deep"),
    (f"notes = {_deep_table(500)}\n{GOOD_FIGURES}", "nested more than 64 levels deep"),
    (f"notes{'.a' * 5000} = 1\n{GOOD_FIGURES}", "nested more than 64 levels deep"),  # dotted keys: no recursion
    (f"memory_bandwidth_bytes_per_s = 50e9\n[peak_flops_per_s]\nfp32{'.a' * 100} = 1\n", "nested more than 64"),
]


@pytest.mark.parametrize("figures,named", BAD_SPECS, ids=range(len(BAD_SPECS)))
def test_a_bad_spec_is_refused_when_read(tmp_path, capsys, figures, named):
    spec = tmp_path / "box.toml"
    spec.write_text(SPEC + figures, encoding="utf-8")
    m = _model(tmp_path)
    for argv in (["summary", str(m), "--hw", str(spec), "--format", "json"],
                 ["report", str(m), "--hw", str(spec), "--format", "json"],
                 ["hw", "show", str(spec), "--format", "json"]):
        err = _refused(capsys, tmp_path / "out.json", argv)
        assert f"hardware spec {spec}: " in err and named in err, err
        assert len(err) < 400, err  # one readable line, not a 400-digit number or a 5,000-level repr


def test_a_bad_spec_message_says_the_bounds(tmp_path, capsys):
    spec = tmp_path / "box.toml"
    spec.write_text(SPEC + "memory_bandwidth_bytes_per_s = 5e-324\n[peak_flops_per_s]\nfp32 = 1e12\n")
    err = _refused(capsys, tmp_path / "out.json", ["summary", str(_model(tmp_path)), "--hw", str(spec)])
    assert err == (f"onnxperf: error: hardware spec {spec}: memory_bandwidth_bytes_per_s must be a positive finite "
                   "number from 0.001 to 1e+30 per second, got 5e-324\n")
    spec.write_text(SPEC + f"memory_bandwidth_bytes_per_s = {BIG}\n[peak_flops_per_s]\nfp32 = 1e12\n")
    err = _refused(capsys, tmp_path / "out.json", ["summary", str(_model(tmp_path)), "--hw", str(spec)])
    assert err.endswith("got 1000…000 (401 digits)\n")


@pytest.mark.parametrize("bandwidth,peak", [(1e-3, 1e-3), (1e30, 1e-3), (1e-3, 1e30), (1e30, 1e30)])
def test_a_spec_at_the_bounds_gives_strict_json(tmp_path, capsys, bandwidth, peak):
    """The extremes the bounds allow, with the extremes of the efficiency table: every figure derived
    from them is finite."""
    spec = tmp_path / "edge.toml"
    spec.write_text(SPEC + f"memory_bandwidth_bytes_per_s = {bandwidth!r}\nmemory_capacity_bytes = 1\n"
                    f"[peak_flops_per_s]\nfp32 = {peak!r}\nfp16 = {peak!r}\n[efficiency]\n"
                    '"default.compute" = 1e-12\n"default.memory" = 1e-12\noverhead_s = 1e30\n')
    m = _model(tmp_path)
    assert cli.main(["summary", str(m), "--hw", str(spec), "--format", "json"]) == 0
    _strict_json(capsys.readouterr().out)
    assert cli.main(["report", str(m), "--hw", str(spec), "--format", "json"]) == 0
    _strict_json(capsys.readouterr().out)
    assert cli.main(["hw", "show", str(spec), "--format", "json"]) == 0
    _strict_json(capsys.readouterr().out)


# ---------------------------------------------------------------- budgets

BAD_BUDGETS = [  # (the budget's text, what the message names)
    ('hw = "t4"\nmin_throughput = inf\n', "'min_throughput': must be a finite number, got inf"),
    ('hw = "t4"\nmin_throughput = nan\n', "'min_throughput': must be a finite number, got nan"),
    ('hw = "t4"\nmin_throughput = 5e-324\n', "'min_throughput': 5e-324 is outside 0.001 to 1e+30/s"),
    ('hw = "t4"\nmin_throughput = 0\n', "'min_throughput': must be positive"),
    ('hw = "t4"\nmin_throughput = -200\n', "'min_throughput': must be positive"),
    (f'hw = "t4"\nmin_throughput = {BIG}\n', "'min_throughput': 1000…000 (401 digits) is outside"),
    (f'hw = "t4"\nmin_throughput = "{BIG}k/s"\n', "'min_throughput'"),
    ('hw = "t4"\nmin_decode_tokens_per_s = -inf\n', "'min_decode_tokens_per_s': must be a finite number"),
    ('hw = "t4"\nmax_latency = 1e-320\n', "'max_latency': 1e-320 is outside 1e-12 to 1e+12 s"),
    ('hw = "t4"\nmax_latency = inf\n', "'max_latency': must be a finite number"),
    ('hw = "t4"\nmax_latency = "1e999999999s"\n', "'max_latency'"),
    ('hw = "t4"\nmax_latency = "1e9999999999999999999ms"\n', "'max_latency'"),
    ('hw = "t4"\nmax_time_to_first_token = nan\n', "'max_time_to_first_token': must be a finite number"),
    (f"max_params = {BIG}\n", "'max_params': 1000…000 (401 digits) is more than 1e+30"),
    (f'max_params = "{BIG}M"\n', "'max_params'"),
    (f"max_macs = {HUGE}\n", "too long to read"),
    (f'max_model_size = "{BIG}GiB"\n', "'max_model_size': bad size"),
    ('max_model_size = "1e400GiB"\n', "'max_model_size': bad size '1e400GiB': more than 1e+30 bytes"),
    ('max_model_size = "0.5"\n', "'max_model_size': bad size '0.5': must be at least 1 byte"),
    (f"max_total_memory = {BIG}\n", "'max_total_memory': 1000…000 (401 digits) bytes is more than 1e+30"),
    ("max_model_size = 1e400\n", "'max_model_size'"),
    (f"dims = {{ batch = {BIG} }}\n", "dims.batch: expected a positive integer up to 9223372036854775807"),
    (f"context = {BIG}\n", "'context': 1000…000 (401 digits) does not fit an int64"),
    (f"min_opset = {BIG}\n", "'min_opset': 1000…000 (401 digits) does not fit an int64"),
    (f'[lints]\nlarge_constant = "{BIG}KiB"\n', "'lints.large_constant': bad size"),
    (f"allowed_op_types = {_deep_array(500)}\n", "nested more than 64 levels deep"),
    (f"allowed_op_types = {_deep_array(5000)}\n", "nested more than 64 levels deep"),
    (f"dims = {_deep_table(500)}\n", "nested more than 64 levels deep"),
    (f"dims{'.a' * 5000} = 1\n", "nested more than 64 levels deep"),
]


@pytest.mark.parametrize("text,named", BAD_BUDGETS, ids=range(len(BAD_BUDGETS)))
def test_a_bad_budget_is_refused_when_read(tmp_path, capsys, text, named):
    budget = tmp_path / "budget.toml"
    budget.write_text(text, encoding="utf-8")
    err = _refused(capsys, tmp_path / "out.json",
                   ["check", str(_model(tmp_path)), "--budget", str(budget), "--format", "json"])
    assert str(budget) in err and named in err, err
    assert len(err) < 400, err


def test_a_bad_pyproject_budget_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()  # the search for pyproject.toml stops here
    m = _model(tmp_path)
    monkeypatch.chdir(tmp_path)
    for text, named in [('[tool.onnxperf.budget]\nhw = "t4"\nmin_throughput = inf\n', "'min_throughput'"),
                        (f"[tool.onnxperf.budget]\nmax_params = {BIG}\n", "'max_params'"),
                        (f"[tool.other]\nx = {_deep_array(5000)}\n[tool.onnxperf.budget]\nmax_params = 5\n",
                         "nested more than 64 levels deep")]:
        (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
        err = _refused(capsys, tmp_path / "out.json", ["check", str(m), "--format", "json"])
        assert "pyproject.toml" in err and named in err, err


def test_a_budget_at_the_bounds_gives_strict_json(tmp_path, capsys):
    budget = tmp_path / "budget.toml"
    budget.write_text('hw = "t4"\nmin_throughput = 1e30\nmax_latency = 1e-12\nmax_params = 1000000000000000000000000000000\n'
                      'max_model_size = "1000000000000000000GiB"\nmax_macs = 0\n', encoding="utf-8")
    assert cli.main(["check", str(_model(tmp_path)), "--budget", str(budget), "--format", "json"]) == 1
    d = _strict_json(capsys.readouterr().out)
    limits = {r["key"]: r["limit"] for r in d["models"][0]["budgets"]}
    assert limits["min_throughput"] == 1e30 and limits["max_latency"] == 1e-12
    assert limits["max_params"] == 10 ** 30 and limits["max_model_size"] == 10 ** 18 * 2 ** 30


# ---------------------------------------------------------------- sizes on the command line

@pytest.mark.parametrize("size,why", [(f"{BIG}GiB", "more than 1e+30 bytes"), ("1e400", "more than 1e+30 bytes"),
                                      ("1e999999999GiB", "more than 1e+30 bytes"), ("0.5", "at least 1 byte"),
                                      ("0", "at least 1 byte"), ("lots", "expected e.g. 8GiB")])
def test_a_bad_memory_size_is_refused(tmp_path, capsys, size, why):
    m = _model(tmp_path)
    for argv in (["summary", str(m), "--memory", size, "--format", "json"],
                 ["check", str(m), "--memory", size, "--format", "json"]):
        err = _refused(capsys, tmp_path / "out.json", argv)
        assert "bad size" in err and why in err, err
