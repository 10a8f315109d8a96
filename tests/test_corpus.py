"""The corpus of real exports (models/corpus/, issue 14 point 4): every model, at the dims its
fixture binds, gets a concrete shape for every tensor, no node left uncosted, no dependence on
onnxruntime's symbolic inference, and MACs within 0.5% of a truth obtained independently of
onnxperf (torch.utils.flop_counter / 2 on the same module and shapes, the TF profiler for Keras,
the float source for quantized, fp16 and fused variants, formulas of the fitted estimator for
scikit-learn). The fixtures and the scripts that made the files: models/corpus/make_*.py."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import onnx
import pytest

import onnxperf

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("corpus_*.json"))
CORPUS = [m for f in FIXTURES for m in json.loads(f.read_text(encoding="utf-8"))["models"]]
TOLERANCE = 0.005

#: a truth that covers only the data-independent part of the model (the rest scales with a count
#: the data decides, e.g. proposals after NMS): compared with the nodes costed exactly
DATA_INDEPENDENT = "data-independent"


def _id(m: dict) -> str:
    return Path(m["file"]).stem


@pytest.fixture(scope="module")
def analyses() -> dict[str, onnxperf.Analysis]:
    return {}


def _analysis(cache: dict, m: dict) -> onnxperf.Analysis:
    key = m["file"]
    if key not in cache:
        cache[key] = onnxperf.analyze(ROOT / m["file"], dims=m.get("dims") or {},
                                      input_shapes={k: tuple(v) for k, v in (m.get("input_shapes") or {}).items()})
    return cache[key]


def test_the_corpus_has_at_least_30_real_exports():
    assert len(CORPUS) >= 30
    assert len({m["file"] for m in CORPUS}) == len(CORPUS)
    for m in CORPUS:
        assert (ROOT / m["file"]).is_file(), m["file"]
        assert m["truth_macs"] > 0 and m["truth_method"], m["file"]


@pytest.mark.parametrize("m", CORPUS, ids=_id)
def test_every_tensor_shaped_and_every_node_costed(m, analyses):
    a = _analysis(analyses, m)
    uncosted = collections.Counter((n.op_type, n.status) for n in a.nodes
                                   if n.status in ("unknown_shape", "unsupported"))
    assert not uncosted, dict(uncosted)
    assert a.totals.complete
    assert "onnxruntime-symbolic" not in a.shape_engines, a.notes
    names = _tensor_names(ROOT / m["file"], a)  # what the nodes read and write (value_info may hold stale names)
    seqs = a.sequences or {}
    # a sequence value is shaped when its length and its elements' shape are known (an empty one: its length)
    missing = sorted(x for x in names if (a.tensors.get(x) is None or not a.tensors[x].is_static) and not (
        x in seqs and seqs[x].length is not None and (seqs[x].length == 0 or seqs[x].elem_shape is not None
                                                      and all(isinstance(d, int) for d in seqs[x].elem_shape))))
    assert not missing, (len(missing), missing[:5])


@pytest.mark.parametrize("m", CORPUS, ids=_id)
def test_macs_match_the_independent_truth(m, analyses):
    a = _analysis(analyses, m)
    truth = m["truth_macs"]
    if "graph input" in m.get("branch_selector", ""):
        # an If whose cond is a graph input (optimum's merged decoders: use_cache_branch): no shape tells
        # the branch. Each branch's rows count its truth; the total is the larger, an upper bound
        ifn = next(n for n in a.main_nodes if n.op_type == "If")
        for branch, want in m["branch_macs"].items():
            got = sum(n.macs for n in a.nodes if n.scope == f"{ifn.key}/{branch}")
            assert abs(got - want) <= TOLERANCE * want, (branch, got, want)
        assert a.totals.bound == "upper" and dict(a.totals.upper_bounded) == {"If": 1}
        upper = max(m["branch_macs"].values())
        assert abs(ifn.macs - upper) <= TOLERANCE * upper and ifn.bound == "upper"
        assert truth in m["branch_macs"].values()
    elif m.get("truth_covers", "").startswith(DATA_INDEPENDENT):
        exact = sum(n.macs for n in a.main_nodes if n.exact)
        assert abs(exact - truth) <= TOLERANCE * truth, (exact, truth)
        assert a.totals.macs >= truth  # the data-dependent part is an upper bound on top
    else:
        assert abs(a.totals.macs - truth) <= TOLERANCE * truth, (a.totals.macs, truth, a.totals.macs / truth)


def test_fasterrcnn_box_head_is_bounded_by_the_proposal_limit(analyses):
    """The RoI box head runs once per proposal left after NMS (at most 150 at test time in
    fasterrcnn_mobilenet_v3_large_320_fpn): its MACs are that bound times the head's per-proposal
    MACs (TwoMLPHead 256·7·7 -> 1024 -> 1024, FastRCNNPredictor 1024 -> 91 classes and 91·4 boxes),
    marked as an upper bound."""
    m = next((m for m in CORPUS if "fasterrcnn" in m["file"]), None)
    if m is None:
        pytest.skip("no Faster R-CNN export in the corpus")
    a = _analysis(analyses, m)
    proposals, pooled, rep, classes = m.get("max_proposals_per_image", 150), 256 * 7 * 7, 1024, 91
    head = pooled * rep + rep * rep + rep * classes + rep * classes * 4
    bounded = sum(n.macs for n in a.main_nodes if not n.exact)
    assert bounded == proposals * head
    assert a.totals.macs == m["truth_macs"] + proposals * head
    assert any("upper bound" in note for note in a.notes)


def _graphs(g: onnx.GraphProto):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(a.g)
            for sub in a.graphs:
                yield from _graphs(sub)


def _tensor_names(path: Path, a: onnxperf.Analysis) -> set[str]:
    """Every tensor a node of the model (main graph or a body) reads or writes, by the names of the
    analyzed model (a body's name that another scope defines too is renamed there: see onnxperf.graph.scopes)."""
    model = a.loaded.proto if a.loaded is not None else onnx.load(str(path), load_external_data=False)
    return {x for g in _graphs(model.graph) for n in g.node for x in (*n.input, *n.output) if x}


def _op_types(path: Path) -> set[tuple[str, str]]:
    model = onnx.load(str(path), load_external_data=False)
    out: set[tuple[str, str]] = set()

    def walk(g: onnx.GraphProto) -> None:
        for n in g.node:
            out.add((n.domain or "", n.op_type))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sub in a.graphs:
                    walk(sub)

    walk(model.graph)
    return out


#: what the corpus must hold (issue 14 point 4): exporters' and runtimes' op vocabularies
REQUIRED_OPS = {
    ("com.microsoft", "Attention"), ("com.microsoft", "SkipLayerNormalization"),
    ("com.microsoft", "QAttention"), ("com.microsoft", "FusedConv"),
    ("", "If"), ("", "NonMaxSuppression"), ("", "Attention"), ("", "RotaryEmbedding"),
    ("", "RMSNormalization"), ("", "QLinearConv"), ("", "DequantizeLinear"), ("", "MatMulInteger"),
    ("ai.onnx.ml", "Scaler"),
    # control flow as the exporters write it (issue 26)
    ("", "Loop"), ("", "Scan"), ("", "SequenceInsert"), ("", "ConcatFromSequence"),
}

#: the exporters whose control flow the corpus must hold (issue 26, point 6), by the model's producer_name, and
#: the fewest such exports
CONTROL_FLOW_PRODUCERS = {"tf2onnx", "pytorch", "optimum-onnx", "jax2onnx", "skl2onnx"}
CONTROL_FLOW_EXPORTS = 10


def test_the_corpus_covers_the_exporters_and_runtimes_it_must():
    ops: set[tuple[str, str]] = set()
    for m in CORPUS:
        ops |= _op_types(ROOT / m["file"])
    assert not REQUIRED_OPS - ops, sorted(REQUIRED_OPS - ops)
    gelu = {("com.microsoft", "FastGelu"), ("com.microsoft", "BiasGelu"), ("com.microsoft", "Gelu")}
    assert ops & gelu
    assert ops & {("com.microsoft", "FusedMatMul"), ("com.microsoft", "FusedGemm")}
    assert ops & {("com.microsoft", "QLinearConcat"), ("com.microsoft", "QLinearSigmoid")}


def test_the_corpus_holds_real_control_flow_from_every_exporter():
    """At least ten exports whose If/Loop/Scan is in the file (issue 26): tf2onnx, TorchScript, optimum,
    jax2onnx, skl2onnx by producer name, and paddle2onnx (which writes no producer name: by its file)."""
    with_flow = []
    for m in CORPUS:
        ops = _op_types(ROOT / m["file"])
        if ops & {("", "If"), ("", "Loop"), ("", "Scan")}:
            with_flow.append(m)
    assert len(with_flow) >= CONTROL_FLOW_EXPORTS
    producers = {onnx.load(str(ROOT / m["file"]), load_external_data=False).producer_name for m in with_flow}
    assert CONTROL_FLOW_PRODUCERS <= producers, CONTROL_FLOW_PRODUCERS - producers
    assert any("paddle2onnx" in m["exporter"] for m in with_flow)
    # every one with its trips or branches stated, and a truth over every run of every body
    for m in with_flow:
        if m["file"].endswith(("fasterrcnn_mobilenet_v3_large_320_fpn_torch.onnx", "ssdlite320_mobilenet_v3_large_torch.onnx",
                               "gru_greedy_loop_legacy.onnx")):
            continue  # issue 14's exports: their control flow is described in their source field
        assert m.get("control_flow"), m["file"]


CONTROL_FLOW = [(m, c) for m in CORPUS for c in m.get("control_flow") or () if c.get("op") == "Loop"
                and isinstance(c.get("trips"), int) and c.get("body_macs")]


@pytest.mark.parametrize("m,c", CONTROL_FLOW, ids=[f"{_id(m)}:{c['name']}" for m, c in CONTROL_FLOW])
def test_every_loop_runs_its_stated_trips(m, c, analyses):
    """Each Loop's body rows count one run (the fixture's per-run MACs), and the Loop counts them its
    fixture's number of times, exactly (the count found from M or from its own cond and counters)."""
    a = _analysis(analyses, m)
    loop = next(n for n in a.nodes if n.op_type == "Loop" and n.name == c["name"])
    body = sum(n.macs for n in a.nodes if n.scope == f"{loop.key}/body")
    assert body == c["body_macs"]
    assert loop.macs == c["trips"] * body and loop.exact and not loop.bound, loop.note


CF_MODELS = [m for f in FIXTURES if f.name.startswith("corpus_cf_") for m in json.loads(f.read_text())["models"]]


@pytest.mark.parametrize("m", CF_MODELS, ids=_id)
def test_control_flow_counts_the_same_work_under_every_convention(m, analyses):
    """The MACs of these exports are matmul and gemm work, which every tool counts: torch, fvcore and
    the TF convention give the default's MACs, every run of every body included (issue 26, point 1)."""
    base = _analysis(analyses, m)
    for convention in ("torch", "fvcore", "tf"):
        a = onnxperf.analyze(ROOT / m["file"], dims=m.get("dims") or {}, convention=convention,
                             input_shapes={k: tuple(v) for k, v in (m.get("input_shapes") or {}).items()})
        assert a.totals.macs == base.totals.macs, convention
