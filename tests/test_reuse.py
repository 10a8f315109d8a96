"""The cache-aware roofline (issue 18, point 5): reuse distances place each byte in a level, each
level has its own bandwidth, the plain DRAM roofline stays available."""

import dataclasses

import pytest
from onnx import helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.hardware.files import read_spec_file, to_toml
from onnxperf.hardware.spec import MemoryLevel
from onnxperf.predict.reuse import _split, level_bytes
from onnxperf.predict.roofline import roofline

from .util import const, model, vi

F = 4
KIB = 1024


def _chain(n_ops: int, elems: int):
    """x -> Relu -> Relu -> ... (n_ops): each op reads what the one before wrote."""
    names = ["x"] + [f"t{i}" for i in range(n_ops)]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]]) for i in range(n_ops)]
    return model(nodes, [vi("x", [elems])], [vi(names[-1], None)])


def test_split_serves_a_read_from_the_innermost_level_holding_distance_plus_size():
    """A read of s bytes at reuse distance d hits whole in the first level with C_k >= d + s."""
    caps = (100, 1000)
    assert _split(50, 0, caps) == [50, 0, 0]
    assert _split(50, 50, caps) == [50, 0, 0]
    assert _split(50, 80, caps) == [0, 50, 0]
    assert _split(500, 600, caps) == [0, 0, 500]
    assert _split(50, 5000, caps) == [0, 0, 50]


def test_producer_to_consumer_reuse_in_a_chain():
    """Each Relu reads the tensor the previous one just wrote (distance 0): from L1 when it fits,
    and writes its output at the innermost level that holds it. The graph input x was last touched
    in the previous inference: its distance is everything touched since."""
    elems = 1024  # 4 KiB tensors
    s = elems * F
    a = onnxperf.analyze(_chain(3, elems))
    caps = (8 * KIB, 64 * KIB)
    lb = level_bytes(a, caps)
    k0, k1, k2 = (n.key for n in a.main_nodes)
    # the second and third Relu read their input from L1 and write to L1
    assert lb[k1] == (2 * s, 0, 0) and lb[k2] == (2 * s, 0, 0)
    # the first reads x, whose distance is t0 + t1 + t2 = 12 KiB: 0 of it within 8 KiB, all of it within 64 KiB
    assert lb[k0] == (s, s, 0)
    # every byte the rules count is placed somewhere
    for n in a.main_nodes:
        assert sum(lb[n.key]) == pytest.approx(n.bytes_read + n.bytes_written)


def test_tensors_larger_than_every_level_go_to_main_memory():
    elems = 64 * KIB  # 256 KiB tensors, caches of 8 and 64 KiB
    a = onnxperf.analyze(_chain(2, elems))
    lb = level_bytes(a, (8 * KIB, 64 * KIB))
    s = elems * F
    for n in a.main_nodes:
        assert lb[n.key] == (0, 0, 2 * s)


def test_views_are_aliases_not_traffic():
    """x -> Relu -> Reshape -> Relu: the second Relu reads the first's output through the view at distance 0."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Reshape", ["a", "shp"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    import onnx

    m = model(nodes, [vi("x", [16, 16])], [vi("y", None)], [const("shp", [1], onnx.TensorProto.INT64, [256])])
    a = onnxperf.analyze(m)
    lb = level_bytes(a, (4 * KIB,))
    last = a.main_nodes[-1]
    assert lb[last.key] == (2 * 256 * F, 0)
    assert a.main_nodes[1].key not in lb or sum(lb[a.main_nodes[1].key]) == 0


def _spec_with_levels():
    base = load_spec("xeon-silver-4210x2")
    levels = (MemoryLevel("L1d", 8 * KIB, 400e9, "test"), MemoryLevel("L2", 64 * KIB, 200e9, "test"))
    return dataclasses.replace(base, memory_levels=levels)


def test_cache_aware_time_is_bytes_over_each_levels_bandwidth():
    """m = Σ_k b_k / β_k; a plain spec (:plain) charges every byte at main memory."""
    elems = 1024
    a = onnxperf.analyze(_chain(3, elems))
    spec = _spec_with_levels()
    r = roofline(a, spec)
    s = elems * F
    assert r.nodes[1].time_s == pytest.approx(max(r.nodes[1].ops / spec.peak_for("float32"), 2 * s / 400e9))
    assert r.nodes[0].time_s == pytest.approx(max(r.nodes[0].ops / spec.peak_for("float32"), s / 400e9 + s / 200e9))
    assert dict(r.bytes_by_level) == {"L1d": 5 * s, "L2": s, "DRAM": 0}
    plain = roofline(a, load_spec("xeon-silver-4210x2"))
    assert plain.bytes_by_level == ()
    assert plain.nodes[1].time_s == pytest.approx(2 * s / spec.memory_bandwidth_bytes_per_s)
    assert r.latency_s < plain.latency_s


def test_memory_levels_round_trip_and_are_checked(tmp_path):
    spec = _spec_with_levels()
    p = tmp_path / "s.toml"
    p.write_text(to_toml(spec))
    assert read_spec_file(p).memory_levels == spec.memory_levels
    with pytest.raises(onnxperf.base.errors.OptionError, match="larger than the level before"):
        dataclasses.replace(spec, memory_levels=(MemoryLevel("L2", 64 * KIB, 1e11), MemoryLevel("L1d", 8 * KIB, 4e11)))
    p.write_text(to_toml(spec).replace("capacity_bytes = 8192", "capacity_bytes = -1"))
    with pytest.raises(onnxperf.base.errors.OptionError, match="capacity_bytes"):
        read_spec_file(p)


def test_plain_suffix_drops_the_levels(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(to_toml(_spec_with_levels()))
    s = load_spec(f"{p}:plain")
    assert s.memory_levels == () and s.id.endswith(":plain")
    assert load_spec(str(p)).memory_levels


def test_a_gpu_l2_writes_to_dram_and_counts_a_kernels_own_writes_in_its_reads():
    """level_bytes(gpu=True) (issue 29; measured on an H200, benchmarks/results/gpu_l2.md): every byte a
    node writes is charged at main memory, and a read hits a level only when its distance, its size and
    the node's own writes fit: d + s + w <= C. x -> Relu -> Relu -> Relu on tensors of s bytes: each
    Relu reads what the one before wrote (d = 0) and writes s: with C = 2s the read hits, with C < 2s not."""
    from onnxperf.predict.reuse import level_bytes_rw

    elems = 1024
    s = elems * F
    a = onnxperf.analyze(_chain(3, elems))
    k0, k1, k2 = (n.key for n in a.main_nodes)
    fits = level_bytes(a, (2 * s,), gpu=True)
    assert fits[k1] == (s, s) and fits[k2] == (s, s)  # the read from L2, the write to main memory
    tight = level_bytes(a, (2 * s - 1,), gpu=True)
    assert tight[k1] == (0, 2 * s)  # d + s + w = 2s > C: the read misses (whole, as _split places reads)
    cpu = level_bytes(a, (2 * s - 1,))
    assert cpu[k1] == (2 * s, 0)  # a CPU cache: read and write both in the level
    rw = level_bytes_rw(a, (2 * s,), gpu=True)
    assert rw[k1] == ((s, 0), (0, s))
    for n in a.main_nodes:  # the two views add up to the totals
        assert tuple(x + y for x, y in zip(*rw[n.key])) == pytest.approx(fits[n.key])


@pytest.mark.parametrize("gpu", [False, True])
def test_one_replay_for_many_capacity_sets_equals_one_replay_each(gpu):
    """level_bytes_rw_each (issue 29: benchmarks/llm_realism.py replays a point once for its 8 L2 sizes) gives,
    for each set of capacities, exactly what level_bytes_rw gives for it alone; level_bytes_and_rw both views."""
    from onnxperf.predict.reuse import level_bytes_and_rw, level_bytes_rw, level_bytes_rw_each

    elems = 1024
    s = elems * F
    a = onnxperf.analyze(_chain(5, elems))
    sets = ((s,), (2 * s - 1,), (2 * s,), (s, 3 * s), (64 * s,))
    each = level_bytes_rw_each(a, sets, gpu=gpu)
    assert each == [level_bytes_rw(a, caps, gpu=gpu) for caps in sets]
    both, rw = level_bytes_and_rw(a, (2 * s,), gpu=gpu)
    assert both == level_bytes(a, (2 * s,), gpu=gpu) and rw == each[2]


def test_writes_held_charge_an_output_that_fits_where_it_lands():
    """writes_held (a runtime profile's ``gpu.l2_writes``, as NVIDIA's MLPerf harness: activation buffers
    rewritten in place while the L2 holds them): x -> Relu -> Relu -> Relu on tensors of s bytes, an L2 of
    C = 2s. A write of s <= C lands in the L2 (the GPU rule puts it at DRAM); the reads keep the GPU rule,
    d + s + w <= C; an output larger than C still reaches DRAM."""
    from onnxperf.predict.reuse import level_bytes_rw

    elems = 1024
    s = elems * F
    a = onnxperf.analyze(_chain(3, elems))
    k0, k1, k2 = (n.key for n in a.main_nodes)
    held = level_bytes_rw(a, (2 * s,), gpu=True, writes_held=True)
    assert held[k1] == ((s, 0), (s, 0)) and held[k2] == ((s, 0), (s, 0))
    tight = level_bytes_rw(a, (2 * s - 1,), gpu=True, writes_held=True)
    assert tight[k1] == ((0, s), (s, 0))  # d + s + w = 2s > C: the read misses; the write (s <= C) stays
    small = level_bytes_rw(a, (s - 1,), gpu=True, writes_held=True)
    assert small[k1][1] == (0, s)  # an output larger than the L2 is written to DRAM
    assert level_bytes_rw(a, (2 * s,), gpu=True)[k1] == ((s, 0), (0, s))  # without: the GPU rule
