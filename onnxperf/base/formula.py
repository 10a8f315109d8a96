"""Exact polynomial fits of costs in named dims: ``MACs = 4.09e9·batch``.

A model's MACs, FLOPs, bytes and tensor sizes are, for almost every model, polynomials with
rational coefficients in its symbolic dims (batch, sequence): products of dims along each tensor,
summed over nodes. This module recovers such a polynomial *exactly* from evaluations:

* monomials of total degree ≤ D in k dims; evaluation points on the shifted principal lattice
  {e + 1 : e ∈ ℕᵏ, |e| ≤ D} (unisolvent for that space), times an optional ``scale``;
* the linear system is solved in exact rationals (``fractions.Fraction``), several value vectors
  at once (one solve, many right-hand sides);
* the fit is then checked at a point off the lattice; a mismatch means the cost is not a
  polynomial of degree ≤ D in these dims (``floor`` from strides, a max over branches ...), and
  :class:`NotPolynomialError` says so, never a wrong formula.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from onnxperf.base.errors import OnnxPerfError


class NotPolynomialError(OnnxPerfError):
    """The evaluations do not fit a polynomial of the allowed degree (exit code 2 when fatal)."""


Exponents = tuple[int, ...]


@dataclass(frozen=True)
class Polynomial:
    dims: tuple[str, ...]
    #: (exponents, coefficient) pairs with non-zero coefficients, in graded-lex order
    terms: tuple[tuple[Exponents, Fraction], ...]

    def __call__(self, values: dict[str, int] | Sequence[int]) -> Fraction:
        xs = [values[d] for d in self.dims] if isinstance(values, dict) else list(values)
        total = Fraction(0)
        for exps, c in self.terms:
            term = c
            for x, e in zip(xs, exps):
                term *= x ** e
            total += term
        return total

    @property
    def degree(self) -> int:
        return max((sum(e) for e, _ in self.terms), default=0)

    def format(self, digits: int = 3) -> str:
        """``4.09e9·batch + 1.5e5·sequence²``; exact integers are kept when short."""
        if not self.terms:
            return "0"
        parts = []
        for exps, c in sorted(self.terms, key=lambda t: (-sum(t[0]), t[0])):
            mono = "·".join(_pow(d, e) for d, e in zip(self.dims, exps) if e)
            coef = _num(c, digits)
            if mono:
                parts.append(mono if coef == "1" else f"{coef}·{mono}")
            else:
                parts.append(coef)
        text = " + ".join(parts)
        return text.replace("+ -", "− ")

    def to_dict(self) -> dict:
        """JSON form: exact coefficients as strings ("3/2" or "4089184256")."""
        return {"dims": list(self.dims),
                "terms": [{"exponents": dict(zip(self.dims, e)), "coefficient": str(c)} for e, c in self.terms],
                "text": self.format()}


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _pow(d: str, e: int) -> str:
    return d if e == 1 else d + str(e).translate(_SUPERSCRIPT)


def _num(c: Fraction, digits: int) -> str:
    if c.denominator == 1 and abs(c.numerator) < 10 ** (digits + 1):
        return str(c.numerator)
    v = float(c)
    text = f"{v:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def monomials(k: int, degree: int) -> list[Exponents]:
    """All exponent tuples of total degree ≤ ``degree`` in ``k`` variables, graded-lex order."""
    out = [e for e in itertools.product(range(degree + 1), repeat=k) if sum(e) <= degree]
    return sorted(out, key=lambda e: (sum(e), tuple(-x for x in e)))


def lattice_points(k: int, degree: int, scale: int = 1) -> list[tuple[int, ...]]:
    return [tuple(scale * (x + 1) for x in e) for e in monomials(k, degree)]


def check_point(k: int, degree: int, scale: int = 1) -> tuple[int, ...]:
    return tuple(scale * (degree + 2 + i) for i in range(k))


def _solve(matrix: list[list[Fraction]], rhs: list[list[Fraction]]) -> list[list[Fraction]]:
    """Gauss-Jordan in exact rationals; ``rhs`` is one column per value vector."""
    n = len(matrix)
    a = [row[:] + r[:] for row, r in zip(matrix, rhs)]
    width = len(a[0])
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        inv = 1 / a[col][col]
        a[col] = [x * inv for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [row[n:width] for row in a]


def fit_many(evaluate: Callable[[dict[str, int]], Sequence[int]], dims: Sequence[str], degree: int = 3,
             scale: int = 1, labels: Sequence[str] | None = None) -> list[Polynomial | None]:
    """Fit several integer-valued functions of ``dims`` at once.

    ``evaluate`` maps a binding to a vector of values (the same length every time). Returns one
    :class:`Polynomial` per component, or None for a component that is not polynomial of degree
    ≤ ``degree`` (it failed the check point).
    """
    dims = tuple(dims)
    k = len(dims)
    monos = monomials(k, degree)
    points = lattice_points(k, degree, scale)
    rows = [[Fraction(_eval_mono(p, e)) for e in monos] for p in points]
    values = [list(evaluate(dict(zip(dims, p)))) for p in points]
    width = len(values[0])
    rhs = [[Fraction(v) for v in vec] for vec in values]
    coef = _solve(rows, rhs)
    check = check_point(k, degree, scale)
    actual = list(evaluate(dict(zip(dims, check))))
    out: list[Polynomial | None] = []
    for j in range(width):
        terms = tuple((e, coef[i][j]) for i, e in enumerate(monos) if coef[i][j] != 0)
        poly = Polynomial(dims, terms)
        out.append(poly if poly(check) == actual[j] else None)
    return out


def fit(evaluate: Callable[[dict[str, int]], int], dims: Sequence[str], degree: int = 3, scale: int = 1,
        what: str = "the cost") -> Polynomial:
    """Fit one function; raise :class:`NotPolynomialError` with a clear message if it is not one."""
    (poly,) = fit_many(lambda b: [evaluate(b)], dims, degree, scale)
    if poly is None:
        raise NotPolynomialError(
            f"{what} is not a polynomial of degree ≤ {degree} in {', '.join(dims)} (checked at "
            f"{dict(zip(dims, check_point(len(dims), degree, scale)))}); no formula is given")
    return poly


def _eval_mono(point: Sequence[int], exps: Exponents) -> int:
    v = 1
    for x, e in zip(point, exps):
        v *= x ** e
    return v


def largest_int(predicate_ok: Callable[[int], bool], lo: int = 1, hi_limit: int = 1 << 62) -> int | None:
    """Largest n ≥ lo with predicate_ok(n), for a predicate that is true then false (monotone).
    None when even ``lo`` fails; ``hi_limit`` when it never fails below it."""
    if not predicate_ok(lo):
        return None
    hi = lo
    while hi < hi_limit and predicate_ok(min(hi * 2, hi_limit)):
        hi = min(hi * 2, hi_limit)
    if hi >= hi_limit:
        return hi_limit
    bad = min(hi * 2, hi_limit)
    while bad - hi > 1:
        mid = (hi + bad) // 2
        if predicate_ok(mid):
            hi = mid
        else:
            bad = mid
    return hi
