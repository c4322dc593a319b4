"""Tool results paired with their calls when the producer lost the ids that pair them.

Lossy producers write a call and its result under different ids (the Responses API's
item id ``fc_…`` on the call, its ``call_…`` on the output), leave a call's id out, or name
no id on a result. ``pair_results`` keeps every result that answers a waiting call of its
turn by id, and gives any other the id of a waiting call of the same tool name, else the
first one still waiting: the order the calls were made in. The conversation's metadata
then says so (``PAIRING``), since such a pairing is an inference, not a record.
"""

from __future__ import annotations

from typing import Any

from checks.suite.conversation import split_into_turns

METADATA_KEY = "pairing"
BY_NAME_AND_ORDER = "by name and order"


def pair_results(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The messages with every call given an id and every tool message the id of a call of
    its turn it answers; True when some pairing was not by the ids as written."""
    inferred = False
    out: list[dict[str, Any]] = []
    for t, group in enumerate(split_into_turns(messages)):
        waiting: list[dict[str, Any]] = []
        for m, original in enumerate(group):
            message = dict(original)
            if message.get("tool_calls"):
                calls = []
                for c, call in enumerate(message["tool_calls"]):
                    call = dict(call)
                    if not (isinstance(call.get("id"), str) and call["id"]):
                        call["id"] = f"call-{t}-{m}-{c}"  # named here: the producer gave none
                        inferred = True
                    calls.append(call)
                message["tool_calls"] = calls
                waiting.extend(calls)
            elif message.get("role") == "tool":
                name = message.pop("name", None)
                call = _answered(waiting, message.get("tool_call_id"), name)
                if call is not None:
                    if call["id"] != message.get("tool_call_id"):
                        message["tool_call_id"] = call["id"]
                        inferred = True
                    waiting.remove(call)
            out.append(message)
    return out, inferred


def _answered(waiting: list[dict[str, Any]], call_id: Any, name: Any) -> dict[str, Any] | None:
    for call in waiting:
        if call["id"] == call_id:
            return call
    if isinstance(name, str) and name:
        for call in waiting:
            if _tool(call) == name:
                return call
    return waiting[0] if waiting else None


def _tool(call: dict[str, Any]) -> Any:
    function = call.get("function")
    return function.get("name") if isinstance(function, dict) else None
