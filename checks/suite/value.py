"""What every value the suite reads is: one shape, whatever its kind.

Each reader (``values``, ``durations``, ``money``, ``notations``) turns a text into spans with
a kind, a canonical content and keys: a source's are filed under ``keys()``, an answer's
looked up under ``lookups()`` (the same but for a full date), so a notation read on one side
is read on the other by construction.
"""

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
