"""Bandwidth per memory level (``onnxperf.hardware.levels``): sysfs parsing on a fake tree, working-set
sizing from named cache sizes, the warnings, and a tiny real measurement (no wall-clock assertions)."""

import json
import math

import pytest

from onnxperf.base.errors import OptionError
from onnxperf.hardware import levels
from onnxperf.hardware.levels import CacheLevel, LevelBandwidth, cache_levels, check_levels, measure_levels, parse_cpu_list, parse_size, working_sets

KiB, MiB = 2 ** 10, 2 ** 20


def _cache(root, cpu, index, level, kind, size, shared):
    d = root / f"cpu{cpu}" / "cache" / f"index{index}"
    d.mkdir(parents=True)
    for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
        (d / name).write_text(f"{value}\n", encoding="utf-8")


@pytest.fixture
def fake_sysfs(tmp_path, monkeypatch):
    """Two CPUs: private 48 KiB L1d and 2 MiB L2 each, an L1 instruction cache each, one 32 MiB L3 shared."""
    root = tmp_path / "cpu"
    for cpu in (0, 1):
        _cache(root, cpu, 0, 1, "Data", "48K", cpu)
        _cache(root, cpu, 1, 1, "Instruction", "32K", cpu)
        _cache(root, cpu, 2, 2, "Unified", "2048K", cpu)
        _cache(root, cpu, 3, 3, "Unified", "32768K", "0-1")
    monkeypatch.setattr(levels, "SYS_CPU", root)
    return root


def test_cache_levels_reads_a_fake_sysfs_tree(fake_sysfs):
    assert cache_levels([0, 1]) == (
        CacheLevel("L1d", 48 * KiB, instances=2, shared_by=1),
        CacheLevel("L2", 2048 * KiB, instances=2, shared_by=1),
        CacheLevel("L3", 32768 * KiB, instances=1, shared_by=2),
    )
    # one CPU uses one instance of each level; the L3 is still shared by two CPUs
    l1, l2, l3 = cache_levels([0])
    assert (l1.instances, l2.instances, l3.instances, l3.shared_by) == (1, 1, 1, 2)
    assert l3.total_bytes == 32 * MiB


def test_cache_levels_skips_what_it_cannot_read(fake_sysfs, monkeypatch):
    (fake_sysfs / "cpu1" / "cache" / "index2" / "size").write_text("garbage\n", encoding="utf-8")
    (fake_sysfs / "cpu1" / "cache" / "index0" / "shared_cpu_list").unlink()  # falls back to the CPU itself
    got = {c.name: c for c in cache_levels([0, 1, 7])}  # cpu7 has no directory
    assert got["L2"].instances == 1 and got["L1d"].instances == 2
    monkeypatch.setattr(levels, "SYS_CPU", fake_sysfs / "missing")
    assert cache_levels([0, 1]) == ()


def test_parsers():
    assert parse_size("32K") == 32 * KiB and parse_size("2M") == 2 * MiB and parse_size("512") == 512
    assert parse_size("") is None and parse_size("big") is None
    assert parse_cpu_list("0-3,8,10-11") == frozenset({0, 1, 2, 3, 8, 10, 11})
    assert parse_cpu_list("") is None and parse_cpu_list("a-b") is None


L1, L2, L3 = 48 * KiB, 2 * MiB, 32 * MiB
CACHES = (CacheLevel("L1d", L1, 2, 1), CacheLevel("L2", L2, 2, 1), CacheLevel("L3", L3, 1, 2))


def _sizes(sets):
    return {ws.level: ws.bytes_per_thread for ws in sets}


def test_working_sets_half_way_between_a_threads_shares():
    threads = 2
    got = _sizes(working_sets(CACHES, threads))
    l3_share = L3 // threads                         # one L3 split between the two threads
    dram_total = max(levels.DRAM_LLC_FACTOR * L3, levels.DRAM_MIN_BYTES)
    assert got == {"L1d": L1 // 2, "L2": (L1 + L2) // 2, "L3": (L2 + l3_share) // 2,
                   "DRAM": dram_total // threads}
    one = _sizes(working_sets(CACHES, 1))           # one thread may use the whole L3
    assert one["L3"] == (L2 + L3) // 2 and one["DRAM"] == dram_total
    # DRAM within half of the available memory; 4 x a large LLC above the 256 MiB floor
    assert _sizes(working_sets(CACHES, threads, mem_available_bytes=200 * MiB))["DRAM"] == 100 * MiB // threads
    big = CACHES[:2] + (CacheLevel("L3", 256 * MiB, 1, 2),)
    assert _sizes(working_sets(big, threads))["DRAM"] == 4 * 256 * MiB // threads
    # no sysfs: DRAM only, at the floor; short mode: a small cache-resident "DRAM"
    assert _sizes(working_sets((), threads)) == {"DRAM": levels.DRAM_MIN_BYTES // threads}
    assert _sizes(working_sets(CACHES, threads, short=True))["DRAM"] == levels.SHORT_DRAM_BYTES // threads


def test_working_sets_skip_a_level_no_larger_per_thread_than_the_one_below():
    caches = (CacheLevel("L1d", L1, 4, 1), CacheLevel("L2", L2, 4, 1), CacheLevel("L3", 4 * MiB, 1, 4))
    got = _sizes(working_sets(caches, 4))            # 1 MiB of L3 per thread, under the 2 MiB L2
    assert list(got) == ["L1d", "L2", "DRAM"]
    with pytest.raises(OptionError):
        working_sets(CACHES, 0)


def _level(name, gb_per_s, seconds=(1.0,)):
    """A synthetic level whose fastest run reads ``gb_per_s`` GB in one second."""
    return LevelBandwidth(name, 1024, 512, 2, 1, gb_per_s * 1e9, tuple(seconds), "synthetic")


def test_ordering_and_spread_warnings_on_a_synthetic_result():
    ordered = [_level("L1d", 400), _level("L2", 200), _level("L3", 180), _level("DRAM", 50)]
    assert check_levels(ordered) == []
    swapped = [_level("L1d", 400), _level("L2", 170), _level("L3", 180), _level("DRAM", 50)]
    (w,) = check_levels(swapped)
    assert w.startswith("L3 (180.0 GB/s) is faster than L2 (170.0 GB/s)")
    noisy = _level("DRAM", 50, seconds=(1.0, 1.25, 1.1))
    assert noisy.spread == pytest.approx(0.25)
    assert noisy.best_bytes_per_s == pytest.approx(50e9) and noisy.median_bytes_per_s == pytest.approx(50e9 / 1.1)
    (w,) = check_levels(ordered[:3] + [noisy])
    assert w.startswith("DRAM: the runs disagree by 25%")
    assert check_levels(ordered[:3] + [noisy], spread_warning=None) == []


@pytest.fixture(scope="module")
def tiny():
    return measure_levels(repeats=1, short=True)


def test_tiny_measurement_gives_positive_finite_figures(tiny):
    names = [lb.level for lb in tiny.levels]
    assert names[-1] == "DRAM" and len(names) == len(set(names))
    assert names[:-1] == [ws.level for ws in working_sets(tiny.caches, tiny.threads)][:-1]
    for lb in tiny.levels:
        assert len(lb.seconds) == 1 and lb.passes >= 1
        assert lb.bytes_per_run == lb.working_set_bytes * lb.passes == lb.bytes_per_thread * lb.threads * lb.passes
        for x in (lb.best_bytes_per_s, lb.median_bytes_per_s):
            assert math.isfinite(x) and x > 0
        assert lb.spread == 0.0


def test_tiny_measurement_round_trips_through_json(tiny):
    d = tiny.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert list(d) == ["schema", "when", "short", "threads", "repeats", "caches", "levels", "warnings", "notes"]
    assert [x["level"] for x in d["levels"]] == [lb.level for lb in tiny.levels]


def test_no_caches_measures_dram_only_and_bad_options_raise():
    r = measure_levels(repeats=1, short=True, caches=(), threads=1)
    assert [lb.level for lb in r.levels] == ["DRAM"] and r.threads == 1
    assert any("no cache sizes" in n for n in r.notes)
    for bad in (0, True, 1.5):
        with pytest.raises(OptionError):
            measure_levels(repeats=bad)
    with pytest.raises(OptionError):
        measure_levels(threads=0)


def test_buffers_start_on_a_page_boundary():
    """An L1 buffer off a 64-byte line halves the L1 figure (split loads): every buffer is page-aligned."""
    for rows, cols in ((1, 128), (2, 2048), (3, 1000)):
        buf = levels._aligned((rows, cols))
        assert buf.shape == (rows, cols) and buf.flags.c_contiguous and buf.ctypes.data % 4096 == 0
