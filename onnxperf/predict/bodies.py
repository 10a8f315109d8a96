"""The bodies of an analysis's control-flow nodes, indexed once for the figures that descend into them
(memory's working sets, the roofline's times): each body's node records by scope, the body scopes of
each control-flow node, and the branch an If takes where its cond is known."""

from __future__ import annotations

from onnxperf.cost.analysis import Costs

#: the ops whose bodies run while they run
CONTROL_FLOW = frozenset({"If", "Loop", "Scan", "SequenceMap"})


def is_control(n) -> bool:
    """A node of the default domain that runs subgraph bodies."""
    return n.op_type in CONTROL_FLOW and not n.domain


class BodyIndex:
    """``by_scope``: a body's records in its order, by scope (``"<id>/<attribute>"`` paths); ``under``: the
    scopes of the bodies of a control-flow node, by its key; ``branches``: the branch an If takes."""

    def __init__(self, a: Costs):
        self.by_scope: dict[str, list] = {}
        for n in a.nodes:
            if n.scope:
                self.by_scope.setdefault(n.scope, []).append(n)
        self.under: dict[str, list[str]] = {}
        for sc in self.by_scope:
            self.under.setdefault(sc.rsplit("/", 1)[0], []).append(sc)
        self.branches = a.branches or {}

    def scopes(self, n) -> list[str]:
        """The bodies that may run for control-flow node ``n``: the branch an If takes where its cond is
        known, else all of them (the caller takes the larger or the one its figure counts)."""
        scopes = self.under.get(n.key, [])
        taken = self.branches.get(n.key) if n.op_type == "If" else None
        if taken is not None:
            return [sc for sc in scopes if sc.rsplit("/", 1)[1] == taken] or scopes
        return scopes
