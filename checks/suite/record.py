"""The record a negative claim is judged against: every call of the conversation, in order.

One entry per receipt, with what the decision table needs to know about it: its turn and
place in the transcript, tool, effect, whether it was dispatched and trusted, its outcome,
its scope (the filters it searched with and whether the search was complete), its
emptiness, the rows it read where the result is a list, and its citation handle. Where a
receipt is silent the defaults of the receipts apply (they are filled in when the
conversation is read), so this module only adds place and rows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .types import Conversation, Message, Receipt, Turn


@dataclass(frozen=True)
class Call:
    """One recorded call, placed in the conversation."""

    receipt: Receipt
    turn: int
    order: int  # position among the turn's receipts
    message_index: int | None  # the assistant message that asked for it, when the transcript shows it
    result: Message | None  # its tool message, when the transcript has one

    @property
    def handle(self) -> str:
        return self.receipt.handle

    @property
    def tool(self) -> str:
        return self.receipt.tool

    @property
    def is_read(self) -> bool:
        return self.receipt.effect == "read"

    @property
    def filters(self) -> dict[str, Any] | None:
        """What the search was filtered on; None when the runtime recorded no scope."""
        scope = self.receipt.scope
        if not isinstance(scope, dict):
            return None
        filters = scope.get("filters")
        return filters if isinstance(filters, dict) else {}

    @property
    def complete(self) -> bool:
        scope = self.receipt.scope
        return isinstance(scope, dict) and scope.get("complete") is True

    @property
    def declared_absent(self) -> bool:
        return self.receipt.emptiness == "declared-absent"

    @property
    def has_rows(self) -> bool:
        count = self.receipt.result_count
        return (count is not None and count > 0) or self.receipt.emptiness == "non-empty"

    @property
    def rows(self) -> tuple[Any, ...] | None:
        """The rows the call read, where its result is a list (top level or the one list field)."""
        rows = self.result.rows if self.result is not None else None
        return tuple(rows) if rows is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The entry as data, for a reviewer's page or a test."""
        receipt = self.receipt
        rows = self.rows
        return {
            "handle": receipt.handle,
            "call_id": receipt.call_id,
            "turn": self.turn,
            "tool": receipt.tool,
            "effect": receipt.effect,
            "dispatched": receipt.dispatched,
            "trusted": receipt.trusted,
            "outcome": receipt.outcome,
            "scope": None
            if self.filters is None
            else {"filters": dict(self.filters), "complete": self.complete},
            "emptiness": receipt.emptiness,
            "result_count": receipt.result_count,
            "rows": None if rows is None else list(rows),
            "at": receipt.at,
            "derived": receipt.derived,
        }


def _placed(turn: Turn) -> list[Call]:
    """The turn's receipts, each beside the call it records and that call's result."""
    return [
        Call(
            receipt=receipt,
            turn=turn.index,
            order=order,
            message_index=call.message_index if call is not None else None,
            result=turn.result_of(call) if call is not None else None,
        )
        for order, receipt in enumerate(turn.receipts)
        for call in [turn.call_of(receipt)]
    ]


@dataclass(frozen=True)
class Record:
    """Every recorded call of a conversation, in conversation order.

    Its questions (a turn's calls, the call a handle names, the calls that may have changed
    data since a read) are answered from indexes built on first use, in one pass over the
    calls, so a turn's claims cost the same in the thousandth turn as in the first.
    """

    calls: tuple[Call, ...]

    @classmethod
    def of(cls, conversation: Conversation) -> Record:
        return cls(tuple(call for turn in conversation.turns for call in _placed(turn)))

    @cached_property
    def _index(self) -> _Index:
        return _Index(self.calls)

    def in_turn(self, turn: int) -> list[Call]:
        return list(self._index.in_turn.get(turn, ()))

    def by_handle(self, handle: str, turn: int) -> Call | None:
        """The call a handle names as of a turn: the latest one that carries it.

        A runtime that numbers handles afresh each turn means this turn's ``r1`` by ``r1``.
        """
        turns, calls = self._index.by_handle.get(handle, ((), ()))
        at = bisect_right(turns, turn)
        return calls[at - 1] if at else None

    def of_receipt(self, receipt: Receipt) -> Call | None:
        return self._index.of_receipt.get(id(receipt))

    def read_tools(self, turn: int) -> set[str]:
        """Tools with a read receipt up to a turn: who may be cited when the options name none."""
        return {tool for tool, first in self._index.first_read.items() if first <= turn}

    def has_read(self, tool: str, turn: int) -> bool:
        """Whether ``tool`` has a read receipt up to a turn (``tool in read_tools(turn)``)."""
        first = self._index.first_read.get(tool)
        return first is not None and first <= turn

    def changes_between(self, first: int, last: int) -> list[Call]:
        """The dispatched calls that may change data (any but a read) of turns ``first`` to
        ``last``, in conversation order."""
        turns, calls = self._index.changes
        return list(calls[bisect_left(turns, first) : bisect_right(turns, last)])


class _Index:
    """The record's calls by turn, handle, receipt and first read; the calls that may change
    data. The calls come in conversation order, so each list is in turn order."""

    def __init__(self, calls: tuple[Call, ...]) -> None:
        self.in_turn: dict[int, list[Call]] = {}
        handles: dict[str, tuple[list[int], list[Call]]] = {}
        self.of_receipt: dict[int, Call] = {}
        self.first_read: dict[str, int] = {}
        change_turns: list[int] = []
        changes: list[Call] = []
        for call in calls:
            self.in_turn.setdefault(call.turn, []).append(call)
            turns, named = handles.setdefault(call.handle, ([], []))
            turns.append(call.turn)
            named.append(call)
            self.of_receipt.setdefault(id(call.receipt), call)
            if call.is_read:
                self.first_read.setdefault(call.tool, call.turn)
            elif call.receipt.dispatched:
                change_turns.append(call.turn)
                changes.append(call)
        self.by_handle = handles
        self.changes = (change_turns, changes)


def after(later: Call, earlier: Call) -> bool:
    """Whether ``later`` was dispatched after ``earlier``."""
    if later.turn != earlier.turn:
        return later.turn > earlier.turn
    if later.message_index is not None and earlier.message_index is not None:
        if later.message_index != earlier.message_index:
            return later.message_index > earlier.message_index
    return later.order > earlier.order


def same_batch(one: Call, other: Call) -> bool:
    """Both asked for by the same assistant message."""
    return (
        one.turn == other.turn and one.message_index is not None and one.message_index == other.message_index
    )
