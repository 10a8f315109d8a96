"""TOML files a user gives us (hardware specs, check budgets, pyproject.toml), read safely: :func:`parse_toml`
refuses text nested deeper than :data:`MAX_TOML_DEPTH` (before parsing where tomllib would take long or
recurse) and integers too long to read, with one line naming the file."""

from __future__ import annotations

import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from onnxperf.base.errors import OptionError

#: The deepest nesting of arrays and tables a TOML file we read may have. Specs and budgets nest
#: 3 levels (``[[memory_levels]]``, ``[tool.onnxperf.budget]`` with ``dims`` is 5); 64 leaves room for
#: whatever else a pyproject.toml holds. tomllib recurses once per level and raises RecursionError
#: somewhere between 300 and 500 levels (it depends on the stack already in use): a fixed limit far
#: below that refuses the same files the same way wherever it is called from.
MAX_TOML_DEPTH = 64

#: One part of a dotted key (bare or quoted), and a chain of them: ``a.b.c``, ``"a" . 'b'``.
_KEY_PART = r"""(?:[\w-]+|"[^"\\\n]*"|'[^'\n]*')"""
_KEY_PART_RE = re.compile(_KEY_PART)
_DOTTED_CHAIN = re.compile(rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*")


def _has_deep_dotted_key(text: str) -> bool:
    """Whether ``text`` has a dotted key of more than :data:`MAX_TOML_DEPTH` parts (``a.a.a...``, in a key
    or a table header), found before parsing: tomllib reads one without recursing, but in time quadratic
    in its length (0.75 s measured for 5,000 parts, so about 75 s for 50,000). Each chain is matched once,
    so this is linear. Strings are not told apart from keys here, so a string of 65 dot-separated words
    would be refused too: no spec, budget or pyproject has one."""
    return any(m.group().count(".") >= MAX_TOML_DEPTH and len(_KEY_PART_RE.findall(m.group())) > MAX_TOML_DEPTH
               for m in _DOTTED_CHAIN.finditer(text))


def parse_toml(raw: bytes, where: str) -> dict[str, Any]:
    """The TOML document in ``raw``; anything that cannot be read is an :class:`OptionError` of one
    line starting with ``where`` (``budget b.toml``, ``hardware spec gpu.toml``): not UTF-8, not valid
    TOML, nested deeper than :data:`MAX_TOML_DEPTH`, or an integer longer than Python reads."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise OptionError(f"{where}: not UTF-8 text") from None
    too_deep = OptionError(f"{where}: nested more than {MAX_TOML_DEPTH} levels deep "
                           "(arrays, tables or dotted keys)")
    if _has_deep_dotted_key(text):
        raise too_deep
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OptionError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:
        raise too_deep from None
    except ValueError as exc:  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        if "digits" not in str(exc):  # pragma: no cover - tomllib raises nothing else
            raise OptionError(f"{where}: not valid TOML: {exc}") from None
        limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        raise OptionError(f"{where}: an integer too long to read (more than {limit} digits)") from None
    if _depth(data) > MAX_TOML_DEPTH:
        raise too_deep
    return data


def _depth(data: object) -> int:
    """How deeply tables and arrays nest in ``data`` (a scalar is 0, ``{"a": 1}`` is 1); iterative, so a
    document of dotted keys 5,000 levels deep (which tomllib reads without recursing) is measured too."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level > MAX_TOML_DEPTH:
            return level
        stack.extend((c, level + 1) for c in children)
    return deepest


__all__ = ["MAX_TOML_DEPTH", "parse_toml"]
