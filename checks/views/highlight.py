"""Splitting a text into plain and marked pieces, so templates can mark spans while Django
escapes every piece: untrusted text is never assembled into HTML by hand."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    start: int
    end: int
    kind: str  # a CSS modifier: flagged, info, grounded, evidence
    label: str  # explained on hover and focus
    anchor: str = ""  # the ids of what it belongs to (a finding, a grounded value), space-separated
    ref: str = ""  # an id for the span itself, where a page draws it once and links lead to it


@dataclass(frozen=True)
class Piece:
    text: str
    mark: Mark | None = None


def pieces(text: str, marks: list[Mark]) -> list[Piece]:
    """The text cut at each mark; where marks overlap, the earlier one keeps the overlap."""
    out: list[Piece] = []
    position = 0
    for mark in sorted(marks, key=lambda m: (m.start, -m.end)):
        start, end = max(mark.start, position), min(mark.end, len(text))
        if start >= end:
            continue
        if start > position:
            out.append(Piece(text[position:start]))
        out.append(Piece(text[start:end], mark))
        position = end
    if position < len(text):
        out.append(Piece(text[position:]))
    return out
