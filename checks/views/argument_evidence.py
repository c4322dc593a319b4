"""What an argument finding shows: the call, its arguments with the one in question marked,
and the places on the page that could have supplied the value.

Most flags on real traffic are about a call's arguments, and "no tool result holds this
claim" tells a reviewer nothing about them: they need the call as it was made, the value
where it stands in it, and where it could have come from (the user's words, the system
prompt, the results read before the call), each a link to where it stands on the page.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .highlight import Mark, Piece, pieces

# A path as findings write it: ``payment_methods[1].amount``, ``ids[0]``, ``filters.host``.
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_SENTINEL = "\ue000value\ue000"


def marked_arguments(arguments: str, path: str, label: str) -> list[Piece] | None:
    """The call's arguments laid out as JSON, with the value at ``path`` marked; None where
    the arguments are no JSON or the path names nothing in them."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return None
    node, parent, step = value, None, None
    for key, index in _STEP.findall(path):
        parent = node
        try:
            step = int(index) if index else key
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    if parent is None:
        return None
    parent[step] = _SENTINEL
    text = json.dumps(value, indent=2, ensure_ascii=False)
    at = text.index(json.dumps(_SENTINEL, ensure_ascii=False))
    shown = json.dumps(node, ensure_ascii=False)
    text = text.replace(json.dumps(_SENTINEL, ensure_ascii=False), shown, 1)
    return pieces(text, [Mark(at, at + len(shown), "flagged", label)])


def possible_sources(
    earlier: list[Any], turn: list[Any], system: str, call_seq: int | None
) -> list[dict[str, str]]:
    """The places that could have supplied an argument typed into a call: the system prompt,
    the user's messages and the tool results of the earlier turns, and those of the call's
    own turn (``turn``) that stand before its request (``call_seq``)."""
    out = [{"kind": "the system prompt", "anchor": "sysprompt"}] if system else []
    before = [m for m in turn if call_seq is None or m.seq < call_seq]
    for message in [*earlier, *before]:
        if message.role in ("user", "tool"):
            kind = "the user's message" if message.role == "user" else "a tool result"
            out.append({"kind": kind, "anchor": f"msg-{message.pk}"})
    return out
