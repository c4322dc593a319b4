"""Which stored conversation an OTLP piece belongs to, when its own name is not stored.

Instrumenting a model client with no parent span makes each model call a trace of its own,
named by its trace id: one conversation would come as many. A piece finds its conversation
in one of three ways, each an indexed lookup bounded by RECEIPTS_OTLP_JOIN_WINDOW_SECONDS:

- by an alias: the trace was joined to a conversation before (a later export of it);
- by its messages: the stored conversation, of the same agent and system instructions,
  whose messages are exactly the first messages of the call's input (every stored message,
  in order), found by the digest of each prefix (``Conversation.messages_hash``); when more
  than one fits, as templated agents that open alike do, none is taken;
- by a call id: a tool run with no model call beside it, and the one conversation whose
  call of that id it answers.

Nothing here writes a conversation: ingestion stores the piece once it knows where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from .ingest import pieces
from .models import Conversation, ConversationAlias, Project, ToolCall

# How many prefixes of a call's input are looked up, longest first: a stored conversation
# is most often the one the previous call made, a prefix of nearly the whole input.
MAX_PREFIXES = 1000
# Digests per query: under every database's limit on bound parameters.
CHUNK = 500


@dataclass(frozen=True)
class Found:
    """The conversation a piece belongs to (None: none, or ``fitting`` > 1 and none taken)."""

    conversation: Conversation | None
    fitting: int


TRACE_ID = re.compile(r"[0-9a-f]{32}")


def named_by_trace(name: str) -> bool:
    """True when a piece is named by its trace (a W3C trace id), not by a conversation id
    the sender gave (gen_ai.conversation.id, session.id): only such a piece may belong to a
    conversation of another name. A sender that names its conversations is taken at its word."""
    return TRACE_ID.fullmatch(name) is not None


def window_start() -> datetime:
    return timezone.now() - timedelta(seconds=settings.RECEIPTS_OTLP_JOIN_WINDOW_SECONDS)


def by_alias(project: Project, external_id: str) -> Conversation | None:
    """The conversation a trace of this name was joined to before, locked."""
    alias = ConversationAlias.objects.filter(project=project, external_id=external_id).first()
    if alias is None:
        return None
    return Conversation.objects.select_for_update().filter(pk=alias.conversation_id).first()


def unknown_names(project: Project, names: list[str]) -> set[str]:
    """The names no stored conversation has, nor answers to as an alias: a few queries for a
    whole export, so a piece under a new name is not looked up again on its own. (One
    stored meanwhile by another worker is met when its row is inserted: ingestion then
    looks it up after all.)"""
    unknown = set(names)
    for start in range(0, len(names), CHUNK):
        chunk = names[start : start + CHUNK]
        for model in (Conversation, ConversationAlias):
            found = model.objects.filter(project=project, external_id__in=chunk).values_list(
                "external_id", flat=True
            )
            unknown.difference_update(found)
    return unknown


def continued(project: Project, document: dict[str, Any]) -> Found:
    """The stored conversation whose messages begin the document's, of the same agent and
    system instructions, stored or extended within the window; locked when there is one."""
    digests = pieces.prefix_digests(pieces.messages_of(document), MAX_PREFIXES)
    candidates = (
        Conversation.objects.filter(
            project=project,
            updated_at__gte=window_start(),
            agent_name=document["agent"]["name"][:200],
            system=document["system"],
        )
        .exclude(external_id=document["external_id"])
        .order_by()
    )
    fitting: set[int] = set()
    for start in range(0, len(digests), CHUNK):
        chunk = digests[start : start + CHUNK]
        fitting.update(candidates.filter(messages_hash__in=chunk).values_list("pk", flat=True)[:2])
        if len(fitting) > 1:
            return Found(None, len(fitting))
    if not fitting:
        return Found(None, 0)
    return Found(Conversation.objects.select_for_update().filter(pk=fitting.pop()).first(), 1)


def holding_call(project: Project, call_id: str, agent: str) -> Found:
    """The conversation, stored or extended within the window (of the agent, when the tool
    run names one), that holds a call of this id; locked when there is exactly one."""
    calls = ToolCall.objects.filter(
        project=project, call_id=call_id, turn__conversation__updated_at__gte=window_start()
    )
    if agent:
        calls = calls.filter(turn__conversation__agent_name=agent[:200])
    holders = list(calls.order_by().values_list("turn__conversation_id", flat=True).distinct()[:2])
    if len(holders) != 1:
        return Found(None, len(holders))
    return Found(Conversation.objects.select_for_update().filter(pk=holders[0]).first(), 1)


def remember(conversation: Conversation, external_id: str) -> None:
    """Records that the trace of this name belongs to the conversation."""
    if external_id != conversation.external_id:
        ConversationAlias.objects.get_or_create(
            project_id=conversation.project_id,
            external_id=external_id,
            defaults={"conversation": conversation},
        )


MAX_NOTED = 20


def noted(document: dict[str, Any], *, trace: str, by: str) -> dict[str, Any]:
    """The document with a note in its metadata that a trace was joined to it, and how:
    how many were, and the latest few."""
    metadata = dict(document.get("metadata") or {})
    given = metadata.get("joined")
    before: dict[str, Any] = given if isinstance(given, dict) else {}
    listed = before.get("recent")
    recent = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
    recent = recent[-(MAX_NOTED - 1) :]
    counted = before.get("count")
    count = counted if isinstance(counted, int) else len(recent)
    metadata["joined"] = {
        "count": count + 1,
        "recent": [*recent, {"trace": trace, "by": by, "at": timezone.now().isoformat()}],
    }
    return {**document, "metadata": metadata}
