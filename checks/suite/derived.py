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
from dataclasses import dataclass
from typing import Any

from .evidence_index import Source, join_path
from .tokens import _NUMBER, canonical_number
from .types import Evidence

MAX_LEAVES = 5_000
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
_PERCENT_KEY = re.compile(r"pct|percent|perc|util|usage|%")
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


@dataclass
class _Facts:
    leaves: list[tuple[float, str, bool]]  # value, path, is a percentage field
    aggregates: list[tuple[float, str, str]]  # value, kind, how, in the order they are tried


def _facts(source: Source) -> _Facts:
    cached = source.cache.get("facts")
    if cached is None:
        cached = _read_facts(source)
        source.cache["facts"] = cached
    return cached


def _read_facts(source: Source) -> _Facts:
    leaves: list[tuple[float, str, bool]] = []
    aggregates: list[tuple[float, str, str]] = []
    value = source.parsed() if source.looks_json else None
    if isinstance(value, (dict, list)):
        tables: list[tuple[str, list[dict[str, Any]]]] = []
        _walk(value, "", "", leaves, tables)
        for path, rows in tables:
            _aggregate(path, rows, aggregates)
            if len(aggregates) >= MAX_DERIVED:
                break
    seen = {leaf[0] for leaf in leaves}
    for form in source.forms:  # numbers written in text: roundings and conversions only
        if len(leaves) >= MAX_LEAVES:
            break
        if form[0].isdigit() and _NUMBER.fullmatch(form) and len(form) <= 17:
            number = float(form)
            if number not in seen:
                leaves.append((number, "", False))
    return _Facts(leaves, aggregates)


def _walk(
    value: Any,
    path: str,
    key: str,
    leaves: list[tuple[float, str, bool]],
    tables: list[tuple[str, list[dict[str, Any]]]],
    depth: int = 0,
) -> None:
    if depth > 32 or len(leaves) >= MAX_LEAVES:
        return
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        leaves.append((float(value), path, bool(_PERCENT_KEY.search(key.lower()))))
    elif isinstance(value, dict):
        for k, item in value.items():
            _walk(item, join_path(path, k), str(k), leaves, tables, depth + 1)
    elif isinstance(value, list):
        rows = [row for row in value[:MAX_ROWS] if isinstance(row, dict)]
        if rows:
            tables.append((path, rows))
        for i, item in enumerate(value):
            if len(leaves) >= MAX_LEAVES:
                return
            _walk(item, join_path(path, i), key, leaves, tables, depth + 1)


def _unit(key: str) -> str | None:
    parts = re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", key)
    tail = parts[-1].lower() if len(parts) > 1 else ""
    return tail if tail in _UNIT_WORDS else None


def _aggregate(path: str, rows: list[dict[str, Any]], out: list[tuple[float, str, str]]) -> None:
    columns: list[str] = []
    texts: dict[str, set[str]] = {}
    for row in rows:
        for k, v in row.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if k not in columns and len(columns) < MAX_COLUMNS:
                    columns.append(k)
            elif isinstance(v, str):
                texts.setdefault(k, set()).add(v)
    if not columns:
        return
    groups: list[tuple[str, list[dict[str, Any]]]] = [("", rows)]
    keys = sorted(
        (k for k, values in texts.items() if 1 < len(values) <= MAX_GROUPS_PER_KEY),
        key=lambda k: len(texts[k]),
    )[:MAX_GROUP_KEYS]
    for k in keys:
        members: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            v = row.get(k)
            if isinstance(v, str):
                members.setdefault(v, []).append(row)
        groups.extend((f"{k}={v}", group) for v, group in members.items())
    pairs = [(a, b) for a in columns for b in columns if a != b and (_unit(a) == _unit(b))]
    for label, group in groups:
        sums: dict[str, float] = {}
        for c in columns:
            total, present = 0.0, False
            for row in group:
                v = row.get(c)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    total += v
                    present = True
            if present:
                sums[c] = total

        def name(c: str, label: str = label) -> str:
            return f"{path}[{label}].{c}" if path or label else f"[{label}].{c}"

        for c, total in sums.items():
            out.append((total, "column-sum", f"Σ {name(c)}"))
        for a, b in pairs:
            if a in sums and b in sums and sums[b]:
                ratio = sums[a] / sums[b]
                out.append((100 * ratio, "column-ratio", f"100 × {name(a)} ÷ {name(b)}"))
                out.append((ratio, "column-ratio", f"{name(a)} ÷ {name(b)}"))
                out.append((100 - 100 * ratio, "complement", f"100 − 100 × {name(a)} ÷ {name(b)}"))
            if a in sums and b in sums and sums[a] >= sums[b]:
                out.append((sums[a] - sums[b], "column-difference", f"{name(a)} − {name(b)}"))
        if len(out) >= MAX_DERIVED:
            del out[MAX_DERIVED:]
            return


def _tolerance(precision: int) -> float:
    return 0.5 * 10.0 ** (-precision) * (1 + 1e-9) + 1e-12


def explain(
    number: float, precision: int, sources: list[Source], rounding_only: bool = False
) -> Derivation | None:
    """The first derivation (in the documented order) that gives ``number``, or None."""
    if number is None or len(canonical_number(repr(number)).replace(".", "")) > 15:
        return None  # past float precision a "match" would mean nothing
    tol = _tolerance(precision)
    facts = [(source, _facts(source)) for source in sources[:MAX_SOURCES]]

    def found(kind: str, how: str, source: Source, path: str) -> Derivation:
        return Derivation(kind, how, (Evidence(call_id=source.call_id, path=path),))

    for source, fact in facts:
        for value, path, _ in fact.leaves:
            if abs(abs(value) - number) <= tol:
                return found("rounded", path or f"{source.call_id} text", source, path)
    if rounding_only:
        return None
    for source, fact in facts:
        for value, path, _ in fact.leaves:
            for factor, label in _SCALES:
                if abs(abs(value * factor) - number) <= tol:
                    return found("unit-scale", f"{path or source.call_id + ' text'} {label}", source, path)
    for source, fact in facts:
        for value, path, is_percent in fact.leaves:
            if is_percent and 0 <= value <= 100 and abs(100 - value - number) <= tol:
                return found("complement", f"100 − {path}", source, path)
    for kind in ("column-sum", "column-ratio", "complement", "column-difference"):
        for source, fact in facts:
            for value, agg_kind, how in fact.aggregates:
                if agg_kind == kind and abs(abs(value) - number) <= tol:
                    columns = tuple(
                        Evidence(call_id=source.call_id, path=part.strip())
                        for part in re.findall(r"[\w\[\]=.\-]*\[[^\]]*\]\.[\w\-]+", how)
                    )
                    return Derivation(kind, how, columns or (Evidence(call_id=source.call_id),))
    return None
