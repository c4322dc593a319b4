"""Reading JSON request bodies within the limits of settings.py, for the views and for DRF.

Every JSON body the API reads goes through ``loads`` (nesting at most
RECEIPTS_JSON_MAX_DEPTH levels, numbers of at most Python's 4300 digits, each refused with a
400 that says so) and, where a body may be large, ``too_many_values`` (at most
RECEIPTS_JSON_MAX_VALUES values, refused with a 413 before anything is decoded).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import APIException, ParseError

from ..ingest import json_input
from .errors import TOO_LARGE

_LINE = re.compile(r"\S[^\n]*")  # a line's text from its first non-space character on


def loads(text: str) -> Any:
    """The JSON value of ``text``; JSONDecodeError, or JsonRefused (``refusal_text`` says it)."""
    return json_input.loads(text, max_depth=settings.RECEIPTS_JSON_MAX_DEPTH)


def refusal_text(exc: json_input.JsonRefused) -> str:
    """What JsonRefused says, with the setting that moves the limit when there is one."""
    if exc.limit == "depth":
        return f"{exc.message} (RECEIPTS_JSON_MAX_DEPTH)"
    return exc.message


def too_many_values(raw: bytes) -> str | None:
    """Why a body holds too many JSON values to decode, or None when it does not."""
    limit = settings.RECEIPTS_JSON_MAX_VALUES
    if not json_input.more_values_than(raw, limit):
        return None
    return (
        f"The body holds more than {limit} JSON values; send less at once, or raise the limit "
        "(RECEIPTS_JSON_MAX_VALUES)."
    )


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line of JSON Lines that is not blank, as it was sent
    (less a trailing CR). Lazily: a reader that stops early has split no more than it read,
    and blank lines cost no more than a search."""
    number, counted_to = 1, 0
    for match in _LINE.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        number += text.count("\n", counted_to, start)
        counted_to = start
        line = text[start : match.end()]
        yield number, line[:-1] if line.endswith("\r") else line


class TooManyValues(APIException):
    status_code = TOO_LARGE
    default_detail = "The body holds too many JSON values."


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, reading as the views read: a 400 (ParseError) for a number too
    long or nesting too deep where json would raise something else, a 413 for too many
    values."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read() if stream is not None else b""
        if reason := too_many_values(raw):
            raise TooManyValues(reason)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} ({exc.reason})") from None
        try:
            return json_input.loads(
                text,
                max_depth=settings.RECEIPTS_JSON_MAX_DEPTH,
                parse_constant=_strict_constant if self.strict else None,
            )
        except json_input.JsonRefused as exc:
            raise ParseError(f"JSON parse error - {refusal_text(exc)}") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


def _strict_constant(name: str) -> Any:
    raise ValueError(f"Out of range float values are not JSON compliant: {name}")
