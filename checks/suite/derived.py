"""Numbers an answer computed from the numbers its results carry.

A number no result carried is asked, in this order, whether it is

1. a rounding of a carried number at the answer's precision;
2. a unit conversion of one (steps of 1000 and 1024, up to three);
3. the complement (100 − x) of a percentage field (one whose name says percent, in one
   word or two: ``pct``, ``percent``, ``per_cent``);
4. over the rows of a list (all of them, or a group of rows that share a value in one
   field): a column's sum, the same-unit ratio of two columns' sums (as a fraction or a
   percentage), the complement of that percentage, or the difference of two columns' sums.

Nothing else is accepted: no products, averages, chains or arbitrary subsets. Every search
is bounded (rows, columns, groups, derived values); past a bound the search stops, which can
only leave more numbers flagged, never fewer.

Numbers are ``Decimal`` (``decimals``), so a figure is a rounding of another only within half
a unit of its last written digit, however many digits both have. Sums and differences are
exact; a ratio is taken to QUOTIENT_DIGITS digits, and matches a figure only when the digits
it leaves off could not move it out of the figure's tolerance.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from operator import itemgetter
from typing import Any

from .decimals import EXACT, ZERO, exactly, is_number, read_number
from .evidence_index import Source, join_path
from .money import CODES
from .types import Evidence

MAX_ROWS = 500
MAX_COLUMNS = 16
MAX_GROUP_KEYS = 6
MAX_GROUPS_PER_KEY = 64
MAX_DERIVED = 20_000
MAX_SOURCES = 32
QUOTIENT_DIGITS = 50  # past any digit a figure written for people has
_QUOTIENT = Context(prec=QUOTIENT_DIGITS, Emax=MAX_EMAX, Emin=MIN_EMIN)

_SCALES = tuple(
    (
        Decimal(base) ** power,  # exact: 1000 and 1024 to the ±3rd have at most 21 digits
        f"{'×' if power > 0 else '÷'} {base}" + ("" if abs(power) == 1 else f"^{abs(power)}"),
    )
    for base in (1000, 1024)
    for power in (1, 2, 3, -1, -2, -3)
)
_UNIT_WORDS = (
    frozenset(
        "tb gb mb kb pb b bytes tib gib mib kib ms s sec secs seconds us ns pct percent count iops mbps gbps "
        "kbps hours hrs h min mins minutes days w kw watts".split()
    )
    | CODES  # a currency is a unit too: ``price_eur``
)


@dataclass(frozen=True)
class Derivation:
    kind: str  # rounded | unit-scale | complement | column-sum | column-ratio | column-difference
    source: str  # the sources named, e.g. 100 × clusters[].used_tb ÷ clusters[].total_tb
    evidence: tuple[Evidence, ...]

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "from": self.source}


_NUMBER_LINE = re.compile(r"^\d+(?:\.\d+)?$", re.M)
_PERCENT_FIELD = re.compile(
    r'"([^"\\]{0,64}(?:pct|percent|perc|per[ _-]cent|util|usage|%)[^"\\]{0,64})"\s*:\s*"?(-?\d+(?:\.\d+)?)',
    re.I,
)


# Every match of _PERCENT_FIELD names one of these in its key ("per cent" is "percent" in
# two words, as ``tokens.WORDED_UNITS`` reads it in a text). Finding none of them is far
# cheaper than running the pattern, which backtracks at every quote of a large result.
_PERCENT_WORDS = ("pct", "perc", "per_cent", "per-cent", "per cent", "util", "usage", "%")


# A figure over a list's rows: its magnitude (an answer states a difference or a complement
# without its sign), how far that may lie from the true one (a ratio's digits left off; zero
# for a sum), its kind, and how it is made.
_Aggregate = tuple[Decimal, Decimal, str, str]


@dataclass
class _Facts:
    """What ``explain`` reads of one source, each part computed on first use and kept."""

    numbers: list[tuple[Decimal, str]] | None = None  # every number carried, sorted, with its spelling
    percents: list[tuple[Decimal, int]] | None = None  # percentage fields: value, where the number stands
    aggregates: list[_Aggregate] | None = None


def _facts(source: Source) -> _Facts:
    cached = source.cache.get("facts")
    if cached is None:
        cached = source.cache["facts"] = _Facts()
    return cached


def _numbers(source: Source) -> list[tuple[Decimal, str]]:
    facts = _facts(source)
    if facts.numbers is None:
        found = sorted(_NUMBER_LINE.findall("\n".join(source.forms)))
        # All in C, and in the order of the pairs: sorted by spelling, then (stably) by value,
        # which compares Decimals once where comparing the pairs would twice. However long,
        # these numbers are only compared with a figure, never computed with.
        facts.numbers = sorted(zip(map(Decimal, found), found, strict=True), key=itemgetter(0))
    return facts.numbers


def _percents(source: Source) -> list[tuple[Decimal, int]]:
    facts = _facts(source)
    if facts.percents is None:
        text = source.text[:2_000_000]
        found = _PERCENT_FIELD.finditer(text) if _may_name_a_percentage(text) else iter(())
        facts.percents = [
            (value, m.start(2)) for m in found if (value := read_number(m.group(2))) is not None
        ]
    return facts.percents


def _may_name_a_percentage(text: str) -> bool:
    """False only when no key of ``text`` can match _PERCENT_FIELD.

    Only for ASCII text is ``lower`` exactly what ``re.I`` matches (it also folds a few
    other letters onto ASCII ones), so any other text is left to the pattern itself.
    """
    if not text.isascii():
        return True
    low = text.lower()
    return any(word in low for word in _PERCENT_WORDS)


@exactly
def _aggregates(source: Source) -> list[_Aggregate]:
    facts = _facts(source)
    if facts.aggregates is None:
        facts.aggregates = []
        value = source.parsed() if source.looks_json else None
        tables: list[tuple[str, list[dict[str, Any]]]] = []
        _tables(value, "", tables)
        for path, rows in tables:
            _aggregate(path, rows, facts.aggregates)
            if len(facts.aggregates) >= MAX_DERIVED:
                break
    return facts.aggregates


def _tables(value: Any, path: str, out: list[tuple[str, list[dict[str, Any]]]], depth: int = 0) -> None:
    """Every list of rows (objects) in a JSON value, with its path; rows are not walked."""
    if depth > 16 or len(out) >= 64:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                _tables(item, join_path(path, str(key)), out, depth + 1)
    elif isinstance(value, list):
        rows = [row for row in value[:MAX_ROWS] if isinstance(row, dict)]
        if rows:
            out.append((path, rows))
        else:
            for i, item in enumerate(value[:MAX_ROWS]):
                if isinstance(item, (dict, list)):
                    _tables(item, join_path(path, i), out, depth + 1)


def _unit(key: str) -> str | None:
    parts = re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", key)
    tail = parts[-1].lower() if len(parts) > 1 else ""
    return tail if tail in _UNIT_WORDS else None


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row with the numbers of its nested objects as columns of their own (``prices.economy``)."""
    if not any(isinstance(v, dict) for v in row.values()):
        return row
    out = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if is_number(v)})
        else:
            out[key] = value
    return out


def _aggregate(path: str, rows: list[dict[str, Any]], out: list[_Aggregate]) -> None:
    rows = [_flat(row) for row in rows]
    sample = rows[:32]
    columns: list[str] = []
    texts: list[str] = []
    for row in sample:
        for k, v in row.items():
            if is_number(v):
                if k not in columns and len(columns) < MAX_COLUMNS:
                    columns.append(k)
            elif isinstance(v, str) and k not in texts:
                texts.append(k)
    if not columns:
        return
    # Integers and Decimals as read: a sum of them in EXACT is a Decimal, exact.
    values = {c: [v if is_number(v := row.get(c)) else 0 for row in rows] for c in columns}
    present = {c: any(is_number(row.get(c)) for row in rows) for c in columns}
    groups: list[tuple[str, list[int] | None]] = [("", None)]
    keyed: list[tuple[str, dict[str, list[int]]]] = []
    for k in texts:
        members: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            v = row.get(k)
            if isinstance(v, str):
                members.setdefault(v, []).append(i)
                if len(members) > MAX_GROUPS_PER_KEY:
                    break
        if 1 < len(members) <= MAX_GROUPS_PER_KEY:
            keyed.append((k, members))
    keyed.sort(key=lambda item: len(item[1]))
    for k, members in keyed[:MAX_GROUP_KEYS]:
        groups.extend((f"{k}={v}", idx) for v, idx in members.items())
    pairs = [(a, b) for a in columns for b in columns if a != b and _unit(a) == _unit(b)]
    for label, idx in groups:
        if idx is None:
            sums = {c: Decimal(sum(values[c], ZERO)) for c in columns if present[c]}
        else:
            sums = {c: Decimal(sum([values[c][i] for i in idx], ZERO)) for c in columns if present[c]}

        def name(c: str, label: str = label) -> str:
            return f"{path}[{label}].{c}"

        for c, total in sums.items():
            out.append((abs(total), ZERO, "column-sum", f"Σ {name(c)}"))
        for a, b in pairs:
            if a not in sums or b not in sums:
                continue
            if sums[b]:
                ratio, off = _quotient(sums[a], sums[b])
                out.append((abs(100 * ratio), 100 * off, "column-ratio", f"100 × {name(a)} ÷ {name(b)}"))
                out.append((abs(ratio), off, "column-ratio", f"{name(a)} ÷ {name(b)}"))
                complement = abs(100 - 100 * ratio)
                out.append((complement, 100 * off, "complement", f"100 − 100 × {name(a)} ÷ {name(b)}"))
            if sums[a] >= sums[b]:
                out.append((sums[a] - sums[b], ZERO, "column-difference", f"{name(a)} − {name(b)}"))
        if len(out) >= MAX_DERIVED:
            del out[MAX_DERIVED:]
            return


def _quotient(a: Decimal, b: Decimal) -> tuple[Decimal, Decimal]:
    """``a ÷ b`` to QUOTIENT_DIGITS digits, and how far it may lie from the true quotient:
    nothing when it ends within them, else less than one unit of its last digit."""
    ratio = _QUOTIENT.divide(a, b)
    if EXACT.multiply(ratio, b) == a:
        return ratio, ZERO
    return ratio, Decimal(1).scaleb(ratio.adjusted() - QUOTIENT_DIGITS + 1)


def _tolerance(precision: int) -> Decimal:
    """Half a unit of the last digit written: 53.2 stands for 53.15 to 53.25."""
    return Decimal(5).scaleb(-precision - 1)


def _near(numbers: list[tuple[Decimal, str]], target: Decimal, tol: Decimal) -> str | None:
    """The spelling of a carried number within ``tol`` of ``target``, if any (binary search)."""
    i = bisect_left(numbers, (target - tol, ""))
    if i < len(numbers) and numbers[i][0] <= target + tol:
        return numbers[i][1]
    return None


def _leaf(
    kind: str, how: str, source: Source, spelling: str | None = None, offset: int | None = None
) -> Derivation:
    path = ""
    if offset is None and spelling is not None:
        span = source.span_of(spelling)
        offset = span[0] if span else None
    if offset is not None:
        path = source.path_at(offset)
    where = path or f"{source.call_id} text"
    return Derivation(kind, how.format(where), (Evidence(call_id=source.call_id, path=path),))


DERIVATION_KINDS = ("rounded", "unit-scale", "complement", "column-sum", "column-ratio", "column-difference")


@exactly
def explain(
    number: Decimal | None,
    precision: int,
    sources: list[Source],
    rounding_only: bool = False,
    kinds: tuple[str, ...] = DERIVATION_KINDS,
    whole_lists: bool = False,
) -> Derivation | None:
    """The first derivation (in the documented order) that gives ``number``, or None.

    ``kinds`` narrows the search: an amount of money is never a unit conversion or a ratio.
    ``whole_lists`` takes sums over every row of a list only, never over a group of its rows:
    a reservation's total is the sum of all its legs, not of those that share a date.
    """
    if number is None:
        return None
    tol = _tolerance(precision)
    # Each source's facts are read only when an earlier step found nothing: most numbers
    # are settled by the newest result, and a large result is costly to read.
    near = sources[:MAX_SOURCES]
    for source in near if "rounded" in kinds else ():
        spelling = _near(_numbers(source), number, tol)
        if spelling is not None:
            return _leaf("rounded", "{}", source, spelling)
    if rounding_only:
        return None
    for source in near if "unit-scale" in kinds else ():
        numbers = _numbers(source)
        for factor, label in _SCALES:
            spelling = _near(numbers, number / factor, tol / factor)
            if spelling is not None:
                return _leaf("unit-scale", "{} " + label, source, spelling)
    for source in near if "complement" in kinds else ():
        for value, offset in _percents(source):
            if 0 <= value <= 100 and abs(100 - value - number) <= tol:
                return _leaf("complement", "100 − {}", source, offset=offset)
    aggregates = [(source, _aggregates(source)) for source in near]
    # Within the tolerance, before the digits a ratio left off are counted: two comparisons
    # settle most of a long list.
    low, high = number - tol, number + tol
    for kind in [k for k in ("column-sum", "column-ratio", "complement", "column-difference") if k in kinds]:
        for source, found in aggregates:
            for magnitude, off, agg_kind, how in found:
                if whole_lists and "[]." not in how:
                    continue  # a group's sum: its name holds the group, ``rows[key=value].column``
                if (
                    agg_kind == kind
                    and low <= magnitude <= high
                    and (not off or abs(magnitude - number) + off <= tol)
                ):
                    columns = tuple(
                        Evidence(call_id=source.call_id, path=part)
                        for part in re.findall(r"[^\s×÷−Σ]*\[[^\]]*\]\.[^\s×÷−]+", how)
                    )
                    return Derivation(kind, how, columns or (Evidence(call_id=source.call_id),))
    return None
