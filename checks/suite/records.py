"""Row-consistent grounding: a value said of a record must be that record's own.

A real value of the wrong record ("T-100042 was opened on 2026-11-01" when that date is T-100000's, in the
same result) passes the evidence checker, which asks only whether a value was read. A *record* is a JSON
object of a result that holds an identifier the answer names as a value of its own (a string with a digit,
no date or time); its *siblings* are the other objects of the list (or object) that holds it. Only the
plain cases are judged:

- ``value_of_other_record`` (flag): a sentence names exactly one record and states a grounded value that
  no object named like the record holds and a sibling holds, under a field the record has too. An amount
  counts only within its clause ("$250 from the certificate, $55 from card 7447"); values a person
  supplied, computed figures and identifiers are not judged.
- ``contradicted_value`` (flag): a sentence that names one record gives one of its fields a value ("Gold
  member", "Plan: Premium") that a sibling holds there, while the record holds another in every version
  read; likewise a route right after a record's name ("SHP-2201 from YORK to LEEDS") against its own
  start and end fields. Questions, conditions and proposals ("if you upgrade to Gold") describe no record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property, lru_cache, reduce
from typing import Any

from .decimals import NO_JSON, is_number
from .evidence_index import Source, join_path, json_leaves, last_key
from .money import in_whole_units, read_amounts
from .shown import Shown
from .text import OFFER_OR_PLAN, Sentence, name_tokens, sentences
from .tokens import Candidate, index_text, normalize
from .tool_names import surely_writes
from .types import MAX_ITEMS, Evidence, Finding, Span, Turn, walk
from .values import is_value_key

MAX_SOURCES = 8  # the newest results carrying a name that are read for it
_ATTRIBUTES = ("date", "time", "amount", "number", "figure")  # what a record has; an identifier names it
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

    @property
    def siblings(self) -> list[Record]:
        """The other objects of the list (or object) it stands in, read only when asked for."""
        rows = _rows(self.source, self.parts[:-1]) if self.parts else []
        return [row for row in rows if row.value is not self.value]

    @property
    def path(self) -> str:
        return reduce(join_path, self.parts, "")

    @property
    def names(self) -> set[str]:
        return {v.lower() for v in self.value.values() if isinstance(v, str) and is_name(v)}

    @cached_property
    def leaves(self) -> dict[str, set[str]]:
        """Each scalar field (nested paths joined by dots) with the forms of its value."""
        leaves: dict[str, set[str]] = {}
        nodes = walk(
            self.value, _dotted, max_depth=math.inf, into=lambda node: isinstance(node, dict), last_first=True
        )
        for path, node, _ in nodes:
            if not isinstance(node, (dict, list)) and node is not None:
                leaves[path] = index_text(str(node))
                if len(leaves) >= 512:
                    break
        return leaves

    @cached_property
    def flat(self) -> str:
        """Its scalar values as one lower-case text, for a quick look before ``leaves``."""
        scalars = json_leaves(self.value, lambda v: v is not None and not isinstance(v, (dict, list)))
        return "\n".join(str(v).lower() for _, v in scalars)

    def fields_holding(self, forms: tuple[str, ...]) -> list[str]:
        # A spelling of the value that stands in no field rules the fields out unread; a key
        # of a date or a time (``values``) is no spelling, so the fields are read for it.
        spelled = [form for form in forms if not form.startswith("#") and not is_value_key(form)]
        if spelled and not any(form in self.flat for form in spelled):
            return []
        return [path for path, held in self.leaves.items() if any(form in held for form in forms)]

    def evidence(self, path: str = "") -> Evidence:
        return Evidence(call_id=self.source.call_id, path=join_path(self.path, path) if path else self.path)

    def where(self, path: str = "") -> str:
        """The record (or a field of it) as an explanation names it: its tool and its path."""
        return f"{self.source.tool or 'a result'}, {self.evidence(path).path or 'the result'}"

    def held_name(self, name: str) -> str:
        """A name as this record writes it ("T-999999": "t-999999" reads as another record)."""
        return next((v for v in self.value.values() if isinstance(v, str) and v.lower() == name), name)


def _dotted(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


Named = dict[str, list[Record]]  # each name the answer gives with the records it names


def is_name(value: str) -> bool:
    """Whether a value can name a record: a short string with a digit that is no date or time."""
    return 3 <= len(value) <= 64 and any(c.isdigit() for c in value) and not _DATE.match(value)


def named(results: Shown, name: str) -> list[Record]:
    """The records a name names (the object holding it), newest result first, read once per result."""
    out: list[Record] = []
    for source in results.carrying(name, MAX_SOURCES):
        cache = source.cache.setdefault("records", {})
        if name not in cache:
            cache[name] = _record_at(source, name)
        out += [cache[name]] if cache[name] is not None else []
    return out


def _record_at(source: Source, name: str) -> Record | None:
    if not source.looks_json or f'"{name}"' not in source.low:
        return None  # a name is a whole string value of its result
    span = source.span_of(name)
    path = source.path_at(span[0]) if span else ""
    parts = [int(i) if i else (key or quoted[1:-1]) for key, i, quoted in _PATH_PART.findall(path)]
    holder: Any = source.value_at(parts[:-1]) if parts else None
    held = holder.get(parts[-1]) if isinstance(holder, dict) else None
    if not isinstance(held, str) or held.lower() != name:
        return None  # a name is a string of the object's own, never a number in a field
    return Record(source, tuple(parts[:-1]), holder)


def _rows(source: Source, parent: tuple[str | int, ...]) -> list[Record]:
    """The objects of one list (or object) of a result, read once for every name in it."""
    cache = source.cache.setdefault("rows", {})
    if parent not in cache:
        # Only a result that decodes has siblings: ``value_at`` would decode a part of one cut off.
        holder = source.value_at(list(parent)) if source.parsed() is not NO_JSON else None
        holder = holder if isinstance(holder, (dict, list)) else []
        rows = list(holder.items() if isinstance(holder, dict) else enumerate(holder))[:MAX_ITEMS]
        cache[parent] = [Record(source, (*parent, key), item) for key, item in rows if isinstance(item, dict)]
    return cache[parent]


def names_in(candidates: list[Candidate], results: Shown, answer: str) -> Named:
    """The answer's names, each with its records in ``results`` (the tool results so far) where a check
    here can use it (the only name of a sentence, or one a route follows), else with none: a sentence
    that names several records names no one of them. A value quoted in no result names nothing."""
    possible = {c.value for c in candidates if c.shape in ("identifier", "number") and is_name(c.value)}
    possible = {value for value in possible if results.quotes(value)}
    if not possible:
        return {}
    wanted = {c.value for c in candidates if c.value in possible and _ROUTE.match(answer, c.end)}
    for sentence in sentences(answer):
        here = {c.value for c in _inside(candidates, sentence) if c.value in possible}
        wanted |= here if len(here) == 1 else set()
    return {name: named(results, name) if name in wanted else [] for name in possible}


def _inside(candidates: list[Candidate], sentence: Sentence) -> list[Candidate]:
    return [c for c in candidates if sentence.start <= c.start < sentence.end]


# --- value_of_other_record ---------------------------------------------------------------
def other_record_findings(
    turn: int, answer: str, candidates: list[Candidate], grounded: set[str], records: Named, checker: str
) -> Iterator[Finding]:
    """Values a sentence states of the one record it names that only a sibling holds."""
    for sentence in sentences(answer):
        inside = _inside(candidates, sentence)
        here = {c.value for c in inside if c.value in records}
        if len(here) != 1:
            continue
        (name,) = here
        own = records[name]
        fields = {path for record in own for path in record.leaves}
        for candidate in inside:
            value, attribute = candidate.value, candidate.shape in _ATTRIBUTES
            if value in records or value not in grounded or not (attribute or _DATE.fullmatch(value)):
                continue
            if candidate.shape == "amount" and _clause_names(answer, sentence, candidate, records) != {name}:
                continue  # "$250 from the certificate, $55 from card 7447": each amount's own clause
            if any(record.fields_holding(candidate.forms) for record in own):
                continue
            # A row beside the record holding the value in a field the record has too; a row that
            # names the record is another object of the record (its second leg), not a sibling.
            rows = (s for record in own for s in record.siblings if name not in s.names)
            held = ((s, path) for s in rows for path in s.fields_holding(candidate.forms) if path in fields)
            if (found := next(held, None)) is None:
                continue
            record, (other, field_path) = own[0], found
            mine, other_name = record.held_name(name), min(other.names, default=other.path)
            why = (
                f"The sentence states “{candidate.text}” of {mine}, but the record of {mine} "
                f"({record.where()}) does not hold it; it is the value of another record, "
                f"{other.held_name(other_name)} ({join_path(other.path, field_path)})."
            )
            span = Span(candidate.text, candidate.start, candidate.end)
            evidence = (record.evidence(field_path), other.evidence(field_path))
            extra = {"record": name, "other_record": other_name, "field": field_path}
            yield Finding(
                turn, checker, "value_of_other_record", "flag", why, span, evidence, None, value, extra
            )


def _clause_names(answer: str, sentence: Sentence, candidate: Candidate, records: Named) -> set[str]:
    """The record names of the clause (between commas, semicolons and "and") holding a value."""
    separators = (",", ";", " and ")
    start = max(answer.rfind(sep, sentence.start, candidate.start) for sep in separators)
    ends = [at for at in (answer.find(sep, candidate.end, sentence.end) for sep in separators) if at != -1]
    clause = answer[max(start, sentence.start) : min(ends, default=sentence.end)]
    return {normalize(word) for word in clause.split()} & set(records)


# --- contradicted_value ------------------------------------------------------------------
_WORD = r"[A-Za-z][A-Za-z_-]*"
_NOT_VALUES = frozenset(
    """a an the your my our their his her its this that these those each every any all no some
    new old current same other previous original selected chosen first last next and or of for
    to in on with by as is are was were be""".split()
)


def _word_value(value: Any) -> str | None:
    """A lower-case field value of a small vocabulary ("gold", "basic_economy"; never "AQLBTL"), spaced."""
    if isinstance(value, str) and 0 < len(value) <= 30 and re.fullmatch(r"[a-z][a-z _-]*", value):
        return re.sub(r"[\s_-]+", " ", value.strip())
    return None


def contradicted_findings(turn: int, answer: str, records: Named, checker: str) -> Iterator[Finding]:
    """Field values a sentence says of the one record it names, which holds another value."""
    for sentence in sentences(answer):
        if sentence.is_question or _NOT_A_REPORT.search(sentence.text):
            continue
        here = {normalize(word) for word in re.split(r"[\s(),;:]+", sentence.text)} & set(records)
        if len(here) != 1:
            continue
        own = records[next(iter(here))]
        # In the records' own order (not a set's, which differs from one process to the next).
        for key in dict.fromkeys(k for record in own for k, v in record.value.items() if _word_value(v)):
            said = list(_said_values(sentence, key))
            held = {_word_value(record.value.get(key)) for record in own} - {None}
            if not said or any(value in held for value, _, _ in said):
                continue
            known = {_word_value(s.value.get(key)) for record in own for s in record.siblings} - {None}
            readings = [s for s in said if s[0] in known]
            if not readings:
                continue
            value, start, end = readings[-1]
            record = own[0]
            why = (
                f"The answer says {key} is “{answer[start:end]}”, but the record read "
                f"({record.where(key)}) holds “{record.value[key]}”."
            )
            span, evidence = Span(answer[start:end], start, end), (record.evidence(key),)
            extra = {"field": key, "record_value": record.value[key]}
            yield Finding(
                turn, checker, "contradicted_value", "flag", why, span, evidence, None, value, extra
            )


# The kinds of money a change moves, by the stems that name them in a sentence and in the names of a
# write's result's members ("charged" and "payments[0].amount", "refund" and "refund.amount"): what the
# customer paid, what was paid back, what was credited.
_MOVES = {"payment": ("charg", "bill", "paid", "pay"), "refund": ("refund",), "credit": ("credit",)}


def _moves(words: list[str]) -> set[str]:
    return {kind for kind, stems in _MOVES.items() if any(w.startswith(stems) for w in words)}


def receipt_findings(turn: Turn, before: list[Any], checker: str) -> Iterator[Finding]:
    """``contradicted_value``: an amount a sentence says a change of this turn moved (charged, paid,
    refunded, credited) that none of the amounts of that kind the change's result records, nor their sum,
    is: a write's result is the receipt of what it did. What it repeats of a record read before (at the
    same place in ``before``, the earlier turns' results, or this turn's before its own) is history, not
    its doing. A sentence with several amounts or kinds is left alone: which is which needs reading. A
    member counting a minor unit (``charged_cents: 4500``) records its amount in whole units (45.00)."""
    held: list[tuple[str, str, Decimal, str]] = []  # (kind, call id, amount in the major unit, path)
    past: set[Decimal] = set()  # the amounts the records read before the changes hold
    for call in turn.tool_calls:
        result = turn.result_of(call)
        if result is None or result.is_error or not surely_writes(call.tool, turn.receipt_of(call)):
            continue
        leaves = json_leaves(result.value, is_number)
        if not leaves:
            continue
        at = turn.result_index(call) or 0
        earlier = [*before, *(m for i, m in enumerate(turn.messages) if m.role == "tool" and i < at)]
        history = {leaf for message in earlier for leaf in json_leaves(message.value, is_number)}
        past.update(in_whole_units(last_key(path), number) for path, number in history)
        for path, number in leaves:
            if (path, number) not in history:
                amount = in_whole_units(last_key(path), number)
                held += [(kind, call.call_id, amount, path) for kind in _moves(name_tokens(path))]
    if not held:
        return
    for sentence in sentences(turn.answer):
        kinds = _moves(re.findall(r"[a-z]+", sentence.text.lower()))
        amounts = read_amounts(sentence.text)
        if sentence.is_question or len(kinds) != 1 or len(amounts) != 1 or amounts[0].kind != "money":
            continue
        (kind,), said, value = kinds, amounts[0], abs(amounts[0].value)
        same = [(call_id, amount, path) for k, call_id, amount, path in held if k == kind]
        alike = [a for _, a, _ in same]
        if not same or value in past or any(abs(value - a) < Decimal("0.005") for a in (*alike, sum(alike))):
            continue
        call_id, amount, path = same[0]
        start, end = sentence.start + said.start, sentence.start + said.end
        why = (
            f"The answer says the {kind} was {turn.answer[start:end]}, but the result of the call that made "
            f"it ({call_id}, {path}) records {amount:f}."
        )
        span, evidence = Span(turn.answer[start:end], start, end), (Evidence(call_id, path),)
        extra = {"field": path, "record_value": str(amount)}
        yield Finding(
            turn.index, checker, "contradicted_value", "flag", why, span, evidence, None, str(value), extra
        )


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
    """Where the sentence gives ``key`` a value of one word or two: "Gold member", "cabin: economy"."""
    patterns = _field_patterns(key)
    if patterns is None or patterns[2] not in sentence.text.lower():
        return
    for pattern in patterns[:2]:
        for match in pattern.finditer(sentence.text):
            start, end = sentence.start + match.start("v"), sentence.start + match.end("v")
            parts = match.group("v").split()
            if len(parts) == 2 and pattern is patterns[0]:  # the value before the field's name
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
    first = {k: (name_tokens(k) or [""])[0] for k, v in value.items() if isinstance(v, str)}
    start = [k for k, word in first.items() if word in _START_KEYS]
    end = [k for k, word in first.items() if word in _END_KEYS]
    return (start[0], end[0]) if len(start) == 1 and len(end) == 1 else None


def route_findings(
    turn: int, answer: str, candidates: list[Candidate], records: Named, checker: str
) -> Iterator[Finding]:
    """ "HAT023 from SFO to JFK" right after the name of a record whose own start and end are JFK and SFO
    in every version read: ``contradicted_value``."""
    for candidate in candidates:
        own = records.get(candidate.value)
        match = _ROUTE.match(answer, candidate.end) if own else None
        routes = [(r, keys) for r in own or () if (keys := _route_keys(r.value)) is not None]
        if match is None or not routes:
            continue
        said = (match.group("a").lower(), match.group("b").lower())
        held = {(r.value[a].lower(), r.value[b].lower()) for r, (a, b) in routes}
        rows = [(row, keys) for record, keys in routes for row in (record, *record.siblings)]
        places = {str(row.value.get(k, "")).lower() for row, keys in rows for k in keys}
        if said in held or not set(said) <= places:
            continue
        record, (start_key, end_key) = routes[0]
        goes = f"{record.value[start_key]} to {record.value[end_key]}"
        why = (
            f"The answer says {candidate.text} goes from {match.group('a')} to {match.group('b')}, but its "
            f"record ({record.where()}) goes {goes}."
        )
        span = Span(answer[match.start("a") : match.end()], match.start("a"), match.end())
        evidence = (record.evidence(start_key), record.evidence(end_key))
        value, extra = f"{said[0]} to {said[1]}", {"field": f"{start_key}, {end_key}", "record_value": goes}
        yield Finding(turn, checker, "contradicted_value", "flag", why, span, evidence, None, value, extra)
