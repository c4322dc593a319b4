"""Reading a conversation in the native format (CONTRACT.md §1).

Three steps, each usable alone:

- ``validate`` lists every problem with its JSON path and what would be accepted, so the
  API can refuse a payload in one answer instead of one error at a time;
- ``canonical`` turns a valid payload into the one serialization the project stores
  (flat ``messages`` split into turns, tool arguments as strings, known keys only), so the
  same conversation compares equal whichever way it was sent;
- ``parse`` builds the frozen ``Conversation`` the checkers read, deriving receipts where
  a turn gives none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any

from .pairing import Waiting, answered_calls, by_occurrence
from .types import Conversation, Message, Receipt, ToolCall, ToolClaim, Turn, containers

# --- validation ---------------------------------------------------------------------------
# Each table holds the fields an object may give: key -> (whether a value is accepted, the
# problem where it is not). A field given as null is never a problem; fields listed in the
# order they are reported.

type _Fields = dict[str, tuple[Callable[[Any], bool], str]]


def _kind(*kinds: type) -> Callable[[Any], bool]:
    # bool is an int in Python; a count of `true` is not a count.
    return lambda value: isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _one_of(*words: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: value in words), f"must be one of {', '.join(words)}"


def _count(what: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: _kind(int)(value) and value >= 0), f"must be a whole number of at least 0{what}"


ROLES = ("system", "user", "assistant", "tool")
CLAIM_KINDS = ("invoked", "count", "absence")
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
_AGENT: _Fields = {"name": _STRING, "model": _STRING}
_CONTENT: _Fields = {
    "content": (_kind(str, list), 'must be a string, null, or a list of {"type": "text", "text": …} parts')
}
_FUNCTION: _Fields = {
    "arguments": (_kind(str, dict, list), "must be a JSON string (kept as written, even if invalid)")
}
_RECEIPT: _Fields = {
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
_CLAIM: _Fields = {"call_id": _STRING, "text": _STRING, "count": _count("")}
# The entries of negative claims are stored as sent, whatever their shape.
_NEGATIVE_CLAIMS: _Fields = {
    "negative_claims": (_kind(list), "must be a list (its entries are judged, not refused)")
}


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

    def is_object(self, value: Any, path: str, message: str) -> bool:
        if not isinstance(value, dict):
            self.add(path, message)
        return isinstance(value, dict)

    def like(self, value: Any, path: str, example: str) -> bool:
        """Whether ``value`` is a JSON object; where it is not, ``example`` shows one."""
        return self.is_object(value, path, f"must be an object like {example}")

    def fields(self, obj: dict[str, Any], path: str, fields: _Fields) -> None:
        for key, (accepted, message) in fields.items():
            if obj.get(key) is not None and not accepted(obj[key]):
                self.add(f"{path}.{key}", message)

    def name(self, obj: dict[str, Any], key: str, path: str, message: str) -> None:
        """``obj[key]`` is required: a string, not empty."""
        if not isinstance(obj.get(key), str) or not obj[key]:
            self.add(f"{path}.{key}", message)

    def each(self, obj: dict[str, Any], key: str, path: str, what: str, check: Callable[..., None]) -> None:
        """``obj[key]``, where given, is a list whose items ``check`` reads at their paths."""
        items = obj.get(key)
        if items is not None and not isinstance(items, list):
            self.add(f"{path}.{key}", what)
        for j, item in enumerate(items if isinstance(items, list) else ()):
            check(item, f"{path}.{key}[{j}]", self)


def validate(data: Any) -> list[dict[str, str]]:
    """Every problem of a native payload, each with its JSON path; empty when it is valid."""
    problems = _Problems()
    if not problems.is_object(
        data, "$", "must be a JSON object with `external_id` and `turns` (or `messages`)"
    ):
        return problems.errors
    external_id = data.get("external_id")
    if not isinstance(external_id, str) or not external_id.strip():
        problems.add("$.external_id", "is required: a non-empty string that names the conversation")
    elif len(external_id) > MAX_EXTERNAL_ID:
        problems.add("$.external_id", f"must be at most {MAX_EXTERNAL_ID} characters")
    problems.fields(data, "$", _CONVERSATION)
    if isinstance(data.get("agent"), dict):
        problems.fields(data["agent"], "$.agent", _AGENT)

    if "turns" in data and "messages" in data:
        problems.add("$", "give either `turns` or a flat `messages` list, not both")
    elif "turns" in data:
        _validate_list(data["turns"], "$.turns", "turns", _validate_turn, problems)
    elif "messages" in data:
        _validate_list(data["messages"], "$.messages", "messages", _validate_message, problems)
    else:
        problems.add("$.turns", "is required: a list of turns (or give a flat `messages` list)")
    if not problems.errors:
        _validate_call_ids(data, problems)
    return problems.errors


def _validate_call_ids(data: dict[str, Any], problems: _Problems) -> None:
    """Within a turn, each tool message answers a call of its turn made before it, as
    ``pairing`` pairs them (CONTRACT.md §6). Refused, each at its JSON path: a call that
    takes the id of a call of its turn still waiting for its answer (which result answers
    which would be left open), and a tool message no call of its turn waits on. Ids may
    recur across turns (some runtimes number calls afresh each turn)."""
    for turn in _located_turns(data):
        waiting: Waiting[str] = Waiting()
        for path, message in turn:
            for j, call in enumerate(message.get("tool_calls") or ()):
                call_path = f"{path}.tool_calls[{j}].id"
                earlier = waiting.call(call["id"], call_path)
                if earlier is not None:
                    problems.add(
                        call_path,
                        f"repeats the id of {earlier}, which has no answer yet; an id may be reused "
                        "only once its call was answered",
                    )
            if message["role"] == "tool" and waiting.answer(message["tool_call_id"]) is None:
                problems.add(
                    f"{path}.tool_call_id",
                    f"answers no call of its turn still waiting for a result ({message['tool_call_id']!r}); "
                    "give the id of the assistant's call this message answers",
                )


def _validate_turn(turn: Any, path: str, problems: _Problems) -> None:
    if not problems.is_object(turn, path, "must be an object with a `messages` list"):
        return
    _validate_list(turn.get("messages"), f"{path}.messages", "messages", _validate_message, problems)
    offered = 'must be a list of tool names or {"name": …} objects'
    problems.each(turn, "tools_offered", path, offered, _validate_tool)
    problems.each(turn, "receipts", path, "must be a list of receipts", _validate_receipt)
    problems.each(turn, "claims", path, "must be a list of claims", _validate_claim)
    problems.fields(turn, path, _NEGATIVE_CLAIMS)


def _validate_tool(tool: Any, path: str, problems: _Problems) -> None:
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        if "parameters" in tool and not isinstance(tool["parameters"], dict):
            problems.add(f"{path}.parameters", "must be a JSON Schema object")
    elif not isinstance(tool, str) or not tool:
        problems.add(path, 'must be a tool name or {"name": …, "parameters": {…}}')


def _validate_list(items: Any, path: str, what: str, check: Callable[..., None], problems: _Problems) -> None:
    """``items`` is required: a non-empty list whose items ``check`` reads at their paths."""
    if not isinstance(items, list) or not items:
        problems.add(path, f"must be a non-empty list of {what}")
    for i, item in enumerate(items if isinstance(items, list) else ()):
        check(item, f"{path}[{i}]", problems)


def _validate_message(message: Any, path: str, problems: _Problems) -> None:
    if not problems.like(message, path, '{"role": "user", "content": "…"}'):
        return
    role = message.get("role")
    if role not in ROLES:
        problems.add(f"{path}.role", f"must be one of {', '.join(ROLES)}")
    problems.fields(message, path, _CONTENT)
    content = message.get("content")
    for j, part in enumerate(content if isinstance(content, list) else ()):
        at = f"{path}.content[{j}]"
        if problems.like(part, at, '{"type": "text", "text": "…"}'):
            if part.get("type") == "text" and not isinstance(part.get("text"), str):
                problems.add(f"{at}.text", "must be a string")
    if message.get("tool_calls") is not None and role != "assistant":
        problems.add(f"{path}.tool_calls", "only an assistant message may carry tool calls")
    else:
        problems.each(message, "tool_calls", path, "must be a list of tool calls", _validate_tool_call)
    if role == "tool":
        answered = "is required on a tool message: the id of the call it answers"
        problems.name(message, "tool_call_id", path, answered)
    problems.fields(message, path, {"is_error": _FLAG})


def _validate_tool_call(call: Any, path: str, problems: _Problems) -> None:
    function = '{"name": "…", "arguments": "{…}"}'
    if not problems.like(call, path, f'{{"id": "call-1", "function": {function}}}'):
        return
    problems.name(call, "id", path, "is required: the call's id, which its tool message names")
    if problems.like(call.get("function"), f"{path}.function", function):
        problems.name(call["function"], "name", f"{path}.function", "is required: the tool's name")
        problems.fields(call["function"], f"{path}.function", _FUNCTION)


def _validate_receipt(receipt: Any, path: str, problems: _Problems) -> None:
    if problems.like(receipt, path, '{"call_id": "call-1", "tool": "search", "ok": true}'):
        problems.name(receipt, "tool", path, "is required: the name of the tool that ran")
        problems.fields(receipt, path, _RECEIPT)
        if isinstance(receipt.get("scope"), dict):
            problems.fields(receipt["scope"], f"{path}.scope", _SCOPE)


def _validate_claim(claim: Any, path: str, problems: _Problems) -> None:
    if not problems.like(claim, path, '{"kind": "count", "tool": "search", "count": 3}'):
        return
    if claim.get("kind") not in CLAIM_KINDS:
        problems.add(f"{path}.kind", f"must be one of {', '.join(CLAIM_KINDS)}")
    problems.name(claim, "tool", path, "is required: the tool the claim is about")
    problems.fields(claim, path, _CLAIM)
    if claim.get("kind") == "count" and claim.get("count") is None:
        problems.add(f"{path}.count", "is required for a count claim")


# --- size ---------------------------------------------------------------------------------
# What a service caps before it stores or checks a conversation (the suite itself takes any
# size): read from the payload as sent, before it is validated, so parts of the wrong shape
# count as nothing.


def _located_turns(data: Any) -> list[list[tuple[str, Any]]]:
    """The messages of a native payload turn by turn (a flat list split as ``split_into_turns``
    splits it), each with its JSON path; a turn of the wrong shape holds none."""
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
    """The tool calls' arguments and the tool results of a native payload whose JSON nests
    arrays and objects more than ``max_depth`` levels deep, each with its path and its depth
    (counted no further than ``max_depth`` + 1). Arguments may be JSON text or JSON; a result
    counts by the JSON value its text starts with, as the checkers read it."""
    found: list[tuple[str, int]] = []
    for path, message in _messages_with_paths(data):
        calls = message.get("tool_calls")
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, str):
                depth = json_text_depth(arguments, max_depth)
            else:
                depth = max((depth for _, depth in containers(arguments, max_depth)), default=0)
            if depth > max_depth:
                found.append((f"{path}.tool_calls[{j}].function.arguments", depth))
        result = _text_of(message, "tool")
        if result is not None and (depth := json_text_depth(result, max_depth)) > max_depth:
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
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_text_depth(text: str, stop: int) -> int:
    """How deep the arrays and objects of the JSON value ``text`` starts with nest (0 when
    it starts with no array or object), counted no further than ``stop`` + 1: read from its
    brackets outside strings, without decoding it, so JSON cut off or not quite valid counts."""
    body = text.lstrip()
    if body[:1] not in ("[", "{"):
        return 0
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", body)):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop:
                    break
        else:
            depth -= 1
            if depth <= 0:
                break  # the end of the value; what follows it is not read
    return deepest


# --- canonical form -----------------------------------------------------------------------


def canonical(data: Any) -> dict[str, Any]:
    """The one stored serialization of a valid payload: turns, known keys, string arguments."""
    if errors := validate(data):
        raise InvalidConversation(errors)
    given = data.get("turns") or [{"messages": group} for group in split_into_turns(data["messages"])]
    turns = [_canonical_turn(turn) for turn in given]
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
    """A flat list becomes turns at each user message; anything before the first joins it.
    ``role`` reads a message's role (a message that is no object has none)."""
    turns: list[list[T]] = [[]]
    user_seen = False
    for message in messages:
        if role(message) == "user":
            if user_seen:
                turns.append([])
            user_seen = True
        turns[-1].append(message)
    return turns if messages else []


def _canonical_turn(turn: dict[str, Any]) -> dict[str, Any]:
    kept = ("tools_offered", "receipts", "claims", "negative_claims")
    messages = [_canonical_message(m) for m in turn["messages"]]
    return {"messages": messages} | {key: turn[key] for key in kept if turn.get(key) is not None}


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


def content_text(content: Any) -> str:
    """The text of a message's content: a string as is, a list's text parts joined by newlines."""
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return "" if content is None else str(content)


# --- parsing ------------------------------------------------------------------------------


def parse(data: Any) -> Conversation:
    """Validate, canonicalize and build the frozen conversation the checkers read."""
    return from_canonical(canonical(data))


def from_canonical(doc: dict[str, Any]) -> Conversation:
    """The frozen conversation of a document already canonical (as stored), not validated again."""
    handles = count(1)  # a receipt given no handle is r1, r2, … in conversation order
    return Conversation(
        external_id=doc["external_id"],
        turns=tuple(_build_turn(i, turn, handles) for i, turn in enumerate(doc["turns"])),
        agent_model=doc["agent"]["model"],
        system=doc["system"],
        receipts_complete=doc["receipts_complete"],
    )


def _build_turn(index: int, turn: dict[str, Any], handles: Iterator[int]) -> Turn:
    messages = tuple(_build_message(i, m) for i, m in enumerate(turn["messages"]))
    answer = max(
        (i for i, m in enumerate(messages) if m.role == "assistant" and m.text.strip()), default=None
    )
    offered, claims, given = turn.get("tools_offered"), turn.get("claims"), turn.get("receipts")
    names = None if offered is None else tuple(t if isinstance(t, str) else t["name"] for t in offered)
    return Turn(
        index=index,
        messages=messages,
        tools_offered=names,
        tool_parameters={
            t["name"]: t["parameters"]
            for t in offered or ()
            if isinstance(t, dict) and isinstance(t.get("parameters"), dict)
        },
        receipts=_receipts(messages, given, handles),
        claims=None
        if claims is None
        else tuple(
            ToolClaim(c["kind"], c["tool"], c.get("call_id"), c.get("count"), c.get("text")) for c in claims
        ),
        negative_claims=tuple(turn.get("negative_claims") or ()),
        answer=messages[answer].text if answer is not None else "",
        answer_index=answer,
    )


def _build_message(index: int, message: dict[str, Any]) -> Message:
    return Message(
        role=message["role"],
        text=content_text(message.get("content")),
        content=message.get("content"),
        tool_calls=tuple(
            ToolCall(call["id"], call["function"]["name"], call["function"]["arguments"], index)
            for call in message.get("tool_calls") or ()
        ),
        tool_call_id=message.get("tool_call_id"),
        is_error=bool(message.get("is_error")),
    )


# --- receipts -----------------------------------------------------------------------------


def result_facts(message: Message | None) -> tuple[bool, int | None, str]:
    """What a tool message says about its call: success, row count and emptiness."""
    if message is None:
        return True, None, "unknown"
    ok = not message.is_error and not is_error_shaped(message.text, message.value)
    if (rows := message.rows) is None:
        return ok, None, "unknown"
    return ok, len(rows), "non-empty" if rows else "empty"


# A failure written as text (amendment 1.1): a short message that opens with one of these.
_ERROR_TEXT = re.compile(
    r"\s*(?:error\b\s*:|an error occurred\b|exception\s*:|traceback \(most recent call last\))", re.I
)
_FAILED_STATUS = frozenset(["error", "failed", "failure", "fail", "denied", "rejected", "refused"])
MAX_ERROR_TEXT = 2000


def is_error_shaped(text: str, value: Any) -> bool:
    """Whether a tool result reports that the call failed: an object with an ``error`` key (not
    an empty one) or a ``status`` that says so; a short text that opens with "Error:" or "An
    error occurred" (the Agents SDK's fixed "An error occurred while running the tool. Please
    try again."). Data that mentions failures ("Failed logins: 3") is not one."""
    if isinstance(value, dict):
        if "error" in value and value["error"] not in (None, False, "", [], {}):
            return True
        status = value.get("status")
        return isinstance(status, str) and status.strip().lower() in _FAILED_STATUS
    return value is None and len(text) <= MAX_ERROR_TEXT and bool(_ERROR_TEXT.match(text))


def _receipts(
    messages: tuple[Message, ...], given: list[dict[str, Any]] | None, handles: Iterator[int]
) -> tuple[Receipt, ...]:
    """The turn's receipts: those given, each filled in where it is silent from the result of
    the call it records (the k-th receipt of an id records the k-th call of that id), else
    one derived from each tool message and the call it answers."""
    answers = answered_calls(messages)
    read: list[tuple[dict[str, Any], Message | None]]
    if given is None:
        read = [
            ({"call_id": m.tool_call_id, "tool": answers[i].tool if i in answers else ""}, m)
            for i, m in enumerate(messages)
            if m.role == "tool"
        ]
    else:
        result_of = {call: messages[i] for i, call in answers.items()}
        calls = by_occurrence(
            (raw.get("call_id") for raw in given),
            (c for m in messages for c in m.tool_calls),
            lambda c: c.call_id,
        )
        read = [
            (raw, result_of.get(call) if call is not None else None)
            for raw, call in zip(given, calls, strict=True)
        ]
    out = []
    for raw, result in read:
        result_ok, result_count, emptiness = result_facts(result)
        outcome, ok, number = raw.get("outcome"), raw.get("ok"), next(handles)
        if ok is None:
            ok = outcome == "ok" if outcome is not None else result_ok
        out.append(
            Receipt(
                call_id=raw.get("call_id"),
                tool=raw["tool"],
                ok=bool(ok),
                outcome=outcome or ("ok" if ok else "error"),
                result_count=raw["result_count"] if "result_count" in raw else result_count,
                effect=raw.get("effect") or "unknown",
                emptiness=raw.get("emptiness") or emptiness,
                scope=raw.get("scope"),
                handle=raw.get("handle") or f"r{number}",
                dispatched=raw.get("dispatched", True) is not False,
                trusted=raw.get("trusted", True) is not False,
                at=raw.get("at"),
                derived=given is None,
            )
        )
    return tuple(out)
