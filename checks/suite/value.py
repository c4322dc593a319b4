"""What every value the suite reads is: one shape, whatever its kind.

A value is read out of a text (or a JSON leaf) by the reader of its kind (``values`` for
dates and clock times, ``durations`` for lengths of time, ``money`` for amounts,
``notations`` for the digit runs of identifiers) into a span with a kind, a canonical
content and the keys it is filed and looked up under. The evidence index files a source's
values under ``keys()``; an answer's value is looked up under ``lookups()``. The two are the
same list for every kind but one (a full date is also looked up as a date of an unsaid
year: ``values``), so a notation read on one side is read on the other by construction,
and no checker keeps a list of spellings of its own.
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
    def canonical(self) -> str | None:
        """One spelling whatever the notation (ISO 8601, plain decimal digits); None where
        the value is one of several (a day and month that may swap)."""
        ...

    def keys(self) -> Sequence[str]:
        """What a source files it under."""
        ...

    def lookups(self) -> Sequence[str]:
        """What an answer looks it up under."""
        ...
