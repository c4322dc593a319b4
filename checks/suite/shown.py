"""What a conversation has shown so far, asked about all at once: at each answer or call the
checkers ask of everything before it (which tool result holds these digits, quotes this name,
holds this date; did anyone write this value). Walking back for each question would make a long
conversation cost the square of its length, so each kind of question is answered by a walk,
newest first, until its walks have visited ``WALKS`` times as many messages as there are, and
then from an index grown by the messages since. The answer is the walk's either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from itertools import islice
from typing import Any

from .derivations import Operand, dates_in, list_counts
from .evidence_index import Source, is_bounded
from .text import find_all

# Enough that a short conversation is never indexed, few enough that a long one is indexed
# within its first turns.
WALKS = 32
MAX_QUOTED = 64  # strings between two quotes longer than this are not indexed: names are shorter
_RUN = re.compile(r"[^\W_]+")  # a run of letters and digits (``str.isalnum``)


class Grown:
    """Indexes over a list that only grows, each built once walking it has cost enough."""

    def __init__(self) -> None:
        self._upto: dict[str, int] = {}  # index -> how many items it has read
        self._walked: dict[str, int] = {}  # index not built yet -> items its walks visited

    def indexed(self, name: str, items: Sequence[Any], read: Callable[[int, Any], None]) -> bool:
        """Whether to answer from the index ``name`` (brought up to date by ``read``); False: walk."""
        if name not in self._upto:
            self._walked[name] = self._walked.get(name, 0) + len(items)
            if self._walked[name] <= WALKS * len(items):
                return False
            self._upto[name] = 0
        for ordinal in range(self._upto[name], len(items)):
            read(ordinal, items[ordinal])
        self._upto[name] = len(items)
        return True


class Shown(Grown):
    """The tool results (or the people's messages) of a conversation so far, oldest first."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[Source] = []
        self._lazy: dict[str, int] = {}  # digit-run or count key -> newest source that carries it
        self._count_nouns: set[str] = set()  # ``count:noun:`` of every count key
        self._quoted: set[str] = set()  # strings a JSON result holds between two quotes
        self._holders: dict[str, list[int]] = {}  # form -> the sources that carry it, oldest first
        self._newest_date: dict[date, int] = {}
        self._first_date: dict[date, int] = {}
        self._list_counts: dict[int, tuple[int, int, Operand]] = {}  # n -> (source, place, operand)

    def add(self, source: Source) -> None:
        self.sources.append(source)

    def newest(self, count: int) -> list[Source]:
        """The ``count`` (at least 1) newest sources, newest first."""
        return self.sources[-count:][::-1]

    def _read_lazy_keys(self, ordinal: int, source: Source) -> None:
        """Keys read only when asked: an identifier's digit runs, a list's lengths."""
        self._lazy.update(dict.fromkeys(source.fragments | source.counts, ordinal))
        self._count_nouns.update(key[: key.rindex(":") + 1] for key in source.counts)

    def with_lazy_key(self, keys: list[str]) -> Source | None:
        """The newest source that carries one of ``keys`` among its fragments or counts."""
        if not self.indexed("lazy", self.sources, self._read_lazy_keys):
            carriers = (
                s for s in reversed(self.sources) if any(k in s.fragments or k in s.counts for k in keys)
            )
            return next(carriers, None)
        best = max((self._lazy.get(key, -1) for key in keys), default=-1)
        return self.sources[best] if best >= 0 else None

    def counts_noun(self, prefix: str) -> bool:
        """Whether a source's lists have a count key starting with ``prefix`` (``count:item:``)."""
        if not self.indexed("lazy", self.sources, self._read_lazy_keys):
            return any(key.startswith(prefix) for source in self.sources for key in source.counts)
        return prefix in self._count_nouns

    def _read_quoted(self, ordinal: int, source: Source) -> None:
        if source.looks_json:
            self._quoted.update(part for part in source.low.split('"')[1:-1] if len(part) <= MAX_QUOTED)

    def quotes(self, value: str) -> bool:
        """Whether a JSON source holds ``"value"`` in its lower-case text; walked newest first,
        where an answer's values mostly stand."""
        indexable = '"' not in value and len(value) <= MAX_QUOTED
        if not (indexable and self.indexed("quoted", self.sources, self._read_quoted)):
            return any(source.quotes(value) for source in reversed(self.sources) if source.looks_json)
        return value in self._quoted

    def _read_forms(self, ordinal: int, source: Source) -> None:
        for form in source.forms:
            self._holders.setdefault(form, []).append(ordinal)

    def carrying(self, form: str, limit: int) -> list[Source]:
        """The newest ``limit`` (at least 1) sources whose forms include ``form``, newest first."""
        if not self.indexed("forms", self.sources, self._read_forms):
            return list(islice((s for s in reversed(self.sources) if form in s.forms), limit))
        return [self.sources[ordinal] for ordinal in self._holders.get(form, [])[-limit:][::-1]]

    def _read_dates(self, ordinal: int, source: Source) -> None:
        for found, _, _ in dates_in(source.text):
            self._newest_date[found] = ordinal
            self._first_date.setdefault(found, ordinal)

    def holding_date(self, wanted: date, newest: bool) -> Source | None:
        """The newest (else the first) source that writes ``wanted`` as an ISO date."""
        if not self.indexed("dates", self.sources, self._read_dates):
            order = reversed(self.sources) if newest else self.sources
            return next((s for s in order if any(found == wanted for found, _, _ in dates_in(s.text))), None)
        ordinal = (self._newest_date if newest else self._first_date).get(wanted)
        return self.sources[ordinal] if ordinal is not None else None

    def _read_list_counts(self, ordinal: int, source: Source) -> None:
        first: dict[int, tuple[int, int, Operand]] = {}
        for place, operand in enumerate(list_counts(source)):
            first.setdefault(int(operand.value), (ordinal, place, operand))
        self._list_counts.update(first)

    def list_counts(self) -> list[Operand]:
        """The first of each length ``list_counts`` gives, newest source first: a product of an
        amount and a count can use no other (a later one of that length gives the same)."""
        if not self.indexed("list_counts", self.sources, self._read_list_counts):
            first: dict[int, Operand] = {}
            for source in reversed(self.sources):
                for operand in list_counts(source):
                    first.setdefault(int(operand.value), operand)
            return list(first.values())
        ranked = sorted(self._list_counts.values(), key=lambda item: (-item[0], item[1]))
        return [operand for _, _, operand in ranked]


class Texts(Grown):
    """Texts in the order they were written, for finding a value written among them as a whole."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._runs: dict[str, list[int]] = {}  # a run of letters and digits -> texts holding it

    def add(self, text: str) -> None:
        self.texts.append(text)

    def _read(self, ordinal: int, text: str) -> None:
        for run in set(_RUN.findall(text)):
            self._runs.setdefault(run, []).append(ordinal)

    def holding(self, needle: str) -> Iterator[int]:
        """The texts that hold ``needle`` as a whole, newest first. Each of its runs of letters and
        digits is then a whole run of the text too, so only the texts holding its rarest run are read."""
        runs = _RUN.findall(needle)
        ordinals: Sequence[int] = range(len(self.texts))
        if runs and self.indexed("runs", self.texts, self._read):
            ordinals = min((self._runs.get(run, []) for run in runs), key=len)
        yield from (ordinal for ordinal in reversed(ordinals) if bounded_in(needle, self.texts[ordinal]))

    def holds(self, needle: str) -> bool:
        return next(self.holding(needle), None) is not None


def bounded_in(needle: str, haystack: str) -> bool:
    """``needle`` in ``haystack`` with no letter or digit glued to either end."""
    return any(is_bounded(haystack, at, at + len(needle)) for at in find_all(haystack, [needle]))
