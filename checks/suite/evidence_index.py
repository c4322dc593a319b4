"""The evidence a conversation holds, read once: every tool result, user message and prompt,
and the arguments of every call answered with something found. Each message becomes a
``Source`` whose forms are computed on first use and kept, so the checkers share one reading.

Principle: **the query is part of the receipt.** A call whose result found something is the
runtime's record that it asked for what its arguments say, so "the rooms free on <the date
searched>" is backed by the search's own arguments even where the rows do not repeat the date.
A call that found nothing, failed or was denied backs nothing with its arguments (the
``arguments`` checker still checks them). Which sources may back which claims is one table,
``BACKS``. Lookups walk the sources in conversation order and merge their form sets with
``dict.update`` (in C), which keeps a long conversation linear. Spans and JSON paths are found
only for the values that need them (a grounded value's provenance), in the one result carrying it.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property, reduce
from operator import itemgetter
from typing import Any
from weakref import proxy

from . import durations, money, tokens, values
from .decimals import NO_JSON, is_number, json_head, raw_decode
from .notations import count_keys, fragment_span
from .types import Conversation, Evidence, Message, Receipt, rows_of, walk

# The scanners are asked only where a value ends, so they read numbers the quick way. Both exist at run
# time (in C, else in Python); typeshed does not declare them (JSONDecoder.__init__ sets scan_once).
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_SCAN_STRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_DIGIT = re.compile(r"\d")
_NUMERIC_KEY = re.compile(r"\d+(?:\.\d+)?")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
# A JSON member's name and its number: the name may say what the number counts.
_MEMBER_NUMBER = re.compile(r'"([^"\\]{1,80})"\s*:\s*(-?\d+(?:\.\d+)?)(?![\d.eE])')
# A range written as a member's string: ``"eta_days": "5-7"``.
_MEMBER_RANGE = re.compile(
    r'"([^"\\]{1,80})"\s*:\s*"(\d+(?:\.\d+)?)\s*(?:[-\u2013]|\\u2013)\s*(\d+(?:\.\d+)?)"'
)
_EMPTINESS = ("empty", "declared-absent")  # what a receipt says of a call that found nothing
# Keys under which an absence envelope repeats what it was asked for.
_ECHO_KEYS = frozenset("looked_for query requested request searched_for search lookup key input q".split())

# How the suite's own correction starts when a runtime sends it back as a user message.
CORRECTION_PREFIX = "Note from Receipts (evidence check):"

# Which roles of source may back which claims. An answer's value: any source before it; an argument typed
# into a call: only what the people and the results said (another call's arguments are the model's own
# words, however successful the call). Earlier answers back nothing: they are the model's words too.
BACKS: dict[str, frozenset[str]] = {
    "answer": frozenset({"system", "user", "tool", "call"}),
    "argument": frozenset({"system", "user", "tool"}),
}


def _space_end(text: str, pos: int) -> int:
    match = _WS.match(text, pos)  # where the JSON whitespace at ``pos`` ends (it matches none too)
    return match.end() if match is not None else pos


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def last_key(path: str) -> str:
    """The name of the member a path (``join_path``) ends in, an array's items under its own:
    ``payment_methods[0].amountCents`` is ``amountCents``, ``items["4x6"]`` is ``4x6``, as
    written (its words are its case's)."""
    path = re.sub(r"\[\d+\]", "", path)
    quoted = re.search(r'\["((?:[^"\\]|\\.)*)"\]$', path)
    return quoted.group(1) if quoted else path.rsplit(".", 1)[-1]


def json_leaves(value: Any, keep: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """Every leaf of a JSON value that ``keep`` accepts, with its path (``filters.host``, ``ids[0]``), in
    document order; no nesting or length stops the walk."""
    nodes = walk(value, join_path, max_depth=math.inf, max_items=None)
    return [(path, node) for path, node, _ in nodes if keep(node)]


def text_leaves(value: Any) -> list[tuple[str, str]]:
    """Every string leaf of a JSON value, with its path (``json_leaves``)."""
    return json_leaves(value, lambda leaf: isinstance(leaf, str))


class _Node:
    """One JSON container, read only as far as a lookup needs (an array's elements skipped by the C
    scanner): a lookup near the start of a large result reads little of it, and nothing twice."""

    __slots__ = ("kind", "members", "pos", "end")

    def __init__(self, text: str, start: int) -> None:
        self.kind = text[start]
        # Each member read: where it starts, where its key ends, where its value starts and ends (None: a
        # container not yet read to its end), and its key (an array's index).
        self.members: list[list[Any]] = []
        self.pos = _space_end(text, start + 1)
        self.end: int | None = None  # where the container closes, once known

    def advance(self, text: str, offset: int) -> bool:
        """Read on: an object's next member, or an array's elements up to the first past ``offset``;
        False once the container is closed (``end`` is then set)."""
        pos, size, read, is_object = self.pos, len(text), len(self.members), self.kind == "{"
        while True:
            if pos < size and text[pos] == ",":
                pos = _space_end(text, pos + 1)
            if pos >= size or text[pos] in "}]":
                self.end, self.pos = min(pos + 1, size), pos
                return len(self.members) > read
            if is_object:
                try:
                    key, key_end = _SCAN_STRING(text, pos + 1)  # the member's name
                    value_start = _space_end(text, _space_end(text, key_end) + 1)
                    lazy = value_start < size and text[value_start] in "{["
                    value_end = None if lazy else _value_end(text, value_start)
                except (ValueError, IndexError, StopIteration):
                    self.end = size  # cut off
                    return False
                self.members.append([pos, key_end, value_start, value_end, key])
                # Where the container value ends, once it is read, the next member is read from.
                self.pos = -1 if value_end is None else _space_end(text, value_end)
                return True
            end = _value_end(text, pos)
            self.members.append([pos, pos, pos, end, len(self.members)])
            self.pos = pos = _space_end(text, end) if end < size and text[end] in " \t\n\r" else end
            if pos > offset:
                return True


def _row_at(
    text: str, start: int, offset: int, rows: list[Any], nodes: dict[Any, Any]
) -> tuple[int, int] | None:
    """Which row of a list of objects covers ``offset``, and where it starts, found without
    reading the rows before it; None where that cannot be told so."""
    starts = nodes.get(("rows", start))
    if starts is None:
        starts = nodes[("rows", start)] = _row_starts(text, start, rows)
    i = bisect_right(starts, offset) - 1
    return (i, starts[i]) if i >= 0 and offset < _value_end(text, starts[i]) else None


def _row_starts(text: str, start: int, rows: list[Any]) -> list[int]:
    """Where each row of the list at ``start`` starts, by how each starts (``{"host"``, the first key of
    them all): a brace then a quote stands only where an object starts (in a string the quote is
    escaped), so where the text writes it as often as the list has rows, the n-th is the n-th row's."""
    first = _space_end(text, start + 1)
    if not rows or text[first : first + 2] != '{"':
        return []
    try:
        key, key_end = _SCAN_STRING(text, first + 2)
    except ValueError:
        return []
    # Every row an object with that first key (asked of all the rows at once, in C).
    if set(map(type, rows)) != {dict} or not all(rows) or set(map(next, map(iter, rows))) != {key}:
        return []
    starts = [m.start() for m in re.finditer(re.escape(text[first:key_end]), text)]
    return starts if len(starts) == len(rows) else []


def _find(
    text: str, start: int, offset: int, nodes: dict[Any, Any], path: str, value: Any = None
) -> str | None:
    """The path covering ``offset`` inside the container at ``start``; None if it lies past it.
    ``value`` is the container parsed, where known: a row of a long list is then found at once."""
    if isinstance(value, list) and text[start] == "[" and (row := _row_at(text, start, offset, value, nodes)):
        return _find(text, row[1], offset, nodes, join_path(path, row[0]), value[row[0]])
    node = nodes.get(start) or nodes.setdefault(start, _Node(text, start))
    while True:
        i = bisect_right(node.members, offset, key=itemgetter(0)) - 1
        if i >= 0:
            member_start, key_end, value_start, end, key = node.members[i]
            here = join_path(path, key)
            if offset < key_end:
                return here  # the key itself
            if end is None:
                found = _find(text, value_start, offset, nodes, here, _step(value, key))
                child = nodes.get(value_start)  # None where a row was found at once (``_row_at``)
                # The member ends where its value does once read to its end (cut off: the text's end).
                child_end = (child.end if child else None) or (None if found is not None else len(text))
                if child_end is not None:
                    node.members[i][3] = child_end
                    if i == len(node.members) - 1 and node.pos == -1:
                        node.pos = _space_end(text, child_end)
                if found is not None:
                    return found
            elif offset < end:
                if text[value_start : value_start + 1] in ("{", "["):
                    return _find(text, value_start, offset, nodes, here, _step(value, key)) or here
                return here
            if i < len(node.members) - 1:
                return path  # between two members
        if node.end is not None:
            return None if offset >= node.end else path
        if node.pos == -1:
            last = node.members[-1]
            _find(text, last[2], len(text), nodes, "")
            last[3] = nodes[last[2]].end or len(text)
            node.pos = _space_end(text, last[3])
        if not node.advance(text, offset):
            return None if offset >= (node.end or 0) else path


def json_path_at(text: str, offset: int, nodes: dict[Any, Any] | None = None, value: Any = None) -> str:
    """The JSON path of whatever covers ``offset`` (a key names its member): empty for a text
    result and a note after the JSON; the path so far in cut-off JSON. ``value``: the parse."""
    start = _space_end(text, 0)
    if start >= len(text) or text[start] not in "{[":
        return ""
    try:
        return _find(text, start, offset, {} if nodes is None else nodes, "", value) or ""
    except RecursionError:
        return ""


def _value_end(text: str, start: int) -> int:
    try:
        return _SCAN(text, start)[1]
    except (ValueError, StopIteration, RecursionError):
        return len(text)  # cut off inside this value: whatever follows belongs to it


# The readers of values only a few lookups need, by the name a source keeps their keys under: of what a text
# writes, read from it and its words' forms (``tokens``); in JSON alone, of a number whose member's name says
# what it counts, a quick test that a lower-case JSON text may name one at all and the keys of a member.
type MemberReader = tuple[Callable[[str], object], Callable[[str, str], list[str]]]
LAZY_READERS: dict[str, Callable[[str, AbstractSet[str]], list[str]] | MemberReader] = {
    "dates": tokens.date_forms,
    "times": tokens.time_forms,
    "durations": tokens.duration_forms,
    "sizes": tokens.dimension_forms,
    "codes": tokens.code_forms,
    "periods": durations.period_keys,
    "instants": (values.LONG_NUMBER.search, values.instant_member_keys),  # starts_at
    "lengths": (durations.KEYED_UNIT.search, durations.duration_member_keys),  # wait_minutes
    # price_cents: an amount, among the ``words`` too
    "minor amounts": (lambda low: any(f'{w}"' in low for w in money.MINOR_WORDS), money.minor_member_keys),
}
# The lazy readers by the key prefixes each may read. A year (a number of at most four digits) is a date's.
_READERS_OF = {
    "date ": ("dates", "instants"),
    "time ": ("times", "instants"),
    durations.KEY_PREFIX: ("times", "durations", "lengths", "periods"),  # "2200 hrs" is a length too
}


def readers_of(key: str) -> tuple[str, ...]:
    """The lazy readers whose keys may include ``key``: none for most keys."""
    if tokens.SIZE_KEY.fullmatch(key):
        return ("sizes", "codes")
    if tokens.JOINED_CODE.fullmatch(key):
        return ("codes",)
    if key[:1].isdigit():
        return ("dates",) if len(key) <= 4 and key.isdigit() else ()
    return next((readers for prefix, readers in _READERS_OF.items() if key.startswith(prefix)), ())


def _numeral(key: str) -> bool:
    """Whether a key may be a number a token spells or an amount's (``number_text``), not as written."""
    return key[:1].isdigit() and all(c.isdigit() or c in ".E+-" for c in key)


class Forms:
    """A source's keys, asked as a set is: as a token or a dressed token's core (``tokens.dressed_in``), a
    numeral also among the ``words`` (``tokens.word_forms``, the amounts written), a value's key by its
    kind's reader (``LAZY_READERS``). So a large result pays for no reader no answer needs."""

    def __init__(self, source: Source, split: str, echoes: set[str]) -> None:
        # Weakly: a cycle would leave a dropped index and its parses to the cyclic collector.
        self.source: Source = proxy(source)
        self.split = split
        self.echoes = echoes  # what an absence envelope repeats: no key of its result
        self.first_at: dict[str, int] = {}  # a key looked for -> where it first stands in ``split``

    @cached_property
    def tokens(self) -> set[str]:
        return set(self.split.split())  # echoes too

    def has_token(self, key: str, dressed: bool = False) -> bool:
        """Whether ``key`` is a token (``dressed``: or a dressed token's core), not an echo; past 32
        places that write it inside longer tokens, the set of tokens is split."""
        if key in self.echoes:
            return False
        first = self.first_at.get(key)
        if first is None:
            first = self.first_at[key] = self.split.find(key)
        found = tokens.dressed_in(self.split, key, not dressed, 32, first)
        if found is None:
            return key in self.tokens or (dressed and bool(tokens.dressed_in(self.split, key, first=first)))
        return found

    @property
    def words(self) -> set[str]:
        return self.source.value_keys("words")

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or key in self.echoes:
            return False
        # The words, once read, hold every token and dressed token's core: a key not among them needs no scan.
        words = self.source.cache.get("words")
        written = words is None or key in words
        if written and (self.has_token(key, dressed=True) or (_numeral(key) and key in self.words)):
            return True
        return any(key in self.source.value_keys(name) for name in readers_of(key))

    def __iter__(self) -> Iterator[str]:
        return iter(self.words.union(*(self.source.value_keys(name) for name in LAZY_READERS)))


@dataclass
class Source:
    """One message that may carry values: a tool result, a user message or the prompt."""

    position: int  # order in the conversation
    turn: int
    message_index: int  # -1 for the system prompt
    role: str  # tool | user | system | call (a call's arguments: ``BACKS``)
    text: str
    call_id: str | None = None
    tool: str | None = None
    arguments: Any = None  # the call's arguments, parsed, for a tool result
    message: Message | None = field(default=None, repr=False)  # whose one parse it shares
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def kept[T](self, name: str, read: Callable[[], T]) -> T:
        """``read()``, computed on first need and kept in the cache under ``name``."""
        found = self.cache.get(name)
        if found is None:
            found = self.cache[name] = read()
        return found

    @property
    def looks_json(self) -> bool:
        return self.text.lstrip()[:1] in ("{", "[")

    @cached_property
    def forms(self) -> Forms:
        text = self.text
        json_text = self.role in ("tool", "call") and self.looks_json
        if json_text and text.rstrip()[-1:] not in ("}", "]") and self.parsed() is NO_JSON:
            text = text[: _complete_prefix(text)]  # cut off: only its complete leaves
        self.cache["read"] = (text, json_text)  # what the other keys are read from, later
        echoes = self._echoes() if self.role == "tool" and '"absent"' in self.low else set()
        return Forms(self, tokens.split_text(text), echoes)

    def value_keys(self, reader: str) -> set[str]:
        """The keys of one reader (``LAZY_READERS``, ``words``), read on first need."""
        echoes = self.forms.echoes  # mostly none: the keys read are then kept uncopied
        return self.kept(
            reader, lambda: self._read_keys(reader) - echoes if echoes else self._read_keys(reader)
        )

    def _read_keys(self, reader: str) -> set[str]:
        text, json_text = self.cache["read"]
        forms: set[str] = self.kept("forms", lambda: tokens.word_forms(text, self.forms.split))
        read = LAZY_READERS.get(reader)
        if isinstance(read, tuple):
            if not json_text:
                return set()
            # An ASCII text read whole lowers to ``low`` char for char: lowered once for every reader.
            return _member_keys(
                text, self.low if text is self.text and text.isascii() else text.lower(), read
            )
        if read is not None:
            return set(read(text, forms))
        # A JSON text's numbers grouped with commas are read from its strings alone: "[1,250]" is two.
        if not json_text:
            return forms | money.amount_keys(tokens.value_text(text), words=forms)
        more = money.amount_keys(text, plain=False, words=forms) | self.value_keys("minor amounts")
        if money.needs_its_strings(text):
            for _, _, content in _string_contents(text):
                more |= money.amount_keys(content)
        return forms | more if more else forms  # kept once where the amounts add nothing

    def parsed(self) -> Any:
        """The JSON value at the head of the result, or ``NO_JSON`` when there is none."""
        if not self.looks_json:
            return self.kept("json", lambda: NO_JSON)
        return self.kept("json", lambda: self.message.head if self.message else json_head(self.text)[0])

    def _echoes(self) -> set[str]:
        """What an absence envelope repeats back: never evidence of the thing it did not find."""
        value = self.parsed()
        if not isinstance(value, dict) or not is_absence(value):
            return set()
        # What it says it checked stays evidence, even where it spells an argument.
        echoes, kept = _string_forms(self.arguments), set()
        for key, item in value.items():
            if key.lower() in _ECHO_KEYS:
                echoes |= _string_forms(item)
            elif key != "absent":
                kept |= _string_forms(item)
        return echoes - kept

    @cached_property
    def person_keys(self) -> set[str]:
        """What a person's message supplies: its forms, its identifiers' digit runs and its compound
        tokens' pieces (``Grounds.absorb``), read once for every kind of claim."""
        return set(self.forms).union(self.fragments, tokens.parts_of_tokens(self.text))

    @cached_property
    def fragments(self) -> set[str]:
        """The digit-run keys of the identifiers this message carries."""
        return tokens.fragment_forms(self.forms)

    @cached_property
    def counts(self) -> set[str]:
        """The count keys (``notations.count_keys``) of the lists this result holds."""
        parsed = self.parsed() if self.role == "tool" else None
        return count_keys(parsed) if parsed is not NO_JSON else set()

    @cached_property
    def low(self) -> str:
        low = self.text.lower()
        if len(low) != len(self.text):  # a few characters lower-case to two
            low = "".join(c.lower() if len(c.lower()) == 1 else c for c in self.text)
        return low

    def first_in_low(self, form: str) -> int:
        """Where ``form`` first stands in ``low``. Where the forms read the whole text, lowered char for char
        (none lowers to two) and without escapes, their split text is ``low`` with each separator a space,
        so a form without a space first stands where a lookup has found it there (``Forms.first_at``)."""
        read = self.cache.get("read")
        if read is not None and read[0] is self.text and " " not in form and "\\" not in self.low:
            at = self.forms.first_at.get(form, -1)
            if at != -1 and len(self.forms.split) == len(self.low):
                return at
        return self.low.find(form)

    def quotes(self, value: str) -> bool:
        """Whether ``low`` holds ``"value"``, looked for from where ``value`` first stands."""
        at = self.first_in_low(value)
        return at != -1 and self.low.find(f'"{value}"', max(at - 1, 0)) != -1

    def span_of(self, form: str) -> tuple[int, int] | None:
        """Where ``form`` stands: a whole token, else a token's part; a notation's key where its value is."""
        low = self.low
        if form.startswith("#"):
            return fragment_span(low, form)
        if values.is_value_key(form):
            return self._value_span(form)
        at, tried, fallback = self.first_in_low(form), 0, None
        while at != -1 and tried < 2000:
            tried += 1
            start, end = at, at + len(form)
            while start > 0 and low[start - 1] not in tokens.SEPARATORS:
                start -= 1
            while end < len(low) and low[end] not in tokens.SEPARATORS:
                end += 1
            raw = low[start:end]
            if form in tokens.token_keys(raw):
                core = raw.strip(tokens.DECORATION)
                core_start = start + raw.index(core)
                return core_start, core_start + len(core)
            if fallback is None and is_bounded(low, at, at + len(form)):
                fallback = (at, at + len(form))  # a part of a token: a timestamp's date
            at = low.find(form, at + 1)
        return fallback or self._amount_span(form)

    def _amount_span(self, key: str) -> tuple[int, int] | None:
        """Where an amount keyed ``key`` (``money``) is written: its digits, or its JSON string if escaped."""
        if not _NUMERIC_KEY.fullmatch(key):
            return None
        if not self.looks_json:
            return money.key_span(self.low, key) or tokens.grouped_span(self.low, key)
        span = money.key_span(self.low, key, plain=False) or tokens.grouped_span(self.low, key)
        if span is not None or not money.needs_its_strings(self.text):
            return span
        for start, end, content in self.kept("strings", lambda: _string_contents(self.text)):
            span = money.key_span(content, key)
            if span is not None:
                exact = end - start == len(content)
                return (start + span[0], start + span[1]) if exact else (start, end)
        return None

    def _value_span(self, key: str) -> tuple[int, int] | None:
        """Where the date or clock time that ``key`` (``values``) stands for is written."""
        written = self.kept("values", lambda: values.read_values(tokens.value_text(self.text)))
        return next(((value.start, value.end) for value in written if key in value.keys()), None)

    def path_at(self, offset: int) -> str:
        if not self.looks_json:
            return ""
        return json_path_at(self.text, offset, self.cache.setdefault("nodes", {}), self.parsed())

    def value_at(self, parts: list[str | int]) -> Any:
        """The JSON value at a path ``path_at`` has read the way to, decoded alone (a row of a large
        result without the rest); ``None`` where the way is not known."""
        value = self.cache.get("json", NO_JSON)
        if value is not NO_JSON:
            return reduce(_step, parts, value)
        nodes = self.cache.get("nodes") or {}
        at = _space_end(self.text, 0)
        for part in parts:
            member = next((m for m in nodes[at].members if m[4] == part), None) if at in nodes else None
            if member is None:
                return None
            at = member[2]
        try:
            return raw_decode(self.text, at)[0]
        except (ValueError, RecursionError):
            return None

    def evidence_at(self, span: tuple[int, int] | None) -> Evidence:
        start, end = span or (None, None)
        path = "" if span is None else self.path_at(span[0])
        return Evidence(self.call_id, path, start, end, "arguments" if self.role == "call" else "result")


def _step(value: Any, part: str | int) -> Any:
    if isinstance(part, int):
        return value[part] if isinstance(value, list) and part < len(value) else None
    return value.get(part) if isinstance(value, dict) else None


def is_bounded(low: str, start: int, end: int) -> bool:
    """Whether no letter or digit stands right before ``start`` or at ``end``."""
    return not (start > 0 and low[start - 1].isalnum()) and not (end < len(low) and low[end].isalnum())


def is_absence(value: dict[str, Any]) -> bool:
    return value.get("absent") is True or value.get("found") is False or value.get("exists") is False


def _member_keys(json_text: str, low: str, reader: MemberReader) -> set[str]:
    """The keys of the JSON numbers whose member names say what they count, and of both ends of a
    range written there as a string ("5-7"), by one ``MemberReader`` (``low``: the text in lower case)."""
    may_hold, keys = reader
    if not may_hold(low):
        return set()
    pairs = _MEMBER_NUMBER.findall(json_text)
    pairs += [(name, end) for name, *ends in _MEMBER_RANGE.findall(json_text) for end in ends]
    return {key for name, number in pairs for key in keys(name, number)}


def found_nothing(result: Source | None, receipt: Receipt | None) -> bool:
    """The call found nothing: an empty list, an absence envelope, or the receipt says so."""
    if receipt is not None and (receipt.emptiness in _EMPTINESS or receipt.result_count == 0):
        return True
    if result is None:
        return False
    # Five characters tell each empty spelling (all shorter) without lower-casing the whole text.
    if result.text.strip()[:5].lower() in ("", "null", "[]", "{}", '""'):
        return True
    value = result.parsed()  # the message's one parse
    return (isinstance(value, dict) and is_absence(value)) or rows_of(value) == []


def _string_forms(value: Any) -> set[str]:
    """The forms of every string and number a JSON value holds, at any depth."""
    out: set[str] = set()
    for _, leaf in json_leaves(value, lambda node: isinstance(node, str) or is_number(node)):
        out |= {tokens.normalize(str(leaf)), *(tokens.index_text(leaf) if isinstance(leaf, str) else ())}
    return out


def _string_contents(text: str) -> list[tuple[int, int, str]]:
    """The strings ``money.needs_its_strings`` of a JSON text: where each's content stands, decoded."""
    out: list[tuple[int, int, str]] = []
    for match in _STRING.finditer(text):
        raw = match.group()
        if _DIGIT.search(raw) is None or not money.needs_its_strings(raw):
            continue
        content = raw[1:-1]
        if "\\" in content:
            try:
                content = json.loads(raw)
            except ValueError:
                continue
        out.append((match.start() + 1, match.end() - 1, content))
    return out


def _complete_prefix(text: str) -> int:
    """How much of a cut-off JSON text holds only complete leaves."""
    last = max((match.end() for match in _STRING.finditer(text)), default=0)
    rest = text.find('"', last)
    if rest != -1:
        return rest  # an unterminated string starts here
    cut = max(text.rfind(c) for c in ",[]{}:")
    # A bare number or literal running to the end may be cut short too.
    return max(cut + 1, last)


WALK = 8  # the newest results a lookup asks one by one (``Grounds._newer``)


class Grounds:
    """What the conversation said before a point, for one kind of claim (``BACKS``), asked ``ground``:
    which source said a value before. Results and successful queries are kept with the newest carrying
    each key (the provenance); people's words as keys alone, with their identifiers' digit runs and
    compound tokens' pieces (who typed ``user:mia_li_3668`` supplied ``3668``). The suite's own
    corrections, quoted back as a user message, are nobody's words."""

    def __init__(self, claim: str, sources: list[Source]) -> None:
        self.backs, self.sources = BACKS[claim], sources
        self.people: set[str] = set()  # the keys the user and the system prompt wrote
        self.held: list[Source] = []  # the results and queries, oldest first
        self.values: dict[str, tuple[dict[str, int], int]] = {}  # ``_newest``, and how many it read

    def absorb(self, source: Source) -> bool:
        """Take in one source; False where it backs nothing of this kind of claim."""
        if source.role not in self.backs:
            return False
        if source.role in ("tool", "call"):
            self.held.append(source)
            return True
        if source.text.lstrip().startswith(CORRECTION_PREFIX):
            return False
        self.people |= source.person_keys
        return True

    def carried(self, key: str) -> bool:
        """Whether a token of a result or query held is ``key``."""
        if len(self.held) > WALK:
            return key in self._newest("tokens")
        return any(s.forms.has_token(key) for s in self.held)

    def ground(self, lookups: Iterable[str]) -> tuple[Source, str] | None:
        """The newest result or query that carries one of ``lookups``, and the key it holds."""
        best, best_key = -1, ""
        last = self.held[-1].position if self.held else -1
        newest = self._newest("tokens") if len(self.held) > WALK else {}
        for key in lookups:
            position = newest.get(key, -1)
            if max(best, position) < last:  # a newer result may carry it among its other keys
                position = max(position, self._newer(key, max(best, position)))
            if position > best:
                best, best_key = position, key
        return (self.sources[best], best_key) if best >= 0 else None

    def _newer(self, key: str, after: int) -> int:
        """The position of the newest result or query past ``after`` holding ``key``, or -1: the ``WALK``
        newest are asked, the rest by an index of each reader's keys (each result read once)."""
        for source in self.held[: -WALK - 1 : -1]:
            if source.position <= after:
                return -1
            if key in source.forms:
                return source.position
        if len(self.held) <= WALK:
            return -1
        return max(self._newest(reader).get(key, -1) for reader in ("words", *readers_of(key)))

    def _newest(self, reader: str) -> dict[str, int]:
        """The keys of one reader (``tokens``: all but echoes; ``words``; ``LAZY_READERS``) -> the newest
        result or query carrying each. Each result is read whole (linear in its size): a value in its
        last row grounds as in a small one. At most ``WALK`` results are asked one by one instead."""
        newest, upto = self.values.get(reader, ({}, 0))
        for source in self.held[upto:]:
            forms = source.forms
            keys = forms.tokens - forms.echoes if reader == "tokens" else source.value_keys(reader)
            newest.update(dict.fromkeys(keys, source.position))
        self.values[reader] = (newest, len(self.held))
        return newest

    def supplied(self, lookups: Iterable[str]) -> bool:
        return any(key in self.people for key in lookups)  # a person wrote one of them


@dataclass
class ConversationIndex:
    sources: list[Source]
    by_turn: list[list[Source]]
    system: list[Source]


def build_index(conversation: Conversation) -> ConversationIndex:
    sources = [Source(0, -1, -1, "system", conversation.system)] if conversation.system else []
    system = list(sources)
    by_turn: list[list[Source]] = []
    for turn in conversation.turns:
        mine: list[Source] = []
        for i, message in enumerate(turn.messages):
            if message.role == "assistant" or not message.text:
                continue
            source = Source(len(sources), turn.index, i, message.role, message.text, message=message)
            made = [source]
            # A result carries the call it answers (``Turn.answers``), not always the latest of its id.
            call = turn.answers.get(i) if message.role == "tool" else None
            if message.role == "tool":
                source.call_id = message.tool_call_id
            if call is not None:
                source.tool, source.arguments = call.tool, call.parsed
                # A call that succeeded and found something: its arguments back claims too (``BACKS``).
                receipt = turn.receipt_of(call)
                if (receipt is None or receipt.ok) and not found_nothing(source, receipt):
                    query = Source(len(sources) + 1, turn.index, i, "call", call.arguments, call.call_id)
                    query.tool, query.arguments = call.tool, call.parsed
                    made.append(query)
            sources.extend(made)
            mine.extend(made)
            system.extend(made[:1] if message.role == "system" else [])
        by_turn.append(mine)
    return ConversationIndex(sources, by_turn, system)


_CACHE: list[tuple[Conversation, ConversationIndex]] = []
_CACHE_SIZE = 4


def index_for(conversation: Conversation) -> ConversationIndex:
    """One index per conversation object, shared by the checkers of one suite run."""
    for held, index in _CACHE:
        if held is conversation:
            return index
    index = build_index(conversation)
    _CACHE.append((conversation, index))
    del _CACHE[:-_CACHE_SIZE]
    return index
