"""The main-graph nodes a runtime folds at load time, as a prediction sees them (:mod:`onnxperf.graph.folding`
finds what could fold; here, whether the runtime's view of the file lets it)."""

from __future__ import annotations

from onnxperf.cost.analysis import Costs
from onnxperf.graph.folding import foldable_nodes


def folded(a: Costs, bound_shapes: bool = False) -> set[str]:
    """Keys of the main-graph nodes that a runtime folds at load time (:mod:`onnxperf.graph.folding`).

    ``Shape``/``Size`` fold only when every graph input of the model *file* has fixed dims: the
    runtime sees the file, not the dims bound here, so with a symbolic batch or sequence the shape
    arithmetic runs at every inference (onnxruntime's profiler shows it does). ``bound_shapes``: fold
    ``Shape`` of every tensor whose shape the bound dims fix, as an engine built for those shapes does
    (a GPU runtime's; :mod:`onnxperf.predict.gpu_kernels`)."""
    if a.loaded is None:
        return set()
    g = a.loaded.graph
    static_file = bound_shapes or all(
        vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
        and all(d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)
        for vi in a.loaded.proto.graph.input if vi.name not in g.initializers)
    if not static_file:
        return {str(i) for i in foldable_nodes(g)}
    shapes = {t.name: t.shape for n in a.main_nodes for t in (*n.inputs, *n.outputs) if t is not None}

    def static(name: str) -> bool:
        shape = shapes.get(name)
        return shape is not None and all(isinstance(d, int) for d in shape)
    return {str(i) for i in foldable_nodes(g, static)}


__all__ = ["folded"]
