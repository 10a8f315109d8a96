"""Records made once per tensor or node: :func:`record`.

A 1M-node graph makes millions of them (NodeCost, TensorRef, TensorInfo, Initializer), so their
size and their construction time are the analysis' own: a frozen dataclass writes each field
through ``object.__setattr__`` (~0.1 µs a field) and carries a ``__dict__`` (~360 B for 19
fields). A tuple subclass with a property per field is built in one call and holds its fields
inline.
"""

from __future__ import annotations


try:  # the C descriptor namedtuple's fields use: a read costs what a slot's costs
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python implementation
    _tuplegetter = None


def getter(i: int, doc: str | None = None):
    """A read-only attribute reading item ``i`` of a tuple-backed record (``property(itemgetter(i))``,
    ~60% slower to read, where the C descriptor is not available)."""
    if _tuplegetter is not None:
        return _tuplegetter(i, doc)
    import operator

    return property(operator.itemgetter(i), doc=doc)


def record(cls: type) -> type:
    """Class decorator for the records made once per node or tensor (:class:`~onnxperf.cost.walker.NodeCost`,
    :class:`~onnxperf.cost.walker.TensorRef`): the annotated fields of ``cls`` become a tuple subclass with
    a property per field. Immutable, equal and hashable by value, printed as ``Name(field=value, ...)``,
    with the same constructor (positional or keyword, defaults kept) and ``_replace``; 40-50% smaller
    than a dataclass instance with its ``__dict__`` (a 19-field NodeCost: ~210 B instead of ~400 B)
    and as fast to build. Unlike a dataclass it is also a tuple: code must not rely on iterating it.
    Methods and properties defined on ``cls`` are kept."""
    names = [n for n in cls.__dict__.get("__annotations__", {}) if not n.startswith("_")]
    defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
    ns: dict[str, object] = {"__slots__": (), "_fields": tuple(names), "__doc__": cls.__doc__,
                             "__module__": cls.__module__, "__qualname__": cls.__qualname__}
    for k, v in cls.__dict__.items():
        if k in names or k in ("__dict__", "__weakref__", "__annotations__", "__doc__", "__module__",
                               "__qualname__"):
            continue
        ns[k] = v
    for i, n in enumerate(names):
        ns[n] = getter(i, f"field {n}")
    params = ", ".join(n if n not in defaults else f"{n}=__default_{n}" for n in names)
    body = f"def __new__(cls, {params}):\n    return __tuple_new(cls, ({', '.join(names)},))\n"
    env: dict[str, object] = {"__tuple_new": tuple.__new__, **{f"__default_{k}": v for k, v in defaults.items()}}
    exec(body, env)  # noqa: S102
    new = env["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    ns["__new__"] = new

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self)) + ")"

    def _replace(self, **changes):
        return type(self)(*[changes.pop(n, v) for n, v in zip(names, self)]) if not changes.keys() - set(names) \
            else (_ for _ in ()).throw(TypeError(f"unknown fields {sorted(changes.keys() - set(names))}"))

    def __eq__(self, other):
        return type(other) is type(self) and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not __eq__(self, other)

    ns.update(__repr__=__repr__, _replace=_replace, __eq__=__eq__, __ne__=__ne__, __hash__=tuple.__hash__,
              __getnewargs__=lambda self: tuple(self), __match_args__=tuple(names))
    return type(cls.__name__, (tuple,), ns)
