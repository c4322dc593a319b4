"""Reading a conversation in the native format (CONTRACT.md §1), in three steps each usable alone:
``validate`` lists every problem with its JSON path and what would be accepted, so the API can
refuse a payload in one answer; ``canonical`` turns a valid payload into the one serialization
stored (flat ``messages`` split into turns, tool arguments as strings, known keys only), so a
conversation compares equal whichever way it was sent; ``parse`` builds the frozen
``Conversation`` the checkers read, deriving receipts where a turn gives none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import count, pairwise
from typing import Any

from .pairing import Place, answered_calls, answered_in_json, by_occurrence
from .types import Conversation, Message, Receipt, ToolCall, ToolClaim, Turn, containers

# --- validation ---------------------------------------------------------------------------
# Each table holds the fields an object may give, in the order they are reported: key ->
# (whether a value is accepted, the problem where it is not). A field given as null is a
# problem only where the field is required.

type _Fields = dict[str, tuple[Callable[[Any], bool], str]]
type _Check = Callable[[Any, str, _Problems], None]


def _kind(*kinds: type) -> Callable[[Any], bool]:
    # bool is an int in Python; a count of `true` is not a count.
    return lambda value: isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _one_of(*words: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: value in words), f"must be one of {', '.join(words)}"


def _count(what: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: _kind(int)(value) and value >= 0), f"must be a whole number of at least 0{what}"


def _name(problem: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: isinstance(value, str) and value != ""), problem


ROLES = ("system", "user", "assistant", "tool")
MAX_EXTERNAL_ID = 255
_STARTED_AT = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?")
_STRING = (_kind(str), "must be a string")
_FLAG = (_kind(bool), "must be true or false")
_CONVERSATION: _Fields = {
    "title": _STRING,
    "system": _STRING,
    "metadata": (_kind(dict), "must be a JSON object"),
    "receipts_complete": _FLAG,
    "started_at": (
        lambda value: isinstance(value, str) and _STARTED_AT.fullmatch(value) is not None,
        "must be an ISO 8601 timestamp such as 2026-11-30T10:00:00Z",
    ),
    "agent": (_kind(dict), 'must be an object like {"name": "…", "model": "…"}'),
}
_MESSAGE: _Fields = {
    "role": _one_of(*ROLES),
    "content": (_kind(str, list), 'must be a string, null, or a list of {"type": "text", "text": …} parts'),
}
_MESSAGES = "must be a non-empty list of messages"
_CALL_ID = _name("is required: the call's id, which its tool message names")
_FUNCTION: _Fields = {
    "name": _name("is required: the tool's name"),
    "arguments": (_kind(str, dict, list), "must be a JSON string (kept as written, even if invalid)"),
}
_RECEIPT: _Fields = {
    "tool": _name("is required: the name of the tool that ran"),
    "call_id": (_kind(str), "must be a string: the id of the call in the transcript"),
    "ok": _FLAG,
    "dispatched": _FLAG,
    "trusted": _FLAG,
    "handle": (_kind(str), "must be a citation handle such as r1"),
    "at": (_kind(str), "must be an ISO 8601 timestamp"),
    "outcome": _one_of("ok", "error", "denied"),
    "effect": _one_of("read", "write", "unknown"),
    "emptiness": _one_of("non-empty", "declared-absent", "empty", "unknown"),
    "result_count": _count(", or null when not recorded"),
    "scope": (_kind(dict), 'must be an object like {"filters": {"arg": "value"}, "complete": true}'),
}
_SCOPE: _Fields = {"filters": (_kind(dict), "must be an object of argument: value"), "complete": _FLAG}
_CLAIM: _Fields = {
    "kind": _one_of("invoked", "count", "absence"),
    "tool": _name("is required: the tool the claim is about"),
    "call_id": _STRING,
    "text": _STRING,
    "count": _count(""),
}
# The entries of negative claims are stored as sent, whatever their shape.
_NEGATIVE_CLAIMS = (_kind(list), "must be a list (its entries are judged, not refused)")


class InvalidConversation(ValueError):
    """The payload is not a conversation; ``errors`` lists each problem with its path."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{e['path']}: {e['message']}" for e in errors))
        self.errors = errors


class _Problems:
    """The problems found so far, each at its JSON path (a field's is ``{path}.{key}``)."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append({"path": path, "message": message})

    def like(self, value: Any, path: str, example: str) -> bool:
        """Whether ``value`` is a JSON object; where it is not, ``example`` shows one."""
        if not isinstance(value, dict):
            self.add(path, f"must be an object like {example}")
        return isinstance(value, dict)

    def fields(self, obj: dict[str, Any], path: str, fields: _Fields, required: tuple[str, ...] = ()) -> None:
        for key, (accepted, message) in fields.items():
            if (key in required or obj.get(key) is not None) and not accepted(obj.get(key)):
                self.add(f"{path}.{key}", message)

    def each(self, items: Any, path: str, problem: str, check: _Check, required: bool = False) -> None:
        """``items``, where given (always, if ``required``: not empty), is a list ``check`` reads."""
        wrong = not isinstance(items, list) or (required and not items)
        if wrong and (items is not None or required):
            self.add(path, problem)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            check(item, f"{path}[{i}]", self)


def validate(data: Any) -> list[dict[str, str]]:
    """Every problem of a native payload, each with its JSON path; empty when it is valid."""
    problems = _Problems()
    if not isinstance(data, dict):
        problems.add("$", "must be a JSON object with `external_id` and `turns` (or `messages`)")
        return problems.errors
    external_id = data.get("external_id")
    if not isinstance(external_id, str) or not external_id.strip():
        problems.add("$.external_id", "is required: a non-empty string that names the conversation")
    elif len(external_id) > MAX_EXTERNAL_ID:
        problems.add("$.external_id", f"must be at most {MAX_EXTERNAL_ID} characters")
    problems.fields(data, "$", _CONVERSATION)
    if isinstance(data.get("agent"), dict):
        problems.fields(data["agent"], "$.agent", {"name": _STRING, "model": _STRING})
    if "turns" in data and "messages" in data:
        problems.add("$", "give either `turns` or a flat `messages` list, not both")
    elif "turns" in data:
        problems.each(data["turns"], "$.turns", "must be a non-empty list of turns", _validate_turn, True)
    elif "messages" in data:
        problems.each(data["messages"], "$.messages", _MESSAGES, _validate_message, required=True)
    else:
        problems.add("$.turns", "is required: a list of turns (or give a flat `messages` list)")
    if not problems.errors:
        _validate_call_ids(data, problems)
    return problems.errors


def _validate_call_ids(data: dict[str, Any], problems: _Problems) -> None:
    """Each tool message answers an earlier call of its turn, as ``pairing`` pairs them. Refused: a
    call taking the id of a call of its turn still waiting for its answer (which result answers
    which would be left open), and a tool message no call of its turn waits on. Ids may recur
    across turns (some runtimes number calls afresh)."""
    for turn in _located_turns(data):
        repeats: dict[Place, Place] = {}
        answered = answered_in_json([message for _, message in turn], repeats)
        for i, (path, message) in enumerate(turn):
            for j in range(len(message.get("tool_calls") or ())):
                if (earlier := repeats.get((i, j))) is not None:
                    k, n = earlier
                    problems.add(
                        f"{path}.tool_calls[{j}].id",
                        f"repeats the id of {turn[k][0]}.tool_calls[{n}].id, which has no answer yet; an id "
                        "may be reused only once its call was answered",
                    )
            if message["role"] == "tool" and i not in answered:
                problems.add(
                    f"{path}.tool_call_id",
                    f"answers no call of its turn still waiting for a result ({message['tool_call_id']!r}); "
                    "give the id of the assistant's call this message answers",
                )


def _validate_turn(turn: Any, path: str, problems: _Problems) -> None:
    if not isinstance(turn, dict):
        problems.add(path, "must be an object with a `messages` list")
        return
    problems.each(turn.get("messages"), f"{path}.messages", _MESSAGES, _validate_message, required=True)
    offered = 'must be a list of tool names or {"name": …} objects'
    problems.each(turn.get("tools_offered"), f"{path}.tools_offered", offered, _validate_tool)
    problems.each(turn.get("receipts"), f"{path}.receipts", "must be a list of receipts", _validate_receipt)
    problems.each(turn.get("claims"), f"{path}.claims", "must be a list of claims", _validate_claim)
    problems.fields(turn, path, {"negative_claims": _NEGATIVE_CLAIMS})


def _validate_tool(tool: Any, path: str, problems: _Problems) -> None:
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        if "parameters" in tool and not isinstance(tool["parameters"], dict):
            problems.add(f"{path}.parameters", "must be a JSON Schema object")
    elif not isinstance(tool, str) or not tool:
        problems.add(path, 'must be a tool name or {"name": …, "parameters": {…}}')


def _validate_message(message: Any, path: str, problems: _Problems) -> None:
    if not problems.like(message, path, '{"role": "user", "content": "…"}'):
        return
    role = message.get("role")
    problems.fields(message, path, _MESSAGE, required=("role",))
    content = message.get("content")
    for j, part in enumerate(content if isinstance(content, list) else ()):
        at = f"{path}.content[{j}]"
        if problems.like(part, at, '{"type": "text", "text": "…"}'):
            if part.get("type") == "text" and not isinstance(part.get("text"), str):
                problems.add(f"{at}.text", "must be a string")
    if message.get("tool_calls") is not None and role != "assistant":
        problems.add(f"{path}.tool_calls", "only an assistant message may carry tool calls")
    else:
        calls = "must be a list of tool calls"
        problems.each(message.get("tool_calls"), f"{path}.tool_calls", calls, _validate_tool_call)
    if role == "tool":
        answered = _name("is required on a tool message: the id of the call it answers")
        problems.fields(message, path, {"tool_call_id": answered}, required=("tool_call_id",))
    problems.fields(message, path, {"is_error": _FLAG})


def _validate_tool_call(call: Any, path: str, problems: _Problems) -> None:
    function = '{"name": "…", "arguments": "{…}"}'
    if problems.like(call, path, f'{{"id": "call-1", "function": {function}}}'):
        problems.fields(call, path, {"id": _CALL_ID}, required=("id",))
        if problems.like(call.get("function"), f"{path}.function", function):
            problems.fields(call["function"], f"{path}.function", _FUNCTION, required=("name",))


def _validate_receipt(receipt: Any, path: str, problems: _Problems) -> None:
    if problems.like(receipt, path, '{"call_id": "call-1", "tool": "search", "ok": true}'):
        problems.fields(receipt, path, _RECEIPT, required=("tool",))
        if isinstance(receipt.get("scope"), dict):
            problems.fields(receipt["scope"], f"{path}.scope", _SCOPE)


def _validate_claim(claim: Any, path: str, problems: _Problems) -> None:
    if problems.like(claim, path, '{"kind": "count", "tool": "search", "count": 3}'):
        problems.fields(claim, path, _CLAIM, required=("kind", "tool"))
        if claim.get("kind") == "count" and claim.get("count") is None:
            problems.add(f"{path}.count", "is required for a count claim")


# --- size ---------------------------------------------------------------------------------
# What a service caps before it stores or checks a conversation (the suite itself takes any
# size): read from the payload as sent, before it is validated, so parts of the wrong shape
# count as nothing.


def _located_turns(data: Any) -> list[list[tuple[str, Any]]]:
    """The messages of a native payload turn by turn, each with its JSON path; a turn of the
    wrong shape holds none."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("turns"), list):
        return [
            [(f"$.turns[{t}].messages[{m}]", message) for m, message in enumerate(turn["messages"])]
            if isinstance(turn, dict) and isinstance(turn.get("messages"), list)
            else []
            for t, turn in enumerate(data["turns"])
        ]
    if not isinstance(data.get("messages"), list):
        return []
    located = [(f"$.messages[{m}]", message) for m, message in enumerate(data["messages"])]
    return split_into_turns(located, role=lambda item: _role(item[1]))


def size_of(data: Any) -> tuple[int, int]:
    """How many turns and messages a native payload holds."""
    turns = _located_turns(data)
    return len(turns), sum(len(turn) for turn in turns)


def _messages_with_paths(data: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    for turn in _located_turns(data):
        yield from ((path, message) for path, message in turn if isinstance(message, dict))


def tool_json_deeper_than(data: Any, max_depth: int) -> list[tuple[str, int]]:
    """The tool calls' arguments (JSON text or JSON) and tool results whose JSON nests deeper
    than ``max_depth``, each with its path and its ``json_depth``."""
    found: list[tuple[str, int]] = []
    for path, message in _messages_with_paths(data):
        calls = message.get("tool_calls")
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if (depth := json_depth(arguments, max_depth)) > max_depth:
                found.append((f"{path}.tool_calls[{j}].function.arguments", depth))
        if (depth := json_depth(_text_of(message, "tool"), max_depth)) > max_depth:
            found.append((f"{path}.content", depth))
    return found


def answers_longer_than(data: Any, max_bytes: int) -> list[tuple[str, int]]:
    """The assistant messages whose text is over ``max_bytes`` bytes of UTF-8, with path and size."""
    found: list[tuple[str, int]] = []
    for path, message in _messages_with_paths(data):
        text = _text_of(message, "assistant") or ""
        # A character is at most 4 bytes: only a text that could be too long is encoded.
        if len(text) * 4 > max_bytes and (size := len(text.encode("utf-8", "surrogatepass"))) > max_bytes:
            found.append((f"{path}.content", size))
    return found


def _text_of(message: dict[str, Any], role: str) -> str | None:
    """The text of a message of ``role`` whose content is text or parts; None for any other."""
    content = message.get("content")
    return content_text(content) if message.get("role") == role and isinstance(content, (str, list)) else None


# A string, or what is left of one that is cut off: it matches wherever a quote stands, and
# never gives back what it took (a cut-off string read again from each of its quotes would
# make one text cost its length squared).
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.S)


def json_depth(value: Any, stop: int) -> int:
    """How deep the arrays and objects of a JSON value nest (0 for none), counted no further
    than ``stop`` + 1. Text counts by the JSON value it starts with, as the checkers read it:
    from its brackets outside strings, not decoded, so JSON cut off or not quite valid counts."""
    if not isinstance(value, str):
        return max((depth for _, depth in containers(value, stop)), default=0)
    body = value.lstrip()
    if body[:1] not in ("[", "{"):
        return 0
    depth = deepest = 0
    for bracket in re.sub(r"[^\[\]{}]+", "", _JSON_STRING.sub("", body)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > stop or depth <= 0:
            break  # deep enough, or the end of the value (what follows it is not read)
    return deepest


# --- canonical form -----------------------------------------------------------------------


def canonical(data: Any) -> dict[str, Any]:
    """The one stored serialization of a valid payload: turns, known keys, string arguments."""
    if errors := validate(data):
        raise InvalidConversation(errors)
    given = data.get("turns") or [{"messages": group} for group in split_into_turns(data["messages"])]
    kept = ("tools_offered", "receipts", "claims", "negative_claims")
    turns = [
        {"messages": [_canonical_message(m) for m in turn["messages"]]}
        | {key: turn[key] for key in kept if turn.get(key) is not None}
        for turn in given
    ]
    agent = data.get("agent") or {}
    return {
        "external_id": data["external_id"],
        "title": data.get("title") or "",
        "agent": {"name": agent.get("name") or "", "model": agent.get("model") or ""},
        "started_at": data.get("started_at"),
        "metadata": data.get("metadata") or {},
        "system": data.get("system") or "",
        "receipts_complete": data.get("receipts_complete", True) is not False,
        "turns": turns,
    }


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def split_into_turns[T](messages: list[T], role: Callable[[T], Any] = _role) -> list[list[T]]:
    """A flat list becomes turns at each user message; anything before the first joins it."""
    users = [i for i, message in enumerate(messages) if role(message) == "user"]
    bounds = [0, *users[1:], len(messages)]
    return [messages[start:end] for start, end in pairwise(bounds)] if messages else []


def _canonical_message(message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [_canonical_call(call) for call in message["tool_calls"]]
    if message["role"] == "tool":
        out["tool_call_id"] = message["tool_call_id"]
    return out | ({"is_error": True} if message.get("is_error") else {})


def _canonical_call(call: dict[str, Any]) -> dict[str, Any]:
    name, arguments = call["function"]["name"], compact_json(call["function"].get("arguments", ""))
    return {"id": call["id"], "type": "function", "function": {"name": name, "arguments": arguments}}


def compact_json(value: Any) -> str:
    """A string stays as written; an object or list becomes compact JSON, keys in order."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _text_part(part: dict[str, Any]) -> Any:
    return part.get("text") if part.get("type") == "text" else None


def content_text(content: Any, part_text: Callable[[dict[str, Any]], Any] = _text_part) -> str:
    """The text of a message's content: a string as is, a list's text parts joined by newlines
    (``part_text`` reads a part's text, not a string where the part has none)."""
    if not isinstance(content, list):
        return "" if content is None else str(content)
    texts = [part_text(part) for part in content if isinstance(part, dict)]
    return "\n".join(text for text in texts if isinstance(text, str))


# --- parsing ------------------------------------------------------------------------------


def parse(data: Any) -> Conversation:
    """Validate, canonicalize and build the frozen conversation the checkers read."""
    return from_canonical(canonical(data))


def from_canonical(doc: dict[str, Any]) -> Conversation:
    """The frozen conversation of a document already canonical (as stored), not validated again."""
    handles = count(1)  # a receipt given no handle is r1, r2, … in conversation order
    turns = tuple(_build_turn(i, turn, handles) for i, turn in enumerate(doc["turns"]))
    return Conversation(
        external_id=doc["external_id"],
        turns=turns,
        agent_model=doc["agent"]["model"],
        system=doc["system"],
        receipts_complete=doc["receipts_complete"],
    )


def _build_turn(index: int, turn: dict[str, Any], handles: Iterator[int]) -> Turn:
    messages = tuple(_build_message(i, m) for i, m in enumerate(turn["messages"]))
    answers = [i for i, m in enumerate(messages) if m.role == "assistant" and m.text.strip()]
    answer_index = answers[-1] if answers else None
    tools, given_claims = turn.get("tools_offered"), turn.get("claims")
    tools_offered = None if tools is None else tuple(t["name"] if isinstance(t, dict) else t for t in tools)
    described = [t for t in tools or () if isinstance(t, dict) and isinstance(t.get("parameters"), dict)]
    return Turn(
        index=index,
        messages=messages,
        tools_offered=tools_offered,
        tool_parameters={t["name"]: t["parameters"] for t in described},
        receipts=_receipts(messages, turn.get("receipts"), handles),
        claims=None if given_claims is None else tuple(_claim(c) for c in given_claims),
        negative_claims=tuple(turn.get("negative_claims") or ()),
        answer=messages[answer_index].text if answer_index is not None else "",
        answer_index=answer_index,
    )


def _claim(c: dict[str, Any]) -> ToolClaim:
    return ToolClaim(c["kind"], c["tool"], c.get("call_id"), c.get("count"), c.get("text"))


def _build_message(index: int, message: dict[str, Any]) -> Message:
    calls = message.get("tool_calls") or ()
    return Message(
        role=message["role"],
        text=content_text(message.get("content")),
        content=message.get("content"),
        tool_calls=tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"], index) for c in calls
        ),
        tool_call_id=message.get("tool_call_id"),
        is_error=bool(message.get("is_error")),
    )


# --- receipts -----------------------------------------------------------------------------
# A failure written as text (amendment 1.1): a short message that opens with one of these.
_ERROR_TEXT = re.compile(
    r"\s*(?:error\b\s*:|an error occurred\b|exception\s*:|traceback \(most recent call last\))", re.I
)
_FAILED_STATUS = frozenset(["error", "failed", "failure", "fail", "denied", "rejected", "refused"])


def is_error_shaped(text: str, value: Any) -> bool:
    """Whether a tool result reports that the call failed: an object with a non-empty ``error``
    or a ``status`` that says so; a short text that opens with "Error:" or "An error occurred"
    (the Agents SDK's fixed "An error occurred while running the tool. Please try again.").
    Data that mentions failures ("Failed logins: 3") is not one."""
    if isinstance(value, dict):
        status = value.get("status")
        failed = isinstance(status, str) and status.strip().lower() in _FAILED_STATUS
        return value.get("error") not in (None, False, "", [], {}) or failed
    return value is None and len(text) <= 2000 and bool(_ERROR_TEXT.match(text))


def _receipts(
    messages: tuple[Message, ...], given: list[dict[str, Any]] | None, handles: Iterator[int]
) -> tuple[Receipt, ...]:
    """The turn's receipts: those given, each filled in from the result of the call it records,
    else one derived from each tool message and the call it answers."""
    answers = answered_calls(messages)
    if given is None:
        tools = [
            ({"call_id": m.tool_call_id, "tool": answers[i].tool if i in answers else ""}, m)
            for i, m in enumerate(messages)
            if m.role == "tool"
        ]
        return tuple(_receipt(raw, result, next(handles), derived=True) for raw, result in tools)
    result_of = {call: messages[i] for i, call in answers.items()}
    asked = (c for m in messages for c in m.tool_calls)
    calls = by_occurrence((raw.get("call_id") for raw in given), asked, lambda c: c.call_id)
    paired = zip(given, [result_of.get(c) if c is not None else None for c in calls], strict=True)
    return tuple(_receipt(raw, result, next(handles), derived=False) for raw, result in paired)


def _receipt(raw: dict[str, Any], result: Message | None, number: int, derived: bool) -> Receipt:
    """A receipt as given, filled in where it is silent from what the result of its call says."""
    rows = result.rows if result is not None else None
    ok, outcome = raw.get("ok"), raw.get("outcome")
    if ok is None and outcome is not None:
        ok = outcome == "ok"
    elif ok is None:
        ok = result is None or not (result.is_error or is_error_shaped(result.text, result.value))
    return Receipt(
        call_id=raw.get("call_id"),
        tool=raw["tool"],
        ok=bool(ok),
        outcome=outcome or ("ok" if ok else "error"),
        result_count=raw["result_count"] if "result_count" in raw else None if rows is None else len(rows),
        effect=raw.get("effect") or "unknown",
        emptiness=raw.get("emptiness") or ("unknown" if rows is None else "non-empty" if rows else "empty"),
        scope=raw.get("scope"),
        handle=raw.get("handle") or f"r{number}",
        dispatched=raw.get("dispatched", True) is not False,
        trusted=raw.get("trusted", True) is not False,
        at=raw.get("at"),
        derived=derived,
    )
