"""Colour for text output on a terminal, and nowhere else.

Colour is on when the stream is a terminal, ``TERM`` is not ``dumb`` and ``NO_COLOR`` is unset or
empty (https://no-color.org); ``FORCE_COLOR`` (non-empty) turns it on where it would be off for
not being a terminal (``NO_COLOR`` still wins); ``--color always|never`` overrides them all. It never reaches a file written with ``-o``, and never JSON, CSV or
any format a tool reads: only the ``text`` format, after it is rendered, so every renderer stays
plain and the same run gives the same bytes in a file whatever the terminal.

What is coloured (:data:`RULES`): verdicts (PASS green, FAIL and ERROR red, UNKNOWN and warnings
yellow), partial totals (``(partial)``, ``≥``) yellow, ``memory``-bound yellow and ``compute``-bound
cyan in roofline tables, and section headings bold.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

RESET = "\033[0m"
STYLES = {"bold": "\033[1m", "red": "\033[31m", "green": "\033[32m", "yellow": "\033[33m", "cyan": "\033[36m",
          "dim": "\033[2m"}

#: (pattern, style): the first group of each match is painted (the whole match when it has none)
RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.M), s) for p, s in (
    (r"^(PASS)\b", "green"),
    (r"^\s*(FAIL|ERROR)\b", "red"),
    (r"^(UNKNOWN)\b", "yellow"),
    (r"\b((?i:warning))s?\b:?", "yellow"),
    (r"\b(error)\b:", "red"),
    (r"(≥ ?[0-9][^\s]*(?: [kMGTPE])?)", "yellow"),
    (r"(\(partial\))", "yellow"),
    (r"\b(memory)(?=[ -]bound|\s*$|\s{2})", "yellow"),
    (r"\b(compute)(?=[ -]bound|\s*$|\s{2})", "cyan"),
    (r"^([A-Z][A-Za-z /()-]{2,40})$", "bold"),
))


def wanted(stream: TextIO | None, choice: str = "auto") -> bool:
    """Whether text written to ``stream`` is coloured (``choice``: auto, always, never)."""
    if choice == "always":
        return True
    if choice == "never" or stream is None:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def paint(text: str, style: str) -> str:
    return f"{STYLES[style]}{text}{RESET}"


def highlight(text: str) -> str:
    """``text`` with :data:`RULES` applied: escape codes around the words that carry a verdict."""
    spans: list[tuple[int, int, str]] = []
    taken = [False] * (len(text) + 1)
    for pattern, style in RULES:
        for m in pattern.finditer(text):
            a, b = m.span(1) if m.groups() else m.span()
            if a == b or any(taken[a:b]):
                continue
            spans.append((a, b, style))
            for i in range(a, b):
                taken[i] = True
    if not spans:
        return text
    out, at = [], 0
    for a, b, style in sorted(spans):
        out.append(text[at:a])
        out.append(paint(text[a:b], style))
        at = b
    out.append(text[at:])
    return "".join(out)
