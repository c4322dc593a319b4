"""What a tool's name says it does: read, or change something, and to what.

Runtimes rarely label their calls, but tools are named by what they do:
``get_reservation_details`` reads, ``cancel_reservation`` changes a reservation,
``update_reservation_baggages`` changes its bags. The checkers that ask whether a call could
have changed something (action claims, numbers typed into a write) read the name's first
word as its verb and the rest as its object.

A name whose verb is one of ``READ_VERBS`` never changes anything; a receipt's own
``effect`` wins over the name where the runtime gave one.
"""

from __future__ import annotations

from .text import name_tokens, singular
from .types import Receipt

# Verbs of tools that only read or compute: a call of such a tool never changed anything.
READ_VERBS = frozenset(
    "get search list find lookup look calculate compute think show check fetch read query view "
    "describe count retrieve inspect browse validate verify estimate preview".split()
)


def verb_of(tool: str) -> str:
    """The first word of a tool's name: ``cancel`` for ``cancel_reservation``."""
    words = name_tokens(tool)
    return words[0] if words else ""


def object_words(tool: str) -> set[str]:
    """The words after the verb, in the singular: {reservation, baggage} for
    ``update_reservation_baggages``."""
    return {singular(word) for word in name_tokens(tool)[1:]}


def is_read_named(tool: str) -> bool:
    return verb_of(tool) in READ_VERBS


def may_write(tool: str, receipt: Receipt | None) -> bool:
    """Whether a call may have changed something: its receipt says so, or, where the runtime
    did not say, its name is not a read's."""
    if receipt is not None and receipt.effect in ("read", "write"):
        return receipt.effect == "write"
    return bool(tool) and not is_read_named(tool)
