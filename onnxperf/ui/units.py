"""Parsing sizes given on the command line."""

from __future__ import annotations

import re

from onnxperf.base.errors import OptionError

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(text: str) -> int:
    """``8GiB`` -> 8589934592, ``16GB`` -> 16e9, ``512MiB``, ``1e9``; plain numbers are bytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise OptionError(f"bad size {text!r}: expected e.g. 8GiB, 16GB, 512MiB or a number of bytes")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value <= 0:
        raise OptionError(f"bad size {text!r}: must be positive")
    return int(value)
