"""Adapters from the formats agents speak into the native shape (CONTRACT.md §1).

Each adapter is a function from the decoded payload to a native conversation dict; the
native shape is then validated and canonicalized once, whatever the format was.
"""

from collections.abc import Callable
from typing import Any

from . import native

Adapter = Callable[[Any], Any]

ADAPTERS: dict[str, Adapter] = {
    "native": native.adapt,
}


class UnknownFormat(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown format {name!r}; accepted: {', '.join(sorted(ADAPTERS))}")
        self.name = name


def to_native(payload: Any, format: str = "native") -> Any:
    try:
        adapter = ADAPTERS[format]
    except KeyError:
        raise UnknownFormat(format) from None
    return adapter(payload)
