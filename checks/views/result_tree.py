"""A tool result drawn as a folded tree: pretty-printed, every object and array collapsible,
long ones closed, an array of objects also as a table, and only as much of it drawn as a
reader can take in at once.

A result may be five megabytes of JSON. Drawn whole as nested HTML it would be tens of
megabytes and seconds of template work, and the answer below it would start tens of
thousands of pixels down the page. So a page draws a budget of lines and leaves the rest
*lazy*: a closed node whose children are fetched (``checks.views.results``) when it is
opened. The spans that ground a claim are always drawn, with every node on the way to them
(the *spine*), so the page can open the way to a span without asking the server.

Offsets are those of the result's own text, as the suite reports them: every key and value
shown is cut from the text where it stands, never serialized again, so a span's characters
are marked exactly where they are. Everything cut from the result reaches the page as a
``Piece`` that the template escapes.

Nothing here trusts the text: one that is not a JSON object or array, or has text after it,
is shown as text, clipped around its spans. The JSON is read with the standard library's C
scanner (``scan_once``, ``scanstring``): a node's size is learnt by decoding it at C speed,
and only the nodes drawn are walked in Python.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, untyped in typeshed
from typing import Any, NamedTuple

from .highlight import Mark, Piece, pieces

FOLD_ITEMS = 20  # an object or array with more children than this starts closed, and so do its children
FOLD_DEPTH = 3  # nodes this deep (the result itself is 0) start closed
BUCKET = 100  # children drawn at once; beyond it they are grouped in ranges of 100, 10,000, …
LEAF_CHARS = 600  # a longer value shows its start and its spans; the rest comes on demand
TEXT_CHARS = 20_000  # a result that is not JSON is shown whole up to this
CONTEXT = 200  # characters kept around a span where a value or text is clipped
GAP_CHARS = 200_000  # characters sent by one "show" of a clipped stretch
TABLE_ROWS = 100  # rows of a table drawn at once
TABLE_COLUMNS = 40  # keys of a table shown as columns
CELL_CHARS = 160  # a longer cell shows its start and its spans
WIDE_CELL = 32  # a longer cell may wrap; shorter ones keep to one line
PREVIEW_CHARS = 120  # the preview of a closed node
MAX_DEPTH = 64  # as deep as a stored result may nest (RECEIPTS_MAX_TOOL_JSON_DEPTH)

_WS = re.compile(r"[ \t\n\r]*")
_SPACES = re.compile(r"\s+")
_SPACE_CHARS = " \t\n\r"
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__
_UNREADABLE = (StopIteration, ValueError, RecursionError, IndexError)


class NotJson(ValueError):
    """The text (or the part of it asked for) is not a JSON object or array."""


@dataclass(frozen=True)
class Segment:
    """A stretch of a value or text: shown (with its marks), or clipped and fetched on demand."""

    pieces: list[Piece] = field(default_factory=list)
    url: str = ""  # set for a clipped stretch: fetches its text
    chars: int = 0  # how many characters were clipped


@dataclass
class Line:
    """One row of the tree as the template draws it. ``open`` starts a node (its children
    follow, then its ``close``); ``lazy`` is a closed node whose children are fetched;
    ``leaf`` is a value; ``text`` is a result that is not JSON."""

    kind: str
    key: list[Piece] = field(default_factory=list)  # an object's key as written, quotes included
    index: int | None = None  # an array item's position
    label: str = ""  # a range of children: "[100 … 199]"
    value: list[Segment] = field(default_factory=list)  # a leaf's text as written, or a text result
    scalar: str = ""  # a leaf's kind, for its colour: str, num, bool, null, empty
    bracket: str = ""  # "{" or "[" (empty for a range)
    count: int = 0  # children of a node
    noun: str = ""  # "keys" or "items"
    preview: str = ""  # what a closed node holds, in short
    open: bool = False
    url: str = ""  # a lazy node's children
    table_url: str = ""  # an array of objects: the same rows as a table
    marked: bool = False  # a span lies inside
    comma: bool = False

    @property
    def closing(self) -> str:
        return {"{": "}", "[": "]"}.get(self.bracket, "")


@dataclass
class Tree:
    """A result ready for the template: its lines, and the spans drawn in it."""

    lines: list[Line]
    is_json: bool
    spans: list[Mark]
    chars: int


@dataclass(frozen=True)
class Cell:
    segments: list[Segment]
    wide: bool  # long enough to wrap; short cells keep to one line


@dataclass
class TableRow:
    index: int
    cells: list[Cell | None]  # one per column; None where the row lacks the key


@dataclass
class Table:
    columns: list[str]
    rows: list[TableRow]
    first: int
    count: int
    more_columns: int
    previous_url: str
    next_url: str

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1


class _Child(NamedTuple):
    key: tuple[int, int] | None  # where an object's key is written, quotes included
    pos: int
    end: int


class _Summary(NamedTuple):
    end: int
    length: int  # how many children
    rows_of_objects: bool  # an array of two or more objects, which a table can show


class _Document:
    """Where the values of one JSON text lie, read only as far as the view needs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._summaries: dict[int, _Summary] = {}
        self._children: dict[int, tuple[list[_Child], int]] = {}

    def skip(self, i: int) -> int:
        """The first character from ``i`` on that is not JSON whitespace."""
        if i < len(self.text) and self.text[i] in _SPACE_CHARS:
            return _WS.match(self.text, i).end()  # type: ignore[union-attr]  # matches empty
        return i

    def is_node(self, pos: int) -> bool:
        return 0 <= pos < len(self.text) and self.text[pos] in "[{"

    def summary(self, pos: int) -> _Summary:
        """A node's size, from one decode of it at C speed."""
        known = self._summaries.get(pos)
        if known is None:
            try:
                value, end = _SCAN(self.text, pos)
            except _UNREADABLE as exc:
                raise NotJson(f"no JSON value starts at character {pos}") from exc
            if not isinstance(value, dict | list):
                raise NotJson(f"no JSON object or array starts at character {pos}")
            rows = isinstance(value, list) and len(value) > 1 and all(type(v) is dict for v in value)
            known = _Summary(end, len(value), rows)
            self._summaries[pos] = known
        return known

    def preview(self, pos: int, end: int) -> str:
        """What a closed node holds, in a line: its start as written, spaces collapsed."""
        inner = self.text[pos + 1 : min(end - 1, pos + 1 + 2 * PREVIEW_CHARS)]
        line = _SPACES.sub(" ", inner).strip()
        cut = len(line) > PREVIEW_CHARS or end - 1 > pos + 1 + 2 * PREVIEW_CHARS
        return line[: PREVIEW_CHARS - 1] + "…" if cut else line

    def children(self, pos: int) -> tuple[list[_Child], int]:
        """A node's children, where each key and value is written, and where the node ends.
        The one loop here that runs in Python for every child, so it is kept lean."""
        known = self._children.get(pos)
        if known is not None:
            return known
        if not self.is_node(pos):
            raise NotJson(f"no JSON object or array starts at character {pos}")
        text, is_object, skip, summary = self.text, self.text[pos] == "{", self.skip, self.summary
        close = "}" if is_object else "]"
        out: list[_Child] = []
        i = skip(pos + 1)
        try:
            if text[i] != close:
                while True:
                    key = None
                    if is_object:
                        if text[i] != '"':
                            raise NotJson(f"a key should start at character {i}")
                        key_end = scanstring(text, i + 1)[1]
                        key = (i, key_end)
                        i = skip(key_end)
                        if text[i] != ":":
                            raise NotJson(f"a colon should follow the key at character {i}")
                        i = skip(i + 1)
                    first = text[i]
                    end = summary(i).end if first == "{" or first == "[" else _SCAN(text, i)[1]
                    out.append(_Child(key, i, end))
                    i = skip(end)
                    if text[i] == ",":
                        i = skip(i + 1)
                    elif text[i] == close:
                        break
                    else:
                        raise NotJson(f"a comma or {close} should stand at character {i}")
        except NotJson:
            raise
        except _UNREADABLE as exc:
            raise NotJson(f"the JSON breaks off near character {i}") from exc
        known = (out, i + 1)
        self._children[pos] = known
        return known


@functools.lru_cache(maxsize=4)
def _document(text: str) -> _Document:
    """One reading of a result, shared by the trees of one page (the conversation and each
    finding's evidence draw the same result) and by the parts fetched from it next. A memo
    of a pure function of the text: bounded, and wrong never, only sometimes missed."""
    return _Document(text)


class _Drawing:
    """Lines of one result, drawn within a budget, with its spans marked."""

    def __init__(
        self,
        document: _Document,
        marks: list[Mark],
        *,
        link: Callable[[dict[str, Any]], str],
        budget: int = 0,
        open_marked: bool = False,
    ) -> None:
        self.doc = document
        self.marks = sorted(marks, key=lambda m: (m.start, m.end))
        self.link = link
        self.budget = budget
        self.open_marked = open_marked
        self.lines: list[Line] = []

    # --- spans -------------------------------------------------------------------------

    def marked(self, start: int, end: int) -> bool:
        """Whether a span lies in the node between the offsets, or begins or ends in it: the
        node is on the way to it. A span that covers the whole node (a count of its rows,
        say) marks what is drawn of it, but opens nothing."""
        return any(
            m.start < end and m.end > start and not (m.start <= start and m.end >= end) for m in self.marks
        )

    def cut(self, start: int, end: int) -> list[Piece]:
        """The text between two offsets, with the spans that fall in it marked."""
        text = self.doc.text[start:end]
        inside = [
            Mark(max(m.start, start) - start, min(m.end, end) - start, m.kind, m.label, m.anchor, m.ref)
            for m in self.marks
            if m.start < end and m.end > start
        ]
        return pieces(text, inside) if inside else [Piece(text)]

    def segments(self, start: int, end: int, limit: int) -> list[Segment]:
        """The text between two offsets; past ``limit`` characters, its start and the
        stretches around its spans, with the rest left to fetch."""
        if end - start <= limit:
            return [Segment(self.cut(start, end))]
        windows = [(start, start + limit // 2)]
        for m in self.marks:
            if m.start < end and m.end > start:
                windows.append(
                    (max(start, m.start - CONTEXT), min(end, min(m.end, m.start + limit) + CONTEXT))
                )
        out: list[Segment] = []
        at = start
        for left, right in sorted(windows):
            if right <= at:
                continue
            if left > at:
                out.append(self.gap(at, left))
            left = max(left, at)
            out.append(Segment(self.cut(left, right)))
            at = right
        if at < end:
            out.append(self.gap(at, end))
        return out

    def gap(self, start: int, end: int) -> Segment:
        return Segment(url=self.link({"text": f"{start}-{end}"}), chars=end - start)

    # --- nodes ---------------------------------------------------------------------------

    def node(self, child: _Child, index: int | None, depth: int, parent_long: bool, comma: bool) -> None:
        doc = self.doc
        key = self.cut(child.key[0], child.key[1]) if child.key else []
        if not doc.is_node(child.pos) or doc.summary(child.pos).length == 0:
            self.lines.append(
                Line(
                    "leaf",
                    key=key,
                    index=index,
                    value=self.segments(child.pos, child.end, LEAF_CHARS),
                    scalar=_scalar(doc.text[child.pos]),
                    marked=self.marked(child.pos, child.end),
                    comma=comma,
                )
            )
            return
        summary = doc.summary(child.pos)
        marked = self.marked(child.pos, child.end)
        opens = summary.length <= FOLD_ITEMS and depth < FOLD_DEPTH and not parent_long
        line = Line(
            "open",
            key=key,
            index=index,
            bracket=doc.text[child.pos],
            count=summary.length,
            noun="keys" if doc.text[child.pos] == "{" else "items",
            preview=doc.preview(child.pos, child.end),
            marked=marked,
            comma=comma,
            table_url=self.table_link(child.pos, child.end) if summary.rows_of_objects else "",
        )
        if not marked and not (opens and self.budget >= summary.length):
            line.kind, line.url = "lazy", self.link({"at": child.pos, "depth": depth})
            self.lines.append(line)
            return
        self.budget -= summary.length
        line.open = opens or (marked and self.open_marked)
        self.lines.append(line)
        kids, _ = doc.children(child.pos)
        self.kids(child.pos, kids, 0, len(kids), depth + 1)
        self.lines.append(Line("close", bracket=line.bracket, comma=comma))

    def kids(self, pos: int, kids: list[_Child], first: int, last: int, depth: int) -> None:
        """Children ``first`` to ``last`` of the node at ``pos``, grouped in ranges when many."""
        is_array = self.doc.text[pos] == "["
        long = len(kids) > FOLD_ITEMS
        count = last - first
        if count <= BUCKET:
            for i in range(first, last):
                self.node(kids[i], i if is_array else None, depth, long, i < len(kids) - 1)
            return
        size = BUCKET
        while -(-count // size) > BUCKET:
            size *= BUCKET
        for start in range(first, last, size):
            stop = min(start + size, last)
            label = f"[{start} … {stop - 1}]" if is_array else f"keys {start + 1} … {stop}"
            marked = self.marked(kids[start].pos, kids[stop - 1].end)
            if not marked:
                url = self.link({"at": pos, "depth": depth - 1, "from": start, "to": stop})
                self.lines.append(Line("lazy", label=label, count=stop - start, url=url))
                continue
            self.lines.append(
                Line("open", label=label, count=stop - start, marked=True, open=self.open_marked)
            )
            self.kids(pos, kids, start, stop, depth)
            self.lines.append(Line("close"))

    def table_link(self, start: int, end: int) -> str:
        inside = [f"{m.start}-{m.end}" for m in self.marks if m.start < end and m.end > start]
        params: dict[str, Any] = {"at": start, "view": "table"}
        if inside:
            params["marks"] = ",".join(inside)
        return self.link(params)


def _scalar(first: str) -> str:
    if first == '"':
        return "str"
    if first in "tf":
        return "bool"
    if first == "n":
        return "null"
    if first in "[{":
        return "empty"
    return "num"


def _root(document: _Document) -> _Child:
    """The result as one node, if it is a JSON object or array with nothing after it."""
    start = document.skip(0)
    if not document.is_node(start):
        raise NotJson("the result is not a JSON object or array")
    end = document.summary(start).end  # the whole text is decoded once, at C speed
    if document.skip(end) != len(document.text):
        raise NotJson(f"text follows the JSON at character {end}")
    return _Child(None, start, end)


def draw(
    text: str,
    marks: list[Mark],
    *,
    link: Callable[[dict[str, Any]], str],
    budget: int,
    open_marked: bool = False,
) -> Tree:
    """A whole result: a tree of about ``budget`` lines besides the spine of its spans, or,
    when it is not JSON, its text (whole up to TEXT_CHARS, else clipped around its spans).

    ``link`` makes the address that fetches a part of this result from its parameters.
    ``open_marked`` opens the nodes around the spans; otherwise they are drawn but closed
    until a reader (or the page, when a claim is chosen) opens them."""
    spans = sorted({(m.start, m.end): m for m in marks}.values(), key=lambda m: (m.start, m.end))
    document = _document(text)
    drawing = _Drawing(document, marks, link=link, budget=budget, open_marked=open_marked)
    try:
        root = _root(document)
        drawing.node(root, None, 0, False, False)
        return Tree(drawing.lines, True, spans, len(text))
    except NotJson:
        drawing.lines = [Line("text", value=drawing.segments(0, len(text), TEXT_CHARS))]
        return Tree(drawing.lines, False, spans, len(text))


_PATH_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def locate(text: str, path: str) -> tuple[int, int] | None:
    """Where the value at a JSON path (``rows[3].id``, as the suite writes evidence paths)
    is written in the result, a string's quotes left out; None where the path leads nowhere."""
    document = _document(text)
    try:
        root = _root(document)
    except NotJson:
        return None
    node, at = root, 0
    while at < len(path):
        step = _PATH_STEP.match(path, at)
        if step is None or not document.is_node(node.pos):
            return None
        at = step.end()
        index, key = step.groups()
        kids, _ = document.children(node.pos)
        if index is not None and document.text[node.pos] == "[" and int(index) < len(kids):
            node = kids[int(index)]
        elif key is not None and document.text[node.pos] == "{":
            named = [k for k in kids if k.key and json.loads(text[k.key[0] : k.key[1]]) == key]
            if not named:
                return None
            node = named[-1]  # as json.loads reads a repeated key: the last one holds
        else:
            return None
    if not path or node is root:
        return None
    if text[node.pos] == '"':
        return node.pos + 1, node.end - 1
    return node.pos, node.end


def draw_children(
    text: str,
    *,
    at: int,
    depth: int,
    first: int | None,
    last: int | None,
    marks: list[Mark],
    link: Callable[[dict[str, Any]], str],
    budget: int,
) -> list[Line]:
    """The children of the node at ``at`` (or those from ``first`` to ``last``), as a lazy
    node shows them once opened. Raises NotJson or IndexError for a node or range that is
    not there."""
    document = _document(text)
    kids, _ = document.children(at)
    first = 0 if first is None else first
    last = len(kids) if last is None else last
    if not 0 <= first < last <= len(kids):
        raise IndexError(f"the node has {len(kids)} children")
    drawing = _Drawing(document, marks, link=link, budget=budget)
    drawing.kids(at, kids, first, last, depth + 1)
    return drawing.lines


def draw_text(text: str, *, start: int, end: int, link: Callable[[dict[str, Any]], str]) -> list[Segment]:
    """A clipped stretch of the result as written, up to GAP_CHARS of it at a time."""
    drawing = _Drawing(_Document(text), [], link=link)
    stop = min(end, start + GAP_CHARS)
    out = [Segment(drawing.cut(start, stop))]
    if stop < end:
        out.append(drawing.gap(stop, end))
    return out


def draw_table(
    text: str, *, at: int, first: int, marks: list[Mark], link: Callable[[dict[str, Any]], str]
) -> Table:
    """Rows ``first`` onwards of the array at ``at``, one column per key (in the order the
    keys first appear on these rows), with the spans that fall in the cells marked."""
    document = _document(text)
    if document.text[at : at + 1] != "[":
        raise NotJson(f"no JSON array starts at character {at}")
    rows, _ = document.children(at)
    if not 0 <= first < max(len(rows), 1):
        raise IndexError(f"the array has {len(rows)} rows")
    drawing = _Drawing(document, marks, link=link)
    shown = rows[first : first + TABLE_ROWS]
    columns: dict[str, int] = {}
    fields: list[dict[str, _Child]] = []
    for row in shown:
        named: dict[str, _Child] = {}
        if document.text[row.pos] == "{":
            for child in document.children(row.pos)[0]:
                if child.key is None:  # never so: an object's children have keys
                    continue
                name = json.loads(text[child.key[0] : child.key[1]])
                named[name] = child
                if name not in columns and len(columns) < TABLE_COLUMNS:
                    columns[name] = len(columns)
        else:
            named[""] = row  # not an object: the value stands in a column of its own
            columns.setdefault("", len(columns))
        fields.append(named)
    names = list(columns)
    all_keys = {name for named in fields for name in named}
    out = []
    for offset, named in enumerate(fields):
        cells: list[Cell | None] = []
        for name in names:
            value = named.get(name)
            if value is None:
                cells.append(None)
            elif document.is_node(value.pos) and document.summary(value.pos).length:
                summary = document.summary(value.pos)
                noun = "keys" if document.text[value.pos] == "{" else "items"
                cells.append(
                    Cell([Segment([Piece(f"{document.text[value.pos]}{summary.length} {noun}…")])], False)
                )
            else:
                segments = drawing.segments(value.pos, value.end, CELL_CHARS)
                cells.append(Cell(segments, value.end - value.pos > WIDE_CELL))
        out.append(TableRow(first + offset, cells))
    step = {"at": at, "view": "table"}
    if marks:
        step["marks"] = ",".join(f"{m.start}-{m.end}" for m in marks)
    return Table(
        columns=names,
        rows=out,
        first=first,
        count=len(rows),
        more_columns=len(all_keys) - len(names),
        previous_url=link({**step, "from": max(0, first - TABLE_ROWS)}) if first > 0 else "",
        next_url=link({**step, "from": first + TABLE_ROWS}) if first + TABLE_ROWS < len(rows) else "",
    )
