"""Responses API requests chained by `previous_response_id`, joined to what they continue.

A Responses request that names `previous_response_id` sends only what came after that
response (a tool's output, the user's next words): the API keeps the rest. Each response
a conversation was stored with is recorded in its document's `metadata.response_ids`
(the adapter writes the payload's own `id`); a chained request is read as the stored
conversation that recorded the response it names, with its new messages appended: those
before its first user message extend the stored last turn, the rest are new turns. What
is appended is then checked like any resent conversation (``ingestion``).

The lookup is bounded: first the conversation stored under the response's id itself (a
chain begun without an `external_id` is named after its first response), else, among the
project's conversations begun in the last ``CHAIN_DAYS`` days (the Responses API keeps a
stored response 30 days), the one whose recorded ids hold it, found through the
`(project, created_at)` index. None, or more than one, and the request is left as it came,
for the adapter to refuse naming `previous_response_id`.

The ids a conversation records change its header, which a resend must match: so a
Responses payload for a conversation already stored carries the ids recorded before its
own, and the stored document records the new one, in the same transaction as the rest.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.utils import timezone

from .ingest import UnknownFormat, resolve_format, responses
from .ingest.responses import RESPONSE_IDS
from .models import Conversation, Project
from .suite.conversation import split_into_turns

CHAIN_DAYS = 30
# More than one conversation holding a response id is a sender's mistake: a few are enough to see it.
MAX_CANDIDATES = 5


def joined(*, project: Project, payload: Any, format: str | None) -> tuple[Any, str | None]:
    """The payload and its format as ingestion should read them: a chained Responses request
    as the stored conversation it continues (native), a Responses payload for a stored
    conversation with the response ids recorded before; anything else as it came."""
    if not isinstance(payload, dict):
        return payload, format
    try:
        if resolve_format(payload, format) != "responses":
            return payload, format
    except UnknownFormat:
        return payload, format  # to_document names it
    incoming = responses.read(payload)
    previous = responses.previous_response(payload)
    if previous is not None:
        stored = conversation_of_response(project, previous)
        if stored is None:
            return payload, format
        return continued(stored, incoming), "native"
    name = incoming.get("external_id")
    stored = (
        Conversation.objects.select_for_update().filter(project=project, external_id=name).first()
        if isinstance(name, str) and name
        else None
    )
    metadata = payload.get("metadata", {})
    if stored is None or not isinstance(metadata, dict):
        return payload, format
    ids = _record(stored, _ids(incoming))
    return {**payload, "metadata": {**metadata, RESPONSE_IDS: ids}}, format


def conversation_of_response(project: Project, response_id: str) -> Conversation | None:
    """The one conversation of the project that recorded this response, locked; None when
    none did, within the bounds above, or more than one did."""
    locked = Conversation.objects.select_for_update()
    named = locked.filter(project=project, external_id=response_id).first()
    if named is not None:
        return named
    candidates = locked.filter(
        project=project,
        created_at__gte=timezone.now() - timedelta(days=CHAIN_DAYS),
        # A rough text match the database can make, made exact below.
        **{f"metadata__{RESPONSE_IDS}__icontains": json.dumps(response_id, ensure_ascii=False)},
    ).order_by("-created_at")[:MAX_CANDIDATES]
    holding = [c for c in candidates if response_id in _ids(c.document)]
    return holding[0] if len(holding) == 1 else None


def continued(stored: Conversation, incoming: dict[str, Any]) -> dict[str, Any]:
    """The stored document with the chained request's messages appended, in the native shape."""
    document = stored.document
    new_ids = _ids(incoming)
    if new_ids and all(i in _ids(document) for i in new_ids):
        return document  # this response is stored already: a resend changes nothing
    ids = _record(stored, new_ids)
    document = stored.document
    messages, tools = _messages_of(incoming)
    turns = [dict(turn) for turn in document["turns"]]
    first_user = next(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), len(messages)
    )
    if not all(isinstance(m, dict) for m in messages):
        first_user = len(
            messages
        )  # all in the last turn, unsplit, for validation to name what is not a message
    if first_user:
        turns[-1]["messages"] = [*turns[-1]["messages"], *messages[:first_user]]
    for group in split_into_turns(messages[first_user:]):
        turns.append({"messages": group} if tools is None else {"messages": group, "tools_offered": tools})
    return {**document, "metadata": {**document["metadata"], RESPONSE_IDS: ids}, "turns": turns}


def _messages_of(native: dict[str, Any]) -> tuple[list[Any], list[Any] | None]:
    """The messages of an adapter's native output, flat, and the tools its turns offered
    (what is not a message stays, for validation to name)."""
    if isinstance(native.get("turns"), list):
        turns = [t for t in native["turns"] if isinstance(t, dict)]
        tools = turns[0].get("tools_offered") if turns else None
        return [m for t in turns for m in t.get("messages", [])], tools
    messages = native.get("messages")
    return (list(messages) if isinstance(messages, list) else [messages]), None


def _ids(document: dict[str, Any]) -> list[str]:
    metadata = document.get("metadata")
    recorded = metadata.get(RESPONSE_IDS) if isinstance(metadata, dict) else None
    return [i for i in recorded if isinstance(i, str)] if isinstance(recorded, list) else []


def _record(stored: Conversation, new_ids: list[str]) -> list[str]:
    """The stored ids followed by the new ones; the stored conversation records them too, so
    that a resend's header, which carries them, matches the stored header."""
    recorded = _ids(stored.document)
    ids = [*recorded, *(i for i in new_ids if i not in recorded)]
    if ids != recorded:
        stored.document = {**stored.document, "metadata": {**stored.document["metadata"], RESPONSE_IDS: ids}}
        stored.metadata = stored.document["metadata"]
        stored.save(update_fields=["document", "metadata"])
    return ids
