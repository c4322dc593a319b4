"""Checker ``arguments``: an identifier typed into a tool call must have come from somewhere.

A model that looks up a name it assembled out of its own prose gets back a real "nothing found", and the
answer built on it is grounded in a real result: the defect is the argument. Every tool call's arguments
are read, without per-tool wiring:

- ``unsupported_argument`` (flag): an identifier-shaped string argument (a number of ``min_digits``
  digits or more, or an identifier; for a tool named in ``arguments_from``, every string of 4 characters
  or more) that no user message, system prompt or earlier tool result holds (the finding says whether
  the assistant's own prose did), unless it is a name of words (no run of ``min_digits`` digits),
  the call only reads and its own result, neither failed nor empty, carries it back: the lookup
  found it, so it names something that exists, however the model came to spell it ("tent_20x40"
  from "a 20x40 tent"), where a guessed order number that happens to exist is still guessed; or an
  option's name of words joined by underscores whose every number (each short of ``min_digits``
  digits) was said before the call, by a person or an answer, or by a result next to a word of
  the name ("apartment_2br" after "a 2-bedroom"); or a
  number typed into a write that nothing supplied (``write_numbers``). An expression ("100 *
  1.5") is a string of values: each number of it that an answer's check would read must have
  been said before, by anyone, the assistant included (``expressions``); what such a call computed
  backs nothing in the answer.
- ``empty_lookup`` (info): a value one tool's result produced, looked up by another tool that found
  nothing.

Composed text (a line break, or three words or more) is never checked; an identifier is, at any length.
Nor is a date, a month ("2026-10") or a clock time: each is worked out from "yesterday" or "in March"
as often as looked up.
Values of the tool's declared ``enum`` pass. Where ``arguments_from`` names a tool's producers, only
their results produce its arguments.
"""

from __future__ import annotations

import re
from typing import Any

from . import deadline
from .decimals import number_text
from .evidence import clip
from .evidence_index import BACKS, Grounds, Source, found_nothing, index_for, text_leaves
from .expressions import is_expression, unsaid_operands
from .money import money_values
from .options import Options
from .shown import Texts
from .tokens import classify, lookup_forms, normalize, tokenize
from .tool_names import says_it_writes, surely_writes
from .types import CheckerReport, Conversation, Finding, Receipt, RunContext, ToolCall, Turn
from .write_numbers import Supply, unsupplied

NAME = "arguments"
_DATE_OR_TIME = re.compile(
    r"\d{4}-\d{2}(?:-\d{2}(?:t\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?)?|\d{1,2}:\d{2}(?::\d{2})?"
)


def enum_values(schema: Any, path: str) -> set[str] | None:
    """The ``enum`` (or ``const``) the tool's schema declares at an argument's path."""
    node: Any = schema
    for index, quoted, key in re.findall(r"\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]|([^.\[\]]+)", path):
        if not isinstance(node, dict):
            return None
        node = node.get("items") if index else (node.get("properties") or {}).get(key or quoted.strip('"'))
    if not isinstance(node, dict):
        return None
    out: set[str] = set()
    for option in [node, *(node.get("anyOf") or []), *(node.get("oneOf") or [])]:
        if isinstance(option, dict):
            consts = [option["const"]] if "const" in option else []
            out.update(str(v).lower() for v in [*(option.get("enum") or []), *consts])
    return out or None


class _Seen:
    """What was shown before a point, indexed (``shown``) so a late call costs no more than an early one."""

    def __init__(self, sources: list[Source]) -> None:
        self.grounds = Grounds("argument", sources)  # who said which value before (``BACKS``)
        self.person_texts = Texts()  # the user's messages and the prompt, lower case
        self.tools = self.grounds.held  # the results, oldest first
        self.tool_texts = Texts()  # each of ``tools`` as ``Source.low``, in the same order
        self.prose = Texts()  # the assistant's own words, lower case
        self.supply = Supply(results=self.tools)  # for the numbers typed into writes
        self.last_prose = ""  # the assistant's last words, which a short reply answers
        self.unread_prose: list[str] = []  # the answers since the user last spoke
        self._by_tool: dict[str | None, dict[str, int]] = {}  # tool -> form -> its newest result
        self._by_tool_read = 0

    def absorb(self, source: Source) -> None:
        if not self.grounds.absorb(source):
            return
        if source.role == "tool":
            self.tool_texts.add(source.low)
            return
        self.person_texts.add(source.text.lower())
        if source.role == "system":
            self.supply.read_prompt(source.text)
        if source.role == "user":
            # The answers the user has read before speaking again: what they said the user took up.
            self.supply.answer_texts.extend(self.unread_prose)
            self.unread_prose = []
            self.supply.user_texts.append(source.text)
            if self.last_prose:
                self.supply.replies.append((self.last_prose, source.text))
            self.last_prose = ""
            self.supply.prose_amounts |= money_values(source.text)

    def absorb_prose(self, text: str) -> None:
        """An answer's own words: no evidence of an identifier, but a later payment is computed from them."""
        self.prose.add(text.lower())
        self.last_prose = text
        self.supply.prose_amounts |= money_values(text)
        self.unread_prose.append(text)

    def producer(self, forms: list[str], lowered: str, producers: tuple[str, ...] | None) -> Source | None:
        """The newest result (of one of ``producers``, when named) that carries the value."""
        if producers is None:
            if (grounded := self.grounds.ground(forms)) is not None:
                return grounded[0]
        else:
            for ordinal, source in enumerate(self.tools[self._by_tool_read :], start=self._by_tool_read):
                self._by_tool.setdefault(source.tool, {}).update(dict.fromkeys(source.forms, ordinal))
            self._by_tool_read = len(self.tools)
            newest = [self._by_tool.get(tool, {}).get(form, -1) for tool in producers for form in forms]
            if max(newest, default=-1) >= 0:
                return self.tools[max(newest)]
        holding = (self.tools[ordinal] for ordinal in self.tool_texts.holding(lowered))
        return next((source for source in holding if producers is None or source.tool in producers), None)


class ArgumentsChecker:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        index = index_for(conversation)
        seen = _Seen(index.sources)
        findings: list[Finding] = []
        for source in (source for source in index.system if source.turn < 0):
            seen.absorb(source)
        for turn in conversation.turns:
            # What may back an argument (``BACKS``): a call's own query is no source of another's.
            at = {s.message_index: s for s in index.by_turn[turn.index] if s.role in BACKS["argument"]}
            for i, message in enumerate(turn.messages):
                if i in at:
                    seen.absorb(at[i])
                elif message.role == "assistant":
                    if message.text:
                        seen.absorb_prose(message.text)
                    for call in message.tool_calls:
                        deadline.check()
                        findings.extend(_judge_call(turn, call, options, seen, at))
        return CheckerReport(findings)


def _judge_call(
    turn: Turn, call: ToolCall, options: Options, seen: _Seen, at: dict[int, Source]
) -> list[Finding]:
    arguments = call.parsed  # None where invalid: no leaves, so no finding
    producers = options.arguments.arguments_from.get(call.tool)
    schema = turn.tool_parameters.get(call.tool)
    receipt, answered = turn.receipt_of(call), turn.result_index(call)
    result = at.get(answered) if answered is not None else None
    out: list[Finding] = []
    for path, raw in text_leaves(arguments):
        if is_expression(raw):
            out.extend(_operands(turn, call, path, raw, options.evidence.min_digits, seen))
            continue
        value = _checked_value(raw, producers is not None, options.evidence.min_digits)
        lowered = raw.strip().lower()
        if value is None or lowered in (enum_values(schema, path) or ()):
            continue
        forms = lookup_forms(value)
        producer = seen.producer(forms, lowered, producers)
        if producer is None:
            if not (
                seen.grounds.supplied(forms)
                or seen.person_texts.holds(lowered)
                or _found(call, value, forms, result, receipt, options.evidence.min_digits)
                or _spelled_from_said(lowered, seen, options.evidence.min_digits)
            ):
                out.append(_unfound(turn, call, path, value, seen.prose.holds(lowered), producers))
        elif producer.tool != call.tool and found_nothing(result, receipt):
            out.append(_empty_lookup(turn, call, path, value, producer, forms))
    if surely_writes(call.tool, receipt):
        for path, number in unsupplied(arguments, seen.supply):
            value = number_text(number)
            why = (
                f"The argument {path} of {call.tool} (call {call.call_id}), a call that changes data, is "
                f"{value}, and nothing supplied it: no user message says it of what {path} counts, no record "
                "the call names holds it under the same key, and no documented derivation gives it."
            )
            out.append(_unsupported(turn, call, path, value, why, "nowhere"))
    if not surely_writes(call.tool, receipt) and (receipt is None or receipt.ok):
        seen.supply.asked(arguments)  # a read the tool answered: what it asked for, a later write may repeat
    return out


def _found(
    call: ToolCall,
    value: str,
    forms: list[str],
    result: Source | None,
    receipt: Receipt | None,
    min_digits: int,
) -> bool:
    """Whether a name composed of words (no run of ``min_digits`` digits: a guessed account or order
    number that happens to exist is still guessed) is carried back by the call's own result, a read
    neither failed nor empty: the tool found it, so it names something that exists."""
    if re.search(rf"\d{{{min_digits},}}", value):
        return False
    if result is None or says_it_writes(call.tool, receipt) is not False or (receipt and not receipt.ok):
        return False
    return not found_nothing(result, receipt) and any(form in result.forms for form in forms)


def _spelled_from_said(value: str, seen: _Seen, min_digits: int) -> bool:
    """Whether an option's name of words joined by underscores ("late_return_3_days", "apartment_2br")
    writes only numbers said before the call, each short of ``min_digits``: by a person or an answer,
    or by a result within three words of a word of the name ("2 bedroom apartment"); a spelling of
    what was said, where a guessed code ("order_48213") is still guessed."""
    runs = re.findall(r"\d+", value)
    stems = "|".join(sorted({word[:3] for word in re.findall(r"[a-z]{3,}", value)}))
    if "_" not in value or not runs or not stems or any(len(run) >= min_digits for run in runs):
        return False
    said = [*seen.person_texts.texts, *seen.prose.texts]
    gap = r"(?:[\s,-]+[a-z]+){0,2}[\s,-]+"  # up to two words between
    for run in runs:
        number = rf"(?<![\w.]){run}(?![\w.])"
        near = re.compile(rf"{number}{gap}(?:{stems})|(?<![a-z])(?:{stems})[a-z]*{gap}{number}")
        if not (
            any(re.search(number, text) for text in said) or any(map(near.search, seen.tool_texts.texts))
        ):
            return False
    return True


def _operands(turn: Turn, call: ToolCall, path: str, raw: str, min_digits: int, seen: _Seen) -> list[Finding]:
    """The operands nobody said before (``expressions``)."""

    def said(forms: list[str]) -> bool:
        lowered = [form.lower() for form in forms]
        return (
            seen.grounds.supplied(forms)
            or seen.producer(forms, lowered[0], None) is not None
            or any(seen.person_texts.holds(form) or seen.prose.holds(form) for form in lowered)
        )

    out = []
    for operand in unsaid_operands(raw, min_digits, said):
        why = (
            f"The expression {path} of {call.tool} (call {call.call_id}), “{clip(raw)}”, computes with "
            f"{operand}, which no user message, system prompt, tool result or earlier answer "
            "states: an operand made up."
        )
        out.append(_unsupported(turn, call, path, operand, why, "nowhere"))
    return out


def _checked_value(raw: str, armed: bool, min_digits: int) -> str | None:
    text = raw.strip()
    if not text or "\n" in text or len(text.split()) >= 3:
        return None  # composed: prose someone wrote, not a value someone looked up
    if armed:
        return normalize(text) if len(text) >= 4 else None
    tokens = tokenize(text)
    # A date, a month or a time is often computed from "yesterday", not looked up.
    if len(tokens) != 1 or _DATE_OR_TIME.fullmatch(tokens[0].value):
        return None
    candidate = classify(tokens[0], min_digits=min_digits, figures=False, decimal_rounding=False)
    return candidate.value if candidate is not None else None


def _unfound(
    turn: Turn, call: ToolCall, path: str, value: str, in_prose: bool, producers: tuple[str, ...] | None
) -> Finding:
    where = "it appears nowhere in the conversation before this call"
    if in_prose:
        where = "it was found only in the assistant's own prose, which is not evidence"
    sources = "no earlier tool result"
    if producers:
        sources = f"no result of {', '.join(producers)} (the tools named as its producers)"
    why = (
        f"The argument {path} of {call.tool} (call {call.call_id}) is “{clip(value)}”, which "
        f"appears in no user message, no system prompt and {sources}; {where}."
    )
    return _unsupported(turn, call, path, value, why, "assistant_prose" if in_prose else "nowhere")


def _unsupported(turn: Turn, call: ToolCall, path: str, value: str, why: str, found_in: str) -> Finding:
    """``unsupported_argument``; ``found_in`` says where the value was seen, if anywhere."""
    extra = {"call_id": call.call_id, "path": path, "tool": call.tool, "found_in": found_in}
    return Finding(turn.index, NAME, "unsupported_argument", "flag", why, value=value, extra=extra)


def _empty_lookup(
    turn: Turn, call: ToolCall, path: str, value: str, producer: Source, forms: list[str]
) -> Finding:
    span = next((span for form in forms if (span := producer.span_of(form)) is not None), None)
    why = (
        f"“{clip(value)}” came from the result of {producer.tool} (call {producer.call_id}); "
        f"{call.tool} (call {call.call_id}) looked it up in {path} and found nothing."
    )
    extra = {"call_id": call.call_id, "path": path, "tool": call.tool}
    evidence = (producer.evidence_at(span),)
    return Finding(turn.index, NAME, "empty_lookup", "info", why, evidence=evidence, value=value, extra=extra)
