"""The plain data the suite reads and writes.

Everything here is frozen and built from JSON-compatible values, so a checker can never
change the conversation it judges and a finding can be serialized without surprises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["flag", "info"]


@dataclass(frozen=True)
class ToolCall:
    """One call an assistant message asked for."""

    call_id: str
    tool: str
    arguments: str  # the raw JSON string as the model wrote it; may be invalid
    message_index: int  # position of the requesting message within its turn


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant | tool
    text: str  # the content flattened to text; offsets count in this string
    content: Any  # the content as sent (string, None or a list of parts)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False  # the source format marked this tool result as an error


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
    receipts_given: bool
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

    def result_for(self, call_id: str) -> Message | None:
        for message in self.tool_results:
            if message.tool_call_id == call_id:
                return message
        return None


@dataclass(frozen=True)
class Conversation:
    external_id: str
    turns: tuple[Turn, ...]
    title: str = ""
    agent_name: str = ""
    agent_model: str = ""
    started_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
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
    """A pointer into one tool result: which call, which JSON path, which characters."""

    call_id: str | None
    path: str = ""
    start: int | None = None
    end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "path": self.path, "start": self.start, "end": self.end}


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
        out: dict[str, Any] = {
            "turn": self.turn,
            "checker": self.checker,
            "code": self.code,
            "severity": self.severity,
            "claim": self.claim.to_dict() if self.claim else None,
            "evidence": [item.to_dict() for item in self.evidence],
            "explanation": self.explanation,
            "correction": self.correction,
        }
        if self.value is not None:
            out["value"] = self.value
        out.update(self.extra)
        return out
