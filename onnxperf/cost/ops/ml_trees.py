"""Tree ensembles of the ``ai.onnx.ml`` domain: TreeEnsembleClassifier, TreeEnsembleRegressor
(ai.onnx.ml 1–5) and TreeEnsemble (ai.onnx.ml 5).

Notation as in :mod:`.ml`: N samples, E targets, C classes, T trees. A tree costs one compare
per internal node on the path a sample takes; the path's length comes from the node
attributes (the deepest path of each tree, so the figure is an upper bound unless every leaf of
a tree is at the same depth). Traffic and output sizes follow :mod:`.ml`'s conventions: the
trees live in attributes, whose bytes are added to bytes_read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from onnxperf.base import dtypes
from onnxperf.cost.ops.ml import F32, ML, label_type, model_cost, post_transform_ops, rows_features, written
from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, register, rule


def tree_depths(roots: Iterable[int], children: dict[int, tuple[int, ...]]) -> list[tuple[int, bool]]:
    """Per tree: (internal nodes on its longest root-to-leaf path, every leaf at that depth).
    ``children`` maps an internal node to its internal children (leaves omitted)."""
    out = []
    for root in roots:
        depths: set[int] = set()
        stack = [(root, 1)]
        seen = 0
        while stack:
            node, d = stack.pop()
            seen += 1
            if seen > 10_000_000:
                raise BadNode("tree ensemble: cycle in node ids")
            kids = children.get(node, ())
            internal = [k for k in kids if k is not None]
            if len(internal) < len(kids) or not kids:  # a leaf child ends a path here
                depths.add(d)
            stack.extend((k, d + 1) for k in internal)
        out.append((max(depths), len(depths) == 1))
    return out


def _classic_trees(n: NodeView) -> tuple[list[tuple[int, bool]], int]:
    """Depths of TreeEnsembleClassifier/Regressor trees, and max weights per leaf."""
    tree_ids = list(n.attr("nodes_treeids", []))
    node_ids = list(n.attr("nodes_nodeids", []))
    modes = list(n.attr("nodes_modes", []))
    trues = list(n.attr("nodes_truenodeids", []))
    falses = list(n.attr("nodes_falsenodeids", []))
    internal = {(t, i) for t, i, m in zip(tree_ids, node_ids, modes) if m != "LEAF"}
    children: dict[tuple[int, int], tuple] = {}
    referenced: set[tuple[int, int]] = set()
    for t, i, m, a, b in zip(tree_ids, node_ids, modes, trues, falses):
        if m == "LEAF":
            continue
        kids = tuple((t, k) if (t, k) in internal else None for k in (a, b))
        children[(t, i)] = kids
        referenced.update(k for k in kids if k is not None)
    roots = [k for k in sorted(internal) if k not in referenced]
    leaf_only = [(0, True)] * len(set(tree_ids) - {t for t, _ in internal})  # single-leaf trees
    prefix = "class" if n.attr("class_treeids") else "target"
    per_leaf: dict[tuple[int, int], int] = {}
    for t, i in zip(n.attr(f"{prefix}_treeids", []), n.attr(f"{prefix}_nodeids", [])):
        per_leaf[(t, i)] = per_leaf.get((t, i), 0) + 1
    return tree_depths(roots, children) + leaf_only, max(per_leaf.values(), default=1)


def _tree_cost(n: NodeView, depths: list[tuple[int, bool]], weights_per_leaf: int, targets: int,
               aggregate: str, has_base: bool, *, out_elem_type: int = F32, extra_bytes: int = 0,
               classes: int = 0) -> OpCost:
    """The cost of :func:`tree_ensemble_classic` / :func:`tree_ensemble`; ``out_elem_type`` is
    the element type of the scores output (float for the classic ops, X's for TreeEnsemble)."""
    x = n.inp(0)
    samples, _ = rows_features(x.shape)
    if classes:
        out = written(n, [(label_type(n, "classlabels_int64s"), samples), (F32, samples * classes)])
    else:
        out = written(n, [(out_elem_type, samples * targets)])
    compares = samples * sum(d for d, _ in depths)
    agg = samples * len(depths) * weights_per_leaf
    agg += samples * targets * (int(aggregate == "AVERAGE") + int(has_base) + post_transform_ops(n))
    if classes:
        agg += samples * max(classes - 1, 1)
    exact = all(balanced for _, balanced in depths)
    note = "" if exact else "upper bound: every sample walks each tree's deepest path"
    if dtypes.is_float(x.elem_type):
        return model_cost(n, macs=0, flops=compares + agg, exact=exact, note=note, extra_bytes=extra_bytes,
                           bytes_written=out)
    return model_cost(n, macs=0, flops=agg, int_ops=compares, exact=exact, note=note,
                       extra_bytes=extra_bytes, bytes_written=out)


def _tree_ensemble_classic_rule(classifier: bool) -> Callable[[NodeView], OpCost]:
    def tree_ensemble_classic(n: NodeView) -> OpCost:
        """TreeEnsembleClassifier/Regressor (ai.onnx.ml 1–5): per sample, each tree costs one
        compare per internal node on the path taken (its depth D_t, computed from the node
        attributes; the deepest path is taken, an upper bound unless every leaf of a tree is at
        the same depth) and one add per weight at the leaf reached (W = most weights at a leaf).
        Per target (E = n_targets, or C classes): 1 divide for AVERAGE, 1 add for base_values,
        post_transform ops; a classifier also picks its label (C − 1 compares).
        ops = N·(ΣD_t + T·W + E·(avg + base + post) [+ C − 1]). Compares are on X's type."""
        depths, w = _classic_trees(n)
        labels = n.attr("classlabels_int64s") or n.attr("classlabels_strings") or []
        classes = len(labels) if classifier else 0
        targets = classes or int(n.attr("n_targets", 1))
        return _tree_cost(n, depths, w, targets, n.attr("aggregate_function", "SUM"),
                          bool(n.attr("base_values")), classes=classes)

    return tree_ensemble_classic


register("TreeEnsembleClassifier", _tree_ensemble_classic_rule(classifier=True), family="misc", domain=ML,
         outputs_may_be_unknown=True)
register("TreeEnsembleRegressor", _tree_ensemble_classic_rule(classifier=False), family="misc", domain=ML,
         outputs_may_be_unknown=True)


@rule("TreeEnsemble", family="misc", domain=ML, since=5)
def tree_ensemble(n: NodeView) -> OpCost:
    """TreeEnsemble (ai.onnx.ml 5): as TreeEnsembleRegressor, with the trees given by
    ``tree_roots`` and node indices whose true/false children are leaves when
    ``nodes_trueleafs``/``nodes_falseleafs`` say so; each leaf adds one weight.
    ops = N·(ΣD_t + T + E·(avg + post)). A set-membership node counts as one compare.
    Its tensor attributes (splits, leaf weights: one X-typed value per node and per leaf,
    modes: 1 byte per node) are added to bytes_read from the node and leaf counts."""
    true_ids, false_ids = list(n.attr("nodes_truenodeids", [])), list(n.attr("nodes_falsenodeids", []))
    true_leaf, false_leaf = list(n.attr("nodes_trueleafs", [])), list(n.attr("nodes_falseleafs", []))
    children = {
        i: (None if tl else t, None if fl else f)
        for i, (t, f, tl, fl) in enumerate(zip(true_ids, false_ids, true_leaf, false_leaf))
    }
    depths = tree_depths(list(n.attr("tree_roots", [])), children)
    agg = {0: "AVERAGE", 1: "SUM", 2: "MIN", 3: "MAX"}[int(n.attr("aggregate_function", 1))]
    elem = n.inp(0).elem_type
    extra = dtypes.nbytes(elem, len(true_ids) + len(n.attr("leaf_targetids", []))) + len(true_ids)
    return _tree_cost(n, depths, 1, int(n.attr("n_targets", 1)), agg, False, out_elem_type=elem, extra_bytes=extra)
