"""The record a negative claim is judged against: every call of the conversation, in order, one
entry per receipt placed in the transcript (its turn, the message that asked for it, its result);
the receipts' defaults are filled in when the conversation is read."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import asdict, dataclass
from operator import attrgetter
from typing import Any

from .types import Conversation, Message, Receipt

_turn = attrgetter("turn")


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
    def filters(self) -> dict[str, Any] | None:
        """What the search was filtered on; None when the runtime recorded no scope."""
        if not isinstance(scope := self.receipt.scope, dict):
            return None
        return filters if isinstance(filters := scope.get("filters"), dict) else {}

    @property
    def complete(self) -> bool:
        return isinstance(self.receipt.scope, dict) and self.receipt.scope.get("complete") is True

    @property
    def declared_absent(self) -> bool:
        return self.receipt.emptiness == "declared-absent"

    @property
    def has_rows(self) -> bool:
        count = self.receipt.result_count
        return (count is not None and count > 0) or self.receipt.emptiness == "non-empty"

    @property
    def rows(self) -> list[Any] | None:
        """The rows the call read, where its result is a list (top level or the one list field)."""
        return self.result.rows if self.result is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The entry as data (the receipt's fields but ``ok``), for a reviewer's page or a test."""
        out = {key: value for key, value in asdict(self.receipt).items() if key != "ok"}
        rows, filters = self.rows, self.filters
        out["scope"] = None if filters is None else {"filters": dict(filters), "complete": self.complete}
        return out | {"turn": self.turn, "rows": None if rows is None else list(rows)}


class Record:
    """Every recorded call of a conversation, in order, with indexes built in one pass, so a
    turn's claims cost the same in the thousandth turn as in the first."""

    def __init__(self, calls: tuple[Call, ...]) -> None:
        self.calls = calls
        self._in_turn: dict[int, list[Call]] = {}
        self._by_handle: dict[str, list[Call]] = {}
        self._of_receipt: dict[int, Call] = {}
        self._first_read: dict[str, int] = {}  # tool -> the turn of its first read
        self._changes: list[Call] = []  # the dispatched calls that may change data
        for call in calls:
            self._in_turn.setdefault(call.turn, []).append(call)
            self._by_handle.setdefault(call.handle, []).append(call)
            self._of_receipt.setdefault(id(call.receipt), call)
            if call.receipt.effect == "read":
                self._first_read.setdefault(call.receipt.tool, call.turn)
            elif call.receipt.dispatched:
                self._changes.append(call)

    @classmethod
    def of(cls, conversation: Conversation) -> Record:
        calls = []
        for turn in conversation.turns:
            for order, receipt in enumerate(turn.receipts):
                call = turn.call_of(receipt)
                asked = call.message_index if call is not None else None
                calls.append(Call(receipt, turn.index, order, asked, turn.result_of(receipt)))
        return cls(tuple(calls))

    def in_turn(self, turn: int) -> list[Call]:
        return list(self._in_turn.get(turn, ()))

    def by_handle(self, handle: str, turn: int) -> Call | None:
        """The latest call up to a turn that carries a handle (a runtime may number them afresh each turn)."""
        named = self._by_handle.get(handle, [])
        at = bisect_right(named, turn, key=_turn)
        return named[at - 1] if at else None

    def of_receipt(self, receipt: Receipt) -> Call | None:
        return self._of_receipt.get(id(receipt))

    def has_read(self, tool: str, turn: int) -> bool:
        first = self._first_read.get(tool)
        return first is not None and first <= turn

    def changes_between(self, first: int, last: int) -> list[Call]:
        """The dispatched calls that may change data (any but a read) of turns ``first`` to ``last``."""
        changes = self._changes
        return changes[bisect_left(changes, first, key=_turn) : bisect_right(changes, last, key=_turn)]


def after(later: Call, earlier: Call) -> bool:
    """Whether ``later`` was dispatched after ``earlier``: by turn, then by the messages that asked
    for them where both are known, then by the order of their receipts."""
    both = later.message_index is not None and earlier.message_index is not None
    asked = (later.message_index, earlier.message_index) if both else (0, 0)
    return (later.turn, asked[0], later.order) > (earlier.turn, asked[1], earlier.order)


def same_batch(one: Call, other: Call) -> bool:
    """Both asked for by the same assistant message."""
    return (
        one.turn == other.turn and one.message_index is not None and one.message_index == other.message_index
    )
