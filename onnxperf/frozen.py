"""A faster ``__init__`` for the frozen dataclasses made once per tensor or node.

``@dataclass(frozen=True)`` writes each field through ``object.__setattr__`` (the class's own
``__setattr__`` refuses writes): ~0.1 µs a field, 2 µs for a 19-field :class:`~onnxperf.cost.NodeCost`.
A 7B LLM graph makes ~10,000 such records per analysis. :func:`fast_init` replaces the generated
``__init__`` by one that fills the instance's ``__dict__`` directly: same signature, same defaults,
same instance (still frozen, equal, hashable and printed as before); only the construction is
cheaper. For classes without ``__post_init__``, ``default_factory`` or ``__slots__``.
"""

from __future__ import annotations

from dataclasses import MISSING, fields


def fast_init(cls: type) -> type:
    """Class decorator, applied above ``@dataclass(frozen=True)``."""
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_init needs a plain frozen dataclass")
    ns: dict[str, object] = {}
    params = []
    for f in fields(cls):
        if not f.init or f.default_factory is not MISSING or f.name.startswith("__fast_") or f.name == "self":
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init supports plain fields and defaults only")
        if f.default is MISSING:
            params.append(f.name)
        else:
            ns[f"__fast_default_{f.name}"] = f.default
            params.append(f"{f.name}=__fast_default_{f.name}")
    body = "".join(f"    __fast_dict[{f.name!r}] = {f.name}\n" for f in fields(cls))
    exec(f"def __init__(self, {', '.join(params)}):\n    __fast_dict = self.__dict__\n{body}", ns)  # noqa: S102
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__doc__ = cls.__init__.__doc__  # type: ignore[misc]
    cls.__init__ = init  # type: ignore[misc]
    return cls
