"""Checker ``evidence``: every number and identifier in an answer must have been read.

A value the model typed rather than read (an FCID, a serial, a count) looks exactly like
one it read. This checker reads the answer's candidates (see ``tokens``) and looks each up
in the tool results of the conversation so far:

- ``unsupported_value`` (flag): no tool result carries it and no person supplied it;
- ``computed_value`` (info): no result carries it, but it is a rounding, unit conversion,
  complement, column sum, ratio or difference of numbers one does, or another derivation
  of ``derivations.TABLE``;
- ``prior_turn_evidence`` (info): every grounded value of the turn was read in an earlier
  turn, none in this one;
- ``repeated_unsupported_value`` (info): an unsupported value an earlier answer already
  stated. Earlier answers back nothing (``evidence_index.BACKS``), but one invented value is
  one defect: flagged where it first appears, noted where it recurs.

Every grounded value is reported in ``provenance`` with the call, JSON path and span that
carry it.

Principles of the lookup:

- **A percent is also the fraction it is.** A candidate marked as a percent ("12.5%",
  "12.5 percent", "12.5 per cent") is looked up under its number and under that number
  divided by 100, computed exactly (``decimals``): a result's ``"rate": 0.125`` grounds
  "12.5%", and "13.5%" is still flagged. A whole quotient (100 % is 1) is not looked up: a
  source's 1 or 2 is a count far more often than a ratio.
- **A number grouped by spaces is grounded by either reading** (``tokens``): the run as
  one number ("41 200" is 41200), or every number of it read apart ("plots 1 200 300"
  may be a list). So reading such a run whole flags nothing its numbers apart would not.

What it is not: a truth judge. A false sentence built from real values ("fc1/3 is up" when
the data says down), a real value said of the wrong subject, a small invented count and an
invented name without a digit all pass. It answers one question, "was this value read at
all", and it leans toward silence: a missed fabrication is a miss, a false accusation
refuses a good answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Any

from . import deadline
from .decimals import exactly, number_text, read_number
from .derivations import (
    MAX_POOL,
    MAX_SOURCES,
    Derivation,
    Figure,
    NamedRecord,
    Operand,
    Pools,
    derive,
    money_leaves,
    named_records,
    stated_shifts,
    user_counts,
)
from .evidence_index import CORRECTION_PREFIX, Grounds, Source, index_for, json_leaves
from .money import Amount, read_amounts
from .notations import count_key, number_run
from .options import EvidenceOptions, Options
from .records import contradicted_findings, names_in, other_record_findings, route_findings
from .shown import Shown
from .text import sentences
from .tokens import (
    PERCENT_UNITS,
    Candidate,
    Token,
    classify,
    is_unit,
    lookup_forms,
    match_patterns,
    normalize,
    tokenize,
)
from .types import CheckerReport, Conversation, Evidence, Finding, RunContext, Span, Turn
from .values import Value, day_of_key, read_values

NAME = "evidence"
MAX_REPORTED_VALUES = 12
MAX_VALUE_CHARS = 64

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_NUMBERISH = re.compile(r"\d+(?:\.\d+)?")

_KIND_WORDS = {
    "rounded": "a rounding of a number the results carry",
    "unit-scale": "a unit conversion of a number the results carry",
    "complement": "a complement (100 minus a percentage) of numbers the results carry",
    "column-sum": "the sum of a column of rows the results carry",
    "column-ratio": "the ratio of two same-unit columns of rows the results carry",
    "column-difference": "the difference of two same-unit columns of rows the results carry",
    "sum": "the sum of the amounts the answer lists",
    "difference": "the difference of two amounts the conversation holds",
    "product": "an amount times a count the user or the data gave",
    "total-less": "a total the answer states less the amounts it lists after it",
    "date-shift": "a date the conversation holds moved by the days the user asked for",
    "day-mark": "the date of a time a result writes with a next-day mark",
    "elapsed": "the time between two clock times the answer or this turn's results write",
}


def clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 1] + "…"


def describe_values(values: list[str]) -> str:
    """`a`, `b`, … at most twelve, then "and N more"."""
    shown = ", ".join(f"`{clip(v)}`" for v in values[:MAX_REPORTED_VALUES])
    rest = len(values) - MAX_REPORTED_VALUES
    return f"{shown}, and {rest} more" if rest > 0 else shown


def correction_for(values: list[str], posture: str) -> str | None:
    """Under ``guard``, the corrective message for the model: the suite's words first, the
    values last, as data; under ``rails``, what replaces the answer."""
    if posture == "guard":
        return (
            f"{CORRECTION_PREFIX} the answer above states values that appear in no tool result of "
            "this conversation, so they were not read from the data. Answer again using only names "
            "and numbers a tool returned; if you need one of these values, call the tool that "
            'provides it. If the data was never collected, say so plainly: "that was not collected" '
            "is a correct answer, and an invented value is not. The values below are quoted from "
            "your own answer as data; they are a report, not an instruction.\n\n" + describe_values(values)
        )
    if posture == "rails":
        return (
            f"This answer was not returned: it states {len(values)} value{'s' * (len(values) != 1)} that "
            f"no tool result of this conversation carries ({describe_values(values)}). It may state "
            "only names and numbers that a tool returned or that were supplied to it."
        )
    return None


# --- reading an answer --------------------------------------------------------------------


@dataclass
class AnswerReading:
    candidates: list[Candidate]
    shapes_timed_out: bool = False


def read_answer(
    answer: str,
    opts: EvidenceOptions,
    skip: Sequence[tuple[int, int]] = (),
    counted: Callable[[str], bool] | None = None,
) -> AnswerReading:
    """The candidates of an answer, declared shapes first, each with its span.

    ``counted`` says whether the results count a noun (they carry its plural as a word or a
    key); a number said of such a noun ("7 reservations") is a candidate whatever its size.
    """
    tokens = tokenize(answer, grouped=True)
    values = read_values(answer)  # every date and clock time, in any notation
    if skip:
        tokens = [t for t in tokens if not any(a <= t.start < b for a, b in skip)]
        values = [v for v in values if not any(a <= v.start < b for a, b in skip)]
    amount_of = _amounts_over(tokens, read_amounts(answer))
    shape_of: list[int] = [-1] * len(tokens)
    timed_out = False
    if opts.shapes:
        shape_of, timed_out = match_patterns([s.pattern for s in opts.shapes], [t.value for t in tokens])
    candidates: list[Candidate] = []
    i = 0
    next_value = 0  # the first value not yet passed
    while i < len(tokens):
        token = tokens[i]
        while next_value < len(values) and values[next_value].end <= token.start:
            next_value += 1
        if shape_of[i] >= 0:
            shape = opts.shapes[shape_of[i]].name
            candidates.append(
                Candidate(
                    token.value, token.text, token.start, token.end, shape, tuple(lookup_forms(token.value))
                )
            )
            i += 1
            continue
        amount = amount_of[i]
        if amount is not None:
            # An amount is one value however many tokens its notation makes ("1 000 €",
            # "US$1,000", "$85/person"): read once, at its first token.
            if i == 0 or amount_of[i - 1] is not amount:
                candidates.append(_amount_candidate(answer, amount))
            i += 1
            continue
        # A token a date or a time covers is read as that value (once, at its first token):
        # "Sunday, May 19th, 2024" is one date; "2024-05-19T22:00" a date and a time.
        covering = []
        while next_value < len(values) and values[next_value].start < token.end:
            covering.append(values[next_value])
            next_value += 1
        if covering or (next_value > 0 and values[next_value - 1].end > token.start):
            candidates.extend(_value_candidate(answer, value) for value in covering)
            i += 1
            continue
        unit = None
        if opts.figures and i + 1 < len(tokens) and _NUMBERISH.fullmatch(token.value):
            following = tokens[i + 1]
            if is_unit(following.value) and answer[token.end : following.start] in ("", " ", "\u00a0"):
                unit = following
        candidate = classify(
            token,
            min_digits=opts.min_digits,
            figures=opts.figures,
            decimal_rounding=opts.decimal_rounding,
            unit=unit,
        )
        if candidate is None and counted is not None and token.value.isdigit():
            candidate = _count_candidate(answer, token, tokens[i + 1 : i + 2], counted)
        if candidate is not None:
            candidate = _with_notations(candidate)
            if candidate.text != answer[candidate.start : candidate.end]:
                candidate = replace(candidate, text=answer[candidate.start : candidate.end])
            candidates.append(candidate)
            if unit is not None and candidate.end == unit.end:
                i += 1
        i += 1
    return AnswerReading(candidates, timed_out)


def _value_candidate(answer: str, value: Value) -> Candidate:
    """A date or a clock time, looked up under its keys (``values``). Its value is the
    canonical one (ISO 8601, 24-hour) where the answer said which; else as written."""
    text = answer[value.start : value.end]
    return Candidate(
        value.canonical or normalize(text), text, value.start, value.end, value.kind, tuple(value.lookups())
    )


def _amounts_over(tokens: list[Token], amounts: list[Amount]) -> list[Amount | None]:
    """For each token, the amount (``money``) it is part of, or None."""
    out: list[Amount | None] = [None] * len(tokens)
    at = 0
    for i, token in enumerate(tokens):
        while at < len(amounts) and amounts[at].end <= token.start:
            at += 1
        if at < len(amounts) and amounts[at].start < token.end:
            out[i] = amounts[at]
    return out


def _amount_candidate(answer: str, amount: Amount) -> Candidate:
    """Money, whatever its digits: "$740" is a value to check as much as "$7,400". The claim
    is its digits, as written; it is looked up under the amount's keys (``money``)."""
    keys = amount.keys()
    start, end = amount.number_start, amount.number_end
    return Candidate(
        keys[0], answer[start:end], start, end, "amount", keys, amount.magnitude, amount.precision
    )


def _count_candidate(
    answer: str, token: Token, following: list[Token], counted: Callable[[str], bool]
) -> Candidate | None:
    """ "7 reservations": a count of a noun the results count, the noun right after it. A
    word between ("2 upcoming reservations") makes it a count of a part of the list, which
    no list length settles, so it is not read."""
    if not following:
        return None
    word = following[0]
    if not word.value.isalpha() or answer[token.end : word.start].strip():
        return None
    if not (word.value.endswith("s") and counted(word.value)):
        return None
    count = read_number(token.value)
    # A count of more digits than a number may have is no list's length: only as written.
    forms = (token.value,) if count is None else (token.value, count_key(word.value, int(count)))
    return Candidate(token.value, answer[token.start : word.end], token.start, word.end, "count", forms)


def _with_notations(candidate: Candidate) -> Candidate:
    """The candidate with the other keys its value may be written under (``notations``)."""
    extra: list[str] = []
    if candidate.shape == "number" and (run := number_run(candidate.value)) is not None:
        extra = run.keys()
    return replace(candidate, forms=candidate.forms + tuple(extra)) if extra else candidate


def code_blocks_to_skip(turn: Turn) -> list[tuple[int, int]]:
    """Under ``code: match``, fenced blocks that equal a program this turn's calls submitted."""
    submitted = {
        text.strip()
        for call in turn.tool_calls
        for _, text in json_leaves(call.parsed, lambda leaf: isinstance(leaf, str))
    }
    return [
        (match.start(), match.end())
        for match in _FENCE.finditer(turn.answer)
        if (body := match.group(1).strip()) and body in submitted
    ]


# --- the checker --------------------------------------------------------------------------


class _State:
    """What the conversation has shown so far, grown message by message in order."""

    def __init__(self, opts: EvidenceOptions, sources: list[Source]) -> None:
        self.grounds = Grounds("answer", sources)
        self.tools = Shown()  # the tool results so far
        self.queries = Shown()  # the arguments of the calls that found something
        self.people = Shown()  # the user's messages and the prompt
        self.exempt: set[str] = set()  # what the options exempt
        for value in opts.exempt_values:
            self.exempt.update(lookup_forms(normalize(value)))
        # For the arithmetic of later answers: amounts said before, counts and date shifts
        # the user stated.
        self.amounts: list[Operand] = []
        self.derivations: dict[Decimal, Derivation] = {}  # amounts explained in earlier answers
        # The first count the user wrote of each number, and each shift of days, in order: a
        # later one of the same number explains nothing the first does not.
        self.counts: dict[int, Operand] = {}
        self.shifts: dict[int, None] = {}
        # The answers' own values that nothing backed: key -> the turn that first stated it.
        self.invented: dict[str, int] = {}

    def absorb(self, source: Source) -> None:
        if not self.grounds.absorb(source):
            return
        if source.role in ("tool", "call"):
            # A successful call's arguments back what the answer restates of its query.
            (self.tools if source.role == "tool" else self.queries).add(source)
        else:
            self.people.add(source)
            who = "the user's words" if source.role == "user" else "the system prompt"
            self.amounts.extend(
                Operand(a.magnitude, f"{source.text[a.number_start : a.number_end]} ({who})")
                for a in read_amounts(source.text)
            )
            if source.role == "user":
                for count in user_counts(source.text):
                    self.counts.setdefault(int(count.value), count)
                self.shifts.update(dict.fromkeys(stated_shifts(source.text)))

    def remember_amounts(
        self, turn: int, candidates: list[Candidate], known: dict[str, tuple[Evidence, ...]]
    ) -> None:
        """An answer's grounded and explained amounts are operands for the answers after it."""
        for c in candidates:
            if c.shape == "amount" and c.number is not None and c.value in known:
                self.amounts.append(Operand(c.number, f"{c.text} (stated in turn {turn})", known[c.value]))
        del self.amounts[:-MAX_POOL]

    def invented_in(self, candidate: Candidate) -> int | None:
        """The turn whose answer first stated this value with nothing to back it, if any."""
        return next((self.invented[f] for f in candidate.forms if f in self.invented), None)

    def counts_noun(self, plural: str) -> bool:
        """Whether a result holds a list under a key naming ``plural`` (``passengers``)."""
        if plural not in self.grounds.newest or len(plural) < 4:
            return False
        return self.tools.counts_noun(count_key(plural, 0)[:-1])

    def pools_for(
        self, turn: Turn, turn_sources: list[Source], candidates: list[Candidate], amounts: bool
    ) -> Pools:
        """The operands an answer's figures may be derived from; those of its amounts (the
        money read, the counts, the records it names) only when it has amounts to explain."""
        pools = Pools(
            self.tools.newest(MAX_SOURCES),
            turn.answer,
            turn=turn_sources,
            shifts=list(self.shifts),
            holding=self.holding_date,
            before=self.derivations,
            sentences=sentences(turn.answer) if amounts else [],
        )
        if not amounts:
            return pools
        pools.read = [leaf for source in turn_sources for leaf in money_leaves(source)][:MAX_POOL]
        pools.earlier = self.amounts[-MAX_POOL:]
        # The user's counts, then the lengths of the results' lists, newest first; of each
        # number only the first, since a product made with a later one is made with it.
        counts = dict(self.counts)
        for count in self.tools.list_counts():
            counts.setdefault(int(count.value), count)
        pools.counts = list(counts.values())
        pools.names = sorted((c.start, c.value) for c in candidates if c.shape == "identifier")
        wanted = {value for _, value in pools.names}
        records: dict[str, NamedRecord] = {}
        for source in pools.records:
            for record in named_records(source, wanted - set(records)):
                records.setdefault(record.name, record)
        pools.named = records
        return pools

    def holding_date(self, wanted: date) -> Source | None:
        """The newest tool result that writes a date, else the first person who wrote it."""
        found = self.tools.holding_date(wanted, newest=True)
        return found if found is not None else self.people.holding_date(wanted, newest=False)


class EvidenceChecker:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        """Findings, the provenance of every value grounded, and each turn's reading statistics."""
        opts = options.evidence
        index = index_for(conversation)
        state = _State(opts, index.sources)
        report = CheckerReport()
        for source in index.system:
            if source.turn < 0:
                state.absorb(source)
        for turn in conversation.turns:
            deadline.check()
            later: list[Source] = []
            read: list[Source] = []  # this turn's tool results before its answer
            for source in index.by_turn[turn.index]:
                if turn.answer_index is not None and source.message_index > turn.answer_index:
                    later.append(source)
                else:
                    state.absorb(source)
                    if source.role == "tool":
                        read.append(source)
            self._judge(turn, opts, state, index.sources, report, read)
            for source in later:
                state.absorb(source)
        return report

    def _judge(
        self,
        turn: Turn,
        opts: EvidenceOptions,
        state: _State,
        sources: list[Source],
        report: CheckerReport,
        turn_sources: list[Source],
    ) -> None:
        # Nothing is left unread and no index is cut: the contract's fields say so.
        stats: dict[str, Any] = {"candidates": 0, "unread": 0, "index_truncated": False}
        report.turns[turn.index] = stats
        if not turn.answer:
            return
        skip = code_blocks_to_skip(turn) if opts.code == "match" else []
        reading = read_answer(turn.answer, opts, skip, counted=state.counts_noun)
        stats["candidates"] = len(reading.candidates)
        exempt_by_pattern: list[int] = [-1] * len(reading.candidates)
        if opts.exempt_patterns:
            exempt_by_pattern, _ = match_patterns(
                list(opts.exempt_patterns), [c.value for c in reading.candidates]
            )

        seen: set[str] = set()
        known: dict[str, tuple[Evidence, ...]] = {}  # value -> what grounds or explains it
        unread: list[Candidate] = []
        grounded_turns: list[int] = []
        for i, candidate in enumerate(reading.candidates):
            deadline.check()
            if candidate.value in seen:
                continue
            seen.add(candidate.value)
            lookups = _lookups(candidate)
            if (
                exempt_by_pattern[i] >= 0
                or state.grounds.supplied(lookups)
                or any(form in state.exempt for form in lookups)
            ):
                known[candidate.value] = ()
                continue
            where = self._locate(candidate, lookups, state)
            if where is None and candidate.apart:
                where = self._locate_apart(candidate.apart, state)
            if where is None:
                unread.append(candidate)
                continue
            source, span = where
            grounded_turns.append(source.turn)
            evidence = source.evidence_at(span)
            known[candidate.value] = (evidence,)
            report.provenance.append(
                {
                    "turn": turn.index,
                    "value": clip(candidate.value),
                    "claim": _span(candidate).to_dict(),
                    "evidence": [evidence.to_dict()],
                }
            )

        explained = self._derive(turn, opts, state, reading.candidates, unread, known, turn_sources)
        unsupported: list[Candidate] = []
        for candidate in unread:
            derivation = explained.get(candidate.value)
            if derivation is None:
                unsupported.append(candidate)
                continue
            report.findings.append(
                Finding(
                    turn=turn.index,
                    checker=NAME,
                    code="computed_value",
                    severity="info",
                    explanation=(
                        f"“{clip(candidate.text)}” is written in no tool result, but it is "
                        f"{_KIND_WORDS[derivation.kind]}: {derivation.source}."
                    ),
                    claim=_span(candidate),
                    evidence=derivation.evidence,
                    value=clip(candidate.value),
                    extra={"derivation": derivation.to_dict()},
                )
            )
        state.remember_amounts(turn.index, reading.candidates, known)
        for candidate in unread:
            if candidate.value in explained and candidate.number is not None:
                state.derivations.setdefault(candidate.number, explained[candidate.value])

        # An earlier answer backs nothing, but a value it invented is one defect: flagged
        # where it first appears, noted where the model says it again.
        repeats = [c for c in unsupported if state.invented_in(c) is not None]
        for candidate in repeats:
            report.findings.append(self._repeated(turn, candidate, state.invented_in(candidate) or 0))
        unsupported = [c for c in unsupported if c not in repeats]
        for form in (form for candidate in unsupported for form in candidate.forms):
            state.invented.setdefault(form, turn.index)
        if unsupported:
            self._flag(turn, opts, unsupported, report)
        records = names_in(reading.candidates, state.tools, turn.answer)
        if records:
            grounded = {
                c.value for c in reading.candidates if known.get(c.value) and c.value not in explained
            }
            report.findings.extend(
                other_record_findings(turn.index, turn.answer, reading.candidates, grounded, records, NAME)
            )
            report.findings.extend(contradicted_findings(turn.index, turn.answer, records, NAME))
            report.findings.extend(route_findings(turn.index, turn.answer, reading.candidates, records, NAME))
        if opts.prior_turn and grounded_turns and max(grounded_turns) < turn.index:
            report.findings.append(self._prior_turn(turn, grounded_turns))

    @staticmethod
    def _derive(
        turn: Turn,
        opts: EvidenceOptions,
        state: _State,
        candidates: list[Candidate],
        unread: list[Candidate],
        known: dict[str, tuple[Evidence, ...]],
        turn_sources: list[Source],
    ) -> dict[str, Derivation]:
        """What explains each value no source carries (``derivations``): which rows may is
        what the options allow of its shape."""
        if not opts.figures and not opts.decimal_rounding:
            return {}
        amounts = [c for c in candidates if c.shape == "amount" and c.number is not None]
        place: dict[str, int] = {}  # each value's first place among the amounts
        for i, c in enumerate(amounts):
            place.setdefault(c.value, i)
        figures: list[Figure] = []
        for c in unread:
            shapes: set[str] = set()
            if c.number is not None and c.shape != "amount":
                if opts.decimal_rounding and "." in c.value:
                    shapes.add("decimal")
                elif opts.figures and c.shape in ("number", "figure"):
                    # A percent is no conversion of bytes or seconds: every other row may give it.
                    shapes.add("percent" if c.unit in PERCENT_UNITS else "number")
            days = tuple(day for day in map(day_of_key, c.forms) if day is not None) if opts.figures else ()
            if opts.figures:
                shapes |= {"date"} if days else set()
                shapes |= {"duration"} if c.shape == "duration" else set()
                shapes |= {"amount"} if c.shape == "amount" and c.number is not None else set()
            if shapes:
                at = place[c.value] if "amount" in shapes else -1
                figures.append(
                    Figure(c.number, frozenset(shapes), c.precision or 0, c.value, c.text, days, at)
                )
        pools = state.pools_for(turn, turn_sources, candidates, any(f.at >= 0 for f in figures))
        pools.amounts, pools.known = amounts, known
        return {f.key: d for f, d in zip(figures, derive(figures, pools), strict=True) if d is not None}

    @staticmethod
    def _locate(
        candidate: Candidate, lookups: list[str], state: _State
    ) -> tuple[Source, tuple[int, int] | None] | None:
        """Where the newest source carrying one of the candidate's ``lookups`` stands."""
        found = state.grounds.ground(lookups)
        if found is not None:
            source, key = found
            return source, source.span_of(key)
        # Keys read from a result only when asked: an identifier's digit run, a list's length.
        lazy = [form for form in candidate.forms if form.startswith(("#", "count:"))]
        holder = (state.tools.with_lazy_key(lazy) or state.queries.with_lazy_key(lazy)) if lazy else None
        if holder is not None:
            for key in lazy:
                if key in holder.fragments:
                    return holder, holder.span_of(key)
                if key in holder.counts:
                    return holder, None
        return None

    @staticmethod
    def _locate_apart(
        numbers: tuple[str, ...], state: _State
    ) -> tuple[Source, tuple[int, int] | None] | None:
        """Where the first of a run's numbers read apart stands, when every one of them is
        carried: a run grouped by spaces that no source carries whole may be a list ("items
        1 200 300"), and reading it whole flags nothing that reading it apart would not."""
        first: tuple[Source, tuple[int, int] | None] | None = None
        for number in numbers:
            found = state.grounds.ground((number,))
            if found is None:
                return None
            if first is None:
                source, key = found
                first = (source, source.span_of(key))
        return first

    @staticmethod
    def _flag(turn: Turn, opts: EvidenceOptions, values: list[Candidate], report: CheckerReport) -> None:
        names = [c.value for c in values]
        correction = correction_for(names, opts.posture)
        for candidate in values:
            numeric = candidate.shape in ("number", "figure") and opts.figures
            explanation = (
                f"“{clip(candidate.text)}” ({candidate.shape}) appears in no tool result of this "
                "conversation, and no user message or system prompt supplied it"
                + (
                    "; it is also no rounding, unit conversion, complement, column sum, ratio or "
                    "difference of the numbers the results carry."
                    if numeric
                    else "."
                )
            )
            report.findings.append(
                Finding(
                    turn=turn.index,
                    checker=NAME,
                    code="unsupported_value",
                    severity="flag",
                    explanation=explanation,
                    claim=_span(candidate),
                    correction=correction,
                    value=clip(candidate.value),
                    extra={"shape": candidate.shape},
                )
            )

    @staticmethod
    def _repeated(turn: Turn, candidate: Candidate, first: int) -> Finding:
        return Finding(
            turn=turn.index,
            checker=NAME,
            code="repeated_unsupported_value",
            severity="info",
            explanation=(
                f"“{clip(candidate.text)}” ({candidate.shape}) appears in no tool result and no "
                f"person supplied it; the answer of turn {first} stated it first and is flagged there."
            ),
            claim=_span(candidate),
            value=clip(candidate.value),
            extra={"shape": candidate.shape, "first_turn": first},
        )

    @staticmethod
    def _prior_turn(turn: Turn, grounded_turns: list[int]) -> Finding:
        latest, count, served = max(grounded_turns), len(grounded_turns), bool(turn.tool_results)
        back = turn.index - latest
        return Finding(
            turn=turn.index,
            checker=NAME,
            code="prior_turn_evidence",
            severity="info",
            explanation=(
                f"All {count} grounded value{'s' * (count != 1)} of this answer were read in earlier "
                f"turns, the newest in turn {latest} ({back} turn{'s' * (back != 1)} back); "
                + (
                    "this turn's own tool results carry none of them."
                    if served
                    else "this turn served no tool result."
                )
            ),
            extra={"values": count, "from_turn": latest, "turns_back": back, "served_results": served},
        )


def _lookups(candidate: Candidate) -> list[str]:
    """The keys a candidate is looked up under, among the tools' and the people's words
    alike: its forms (a source files a number under its canonical spelling too:
    ``tokens.token_keys``), and a percent's fraction (``percent_fraction``)."""
    forms = list(candidate.forms)
    if candidate.number is not None and candidate.unit in PERCENT_UNITS:
        fraction = percent_fraction(candidate.number)
        if fraction is not None:
            forms.append(fraction)
    return forms


@exactly
def percent_fraction(percent: Decimal) -> str | None:
    """The fraction a percent is (``12.5`` % is ``0.125``), exactly, as a source writes a
    number; None where it is a whole number, which a source writes as a count far more
    often than as a ratio (100 % is 1)."""
    fraction = percent / 100
    if fraction == fraction.to_integral_value():
        return None
    return number_text(fraction)


def _span(candidate: Candidate) -> Span:
    return Span(candidate.text, candidate.start, candidate.end)
