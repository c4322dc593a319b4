"""Row-consistent grounding: a value said of a record must be that record's own.

The evidence checker asks whether a value was read at all; a real value of the wrong record
("T-100042 was opened on 2026-11-01" when that date is T-100000's, in the same result)
passes that test. This module closes the gap for the two plain cases, and stays silent
wherever the answer leaves room for doubt:

- ``value_of_other_record`` (flag): one sentence names exactly one record (an identifier
  that a result holds as a value of its own object: a ticket id, a flight number) and states
  a value that the checker grounded; the value is nowhere in that record's objects (nested
  objects, and every object that shares a name with it) and is in another record's object,
  under a field the named record has too (so it is that field's value of the wrong row). The
  evidence holds both records' fields. Amounts are judged only within their clause ("$250
  from the certificate, $55 from card 7447" names no record for the $250).
  Values the user or the prompt supplied, computed figures and identifiers are not judged.
- ``contradicted_value`` (flag): a sentence says a field's value ("Gold member",
  "Plan: Premium", "cabin is economy") where the field is a key of the conversation's
  records, the value is one that field takes in another record of the conversation (so it
  is a value of that field, not a word that happens to stand beside its name), and the
  record the sentence names holds another value there, in every version read. A route
  right after a record's name ("SHP-2201 from YORK to LEEDS") is judged the same way
  against the record's own start and end fields (``origin``/``destination``, ``from``/
  ``to``), with both places values those fields take somewhere in the conversation.
  Questions, conditions and proposals ("if you upgrade to Gold", "would you like economy")
  describe no record and are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .evidence_index import Source, join_path
from .text import OFFER_OR_PLAN, Sentence, name_tokens, sentences
from .tokens import Candidate, index_text, normalize
from .types import Evidence, Finding, Span

MAX_RECORDS = 2000
_IDENTIFIER = re.compile(r"(?=[^\s]*\d)[A-Za-z0-9][\w.:/-]{2,63}")
# A date, a timestamp or a clock time says when, not what: never a record's name.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")
_NOT_A_REPORT = re.compile(
    rf"{OFFER_OR_PLAN}|\b(?:if|unless|would|could|can|want|wish|like|prefer|upgrade|upgrading|switch|"
    r"change|changing|option|options|new|proposed|instead|confirm|proceed)\b",
    re.I,
)


@dataclass
class Record:
    """One JSON object of a result that names itself with an identifier-like string."""

    names: set[str]  # its own identifier values, lower case
    source: Source
    path: str
    value: dict[str, Any]
    _forms: set[str] | None = field(default=None, repr=False)
    _leaves: dict[str, set[str]] | None = field(default=None, repr=False)

    @property
    def forms(self) -> set[str]:
        """Every normalized form its values carry, nested objects included."""
        if self._forms is None:
            self._forms = index_text(json.dumps(self.value, ensure_ascii=False))[0]
        return self._forms

    @property
    def leaves(self) -> dict[str, set[str]]:
        """Each scalar field (nested paths joined by dots) with the forms of its value."""
        cached = self._leaves
        if cached is None:
            cached = {}
            stack: list[tuple[str, Any]] = [("", self.value)]
            while stack and len(cached) < 512:
                path, node = stack.pop()
                if isinstance(node, dict):
                    stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in node.items())
                elif not isinstance(node, list) and node is not None:
                    cached[path] = index_text(str(node))[0]
            self._leaves = cached
        return cached

    def fields_holding(self, forms: tuple[str, ...]) -> list[str]:
        return [path for path, held in self.leaves.items() if any(form in held for form in forms)]

    def evidence(self, path: str = "") -> Evidence:
        where = join_path(self.path, path) if path else self.path
        return Evidence(call_id=self.source.call_id, path=where)


def records_of(sources: list[Source]) -> list[Record]:
    """The named objects of the results, in conversation order."""
    out: list[Record] = []
    for source in sources:
        cached = source.cache.get("records")
        if cached is None:
            cached = source.cache["records"] = []
            value = source.parsed() if source.looks_json else None
            _walk(value, "", source, cached, 0)
        out.extend(cached)
        if len(out) >= MAX_RECORDS:
            break
    return out


def _walk(node: Any, path: str, source: Source, out: list[Record], depth: int) -> None:
    if depth > 12 or len(out) >= MAX_RECORDS:
        return
    if isinstance(node, dict):
        names = {
            v.lower()
            for v in node.values()
            if isinstance(v, str) and _IDENTIFIER.fullmatch(v) and not _DATE.match(v)
        }
        if names:
            out.append(Record(names, source, path, node))
        for key, item in node.items():
            if isinstance(item, (dict, list)):
                _walk(item, join_path(path, str(key)), source, out, depth + 1)
    elif isinstance(node, list):
        for i, item in enumerate(node[:500]):
            if isinstance(item, (dict, list)):
                _walk(item, join_path(path, i), source, out, depth + 1)


# --- value_of_other_record ---------------------------------------------------------------


def other_record_findings(
    turn: int,
    answer: str,
    candidates: list[Candidate],
    grounded: set[str],
    records: list[Record],
    checker: str,
) -> list[Finding]:
    """Values a sentence states of the one record it names that only another record holds."""
    if not records:
        return []
    by_name: dict[str, list[Record]] = {}
    for record in records:
        for name in record.names:
            by_name.setdefault(name, []).append(record)
    out: list[Finding] = []
    for sentence in sentences(answer):
        inside = [c for c in candidates if sentence.start <= c.start < sentence.end]
        named = {c.value for c in inside if c.value in by_name}
        if len(named) != 1:
            continue
        (name,) = named
        own = by_name[name]
        for candidate in inside:
            if candidate.value in by_name or candidate.value not in grounded or not _attribute(candidate):
                continue
            if candidate.shape == "amount" and _clause_names(answer, sentence, candidate, by_name) != {name}:
                continue  # "$250 from the certificate, $55 from card 7447": each amount's own clause
            # The record's own objects: every object that shares a name with it (a payment
            # that names the same card is that card's, not another's).
            own_names = set().union(*(record.names for record in own))
            mine = [r for r in records if r.names & own_names]
            if any(form in record.forms for record in mine for form in candidate.forms):
                continue
            named_here = _names_in(sentence, by_name)
            # Another record holds it in a field the named record has too, with another value
            # there: the value of the wrong row, not a value the named record lacks a field for.
            fields = {path for record in mine for path in record.leaves}
            for other in records:
                if other.names & own_names or other.names & named_here or any(_holds(other, m) for m in mine):
                    continue
                shared = [path for path in other.fields_holding(candidate.forms) if path in fields]
                if shared:
                    out.append(_other_record(turn, candidate, name, own[-1], other, shared[0], checker))
                    break
    return out


def _attribute(candidate: Candidate) -> bool:
    """A value a record has: a time, a date, an amount or a number; never an identifier."""
    return candidate.shape in ("time", "amount", "number", "figure") or bool(_DATE.fullmatch(candidate.value))


def _clause_names(
    answer: str, sentence: Sentence, candidate: Candidate, by_name: dict[str, list[Record]]
) -> set[str]:
    """The record names of the clause (between commas, semicolons and "and") holding a value."""
    start = max(answer.rfind(sep, sentence.start, candidate.start) for sep in (",", ";", " and "))
    ends = [
        at
        for at in (answer.find(sep, candidate.end, sentence.end) for sep in (",", ";", " and "))
        if at != -1
    ]
    clause = answer[max(start, sentence.start) : min(ends, default=sentence.end)]
    return {normalize(word) for word in clause.split()} & set(by_name)


def _names_in(sentence: Sentence, by_name: dict[str, list[Record]]) -> set[str]:
    return {normalize(word) for word in sentence.text.split()} & set(by_name)


def _holds(outer: Record, inner: Record) -> bool:
    """Whether ``outer`` contains ``inner`` (a reservation and its flights' objects)."""
    return outer.source is inner.source and inner.path.startswith(outer.path)


def _other_record(
    turn: int, candidate: Candidate, name: str, own: Record, other: Record, field_path: str, checker: str
) -> Finding:
    other_name = sorted(other.names)[0]
    return Finding(
        turn=turn,
        checker=checker,
        code="value_of_other_record",
        severity="flag",
        explanation=(
            f"The sentence states `{candidate.value}` of `{name}`, but `{name}`'s record "
            f"({own.source.tool or 'a result'}, {own.path or 'the result'}) does not hold it; it is the "
            f"value of another record, `{other_name}` ({other.path or 'the result'})."
        ),
        claim=Span(candidate.text, candidate.start, candidate.end),
        evidence=(own.evidence(field_path), other.evidence(field_path)),
        value=candidate.value,
        extra={"record": name, "other_record": other_name, "field": field_path},
    )


# --- contradicted_value ------------------------------------------------------------------

_WORD = r"[A-Za-z][A-Za-z_-]*"
_NOT_VALUES = frozenset(
    """a an the your my our their his her its this that these those each every any all no some
    new old current same other previous original selected chosen first last next and or of for
    to in on with by as is are was were be""".split()
)


@dataclass(frozen=True)
class FieldUse:
    record: Record
    key: str
    value: str  # lower case, underscores as spaces


def field_values(records: list[Record]) -> dict[str, list[FieldUse]]:
    """Each key whose values are words of a small vocabulary (lower case as the data writes
    them: "gold", "basic_economy"; never a code like "AQLBTL"), with every record's value."""
    out: dict[str, list[FieldUse]] = {}
    for record in records:
        for key, value in record.value.items():
            if isinstance(value, str) and 0 < len(value) <= 30 and re.fullmatch(r"[a-z][a-z _-]*", value):
                out.setdefault(key.lower(), []).append(FieldUse(record, key, _plain(value)))
    return out


def _plain(value: str) -> str:
    return re.sub(r"[\s_-]+", " ", value.strip().lower())


def contradicted_findings(turn: int, answer: str, records: list[Record], checker: str) -> list[Finding]:
    """Field values the answer says of a record that holds another value in that field."""
    fields = field_values(records)
    if not fields:
        return []
    index = _index(records)
    out: list[Finding] = []
    for sentence in sentences(answer):
        if sentence.is_question or _NOT_A_REPORT.search(sentence.text):
            continue
        for key, uses in fields.items():
            said = list(_said_values(sentence, key))
            if not said:
                continue
            subjects = [u for u in uses if u.record.names & _names_in(sentence, index)]
            own = {u.value for u in subjects}
            if not subjects or any(value in own for value, _, _ in said):
                continue
            known = {u.value for u in uses}
            readings = [s for s in said if s[0] in known]
            if not readings:
                continue
            value, start, end = readings[-1]
            use = subjects[-1]
            where = join_path(use.record.path, use.key)
            out.append(
                Finding(
                    turn=turn,
                    checker=checker,
                    code="contradicted_value",
                    severity="flag",
                    explanation=(
                        f"The answer says `{key}` is `{value}`, but the record read "
                        f"({use.record.source.tool or 'a result'}, {where}) holds `{use.value}`."
                    ),
                    claim=Span(answer[start:end], start, end),
                    evidence=(Evidence(call_id=use.record.source.call_id, path=where),),
                    value=value,
                    extra={"field": use.key, "record_value": use.value},
                )
            )
    return out


def _index(records: list[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for record in records:
        for name in record.names:
            out.setdefault(name, []).append(record)
    return out


def _said_values(sentence: Sentence, key: str) -> Iterator[tuple[str, int, int]]:
    """Where the sentence gives ``key`` a value, one word or two: "Gold member(ship)",
    "cabin: economy", "plan is premium"."""
    words = [w for w in name_tokens(key) if len(w) >= 3]
    if not words:
        return
    stem = re.escape(words[-1][:5]) + r"[a-z]*"
    before = re.compile(rf"\b(?P<v>{_WORD}(?:\s{_WORD})?)\s+{stem}\b", re.I)
    after = re.compile(rf"\b{stem}\**\s*(?::|\bis\b|=)\s*\**\s*(?P<v>{_WORD}(?:\s{_WORD})?)", re.I)
    for pattern in (before, after):
        for match in pattern.finditer(sentence.text):
            start, end = sentence.start + match.start("v"), sentence.start + match.end("v")
            words_ = match.group("v").split()
            if len(words_) == 2 and pattern is before:
                yield _plain(words_[1]), end - len(words_[1]), end  # "a Gold member": Gold
            elif len(words_) == 2:
                yield _plain(words_[0]), start, start + len(words_[0])  # "plan is premium now"
            if not set(_plain(match.group("v")).split()) & _NOT_VALUES:
                yield _plain(match.group("v")), start, end


# --- a route said of a record ------------------------------------------------------------

_START_KEYS = ("origin", "from", "source", "start", "departure")
_END_KEYS = ("destination", "dest", "to", "target", "end", "arrival")
_ROUTE = re.compile(
    r"[\s*:,(\[-]{0,4}(?:from\s+)?(?P<a>[A-Za-z0-9]{2,})\s*(?:to|\u2192|->)\s*(?P<b>[A-Za-z0-9]{2,})\b"
)


def _route_keys(record: Record) -> tuple[str, str] | None:
    """The keys of a record's start and end (``origin`` and ``destination``), if it has both."""
    start = [k for k in record.value if isinstance(record.value[k], str) and _names_end(k, _START_KEYS)]
    end = [k for k in record.value if isinstance(record.value[k], str) and _names_end(k, _END_KEYS)]
    return (start[0], end[0]) if len(start) == 1 and len(end) == 1 else None


def _names_end(key: str, words: tuple[str, ...]) -> bool:
    parts = name_tokens(key)
    return bool(parts) and parts[0] in words


def route_findings(
    turn: int, answer: str, candidates: list[Candidate], records: list[Record], checker: str
) -> list[Finding]:
    """ "HAT023 from SFO to JFK" right after the name of a record whose own start and end are
    JFK and SFO, in every version read: ``contradicted_value``. Both places must be values
    those fields take somewhere in the conversation."""
    index = _index(records)
    out: list[Finding] = []
    for candidate in candidates:
        own = index.get(candidate.value)
        match = _ROUTE.match(answer, candidate.end) if own else None
        if not own or match is None:
            continue
        routes = [(r, keys) for r in own if (keys := _route_keys(r)) is not None]
        if not routes:
            continue
        said = (match.group("a").lower(), match.group("b").lower())
        held = {(r.value[a].lower(), r.value[b].lower()) for r, (a, b) in routes}
        places = {str(r.value.get(k, "")).lower() for r in records if (keys := _route_keys(r)) for k in keys}
        if said in held or not set(said) <= places:
            continue
        record, (start_key, end_key) = routes[-1]
        at = match.start("a")
        out.append(
            Finding(
                turn=turn,
                checker=checker,
                code="contradicted_value",
                severity="flag",
                explanation=(
                    f"The answer says `{candidate.value}` goes from `{said[0]}` to `{said[1]}`, but its "
                    f"record ({record.source.tool or 'a result'}, {record.path or 'the result'}) goes from "
                    f"`{record.value[start_key]}` to `{record.value[end_key]}`."
                ),
                claim=Span(answer[at : match.end()], at, match.end()),
                evidence=(record.evidence(start_key), record.evidence(end_key)),
                value=f"{said[0]} to {said[1]}",
                extra={
                    "field": f"{start_key}, {end_key}",
                    "record_value": f"{record.value[start_key]} to {record.value[end_key]}",
                },
            )
        )
    return out
