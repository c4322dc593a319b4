"""Numbers an answer computed from the numbers its results carry.

A number no result carried is asked, in this order, whether it is

1. a rounding of a carried number at the answer's precision;
2. a unit conversion of one (steps of 1000 and 1024, up to three);
3. the complement (100 − x) of a percentage field;
4. over the rows of a list (all of them, or a group of rows that share a value in one
   field): a column's sum, the same-unit ratio of two columns' sums (as a fraction or a
   percentage), the complement of that percentage, or the difference of two columns' sums.

Nothing else is accepted: no products, averages, chains or arbitrary subsets. Every search
is bounded (rows, columns, groups, derived values); past a bound the search stops, which can
only leave more numbers flagged, never fewer.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, TypeGuard

from .evidence_index import Source, join_path
from .tokens import canonical_number
from .types import Evidence

MAX_ROWS = 500
MAX_COLUMNS = 16
MAX_GROUP_KEYS = 6
MAX_GROUPS_PER_KEY = 64
MAX_DERIVED = 20_000
MAX_SOURCES = 32

_SCALES = tuple(
    (base**power, f"{'×' if power > 0 else '÷'} {base}" + ("" if abs(power) == 1 else f"^{abs(power)}"))
    for base in (1000, 1024)
    for power in (1, 2, 3, -1, -2, -3)
)
_UNIT_WORDS = frozenset(
    "tb gb mb kb pb b bytes tib gib mib kib ms s sec secs seconds us ns pct percent count iops mbps gbps "
    "kbps hours hrs h min mins minutes days usd eur gbp w kw watts".split()
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
    r'"([^"\\]{0,64}(?:pct|percent|perc|util|usage|%)[^"\\]{0,64})"\s*:\s*"?(-?\d+(?:\.\d+)?)', re.I
)


# Every match of _PERCENT_FIELD names one of these in its key. Finding none of them is far
# cheaper than running the pattern, which backtracks at every quote of a large result.
_PERCENT_WORDS = ("pct", "perc", "util", "usage", "%")


@dataclass
class _Facts:
    """What ``explain`` reads of one source, each part computed on first use and kept."""

    numbers: list[tuple[float, str]] | None = None  # every number carried, sorted, with its spelling
    percents: list[tuple[float, int]] | None = None  # percentage fields: value, where the number stands
    aggregates: list[tuple[float, str, str]] | None = None  # value, kind, how


def _facts(source: Source) -> _Facts:
    cached = source.cache.get("facts")
    if cached is None:
        cached = source.cache["facts"] = _Facts()
    return cached


def _numbers(source: Source) -> list[tuple[float, str]]:
    facts = _facts(source)
    if facts.numbers is None:
        found = _NUMBER_LINE.findall("\n".join(source.forms))
        facts.numbers = sorted(zip(map(float, found), found, strict=True))  # all in C
    return facts.numbers


def _percents(source: Source) -> list[tuple[float, int]]:
    facts = _facts(source)
    if facts.percents is None:
        text = source.text[:2_000_000]
        facts.percents = (
            [(float(m.group(2)), m.start(2)) for m in _PERCENT_FIELD.finditer(text)]
            if _may_name_a_percentage(text)
            else []
        )
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


def _aggregates(source: Source) -> list[tuple[float, str, str]]:
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


def _is_number(value: Any) -> TypeGuard[int | float]:
    return type(value) in (int, float)


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row with the numbers of its nested objects as columns of their own (``prices.economy``)."""
    if not any(isinstance(v, dict) for v in row.values()):
        return row
    out = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if _is_number(v)})
        else:
            out[key] = value
    return out


def _aggregate(path: str, rows: list[dict[str, Any]], out: list[tuple[float, str, str]]) -> None:
    rows = [_flat(row) for row in rows]
    sample = rows[:32]
    columns: list[str] = []
    texts: list[str] = []
    for row in sample:
        for k, v in row.items():
            if _is_number(v):
                if k not in columns and len(columns) < MAX_COLUMNS:
                    columns.append(k)
            elif isinstance(v, str) and k not in texts:
                texts.append(k)
    if not columns:
        return
    values = {c: [v if _is_number(v := row.get(c)) else 0.0 for row in rows] for c in columns}
    present = {c: any(_is_number(row.get(c)) for row in rows) for c in columns}
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
            sums = {c: float(sum(values[c])) for c in columns if present[c]}
        else:
            sums = {c: float(sum([values[c][i] for i in idx])) for c in columns if present[c]}

        def name(c: str, label: str = label) -> str:
            return f"{path}[{label}].{c}"

        for c, total in sums.items():
            out.append((total, "column-sum", f"Σ {name(c)}"))
        for a, b in pairs:
            if a not in sums or b not in sums:
                continue
            if sums[b]:
                ratio = sums[a] / sums[b]
                out.append((100 * ratio, "column-ratio", f"100 × {name(a)} ÷ {name(b)}"))
                out.append((ratio, "column-ratio", f"{name(a)} ÷ {name(b)}"))
                out.append((100 - 100 * ratio, "complement", f"100 − 100 × {name(a)} ÷ {name(b)}"))
            if sums[a] >= sums[b]:
                out.append((sums[a] - sums[b], "column-difference", f"{name(a)} − {name(b)}"))
        if len(out) >= MAX_DERIVED:
            del out[MAX_DERIVED:]
            return


def _tolerance(precision: int) -> float:
    return 0.5 * 10.0 ** (-precision) * (1 + 1e-9) + 1e-12


def _near(numbers: list[tuple[float, str]], target: float, tol: float) -> str | None:
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


_ALL_KINDS = ("rounded", "unit-scale", "complement", "column-sum", "column-ratio", "column-difference")


def explain(
    number: float | None,
    precision: int,
    sources: list[Source],
    rounding_only: bool = False,
    kinds: tuple[str, ...] = _ALL_KINDS,
    whole_lists: bool = False,
) -> Derivation | None:
    """The first derivation (in the documented order) that gives ``number``, or None.

    ``kinds`` narrows the search: an amount of money is never a unit conversion or a ratio.
    ``whole_lists`` takes sums over every row of a list only, never over a group of its rows:
    a reservation's total is the sum of all its legs, not of those that share a date.
    """
    if number is None or len(canonical_number(repr(number)).replace(".", "")) > 15:
        return None  # past float precision a "match" would mean nothing
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
    for kind in [k for k in ("column-sum", "column-ratio", "complement", "column-difference") if k in kinds]:
        for source, found in aggregates:
            for value, agg_kind, how in found:
                if whole_lists and "[]." not in how:
                    continue  # a group's sum: its name holds the group, ``rows[key=value].column``
                if agg_kind == kind and abs(abs(value) - number) <= tol:
                    columns = tuple(
                        Evidence(call_id=source.call_id, path=part)
                        for part in re.findall(r"[^\s×÷−Σ]*\[[^\]]*\]\.[^\s×÷−]+", how)
                    )
                    return Derivation(kind, how, columns or (Evidence(call_id=source.call_id),))
    return None
