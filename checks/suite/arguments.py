"""Checker ``arguments``: an identifier typed into a tool call must have come from somewhere.

A model that resolves "that machine" out of its own earlier prose, and looks up a name it
assembled, gets back a real "nothing found", and the answer built on it is grounded in a
real result. The defect sits one step earlier, in the argument. This checker reads every
tool call's arguments, without per-tool wiring:

- ``unsupported_argument`` (flag): an identifier-shaped string argument (by default: a
  number of ``min_digits`` digits or more, or an identifier; for tools named in
  ``arguments_from``: every string of 4 characters or more) appears in no user message,
  system prompt or earlier tool result. The finding says whether the value was found only in
  the assistant's own prose, or nowhere.
- ``empty_lookup`` (info): a value one tool's result produced was looked up by another
  tool, which found nothing.

Composed text (a note to save, a message to send: a line break, or three words or more) is
not an identifier and is never checked; an identifier is checked at any length, and a
finding's explanation shows a long one cut short with an ellipsis while its ``value`` keeps
it whole. Values in the tool's declared ``enum`` pass. Where ``arguments_from`` names a
tool's producers, only their results count as producing its arguments.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from . import deadline
from .decimals import number_text
from .evidence import clip
from .evidence_index import BACKS, Grounds, Source, found_nothing, index_for, json_leaves
from .money import money_values
from .options import Options
from .shown import Grown, Texts
from .tokens import classify, lookup_forms, normalize, tokenize
from .tool_names import surely_writes
from .types import CheckerReport, Conversation, Finding, RunContext, ToolCall, Turn
from .write_numbers import Supply, unsupplied

NAME = "arguments"
MIN_ARMED_LENGTH = 4
_DATE_OR_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?"
)


def string_arguments(value: Any) -> list[tuple[str, str]]:
    """Every string leaf of a call's arguments with its path (``filters.host``, ``ids[0]``)."""
    return json_leaves(value, lambda leaf: isinstance(leaf, str))


def is_composed(text: str) -> bool:
    """Prose someone wrote (a note, a message), not a value someone looked up. Length alone
    makes nothing prose: an invented identifier is no less invented for being long."""
    return "\n" in text or len(text.split()) >= 3


def enum_values(schema: Any, path: str) -> set[str] | None:
    """The ``enum`` (or ``const``) the tool's schema declares at an argument's path."""
    if not isinstance(schema, dict):
        return None
    node: Any = schema
    for part in re.findall(r"\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]|([^.\[\]]+)", path):
        index, quoted, key = part
        if not isinstance(node, dict):
            return None
        if index:
            node = node.get("items")
        else:
            name = key or quoted.strip('"')
            node = (node.get("properties") or {}).get(name)
        if node is None:
            return None
    out: set[str] = set()
    for option in [node, *(node.get("anyOf") or []), *(node.get("oneOf") or [])]:
        if isinstance(option, dict):
            out.update(str(v).lower() for v in option.get("enum") or [])
            if "const" in option:
                out.add(str(option["const"]).lower())
    return out or None


class _Seen:
    """What the conversation showed before one point: who supplied which values.

    Every question a call asks of it (which result holds a value, did a person write it) is
    answered from indexes (``shown``), so a call late in a long conversation costs no more
    than one early in it.
    """

    def __init__(self, sources: list[Source]) -> None:
        self.grounds = Grounds("argument", sources)  # who said which value before (``BACKS``)
        self.person_texts = Texts()  # the user's messages and the prompt, lower case
        self.tools: list[Source] = []
        self.tool_texts = Texts()  # each of ``tools`` as ``Source.low``, in the same order
        self.prose = Texts()  # the assistant's own words, lower case
        self.supply = Supply(results=self.tools)  # for the numbers typed into writes
        self.last_prose = ""  # the assistant's last words, which a short reply answers
        self._by_tool = _ByTool()

    def absorb(self, source: Source) -> None:
        if not self.grounds.absorb(source):
            return
        if source.role == "tool":
            self.tools.append(source)
            self.tool_texts.add(source.low)
        else:
            self.person_texts.add(source.text.lower())
            if source.role == "user":
                self.supply.user_texts.append(source.text)
                if self.last_prose:
                    self.supply.replies.append((self.last_prose, source.text))
                self.last_prose = ""
                self.supply.prose_amounts |= money_values(source.text)

    def absorb_prose(self, text: str) -> None:
        """An answer's own words: not evidence of an identifier, but the amounts it states are
        what a later payment is computed from."""
        self.prose.add(text.lower())
        self.last_prose = text
        self.supply.prose_amounts |= money_values(text)

    def newest_of(self, producers: tuple[str, ...], forms: list[str]) -> Source | None:
        """The newest result of one of ``producers`` that carries one of ``forms``."""
        if not self._by_tool.indexed("tools", self.tools, self._by_tool.read):
            for source in reversed(self.tools):
                if source.tool in producers and any(f in source.forms for f in forms):
                    return source
            return None
        best = max(
            (self._by_tool.newest.get(tool, {}).get(form, -1) for tool in producers for form in forms),
            default=-1,
        )
        return self.tools[best] if best >= 0 else None


class _ByTool(Grown):
    """For each tool, the newest of the results it gave that carries each form."""

    def __init__(self) -> None:
        super().__init__()
        self.newest: dict[str | None, dict[str, int]] = {}

    def read(self, ordinal: int, source: Source) -> None:
        self.newest.setdefault(source.tool, {}).update(dict.fromkeys(source.forms, ordinal))


class ArgumentsChecker:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        index = index_for(conversation)
        seen = _Seen(index.sources)
        findings: list[Finding] = []
        for source in index.system:
            if source.turn < 0:
                seen.absorb(source)
        for turn in conversation.turns:
            # What may back an argument (``BACKS``): a call's own query is no source of another's.
            at = {
                source.message_index: source
                for source in index.by_turn[turn.index]
                if source.role in BACKS["argument"]
            }
            for i, message in enumerate(turn.messages):
                if i in at:
                    seen.absorb(at[i])
                    continue
                if message.role != "assistant":
                    continue
                if message.text:
                    seen.absorb_prose(message.text)
                for call in message.tool_calls:
                    deadline.check()
                    findings.extend(self._judge_call(turn, call, options, seen, at))
        return CheckerReport(findings)

    def _judge_call(
        self,
        turn: Turn,
        call: ToolCall,
        options: Options,
        seen: _Seen,
        at: dict[int, Source],
    ) -> list[Finding]:
        arguments = call.parsed
        if arguments is None:
            return []
        producers = options.arguments.arguments_from.get(call.tool)
        armed = producers is not None
        schema = turn.tool_parameters.get(call.tool)
        out: list[Finding] = []
        for path, raw in string_arguments(arguments):
            value = self._checked_value(raw, armed, options.evidence.min_digits)
            if value is None:
                continue
            enum = enum_values(schema, path)
            if enum is not None and raw.strip().lower() in enum:
                continue
            forms = lookup_forms(value)
            lowered = raw.strip().lower()
            producer = self._producer(forms, lowered, seen, producers)
            if producer is None:
                if seen.grounds.supplied(forms) or seen.person_texts.holds(lowered):
                    continue
                out.append(self._unsupported(turn, call, path, value, lowered, seen, producers))
                continue
            if producer.tool != call.tool:
                answered = turn.result_index(call)
                result = at.get(answered) if answered is not None else None
                if found_nothing(result, turn.receipt_of(call)):
                    out.append(self._empty_lookup(turn, call, path, value, producer, forms))
        if surely_writes(call.tool, turn.receipt_of(call)):
            for path, number in unsupplied(arguments, seen.supply):
                out.append(self._unsupplied_number(turn, call, path, number))
        return out

    @staticmethod
    def _unsupplied_number(turn: Turn, call: ToolCall, path: str, number: Decimal) -> Finding:
        value = number_text(number)
        explanation = (
            f"The argument {path} of {call.tool} (call {call.call_id}), a call that changes "
            f"data, is {value}, and nothing supplied it: no user message says it of what "
            f"{path} counts, no record the call names holds it under the same key, and no "
            "documented derivation gives it."
        )
        return _unsupported_finding(turn, call, path, value, explanation, "nowhere")

    @staticmethod
    def _checked_value(raw: str, armed: bool, min_digits: int) -> str | None:
        text = raw.strip()
        if not text or is_composed(text):
            return None
        if armed:
            return normalize(text) if len(text) >= MIN_ARMED_LENGTH else None
        tokens = tokenize(text)
        if len(tokens) != 1:
            return None
        token = tokens[0]
        if _DATE_OR_TIME.fullmatch(token.value):
            return None  # a date or time is often computed from "yesterday", not looked up
        candidate = classify(token, min_digits=min_digits, figures=False, decimal_rounding=False)
        return candidate.value if candidate is not None else None

    @staticmethod
    def _producer(
        forms: list[str],
        lowered: str,
        seen: _Seen,
        producers: tuple[str, ...] | None,
    ) -> Source | None:
        if producers is None:
            grounded = seen.grounds.ground(forms)
            if grounded is not None:
                return grounded[0]
        else:
            found = seen.newest_of(producers, forms)
            if found is not None:
                return found
        for ordinal in seen.tool_texts.holding(lowered):
            source = seen.tools[ordinal]
            if producers is None or source.tool in producers:
                return source
        return None

    @staticmethod
    def _unsupported(
        turn: Turn,
        call: ToolCall,
        path: str,
        value: str,
        lowered: str,
        seen: _Seen,
        producers: tuple[str, ...] | None,
    ) -> Finding:
        in_prose = seen.prose.holds(lowered)
        where = (
            "it was found only in the assistant's own prose, which is not evidence"
            if in_prose
            else "it appears nowhere in the conversation before this call"
        )
        sources = (
            f"no result of {', '.join(producers)} (the tools named as its producers)"
            if producers
            else "no earlier tool result"
        )
        explanation = (
            f"The argument {path} of {call.tool} (call {call.call_id}) is “{clip(value)}”, which "
            f"appears in no user message, no system prompt and {sources}; {where}."
        )
        return _unsupported_finding(
            turn, call, path, value, explanation, "assistant_prose" if in_prose else "nowhere"
        )

    @staticmethod
    def _empty_lookup(
        turn: Turn, call: ToolCall, path: str, value: str, producer: Source, forms: list[str]
    ) -> Finding:
        span = None
        for form in forms:
            span = producer.span_of(form)
            if span is not None:
                break
        return Finding(
            turn=turn.index,
            checker=NAME,
            code="empty_lookup",
            severity="info",
            explanation=(
                f"“{clip(value)}” came from the result of {producer.tool} (call {producer.call_id}); "
                f"{call.tool} (call {call.call_id}) looked it up in {path} and found nothing."
            ),
            evidence=(producer.evidence_at(span),),
            value=value,
            extra={"call_id": call.call_id, "path": path, "tool": call.tool},
        )


def _unsupported_finding(
    turn: Turn, call: ToolCall, path: str, value: str, explanation: str, found_in: str
) -> Finding:
    """``unsupported_argument`` for one argument of one call; ``found_in`` says where the
    value was seen, if anywhere (``assistant_prose`` or ``nowhere``)."""
    return Finding(
        turn=turn.index,
        checker=NAME,
        code="unsupported_argument",
        severity="flag",
        explanation=explanation,
        value=value,
        extra={"call_id": call.call_id, "path": path, "tool": call.tool, "found_in": found_in},
    )
