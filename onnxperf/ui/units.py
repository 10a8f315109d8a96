"""Numbers a user gives us (sizes on the command line, figures in spec and budget TOML files), read safely.

Every figure read from a user is *bounded*: it is a finite number within a stated range of its unit,
so nothing derived from it (a time from FLOP / rate, a ratio, a sum over a model) can overflow to
Infinity, become NaN, or reach a JSON output as ``Infinity`` / ``NaN`` (which is not JSON). Numbers
past the float range (an integer of 400 digits, ``1e400``) are compared exactly, never converted to a
float first, so they are refused with a message instead of an ``OverflowError``.

TOML files (hardware specs, check budgets) are read by :func:`parse_toml`, which refuses text nested
deeper than :data:`MAX_TOML_DEPTH` (before parsing where tomllib would take long or recurse) and integers
too long to read, with one line naming the file.
"""

from __future__ import annotations

import decimal
import re
import sys
from decimal import Decimal
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from onnxperf.base.errors import OptionError

#: The largest figure any spec, budget or size option may give, in its own unit (FLOP/s, B/s, bytes,
#: items/s, a count of parameters or MACs). 1e30 is a billion times the largest figure any device or
#: model has today (an exaFLOP/s machine is 1e18, the largest models 1e12 parameters), and it keeps
#: every product and quotient of two figures (a time is FLOP / (FLOP/s); a ratio, a sum over 10^9
#: nodes) below 1e63, far inside a float's range (1.8e308): nothing derived can overflow to Infinity.
MAX_FIGURE = 1e30
#: The smallest rate per second (FLOP/s, B/s, items/s) a spec or budget may give. One operation per
#: 1000 s is far below any device, yet what is divided by it (at most :data:`MAX_FIGURE` FLOP or bytes)
#: stays a finite 1e33 s; below it a bandwidth of 5e-324 B/s turns one byte into Infinity seconds.
MIN_RATE = 1e-3
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


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def within(value: object, low: float, high: float) -> bool:
    """True when ``value`` is a real number (an int, float or Decimal; not a bool) in ``[low, high]``.

    NaN and the infinities are within no range; an int or a Decimal of any size is compared exactly
    (an int of 400 digits is never converted to a float, which would raise OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return False
    if isinstance(value, Decimal) and not value.is_finite():
        return False
    return low <= value <= high  # False for a float NaN


def shown(value: object, width: int = 40) -> str:
    """``value`` for a one-line error message: its repr, an integer too long to print whole as its
    first and last digits and its length (``1000…000 (401 digits)``), anything else cut at ``width``."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            text = str(value)
        except ValueError:  # more digits than Python converts to text (sys.get_int_max_str_digits())
            return "an integer of thousands of digits"
        digits = len(text.lstrip("-"))
        return text if len(text) <= width else f"{text[:4]}…{text[-3:]} ({digits} digits)"
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def parse_bytes(text: str) -> int:
    """``8GiB`` -> 8589934592, ``16GB`` -> 16e9, ``512MiB``, ``1e9``; plain numbers are bytes.

    The value is computed exactly (in decimal), rounded down to whole bytes, and must be from 1 byte
    to :data:`MAX_FIGURE` bytes: a size of 400 digits, or one that rounds to 0 bytes, is refused."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE]\+?[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise OptionError(f"bad size {shown(text)}: expected e.g. 8GiB, 16GB, 512MiB or a number of bytes")
    try:
        number = Decimal(m.group(1))
    except (decimal.InvalidOperation, ValueError):  # pragma: no cover - the pattern admits only numbers
        number = Decimal("Infinity")
    # compared before multiplying: 1e999999999 x 2^30 would overflow even a Decimal
    value = number * _UNITS[m.group(2).lower()] if within(number, 0, MAX_FIGURE) else None
    if value is None or value > MAX_FIGURE:
        raise OptionError(f"bad size {shown(text)}: more than {MAX_FIGURE:.0e} bytes")
    if value < 1:
        raise OptionError(f"bad size {shown(text)}: must be at least 1 byte")
    return int(value)


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
