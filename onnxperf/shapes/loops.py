"""How many times a Loop runs, from the loop's own state: trip counts that follow statically.

ONNX's ``Loop(M, cond, v_initial...)`` runs ``for (i = 0; i < M && cond; ++i) cond, v = body(i, cond,
v)``. Exporters write a for loop as a constant or shape-computed ``M`` without ``cond`` (exact), but
a while loop (tf2onnx's ``tf.while_loop``, Keras RNN layers, TorchScript ``while``) as a ``cond`` that
the body recomputes from a loop-carried counter compared with a bound, often with no ``M`` or an
``INT64_MAX`` sentinel. Such a count is not data: it follows from the initial values and the body's
arithmetic on them.

:func:`run_loop` finds the *control slice* of the body (the nodes ``cond`` depends on, and the
updates of the loop-carried values they read, closed under that dependency), checks that it is
computable (default-domain value ops of :mod:`onnxperf.shapes.values` on known values: the iteration
number, carried values whose initial value is known, constants and outer-scope values), and runs
it with numpy, one iteration after another, until ``cond`` is false or ``M`` is reached, within
:data:`MAX_EVALUATIONS` node evaluations (a hostile ``while true`` stops there and is reported as
unknown). It also records the small loop-carried values at the first and the last iteration, for
the forward pass to shape the body with (a ``x[:, t, :]`` slice by the counter has a shape).

The count is *exact* when the slice decides it, or when there is no ``cond`` input and ``M`` is
known; an *upper bound* when ``cond`` depends on data and ``M`` is known (the loop may stop sooner);
*unknown* otherwise (the rule then counts one run of the body, a lower bound).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from onnxperf.graph.loader import GraphIR
from onnxperf.shapes.values import EVALUATORS, evaluate

#: a trip count M at or above this is a "run until cond says stop" sentinel (exporters write
#: INT64_MAX or INT32_MAX), not a count
UNBOUNDED_TRIPS = 2**31 - 1
#: node evaluations one loop's simulation may take (iterations × the slice's nodes)
MAX_EVALUATIONS = 200_000

EXACT, UPPER, UNKNOWN = "exact", "upper", "unknown"


@dataclass(frozen=True)
class LoopTrips:
    """How many times a Loop's body runs. ``count`` is None when unknown; ``bound`` says whether
    ``count`` is ``exact`` or an ``upper`` bound (the loop may stop sooner), or ``unknown``;
    ``how`` says where the count comes from, in words."""

    count: int | None
    bound: str
    how: str


@dataclass
class LoopRun:
    """What :func:`run_loop` found: the trip count, and the iteration state (iteration number and
    the loop-carried values the control slice computes, by body input name) of the first and last
    iterations that run; empty when the body never runs or the state is not computable."""

    trips: LoopTrips
    first: dict[str, np.ndarray] = field(default_factory=dict)
    last: dict[str, np.ndarray] = field(default_factory=dict)


def _scalar(v: np.ndarray | None) -> int | None:
    if v is None or v.size != 1:
        return None
    try:
        return int(v.reshape(-1)[0])
    except (TypeError, ValueError, OverflowError):
        return None


#: a value the simulation cannot know (it reads data): And/Or may still decide without it
_UNK = object()


def _slice(body: GraphIR, wanted: set[str], computable: Callable[[str], bool],
           lenient: bool = False) -> tuple[list[int], set[int]] | None:
    """The body nodes (in body order) that compute ``wanted`` from the body's inputs and known values,
    and the *opaque* ones among them. Strict (the default): None when some node on the way is not a
    value op or reads what is not known. ``lenient``: such a node is kept as opaque (its outputs unknown
    at run time, its inputs not followed), and a leaf that is not known is unknown at run time."""
    producer = {o: i for i, (_, outs) in enumerate(body.io) for o in outs if o}
    nested = {i for i, _ in body.subgraphs}
    need: set[int] = set()
    opaque: set[int] = set()
    stack = list(wanted)
    seen: set[str] = set()
    while stack:
        x = stack.pop()
        if x in seen or not x:
            continue
        seen.add(x)
        i = producer.get(x)
        op, domain = body.heads[i][:2] if i is not None else ("", "")
        if i is None or (op == "Constant" and not domain):  # a leaf
            if not computable(x) and not lenient:
                return None
            continue
        if i in need:
            continue
        ins = body.io[i][0]
        evaluable = not domain and i not in nested and (op in EVALUATORS or (
            op in ("Shape", "Size") and bool(ins) and computable(":shape:" + ins[0])))
        if not evaluable:
            if not lenient:
                return None
            opaque.add(i)
        elif op not in ("Shape", "Size"):
            stack.extend(y for y in ins if y)
        need.add(i)
    order = {i: k for k, i in enumerate(body.order)}
    return sorted(need, key=order.__getitem__), opaque


def _decide(op: str, vals: list) -> object:
    """And/Or/Not of values some of which are unknown: the answer when the known ones decide it."""
    known = [v for v in vals if v is not _UNK and v is not None]
    if op == "And" and any(v.size == 1 and not bool(v.reshape(-1)[0]) for v in known):
        return np.array(False)
    if op == "Or" and any(v.size == 1 and bool(v.reshape(-1)[0]) for v in known):
        return np.array(True)
    return _UNK


def run_loop(body: GraphIR, m: np.ndarray | None, has_m: bool, cond0: np.ndarray | None, has_cond: bool,
             initial: list[np.ndarray | None], outer: Callable[[str], np.ndarray | None],
             outer_shape: Callable[[str], tuple[int, ...] | None], opset: int) -> LoopRun:
    """The trip count of a Loop whose body is ``body``: ``m`` and ``cond0`` the values of its M and
    cond inputs (None when not known; ``has_m``/``has_cond`` whether the inputs are there at all),
    ``initial`` the values of its loop-carried inputs (None where not known), ``outer`` the value
    of a tensor the body reads from an enclosing scope (or a constant of the body), ``outer_shape``
    the static shape of such a tensor."""
    mv = _scalar(m) if has_m else None
    if has_m and mv is not None and not 0 <= mv:
        mv = 0
    limit = mv if mv is not None and mv < UNBOUNDED_TRIPS else None
    m_text = "" if not has_m else (f"M = {mv}" if mv is not None and limit is not None else
                                   "M is not known" if mv is None else "M is a 'no limit' sentinel")
    if has_cond:
        c0 = _scalar(cond0)
        if c0 == 0:
            return LoopRun(LoopTrips(0, EXACT, "the initial cond is false: the body never runs"))
    elif limit is not None:
        trips = LoopTrips(limit, EXACT, f"trip count {m_text}")
        return LoopRun(trips, *_states(body, limit, initial, outer, outer_shape, opset))
    elif has_m and mv is not None and limit is None:
        return LoopRun(LoopTrips(None, UNKNOWN, f"trip count unknown: {m_text} and no cond"),
                       *_states(body, 1, initial, outer, outer_shape, opset))
    else:
        why = "M is absent and there is no cond" if not has_m else "M is not known (computed from data)"
        return LoopRun(LoopTrips(None, UNKNOWN, f"trip count unknown: {why}"),
                       *_states(body, 1, initial, outer, outer_shape, opset))

    # a while loop: run the control slice (what of it reads data is unknown; And/Or may decide anyway)
    sim = _Simulation(body, initial, outer, outer_shape, opset, with_cond=True)
    if sim.ok:
        trips, first, last, ended, definite = sim.run(limit, _scalar(cond0))
        if trips is not None:
            src = sim.sources()
            if definite:
                how = (f"{trips} iterations: the loop's cond, computed from {src}, turns false after {trips} runs"
                       + (f" ({m_text})" if m_text else "") if ended else
                       f"trip count {m_text}: the loop's cond, computed from {src}, stays true until then")
                return LoopRun(LoopTrips(trips, EXACT, how), first, last)
            how = (f"at most {trips} iterations, an upper bound: the loop's cond reads data, but its part computed "
                   f"from {src} turns false after {trips} runs" if ended else
                   f"{m_text}, an upper bound: the cond depends on data, so the loop may stop sooner")
            return LoopRun(LoopTrips(trips, UPPER, how), first, last)
        if limit is None and (sim.cond_varies or sim.definite):
            why = (f"the cond did not turn false within {MAX_EVALUATIONS:,} evaluations of the loop's counter"
                   + ("" if sim.definite else " (it also depends on data)") if sim.cond_varies else
                   "the cond stays true from run to run and M sets no limit: the loop does not end by itself")
            return LoopRun(LoopTrips(None, UNKNOWN, f"trip count unknown: {why}"),
                           *_states(body, 1, initial, outer, outer_shape, opset))
    if limit is not None:
        why = ("the cond depends on data" if not sim.ok or not sim.definite else "the initial cond is not known")
        trips = LoopTrips(limit, UPPER, f"{m_text}, an upper bound: {why}, so the loop may stop sooner")
        return LoopRun(trips, *_states(body, limit, initial, outer, outer_shape, opset))
    why = "the cond depends on data" if not sim.ok or not sim.definite else "the initial cond is not known"
    return LoopRun(LoopTrips(None, UNKNOWN, f"trip count unknown: {why} and {m_text or 'M is absent'}"),
                   *_states(body, 1, initial, outer, outer_shape, opset))


def _states(body, trips, initial, outer, outer_shape, opset) -> tuple[dict, dict]:
    """The iteration state of the first and last runs of a loop that runs ``trips`` times."""
    if trips <= 0:
        return {}, {}
    sim = _Simulation(body, initial, outer, outer_shape, opset, with_cond=False)
    return sim.states(trips)


class _Simulation:
    """The control slice of a loop body, ready to run on numpy values."""

    def __init__(self, body: GraphIR, initial, outer, outer_shape, opset: int, with_cond: bool):
        self.body, self.outer, self.outer_shape, self.opset = body, outer, outer_shape, opset
        ins, outs = body.inputs, body.outputs
        self.iter_name = ins[0] if ins else ""
        self.cond_name = ins[1] if len(ins) > 1 else ""
        carried_in = ins[2:]
        carried_out = outs[1:1 + len(carried_in)]
        self.cond_out = outs[0] if outs else ""

        def computable_given(live: set[int]) -> Callable[[str], bool]:
            names = {carried_in[k] for k in live} | {self.iter_name, self.cond_name}

            def computable(x: str) -> bool:
                if x.startswith(":shape:"):
                    y = x[len(":shape:"):]
                    return y not in body.inputs and outer_shape(y) is not None
                return x in names or (x not in body.inputs and outer(x) is not None)
            return computable

        # the carried values that take part: a known initial value and an update computed from the
        # iteration number, the cond, known values and the other carried values that take part
        live = {k for k, v in enumerate(initial[:len(carried_out)]) if v is not None}
        while True:
            comp = computable_given(live)
            keep = {k for k in live if _slice(body, {carried_out[k]}, comp) is not None}
            if keep == live:
                break
            live = keep
        comp = computable_given(live)
        wanted = {carried_out[k] for k in live}
        #: the cond is computed from known values alone (no part of it reads data)
        self.definite = True
        found = _slice(body, wanted | ({self.cond_out} if with_cond else set()), comp) \
            if self.cond_out or not with_cond else None
        if found is None and with_cond and self.cond_out:
            found = _slice(body, wanted | {self.cond_out}, comp, lenient=True)
            self.definite = False
        self.ok = found is not None
        self.order, self.opaque = found if found is not None else ([], set())
        #: the cond reads the iteration number or a carried value (through nodes that are not opaque): it
        #: may change from run to run (else the first run's answer is every run's)
        self.cond_varies = self._reaches_state(carried_in, live) if with_cond else True
        self.live = sorted(live)
        self.carried_in = [carried_in[k] for k in self.live]
        self.carried_out = [carried_out[k] for k in self.live]
        self.carried_names = self.carried_in
        self.state0 = {carried_in[k]: initial[k] for k in self.live}

    def _reaches_state(self, carried_in: list[str], live: set[int]) -> bool:
        body = self.body
        state = {self.iter_name} | {carried_in[k] for k in live}
        producer = {o: i for i in self.order for o in body.io[i][1] if o}
        stack, seen = [self.cond_out], set()
        while stack:
            x = stack.pop()
            if x in seen or not x:
                continue
            seen.add(x)
            if x in state:
                return True
            i = producer.get(x)
            if i is not None and i not in self.opaque:
                stack.extend(body.io[i][0])
        return False

    def _step(self, i: int, cond: bool, state: dict[str, np.ndarray]) -> tuple[dict, int] | None:
        """One run of the slice: the values it computes (``_UNK`` where they read data, when the slice
        allows it), or None when a value it needs cannot be computed."""
        env: dict[str, object] = dict(state)
        env[self.iter_name] = np.array(i, dtype=np.int64)
        if self.cond_name:
            env[self.cond_name] = np.array(cond)
        body, lenient = self.body, not self.definite
        for idx in self.order:
            in_names, out_names = body.io[idx]
            if idx in self.opaque:
                for o in out_names:
                    env[o] = _UNK
                continue
            op = body.heads[idx][0]
            node = body.nodes[idx]
            if op in ("Shape", "Size"):
                out = evaluate(node, op, [], self.opset, self.outer_shape(in_names[0]))
            else:
                vals: list = []
                for x in in_names:
                    if not x:
                        vals.append(None)
                        continue
                    v = env.get(x)
                    if v is None:
                        v = self.outer(x)
                    if v is None:
                        if not lenient:
                            return None
                        v = _UNK
                    vals.append(v)
                if any(v is _UNK for v in vals):
                    out = _decide(op, vals)
                else:
                    out = evaluate(node, op, vals, self.opset)
            if out is None:
                if not lenient:
                    return None
                out = _UNK
            env[out_names[0]] = out
        return env, len(self.order)

    def _state(self, i: int, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {self.iter_name: np.array(i, dtype=np.int64)} if self.iter_name else {}
        out.update(state)
        return out

    def sources(self) -> str:
        """What the cond is computed from, in words."""
        reads = {x for idx in self.order for x in self.body.io[idx][0]}
        parts = []
        if self.carried_in and reads & set(self.carried_in):
            parts.append("its counter" + ("s" if len(reads & set(self.carried_in)) > 1 else ""))
        if self.iter_name in reads:
            parts.append("the iteration number")
        if self.cond_name in reads and not parts:
            parts.append("its own previous value")
        return " and ".join(parts + ["constants"]) if parts else "constants"

    def run(self, limit: int | None, cond0: int | None) -> tuple[int | None, dict, dict, bool, bool]:
        """Iterate until the cond is false for sure (or ``limit`` runs), from the initial cond ``cond0``
        (None: not known): (trips, first state, last state, whether the cond ended it, whether every cond
        on the way was known: the count is then exact, else an upper bound)."""
        state, i, spent = dict(self.state0), 0, 0
        definite = cond0 is not None
        first: dict = {}
        last: dict = {}
        ended = False
        with np.errstate(all="raise"):
            while limit is None or i < limit:
                if spent > MAX_EVALUATIONS:
                    return None, {}, {}, False, definite
                stepped = self._step(i, True, state)
                if stepped is None:
                    return None, {}, {}, False, definite
                env, cost = stepped
                spent += cost + 1
                if i == 0:
                    first = self._state(i, state)
                last = self._state(i, state)
                out = env.get(self.cond_out)
                c = None if out is _UNK else _scalar(out)  # type: ignore[arg-type]
                if c is None and out is not _UNK:
                    return None, {}, {}, False, definite
                if not self.cond_varies and c != 0:
                    # every run's cond is this one's: true (or unknown) throughout: M decides, if any
                    definite = definite and c is not None
                    return (None, {}, {}, False, definite) if limit is None else (limit, first, {}, False, definite)
                if c is None:
                    definite = False
                state = {a: env[b] for a, b in zip(self.carried_in, self.carried_out)}
                i += 1
                if c == 0:
                    ended = True
                    break
        return i, first, last, ended, definite

    def states(self, trips: int) -> tuple[dict, dict]:
        """The state of the first and last of ``trips`` runs (the last only when the updates can be
        followed that far within the budget: else only the first)."""
        state = dict(self.state0)
        first = self._state(0, state)
        if trips == 1 or not self.order and not self.live:
            return first, (first if trips == 1 else self._state(trips - 1, state))
        spent = 0
        with np.errstate(all="raise"):
            for i in range(trips - 1):
                if spent > MAX_EVALUATIONS:
                    return first, {}
                stepped = self._step(i, True, state)
                if stepped is None:
                    return first, {}
                env, cost = stepped
                spent += cost + 1
                state = {a: env[b] for a, b in zip(self.carried_in, self.carried_out)}
        return first, self._state(trips - 1, state)


__all__ = ["EXACT", "MAX_EVALUATIONS", "UNBOUNDED_TRIPS", "UNKNOWN", "UPPER", "LoopRun", "LoopTrips", "run_loop"]
