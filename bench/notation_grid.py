"""Whether the checker suite grounds a value that a source and an answer write in different notations.

    .venv/bin/python bench/notation_grid.py [-v] [--json [FILE]] [--family NAME ...]

What it measures: for each family of values (amounts of money, plain numbers, percents,
dates, clock times, durations, identifiers and their digit runs), each value, each way a
source may write it (notation A), each way an answer may write it (notation B) and each
role the source may play, one made-up conversation is judged by ``run_suite``:

- the *same value* cell: the source states the value in notation A and the final answer
  states the same value in notation B. It counts as grounded when no ``flag``-severity
  finding (``unsupported_value`` or any other) has a claim overlapping the answer's value;
- the *wrong value* cell: the same source, and an answer that states a different value in
  notation B (the next day, the next hour, an amount ten more, a run with its last digit
  changed). It counts as flagged when a ``flag``-severity finding's claim overlaps it.

A value the suite does not read at all (no candidate in the answer) raises no finding: its
same-value cell counts as grounded and its wrong-value cell as not flagged. The column
"answer value not read" counts those cells, so a grounding that is only silence shows.

The roles a source can play: the user's message, the system prompt, a tool's text result,
a string of a tool's JSON result, a number of a tool's JSON result (only for families
that have a numeric form: then the number replaces notation A), and the arguments of an
earlier successful call (``search`` called with the value; its rows do not repeat it).

Every conversation is one turn: a question, one call, its result, the answer, judged by
every checker but the model-based one (``entailment``), so no run leaves the machine. The
settings rotate over several unrelated everyday ones; the scoring reads only spans and
severities, never the settings' words. Printed: per family and role, "same value grounded",
"wrong value flagged" and "answer value not read", with totals; ``-v`` lists every failing
cell (source, answer, role, what the suite found); ``--json`` dumps every cell. Needs no
database and no network; exits 0 whatever it finds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import date, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checks.suite import run_suite  # noqa: E402

# --- notations ---------------------------------------------------------------------------

# A writer gives the value in one notation, or None where the notation cannot write it.
Writer = Callable[[Any], str | None]


@dataclass(frozen=True)
class Notation:
    """One way of writing a family's values; ``name`` shows how it writes a sample value."""

    name: str
    write: Writer


@dataclass(frozen=True)
class NumberForm:
    """How a JSON result writes a value as a bare number, and the key it stands under."""

    name: str
    key: str
    write: Writer


@dataclass(frozen=True)
class Family:
    """A family of values and the notations both sides (or only an answer) may use."""

    name: str
    values: tuple[Any, ...]
    notations: tuple[Notation, ...]  # written by sources and answers alike
    wrong: Callable[[Any], Any]  # a different value of the same family
    label: Callable[[Any], str]  # how the value is shown in the output
    key: str  # the JSON key a string source or a call's argument writes it under
    question: str  # the user's question; ``{subject}`` is the setting's subject
    frame: str  # the answer; ``{subject}`` as above, ``{value}`` the value in notation B
    answer_only: tuple[Notation, ...] = ()  # an answer may write these, no source does here
    numbers: tuple[NumberForm, ...] = ()  # the family's numeric forms in a JSON result


def plain_decimal(value: Decimal) -> str:
    """A decimal as a person or a JSON encoder writes it: no exponent, no trailing zeros."""
    return f"{value.normalize():f}"


def grouped(value: Decimal, group: str, point: str, cents: bool) -> str:
    """``value`` to two places, its thousands grouped by ``group`` and its point ``point``;
    the two places only when they are not zero or ``cents`` asks for them."""
    whole, frac = f"{value:.2f}".split(".")
    if group:
        whole = f"{int(whole):,}".replace(",", group)
    return whole + point + frac if cents or frac != "00" else whole


def spaced_number(value: Decimal, group: str) -> str:
    """A plain number with its thousands grouped by ``group``, its decimals as written."""
    whole, _, frac = plain_decimal(value).partition(".")
    text = f"{int(whole):,}".replace(",", group)
    return f"{text}.{frac}" if frac else text


MONEY = Family(
    name="money",
    values=(Decimal("1250"), Decimal("48.5"), Decimal("12.99"), Decimal("310000"), Decimal("7")),
    notations=(
        Notation("$1,250.00", lambda v: "$" + grouped(v, ",", ".", True)),
        Notation("1250 USD", lambda v: grouped(v, "", ".", False) + " USD"),
        Notation("US$1,250", lambda v: "US$" + grouped(v, ",", ".", False)),
        Notation("$1250", lambda v: "$" + grouped(v, "", ".", False)),
        Notation("1,250 dollars", lambda v: grouped(v, ",", ".", False) + " dollars"),
        Notation("1 250,00 USD", lambda v: grouped(v, " ", ",", True) + " USD"),
    ),
    wrong=lambda v: v + 10,
    label=lambda v: plain_decimal(v),
    key="amount",
    question="What is the charge for {subject}?",
    frame="The charge for {subject} comes to {value}.",
    numbers=(NumberForm("JSON number", "amount", plain_decimal),),
)

NUMBERS = Family(
    name="numbers",
    values=(Decimal("41200"), Decimal("3406"), Decimal("987654"), Decimal("10482.75")),
    notations=(
        Notation("41,200", lambda v: spaced_number(v, ",")),
        Notation("41200", plain_decimal),
        Notation("41 200", lambda v: spaced_number(v, " ")),
    ),
    wrong=lambda v: v + 10,
    label=lambda v: plain_decimal(v),
    key="tally",
    question="What is the tally for {subject}?",
    frame="The tally for {subject} is {value}.",
    numbers=(NumberForm("JSON number", "tally", plain_decimal),),
)

PERCENTS = Family(
    name="percents",
    values=(Decimal("12.5"), Decimal("3"), Decimal("87"), Decimal("0.75")),
    notations=(
        Notation("12.5%", lambda v: plain_decimal(v) + "%"),
        Notation("12.5 %", lambda v: plain_decimal(v) + " %"),
        Notation("12.5 percent", lambda v: plain_decimal(v) + " percent"),
        Notation("12.5 per cent", lambda v: plain_decimal(v) + " per cent"),
    ),
    wrong=lambda v: v + 1,
    label=lambda v: plain_decimal(v) + "%",
    key="share",
    question="What share is recorded for {subject}?",
    frame="The share recorded for {subject} is {value}.",
    numbers=(
        NumberForm("JSON number under share_percent", "share_percent", plain_decimal),
        NumberForm("JSON fraction under share_rate", "share_rate", lambda v: plain_decimal(v / 100)),
    ),
)

MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def month_day(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.day}"


DATES = Family(
    name="dates",
    values=(date(2024, 5, 19), date(2023, 12, 3), date(2025, 1, 31), date(2024, 2, 29), date(2026, 8, 7)),
    notations=(
        Notation("2024-05-19", lambda d: d.isoformat()),
        Notation("5/19/2024", lambda d: f"{d.month}/{d.day}/{d.year}"),
        Notation("May 19, 2024", lambda d: f"{month_day(d)}, {d.year}"),
        Notation("19 May 2024", lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}"),
        Notation(
            "Sunday, May 19th, 2024",
            lambda d: f"{WEEKDAYS[d.weekday()]}, {MONTHS[d.month - 1]} {ordinal(d.day)}, {d.year}",
        ),
        Notation("May 19", month_day),
    ),
    wrong=lambda d: d + timedelta(days=1),
    label=lambda d: d.isoformat(),
    key="date",
    question="When is {subject}?",
    frame="The date set for {subject} is {value}.",
)


def twelve_hour(t: time, mark: str, minutes: bool) -> str:
    """``t`` on the 12-hour clock with ``mark`` ("AM"/"PM" style) after it; the minutes
    written when ``minutes`` asks or when they are not zero."""
    hour = t.hour % 12 or 12
    half = mark.format(half="PM" if t.hour >= 12 else "AM", low="pm" if t.hour >= 12 else "am")
    clock = f"{hour}:{t.minute:02d}" if minutes or t.minute else f"{hour}"
    return clock + half


TIMES = Family(
    name="times",
    values=(time(22, 0), time(7, 30), time(13, 45), time(0, 15)),
    notations=(
        Notation("22:00", lambda t: f"{t.hour:02d}:{t.minute:02d}"),
        Notation("22:00:00", lambda t: f"{t.hour:02d}:{t.minute:02d}:00"),
        Notation("10 PM", lambda t: twelve_hour(t, " {half}", False)),
        Notation("10:00 p.m.", lambda t: twelve_hour(t, " {low[0]}.m.", True)),
        Notation("10pm", lambda t: twelve_hour(t, "{low}", False)),
    ),
    wrong=lambda t: t.replace(hour=(t.hour + 1) % 24),
    label=lambda t: t.strftime("%H:%M"),
    key="time",
    question="What time is {subject}?",
    frame="The time set for {subject} is {value}.",
)


def counted(number: int | Decimal, word: str, short: bool = False) -> str:
    """ "1 hour", "30 minutes"; with ``short`` the word's letter glued ("1h", "30m")."""
    if short:
        return f"{number}{word[0]}"
    return f"{number} {word}" + ("" if number == 1 else "s")


def hours_and_minutes(minutes: int, short: bool) -> str:
    hours, rest = divmod(minutes, 60)
    parts = [counted(hours, "hour", short)] if hours else []
    if rest or not hours:
        parts.append(counted(rest, "minute", short))
    return " ".join(parts)


def decimal_hours(minutes: int) -> Decimal:
    return Decimal(minutes) / 60


DURATIONS = Family(
    name="durations",
    values=(90, 45, 150, 240),
    notations=(
        Notation("90 minutes", lambda m: counted(m, "minute")),
        Notation("90 min", lambda m: f"{m} min"),
        Notation("1 hour 30 minutes", lambda m: hours_and_minutes(m, False)),
        Notation("1.5 hours", lambda m: counted(Decimal(plain_decimal(decimal_hours(m))), "hour")),
        Notation("1h 30m", lambda m: hours_and_minutes(m, True)),
    ),
    wrong=lambda m: m + 15,
    label=lambda m: f"{m} min",
    key="duration",
    question="How long does {subject} take?",
    frame="The time taken by {subject} is {value}.",
    numbers=(
        NumberForm("JSON number under duration_minutes", "duration_minutes", str),
        NumberForm(
            "JSON number under duration_hours", "duration_hours", lambda m: plain_decimal(decimal_hours(m))
        ),
    ),
)

_LAST_RUN = re.compile(r"\d{4,}(?!.*\d{4,})")


def last_run(ident: str) -> re.Match[str]:
    """Where the identifier's last run of four digits or more stands."""
    found = _LAST_RUN.search(ident)
    if found is None:
        raise ValueError(f"{ident!r} has no run of four digits")
    return found


def digit_run(ident: str) -> str:
    return last_run(ident).group()


def another_digit(ident: str) -> str:
    """The identifier with the last digit of its run changed."""
    last = last_run(ident).end() - 1
    return ident[:last] + str((int(ident[last]) + 1) % 10) + ident[last + 1 :]


IDENTIFIERS = Family(
    name="identifiers",
    values=("ORD-20931-XK", "#A1729", "SMP_77412", "KX9-40417"),
    notations=(
        Notation("as issued", lambda s: s),
        Notation("lower case", lambda s: s.lower()),
        Notation("with/without #", lambda s: s[1:] if s.startswith("#") else "#" + s),
    ),
    answer_only=(
        Notation("digit run (20931)", digit_run),
        Notation("#digit run (#20931)", lambda s: "#" + digit_run(s)),
    ),
    wrong=another_digit,
    label=lambda s: s,
    key="reference",
    question="What is the reference for {subject}?",
    frame="The reference for {subject} is {value}.",
)

FAMILIES = (MONEY, NUMBERS, PERCENTS, DATES, TIMES, DURATIONS, IDENTIFIERS)

# --- made-up conversations ----------------------------------------------------------------

ROLES = ("user", "system", "tool text", "tool JSON string", "tool JSON number", "call arguments")


@dataclass(frozen=True)
class Setting:
    """An everyday subject a conversation is about, and the rows a search of it returns."""

    subject: str
    rows: tuple[str, str]


# No digit, no month or weekday name: nothing in a setting is a value.
SETTINGS = (
    Setting("the reading-room booking at the library desk", ("north alcove", "quiet gallery")),
    Setting("the reagent shelf audit in the lab inventory", ("cold cabinet", "solvent rack")),
    Setting("the coastal station report of the weather service", ("harbour mast", "cliff gauge")),
    Setting("the allotment renewal at the community garden", ("herb bed", "bean row")),
    Setting("the telescope night at the observatory", ("east dome", "roof deck")),
    Setting("the hive inspection at the apiary", ("meadow hive", "orchard hive")),
    Setting("the kiln firing at the pottery studio", ("glaze kiln", "raku kiln")),
)
NEUTRAL_PROMPT = "Answer from the records you look up."


def conversation(
    role: str, setting: Setting, family: Family, source: str, key: str, answer: str, external_id: str
) -> dict[str, Any]:
    """One turn in which ``role`` states ``source`` and the final answer is ``answer``.

    ``key`` is the JSON key of a JSON source or of the call's argument; for the role
    ``tool JSON number``, ``source`` is the number's JSON text."""
    subject = setting.subject
    question = family.question.format(subject=subject)
    user = f"{question} I have it noted as {source}." if role == "user" else question
    tool, arguments = "lookup", "{}"
    if role == "tool text":
        result = f"Record for {subject}: {source}"
    elif role == "tool JSON string":
        result = json.dumps({key: source, "status": "on file"}, ensure_ascii=False)
    elif role == "tool JSON number":
        result = '{"' + key + '": ' + source + ', "status": "on file"}'
    elif role == "call arguments":
        tool, arguments = "search", json.dumps({key: source}, ensure_ascii=False)
        rows = [{"name": name, "status": "listed"} for name in setting.rows]
        result = json.dumps({"rows": rows, "status": "ok"})
    else:
        result = json.dumps({"status": "on file"})
    call = {"id": "call-1", "type": "function", "function": {"name": tool, "arguments": arguments}}
    return {
        "external_id": external_id,
        "system": f"Reference for {subject}: {source}." if role == "system" else NEUTRAL_PROMPT,
        "messages": [
            {"role": "user", "content": user},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call-1", "content": result},
            {"role": "assistant", "content": answer},
        ],
    }


# --- the grid -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CellPlan:
    """One conversation to judge: which value, which notations, which role, which side."""

    family: Family
    value: Any
    role: str
    source_notation: str
    answer_notation: Notation
    source: str  # what the source writes (for a JSON number: its JSON text)
    key: str
    wrong: bool  # the answer states another value


@dataclass
class Cell:
    """A judged cell; ``passed`` is "grounded" for a same-value cell, "flagged" for a wrong one."""

    family: str
    value: str
    role: str
    source_notation: str
    answer_notation: str
    expect: str  # "same" or "wrong"
    source: str
    answer: str
    claim: str  # the value as the answer writes it
    passed: bool
    read: bool  # whether the suite read the answer's value as a value at all
    found: str  # what the suite said of the answer's value
    findings: list[dict[str, Any]] = field(default_factory=list)


def plans(family: Family) -> Iterator[CellPlan]:
    """Every cell of one family: values × source notations × answer notations × roles, each
    once with the same value and once with another."""
    answers = family.notations + family.answer_only
    for value in family.values:
        other = family.wrong(value)
        for role in ROLES:
            if role == "tool JSON number":
                sources = [(form.name, form.write(value), form.key) for form in family.numbers]
            else:
                sources = [(n.name, n.write(value), family.key) for n in family.notations]
            for name, source, key in sources:
                if source is None:
                    continue
                for notation in answers:
                    for wrong in (False, True):
                        if notation.write(other if wrong else value) is None:
                            continue
                        yield CellPlan(family, value, role, name, notation, source, key, wrong)


def judge(plan: CellPlan, number: int) -> Cell:
    """Build the plan's conversation, run the suite, and read what it says of the value."""
    family = plan.family
    stated = plan.answer_notation.write(family.wrong(plan.value) if plan.wrong else plan.value)
    if stated is None:  # ``plans`` leaves out what a notation cannot write
        raise ValueError(f"{plan.answer_notation.name} cannot write {plan.value!r}")
    setting = SETTINGS[number % len(SETTINGS)]
    before, after = family.frame.split("{value}")
    head = before.format(subject=setting.subject)
    answer = head + stated + after.format(subject=setting.subject)
    start, end = len(head), len(head) + len(stated)
    data = conversation(
        plan.role, setting, family, plan.source, plan.key, answer, f"grid-{family.name}-{number}"
    )
    report = run_suite(data, skip={"entailment"})
    on_value = [f for f in report["findings"] if _overlaps(f.get("claim"), start, end)]
    flags = [f for f in on_value if f["severity"] == "flag"]
    passed = bool(flags) if plan.wrong else not flags
    return Cell(
        family=family.name,
        value=family.label(plan.value),
        role=plan.role,
        source_notation=plan.source_notation,
        answer_notation=plan.answer_notation.name,
        expect="wrong" if plan.wrong else "same",
        source=plan.source,
        answer=answer,
        claim=stated,
        passed=passed,
        read=_read(report),
        found=_found(report, on_value, start, end),
        findings=[_short(f) for f in on_value],
    )


def _overlaps(claim: dict[str, Any] | None, start: int, end: int) -> bool:
    return claim is not None and claim["start"] < end and claim["end"] > start


def _short(finding: dict[str, Any]) -> dict[str, Any]:
    claim = finding.get("claim") or {}
    return {"code": finding["code"], "severity": finding["severity"], "claim": claim.get("text")}


def _found(report: dict[str, Any], on_value: list[dict[str, Any]], start: int, end: int) -> str:
    """In a few words: what the suite said of the answer's value, or why it said nothing."""
    if on_value:
        return "; ".join(f"{f['code']} ({f['severity']}) on “{f['claim']['text']}”" for f in on_value)
    grounded = [p for p in report["provenance"] if _overlaps(p.get("claim"), start, end)]
    if grounded:
        places = [e.get("path") or "text" for p in grounded for e in p["evidence"]]
        return "grounded in a tool result at " + ", ".join(places)
    if not _read(report):
        return "not read as a value (no candidate)"
    return "no finding: supplied by the user or the system prompt"


def _read(report: dict[str, Any]) -> bool:
    """Whether the answer held a candidate; the answer writes no value but the cell's."""
    return sum(turn["candidates"] for turn in report["turns"]) > 0


def run_grid(families: tuple[Family, ...]) -> list[Cell]:
    cells: list[Cell] = []
    for family in families:
        for plan in plans(family):
            cells.append(judge(plan, len(cells)))
    return cells


# --- the report ---------------------------------------------------------------------------


def ratio(passed: int, total: int) -> str:
    if total == 0:
        return "-"
    return f"{passed}/{total} ({100 * passed / total:.0f}%)"


def tally(cells: list[Cell]) -> tuple[str, str, str]:
    """Same values grounded, wrong values flagged, and cells whose answer value went unread."""
    same = [c for c in cells if c.expect == "same"]
    wrong = [c for c in cells if c.expect == "wrong"]
    return (
        ratio(sum(c.passed for c in same), len(same)),
        ratio(sum(c.passed for c in wrong), len(wrong)),
        ratio(sum(not c.read for c in cells), len(cells)),
    )


def table(cells: list[Cell], families: tuple[Family, ...]) -> str:
    rows = [("family", "source role", "same value grounded", "wrong value flagged", "answer value not read")]
    for family in families:
        mine = [c for c in cells if c.family == family.name]
        for role in ROLES:
            here = [c for c in mine if c.role == role]
            if here:
                rows.append((family.name, role, *tally(here)))
        rows.append((family.name, "all roles", *tally(mine)))
    for role in ROLES:
        here = [c for c in cells if c.role == role]
        if here:
            rows.append(("all", role, *tally(here)))
    rows.append(("all", "all roles", *tally(cells)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def failures(cells: list[Cell]) -> str:
    lines = []
    for cell in cells:
        if cell.passed:
            continue
        outcome = "not grounded" if cell.expect == "same" else "not flagged"
        lines.append(
            f"[{cell.family} | {cell.role} | {cell.expect} value {outcome}] "
            f"{cell.source_notation} -> {cell.answer_notation}\n"
            f"    source: {cell.source}\n    answer: {cell.answer}\n    found:  {cell.found}"
        )
    return "\n".join(lines) if lines else "(none)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failing cell")
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="dump every cell as JSON (to FILE, or stdout)"
    )
    parser.add_argument(
        "--family",
        action="append",
        choices=[f.name for f in FAMILIES],
        help="only this family (repeatable)",
    )
    args = parser.parse_args(argv)
    families = tuple(f for f in FAMILIES if not args.family or f.name in args.family)
    cells = run_grid(families)
    if args.json:
        dumped = json.dumps([asdict(c) for c in cells], indent=1, ensure_ascii=False)
        if args.json == "-":
            print(dumped)
            return 0
        Path(args.json).write_text(dumped + "\n")
    print(table(cells, families))
    if args.verbose:
        print("\nFailing cells:\n" + failures(cells))
    print(f"\n{len(cells)} cells; reproduce: .venv/bin/python bench/notation_grid.py -v")
    return 0


if __name__ == "__main__":
    sys.exit(main())
