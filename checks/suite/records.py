"""Row-consistent grounding: a value said of a record must be that record's own.

The evidence checker asks whether a value was read at all; a real value of the wrong record
("T-100042 was opened on 2026-11-01" when that date is T-100000's, in the same result)
passes that test. This module closes the gap for the plain cases, and stays silent wherever
the answer leaves room for doubt.

A *record* is a JSON object of a result that holds the identifier the answer names as a
value of its own (a ticket id, a flight number: a string with a digit, not a date or a clock
time); its *siblings* are the other objects of the list (or object) that holds it, the other
rows of the same result. Only the results that carry the name are read, and only that far.

- ``value_of_other_record`` (flag): one sentence names exactly one record and states a value
  that the checker grounded; no object named like the record holds the value, and a sibling
  holds it under a field the named record has too (so it is that field's value of the wrong
  row). The evidence holds both fields. Amounts are judged only within their clause ("$250
  from the certificate, $55 from card 7447" names no record for the $250). Values the user or
  the prompt supplied, computed figures and identifiers are not judged.
- ``contradicted_value`` (flag): a sentence that names one record says a value of one of its
  fields ("Gold member", "Plan: Premium", "cabin is economy"); the value is one a sibling
  holds in that field (so it is a value of that field, not a word that happens to stand
  beside its name), and the record holds another value there, in every version read. A
  route right after a record's name ("SHP-2201 from YORK to LEEDS") is judged the same way
  against the record's own start and end fields (``origin``/``destination``, ``from``/
  ``to``), with both places values those fields take in the record or its siblings.
  Questions, conditions and proposals ("if you upgrade to Gold", "would you like economy")
  describe no record and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .evidence_index import Source, join_path
from .shown import Shown
from .text import OFFER_OR_PLAN, Sentence, name_tokens, sentences
from .tokens import Candidate, index_text, normalize
from .types import Evidence, Finding, Span
from .values import is_value_key

MAX_SOURCES = 8  # the newest results carrying a name that are read for it
MAX_SIBLINGS = 500
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")  # says when, not what: never a name
_PATH_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]")
_NOT_A_REPORT = re.compile(
    rf"{OFFER_OR_PLAN}|\b(?:if|unless|would|could|can|want|wish|like|prefer|upgrade|upgrading|switch|"
    r"change|changing|option|options|new|proposed|instead|confirm|proceed)\b",
    re.I,
)


@dataclass
class Record:
    """One object of a result, where it stands, and the objects beside it."""

    source: Source
    parts: tuple[str | int, ...]  # where it stands in the result, as path parts
    value: dict[str, Any]
    in_list: bool = False  # whether it stands in a list (or object) of objects, beside others
    _leaves: dict[str, set[str]] | None = field(default=None, repr=False)
    _flat: str | None = field(default=None, repr=False)

    @property
    def siblings(self) -> list[Record]:
        """The other objects beside it, read from the result only when asked for."""
        if not self.in_list:
            return []
        rows = _rows(self.source, self.source.parsed(), self.parts[:-1])
        return [row for row in rows if row.value is not self.value]

    @property
    def path(self) -> str:
        return _join(list(self.parts))

    @property
    def names(self) -> set[str]:
        return {v.lower() for v in self.value.values() if isinstance(v, str) and is_name(v)}

    @property
    def leaves(self) -> dict[str, set[str]]:
        """Each scalar field (nested paths joined by dots) with the forms of its value."""
        if self._leaves is None:
            self._leaves = {}
            stack: list[tuple[str, Any]] = [("", self.value)]
            while stack and len(self._leaves) < 512:
                path, node = stack.pop()
                if isinstance(node, dict):
                    stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in node.items())
                elif not isinstance(node, list) and node is not None:
                    self._leaves[path] = index_text(str(node))
        return self._leaves

    @property
    def flat(self) -> str:
        """Its scalar values as one lower-case text, for a quick look before ``leaves``."""
        if self._flat is None:
            self._flat = "\n".join(str(v).lower() for v in _scalars(self.value))
        return self._flat

    def fields_holding(self, forms: tuple[str, ...]) -> list[str]:
        # A spelling of the value that stands in no field rules the fields out unread; a key
        # of a date or a time (``values``) is no spelling, so the fields are read for it.
        spelled = [form for form in forms if not form.startswith("#") and not is_value_key(form)]
        if spelled and not any(form in self.flat for form in spelled):
            return []
        return [path for path, held in self.leaves.items() if any(form in held for form in forms)]

    def evidence(self, path: str = "") -> Evidence:
        where = join_path(self.path, path) if path else self.path
        return Evidence(call_id=self.source.call_id, path=where)


def _scalars(value: Any) -> Iterator[Any]:
    """The scalar values of an object and of the objects nested in it."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif node is not None:
            yield node


def is_name(value: str) -> bool:
    """Whether a value can name a record: a short string with a digit that is no date or time."""
    return 3 <= len(value) <= 64 and any(c.isdigit() for c in value) and not _DATE.match(value)


def named(results: Shown, name: str) -> list[Record]:
    """The records a name names, newest result first: where the name stands in each result
    that carries it, the object holding it, with its siblings."""
    out: list[Record] = []
    for source in results.carrying(name, MAX_SOURCES):
        cache = source.cache.setdefault("records", {})
        if name not in cache:
            cache[name] = _record_at(source, name)
        if cache[name] is not None:
            out.append(cache[name])
    return out


def _record_at(source: Source, name: str) -> Record | None:
    if not source.looks_json or f'"{name}"' not in source.low:
        return None  # a name is a whole string value of its result
    span = source.span_of(name)
    if span is None:
        return None
    parts = _parts(source.path_at(span[0]))
    if not parts:
        return None
    holder_parts = parts[:-1]
    holder = source.value_at(holder_parts)
    held = holder.get(parts[-1]) if isinstance(holder, dict) else None
    if not isinstance(held, str) or held.lower() != name:
        return None  # a name is a string of the object's own, never a number in a field
    return Record(source, tuple(holder_parts), holder, in_list=bool(holder_parts))


def _rows(source: Source, value: Any, parent: tuple[str | int, ...]) -> list[Record]:
    """The objects of one list (or object) of a result, read once for every name in it."""
    cache = source.cache.setdefault("rows", {})
    if parent not in cache:
        holder = _resolve(value, list(parent))
        items = (
            holder.items()
            if isinstance(holder, dict)
            else enumerate(holder)
            if isinstance(holder, list)
            else ()
        )
        cache[parent] = [
            Record(source, (*parent, key), item)
            for key, item in list(items)[:MAX_SIBLINGS]
            if isinstance(item, dict)
        ]
    return cache[parent]


def _parts(path: str) -> list[str | int]:
    out: list[str | int] = []
    for key, index, quoted in _PATH_PART.findall(path):
        out.append(int(index) if index else (key or quoted[1:-1]))
    return out


def _join(parts: list[str | int]) -> str:
    path = ""
    for part in parts:
        path = join_path(path, part)
    return path


def _resolve(value: Any, parts: list[str | int]) -> Any:
    for part in parts:
        if isinstance(part, int) and isinstance(value, list) and part < len(value):
            value = value[part]
        elif isinstance(part, str) and isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def names_in(candidates: list[Candidate], results: Shown, answer: str) -> dict[str, list[Record]]:
    """The answer's identifiers that name a record and that a check here can use, each with
    its records (``results`` are the tool results so far): the only name of a sentence, or a
    name a route follows. A value that stands quoted in no result names nothing, and is not
    looked up."""
    possible = {
        c.value
        for c in candidates
        if c.shape in ("identifier", "number") and is_name(c.value) and results.quotes(c.value)
    }
    if not possible:
        return {}
    wanted = {c.value for c in candidates if c.value in possible and _ROUTE.match(answer, c.end)}
    for sentence in sentences(answer):
        here = {
            c.value for c in candidates if sentence.start <= c.start < sentence.end and c.value in possible
        }
        if len(here) == 1:
            wanted |= here
    out: dict[str, list[Record]] = {}
    for name in wanted:
        found = named(results, name)
        if found:
            out[name] = found
    return out


# --- value_of_other_record ---------------------------------------------------------------


def other_record_findings(
    turn: int,
    answer: str,
    candidates: list[Candidate],
    grounded: set[str],
    records: dict[str, list[Record]],
    checker: str,
) -> list[Finding]:
    """Values a sentence states of the one record it names that only a sibling holds."""
    out: list[Finding] = []
    for sentence in sentences(answer):
        inside = [c for c in candidates if sentence.start <= c.start < sentence.end]
        here = {c.value for c in inside if c.value in records}
        if len(here) != 1:
            continue
        (name,) = here
        own = records[name]
        fields = {path for record in own for path in record.leaves}
        for candidate in inside:
            if candidate.value in records or candidate.value not in grounded or not _attribute(candidate):
                continue
            if candidate.shape == "amount" and _clause_names(answer, sentence, candidate, records) != {name}:
                continue  # "$250 from the certificate, $55 from card 7447": each amount's own clause
            if any(record.fields_holding(candidate.forms) for record in own):
                continue
            found = _sibling_holding(own, candidate, fields, name)
            if found is not None:
                out.append(_other_record(turn, candidate, name, own[0], *found, checker))
    return out


def _sibling_holding(
    own: list[Record], candidate: Candidate, fields: set[str], name: str
) -> tuple[Record, str] | None:
    """A row beside the named record that holds the value in a field the record has too."""
    for record in own:
        for sibling in record.siblings:
            if name in sibling.names:
                continue  # another object of the same record (its second leg, say)
            shared = [path for path in sibling.fields_holding(candidate.forms) if path in fields]
            if shared:
                return sibling, shared[0]
    return None


def _attribute(candidate: Candidate) -> bool:
    """A value a record has: a time, a date, an amount or a number; never an identifier."""
    return candidate.shape in ("date", "time", "amount", "number", "figure") or bool(
        _DATE.fullmatch(candidate.value)
    )


def _clause_names(
    answer: str, sentence: Sentence, candidate: Candidate, records: dict[str, list[Record]]
) -> set[str]:
    """The record names of the clause (between commas, semicolons and "and") holding a value."""
    start = max(answer.rfind(sep, sentence.start, candidate.start) for sep in (",", ";", " and "))
    ends = [
        at
        for at in (answer.find(sep, candidate.end, sentence.end) for sep in (",", ";", " and "))
        if at != -1
    ]
    clause = answer[max(start, sentence.start) : min(ends, default=sentence.end)]
    return {normalize(word) for word in clause.split()} & set(records)


def as_held(record: Record, name: str) -> str:
    """A record's name as its result writes it: names are compared in lower case, and an
    explanation that says "t-999999" of T-999999 reads as another record."""
    return next((v for v in record.value.values() if isinstance(v, str) and v.lower() == name), name)


def _other_record(
    turn: int, candidate: Candidate, name: str, own: Record, other: Record, field_path: str, checker: str
) -> Finding:
    other_name = sorted(other.names)[0] if other.names else other.path
    return Finding(
        turn=turn,
        checker=checker,
        code="value_of_other_record",
        severity="flag",
        explanation=(
            f"The sentence states “{candidate.text}” of {as_held(own, name)}, but the record of "
            f"{as_held(own, name)} ({own.source.tool or 'a result'}, {own.path or 'the result'}) does not "
            f"hold it; it is the value of another record, {as_held(other, other_name)} "
            f"({join_path(other.path, field_path)})."
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


def _word_value(value: Any) -> str | None:
    """A field value of a small vocabulary, as the data writes it in lower case ("gold",
    "basic_economy"; never a code like "AQLBTL"), spaced for comparison."""
    if isinstance(value, str) and 0 < len(value) <= 30 and re.fullmatch(r"[a-z][a-z _-]*", value):
        return re.sub(r"[\s_-]+", " ", value.strip())
    return None


def contradicted_findings(
    turn: int, answer: str, records: dict[str, list[Record]], checker: str
) -> list[Finding]:
    """Field values a sentence says of the one record it names, which holds another value."""
    out: list[Finding] = []
    for sentence in sentences(answer):
        if sentence.is_question or _NOT_A_REPORT.search(sentence.text):
            continue
        here = _names_in(sentence, records)
        if len(here) != 1:
            continue
        own = records[next(iter(here))]
        for key in {k for record in own for k, v in record.value.items() if _word_value(v)}:
            said = list(_said_values(sentence, key))
            held = {_word_value(record.value.get(key)) for record in own} - {None}
            if not said or any(value in held for value, _, _ in said):
                continue
            known = {_word_value(s.value.get(key)) for record in own for s in record.siblings} - {None}
            readings = [s for s in said if s[0] in known]
            if readings:
                value, start, end = readings[-1]
                record = own[0]
                where = join_path(record.path, key)
                explanation = (
                    f"The answer says {key} is “{answer[start:end]}”, but the record read "
                    f"({record.source.tool or 'a result'}, {where}) holds “{record.value[key]}”."
                )
                evidence = (Evidence(call_id=record.source.call_id, path=where),)
                span = Span(answer[start:end], start, end)
                out.append(
                    _contradicted(turn, span, explanation, evidence, value, key, record.value[key], checker)
                )
    return out


def _contradicted(
    turn: int,
    claim: Span,
    explanation: str,
    evidence: tuple[Evidence, ...],
    value: str,
    field_name: str,
    held: str,
    checker: str,
) -> Finding:
    """``contradicted_value``: what the answer says of a field, and what the record holds."""
    return Finding(
        turn=turn,
        checker=checker,
        code="contradicted_value",
        severity="flag",
        explanation=explanation,
        claim=claim,
        evidence=evidence,
        value=value,
        extra={"field": field_name, "record_value": held},
    )


def _names_in(sentence: Sentence, records: dict[str, list[Record]]) -> set[str]:
    return {normalize(word) for word in re.split(r"[\s(),;:]+", sentence.text)} & set(records)


@lru_cache(maxsize=1024)
def _field_patterns(key: str) -> tuple[re.Pattern[str], re.Pattern[str], str] | None:
    """The two ways a sentence gives a field a value, and the stem a sentence must hold."""
    words = [w for w in name_tokens(key) if len(w) >= 3]
    if not words:
        return None
    stem = words[-1][:5]
    word = re.escape(stem) + r"[a-z]*"
    before = re.compile(rf"\b(?P<v>{_WORD}(?:\s{_WORD})?)\s+{word}\b", re.I)
    after = re.compile(rf"\b{word}\**\s*(?::|\bis\b|=)\s*\**\s*(?P<v>{_WORD}(?:\s{_WORD})?)", re.I)
    return before, after, stem


def _said_values(sentence: Sentence, key: str) -> Iterator[tuple[str, int, int]]:
    """Where the sentence gives ``key`` a value, one word or two: "Gold member(ship)",
    "cabin: economy", "plan is premium"."""
    patterns = _field_patterns(key)
    if patterns is None or patterns[2] not in sentence.text.lower():
        return
    before, after, _ = patterns
    for pattern in (before, after):
        for match in pattern.finditer(sentence.text):
            start, end = sentence.start + match.start("v"), sentence.start + match.end("v")
            parts = match.group("v").split()
            if len(parts) == 2 and pattern is before:
                yield parts[1].lower(), end - len(parts[1]), end  # "a Gold member": Gold
            elif len(parts) == 2:
                yield parts[0].lower(), start, start + len(parts[0])  # "plan is premium now"
            whole = re.sub(r"[\s_-]+", " ", match.group("v").lower())
            if not set(whole.split()) & _NOT_VALUES:
                yield whole, start, end


# --- a route said of a record ------------------------------------------------------------

_START_KEYS = ("origin", "from", "source", "start", "departure")
_END_KEYS = ("destination", "dest", "to", "target", "end", "arrival")
_ROUTE = re.compile(
    r"[\s*:,(\[-]{0,4}(?:from\s+)?(?P<a>[A-Za-z0-9]{2,})\s*(?:to|\u2192|->)\s*(?P<b>[A-Za-z0-9]{2,})\b"
)


def _route_keys(value: dict[str, Any]) -> tuple[str, str] | None:
    """The keys of a record's start and end (``origin`` and ``destination``), if it has both."""
    start = [k for k, v in value.items() if isinstance(v, str) and _first_word_in(k, _START_KEYS)]
    end = [k for k, v in value.items() if isinstance(v, str) and _first_word_in(k, _END_KEYS)]
    return (start[0], end[0]) if len(start) == 1 and len(end) == 1 else None


def _first_word_in(key: str, words: tuple[str, ...]) -> bool:
    parts = name_tokens(key)
    return bool(parts) and parts[0] in words


def route_findings(
    turn: int, answer: str, candidates: list[Candidate], records: dict[str, list[Record]], checker: str
) -> list[Finding]:
    """ "HAT023 from SFO to JFK" right after the name of a record whose own start and end are
    JFK and SFO in every version read: ``contradicted_value``."""
    out: list[Finding] = []
    for candidate in candidates:
        own = records.get(candidate.value)
        match = _ROUTE.match(answer, candidate.end) if own else None
        if not own or match is None:
            continue
        routes = [(r, keys) for r in own if (keys := _route_keys(r.value)) is not None]
        if not routes:
            continue
        said = (match.group("a").lower(), match.group("b").lower())
        held = {(r.value[a].lower(), r.value[b].lower()) for r, (a, b) in routes}
        places = {
            str(row.value.get(k, "")).lower()
            for record, (a, b) in routes
            for row in (record, *record.siblings)
            for k in (a, b)
        }
        if said in held or not set(said) <= places:
            continue
        out.append(_wrong_route(turn, answer, candidate, match, said, *routes[0], checker))
    return out


def _wrong_route(
    turn: int,
    answer: str,
    candidate: Candidate,
    match: re.Match[str],
    said: tuple[str, str],
    record: Record,
    keys: tuple[str, str],
    checker: str,
) -> Finding:
    start_key, end_key = keys
    at = match.start("a")
    held = f"{record.value[start_key]} to {record.value[end_key]}"
    explanation = (
        f"The answer says {candidate.text} goes from {match.group('a')} to {match.group('b')}, but its "
        f"record ({record.source.tool or 'a result'}, {record.path or 'the result'}) goes {held}."
    )
    evidence = (record.evidence(start_key), record.evidence(end_key))
    span = Span(answer[at : match.end()], at, match.end())
    fields = f"{start_key}, {end_key}"
    return _contradicted(turn, span, explanation, evidence, f"{said[0]} to {said[1]}", fields, held, checker)
