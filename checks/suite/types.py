"""The plain data the suite reads and writes: frozen and JSON-compatible, so a checker can
never change the conversation it judges and a finding serializes without surprises."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Literal

from .decimals import json_head, read_json
from .outbound import Allow
from .pairing import answered_calls, by_occurrence

Severity = Literal["flag", "info"]


@dataclass(frozen=True)
class ToolCall:
    """One call an assistant message asked for."""

    call_id: str
    tool: str
    arguments: str  # the raw JSON string as the model wrote it; may be invalid
    message_index: int  # position of the requesting message within its turn

    @cached_property
    def parsed(self) -> Any:
        """The arguments, numbers exact: {} where none were written, None where invalid JSON."""
        return read_json(self.arguments) if self.arguments else {}


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant | tool
    text: str  # the content flattened to text; offsets count in this string
    content: Any  # the content as sent (string, None or a list of parts)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False  # the source format marked this tool result as an error

    # The text is parsed once, on first use, for every checker of a run: numbers exact.
    @cached_property
    def _json(self) -> tuple[Any, bool]:
        return json_head(self.text)

    @property
    def head(self) -> Any:
        """The JSON value at the head of the text (a note may follow it), or ``NO_JSON``."""
        return self._json[0]

    @property
    def value(self) -> Any:
        """The text as one JSON document, as ``json.loads`` reads it; None where it is none."""
        value, whole = self._json
        return value if whole else None

    @property
    def rows(self) -> list[Any] | None:
        return rows_of(self.value)


# How far a walk of a JSON value goes: containers this deep, and this many items of a list.
MAX_DEPTH, MAX_ITEMS = 12, 500


def walk(
    value: Any,
    join: Callable[[str, Any], str] | None = None,
    *,
    max_depth: float = MAX_DEPTH,
    max_items: int | None = MAX_ITEMS,
    into: Callable[[Any], bool] | None = None,
    last_first: bool = False,
) -> Iterator[tuple[str, Any, int]]:
    """The nodes of a JSON value with their paths and levels (the value's: "" and 1), in document
    order or each container's items ``last_first``. A container is read inside down to level
    ``max_depth`` where ``into`` accepts it, an array to its ``max_items``-th item, so no nesting or
    length makes a walk long (nor a recursion deep). An item's path is ``join(path, key)`` (an
    array's key its index); without ``join`` only the arrays and objects are walked, all at ""."""
    stack: list[tuple[str, Any, int]] = [("", value, 1)]
    while stack:
        path, node, depth = stack.pop()
        yield path, node, depth
        if not isinstance(node, (dict, list)) or depth > max_depth or (into is not None and not into(node)):
            continue
        items = node.items() if isinstance(node, dict) else enumerate(node[:max_items])
        if not last_first:
            items = reversed(list(items))  # pushed last first, so popped first
        if join is None:
            stack.extend((path, item, depth + 1) for _, item in items if isinstance(item, (dict, list)))
        else:
            stack.extend((join(path, key), item, depth + 1) for key, item in items)


def containers(value: Any, max_depth: int = MAX_DEPTH) -> Iterator[tuple[dict[Any, Any] | list[Any], int]]:
    """The arrays and objects of a JSON value (``walk``) with their levels, in no order."""
    for _, node, depth in walk(value, max_depth=max_depth, last_first=True):
        if isinstance(node, (dict, list)):
            yield node, depth


def members(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every member ``(key, item)`` of the objects a JSON value holds (``walk``)."""
    for _, node, _ in walk(value, last_first=True):
        if isinstance(node, dict):
            yield from node.items()


def rows_of(value: Any) -> list[Any] | None:
    """The one list a JSON value holds: itself, or the single list field of an object."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return value if isinstance(value, list) else None


@dataclass(frozen=True)
class Receipt:
    """The runtime's own record of one call: the ground truth, never the model's word."""

    call_id: str | None
    tool: str
    ok: bool
    outcome: str  # ok | error | denied
    result_count: int | None
    effect: str  # read | write | unknown
    emptiness: str  # non-empty | declared-absent | empty | unknown
    scope: dict[str, Any] | None
    handle: str
    dispatched: bool = True
    trusted: bool = True
    at: str | None = None
    derived: bool = False  # built from the transcript because the turn gave none


@dataclass(frozen=True)
class ToolClaim:
    """Something the answer asserts about a tool: it ran, it returned N rows, it found nothing."""

    kind: str  # invoked | count | absence
    tool: str
    call_id: str | None = None
    count: int | None = None
    text: str | None = None
    start: int | None = None  # span in the answer, when the claim was read from the text
    end: int | None = None


@dataclass(frozen=True)
class Turn:
    index: int
    messages: tuple[Message, ...]
    tools_offered: tuple[str, ...] | None  # None: unknown; (): none were offered
    tool_parameters: dict[str, Any]  # tool name -> JSON Schema of its parameters, when given
    receipts: tuple[Receipt, ...]
    claims: tuple[ToolClaim, ...] | None  # None: not given, so the suite reads the text
    negative_claims: tuple[Any, ...]
    answer: str
    answer_index: int | None  # position of the answer message within the turn

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for message in self.messages for call in message.tool_calls]

    @property
    def tool_results(self) -> list[Message]:
        return [message for message in self.messages if message.role == "tool"]

    # A result or a receipt is paired with its call by ``pairing``, never by looking its id up.
    @cached_property
    def answers(self) -> dict[int, ToolCall]:
        """The index of each tool message that answers a call -> the call it answers."""
        return answered_calls(self.messages)

    @cached_property
    def _result_index(self) -> dict[ToolCall, int]:
        return {call: i for i, call in self.answers.items()}

    @cached_property
    def _receipt_calls(self) -> tuple[dict[int, ToolCall], dict[ToolCall, Receipt]]:
        calls = by_occurrence((r.call_id for r in self.receipts), self.tool_calls, lambda c: c.call_id)
        paired = [(r, c) for r, c in zip(self.receipts, calls, strict=True) if c is not None]
        return {id(r): c for r, c in paired}, {c: r for r, c in paired}

    def __getstate__(self) -> dict[str, Any]:
        # The pairings are rebuilt on demand: a receipt's is keyed by its identity, which a copy loses.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def result_index(self, call: ToolCall) -> int | None:
        """Where the tool message that answers ``call`` stands in the turn, if it was answered."""
        return self._result_index.get(call)

    def result_of(self, item: ToolCall | Receipt) -> Message | None:
        """The tool message that answers a call, or the call a receipt records."""
        call = item if isinstance(item, ToolCall) else self.call_of(item)
        at = self.result_index(call) if call is not None else None
        return self.messages[at] if at is not None else None

    def call_of(self, receipt: Receipt) -> ToolCall | None:
        """The call a receipt of this turn records (the k-th receipt of an id, the k-th call)."""
        return self._receipt_calls[0].get(id(receipt))

    def receipt_of(self, call: ToolCall) -> Receipt | None:
        return self._receipt_calls[1].get(call)


@dataclass(frozen=True)
class Conversation:
    external_id: str
    turns: tuple[Turn, ...]
    agent_model: str = ""
    system: str = ""
    receipts_complete: bool = True


@dataclass(frozen=True)
class Span:
    text: str
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Evidence:
    """A pointer into one call: which JSON path, which characters of its result or (a successful
    query being part of its receipt) of its arguments."""

    call_id: str | None
    path: str = ""
    start: int | None = None
    end: int | None = None
    of: str = "result"  # result | arguments

    def to_dict(self) -> dict[str, Any]:
        out = {"call_id": self.call_id, "path": self.path, "start": self.start, "end": self.end}
        return out if self.of == "result" else out | {"of": self.of}


@dataclass(frozen=True)
class Finding:
    turn: int
    checker: str
    code: str
    severity: Severity
    explanation: str
    claim: Span | None = None
    evidence: tuple[Evidence, ...] = ()
    correction: str | None = None
    value: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # checker-specific fields

    def to_dict(self) -> dict[str, Any]:
        claim = self.claim.to_dict() if self.claim else None
        out = {"turn": self.turn, "checker": self.checker, "code": self.code, "severity": self.severity}
        out |= {"claim": claim, "evidence": [item.to_dict() for item in self.evidence]}
        out |= {"explanation": self.explanation, "correction": self.correction}
        return out | ({} if self.value is None else {"value": self.value}) | self.extra


@dataclass(frozen=True)
class RunContext:
    """What the caller of a run knows beyond the conversation and its options."""

    neighbours: list[dict[str, Any]] | None = None  # answers a search ranked beside the sampled ones
    tokens_left_today: int | None = None  # the project's daily judge budget left (None: no limit)
    judge_key: str | None = field(default=None, repr=False)  # the project's key for its own judge
    outbound_allow: Allow | None = None  # where that judge may be reached (None: the environment's)


@dataclass
class CheckerReport:
    """What one checker says about one conversation; the suite merges every checker's report."""

    findings: list[Finding] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)  # the values grounded, and where
    turns: dict[int, dict[str, Any]] = field(default_factory=dict)  # turn -> fields of its output entry
    judge: dict[str, Any] | None = None  # the exchanges with a judge model, if any were asked
