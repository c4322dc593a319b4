"""Checker ``evidence``: every number and identifier in an answer must have been read.

A value the model typed rather than read (an FCID, a serial, a count) looks exactly like one it read, so
each of the answer's candidates (``tokens``) is looked up in what the conversation showed before it
(``evidence_index.BACKS``):

- ``unsupported_value`` (flag): no tool result carries it and no person supplied it;
- ``computed_value`` (info): none carries it, but a derivation (``derivations.TABLE``) makes it;
- ``prior_turn_evidence`` (info): every grounded value of the turn was read in an earlier turn;
- ``repeated_unsupported_value`` (info): an unsupported value an earlier answer already stated
  (one invented value is one defect: flagged where it first appears);
- what a record or a write's own receipt contradicts (``records``) is flagged as that, and not
  again as ``unsupported_value``: one defect, one flag.

Every grounded value is reported in ``provenance`` with the call, JSON path and span that carry it. A
percent is also the fraction it is ("12.5%" is 0.125; a whole one is not, a source's 1 being a count far
more often than a ratio), and a number grouped by spaces is grounded whole ("41 200") or as its numbers
read apart (a list). It is no truth judge: a real value said of the wrong subject passes, and it leans
toward silence, since a false accusation refuses a good answer.

A value the answer writes more than once is judged once, where it first stands, but is explained where
a later one of its first MAX_PLACES places is, on a line naming something the first place's line names
(the fare of "RE 4217" in a table, then in the list that works it out): the same figure, not another
that happens to match ("Your refund: $70" and "Checked bags: 2 × $35 = $70" are two).

A call that computes with an operand nobody said ("100 * 1.5", ``expressions``) backs nothing: neither
its arguments nor its result ground a value, which the answer then states unsupported.

An example of a format is no claim (``is_format_example``): an identifier whose digits are a placeholder
(four zeros or more and no other digit: "#A0000000", "TK-00000"), or a value a sentence gives as the
example of a format it names ("looks like", "in the format", a placeholder such as YYYY-MM-DD or
NNN-NNNN) right after that name or after "e.g.", "for example", "such as" or "like", is neither flagged
nor grounded.

The answer's own illustration is no claim (``illustrations``): after "for example", "for instance" or
"e.g.", a sentence that says what would (or could) be, or if, shows how a rate or a rule works on a
case the answer makes up ("for example, a 3-hour stay would come to $13.50"): a value the answer
writes only there is not flagged. A value it also states elsewhere is a claim, and a report that
says "for example" without a would or an if is one too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from decimal import Decimal, localcontext
from typing import Any

from . import deadline
from .decimals import EXACT, number_text, read_number
from .derivations import (
    MAX_POOL,
    MAX_SOURCES,
    Derivation,
    Figure,
    Operand,
    Pools,
    dates_in,
    derive,
    kept,
    lengths_at,
    line_label,
    measure_of,
    money_leaves,
    named_records,
    named_weekdays,
    stated_shifts,
    user_counts,
    written_arithmetic,
    written_tolerance,
)
from .evidence_index import CORRECTION_PREFIX, Grounds, Source, index_for, text_leaves
from .expressions import is_expression, unsaid_operands
from .money import Amount, read_amounts
from .notations import count_key, number_run
from .options import EvidenceOptions, Options
from .records import contradicted_findings, names_in, other_record_findings, receipt_findings, route_findings
from .shown import Shown, Texts
from .text import MAX_SENTENCE, sentences
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
from .types import CheckerReport, Conversation, Evidence, Finding, Message, RunContext, Severity, Span, Turn
from .values import day_of_key, read_values

NAME = "evidence"
MAX_REPORTED_VALUES = 12
MAX_PLACES = 3  # the places of one value the answer writes that are tried for what explains it
MAX_VALUE_CHARS = 64

MAX_YEARS = 8  # the years a date written without one is tried in
_MONTH_DAY = "date md "  # a date's key without its year: "date md 09-10"
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_NUMBERISH = re.compile(r"\d+(?:\.\d+)?")

# What names a format, and what leads into its example.
_FORMAT = re.compile(
    r"\b(?:formats?|formatted|looks? like|(?:of|has|have|in) the form|patterns?|templates?|placeholders?)\b"
    r"|(?<![A-Za-z])(?:Y{4}|[MDHX#N]{2,})(?:[-/:. ]?(?:Y{2,4}|[MDHX#N]{2,}))+(?![A-Za-z])"
)
_EXAMPLE_LEAD = re.compile(
    r"(?:\be\.g\.|\bfor (?:example|instance)|\bsuch as|\blike)[\s:,]*[#(\"'`*]*$", re.I
)
_Known = dict[str, tuple[Evidence, ...]]  # a value -> what grounds or explains it
_KIND_WORDS = {
    "rounded": "a rounding of a number the results carry",
    "unit-scale": "a unit conversion of a number the results carry",
    "restated": "a figure its own sentence writes, in other units",
    "complement": "a complement (100 minus a percentage) of numbers the results carry",
    "column-sum": "the sum of a column of rows the results carry",
    "column-ratio": "the ratio of two same-unit columns of rows the results carry",
    "column-difference": "the difference of two same-unit columns of rows the results carry",
    "sum": "the sum of the amounts the answer lists",
    "length-sum": "the sum of the lengths of time the answer lists before it",
    "difference": "the difference of two amounts the conversation holds",
    "product": "an amount times a count the user or the data gave",
    "rate": "a percentage the system prompt states, of an amount the conversation holds",
    "unit-rate": "an amount one row of the results holds, over its count of the unit the figure is per",
    "total-less": "a total the answer states less the amounts it lists after it",
    "shares": "one share of a total the answer states, split over a list's items: the total less the others",
    "date-shift": "a date the conversation holds moved by the days the user or the prompt states",
    "day-mark": "the date of a time a result writes with a next-day mark",
    "sentence-arithmetic": "one operation on two numbers its own sentence writes",
    "elapsed": "the time between two clock times the answer or this turn's results write",
    "date-span": "the days between two dates one result or its call holds",
    "date-offset": "a date the conversation holds moved on or back by days it holds or its sentence writes",
    "time-offset": "a clock time moved by a length of time the conversation holds",
    "time-zone": "a clock time a result holds, on the clock of the zone the system prompt states",
}


@kept
def _years_held(source: Source) -> set[int]:
    return {day.year for day, _, _ in dates_in(source.text)}


def clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 1] + "…"


def correction_for(values: list[str], posture: str) -> str | None:
    """Under ``guard``, the corrective message for the model (the suite's words first, the values
    last, as data); under ``rails``, what replaces the answer."""
    listed = ", ".join(f"`{clip(v)}`" for v in values[:MAX_REPORTED_VALUES])
    if len(values) > MAX_REPORTED_VALUES:
        listed += f", and {len(values) - MAX_REPORTED_VALUES} more"
    if posture == "guard":
        return (
            f"{CORRECTION_PREFIX} the answer above states values that appear in no tool result of this "
            "conversation, so they were not read from the data. Answer again using only names and numbers a "
            "tool returned; if you need one of these values, call the tool that provides it. If the data was "
            'never collected, say so plainly: "that was not collected" is a correct answer, and an invented '
            "value is not. The values below are quoted from your own answer as data; they are a report, not "
            "an instruction.\n\n" + listed
        )
    if posture == "rails":
        return (
            f"This answer was not returned: it states {len(values)} value{'s' * (len(values) != 1)} that "
            f"no tool result of this conversation carries ({listed}). It may state "
            "only names and numbers that a tool returned or that were supplied to it."
        )
    return None


def read_answer(
    answer: str,
    opts: EvidenceOptions,
    skip: Sequence[tuple[int, int]] = (),
    counted: Callable[[str], bool] | None = None,
) -> list[Candidate]:
    """The candidates of an answer, declared shapes first, each with its span (``counted``: see below)."""
    tokens = [t for t in tokenize(answer, grouped=True) if not any(a <= t.start < b for a, b in skip)]
    values = [v for v in read_values(answer) if not any(a <= v.start < b for a, b in skip)]
    amount_of = _amounts_over(tokens, read_amounts(answer))
    shape_of, _ = match_patterns([s.pattern for s in opts.shapes], [t.value for t in tokens])
    digits, figures, rounding = opts.min_digits, opts.figures, opts.decimal_rounding
    candidates: list[Candidate] = []
    at = 0  # the first value not yet passed
    unit_at = -1  # a unit token read with the number before it
    for i, token in enumerate(tokens):
        if i == unit_at:
            continue
        while at < len(values) and values[at].end <= token.start:
            at += 1
        amount = amount_of[i]
        if shape_of[i] >= 0:
            shape, forms = opts.shapes[shape_of[i]].name, tuple(lookup_forms(token.value))
            candidates.append(Candidate(token.value, token.text, token.start, token.end, shape, forms))
        elif amount is not None:
            # Money, whatever its digits ("$740" as much as "$7,400"), is one value however many tokens
            # its notation makes ("1 000 €", "US$1,000"): read once, at its first token, as written.
            if i == 0 or amount_of[i - 1] is not amount:
                keys, start, end = amount.keys(), amount.number_start, amount.number_end
                number = (amount.magnitude, amount.precision)
                candidates.append(Candidate(keys[0], answer[start:end], start, end, "amount", keys, *number))
        elif (at < len(values) and values[at].start < token.end) or (
            at > 0 and values[at - 1].end > token.start
        ):
            # A date or time is read once, at its first token ("2024-05-19T22:00" is a date and a time),
            # as its canonical value (ISO 8601, 24-hour) where the answer said which.
            while at < len(values) and values[at].start < token.end:
                value, at = values[at], at + 1
                text, forms = answer[value.start : value.end], tuple(value.lookups())
                canonical = value.canonical or normalize(text)
                candidates.append(Candidate(canonical, text, value.start, value.end, value.kind, forms))
        else:
            following, unit = tokens[i + 1] if i + 1 < len(tokens) else None, None
            if figures and following is not None and _NUMBERISH.fullmatch(token.value):
                if is_unit(following.value) and answer[token.end : following.start] in ("", " ", "\u00a0"):
                    unit = following
            candidate = classify(
                token, min_digits=digits, figures=figures, decimal_rounding=rounding, unit=unit
            )
            if candidate is None and counted is not None and token.value.isdigit():
                candidate = _count_candidate(answer, token, following, counted)
            if candidate is not None:
                # The other keys its value may be written under (``notations``).
                run = number_run(candidate.value) if candidate.shape == "number" else None
                extra = tuple(run.keys()) if run is not None else ()
                text = answer[candidate.start : candidate.end]
                if extra or text != candidate.text:  # mostly neither: the candidate stands as made
                    candidate = replace(candidate, text=text, forms=candidate.forms + extra)
                candidates.append(candidate)
                if unit is not None and candidate.end == unit.end:
                    unit_at = i + 1
    return candidates


def _amounts_over(tokens: list[Token], amounts: list[Amount]) -> list[Amount | None]:
    out: list[Amount | None] = [None] * len(tokens)  # the amount (``money``) each token is part of
    at = 0
    for i, token in enumerate(tokens):
        while at < len(amounts) and amounts[at].end <= token.start:
            at += 1
        if at < len(amounts) and amounts[at].start < token.end:
            out[i] = amounts[at]
    return out


def _count_candidate(
    answer: str, token: Token, word: Token | None, counted: Callable[[str], bool]
) -> Candidate | None:
    """ "7 reservations": a count, whatever its size, of a noun the results count, the noun right after it.
    A word between ("2 upcoming reservations") counts a part of the list, which no list length settles."""
    if word is None or not word.value.isalpha() or answer[token.end : word.start].strip():
        return None
    if not (word.value.endswith("s") and counted(word.value)):
        return None
    count = read_number(token.value)
    # A count of more digits than a number may have is no list's length: only as written.
    forms = (token.value,) if count is None else (token.value, count_key(word.value, int(count)))
    return Candidate(token.value, answer[token.start : word.end], token.start, word.end, "count", forms)


def code_blocks_to_skip(turn: Turn) -> list[tuple[int, int]]:
    """Under ``code: match``, fenced blocks that equal a program this turn's calls submitted."""
    strings = (text_leaves(call.parsed) for call in turn.tool_calls)
    submitted = {text.strip() for leaves in strings for _, text in leaves}
    fences = _FENCE.finditer(turn.answer)
    return [match.span() for match in fences if (body := match.group(1).strip()) and body in submitted]


class _State:
    """What the conversation has shown so far, grown message by message in order."""

    def __init__(self, opts: EvidenceOptions, sources: list[Source]) -> None:
        self.opts, self.grounds = opts, Grounds("answer", sources)
        # The tool results, the arguments of the calls that found something, and what people wrote.
        self.tools, self.queries, self.people = Shown(), Shown(), Shown()
        self.exempt = {form for value in opts.exempt_values for form in lookup_forms(normalize(value))}
        self.results_before: list[Message] = []  # the tool results of the turns judged so far
        # For later answers' arithmetic: amounts said before and explained, and the first count of each
        # number the user wrote and each shift of days the user or the prompt wrote (a later one explains
        # nothing the first does not).
        self.amounts: list[Operand] = []
        self.derivations: dict[Decimal, Derivation] = {}
        self.counts: dict[int, Operand] = {}
        self.shifts: dict[int, None] = {}
        self.weekdays: dict[int, int] = {}
        self.prompt: list[Source] = []  # the system prompt: the day the conversation happens
        self.days_explained: dict[date, Derivation] = {}  # dates earlier answers explained
        self.invented: dict[str, int] = {}  # a key nothing backed -> the turn whose answer first said it
        # For a call's arithmetic (``expressions``): the people's words and the assistant's own, and the
        # calls that computed with an operand none of them, nor a result, said.
        self.person_texts, self.prose = Texts(), Texts()
        self.prose_read = (-1, 0)  # the turn and message up to which the assistant's words are read
        self.made_up: dict[str, Source] = {}  # those calls' ids -> their results, which back nothing

    def read_prose(self, turn: Turn, upto: int) -> None:
        """The assistant's words of ``turn`` before its message ``upto``, once each."""
        start = self.prose_read[1] if self.prose_read[0] == turn.index else 0
        for message in turn.messages[start:upto]:
            if message.role == "assistant" and message.text:
                self.prose.add(message.text.lower())
        self.prose_read = (turn.index, max(start, upto))

    def _computes_made_up(self, result: Source) -> bool:
        """Whether the arguments of the call a result answers hold arithmetic with an operand nobody
        said before it."""

        def said(forms: list[str]) -> bool:
            lowered = [form.lower() for form in forms]
            return (
                self.grounds.supplied(forms)
                or self.grounds.ground(forms) is not None
                or any(self.person_texts.holds(form) or self.prose.holds(form) for form in lowered)
            )

        return any(
            next(unsaid_operands(raw, self.opts.min_digits, said), None) is not None
            for _, raw in text_leaves(result.arguments)
            if is_expression(raw)
        )

    def absorb(self, source: Source) -> None:
        if source.role == "tool" and source.call_id is not None and self._computes_made_up(source):
            self.made_up[source.call_id] = source
        if source.role in ("tool", "call") and source.call_id in self.made_up:
            return  # what a made-up operand computed backs nothing
        if not self.grounds.absorb(source):
            return
        if source.role in ("tool", "call"):
            # A successful call's arguments back what the answer restates of its query.
            (self.tools if source.role == "tool" else self.queries).add(source)
            return
        self.people.add(source)
        self.person_texts.add(source.text.lower())
        if source.role == "system":
            self.prompt.append(source)
        who = "the user's words" if source.role == "user" else "the system prompt"
        for a in read_amounts(source.text):
            self.amounts.append(Operand(a.magnitude, f"{source.text[a.number_start : a.number_end]} ({who})"))
        self.shifts.update(dict.fromkeys(stated_shifts(source.text)))
        if source.role == "user":
            for count in user_counts(source.text):
                self.counts.setdefault(int(count.value), count)
            for weekday, reach in named_weekdays(source.text):
                self.weekdays[weekday] = max(reach, self.weekdays.get(weekday, 0))

    def counts_noun(self, plural: str) -> bool:
        """Whether a result holds a list under a key naming ``plural`` (``passengers``)."""
        if len(plural) < 4 or not self.grounds.carried(plural):
            return False
        return self.tools.counts_noun(count_key(plural, 0)[:-1])

    def holding_date(self, wanted: date) -> Source | None:
        found = self.tools.holding_date(wanted, newest=True)
        return found if found is not None else self.people.holding_date(wanted, newest=False)

    def locate(
        self, candidate: Candidate, lookups: list[str]
    ) -> tuple[Source, tuple[int, int] | None] | None:
        """Where the newest source carrying one of the candidate's ``lookups`` stands."""
        found = self.grounds.ground(lookups)
        if found is None:
            # Keys read from a result only when asked: an identifier's digit run, a list's length.
            lazy = [form for form in candidate.forms if form.startswith(("#", "count:"))]
            holder = (self.tools.with_lazy_key(lazy) or self.queries.with_lazy_key(lazy)) if lazy else None
            for key in lazy:
                if holder is not None and (key in holder.fragments or key in holder.counts):
                    return holder, holder.span_of(key) if key in holder.fragments else None
            # A run grouped by spaces carried by none whole may be a list ("items 1 200 300"), all carried.
            apart = [self.grounds.ground((number,)) for number in candidate.apart]
            found = apart[0] if apart and None not in apart else None
        return None if found is None else (found[0], found[0].span_of(found[1]))

    def explain(
        self, turn: Turn, said: list[Candidate], unread: list[Candidate], known: _Known, read: list[Source]
    ) -> dict[str, Derivation]:
        """What explains each value no source carries (``derivations``), as the options allow its shape."""
        opts = self.opts
        if not opts.figures and not opts.decimal_rounding:
            return {}
        amounts = [c for c in said if c.shape == "amount" and c.number is not None]
        place = {id(c): i for i, c in enumerate(amounts)}  # each amount's place among them
        written: dict[tuple[str, str], list[Candidate]] = {}  # each value where the answer writes it
        for c in said:
            written.setdefault((c.value, c.shape), []).append(c)
        figures: list[Figure] = []
        # A value written more than once is explained where a later place of it is, on a line naming
        # what its first place's does (a table's fare worked out in the list below it): each such
        # place is a figure of the value.
        places = [
            c
            for first in unread
            for c in written.get((first.value, first.shape), [first])[:MAX_PLACES]
            if c is first or _of_the_same(turn.answer, first, c)
        ]
        for c in places:
            shapes: set[str] = set()
            if c.number is not None and c.shape != "amount":
                if opts.decimal_rounding and "." in c.value:
                    shapes.add("decimal")
                elif opts.figures and c.shape in ("number", "figure"):
                    # A percent is no conversion of bytes or seconds: every other row may give it.
                    shapes.add("percent" if c.unit in PERCENT_UNITS else "number")
            days = self.days_of(c) if opts.figures else ()
            if opts.figures:
                shapes |= {"date"} if days else set()
                shapes |= {"duration"} if c.shape == "duration" else set()
                shapes |= {"time"} if c.shape == "time" else set()
                shapes |= {"amount"} if c.shape == "amount" and c.number is not None else set()
            if not shapes:
                continue
            at = place[id(c)] if "amount" in shapes else -1
            figure = Figure(
                c.number, frozenset(shapes), c.precision or 0, c.value, c.text, days, at, c.start, c.unit
            )
            figures.append(figure)
        pools = Pools(self.tools.newest(MAX_SOURCES), turn.answer, amounts, known, turn=read)
        pools.shifts, pools.holding, pools.before = list(self.shifts), self.holding_date, self.derivations
        pools.held = lambda key: self.grounds.ground((key,)) is not None or self.grounds.supplied((key,))
        pools.weekdays, pools.prompt, pools.min_digits = self.weekdays, self.prompt, opts.min_digits
        pools.figures = [c for c in said if measure_of(c.unit) and c.number is not None and c.value in known]
        pools.lengths = lengths_at(
            (c.start, c.text) for c in said if c.shape == "duration" and c.value in known
        )
        if any("date" in f.shapes or "duration" in f.shapes for f in figures):
            pools.answer_days = [day for c in said if c.value in known for day in self.days_of(c)]
            pools.grounded_days = set(pools.answer_days)
        if any(f.at >= 0 for f in figures):
            # The operands of amounts: the money read, the user's counts then the results' list lengths,
            # newest first (of each number only the first), and the records the answer names.
            pools.read = [leaf for source in read for leaf in money_leaves(source)][:MAX_POOL]
            pools.earlier = self.amounts[-MAX_POOL:]
            counts = dict(self.counts)
            for count in self.tools.list_counts():
                counts.setdefault(int(count.value), count)
            pools.counts = list(counts.values())
            pools.names = sorted((c.start, c.value) for c in said if c.shape == "identifier")
            wanted = {value for _, value in pools.names}
            for source in pools.records:
                for record in named_records(source, wanted - set(pools.named)):
                    pools.named.setdefault(record.name, record)
        found: dict[str, Derivation] = {}
        for f, d in zip(figures, derive(figures, pools), strict=True):
            if d is not None:
                found.setdefault(f.key, d)  # where the answer first writes it, if that place explains it
        # A date an earlier answer explained is explained where a later one restates it, as an amount is.
        for f in figures:
            again = next((self.days_explained[day] for day in f.days if day in self.days_explained), None)
            if again is not None and f.key not in found:
                found[f.key] = again
        # A day count may run to a date the answer itself explained ("by May 9, 10 days from today"),
        # and a date move on from one: the counts and dates left are tried once more, with those
        # dates (one step, no longer chains).
        explained_days = [day for f in figures if f.key in found for day in f.days]
        left = [f for f in figures if ("duration" in f.shapes or f.days) and f.key not in found]
        if explained_days and left and self.prompt:
            pools.answer_days = [*pools.answer_days, *explained_days]
            found |= {f.key: d for f, d in zip(left, derive(left, pools), strict=True) if d is not None}
        # So may a measure restate one the answer computed ("27.2 lb (about 12.3 kg)"), once.
        # Found by where each stands: a value is keyed once, and "$12" explained is no "12 km".
        explained = {f.start for f in figures if f.key in found and measure_of(f.unit)}
        made = [c for c in said if c.start in explained and c.number is not None]
        measures = [f for f in figures if measure_of(f.unit) and f.key not in found]
        if made and measures:
            pools.figures = [*pools.figures, *made]
            found |= {
                f.key: d for f, d in zip(measures, derive(measures, pools), strict=True) if d is not None
            }
        return found

    def days_of(self, candidate: Candidate) -> tuple[date, ...]:
        """The full dates a value the answer writes may be: a month and day written without a year
        ("September 10") in each year of the dates the results and the people wrote."""
        days = tuple(day for day in map(day_of_key, candidate.forms) if day is not None)
        month_days = [key.removeprefix(_MONTH_DAY) for key in candidate.forms if key.startswith(_MONTH_DAY)]
        if days or candidate.shape != "date" or not month_days:
            return days
        sources = [s for shown in (self.tools, self.people) for s in shown.sources]
        years = set[int]().union(*map(_years_held, sources))
        # Past MAX_YEARS distinct years, one more adds a chance date, not a likely one: the newest are tried.
        tried = sorted(years)[-MAX_YEARS:]
        return tuple(
            day for year in tried for md in month_days if (day := day_of_key(f"date {year:04d}-{md}"))
        )


class EvidenceChecker:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        """Findings, the provenance of every value grounded, and each turn's reading statistics."""
        index, report = index_for(conversation), CheckerReport()
        state = _State(options.evidence, index.sources)
        for source in index.system:
            if source.turn < 0:
                state.absorb(source)
        for turn in conversation.turns:
            deadline.check()
            # The sources before the answer, in message order, then those after it.
            sources = index.by_turn[turn.index]
            before = [s for s in sources if turn.answer_index is None or s.message_index <= turn.answer_index]
            for source in before:
                state.read_prose(turn, source.message_index)
                state.absorb(source)
            _judge(turn, state, report, [s for s in before if s.role == "tool"])
            state.results_before.extend(turn.tool_results)
            for source in sources[len(before) :]:
                state.read_prose(turn, source.message_index)
                state.absorb(source)
            state.read_prose(turn, len(turn.messages))
        return report


_ILLUSTRATION = re.compile(r"(?<![\w./])(?:for\s+example|for\s+instance|e\.g\.)", re.I)
_HYPOTHETICAL = re.compile(r"\b(?:would|could|might|if)\b|\w(?:'|\u2019)d\b", re.I)


_NAMING_WORD = re.compile(r"[a-z0-9][a-z0-9-]*", re.I)
_PLAIN_WORDS = frozenset(
    "the your you our and for with this that are was were from per each all its has have will can new total "
    "subtotal comes come".split()
)


def _line_names(answer: str, at: int) -> set[str]:
    """The words naming something on the line before ``at``: three letters or more, or a digit."""
    words = (
        w
        for w in _NAMING_WORD.findall(line_label(answer, at).lower())
        if len(w) >= 3 or any(ch.isdigit() for ch in w)
    )
    return {w for w in words if w not in _PLAIN_WORDS}


def _of_the_same(answer: str, first: Candidate, later: Candidate) -> bool:
    """Whether an amount written again stands on a line that names something the first place's
    line names (the fare of "RE 4217" in a table, then in the list that works it out): the same
    figure, not another that happens to match."""
    return not _line_names(answer, first.start).isdisjoint(_line_names(answer, later.start))


def illustrations(answer: str) -> list[tuple[int, int]]:
    """Where the answer's own examples stand: what follows "for example", "for instance" or "e.g."
    to the end of its sentence and its line, where that sentence says what would (or could) be, or
    if: a case the answer makes up, not a report."""
    if _ILLUSTRATION.search(answer) is None:  # most answers: no sentence to split
        return []
    out: list[tuple[int, int]] = []
    for sentence in sentences(answer):
        for marker in _ILLUSTRATION.finditer(sentence.text):
            line_end = sentence.text.find("\n", marker.end())
            end = line_end if line_end >= 0 else len(sentence.text)
            line_start = sentence.text.rfind("\n", 0, marker.start()) + 1
            if _HYPOTHETICAL.search(sentence.text, line_start, end):
                out.append((sentence.start + marker.end(), sentence.start + end))
    return out


def is_format_example(answer: str, candidate: Candidate) -> bool:
    """Whether the candidate is an example of a format (the module's docstring says when), read back to
    the line's start ("e.g." ends no sentence here), at most a sentence long."""
    digits = [c for c in candidate.value if c.isdigit()]
    if candidate.shape == "identifier" and len(digits) >= 4 and set(digits) == {"0"}:
        return True
    begin = max(0, candidate.start - MAX_SENTENCE)
    lead = answer[answer.rfind("\n", begin, candidate.start) + 1 or begin : candidate.start]
    if not _FORMAT.search(lead):
        return False
    named = _FORMAT.search(lead[-24:])
    return bool(_EXAMPLE_LEAD.search(lead) or (named and not lead[named.end() - 24 :].strip(" :,#'\"`*(")))


def _judge(turn: Turn, state: _State, report: CheckerReport, read: list[Source]) -> None:
    if not turn.answer:
        return
    opts = state.opts
    skip = code_blocks_to_skip(turn) if opts.code == "match" else []
    candidates = read_answer(turn.answer, opts, skip, counted=state.counts_noun)
    # Nothing is left unread and no index is cut: the turn's other statistics stay zero.
    report.turns[turn.index] = {"candidates": len(candidates)}
    exempt_by_pattern, _ = match_patterns(list(opts.exempt_patterns), [c.value for c in candidates])
    known: _Known = {}
    unread: dict[str, Candidate] = {}  # each value is judged once, where the answer first says it
    grounded_turns: list[int] = []
    for i, candidate in enumerate(candidates):
        deadline.check()
        if candidate.value in known or candidate.value in unread:
            continue
        lookups = _lookups(candidate)
        exempt = exempt_by_pattern[i] >= 0 or any(form in state.exempt for form in lookups)
        if exempt or state.grounds.supplied(lookups):
            known[candidate.value] = ()
            continue
        where = state.locate(candidate, lookups)
        if where is None:
            unread[candidate.value] = candidate
            continue
        source, span = where
        grounded_turns.append(source.turn)
        known[candidate.value] = (source.evidence_at(span),)
        value, claim = clip(candidate.value), Span(candidate.text, candidate.start, candidate.end).to_dict()
        evidence = [known[candidate.value][0].to_dict()]
        report.provenance.append({"turn": turn.index, "value": value, "claim": claim, "evidence": evidence})

    # A value the answer also states outside its own examples is a claim there.
    examples = illustrations(turn.answer)
    outside = {c.value for c in candidates if not any(a <= c.start < b for a, b in examples)}
    unread_claims = [
        c for c in unread.values() if not is_format_example(turn.answer, c) and c.value in outside
    ]
    explained = state.explain(turn, candidates, unread_claims, known, read)
    unsupported = [c for c in unread_claims if c.value not in explained]
    for candidate in (c for c in unread_claims if c.value in explained):
        derivation = explained[candidate.value]
        if candidate.number is not None:
            state.derivations.setdefault(candidate.number, derivation)
        for day in state.days_of(candidate):
            state.days_explained.setdefault(day, derivation)
        kind, made = _KIND_WORDS[derivation.kind], derivation.source
        why = f"“{clip(candidate.text)}” is written in no tool result, but it is {kind}: {made}."
        finding = _about(turn, candidate, "computed_value", "info", why, {"derivation": derivation.to_dict()})
        report.findings.append(replace(finding, evidence=derivation.evidence))
    # An answer's grounded and explained amounts are operands for the answers after it.
    for c in candidates:
        if c.shape == "amount" and c.number is not None and c.value in known:
            state.amounts.append(Operand(c.number, f"{c.text} (stated in turn {turn.index})", known[c.value]))
    del state.amounts[:-MAX_POOL]

    # An earlier answer backs nothing, but a value it invented is one defect: flagged where it first
    # appears, noted where the model says it again.
    firsts = [next((state.invented[f] for f in c.forms if f in state.invented), None) for c in unsupported]
    for candidate, first in zip(unsupported, firsts, strict=True):
        if first is not None:
            why = (
                f"“{clip(candidate.text)}” ({candidate.shape}) appears in no tool result and no "
                f"person supplied it; the answer of turn {first} stated it first and is flagged there."
            )
            extra = {"shape": candidate.shape, "first_turn": first}
            report.findings.append(_about(turn, candidate, "repeated_unsupported_value", "info", why, extra))
    new = [c for c, first in zip(unsupported, firsts, strict=True) if first is None]
    correction = correction_for([c.value for c in new], opts.posture)
    for candidate in new:
        state.invented.update({form: turn.index for form in candidate.forms if form not in state.invented})
        why = (
            f"“{clip(candidate.text)}” ({candidate.shape}) appears in no tool result of this "
            "conversation, and no user message or system prompt supplied it"
        )
        made_up = state.made_up.values()
        if computed := next((s for s in made_up if any(f in s.forms for f in candidate.forms)), None):
            why = (
                f"“{clip(candidate.text)}” ({candidate.shape}) appears only in the result of call "
                f"{computed.call_id}, which computed it with an operand nobody said, and no user message "
                "or system prompt supplied it"
            )
        if candidate.shape in ("number", "figure") and opts.figures:
            why += (
                "; it is also no rounding, unit conversion, complement, column sum, ratio or "
                "difference of the numbers the results carry"
            )
        details: dict[str, Any] = {"shape": candidate.shape}
        if slip := _miscomputed(turn.answer, candidate):
            why += f"; the answer's own arithmetic, {slip[0]}, gives {slip[1]}"
            details["arithmetic"] = {"written": slip[0], "gives": slip[1]}
        finding = _about(turn, candidate, "unsupported_value", "flag", why + ".", details)
        report.findings.append(replace(finding, correction=correction))
    records = names_in(candidates, state.tools, turn.answer)
    specific: list[Finding] = []  # what a record or a receipt says instead of a value
    if records:
        grounded = {c.value for c in candidates if known.get(c.value) and c.value not in explained}
        specific.extend(other_record_findings(turn.index, turn.answer, candidates, grounded, records, NAME))
        specific.extend(contradicted_findings(turn.index, turn.answer, records, NAME))
        specific.extend(route_findings(turn.index, turn.answer, candidates, records, NAME))
    specific.extend(receipt_findings(turn, state.results_before, NAME))
    _one_flag_a_defect(report.findings, specific)
    if opts.prior_turn and grounded_turns and max(grounded_turns) < turn.index:
        latest, count, served = max(grounded_turns), len(grounded_turns), bool(turn.tool_results)
        back = turn.index - latest
        why = (
            f"All {count} grounded value{'s' * (count != 1)} of this answer were read in earlier turns, "
            f"the newest in turn {latest} ({back} turn{'s' * (back != 1)} back); this turn"
            + ("'s own tool results carry none of them." if served else " served no tool result.")
        )
        extra = {"values": count, "from_turn": latest, "turns_back": back, "served_results": served}
        report.findings.append(Finding(turn.index, NAME, "prior_turn_evidence", "info", why, extra=extra))


def _miscomputed(answer: str, candidate: Candidate) -> tuple[str, str] | None:
    """The arithmetic the answer writes for a figure (``derivations.written_arithmetic``) and what it
    gives, where that is another figure: the slip a reviewer corrects, named in the finding."""
    if candidate.number is None:
        return None
    for w in written_arithmetic(answer, candidate.start, candidate.end):
        digits = candidate.precision or 0
        with localcontext(EXACT):
            if abs(w.value - candidate.number) > written_tolerance(digits):
                return w.written, f"{w.value.quantize(Decimal(1).scaleb(-digits)):,}"
    return None


def _one_flag_a_defect(findings: list[Finding], specific: list[Finding]) -> None:
    """Add ``specific`` to ``findings``, less the ``unsupported_value`` flags on a span one of them flags."""
    spans = [(f.claim.start, f.claim.end) for f in specific if f.claim is not None and f.severity == "flag"]

    def restated(f: Finding) -> bool:
        on_span = f.claim is not None and any(
            f.claim.start < end and start < f.claim.end for start, end in spans
        )
        return f.code == "unsupported_value" and f.turn == specific[0].turn and on_span

    if spans:
        findings[:] = [f for f in findings if not restated(f)]
    findings.extend(specific)


def _about(
    turn: Turn, candidate: Candidate, code: str, severity: Severity, why: str, extra: dict[str, Any]
) -> Finding:
    """A finding about one value of the answer: its span, and the value clipped."""
    claim = Span(candidate.text, candidate.start, candidate.end)
    return Finding(turn.index, NAME, code, severity, why, claim, value=clip(candidate.value), extra=extra)


def _lookups(candidate: Candidate) -> list[str]:
    """The keys a candidate is looked up under: its forms, and a percent's fraction unless whole."""
    forms = list(candidate.forms)
    if candidate.number is not None and candidate.unit in PERCENT_UNITS:
        with localcontext(EXACT):  # only a percent computes: the other candidates enter no context
            fraction = candidate.number / 100
            if fraction != fraction.to_integral_value():
                forms.append(number_text(fraction))
    return forms
