"""Figures an answer computes: totals, differences, products and shifted dates.

Real answers compute: a refund is the price paid less the new price, a trip's total is the
sum of its legs, a fare for three is three times one fare, "the day after" a date read is a
new date. Such a figure is in no tool result, yet it is no invention. This module asks, for
an amount (or an ISO date) the evidence checker found nowhere, whether one short derivation
over values the conversation holds gives it. It tries, in this order, and nothing else:

1. **written arithmetic**: the answer writes the sum itself (``$105 + $102 = $207``, or
   ``$199 ($100 + $99)``); kind ``sum``, ``difference`` or ``product`` by its operators.
2. **a listed total** (kind ``sum``): the figure is labelled a total (total, sum, combined,
   altogether, overall, in all) and equals the sum of *all* the amounts the answer states
   since the last break: the start of the answer, a blank line, a numbered item or heading,
   or the previous total. Never a part of that run, so a total that leaves out one leg is
   not explained.
3. **a total less what was listed after it** (kind ``total-less``): the figure is said to be
   what remains (remaining, refund, balance, difference, left, due, additional, …) and equals
   an earlier total of the answer less every amount stated between the two.
4. **a difference** (kind ``difference``): the figure is said to be what remains, and equals
   ``a − b`` where one of the two is an amount this answer states and the other is an amount
   this answer states, an earlier answer stated (grounded or explained), the user wrote, or
   this turn's tool results carry under a money key (price, amount, total, cost, fee, …).
5. **a product** (kind ``product``): the figure equals an amount of the pools above (or a sum
   over the records the answer names) times a count from 2 to 9 that the user wrote or that a
   list in the results holds (its length), and the sentence says that count.
6. **a date shift** (kind ``date-shift``): an ISO date equals a date the conversation holds
   (a result, the user, the prompt) moved by a number of days the user stated ("the day
   after", "two days later", "a week earlier").
7. **a day mark** (kind ``day-mark``): a date equals a date a result or the call it answers
   names, moved by the next-day mark of a time the result writes (``"00:00:00+1"`` is on the
   day after): the date of that time.

And what the sentence says the figure is must fit: a figure said to be for N people ("for 3
passengers", "for all three travellers") is explained only by a derivation that multiplies
by N. Every operand is an amount the answer or the conversation holds, never a number found
in passing; every search is bounded (``MAX_*``), which can only leave more figures flagged.
A figure is weighed against the amounts the answer states near it, at most ``MAX_POOL``
before it and as many after, so that each figure costs the same however many the answer
states: an answer of thousands of amounts is read in time that grows with its length.
Amounts are ``Decimal`` and their arithmetic exact (``decimals``), whatever their size.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from .decimals import ZERO, exactly, is_number
from .evidence_index import Source, join_path, json_leaves
from .money import AMOUNT_TEXT, MARK_AFTER_TEXT, MARK_BEFORE_TEXT, read_amount
from .text import MAX_SENTENCE, NUMBER_WORDS, Sentence, parse_number, sentence_at
from .types import Evidence
from .values import read_dates, read_times

MAX_RUN = 8
MAX_POOL = 96
MAX_COUNT = 9
TOLERANCE = Decimal("0.005")  # amounts are compared to the cent

_MONEY_KEY = re.compile(
    r"price|amount|total|cost|fee|fare|balance|paid|payment|refund|charge|credit|subtotal|tax|value", re.I
)
_TOTAL_WORDS = re.compile(
    r"\b(?:total(?:s|ing|ling|led)?|sum|combined|altogether|overall|in all|grand)\b", re.I
)
_REMAINDER_WORDS = re.compile(
    r"\b(?:remain(?:s|ing|der)?|refund(?:s|ed)?|balance|difference|left|due|owe[ds]?|outstanding|additional|extra|"
    r"rest|back|less|more|save[ds]?|savings?|cheaper|reduc(?:ed|tion)|discount|credit(?:ed)?|charged?)\b",
    re.I,
)
_BREAK = re.compile(r"\n[ \t]*\n|\n[ \t]*(?:#{1,6}\s|\d+[.)]\s)")
# The terms of written arithmetic are amounts in any notation (``money``), or bare numbers.
_OPERATOR_SIGN = r"[-+\u2212\u00d7*]|(?<![a-z])x(?![a-z])"
_OPERATOR = rf"\s*(?:{_OPERATOR_SIGN})\s*"
_EXPRESSION = rf"{AMOUNT_TEXT}(?:{_OPERATOR}{AMOUNT_TEXT})+"
_EXPRESSION_BEFORE = re.compile(rf"({_EXPRESSION})\s*=\s*{MARK_BEFORE_TEXT}?\s*$")
_EXPRESSION_AFTER = re.compile(rf"{MARK_AFTER_TEXT}?\s*\(\s*({_EXPRESSION})\s*\)")
_NEAR = 16
_TERM = re.compile(rf"({AMOUNT_TEXT})(?:\s*({_OPERATOR_SIGN})\s*)?")
_PEOPLE = r"(?:passengers?|people|persons?|travell?ers?|guests?|adults?|tickets?|seats?)"
_COUNT_WORD = "|".join(sorted((w for w in NUMBER_WORDS if " " not in w), key=len, reverse=True))
_FOR_PEOPLE = re.compile(rf"\bfor\s+(?:all\s+|the\s+)?(\d+|{_COUNT_WORD})\s+(?:of\s+you\s+|{_PEOPLE})", re.I)
_COUNT_IN_USER = re.compile(rf"\b(\d+|{_COUNT_WORD})\b", re.I)
_SHIFT = re.compile(
    rf"\b(?:(?P<n>\d+|{_COUNT_WORD}|a)\s+(?P<unit>days?|weeks?)\s+(?P<dir>later|after|earlier|before|sooner|prior)"
    r"|(?:the\s+)?(?P<next>next|following)\s+day|(?:the\s+)?day\s+(?P<after>after|before)|(?P<tomorrow>tomorrow))\b",
    re.I,
)


@dataclass(frozen=True)
class Operand:
    """A value a derivation may use: where it stands and what grounds it."""

    value: Decimal
    label: str  # how the finding names it: "$105 (stated)", "payment_history[0].amount"
    evidence: tuple[Evidence, ...] = ()
    start: int | None = None  # where this answer states it
    end: int | None = None


@dataclass(frozen=True)
class Stated:
    """An amount the answer writes, in answer order."""

    value: Decimal
    start: int
    end: int
    text: str
    known: bool  # grounded in the conversation, or explained here
    evidence: tuple[Evidence, ...] = ()
    total: bool = False  # labelled a total on its line (``labelled_total``)

    def operand(self) -> Operand:
        return Operand(self.value, f"{self.text} (stated)", self.evidence, self.start, self.end)


@dataclass(frozen=True)
class Computed:
    kind: str
    source: str
    evidence: tuple[Evidence, ...]
    operands: tuple[Operand, ...]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "from": self.source}
        spans = [
            {"text": o.label, "value": _show(o.value), "start": o.start, "end": o.end} for o in self.operands
        ]
        if spans:
            out["operands"] = spans
        return out


@dataclass(frozen=True)
class NamedRecord:
    """A JSON object of a result that an identifier names (a flight, an order), with its amounts."""

    name: str
    amounts: dict[str, Operand]  # path inside the record -> the amount there


@dataclass
class Context:
    """What the conversation holds for one answer's derivations, besides the answer itself."""

    read: list[Operand] = field(default_factory=list)  # money leaves of this turn's results
    earlier: list[Operand] = field(default_factory=list)  # earlier answers' known amounts, the user's
    counts: list[Operand] = field(default_factory=list)  # counts the user wrote or a list holds
    records: dict[str, NamedRecord] = field(default_factory=dict)  # identifier -> the record it names
    names: list[tuple[int, str]] = field(default_factory=list)  # where the answer names a record, in order

    def named_between(self, start: int, end: int) -> list[str]:
        """The records the answer names from ``start`` up to ``end``, in answer order."""
        first = bisect_left(self.names, start, key=lambda name: name[0])
        last = bisect_left(self.names, end, key=lambda name: name[0])
        return [name for _, name in self.names[first:last]]


def _show(value: Decimal) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _same(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) <= TOLERANCE


# --- the pools ---------------------------------------------------------------------------


def money_leaves(source: Source, limit: int = MAX_POOL) -> list[Operand]:
    """The numbers a JSON result carries under a money key, each with its path."""
    out: list[Operand] = []
    cached = source.cache.get("money")
    if cached is not None:
        return cached
    value = source.parsed() if source.looks_json else None

    def walk(node: Any, path: str, money: bool, depth: int) -> None:
        if len(out) >= limit or depth > 12:
            return
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, join_path(path, str(key)), money or bool(_MONEY_KEY.search(str(key))), depth + 1)
        elif isinstance(node, list):
            for i, item in enumerate(node[:200]):
                walk(item, join_path(path, i), money, depth + 1)
        elif money and is_number(node):
            out.append(Operand(Decimal(node), path, (Evidence(call_id=source.call_id, path=path),)))

    walk(value, "", False, 0)
    source.cache["money"] = out
    return out


def list_counts(source: Source) -> list[Operand]:
    """The lengths (2 to 9) of the lists of records a JSON result holds: counts the data gave."""
    cached = source.cache.get("list_counts")
    if cached is not None:
        return cached
    out: list[Operand] = []
    source.cache["list_counts"] = out
    value = source.parsed() if source.looks_json else None

    def walk(node: Any, path: str, depth: int) -> None:
        if depth > 8 or len(out) >= 16:
            return
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, join_path(path, str(key)), depth + 1)
        elif isinstance(node, list):
            if 2 <= len(node) <= MAX_COUNT and all(isinstance(row, dict) for row in node):
                evidence = (Evidence(call_id=source.call_id, path=path),)
                out.append(
                    Operand(Decimal(len(node)), f"the {len(node)} rows of {path or 'the result'}", evidence)
                )
            for i, item in enumerate(node[:50]):
                walk(item, join_path(path, i), depth + 1)

    walk(value, "", 0)
    return out


def named_records(source: Source, names: set[str]) -> list[NamedRecord]:
    """The objects of a JSON result that hold one of ``names`` as a value of their own, each
    with the amounts it carries under money keys (nested objects included)."""
    value = source.parsed() if source.looks_json else None
    out: list[NamedRecord] = []

    def amounts(node: dict[str, Any], path: str, inner: str, found: dict[str, Operand], depth: int) -> None:
        for key, item in node.items():
            here, rel = join_path(path, str(key)), f"{inner}.{key}" if inner else str(key)
            if isinstance(item, dict) and depth < 3:
                amounts(item, here, rel, found, depth + 1)
            elif is_number(item) and _MONEY_KEY.search(rel):
                evidence = (Evidence(call_id=source.call_id, path=here),)
                found[rel] = Operand(Decimal(item), here, evidence)

    def walk(node: Any, path: str, depth: int) -> None:
        if depth > 12 or len(out) >= 256:
            return
        if isinstance(node, dict):
            for item in node.values():
                if isinstance(item, str) and item.lower() in names:
                    found: dict[str, Operand] = {}
                    amounts(node, path, "", found, 0)
                    if found:
                        named = {k: replace(o, label=f"{k} of {item}") for k, o in found.items()}
                        out.append(NamedRecord(item.lower(), named))
                    break
            for key, item in node.items():
                if isinstance(item, (dict, list)):
                    walk(item, join_path(path, str(key)), depth + 1)
        elif isinstance(node, list):
            for i, item in enumerate(node[:500]):
                walk(item, join_path(path, i), depth + 1)

    if names:
        walk(value, "", 0)
    return out


def user_counts(text: str) -> list[Operand]:
    """Whole numbers from 2 to 9 the user wrote, in figures or words."""
    out = []
    for match in _COUNT_IN_USER.finditer(text):
        number = parse_number(match.group(1))
        if number is not None and 2 <= number <= MAX_COUNT:
            out.append(Operand(Decimal(number), f"{match.group(1)} (the user's words)"))
    return out


# --- the derivations ---------------------------------------------------------------------


@exactly
def explain_amount(
    index: int, stated: list[Stated], answer: str, sentences: list[Sentence], context: Context
) -> Computed | None:
    """The first documented derivation that gives ``stated[index]``, or None."""
    # The amounts near the figure (the module's docstring), and the figure's place among them.
    low = max(0, index - MAX_POOL)
    stated, index = stated[low : index + MAX_POOL + 1], index - low
    figure = stated[index]
    sentence = sentence_at(sentences, figure.start)
    said = sentence.text if sentence else ""
    label = _label(answer, figure.start) + " " + said
    people = _people_count(said)

    found = _written(figure, answer)
    if found is not None:
        return found if people is None or found.kind == "product" else None
    if people is not None:
        return _product(index, stated, answer, sentence, context, people)
    if _TOTAL_WORDS.search(label):
        found = _listed_total(index, stated, answer) or _named_total(index, stated, answer, sentence, context)
        if found is not None:
            return found
    if _REMAINDER_WORDS.search(label):
        found = _total_less(index, stated, answer) or _difference(index, stated, context)
        if found is not None:
            return found
    return _product(index, stated, answer, sentence, context, None)


def _people_count(sentence: str) -> int | None:
    match = _FOR_PEOPLE.search(sentence)
    if match is None:
        return None
    number = parse_number(match.group(1))
    return number if number is not None and number >= 2 else None


def _evaluate(expression: str) -> tuple[Decimal, str] | None:
    """The value of a written ``a + b − c × d`` and its kind, or None when it is not one."""
    terms: list[Decimal] = []
    signs: list[int] = []
    sign, product = 1, None
    kinds = set()
    at = 0
    while at < len(expression):
        match = _TERM.match(expression, at)
        amount = read_amount(match.group(1)) if match is not None else None
        if match is None or amount is None or match.end() == at:
            return None
        at = match.end()
        product = amount.magnitude if product is None else product * amount.magnitude
        op = (match.group(2) or "").strip()
        if not op:
            break
        if op in ("\u00d7", "*", "x"):
            kinds.add("product")
            continue
        terms.append(product)
        signs.append(sign)
        product = None
        sign = 1 if op == "+" else -1
        kinds.add("sum" if op == "+" else "difference")
    if product is None or at < len(expression.rstrip()):
        return None
    terms.append(product)
    signs.append(sign)
    kind = "difference" if "difference" in kinds else ("product" if "product" in kinds else "sum")
    return sum((s * t for s, t in zip(signs, terms, strict=True)), ZERO), kind


def _written(figure: Stated, answer: str) -> Computed | None:
    """The answer's own arithmetic, just before the figure (``… = $X``) or in brackets after."""
    # The expressions are searched for only where their "=" or "(" stands near the figure: a
    # currency mark between takes a few characters, and most figures have neither.
    before = after = None
    if "=" in answer[max(0, figure.start - _NEAR) : figure.start]:
        before = _EXPRESSION_BEFORE.search(answer, max(0, figure.start - 200), figure.start)
    if "(" in answer[figure.end : figure.end + _NEAR]:
        after = _EXPRESSION_AFTER.match(answer, figure.end)
    for match in (before, after):
        if match is None:
            continue
        evaluated = _evaluate(match.group(1))
        if evaluated is not None and _same(evaluated[0], figure.value):
            text = " ".join(match.group(1).split())
            return Computed(evaluated[1], f"{text} as the answer writes it", (), ())
    return None


def _label(answer: str, start: int) -> str:
    """The words before an amount on its line: "Total Price:" for "- Total Price: $207".

    Read no further back than a sentence is (``text.MAX_SENTENCE``), so that an answer of one
    long line costs each of its amounts the same, not the whole line before it.
    """
    begin = max(0, start - MAX_SENTENCE)
    return answer[answer.rfind("\n", begin, start) + 1 or begin : start]


def labelled_total(answer: str, start: int) -> bool:
    """Whether the amount at ``start`` is labelled a total on its line; read once an amount."""
    return bool(_TOTAL_WORDS.search(_label(answer, start)))


def _run_starts(index: int, stated: list[Stated], answer: str) -> list[int]:
    """Where a run of amounts that the total at ``index`` may sum can begin, nearest first: at
    the start of the answer, after a break (a blank line, a numbered item, a heading), or
    after the previous total; never after a break-free part of a list."""
    starts = []
    for start in range(index - 1, max(-1, index - 1 - MAX_RUN), -1):
        if start == 0:
            starts.append(0)
            break
        previous = stated[start - 1]
        if previous.total:
            starts.append(start)
            break
        if _BREAK.search(answer, previous.end, stated[start].start):
            starts.append(start)
    return starts


def _listed_total(index: int, stated: list[Stated], answer: str) -> Computed | None:
    figure = stated[index]
    for start in _run_starts(index, stated, answer):
        run = stated[start:index]
        if (
            len(run) >= 2
            and all(s.known for s in run)
            and _same(sum((s.value for s in run), ZERO), figure.value)
        ):
            return _made("sum", " + ".join(s.text for s in run), [s.operand() for s in run])
    # A total of the totals listed before it ("certificates $1,000, gift cards $327: $1,327").
    totals = [s for s in stated[:index] if s.known and s.total]
    for k in range(2, min(len(totals), MAX_RUN) + 1):
        run = totals[-k:]
        if _same(sum((s.value for s in run), ZERO), figure.value):
            return _made("sum", " + ".join(s.text for s in run), [s.operand() for s in run])
    return None


def _total_less(index: int, stated: list[Stated], answer: str) -> Computed | None:
    """An earlier total less every amount stated between it and the figure."""
    figure = stated[index]
    for t in range(index - 1, max(-1, index - 1 - MAX_RUN), -1):
        total = stated[t]
        if not total.known or not total.total:
            continue
        between = stated[t + 1 : index]
        if between and all(s.known for s in between):
            if _same(total.value - sum((s.value for s in between), ZERO), figure.value):
                less = " − ".join(s.text for s in between)
                return _made(
                    "total-less", f"{total.text} − {less}", [total.operand()] + [s.operand() for s in between]
                )
        return None
    return None


def _difference(index: int, stated: list[Stated], context: Context) -> Computed | None:
    """``a − b`` of two amounts the conversation holds; two amounts only read must be read from
    one result (one record's price paid and refund), never paired across results by chance."""
    figure = stated[index]
    pool = [s.operand() for i, s in enumerate(stated) if s.known and i != index][:MAX_POOL]
    pool += context.earlier[-MAX_POOL:] + context.read[:MAX_POOL]
    said = len(pool) - len(context.read[:MAX_POOL])  # the first ``said`` were stated, not only read
    for i, a in enumerate(pool):
        for j in range(i + 1, len(pool)):
            b = pool[j]
            if (
                i >= said
                and a.evidence[:1]
                and b.evidence[:1]
                and a.evidence[0].call_id != b.evidence[0].call_id
            ):
                continue
            big, small = (a, b) if a.value >= b.value else (b, a)
            if _same(big.value - small.value, figure.value) and big.value != small.value:
                return _made("difference", f"{big.label} − {small.label}", [big, small])
    return None


def _boundaries(index: int, stated: list[Stated], answer: str) -> list[int]:
    """Offsets where the list that a total at ``index`` closes may begin, nearest first."""
    figure = stated[index]
    # Breaks are looked for no further back than the amounts weighed (``explain_amount``).
    out = [m.end() for m in _BREAK.finditer(answer, max(0, stated[0].start - MAX_SENTENCE), figure.start)]
    out += [s.end for s in stated[:index] if s.total]
    nearest = sorted({0, *out}, reverse=True)
    return nearest[:MAX_RUN]


def _named_sums(
    index: int, stated: list[Stated], answer: str, sentence: Sentence | None, context: Context
) -> Iterator[tuple[Decimal, list[Operand]]]:
    """Sums over the records the answer names since a break (the legs it lists): one amount,
    under the same key, of every one of them; nearest break first."""
    figure = stated[index]
    sentence_end = sentence.end if sentence else figure.end
    for start in _boundaries(index, stated, answer):
        named = list(dict.fromkeys(context.named_between(start, sentence_end)))
        records = [context.records[n] for n in named if n in context.records]
        if len(records) < 2 or len(records) > MAX_RUN:
            continue
        keys = set(records[0].amounts).intersection(*(r.amounts for r in records[1:]))
        for key in sorted(keys):
            operands = [r.amounts[key] for r in records]
            yield sum((o.value for o in operands), ZERO), operands


def _named_total(
    index: int, stated: list[Stated], answer: str, sentence: Sentence | None, context: Context
) -> Computed | None:
    """A total over the records the answer names (``_named_sums``)."""
    for value, operands in _named_sums(index, stated, answer, sentence, context):
        if _same(value, stated[index].value):
            return _made("sum", " + ".join(o.label for o in operands), operands)
    return None


def _product(
    index: int,
    stated: list[Stated],
    answer: str,
    sentence: Sentence | None,
    context: Context,
    people: int | None,
) -> Computed | None:
    """An amount times a count the user or the data gave, which the sentence says; the amount
    may be one the answer or the conversation holds, or a sum over the records it names."""
    figure = stated[index]
    said_in = sentence.text if sentence else ""
    counts = [c for c in context.counts if people is None or int(c.value) == people]
    said = {int(c.value) for c in counts if _says(said_in, int(c.value))}
    if not said:
        return None
    values = [s.operand() for s in stated if s.known and s is not figure] + context.earlier + context.read
    for total, operands in _named_sums(index, stated, answer, sentence, context):
        label = "(" + " + ".join(o.label for o in operands) + ")"
        values.append(Operand(total, label, tuple(e for o in operands for e in o.evidence)))
    for count in counts:
        if int(count.value) not in said:
            continue
        for value in values[: 3 * MAX_POOL]:
            if _same(value.value * count.value, figure.value):
                return _made("product", f"{value.label} × {count.label}", [value, count])
    return None


def _says(sentence: str, number: int) -> bool:
    words = [w for w, n in NUMBER_WORDS.items() if n == number and " " not in w]
    return bool(re.search(rf"\b(?:{number}|{'|'.join(words)})\b", sentence, re.I))


def _made(kind: str, source: str, operands: list[Operand]) -> Computed:
    evidence = tuple(e for o in operands for e in o.evidence)
    return Computed(kind, source, evidence, tuple(operands))


# --- dates -------------------------------------------------------------------------------


def stated_shifts(text: str) -> list[int]:
    """Numbers of days a person asked to move a date by: "the day after" is +1."""
    out = []
    for match in _SHIFT.finditer(text):
        if match.group("tomorrow") or match.group("next"):
            out.append(1)
        elif match.group("after"):
            out.append(1 if match.group("after").lower() == "after" else -1)
        else:
            word = match.group("n").lower()
            n = 1 if word == "a" else (parse_number(word) or 0)
            if match.group("unit").lower().startswith("week"):
                n *= 7
            forward = match.group("dir").lower() in ("later", "after")
            out.append(n if forward else -n)
    return [n for n in out if n and abs(n) <= 366]


def dates_in(text: str) -> Iterable[tuple[date, int, int]]:
    """Each full date ``text`` writes, in any notation (``values``), with its span."""
    for found in read_dates(text):
        for day in found.dates():
            yield day, found.start, found.end


def shifted_date(value: str, holding: Callable[[date], Source | None], shifts: list[int]) -> Computed | None:
    """An ISO date that is a date the sources hold moved by one of the stated shifts;
    ``holding`` gives the source a date is taken from, where one writes it."""
    try:
        target = date.fromisoformat(value)
    except ValueError:
        return None
    for shift in dict.fromkeys(shifts):
        wanted = target - timedelta(days=shift)
        source = holding(wanted)
        if source is not None:
            for found, start, end in dates_in(source.text):
                if found == wanted:
                    evidence = (
                        Evidence(call_id=source.call_id, path=source.path_at(start), start=start, end=end),
                    )
                    where = source.call_id or source.role
                    days = f"{abs(shift)} day{'s' if abs(shift) != 1 else ''}"
                    words = f"{days} {'later' if shift > 0 else 'earlier'}"
                    origin = Operand(
                        ZERO, f"{found.isoformat()} ({where})", evidence if source.role == "tool" else ()
                    )
                    return Computed(
                        "date-shift", f"{found.isoformat()} moved {words}", origin.evidence, (origin,)
                    )
    return None


def _day_marks(source: Source) -> list[tuple[date, int, int]]:
    """The dates a result's next-day marks put its times on: for each time written with a
    mark (``"00:00:00+1"``), each date the result or its call names moved by the mark's
    days, with the time's span. Read once per result."""
    found = source.cache.get("day_marks")
    if found is None:
        found = source.cache["day_marks"] = []
        marked = [time for time in read_times(source.text) if time.day_offset]
        if marked:
            named = {day for day, _, _ in dates_in(source.text)}
            for _, text in json_leaves(source.arguments, lambda leaf: isinstance(leaf, str)):
                named.update(day for day, _, _ in dates_in(text))
            found.extend(
                (day + timedelta(days=time.day_offset), time.start, time.end)
                for time in marked
                for day in sorted(named)
            )
    return found


def day_marked_date(value: str, sources: list[Source]) -> Computed | None:
    """An ISO date that is the date of a time a result writes with a next-day mark: a date
    the result or its call names, moved by the mark (``sources`` newest first)."""
    try:
        target = date.fromisoformat(value)
    except ValueError:
        return None
    for source in sources:
        for day, start, end in _day_marks(source):
            if day == target:
                evidence = (source.evidence_at((start, end)),)
                marked = source.text[start:end]
                origin = Operand(ZERO, f"{marked} ({source.call_id or source.role})", evidence)
                return Computed("day-mark", f"the day of {marked}", evidence, (origin,))
    return None
