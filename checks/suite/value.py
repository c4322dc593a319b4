"""What every value the suite reads is: one shape, whatever its kind and its reader
(``values``, ``durations``, ``money``, ``notations``). A source's value is filed under ``keys()``,
an answer's looked up under ``lookups()`` (the same but for a full date), so a notation is read
alike on both sides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Value(Protocol):
    """A value read from a text: its kind, where it stands, what it is and its keys."""

    @property
    def kind(self) -> str: ...  # date | time | duration | money | number | fragment
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def canonical(self) -> str | None: ...  # one spelling whatever the notation; None if ambiguous
    def keys(self) -> Sequence[str]: ...
    def lookups(self) -> Sequence[str]: ...
