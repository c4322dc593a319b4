"""Tool results on the turn page: the trees it draws (in the conversation, and in each
finding's evidence) with the spans that ground claims, and the parts of a result it fetches
as a reader opens them (a node's children, a stretch left out, an array as a table).

A result is named by its place in the conversation, the turn and the sequence number of its
tool message, which is also where a call's result lies (``ToolCall.turn``,
``ToolCall.result_seq``): so evidence and transcript point at the same thing without a
query to pair them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from ..models import Message
from . import result_tree
from .access import project_for
from .highlight import Mark

TRANSCRIPT_LINES = 300  # lines drawn of a result of this turn, besides the way to its spans
EVIDENCE_LINES = 150  # of a result in a finding's evidence
EARLIER_LINES = 0  # of a result of an earlier turn (closed inside "earlier turns" anyway)
PART_LINES = 400  # of a part fetched when a node is opened
MAX_MARKS = 200  # spans one request may ask to mark

Place = tuple[int, int]  # (turn id, sequence number of the tool message)


def span_ref(place: Place, start: int, end: int) -> str:
    """The id of a span where the conversation draws its result."""
    return f"rt-{place[0]}-{place[1]}-{start}-{end}"


def linker(slug: str, place: Place) -> Callable[[dict[str, Any]], str]:
    """Makes the addresses of the parts of one result."""
    base = reverse("result-part", args=[slug, place[0], place[1]])
    return lambda params: f"{base}?{urlencode(params)}"


def _span(call: Any, item: dict[str, Any]) -> tuple[int, int] | None:
    """Where an evidence item points in its call's result: its offsets, or, where it gives
    only a JSON path, the value at that path. None for the result as a whole (the evidence
    of a count is the whole result: it is shown, not marked) or a span outside it. None too
    for a span in the call's arguments (``of: arguments``), which are no part of its result."""
    if item.get("of") == "arguments":
        return None
    start, end = item.get("start"), item.get("end")
    text = call.result
    if not isinstance(start, int) or not isinstance(end, int):
        path = item.get("path")
        return result_tree.locate(text, path) if isinstance(path, str) and path else None
    if not 0 <= start < end <= len(text):
        return None
    if text[:start].strip() == "" and text[end:].strip() == "":
        return None
    return start, end


def evidence_tree(slug: str, call: Any, item: dict[str, Any], anchor: str) -> result_tree.Tree | None:
    """A call's result as a finding's evidence shows it: the span the item points to marked
    and opened, and a link to where the conversation shows it."""
    if call is None or call.result_seq is None:
        return None
    place = (call.turn_id, call.result_seq)
    marks = []
    span = _span(call, item)
    if span is not None:
        start, end = span
        marks.append(Mark(start, end, "evidence", f"Span {start}–{end}", anchor, span_ref(place, start, end)))
    return result_tree.draw(
        call.result, marks, link=linker(slug, place), budget=EVIDENCE_LINES, open_marked=True
    )


def spans_by_result(
    cards: Iterable[dict[str, Any]], grounded: Iterable[dict[str, Any]]
) -> dict[Place, list[Mark]]:
    """Every span the page's findings and grounded values point to, by the result it lies
    in; a span several of them share is one mark that names them all. Each grounded source
    gets the id of its span (``ref``), for its link to where the result stands."""
    found: dict[Place, dict[tuple[int, int], list[str]]] = {}

    def add(call: Any, item: dict[str, Any], anchor: str) -> str:
        span = _span(call, item) if call is not None and call.result_seq is not None else None
        if span is None:
            return ""
        start, end = span
        place = (call.turn_id, call.result_seq)
        anchors = found.setdefault(place, {}).setdefault((start, end), [])
        if anchor not in anchors:
            anchors.append(anchor)
        return span_ref(place, start, end)

    for card in cards:
        for evidence in card["evidence"]:
            add(evidence["call"], evidence["item"], f"finding-{card['finding'].pk}")
    for value in grounded:
        for source in value["sources"]:
            source["ref"] = add(source["call"], source["evidence"], value["anchor"])
    return {
        place: [
            Mark(start, end, "evidence", f"Characters {start}–{end} of the result", " ".join(anchors),
                 span_ref(place, start, end))
            for (start, end), anchors in sorted(spans.items())
        ]
        for place, spans in found.items()
    }  # fmt: skip


def conversation_tree(
    slug: str, message: Any, spans: dict[Place, list[Mark]], *, budget: int
) -> result_tree.Tree:
    """A tool message of the conversation as a tree, every span pointing into it marked."""
    place = (message.turn_id, message.seq)
    return result_tree.draw(message.text, spans.get(place, []), link=linker(slug, place), budget=budget)


def with_trees(
    slug: str, messages: list[dict[str, Any]], spans: dict[Place, list[Mark]]
) -> list[dict[str, Any]]:
    """The turn's message views, each tool message's with its result drawn as a tree."""
    for view in messages:
        if view["message"].role == "tool" and view["message"].text:
            view["tree"] = conversation_tree(slug, view["message"], spans, budget=TRANSCRIPT_LINES)
    return messages


def earlier_messages(slug: str, turns: Iterable[Any], spans: dict[Place, list[Mark]]) -> list[dict[str, Any]]:
    """The messages of the turns before this one, their tool results as trees drawn only as
    far as the spans in them (the rest is fetched when opened)."""
    return [
        {
            "message": m,
            "tree": conversation_tree(slug, m, spans, budget=EARLIER_LINES)
            if m.role == "tool" and m.text
            else None,
        }
        for t in turns
        for m in t.messages.all()
    ]


# --- the parts fetched as a reader opens them ---------------------------------------------

# ASCII digits only: \d, str.isdigit and int() also take Arabic-Indic, fullwidth and other
# digits (and int() then fails on a superscript), which no address of ours is written in.
_RANGE = re.compile(r"([0-9]{1,9})-([0-9]{1,9})")
_DIGITS = re.compile(r"[0-9]{1,10}")


class _Refused(ValueError):
    pass


def _number(
    request: HttpRequest, name: str, *, low: int, high: int, default: int | None = None
) -> int | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    if not _DIGITS.fullmatch(raw) or not low <= int(raw) <= high:
        raise _Refused(f"{name}: a whole number from {low} to {high}, not {raw[:40]!r}")
    return int(raw)


def _range(raw: str, name: str, size: int) -> tuple[int, int]:
    match = _RANGE.fullmatch(raw)
    if not match or not 0 <= int(match[1]) < int(match[2]) <= size:
        raise _Refused(
            f"{name}: a range start-end of characters within the result (0-{size}), not {raw[:40]!r}"
        )
    return int(match[1]), int(match[2])


def _marks(request: HttpRequest, size: int) -> list[Mark]:
    raw = request.GET.get("marks", "")
    ranges = [part for part in raw.split(",") if part] if raw else []
    if len(ranges) > MAX_MARKS:
        raise _Refused(f"marks: at most {MAX_MARKS} ranges")
    return [Mark(a, b, "evidence", f"Span {a}–{b}") for a, b in (_range(r, "marks", size) for r in ranges)]


@login_required
def result_part(request: HttpRequest, slug: str, pk: int, seq: int) -> HttpResponse:
    """A part of one tool result, as a fragment for the turn page: ``text=start-end`` a
    stretch left out; ``at`` (with ``depth``, and ``from``/``to`` for a range) a node's
    children; ``at`` with ``view=table`` (and ``from``) an array's rows as a table."""
    project, _ = project_for(request, slug)
    message = get_object_or_404(Message.objects.filter(project=project, role="tool"), turn_id=pk, seq=seq)
    text, link = message.text, linker(slug, (pk, seq))
    context: dict[str, Any] = {}
    try:
        if "text" in request.GET:
            start, end = _range(request.GET["text"], "text", len(text))
            context["lines"] = [
                result_tree.Line(
                    "stretch", value=result_tree.draw_text(text, start=start, end=end, link=link)
                )
            ]
        else:
            at = _number(request, "at", low=0, high=max(len(text) - 1, 0))
            if at is None:
                raise _Refused(
                    "at: the character offset of an object or array of the result (or text=start-end)"
                )
            first = _number(request, "from", low=0, high=10**9)
            marks = _marks(request, len(text))
            if request.GET.get("view", "") == "table":
                context["table"] = result_tree.draw_table(
                    text, at=at, first=first or 0, marks=marks, link=link
                )
            elif request.GET.get("view", ""):
                raise _Refused("view: table, or leave it out for the node's children")
            else:
                depth = _number(request, "depth", low=0, high=result_tree.MAX_DEPTH, default=0)
                last = _number(request, "to", low=1, high=10**9)
                context["lines"] = result_tree.draw_children(
                    text,
                    at=at,
                    depth=depth or 0,
                    first=first,
                    last=last,
                    marks=marks,
                    link=link,
                    budget=PART_LINES,
                )
    except _Refused as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    except result_tree.NotJson as exc:
        return HttpResponse(f"at: {exc} of this result", status=400, content_type="text/plain; charset=utf-8")
    except IndexError as exc:
        return HttpResponse(f"from/to: {exc}", status=400, content_type="text/plain; charset=utf-8")
    return render(request, "checks/result_part.html", context)
