"""Human-readable numbers for text and Markdown output (JSON keeps exact integers)."""

from __future__ import annotations


def si(x: float | int | None, unit: str = "") -> str:
    """3 significant digits with an SI prefix: 4.09 G, 25.6 M, 512."""
    if x is None:
        return "?"
    ax = abs(x)
    if ax >= 999.5e24:  # past the last prefix: a power of ten, never "4.09e+05 P"
        return f"{x:.3g} {unit}".rstrip()
    for scale, prefix in ((1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"),
                          (1e3, "k")):
        if ax >= scale * 0.9995:  # what rounds to 1.00 of a prefix takes it: 1 P, never 1e+03 T
            return f"{x / scale:.3g} {prefix}{unit}".rstrip()
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x)} {unit}".rstrip()
    return f"{x:.3g} {unit}".rstrip()


def binary_bytes(x: int | None) -> str:
    """Bytes with binary prefixes: 97.5 MiB."""
    if x is None:
        return "?"
    if abs(x) >= 1 << 80:  # past the last prefix: a power of ten, never "876188 TiB"
        return f"{x:.3g} B"
    for scale, prefix in ((1 << 70, "ZiB"), (1 << 60, "EiB"), (1 << 50, "PiB"), (1 << 40, "TiB"), (1 << 30, "GiB"),
                          (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(x) >= scale:
            v = x / scale
            return f"{v:.0f} {prefix}" if abs(v) >= 999.5 else f"{v:.3g} {prefix}"  # never 1.02e+03
    return f"{x} B"


def pct(x: float | None) -> str:
    return "?" if x is None else f"{100 * x:.1f}%"


def shape(s: tuple | list | None) -> str:
    if s is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in s) + "]"


def clean(text: str, limit: int = 60) -> str:
    """A name made safe for one line of a terminal: control characters escaped, long names cut."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return cut(out, limit)


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ``…`` ending a cut one; prose is cut between words
    (at the last space of the final quarter), a name without spaces where it must."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if text[limit - 1] != " " and space >= (limit * 3) // 4:  # inside a word: back to its start
        head = head[:space].rstrip(" ,;:")
    return head + "…"


def seconds(x: float | None) -> str:
    """0.0123 -> 12.3 ms."""
    if x is None:
        return "?"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} ns"


#: how a figure on each side of the truth reads: (sign, word) for ``text`` -> ``sign text (word)``
_SIDES = {"lower": ("≥", "partial"), "upper": ("≤", "upper bound"), "unknown": ("~", "partial, with upper bounds")}


def _side(partial: bool | str) -> str:
    """The side a ``partial`` flag names: True is the usual partial total, a lower bound."""
    if not partial:
        return ""
    return "lower" if partial is True else str(partial)


def lower_bound(text: str, value: float | int | None, partial: bool | str, short: bool = False) -> str:
    """A total that may not be exact, formatted as ``text``. ``partial`` says how: False (or ``""``,
    ``"exact"``): exact, ``text``; True or ``"lower"`` (some node not costed, some tensor of unknown
    size): a lower bound, ``≥ text (partial)``, or ``unknown`` when nothing of it is known, since
    unknown is never printed as 0; ``"upper"`` (a size replaced by the largest the model can
    produce): ``≤ text (upper bound)``; ``"unknown"`` (both): ``~ text (partial, with upper bounds)``.
    ``short`` is for table cells: the sign alone, or ``?`` (the table says once why)."""
    side = _side(partial)
    if side in ("", "exact"):
        return text
    if not value and side != "upper":
        return "?" if short else "unknown"
    sign, word = _SIDES.get(side, _SIDES["unknown"])
    return f"{sign} {text}" if short else f"{sign} {text} ({word})"


def upper_bound(text: str, value: float | int | None, partial: bool | str, short: bool = False) -> str:
    """A figure that varies inversely with a total that may not be exact (a throughput from a latency):
    a lower-bound latency gives ``≤ text``, an upper-bound one ``≥ text``."""
    side = _side(partial)
    if side in ("", "exact"):
        return text
    if value is None:
        return "?" if short else "unknown"
    sign, word = {"lower": ("≤", "partial"), "upper": ("≥", "from an upper bound")}.get(side, _SIDES["unknown"])
    return f"{sign} {text}" if short else f"{sign} {text} ({word})"
