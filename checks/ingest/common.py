"""What the adapters share: the sender's id, the header keys they pass on, and the text of parts.

Every adapter ends in the same native shape, so the pieces that decide how a value is
written down (a tool result that arrived as an object, a list of text blocks, a model name)
live here once; the same conversation then reads the same whichever format carried it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checks.suite.conversation import ROLES, compact_json, content_text, split_into_turns

# At most this many problems are listed in one refusal: the first ones are enough to act on.
MAX_PROBLEMS = 20


class Unreadable(ValueError):
    """A payload in a known format holding something its adapter does not understand.

    Raised instead of dropping it: ``errors`` name each part by its JSON path in the payload
    as sent, with what was expected there, so the sender can fix or report it.
    """

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{e['path']}: {e['message']}" for e in errors))
        self.errors = errors


class Problems:
    """What an adapter could not read, collected as it goes and raised once at the end."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        if len(self.errors) < MAX_PROBLEMS:
            self.errors.append({"path": path, "message": message})

    def raise_any(self) -> None:
        if self.errors:
            raise Unreadable(self.errors)


# Keys of the native header that a foreign payload may carry as they are.
HEADER_KEYS = ("title", "started_at", "metadata", "system", "receipts_complete")
# Roles the foreign formats name differently from the native one.
ROLE_NAMES = {"developer": "system"}


def external_id(payload: dict[str, Any]) -> Any:
    """The sender's id: `external_id`, else `id`, else `metadata.external_id`; None when absent.

    A missing id is left missing, so validation names `$.external_id` in its answer.
    """
    for value in (payload.get("external_id"), payload.get("id")):
        if value is not None and value != "":
            return value
    metadata = payload.get("metadata")
    if isinstance(metadata, dict) and metadata.get("external_id") not in (None, ""):
        return metadata["external_id"]
    return None


def header(payload: dict[str, Any]) -> dict[str, Any]:
    """The native header of a foreign payload: its id, the native keys it gives, its model."""
    out: dict[str, Any] = {}
    ident = external_id(payload)
    if ident is not None:
        out["external_id"] = ident
    for key in HEADER_KEYS:
        if key in payload:
            out[key] = payload[key]
    agent = payload.get("agent")
    model = payload.get("model")
    if agent is not None and not isinstance(agent, dict):
        out["agent"] = agent  # validation says what an agent must be
    elif agent or (isinstance(model, str) and model):
        merged = dict(agent or {})
        if isinstance(model, str) and model and not merged.get("model"):
            merged["model"] = model
        out["agent"] = merged
    return out


def name_of(value: Any) -> str | None:
    """A type or kind as written, when it is text: the readers look names up in sets, and a
    list or object where a name belongs (untrusted input) cannot be looked up."""
    return value if isinstance(value, str) else None


def native_role(role: Any) -> Any:
    """A message's role as the native format names it: ``developer`` is ``system``; others stay
    (a role that is not text too: validation names it, where a lookup would fail on a list)."""
    return ROLE_NAMES.get(role, role) if isinstance(role, str) else role


def text_of(parts: Iterable[Any], kinds: tuple[str, ...], key: str = "text") -> str:
    """The text parts of a list (those whose `type` is one of `kinds`) joined by newlines."""
    return "\n".join(
        part[key]
        for part in parts
        if isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get(key), str)
    )


def result_text(value: Any) -> Any:
    """A tool result as stored: a string as written, an object or list as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return compact_json(value)


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A native tool call; arguments stay as written when a string, else compact JSON."""
    if arguments is None:
        arguments = ""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": compact_json(arguments)},
    }


def offered_tool(name: Any, parameters: Any) -> dict[str, Any] | Any:
    """A `tools_offered` entry: {"name", "parameters"} when a schema object is given."""
    if not isinstance(name, str) or not name:
        return {"name": name}  # validation names the entry
    if isinstance(parameters, dict):
        return {"name": name, "parameters": parameters}
    return {"name": name}


def with_turns(native: dict[str, Any], messages: Any, tools_offered: list[Any] | None) -> dict[str, Any]:
    """Put the messages in: split into turns that each list the tools offered, when known.

    Without a tool list (or with messages validation will refuse) the flat `messages`
    form is kept, and the native reading splits it the same way.
    """
    if tools_offered is None or not isinstance(messages, list) or not messages:
        native["messages"] = messages
        return native
    if not all(isinstance(m, dict) for m in messages):
        native["messages"] = messages
        return native
    native["turns"] = [
        {"tools_offered": list(tools_offered), "messages": group} for group in split_into_turns(messages)
    ]
    return native


def says_something(message: Any) -> bool:
    """Whether a native assistant message holds text or a tool call."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    return bool(message.get("tool_calls")) or bool(content_text(message.get("content")).strip())


def require_assistant(messages: Any, path: str, problems: Problems) -> None:
    """A transcript whose assistant said nothing readable is refused, never stored empty.

    A dump whose answer sits in parts the adapter skipped (or in a shape it does not know)
    would otherwise be stored as a conversation with nothing to check.
    """
    if problems.errors:
        return  # what was not understood is named already, and may be where the answer was
    if not isinstance(messages, list) or not messages:
        return  # validation names it
    if not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and m["role"] in ROLES for m in messages
    ):
        return  # validation names the message that is not one, which says more
    if not any(says_something(m) for m in messages):
        problems.add(
            path,
            "holds no assistant message with text or a tool call: nothing in it is an answer to "
            "check; send the model's reply too",
        )
