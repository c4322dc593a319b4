"""Which call a tool message answers, and which call a receipt records (CONTRACT.md §6), each
in one pass. A tool message answers the nearest earlier call of its id still unanswered: models
reuse an id once its call was answered, so whatever pairs a result, a call and a receipt asks
this module rather than mapping ids to calls. Validation keeps the rule unambiguous: within a
turn the k-th call of an id is answered by the k-th tool message of that id and recorded by
its k-th receipt."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol


# What pairing reads of a call and a message. The types module builds its turns with this
# one, so naming its classes here would make the two import each other.
class CallLike(Protocol):
    @property
    def call_id(self) -> str: ...


class MessageLike[C: CallLike](Protocol):
    @property
    def role(self) -> str: ...
    @property
    def tool_calls(self) -> Sequence[C]: ...
    @property
    def tool_call_id(self) -> str | None: ...


class Waiting[T]:
    """The calls still waiting for an answer, id by id, fed in transcript order."""

    def __init__(self) -> None:
        self._open: dict[str, list[T]] = {}

    def call(self, call_id: str, call: T) -> T | None:
        """Record a call; returns the call of the same id still waiting, if there is one."""
        stack = self._open.setdefault(call_id, [])
        waiting = stack[-1] if stack else None
        stack.append(call)
        return waiting

    def answer(self, call_id: str | None) -> T | None:
        """The call a tool message of this id answers (no longer waiting); None when none waits."""
        stack = self._open.get(call_id or "")
        return stack.pop() if stack else None


def answered_calls[C: CallLike](messages: Sequence[MessageLike[C]]) -> dict[int, C]:
    """For one turn's messages: the index of each tool message that answers a call -> that call."""
    waiting: Waiting[C] = Waiting()
    out: dict[int, C] = {}
    for i, message in enumerate(messages):
        for call in message.tool_calls:
            waiting.call(call.call_id, call)
        if message.role == "tool" and (answered := waiting.answer(message.tool_call_id)) is not None:
            out[i] = answered
    return out


def by_occurrence[T](
    ids: Iterable[str | None], items: Iterable[T], key: Callable[[T], str | None]
) -> list[T | None]:
    """For each id, the k-th item whose ``key`` is that id for its k-th occurrence, else None
    (always for a None id)."""
    of_id: dict[str | None, list[T]] = {}
    for item in items:
        of_id.setdefault(key(item), []).append(item)
    queues = {item_id: iter(found) for item_id, found in of_id.items() if item_id is not None}
    return [next(queues[item_id], None) if item_id in queues else None for item_id in ids]


# Where a call stands in a turn: its message's index, then its own among the message's calls.
Place = tuple[int, int]


def answered_in_json(
    messages: Iterable[Any], repeats: dict[Place, Place] | None = None
) -> dict[int, dict[str, Any]]:
    """``answered_calls`` for messages still in their JSON shape, before validation (an entry of
    the wrong shape is passed over). A call that takes the id of a call still waiting is put in
    ``repeats``, its place -> that call's."""
    waiting: Waiting[tuple[Place, dict[str, Any]]] = Waiting()
    out: dict[int, dict[str, Any]] = {}
    for i, message in enumerate(m if isinstance(m, dict) else {} for m in messages):
        calls = message.get("tool_calls")
        for j, call in enumerate(calls if isinstance(calls, list) else ()):
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                earlier = waiting.call(call["id"], ((i, j), call))
                if earlier is not None and repeats is not None:
                    repeats[i, j] = earlier[0]
        answered_id = message.get("tool_call_id")
        if message.get("role") == "tool" and isinstance(answered_id, str):
            if (answered := waiting.answer(answered_id)) is not None:
                out[i] = answered[1]
    return out
