"""``did you mean 'sequence'?``: the name closest to one the user typed, among the names that exist."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (difflib's ratio at least 0.6, or ``name`` a prefix or an
    abbreviation of it: ``seq`` for ``sequence``), None when nothing is close."""
    known = [k for k in known if k != name]
    prefixed = [k for k in known if k.lower().startswith(name.lower()) and len(name) >= 2]
    if len(prefixed) == 1:
        return prefixed[0]
    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'sequence'?)`` for the closest known name, else ``""``."""
    best = closest(name, known)
    return f" (did you mean {best!r}?)" if best is not None else ""


__all__ = ["closest", "did_you_mean"]
