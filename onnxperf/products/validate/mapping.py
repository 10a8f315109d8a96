"""Measured (optimized) nodes -> groups of ORIGINAL nodes, so measured time can be set against
the analysis of the file the user gave.

onnxruntime rewrites the graph before it runs it: it fuses (Conv+Relu -> FusedConv that keeps the
Conv's name and takes the Relu's output; MatMul+Add -> Gemm; GELU, LayerNorm, Attention), folds
constants, removes Identity/Dropout, and on CPU moves convolutions to the NCHWc layout, where
every intermediate tensor is renamed (``reorder_token_N``), each node is named
``<original output tensor>_nchwc``, and ``ReorderInput``/``ReorderOutput`` nodes convert layouts.

The mapping works on tensor names:

1. **Aliases.** An optimized tensor whose name exists in the original graph is that tensor. An
   NCHWc node named ``<T>_nchwc`` produces original tensor ``T`` (weak alias); a Conv so named
   may also have fused the elementwise/activation nodes after ``T`` (its ``Sum`` input and
   ``activation`` attribute), so its alias is extended forward over elementwise and activation
   nodes whose other inputs are its own inputs or constants, up to tensors another node
   materializes. Reorder and Memcpy nodes pass aliases through in both directions. The layout
   transformer (NHWC QLinearConv, NhwcMaxPool) names a node it rewrites ``<original node>_token_N``
   and renames its outputs (and those of the QLinearAdd between, which keeps its name): such a
   node's outputs are the outputs of the original node of that name. So are those of a copy of a
   DequantizeLinear that onnxruntime gives one of its readers (``<original node>/duplicated``,
   ``..._token_N``): its time joins the original's group, which the prediction charges for every copy.
2. **Walks.** Each optimized node's group is the original nodes reached by walking backwards from
   the producers of its aliased outputs, stopping at graph inputs, initializers, constant-folded
   tensors and tensors that some other optimized node materializes.
3. **Partition.** Optimized nodes whose walks share an original node are merged into one group,
   so every original node lies in exactly one group. Original nodes no walk reaches — folded
   constants (Constant, Shape chains on static shapes), eliminated or dead nodes — form groups
   with no measured node, ``folded=True`` (one group per connected set of them).
4. **Time.** Each :class:`~onnxperf.products.validate.profile.NodeTiming` is added to the group of the
   optimized node of the same name (body nodes of If/Loop/Scan to their parent's group). Layout
   and copy nodes (Reorder*, Memcpy*), optimized nodes whose outputs alias nothing and feed no
   single group, and timings whose name matches no node (or several) go to ``unmapped``: never
   dropped, so ``sum(group times) + unmapped_s_per_run`` is all the measured time. A compute
   node whose outputs alias nothing but feed only one group's nodes is a helper of that fusion
   (the ``Reshape -> Gemm -> Reshape`` that MatMulAddFusion writes for a 3-D MatMul + bias Add):
   it joins that group.

With ``optimized=None`` (onnxruntime run with ``opt="disable"``) the original graph is its own
optimized graph, less its Constant nodes (onnxruntime turns them into initializers); timings of
unnamed or duplicate-named nodes are then matched by onnxruntime's ``node_index``, which equals
the file index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import onnx

from onnxperf.cost.walker import family_of
from onnxperf.graph.loader import LoadedModel, load
from onnxperf.products.validate.profile import NodeTiming

NCHWC_DOMAIN = "com.microsoft.nchwc"
NCHWC_SUFFIX = "_nchwc"
#: a node the layout transformer rewrote: "<original node name>_token_<N>"
_TOKEN = re.compile(r"(.+)_token_\d+")
#: a copy of a DequantizeLinear that onnxruntime gives one of its readers (EnsureUniqueDQForNodeUnit,
#: :mod:`onnxperf.predict.unique_dq`): "<original node name>/duplicated", then "..._token_<N>"
_DUPLICATED = re.compile(r"(.+)/duplicated(?:_token_\d+)?")
#: ops that only change layout or device: their time maps to no original node
LAYOUT_OPS = frozenset({(NCHWC_DOMAIN, "ReorderInput"), (NCHWC_DOMAIN, "ReorderOutput"),
                        ("", "MemcpyToHost"), ("", "MemcpyFromHost"),
                        ("com.microsoft", "MemcpyToHost"), ("com.microsoft", "MemcpyFromHost")})
#: op families an NCHWc node may fuse after its named output (Sum input, activation)
_POST_OP_FAMILIES = frozenset({"elementwise", "activation"})
#: shape-only ops: their value does not depend on their input's values
_SHAPE_OPS = frozenset({"Shape", "Size"})
#: never constant-folded, even from constant inputs
_NONDETERMINISTIC = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                               "Multinomial", "Bernoulli"})


@dataclass(frozen=True)
class Group:
    """Original nodes replaced by some measured nodes, and the time those took per run.

    ``measured_names`` / ``op_types``: the optimized nodes of the group, in the optimized graph's
    order (op types as onnxruntime ran them: ``FusedConv``, ``Conv`` of the NCHWc domain...);
    ``original_node_ids``: file indices of the original main-graph nodes (NodeCost.id), ascending,
    with ``original_op_types`` parallel to them; ``folded``: no measured node (folded or removed).
    """

    measured_names: tuple[str, ...]
    op_types: tuple[str, ...]
    original_node_ids: tuple[int, ...]
    measured_s_per_run: float
    folded: bool
    original_op_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mapping:
    groups: tuple[Group, ...]
    unmapped: tuple[NodeTiming, ...]
    unmapped_s_per_run: float

    @property
    def measured_s_per_run(self) -> float:
        """All measured node time per run: groups plus unmapped."""
        return sum(g.measured_s_per_run for g in self.groups) + self.unmapped_s_per_run

    def group_of(self, node_id: int) -> Group:
        """The group holding original main-graph node ``node_id``."""
        for g in self.groups:
            if node_id in g.original_node_ids:
                return g
        raise KeyError(node_id)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _domain(node: onnx.NodeProto) -> str:
    return "" if node.domain in ("", "ai.onnx") else node.domain


def _is_layout(node: onnx.NodeProto) -> bool:
    return (_domain(node), node.op_type) in LAYOUT_OPS


class _Original:
    """The original main graph seen through tensors: producers, consumers, inputs per node."""

    def __init__(self, loaded: LoadedModel):
        g = loaded.graph
        self.graph_inputs = set(g.inputs) | set(g.outer_refs)
        self.nodes = g.nodes
        self.order = g.order
        self.producer: dict[str, int] = {}
        self.consumers: dict[str, list[int]] = {}
        # every input of a node, subgraph free variables included (the DAG's in-edges)
        self.inputs: dict[int, list[str]] = {i: [] for i in range(len(g.nodes))}
        for src, dst, key in g.dag.edges(keys=True):
            if isinstance(src, int):
                self.producer[key] = src
            if isinstance(dst, int):
                self.inputs[dst].append(key)
                self.consumers.setdefault(key, []).append(dst)
        self.sources = set(g.inputs) | set(g.initializers) | set(g.outer_refs)
        self.tensors = set(self.producer) | self.sources

    def foldable(self) -> set[int]:
        """Nodes whose value onnxruntime can compute at load time (constants, static Shape chains)."""
        out: set[int] = set()
        constant = self.sources - self.graph_inputs
        for i in self.order:
            n = self.nodes[i]
            if n.op_type in _NONDETERMINISTIC:
                continue
            if (_domain(n) == "" and n.op_type in _SHAPE_OPS) or all(t in constant for t in self.inputs[i]):
                out.add(i)
                constant.update(t for t in n.output if t)
        return out


def _aliases(orig: _Original, opt: Sequence[onnx.NodeProto]) -> tuple[dict[str, str], dict[int, str]]:
    """Optimized tensor -> original tensor, and optimized node -> weak (name-derived) alias."""
    alias: dict[str, str] = {}
    for n in opt:
        for t in list(n.input) + list(n.output):
            if t and t in orig.tensors:
                alias[t] = t
    weak: dict[int, str] = {}
    for i, n in enumerate(opt):
        if n.name.endswith(NCHWC_SUFFIX) and n.output and n.output[0] and n.output[0] not in alias:
            target = n.name[: -len(NCHWC_SUFFIX)]
            if target in orig.producer:
                alias[n.output[0]] = target
                weak[i] = target
    # the layout transformer (NHWC for QLinearConv, NhwcMaxPool) renames the nodes it rewrites
    # "<original node name>_token_<N>", and the output tensors of those and of the layout-agnostic
    # nodes between them (QLinearAdd keeps its name): such a node's outputs are those of the
    # original node of that name (when the name is unique; the same op type when not renamed)
    by_name: dict[str, list[int]] = {}
    for i, n in enumerate(orig.nodes):
        if n.name:
            by_name.setdefault(n.name, []).append(i)
    for n in opt:
        m = _DUPLICATED.fullmatch(n.name) or _TOKEN.fullmatch(n.name)
        name = m.group(1) if m else n.name
        if not name or len(by_name.get(name, ())) != 1:
            continue
        src = orig.nodes[by_name[name][0]]
        if m is None and (src.op_type != n.op_type or _domain(src) != _domain(n)):
            continue
        for o_opt, o_orig in zip(n.output, src.output):
            if o_opt and o_orig and o_opt not in alias and o_orig in orig.producer:
                alias[o_opt] = o_orig
    changed = True
    while changed:  # layout nodes pass aliases through, both ways
        changed = False
        for n in opt:
            if not _is_layout(n) or not n.input or not n.output:
                continue
            src, dst = n.input[0], n.output[0]
            if dst not in alias and src in alias:
                alias[dst] = alias[src]
                changed = True
            elif src not in alias and dst in alias:
                alias[src] = alias[dst]
                changed = True
    return alias, weak


def _post_ops(orig: _Original, start: str, own_inputs: set[str], materialized: set[str], mine: set[str],
              constants: set[str]) -> set[str]:
    """Tensors of the elementwise/activation chain after ``start`` that a weakly named node fused."""
    have = {start}
    frontier = [start]
    while frontier:
        t = frontier.pop()
        for v in orig.consumers.get(t, ()):
            n = orig.nodes[v]
            outs = [o for o in n.output if o]
            if any(o in have for o in outs) or family_of(n) not in _POST_OP_FAMILIES:
                continue
            if any(o in materialized and o not in mine for o in outs):
                continue
            if all(x in have or x in own_inputs or x in constants for x in orig.inputs[v]):
                have.update(outs)
                frontier.extend(outs)
    return have


def _components(orig: _Original, members: set[int]) -> list[list[int]]:
    """Connected sets (through tensors, either direction) of ``members``."""
    seen: set[int] = set()
    out = []
    for start in sorted(members):
        if start in seen:
            continue
        comp, stack = [], [start]
        seen.add(start)
        while stack:
            v = stack.pop()
            comp.append(v)
            near = [orig.producer[t] for t in orig.inputs[v] if t in orig.producer]
            near += [c for t in orig.nodes[v].output for c in orig.consumers.get(t, ())]
            for u in near:
                if u in members and u not in seen:
                    seen.add(u)
                    stack.append(u)
        out.append(sorted(comp))
    return out


def _match_timings(timings: Iterable[NodeTiming], opt_nodes: Sequence[onnx.NodeProto],
                   file_index: Sequence[int] | None) -> list[tuple[NodeTiming, int | None]]:
    """Pair each timing with the optimized node (position in ``opt_nodes``) it measured.

    By name first. onnxruntime's profiler names an unnamed node ``<op_type>_<session index>``
    while the saved optimized graph leaves it unnamed, and names may repeat: such timings are
    matched by session index when the graph is the original file (``file_index`` given: the
    session index is the file index), else in order of first execution against the candidates'
    order in the (topologically sorted) optimized file. Against the original file, a copy of a
    DequantizeLinear that onnxruntime made (``<name>/duplicated...``, at every optimization level) is the
    original node's.
    """
    by_name: dict[str, list[int]] = {}
    for i, n in enumerate(opt_nodes):
        by_name.setdefault(n.name, []).append(i)
    at_file = {f: i for i, f in enumerate(file_index)} if file_index is not None else {}
    used: set[int] = set()
    out: list[tuple[NodeTiming, int | None]] = []
    for t in timings:
        target = t.parent if t.parent is not None else t.name
        hits = by_name.get(target, []) if target else []
        index = t.node_index if t.parent is None else _default_name_index(target)
        op = t.op_type if t.parent is None else None
        if len(hits) != 1 and index is not None and index in at_file:
            j = at_file[index]
            if op is None or opt_nodes[j].op_type == op:
                hits = [j]
        if not hits and file_index is not None and t.parent is None:
            # a copy of a DequantizeLinear onnxruntime gave one of its readers (not in the file): the original's
            m = _DUPLICATED.fullmatch(target)
            if m:
                hits = [i for i in by_name.get(m.group(1), []) if opt_nodes[i].op_type == t.op_type][:1]
        if not hits and t.parent is None and target == f"{t.op_type}_{t.node_index}":
            hits = [i for i in by_name.get("", []) if opt_nodes[i].op_type == t.op_type]
        if len(hits) > 1:  # same name (or unnamed, same op): the first not yet used, in file order
            hits = [i for i in hits if (op is None or opt_nodes[i].op_type == op) and i not in used][:1]
        if hits and t.parent is None:
            used.add(hits[0])
        out.append((t, hits[0] if len(hits) == 1 else None))
    return out


def _display_name(node: onnx.NodeProto, timings: Sequence[NodeTiming]) -> str:
    """The node's name; for an unnamed node, the name the profiler gave it (when it ran)."""
    if node.name:
        return node.name
    own = [t.name for t in timings if t.parent is None]
    return own[0] if own else ""


def _default_name_index(name: str) -> int | None:
    """The session index in onnxruntime's default node name ``<op_type>_<index>``, else None."""
    head, _, tail = name.rpartition("_")
    return int(tail) if head and tail.isdigit() else None


def _hosts(opt_nodes: Sequence[onnx.NodeProto], outs: dict[int, set[str]], uf: _UnionFind) -> dict[int, int]:
    """Helper nodes of a fusion -> the group root they belong to.

    A compute node whose outputs alias no original tensor (onnxruntime's MatMulAddFusion on a
    3-D MatMul writes ``Reshape -> Gemm -> Reshape``, and only the last Reshape produces the
    original tensor) belongs to the group of the nodes that consume its outputs, when they all lie
    in one group. Walked from the end of the (topologically sorted) optimized graph, so a chain of
    such nodes follows its last member."""
    consumers: dict[str, list[int]] = {}
    for i, n in enumerate(opt_nodes):
        for t in n.input:
            if t:
                consumers.setdefault(t, []).append(i)
    host: dict[int, int] = {}
    for i in range(len(opt_nodes) - 1, -1, -1):
        if i not in outs or outs[i]:
            continue
        roots = set()
        for t in opt_nodes[i].output:
            for c in consumers.get(t, ()) if t else ():
                roots.add(uf.find(c) if outs.get(c) else host.get(c))
        if len(roots) == 1 and None not in roots:
            host[i] = roots.pop()
    return host


def map_groups(original: onnx.ModelProto | LoadedModel, optimized: onnx.ModelProto | None,
               timings: Iterable[NodeTiming]) -> Mapping:
    """Assign measured nodes to the original nodes they replaced (see the module docstring)."""
    orig = _Original(original if isinstance(original, LoadedModel) else load(original))
    identity = optimized is None
    if identity:
        opt_nodes = [n for n in orig.nodes if not (_domain(n) == "" and n.op_type == "Constant")]
        opt_index = [i for i, n in enumerate(orig.nodes) if not (_domain(n) == "" and n.op_type == "Constant")]
    else:
        opt_nodes = list(optimized.graph.node)
        opt_index = list(range(len(opt_nodes)))
    alias, weak = _aliases(orig, opt_nodes)

    outs: dict[int, set[str]] = {}
    for i, n in enumerate(opt_nodes):
        if not _is_layout(n):
            outs[i] = {alias[t] for t in n.output if t in alias and alias[t] in orig.producer}
    materialized = set().union(*outs.values()) if outs else set()
    foldable = orig.foldable()
    constants = (orig.sources - orig.graph_inputs) | {t for v in foldable for t in orig.nodes[v].output}
    opt_producer = {t: i for i, n in enumerate(opt_nodes) for t in n.output if t}

    def source_outs(t: str) -> set[str]:
        """What an optimized tensor stands for: its compute producer's aliases (through layout nodes)."""
        seen = set()
        while t in opt_producer and opt_producer[t] not in seen:
            j = opt_producer[t]
            seen.add(j)
            if not _is_layout(opt_nodes[j]):
                return outs[j] if outs[j] else ({alias[t]} if t in alias else set())
            if not opt_nodes[j].input:
                break
            t = opt_nodes[j].input[0]
        return {alias[t]} if t in alias else set()

    for i, target in sorted(weak.items()):  # file order is topological: producers' chains first
        own = set().union(*(source_outs(t) for t in opt_nodes[i].input if t))
        outs[i] |= _post_ops(orig, target, own, materialized, outs[i], constants)
    materialized = set().union(*outs.values()) if outs else set()
    folded_nodes = {v for v in foldable if not any(t in materialized for t in orig.nodes[v].output if t)}
    folded_tensors = {t for v in folded_nodes for t in orig.nodes[v].output}
    base_stop = orig.sources | folded_tensors

    claims: dict[int, list[int]] = {}
    uf = _UnionFind()
    for i, mine in outs.items():
        if not mine:
            continue
        stack = sorted({orig.producer[t] for t in mine} - folded_nodes)
        seen = set(stack)
        while stack:
            v = stack.pop()
            claims.setdefault(v, []).append(i)
            for t in orig.inputs[v]:
                if t in base_stop or (t in materialized and t not in mine) or t not in orig.producer:
                    continue
                u = orig.producer[t]
                if u not in seen and u not in folded_nodes:
                    seen.add(u)
                    stack.append(u)
        uf.find(i)
    for v, owners in claims.items():
        for other in owners[1:]:
            uf.union(owners[0], other)

    host = _hosts(opt_nodes, outs, uf)
    timed: dict[int, list[NodeTiming]] = {}
    unmapped: list[NodeTiming] = []
    for t, i in _match_timings(timings, opt_nodes, opt_index if identity else None):
        if i is None or i not in outs or not (outs[i] or i in host):
            unmapped.append(t)
        else:
            timed.setdefault(i, []).append(t)

    owned: dict[int, set[int]] = {}
    for v, owners in claims.items():
        owned.setdefault(uf.find(owners[0]), set()).add(v)
    members: dict[int, list[int]] = {}
    for i in outs:
        if outs[i]:
            members.setdefault(uf.find(i), []).append(i)
        elif i in host:
            members.setdefault(host[i], []).append(i)
    rows: list[Group] = []
    for root, ms in members.items():
        ids = sorted(owned.get(root, ()))
        ms = sorted(ms)
        if not ids:  # its outputs come only from folded nodes: nothing original to charge
            unmapped.extend(t for i in ms for t in timed.get(i, ()))
            continue
        rows.append(Group(tuple(_display_name(opt_nodes[i], timed.get(i, ())) for i in ms),
                          tuple(opt_nodes[i].op_type for i in ms), tuple(ids),
                          sum(t.typical_s_per_run for i in ms for t in timed.get(i, ())), False,
                          tuple(orig.nodes[v].op_type for v in ids)))
    leftover = set(range(len(orig.nodes))) - set(claims)
    for comp in _components(orig, leftover):
        rows.append(Group((), (), tuple(comp), 0.0, True, tuple(orig.nodes[v].op_type for v in comp)))
    rows.sort(key=lambda g: (g.original_node_ids[0] if g.original_node_ids else -1, g.measured_names))
    return Mapping(tuple(rows), tuple(unmapped), sum(t.typical_s_per_run for t in unmapped))


__all__ = ["Group", "LAYOUT_OPS", "Mapping", "map_groups"]
