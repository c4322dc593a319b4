"""A conversation that arrives in pieces: how a later payload extends a stored one.

Plain functions over canonical native documents (``checks.suite.conversation.canonical``),
used by ingestion for every way in:

- ``first_changed_turn``: the resending rule (CONTRACT.md §1, §6). A payload extends the
  stored conversation when every stored turn but the last is unchanged and the last stored
  turn is unchanged or *grows*: its messages are the first messages of the payload's same
  turn, and its receipts, claims and negative claims are each kept (or given more fields)
  and perhaps followed by more. The answer is the first turn to store again;
- ``merge_with_stored``: the same for OTLP, where each export carries the spans seen since
  the last one: the stored document with the export's messages and receipts added;
- ``messages_digest`` / ``prefix_digests``: what finds the stored conversation a model
  call's input continues, when each call is its own trace;
- ``ToolResult``, ``lone_tool_results`` and ``attach_tool_result``: a tool run exported in
  a trace of its own, put beside the call it answers in a stored conversation.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from checks.suite.pairing import answered_in_json

from . import otel
from .common import result_text

# The parts of a turn that may grow as it is resent: a list of entries, each kept or given
# more fields, perhaps followed by more.
GROWING = ("receipts", "claims", "negative_claims")


def messages_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every message of a document, turn after turn."""
    return [message for turn in document.get("turns") or () for message in turn["messages"]]


def _message_bytes(message: dict[str, Any]) -> bytes:
    return json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def messages_digest(messages: Iterable[dict[str, Any]]) -> str:
    """A digest of messages in order: equal for equal lists of canonical messages."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(_message_bytes(message))
    return digest.hexdigest()


def prefix_digests(messages: list[dict[str, Any]], limit: int) -> list[str]:
    """``messages_digest`` of each proper prefix of ``messages`` that ends after a message
    other than a user's (a stored conversation ends with what a model call or a tool run
    returned), the longest first, at most ``limit`` of them."""
    digest = hashlib.sha256()
    out: list[str] = []
    for message in messages[:-1]:
        digest.update(_message_bytes(message))
        if message.get("role") != "user":
            out.append(digest.hexdigest())
    return out[::-1][:limit]


# --- the resending rule ---------------------------------------------------------------------


def first_changed_turn(old: dict[str, Any], new: dict[str, Any]) -> int | None:
    """Where ``new`` extends the stored document ``old`` (turns only; the caller judges the
    header): the index of the first turn to store again (the last stored one when it grew,
    else the number of stored turns); None when ``new`` is not an extension."""
    old_turns, new_turns = old.get("turns") or [], new.get("turns") or []
    count = len(old_turns)
    if count == 0:
        return 0
    if len(new_turns) < count or old_turns[: count - 1] != new_turns[: count - 1]:
        return None
    last_old, last_new = old_turns[count - 1], new_turns[count - 1]
    if last_old == last_new:
        return count
    return count - 1 if turn_grows(last_old, last_new) else None


def turn_grows(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when ``new`` is the turn ``old`` with more after it: its messages first, the
    same tools offered (or some where none were said), and each receipt, claim and negative
    claim kept or given more fields, in the same place."""
    old_messages, new_messages = old["messages"], new["messages"]
    if new_messages[: len(old_messages)] != old_messages:
        return False
    if old.get("tools_offered") is not None and old.get("tools_offered") != new.get("tools_offered"):
        return False
    for key in GROWING:
        before, after = old.get(key), new.get(key)
        if before is None:
            continue
        if after is None or len(after) < len(before):
            return False
        if not all(_kept(a, b) for a, b in zip(before, after, strict=False)):
            return False
    return True


def _kept(before: Any, after: Any) -> bool:
    """An entry kept as it was, or given more fields (an object whose fields are all still there)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return all(key in after and after[key] == value for key, value in before.items())
    return bool(before == after)


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The JSON path of the first message (or turn) where ``new`` departs from ``old``."""
    old_turns, new_turns = old.get("turns") or [], new.get("turns") or []
    for t, (a, b) in enumerate(zip(old_turns, new_turns, strict=False)):
        for m, (x, y) in enumerate(zip(a["messages"], b["messages"], strict=False)):
            if x != y:
                return f"$.turns[{t}].messages[{m}]"
        if len(b["messages"]) < len(a["messages"]):
            return f"$.turns[{t}].messages[{len(b['messages'])}]"
        for key in ("tools_offered", *GROWING):
            if a.get(key) != b.get(key):
                return f"$.turns[{t}].{key}"
    if len(new_turns) < len(old_turns):
        return f"$.turns[{len(new_turns)}]"
    return "$"


# --- OTLP exports of one conversation --------------------------------------------------------


def merge_with_stored(stored: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """A later export's document, read as an extension of the stored one where it can be.

    Exporters send each span once, so an export carries the model calls and tool runs that
    ended since the last one; a model call's input carries the history. When the stored
    messages are the first messages of the export (the last stored turn perhaps extended,
    then perhaps new turns), the result is the stored document (its header, and its turns
    with the receipts of spans that came earlier) with the export's messages added to its
    last turn, that turn's receipts merged (a span's receipt fills in one named only by its
    call), and the export's further turns after it. An export whose messages the stored
    ones already hold (an earlier one arriving late) gives the stored document itself. Any
    other export is returned as it is, for the resending rule to judge.
    """
    old, new = stored.get("turns") or [], document.get("turns") or []
    if not old:
        return document
    old_messages, new_messages = messages_of(stored), messages_of(document)
    if len(new_messages) <= len(old_messages) and _same_messages(
        old_messages[: len(new_messages)], new_messages
    ):
        return stored
    count = len(old)
    if len(new) < count or not all(
        _same_messages(old[i]["messages"], new[i]["messages"])
        and (i == count - 1 or len(old[i]["messages"]) == len(new[i]["messages"]))
        for i in range(count)
    ):
        return document
    merged = dict(stored)
    merged["metadata"] = {**(document.get("metadata") or {}), **(stored.get("metadata") or {})}
    merged["turns"] = [*old[: count - 1], _merged_turn(old[count - 1], new[count - 1]), *new[count:]]
    return merged


def _same_messages(stored: list[dict[str, Any]], exported: list[dict[str, Any]]) -> bool:
    """True when the stored messages begin the exported ones. A tool message the stored
    one marks as failed (``is_error``, from its tool span) is the same message without the
    mark: the next model call's input carries the result, not the span's status."""
    if len(exported) < len(stored):
        return False
    return all(
        a == b
        or (
            a.get("is_error") and "is_error" not in b and {**a, "is_error": False} == {**b, "is_error": False}
        )
        for a, b in zip(stored, exported, strict=False)
    )


def _merged_turn(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The stored turn grown by the export's: the stored messages and the export's after
    them, and the receipts of both."""
    turn: dict[str, Any] = {"messages": [*old["messages"], *new["messages"][len(old["messages"]) :]]}
    for key in ("tools_offered", "claims", "negative_claims"):
        value = old.get(key) if old.get(key) is not None else new.get(key)
        if value is not None:
            turn[key] = value
    receipts = _merged_receipts(turn["messages"], old.get("receipts"), new.get("receipts"))
    if receipts is not None:
        turn["receipts"] = receipts
    return turn


def _merged_receipts(
    messages: list[dict[str, Any]], old: list[Any] | None, new: list[Any] | None
) -> list[Any] | None:
    """One receipt per tool message, in order, where either side gave receipts: the stored
    receipt of that call (the k-th of its id) filled in by the export's, else the export's,
    else one naming the call only (the transcript fills it in). Receipts no tool message
    answers (a runtime's record of calls the transcript does not show) follow, stored first."""
    if old is None:
        return new
    if new is None:
        new = []
    old_of, new_of = _by_call(old), _by_call(new)
    used: set[int] = set()
    answers = answered_in_json(messages)
    seen: dict[str, int] = {}
    out: list[Any] = []
    for i, message in enumerate(messages):
        if message.get("role") != "tool":
            continue
        call_id = message.get("tool_call_id")
        k = seen.get(call_id, 0) if isinstance(call_id, str) else 0
        if isinstance(call_id, str):
            seen[call_id] = k + 1
        before, after = old_of.get((call_id, k)), new_of.get((call_id, k))
        if before is not None and after is not None:
            used.update((id(before), id(after)))
            out.append({**after, **before})
        elif before is not None or after is not None:
            chosen = before if before is not None else after
            used.add(id(chosen))
            out.append(chosen)
        elif (call := answers.get(i)) is not None:
            out.append({"call_id": call_id, "tool": call["function"]["name"]})
    out.extend(r for r in [*old, *new] if id(r) not in used and r not in out)
    return out


def _by_call(receipts: list[Any]) -> dict[tuple[Any, int], Any]:
    """Each receipt under (its call id, how many of that id came before it)."""
    out: dict[tuple[Any, int], Any] = {}
    seen: dict[Any, int] = {}
    for receipt in receipts:
        if not isinstance(receipt, dict):
            continue
        call_id = receipt.get("call_id")
        k = seen.get(call_id, 0)
        seen[call_id] = k + 1
        out[(call_id, k)] = receipt
    return out


# --- tool runs exported on their own ---------------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """An ``execute_tool`` span with no chat span beside it: what it ran, and how it went."""

    name: str  # the conversation its spans name (gen_ai.conversation.id, else the trace)
    call_id: str
    tool: str
    content: str
    error: bool
    at: str | None
    agent: str  # gen_ai.agent.name, else the resource's service.name
    # No chat span came beside it. One that came without its messages (content recorded in
    # log records, or not at all) leaves the tool run to the conversation of its own name.
    alone: bool = True


def lone_tool_results(request: dict[str, Any], names: Iterable[str]) -> dict[str, list[ToolResult]]:
    """The tool spans of a decoded OTLP request that belong to the named conversations
    (those the reader could not build: no chat span of theirs came), by name, in start order.
    A span names its conversation as the reader groups spans: its own
    gen_ai.conversation.id, else one another span of its trace gives, else its trace."""
    wanted = set(names)
    if not wanted:
        return {}
    spans = otel.spans_of(request)
    by_trace: dict[str, str] = {}
    for span in spans:
        given = span.attributes.get("gen_ai.conversation.id")
        if isinstance(given, str) and given:
            by_trace.setdefault(span.trace_id, given)

    def name_of(span: otel.Span) -> str:
        given = span.attributes.get("gen_ai.conversation.id")
        return given if isinstance(given, str) and given else by_trace.get(span.trace_id, span.trace_id)

    chatted = {name_of(span) for span in spans if span.operation in otel.CHAT_OPERATIONS}
    out: dict[str, list[ToolResult]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        name = name_of(span)
        if span.operation != "execute_tool" or name not in wanted:
            continue
        call_id, tool = span.attributes.get("gen_ai.tool.call.id"), span.attributes.get("gen_ai.tool.name")
        result = span.attributes.get("gen_ai.tool.call.result")
        agent = span.attributes.get("gen_ai.agent.name") or span.resource.get("service.name")
        out.setdefault(name, []).append(
            ToolResult(
                name=name,
                call_id=call_id if isinstance(call_id, str) else "",
                tool=tool if isinstance(tool, str) else "",
                content=result_text(result) if result is not None else span.status_message,
                error=span.error,
                at=otel.iso(span.start) if span.start > 0 else None,
                agent=agent if isinstance(agent, str) else "",
                alone=name not in chatted,
            )
        )
    return out


def attach_tool_result(document: dict[str, Any], result: ToolResult) -> tuple[dict[str, Any], int] | None:
    """The document with a tool run put beside the call it answers (the latest call of its
    id): its result as the tool message where none answers the call yet, and its receipt
    (whether it failed, when it ran) filling in the call's. Returns the document and the
    index of the turn that changed, or None when no call of the document has that id."""
    if not result.call_id:
        return None
    turns = document.get("turns") or []
    for t in range(len(turns) - 1, -1, -1):
        messages = turns[t]["messages"]
        for m in range(len(messages) - 1, -1, -1):
            for call in messages[m].get("tool_calls") or ():
                if call["id"] == result.call_id:
                    out = copy.deepcopy(document)
                    out["turns"][t] = _with_tool_result(turns[t], m, call, result)
                    return out, t
    return None


def _with_tool_result(
    turn: dict[str, Any], asked_at: int, call: dict[str, Any], result: ToolResult
) -> dict[str, Any]:
    messages = list(turn["messages"])
    answers = answered_in_json(messages)
    answered_at = next((i for i, c in answers.items() if c is call), None)
    if answered_at is None:
        # After the message that asked, and after the answers to it already there.
        at = asked_at + 1
        while at < len(messages) and messages[at].get("role") == "tool":
            at += 1
        message: dict[str, Any] = {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
        if result.error:
            message["is_error"] = True
        messages.insert(at, message)
        answered_at = at
    grown = {**turn, "messages": messages}
    receipt: dict[str, Any] = {
        "call_id": result.call_id,
        "tool": result.tool or call["function"]["name"],
        "ok": not result.error,
        "outcome": "error" if result.error else "ok",
    }
    if result.at:
        receipt["at"] = result.at
    if turn.get("receipts") is None:
        # The turn's first receipt: every other answered call gets one naming it only, so
        # the transcript still fills those in (a turn with receipts derives none).
        answers = answered_in_json(messages)
        grown["receipts"] = [
            receipt
            if i == answered_at
            else {"call_id": messages[i].get("tool_call_id"), "tool": answers[i]["function"]["name"]}
            for i in sorted(answers)
        ]
    else:
        grown["receipts"] = _fill_receipt(list(turn["receipts"]), messages, answered_at, receipt)
    return grown


def _fill_receipt(
    receipts: list[Any], messages: list[dict[str, Any]], answered_at: int, receipt: dict[str, Any]
) -> list[Any]:
    """The turn's receipts with the call's (the k-th receipt of its id, as the call is the
    k-th answered call of its id) filled in by ``receipt``, or ``receipt`` added."""
    k = sum(
        1
        for i, message in enumerate(messages[:answered_at])
        if message.get("role") == "tool" and message.get("tool_call_id") == receipt["call_id"]
    )
    seen = 0
    for i, given in enumerate(receipts):
        if isinstance(given, dict) and given.get("call_id") == receipt["call_id"]:
            if seen == k:
                receipts[i] = {**receipt, **{key: v for key, v in given.items() if v is not None}}
                return receipts
            seen += 1
    receipts.append(receipt)
    return receipts
