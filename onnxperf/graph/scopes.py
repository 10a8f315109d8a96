"""Subgraph scopes made explicit: every tensor name in a model names one tensor.

ONNX gives each subgraph (an If branch, a Loop or Scan body) its own scope: a name defined in a
body is local to it, two sibling branches may define the same name for two different tensors
(Hugging Face optimum's merged decoders reuse hundreds of names between the with-past and the
no-past branch), and a name a body reads without defining it resolves to the innermost enclosing
scope that defines it. onnxperf keeps one table of tensors per model (shape inference, values,
costs and memory all key by name), so the loader makes the scopes explicit once, before anything
reads the graph: a definition whose name is already taken elsewhere in the model is renamed to a
fresh name, ``<name>@<attribute>`` (``present.0.key@else_branch``; ``.2``, ``.3`` ... when that is
taken too), and every reference that resolves to it (in its body and the bodies nested in it) is
renamed with it. The first definition of a name, in file order with the main graph first, keeps it;
a model without such clashes is left as it is, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx

_GRAPH, _GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS

#: the separator between a renamed tensor's name and the attribute of the body that defines it
MARK = "@"


def _defined(g: onnx.GraphProto) -> Iterator[str]:
    """The names ``g`` itself defines: its inputs, initializers and node outputs."""
    for vi in g.input:
        yield vi.name
    for t in g.initializer:
        yield t.name
    for t in g.sparse_initializer:
        yield t.values.name
    for n in g.node:
        yield from n.output


def _bodies(g: onnx.GraphProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """(attribute name, body) of every subgraph attribute of ``g``'s nodes, in file order."""
    for n in g.node:
        for a in n.attribute:
            if a.type == _GRAPH:
                yield a.name, a.g
            elif a.type == _GRAPHS:
                for sub in a.graphs:
                    yield a.name, sub


def has_subgraphs(g: onnx.GraphProto) -> bool:
    return next(_bodies(g), None) is not None


class _Renamer:
    def __init__(self, main: onnx.GraphProto, apply: bool):
        self.taken = {x for x in _defined(main) if x}
        self.apply = apply
        self.renamed = 0

    def fresh(self, name: str, attr: str) -> str:
        new = f"{name}{MARK}{attr}"
        k = 2
        while new in self.taken:
            new = f"{name}{MARK}{attr}.{k}"
            k += 1
        self.taken.add(new)
        return new

    def visit(self, g: onnx.GraphProto, attr: str, outer: dict[str, str]) -> None:
        local: dict[str, str] = {}
        for name in _defined(g):
            if not name or name in local:
                continue
            if name in self.taken:
                local[name] = self.fresh(name, attr)
                self.renamed += 1
            else:
                self.taken.add(name)
        env = {**outer, **local} if local else outer
        if env and self.apply:
            _rename(g, env)
        for sub_attr, sub in _bodies(g):
            self.visit(sub, sub_attr, env)


def _rename(g: onnx.GraphProto, env: dict[str, str]) -> None:
    """Rename, in ``g`` itself (not its bodies), every name ``env`` maps: definitions and references."""
    get = env.get
    for seq in (g.input, g.output, g.value_info):
        for vi in seq:
            new = get(vi.name)
            if new is not None:
                vi.name = new
    for t in g.initializer:
        new = get(t.name)
        if new is not None:
            t.name = new
    for t in g.sparse_initializer:
        new = get(t.values.name)
        if new is not None:
            t.values.name = new
    for n in g.node:
        for field in (n.input, n.output):
            for i, x in enumerate(field):
                new = get(x) if x else None
                if new is not None:
                    field[i] = new


def clashes(main: onnx.GraphProto) -> int:
    """How many definitions inside subgraphs reuse a name defined elsewhere in the model."""
    r = _Renamer(main, apply=False)
    for attr, sub in _bodies(main):
        r.visit(sub, attr, {})
    return r.renamed


def make_unique(main: onnx.GraphProto) -> int:
    """Rename, in place, every subgraph definition whose name is defined elsewhere in the model
    (and the references that resolve to it); returns how many were renamed."""
    r = _Renamer(main, apply=True)
    for attr, sub in _bodies(main):
        r.visit(sub, attr, {})
    return r.renamed
