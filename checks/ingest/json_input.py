"""JSON from a request, read so that its shape cannot cost more than its size says.

Python's ``json`` reports two kinds of input badly: an integer of more digits than
``sys.get_int_max_str_digits()`` (4300 by default) raises a bare ValueError, and nesting
deeper than the interpreter's recursion limit a RecursionError; a reader that catches only
``JSONDecodeError`` answers both with a 500. ``loads`` turns them, and nesting deeper than
the reader's own limit, into ``JsonRefused`` with a message a client can act on.

A body of many tiny values (``[{},{},…]``) also costs far more decoded than sent: about 70
bytes of Python objects for every 3 bytes of ``{},``. ``more_values_than`` counts the values
of a body before it is decoded, cheaply, so that a reader can refuse one with too many.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 100  # as deep as protobuf's own default recursion limit
_STRING = re.compile(rb'"[^"]*"')
_CHUNK = 1 << 20


class JsonRefused(ValueError):
    """JSON this reader will not decode (a number too long, nesting too deep); says why."""

    def __init__(self, message: str, *, limit: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.limit = limit  # "depth" for the nesting limit, "" for what no setting changes


def loads(
    text: str, *, max_depth: int = MAX_DEPTH, parse_constant: Callable[[str], Any] | None = None
) -> Any:
    """``json.loads(text)``, or JsonRefused for what json reports badly or too deep a value.

    A syntax error is still raised as ``json.JSONDecodeError``, with its position;
    ``parse_constant`` is json's (for NaN and the infinities).
    """
    try:
        value = json.loads(text, parse_constant=parse_constant)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise too_deep(max_depth) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise JsonRefused(
                f"a number has more than {sys.get_int_max_str_digits()} digits; send it as a string"
            ) from None
        raise
    if deeper_than(value, max_depth):
        raise too_deep(max_depth)
    return value


def too_deep(max_depth: int) -> JsonRefused:
    return JsonRefused(f"the JSON is nested too deeply: more than {max_depth} levels", limit="depth")


def deeper_than(value: Any, max_depth: int) -> bool:
    """Whether arrays and objects nest more than ``max_depth`` levels (the outermost is 1).

    Level by level, without recursion: a fraction of what decoding the value cost.
    """
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        below: list[Any] = []
        for node in level:
            below += [
                child
                for child in (node.values() if type(node) is dict else node)
                if type(child) is dict or type(child) is list
            ]
        level = below
    return False


def more_values_than(raw: bytes, limit: int) -> bool:
    """Whether the JSON text ``raw`` holds more than ``limit`` values (objects, arrays,
    strings, numbers, literals; an object member counts once, its key and value together).

    Every value but the outermost is an element of an array or a member of an object, and
    a container of n > 0 of them holds n - 1 commas: so the values are one more than the
    commas and the non-empty containers outside strings. Counting the commas and opening
    brackets everywhere, strings included, is a bound, and usually enough; only when it is
    over the limit are the strings taken out, a megabyte at a time, to count exactly, and
    the counting stops as soon as it passes the limit. Nothing is decoded, and ``raw`` need
    not be valid JSON (its count is then what the rule above gives).
    """
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") + 1 <= limit:
        return False
    # Without escaped backslashes and escaped quotes, every quote left opens or closes a string.
    text = bytes(raw).replace(b"\\\\", b"").replace(b'\\"', b"")
    count, start, end_of_text = 1, 0, len(text)
    while start < end_of_text:
        end = min(start + _CHUNK, end_of_text)
        if text.count(b'"', start, end) % 2:  # the chunk ends inside a string: end after it
            close = text.find(b'"', end)
            end = end_of_text if close < 0 else close + 1
        # Each string becomes one character, and JSON's whitespace goes: "[ ]" is empty, [""] not.
        piece = _STRING.sub(b"0", text[start:end]).translate(None, b" \t\r\n")
        containers = piece.count(b"[") + piece.count(b"{") - piece.count(b"[]") - piece.count(b"{}")
        count += piece.count(b",") + containers
        if count > limit:
            return True
        start = end
    return False
