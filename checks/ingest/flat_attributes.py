"""Lists written as flat span attributes, the way OpenInference and OpenLLMetry write them.

OTLP attributes cannot nest lists of objects in every SDK, so these conventions spell a list
out one key per leaf: ``llm.input_messages.0.message.role``,
``gen_ai.prompt.1.tool_calls.0.name``. ``indexed`` gathers such keys back into a list of
objects (each keyed by the rest of its keys), in index order.
"""

from __future__ import annotations

import json
from typing import Any

# A list index past this is not believed: a sender cannot make the reader build a list of
# this many empty entries with one attribute.
MAX_INDEX = 100_000


def indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The objects written under ``prefix.N.…``, in order of N (gaps closed up)."""
    start = prefix + "."
    entries: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start) :].partition(".")
        # ASCII digits only: isdigit() also takes "²", which int() refuses, and int() refuses
        # more than 4,300 digits; neither may stop the export (MAX_INDEX has six digits).
        if not (index.isascii() and index.isdigit() and len(index) <= 6 and rest) or int(index) > MAX_INDEX:
            continue
        entries.setdefault(int(index), {})[rest] = value
    return [entries[i] for i in sorted(entries)]


def has_prefix(attributes: dict[str, Any], prefix: str) -> bool:
    start = prefix + "."
    return any(key.startswith(start) for key in attributes)


def json_value(value: Any) -> Any:
    """A value that may be JSON text read as what it holds; text that is not JSON stays text."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"'):
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):
                return value
    return value


def text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
