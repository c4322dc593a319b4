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
from collections.abc import Callable
from typing import Any

from .pairing import Waiting, answered_calls, by_occurrence
from .types import Conversation, Message, Receipt, ToolCall, ToolClaim, Turn

ROLES = ("system", "user", "assistant", "tool")
OUTCOMES = ("ok", "error", "denied")
EFFECTS = ("read", "write", "unknown")
EMPTINESS = ("non-empty", "declared-absent", "empty", "unknown")
CLAIM_KINDS = ("invoked", "count", "absence")
MAX_EXTERNAL_ID = 255


class InvalidConversation(ValueError):
    """The payload is not a conversation; ``errors`` lists each problem with its path."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{e['path']}: {e['message']}" for e in errors))
        self.errors = errors


# --- validation ---------------------------------------------------------------------------


class _Problems:
    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append({"path": path, "message": message})

    def optional(self, obj: dict[str, Any], key: str, path: str, kinds: tuple[type, ...], what: str) -> None:
        if key in obj and obj[key] is not None and not _is(obj[key], kinds):
            self.add(f"{path}.{key}", f"must be {what}")

    def flags(self, obj: dict[str, Any], path: str, *keys: str) -> None:
        for key in keys:
            self.optional(obj, key, path, (bool,), "true or false")

    def each(self, obj: dict[str, Any], key: str, path: str, what: str, check: Callable[..., None]) -> None:
        """``obj[key]``, where given, is a list whose items ``check`` reads at their paths."""
        items = obj.get(key)
        if items is not None and not isinstance(items, list):
            self.add(f"{path}.{key}", what)
        for j, item in enumerate(items if isinstance(items, list) else ()):
            check(item, f"{path}.{key}[{j}]", self)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    # bool is an int in Python; a count of `true` is not a count.
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


def _count(problems: _Problems, obj: dict[str, Any], key: str, path: str, what: str) -> None:
    if obj.get(key) is not None and (not _is(obj[key], (int,)) or obj[key] < 0):
        problems.add(f"{path}.{key}", f"must be a whole number of at least 0{what}")


_STARTED_AT = r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?"


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

    problems.optional(data, "title", "$", (str,), "a string")
    problems.optional(data, "system", "$", (str,), "a string")
    problems.optional(data, "metadata", "$", (dict,), "a JSON object")
    problems.flags(data, "$", "receipts_complete")
    started = data.get("started_at")
    if started is not None and (not isinstance(started, str) or not re.fullmatch(_STARTED_AT, started)):
        problems.add("$.started_at", "must be an ISO 8601 timestamp such as 2026-11-30T10:00:00Z")
    agent = data.get("agent")
    if agent is not None and not isinstance(agent, dict):
        problems.add("$.agent", 'must be an object like {"name": "…", "model": "…"}')
    elif agent is not None:
        problems.optional(agent, "name", "$.agent", (str,), "a string")
        problems.optional(agent, "model", "$.agent", (str,), "a string")

    if "turns" in data and "messages" in data:
        problems.add("$", "give either `turns` or a flat `messages` list, not both")
    elif "turns" in data:
        if not isinstance(data["turns"], list) or not data["turns"]:
            problems.add("$.turns", "must be a non-empty list of turns")
        else:
            problems.each(data, "turns", "$", "", _validate_turn)
    elif "messages" in data:
        _validate_messages(data["messages"], "$.messages", problems)
    else:
        problems.add("$.turns", "is required: a list of turns (or give a flat `messages` list)")
    if not problems.errors:
        _validate_call_ids(data, problems)
    return problems.errors


def _turns_with_paths(data: dict[str, Any]) -> list[list[tuple[str, dict[str, Any]]]]:
    """The messages of a well-formed payload, turn by turn, each with its JSON path."""
    if "turns" in data:
        return [
            [(f"$.turns[{t}].messages[{m}]", message) for m, message in enumerate(turn["messages"])]
            for t, turn in enumerate(data["turns"])
        ]
    located = [(f"$.messages[{m}]", message) for m, message in enumerate(data["messages"])]
    turns, start = [], 0
    for group in split_into_turns(data["messages"]):
        turns.append(located[start : start + len(group)])
        start += len(group)
    return turns


def _validate_call_ids(data: dict[str, Any], problems: _Problems) -> None:
    """Within a turn, each tool message answers a call of its turn made before it.

    A tool message answers the nearest earlier call of its id that is still unanswered
    (CONTRACT.md §6): models reuse an id once its call was answered, and such a
    conversation is accepted. Two things are still refused, each at its JSON path:

    - a call that takes the id of a call of its turn still waiting for its answer (two
      calls waiting under one id would leave it open which result answers which);
    - a tool message with no call of its id waiting for an answer in its turn, whether no
      call had that id or every such call was answered already.

    Ids may recur across turns (some runtimes number calls afresh each turn); a turn's
    results answer only that turn's calls.
    """
    for turn in _turns_with_paths(data):
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
    if not isinstance(turn, dict):
        problems.add(path, "must be an object with a `messages` list")
        return
    _validate_messages(turn.get("messages"), f"{path}.messages", problems)
    problems.each(
        turn, "tools_offered", path, 'must be a list of tool names or {"name": …} objects', _validate_tool
    )
    problems.each(turn, "receipts", path, "must be a list of receipts", _validate_receipt)
    problems.each(turn, "claims", path, "must be a list of claims", _validate_claim)
    if turn.get("negative_claims") is not None and not isinstance(turn["negative_claims"], list):
        # Entries are stored as sent, whatever their shape; only the list itself is required.
        problems.add(f"{path}.negative_claims", "must be a list (its entries are judged, not refused)")


def _validate_tool(tool: Any, path: str, problems: _Problems) -> None:
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        if "parameters" in tool and not isinstance(tool["parameters"], dict):
            problems.add(f"{path}.parameters", "must be a JSON Schema object")
    elif not isinstance(tool, str) or not tool:
        problems.add(path, 'must be a tool name or {"name": …, "parameters": {…}}')


def _validate_messages(messages: Any, path: str, problems: _Problems) -> None:
    if not isinstance(messages, list) or not messages:
        problems.add(path, "must be a non-empty list of messages")
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        _validate_message(message, f"{path}[{i}]", problems)


def _validate_message(message: Any, path: str, problems: _Problems) -> None:
    if not isinstance(message, dict):
        problems.add(path, 'must be an object like {"role": "user", "content": "…"}')
        return
    role = message.get("role")
    if role not in ROLES:
        problems.add(f"{path}.role", f"must be one of {', '.join(ROLES)}")
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        problems.add(
            f"{path}.content", 'must be a string, null, or a list of {"type": "text", "text": …} parts'
        )
    for j, part in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(part, dict):
            problems.add(f"{path}.content[{j}]", 'must be an object like {"type": "text", "text": "…"}')
        elif part.get("type") == "text" and not isinstance(part.get("text"), str):
            problems.add(f"{path}.content[{j}].text", "must be a string")
    if message.get("tool_calls") is not None and role != "assistant":
        problems.add(f"{path}.tool_calls", "only an assistant message may carry tool calls")
    else:
        problems.each(message, "tool_calls", path, "must be a list of tool calls", _validate_tool_call)
    if role == "tool" and not (isinstance(message.get("tool_call_id"), str) and message["tool_call_id"]):
        problems.add(f"{path}.tool_call_id", "is required on a tool message: the id of the call it answers")
    problems.flags(message, path, "is_error")


def _validate_tool_call(call: Any, path: str, problems: _Problems) -> None:
    if not isinstance(call, dict):
        problems.add(
            path, 'must be an object like {"id": "call-1", "function": {"name": "…", "arguments": "{…}"}}'
        )
        return
    if not isinstance(call.get("id"), str) or not call["id"]:
        problems.add(f"{path}.id", "is required: the call's id, which its tool message names")
    function = call.get("function")
    if not isinstance(function, dict):
        problems.add(f"{path}.function", 'must be an object like {"name": "…", "arguments": "{…}"}')
        return
    if not isinstance(function.get("name"), str) or not function["name"]:
        problems.add(f"{path}.function.name", "is required: the tool's name")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, (str, dict, list)):
        problems.add(f"{path}.function.arguments", "must be a JSON string (kept as written, even if invalid)")


def _validate_receipt(receipt: Any, path: str, problems: _Problems) -> None:
    if not isinstance(receipt, dict):
        problems.add(path, 'must be an object like {"call_id": "call-1", "tool": "search", "ok": true}')
        return
    if not isinstance(receipt.get("tool"), str) or not receipt["tool"]:
        problems.add(f"{path}.tool", "is required: the name of the tool that ran")
    if "call_id" in receipt and receipt["call_id"] is not None and not isinstance(receipt["call_id"], str):
        problems.add(f"{path}.call_id", "must be a string: the id of the call in the transcript")
    problems.flags(receipt, path, "ok", "dispatched", "trusted")
    problems.optional(receipt, "handle", path, (str,), "a citation handle such as r1")
    problems.optional(receipt, "at", path, (str,), "an ISO 8601 timestamp")
    for key, allowed in (("outcome", OUTCOMES), ("effect", EFFECTS), ("emptiness", EMPTINESS)):
        if key in receipt and receipt[key] is not None and receipt[key] not in allowed:
            problems.add(f"{path}.{key}", f"must be one of {', '.join(allowed)}")
    _count(problems, receipt, "result_count", path, ", or null when not recorded")
    scope = receipt.get("scope")
    if scope is not None and not isinstance(scope, dict):
        problems.add(
            f"{path}.scope", 'must be an object like {"filters": {"arg": "value"}, "complete": true}'
        )
    elif scope is not None:
        problems.optional(scope, "filters", f"{path}.scope", (dict,), "an object of argument: value")
        problems.flags(scope, f"{path}.scope", "complete")


def _validate_claim(claim: Any, path: str, problems: _Problems) -> None:
    if not isinstance(claim, dict):
        problems.add(path, 'must be an object like {"kind": "count", "tool": "search", "count": 3}')
        return
    if claim.get("kind") not in CLAIM_KINDS:
        problems.add(f"{path}.kind", f"must be one of {', '.join(CLAIM_KINDS)}")
    if not isinstance(claim.get("tool"), str) or not claim["tool"]:
        problems.add(f"{path}.tool", "is required: the tool the claim is about")
    problems.optional(claim, "call_id", path, (str,), "a string")
    problems.optional(claim, "text", path, (str,), "a string")
    _count(problems, claim, "count", path, "")
    if claim.get("kind") == "count" and claim.get("count") is None:
        problems.add(f"{path}.count", "is required for a count claim")


# --- size ---------------------------------------------------------------------------------
# What a service caps before it stores or checks a conversation (the suite itself takes any
# size): read from the payload as sent, before it is validated, so parts of the wrong shape
# count as nothing.


def size_of(data: Any) -> tuple[int, int]:
    """How many turns and messages a native payload holds (a flat list is split as
    ``split_into_turns`` splits it: at each user message after the first)."""
    if not isinstance(data, dict):
        return 0, 0
    if isinstance(data.get("turns"), list):
        turns = data["turns"]
        return len(turns), sum(len(t["messages"]) for t in turns if _has_list(t, "messages"))
    messages = data.get("messages")
    if not isinstance(messages, list):
        return 0, 0
    users = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")
    return (max(users, 1) if messages else 0), len(messages)


def _has_list(obj: Any, key: str) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get(key), list)


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
                depth = json_depth(arguments, max_depth)
            if depth > max_depth:
                found.append((f"{path}.tool_calls[{j}].function.arguments", depth))
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, (str, list)):
            depth = json_text_depth(content_text(content), max_depth)
            if depth > max_depth:
                found.append((f"{path}.content", depth))
    return found


def answers_longer_than(data: Any, max_bytes: int) -> list[tuple[str, int]]:
    """The assistant messages of a native payload whose text is more than ``max_bytes`` bytes
    of UTF-8, each with its path and its size."""
    found: list[tuple[str, int]] = []
    for path, message in _messages_with_paths(data):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, (str, list)):
            continue
        text = content_text(content)
        # A character is at most 4 bytes: only a text that could be too long is encoded.
        if len(text) * 4 > max_bytes and (size := len(text.encode("utf-8", "surrogatepass"))) > max_bytes:
            found.append((f"{path}.content", size))
    return found


def _messages_with_paths(data: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every message of a native payload that is an object, with its JSON path."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("turns"), list):
        located = [
            (f"$.turns[{t}].messages[{m}]", message)
            for t, turn in enumerate(data["turns"])
            if _has_list(turn, "messages")
            for m, message in enumerate(turn["messages"])
        ]
    elif isinstance(data.get("messages"), list):
        located = [(f"$.messages[{m}]", message) for m, message in enumerate(data["messages"])]
    else:
        return []
    return [(path, message) for path, message in located if isinstance(message, dict)]


def json_depth(value: Any, stop: int) -> int:
    """How deep the arrays and objects of a JSON value nest (the outermost is level 1, a
    scalar 0), counted no further than ``stop`` + 1; level by level, without recursion."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level and depth <= stop:
        depth += 1
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, (dict, list))
        ]
    return depth


# A string, or what is left of one that is cut off: it matches wherever a quote stands, and
# never gives back what it took (a cut-off string read again from each of its quotes would
# make one text cost its length squared).
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_text_depth(text: str, stop: int) -> int:
    """``json_depth`` of the JSON value ``text`` starts with (0 when it starts with no array
    or object), read from its brackets outside strings, without decoding it: JSON that is cut
    off or not quite valid counts too."""
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


def canonical(data: dict[str, Any]) -> dict[str, Any]:
    """The one stored serialization of a valid payload: turns, known keys, string arguments."""
    errors = validate(data)
    if errors:
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


def split_into_turns(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A flat list becomes turns at each user message; anything before the first joins it."""
    turns: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "user" and any(m.get("role") == "user" for m in current):
            turns.append(current)
            current = []
        current.append(message)
    if current:
        turns.append(current)
    return turns


def _canonical_turn(turn: dict[str, Any]) -> dict[str, Any]:
    kept = ("tools_offered", "receipts", "claims", "negative_claims")
    messages = [_canonical_message(m) for m in turn["messages"]]
    return {"messages": messages} | {key: turn[key] for key in kept if turn.get(key) is not None}


def _canonical_message(message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {
                    "name": call["function"]["name"],
                    "arguments": compact_json(call["function"].get("arguments", "")),
                },
            }
            for call in message["tool_calls"]
        ]
    if message["role"] == "tool":
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("is_error"):
        out["is_error"] = True
    return out


def compact_json(value: Any) -> str:
    """A string stays as written; an object or list becomes compact JSON, keys in order."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def content_text(content: Any) -> str:
    """The text of a message's content: a string as is, a list's text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return str(content)


# --- parsing ------------------------------------------------------------------------------


def parse(data: Any) -> Conversation:
    """Validate, canonicalize and build the frozen conversation the checkers read."""
    if not isinstance(data, dict):
        raise InvalidConversation(validate(data))
    return from_canonical(canonical(data))


def from_canonical(doc: dict[str, Any]) -> Conversation:
    """The frozen conversation of a document already in canonical form (as stored), without
    validating and canonicalizing it again."""
    handle_counter = [0]
    turns = tuple(_build_turn(i, turn, handle_counter) for i, turn in enumerate(doc["turns"]))
    return Conversation(
        external_id=doc["external_id"],
        turns=turns,
        title=doc["title"],
        agent_name=doc["agent"]["name"],
        agent_model=doc["agent"]["model"],
        started_at=doc["started_at"],
        metadata=doc["metadata"],
        system=doc["system"],
        receipts_complete=doc["receipts_complete"],
    )


def _build_turn(index: int, turn: dict[str, Any], handle_counter: list[int]) -> Turn:
    messages = tuple(_build_message(i, m) for i, m in enumerate(turn["messages"]))
    answers = [i for i, m in enumerate(messages) if m.role == "assistant" and m.text.strip()]
    offered, claims, given = turn.get("tools_offered"), turn.get("claims"), turn.get("receipts")
    return Turn(
        index=index,
        messages=messages,
        tools_offered=None
        if offered is None
        else tuple(t if isinstance(t, str) else t["name"] for t in offered),
        tool_parameters={
            t["name"]: t["parameters"]
            for t in offered or ()
            if isinstance(t, dict) and isinstance(t.get("parameters"), dict)
        },
        receipts=tuple(_receipts(messages, given, handle_counter)),
        receipts_given=given is not None,
        claims=None
        if claims is None
        else tuple(
            ToolClaim(c["kind"], c["tool"], c.get("call_id"), c.get("count"), c.get("text")) for c in claims
        ),
        negative_claims=tuple(turn.get("negative_claims") or ()),
        answer=messages[answers[-1]].text if answers else "",
        answer_index=answers[-1] if answers else None,
    )


def _build_message(index: int, message: dict[str, Any]) -> Message:
    calls = tuple(
        ToolCall(
            call_id=call["id"],
            tool=call["function"]["name"],
            arguments=call["function"]["arguments"],
            message_index=index,
        )
        for call in message.get("tool_calls") or ()
    )
    return Message(
        role=message["role"],
        text=content_text(message.get("content")),
        content=message.get("content"),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id"),
        is_error=bool(message.get("is_error")),
    )


# --- receipts -----------------------------------------------------------------------------


def result_facts(message: Message | None) -> dict[str, Any]:
    """What a tool message says about its call: success, row count and emptiness."""
    if message is None:
        return {"ok": True, "result_count": None, "emptiness": "unknown"}
    error = message.is_error or is_error_shaped(message.text, message.value)
    if (rows := message.rows) is None:
        return {"ok": not error, "result_count": None, "emptiness": "unknown"}
    return {"ok": not error, "result_count": len(rows), "emptiness": "non-empty" if rows else "empty"}


# A failure written as text (amendment 1.1): a short message that opens with one of these.
_ERROR_TEXT = re.compile(
    r"\s*(?:error\b\s*:|an error occurred\b|exception\s*:|traceback \(most recent call last\))", re.I
)
_FAILED_STATUS = frozenset(["error", "failed", "failure", "fail", "denied", "rejected", "refused"])
MAX_ERROR_TEXT = 2000


def is_error_shaped(text: str, value: Any) -> bool:
    """Whether a tool result reports that the call failed.

    An object with an ``error`` key (not an empty one) or a ``status`` that says it failed; a
    short text that opens with "Error:" or "An error occurred" (the Agents SDK's fixed
    "An error occurred while running the tool. Please try again."). A read whose data
    mentions failures ("Failed logins: 3") is not one.
    """
    if isinstance(value, dict):
        if "error" in value and value["error"] not in (None, False, "", [], {}):
            return True
        status = value.get("status")
        return isinstance(status, str) and status.strip().lower() in _FAILED_STATUS
    if value is not None:
        return False
    return len(text) <= MAX_ERROR_TEXT and bool(_ERROR_TEXT.match(text))


def _receipts(
    messages: tuple[Message, ...], given: list[dict[str, Any]] | None, counter: list[int]
) -> list[Receipt]:
    """The turn's receipts: those given, each filled in from the result of the call it
    records (the k-th receipt of an id records the k-th call of that id), else one derived
    from each tool message and the call it answers."""
    answers = answered_calls(messages)
    read: list[tuple[dict[str, Any], Message | None]]
    if given is None:  # none from the runtime: one per tool message, read from the transcript
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
    out: list[Receipt] = []
    for raw, result in read:
        counter[0] += 1
        # Where a receipt is silent, the transcript's reading of its result fills in.
        facts, outcome = result_facts(result), raw.get("outcome")
        if raw.get("ok") is not None:
            ok = bool(raw["ok"])
        else:
            ok = outcome == "ok" if outcome is not None else facts["ok"]
        out.append(
            Receipt(
                call_id=raw.get("call_id"),
                tool=raw["tool"],
                ok=ok,
                outcome=outcome or ("ok" if ok else "error"),
                result_count=raw["result_count"] if "result_count" in raw else facts["result_count"],
                effect=raw.get("effect") or "unknown",
                emptiness=raw.get("emptiness") or facts["emptiness"],
                scope=raw.get("scope"),
                handle=raw.get("handle") or f"r{counter[0]}",
                dispatched=raw.get("dispatched", True) is not False,
                trusted=raw.get("trusted", True) is not False,
                at=raw.get("at"),
                derived=given is None,
            )
        )
    return out
