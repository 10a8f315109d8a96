"""Numbers a user gives us (sizes on the command line, figures in spec and budget TOML files), read safely.

Every figure read from a user is *bounded*: it is a finite number within a stated range of its unit,
so nothing derived from it (a time from FLOP / rate, a ratio, a sum over a model) can overflow to
Infinity, become NaN, or reach a JSON output as ``Infinity`` / ``NaN`` (which is not JSON). Numbers
past the float range (an integer of 400 digits, ``1e400``) are compared exactly, never converted to a
float first, so they are refused with a message instead of an ``OverflowError``.

The TOML files they come in are read by :func:`onnxperf.ui.tomlfile.parse_toml`.
"""

from __future__ import annotations

import decimal
import re
from decimal import Decimal

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
