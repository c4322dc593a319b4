"""What a tool's name says it does: read, or change something, and to what.

Runtimes rarely label their calls, but tools are named by what they do: the first word of
``update_reservation_baggages`` is its verb, the rest its object. A receipt's own ``effect``
wins over the name. A name that says neither (``order_status``) is read the way that leaves
a checker fewer flags: such a call may have changed a list (``may_write``), but a number
typed into it is no write's number (``surely_writes``).
"""

from __future__ import annotations

from .text import name_tokens, singular
from .types import Receipt

# Verbs of tools that only read or compute: a call of such a tool never changed anything.
READ_VERBS = frozenset(
    "get search list find lookup look calculate compute think show check fetch read query view "
    "describe count retrieve inspect browse validate verify estimate preview".split()
)
# Verbs of tools that change something, by what they do; ``_CHANGE_VERBS`` adds those that fit
# no group, less those as often the noun a name leads with ("order_status", "return_policy").
VERB_GROUPS = {
    "create": frozenset(
        "book create add make reserve place open schedule register insert save store new put post".split()
    ),
    "remove": frozenset("cancel delete remove drop void revoke close clear".split()),
    "change": frozenset(
        "update change modify edit set upgrade downgrade move reschedule rebook patch replace rename "
        "apply".split()
    ),
    "send": frozenset("send email notify message post transfer forward share submit publish".split()),
}
GROUPED_VERBS = frozenset().union(*VERB_GROUPS.values())
_CHANGE_VERBS = GROUPED_VERBS | frozenset(
    "exchange return refund pay charge record log issue grant assign approve reject process execute run "
    "start stop restart deploy enable disable reset archive restore upload write append merge invite "
    "subscribe unsubscribe buy purchase sell withdraw deposit allocate release lock unlock mark tag flag "
    "ship dispatch order renew extend suspend resume activate deactivate confirm accept decline".split()
) - frozenset("order return flag tag mark post message email run issue charge log".split())


def verb_of(tool: str) -> str:
    """The first word of a tool's name: ``cancel`` for ``cancel_reservation``."""
    return (name_tokens(tool) or [""])[0]


def object_words(tool: str) -> set[str]:
    """The words after the verb, in the singular: {reservation, baggage}."""
    return {singular(word) for word in name_tokens(tool)[1:]}


def says_it_writes(tool: str, receipt: Receipt | None) -> bool | None:
    """Whether a call changed something as its receipt or its name says; None where neither
    does. A verb of a change may stand anywhere in the name ("order_cancel")."""
    if receipt is not None and receipt.effect in ("read", "write"):
        return receipt.effect == "write"
    if not tool or verb_of(tool) in READ_VERBS:
        return False
    return True if any(word in _CHANGE_VERBS for word in name_tokens(tool)) else None


def may_write(tool: str, receipt: Receipt | None) -> bool:
    return says_it_writes(tool, receipt) is not False


def surely_writes(tool: str, receipt: Receipt | None) -> bool:
    return says_it_writes(tool, receipt) is True
