"""What a tool's name says it does: read, or change something, and to what.

Runtimes rarely label their calls, but tools are named by what they do:
``get_reservation_details`` reads, ``cancel_reservation`` changes a reservation,
``update_reservation_baggages`` changes its bags. The checkers that ask whether a call could
have changed something (action claims, numbers typed into a write) read the name's first
word as its verb and the rest as its object.

A name whose verb is one of ``READ_VERBS`` never changes anything; a receipt's own
``effect`` wins over the name where the runtime gave one. A name may also say neither
(``order_status``, ``inventory_level``): then each checker takes the reading that can only
leave it with fewer flags. A list read may have been changed by such a call
(``may_write``), but a number typed into it is no write's number (``surely_writes``): a
status query's page size is a filter, not a count someone must have given.
"""

from __future__ import annotations

from .text import name_tokens, singular
from .types import Receipt

# Verbs of tools that only read or compute: a call of such a tool never changed anything.
READ_VERBS = frozenset(
    "get search list find lookup look calculate compute think show check fetch read query view "
    "describe count retrieve inspect browse validate verify estimate preview".split()
)


# Verbs of tools that change something, by what they do; ``CHANGE_VERBS`` holds them all and
# the verbs of changes that fit none of the groups.
VERB_GROUPS = {
    "create": frozenset(
        "book create add make reserve place open schedule register insert save store new put post".split()
    ),
    "remove": frozenset("cancel delete remove drop void revoke close clear".split()),
    "change": frozenset(
        "update change modify edit set upgrade downgrade move reschedule rebook patch replace rename".split()
        + ["apply"]
    ),
    "send": frozenset("send email notify message post transfer forward share submit publish".split()),
}
CHANGE_VERBS = frozenset().union(*VERB_GROUPS.values()) | frozenset(
    "exchange return refund pay charge record log issue grant assign approve reject process execute run "
    "start stop restart deploy enable disable reset archive restore upload write append merge invite "
    "subscribe unsubscribe buy purchase sell withdraw deposit allocate release lock unlock mark tag flag "
    "ship dispatch order renew extend suspend resume activate deactivate confirm accept decline".split()
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


def says_it_writes(tool: str, receipt: Receipt | None) -> bool | None:
    """Whether a call changed something as its receipt or its name says: True, False, or None
    where neither says (a name with no verb of a read first and no verb of a change)."""
    if receipt is not None and receipt.effect in ("read", "write"):
        return receipt.effect == "write"
    if not tool or is_read_named(tool):
        return False
    # A verb of a change anywhere in the name ("cancel_order", "order_cancel"); a word that
    # is as often a noun ("order", "return") says nothing by itself ("order_status").
    if any(word in CHANGE_VERBS - _ALSO_NOUNS for word in name_tokens(tool)):
        return True
    return None


# Change verbs that are as often the object a name leads with: "order_status", "return_policy".
_ALSO_NOUNS = frozenset("order return flag tag mark post message email run issue charge log".split())


def may_write(tool: str, receipt: Receipt | None) -> bool:
    """Whether a call may have changed something: unless its receipt or its name says it
    only read."""
    return says_it_writes(tool, receipt) is not False


def surely_writes(tool: str, receipt: Receipt | None) -> bool:
    """Whether a call changed something by what its receipt or its name says."""
    return says_it_writes(tool, receipt) is True
