"""Ingestion: a payload in any supported format becomes a stored conversation.

Each workflow is keyword-only and runs in one transaction: a request either stores everything
it brings or nothing. What is stored is checked by a run scheduled in ``checking``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from . import checking, joining, response_chains, suite
from .ingest import UnknownFormat, Unreadable, otel, pieces, resolve_format, to_native
from .models import (
    CheckRun,
    Conversation,
    Message,
    Payload,
    Project,
    RawExport,
    ToolCall,
    Turn,
)
from .suite import conversation as native


class IngestError(Exception):
    status_code = 400
    detail = "The conversation is not valid."

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{e['path']}: {e['message']}" for e in errors))
        self.errors = errors


class InvalidPayload(IngestError):
    status_code = 400


class ConversationConflict(IngestError):
    status_code = 409
    detail = "The conversation conflicts."


class Unattached(IngestError):
    """A tool run exported alone whose call no stored conversation holds (yet)."""

    status_code = 422
    detail = "The tool run answers no stored call."


class TooLarge(IngestError):
    """Over a limit of settings.py on what one conversation may hold; each error names it."""

    status_code = 413
    detail = "The conversation is over a size limit."


@dataclass(frozen=True)
class IngestResult:
    status: Literal["created", "unchanged", "appended"]
    conversation: Conversation
    run: CheckRun | None


# What a database cannot keep in text or JSON (defined beside the OTLP reader, which needs it
# too and which this module imports).
UNSTORABLE_TEXT = otel.UNSTORABLE_TEXT


MAX_UNSTORABLE_REPORTED = 20


def unstorable_values(payload: Any) -> list[dict[str, str]]:
    """JSON that parses but cannot be stored as text or JSON in a database: U+0000, unpaired
    surrogates, and numbers that are not finite (NaN, Infinity, 1e400). Walked without
    recursion, so no nesting depth can stop the walk."""
    errors: list[dict[str, str]] = []
    stack: list[tuple[str, Any]] = [("$", payload)]
    while stack and len(errors) < MAX_UNSTORABLE_REPORTED:
        path, value = stack.pop()
        if isinstance(value, str):
            if UNSTORABLE_TEXT.search(value):
                errors.append({"path": path, "message": "holds U+0000 or an unpaired surrogate; remove it"})
        elif isinstance(value, float):
            if not math.isfinite(value):
                errors.append({"path": path, "message": "must be a finite number (not NaN or Infinity)"})
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and UNSTORABLE_TEXT.search(key):
                    errors.append(
                        {"path": f"{path}.{key!r}", "message": "a key holds U+0000 or an unpaired surrogate"}
                    )
                    continue
                stack.append((f"{path}.{key}", item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))
    return sorted(errors, key=lambda e: e["path"])


def content_hash(document: dict[str, Any]) -> str:
    encoded = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


def to_document(payload: Any, *, format: str | None = "native") -> dict[str, Any]:
    """The canonical native form of a payload, or InvalidPayload listing every problem
    (TooLarge for a conversation over the size limits, ``over_limits``)."""
    _refuse_unstorable(payload)
    return _read(payload, format)


def _refuse_unstorable(payload: Any) -> None:
    """InvalidPayload naming each value of the payload a database cannot hold. Called before
    anything is looked up by a name the payload carries (its external_id, a Responses
    chain's previous_response_id): a query cannot even carry such a name."""
    if unstorable := unstorable_values(payload):
        raise InvalidPayload(unstorable)


def _read(payload: Any, format: str | None) -> dict[str, Any]:
    """``to_document`` for a payload whose values are known to be storable."""
    try:
        data = to_native(payload, format)
    except UnknownFormat as exc:
        raise InvalidPayload([{"path": "format", "message": str(exc)}]) from exc
    except Unreadable as exc:  # a part the format's reader does not understand, by its path
        raise InvalidPayload(exc.errors) from exc
    if over := over_limits(data):
        raise TooLarge(over)
    try:
        return native.canonical(data)
    except native.InvalidConversation as exc:
        raise InvalidPayload(exc.errors) from exc


MAX_TOO_DEEP_REPORTED = 20


def over_limits(data: Any) -> list[dict[str, str]]:
    """How a conversation in the native shape goes past the limits on what one may hold
    (RECEIPTS_MAX_TURNS, RECEIPTS_MAX_MESSAGES, RECEIPTS_MAX_TOOL_JSON_DEPTH,
    RECEIPTS_MAX_ANSWER_BYTES), each error naming the limit and its setting; empty when it is
    within all of them."""
    errors: list[dict[str, str]] = []
    where = "$.turns" if isinstance(data, dict) and "turns" in data else "$.messages"
    turns, messages = native.size_of(data)
    for count, noun, limit, setting, path in (
        (turns, "turns", settings.RECEIPTS_MAX_TURNS, "RECEIPTS_MAX_TURNS", where),
        (messages, "messages", settings.RECEIPTS_MAX_MESSAGES, "RECEIPTS_MAX_MESSAGES", where),
    ):
        if count > limit:
            errors.append(
                {
                    "path": path,
                    "message": f"holds {count} {noun}, more than the limit of {limit} ({setting}); "
                    "send the conversation in parts under different external_ids, or raise the limit",
                }
            )
    depth = settings.RECEIPTS_MAX_TOOL_JSON_DEPTH
    for path, _ in native.tool_json_deeper_than(data, depth)[:MAX_TOO_DEEP_REPORTED]:
        errors.append(
            {
                "path": path,
                "message": f"nests arrays and objects more than {depth} levels deep, the limit "
                "(RECEIPTS_MAX_TOOL_JSON_DEPTH)",
            }
        )
    longest = settings.RECEIPTS_MAX_ANSWER_BYTES
    for path, size in native.answers_longer_than(data, longest)[:MAX_TOO_DEEP_REPORTED]:
        errors.append(
            {
                "path": path,
                "message": f"is {size} bytes of text, more than the limit of {longest} bytes for one "
                "assistant message (RECEIPTS_MAX_ANSWER_BYTES); send a shorter answer, or raise the limit",
            }
        )
    return errors


@transaction.atomic
def ingest_conversation(
    *,
    project: Project,
    payload: Any,
    body: str,
    format: str | None = "native",
    enqueue: bool = True,
) -> IngestResult:
    """Stores a conversation and schedules its check, following CONTRACT.md §1 on resending.

    With ``enqueue`` false the run is created but not sent to the workers: the caller sends
    many at once (see ``ingest_many``)."""
    _refuse_unstorable(payload)
    # A chained request becomes the stored document with the request's (checked) messages.
    payload, format = response_chains.joined(project=project, payload=payload, format=format)
    document = _read(payload, format)
    return _ingest_document(
        project=project,
        document=document,
        existing=_locked_conversation(project, document["external_id"]),
        body=body,
        stored_format=_format_name(payload, format),
        enqueue=enqueue,
    )


def _ingest_document(
    *,
    project: Project,
    document: dict[str, Any],
    existing: Conversation | None,
    body: str,
    stored_format: str,
    enqueue: bool,
    export: RawExport | None = None,
    merged: bool = False,
) -> IngestResult:
    """Stores a canonical document beside ``existing``, the conversation stored (and locked)
    under its external_id, if any. ``stored_format`` is recorded with the payload: what the
    sender sent, which for an OTLP export is not the native shape stored here. A ``merged``
    document was built on the stored one (``pieces.merge_with_stored``): its header is the
    stored header with notes added, so only its turns are judged."""
    digest = content_hash(document)
    external_id = document["external_id"]
    if existing is None:
        try:
            with transaction.atomic():
                conversation = _create_conversation(project, document, digest)
        except IntegrityError:
            # Another request created it a moment ago: judge this one against what it stored.
            existing = _locked_conversation(project, external_id)
            if existing is None:
                raise
        else:
            _store_turns(conversation, document["turns"], first_index=0, created=True)
            Payload.objects.create(
                project=project, conversation=conversation, body=body, export=export, format=stored_format
            )
            return IngestResult(
                "created", conversation, _schedule(conversation, enqueue, export, created=True)
            )

    if existing.content_hash == digest:
        return IngestResult("unchanged", existing, None)
    same_header = merged or _same_header(existing.document, document)
    first = pieces.first_changed_turn(existing.document, document) if same_header else None
    if first is None:
        where = pieces.first_difference(existing.document, document)
        if where == "$":
            where = "its header (title, agent, started_at, metadata, system)"
        raise ConversationConflict(
            [
                {
                    "path": "$.turns" if same_header else "$",
                    "message": (
                        f"conversation {external_id!r} is already stored with different content "
                        f"(from {where} on); resend it unchanged, or send its stored messages unchanged "
                        "followed by new ones (in its last turn or in new turns), or use a new external_id"
                    ),
                }
            ]
        )
    return _store_again(
        existing,
        document,
        digest,
        first,
        body=body,
        stored_format=stored_format,
        export=export,
        enqueue=enqueue,
    )


def _store_again(
    conversation: Conversation,
    document: dict[str, Any],
    digest: str,
    first: int,
    *,
    body: str,
    stored_format: str,
    export: RawExport | None,
    enqueue: bool,
) -> IngestResult:
    """Stores a changed document over the stored one from turn ``first`` on: that turn's
    rows and those after it are written again (the Turn rows kept, so the findings on them
    and the decisions on those stay), further turns added. The whole conversation is then
    checked again; a finding that still holds keeps its fingerprint, and so its decisions."""
    _replace_document(conversation, document, digest)
    conversation.save(update_fields=REPLACED_FIELDS)
    _store_turns(conversation, document["turns"][first:], first_index=first)
    Payload.objects.create(
        project=conversation.project,
        conversation=conversation,
        body=body,
        export=export,
        format=stored_format,
    )
    return IngestResult("appended", conversation, _schedule(conversation, enqueue, export))


REPLACED_FIELDS = ["document", "content_hash", "messages_hash", "metadata", "updated_at"]


def _replace_document(conversation: Conversation, document: dict[str, Any], digest: str) -> None:
    """Sets the fields of a conversation stored again (``REPLACED_FIELDS``); the caller saves."""
    conversation.document = document
    conversation.content_hash = digest
    conversation.messages_hash = pieces.messages_digest(pieces.messages_of(document))
    conversation.metadata = document["metadata"]
    conversation.updated_at = timezone.now()


def _schedule(
    conversation: Conversation, enqueue: bool, export: RawExport | None, *, created: bool = False
) -> CheckRun:
    """The check of what was just stored: a run of its own for a REST payload, sent to the
    workers unless ``enqueue`` is false; for an OTLP export, the conversation's run once its
    trace has settled (``checking.settle_runs``), which the export's caller sends."""
    if export is not None:
        return checking.settle_runs([conversation], created=created)[0]
    return checking.schedule_run(conversation, enqueue)


def _format_name(payload: Any, format: str | None) -> str:
    """The format a payload was read in, detected where the sender left it to us."""
    try:
        return resolve_format(payload, format)
    except UnknownFormat:
        return str(format)


def _locked_conversation(project: Project, external_id: str) -> Conversation | None:
    return Conversation.objects.select_for_update().filter(project=project, external_id=external_id).first()


def _header(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "turns"}


def _same_header(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return _header(old) == _header(new)


def _create_conversation(project: Project, document: dict[str, Any], digest: str) -> Conversation:
    row = _conversation_row(project, document, digest)
    row.save(force_insert=True)
    return row


def _conversation_row(project: Project, document: dict[str, Any], digest: str) -> Conversation:
    started = document.get("started_at")
    return Conversation(
        project=project,
        external_id=document["external_id"],
        title=document["title"][:500],
        agent_name=document["agent"]["name"][:200],
        agent_model=document["agent"]["model"][:200],
        started_at=parse_datetime(started) if started else None,
        metadata=document["metadata"],
        system=document["system"],
        receipts_complete=document["receipts_complete"],
        document=document,
        content_hash=digest,
        messages_hash=pieces.messages_digest(pieces.messages_of(document)),
    )


def _store_turns(
    conversation: Conversation, turns: list[dict[str, Any]], *, first_index: int, created: bool = False
) -> None:
    """Writes turns, messages and tool calls in a few bulk inserts and updates, whatever
    their number (see ``_store_turns_of``)."""
    if turns:
        _store_turns_of(conversation.project, [(conversation, first_index)], created=created)


def _store_turns_of(
    project: Project, changed: list[tuple[Conversation, int]], *, created: bool = False
) -> None:
    """Writes the turns of each conversation from its index on (its document's turns), for
    all of them in a few statements. A turn already stored at an index keeps its row (and the
    findings on it); its messages and tool calls are written anew. Conversations ``created``
    just now have none stored: none is looked for."""
    stored: dict[int, dict[int, Turn]] = {conversation.pk: {} for conversation, _ in changed}
    if not created:
        after = Q()
        for conversation, first_index in changed:
            after |= Q(conversation=conversation, index__gte=first_index)
        old = list(Turn.objects.filter(after))
        for row in old:
            stored[row.conversation_id][row.index] = row
        if old:
            Message.objects.filter(turn__in=old).delete()
            ToolCall.objects.filter(turn__in=old).delete()
    now = timezone.now()
    rows: list[Turn] = []
    parsed: list[suite.types.Turn] = []
    for conversation, first_index in changed:
        conversation_rows, conversation_parsed = _turn_rows(
            conversation, first_index, stored[conversation.pk], now
        )
        rows += conversation_rows
        parsed += conversation_parsed
    Turn.objects.bulk_update([row for row in rows if row.pk], ["answer", "answer_seq", "tools_offered"])
    Turn.objects.bulk_create([row for row in rows if not row.pk])
    _store_contents(project, rows, parsed, now)


def _turn_rows(
    conversation: Conversation, first_index: int, stored: dict[int, Turn], now: Any
) -> tuple[list[Turn], Sequence[suite.types.Turn]]:
    """The conversation's turns from ``first_index`` on as rows (a stored one, from
    ``stored`` by index, kept and updated), beside the turns as the suite reads them."""
    # Parse the whole document so handles and derived receipts number as the suite numbers them.
    parsed = native.from_canonical(conversation.document).turns[first_index:]
    rows: list[Turn] = []
    for turn in parsed:
        row = stored.get(turn.index) or Turn(
            project=conversation.project, conversation=conversation, index=turn.index, created_at=now
        )
        row.answer = turn.answer
        row.answer_seq = turn.answer_index
        row.tools_offered = list(turn.tools_offered) if turn.tools_offered is not None else None
        rows.append(row)
    return rows, parsed


def _store_contents(project: Project, rows: list[Turn], parsed: Sequence[suite.types.Turn], now: Any) -> None:
    """Inserts the messages and tool calls of turns whose (saved) rows are ``rows``, one insert each."""
    messages: list[Message] = []
    calls: list[ToolCall] = []
    for row, turn in zip(rows, parsed, strict=True):
        for seq, message in enumerate(turn.messages):
            messages.append(
                Message(
                    project=project,
                    turn=row,
                    seq=seq,
                    role=message.role,
                    content=message.content,
                    text=message.text,
                    tool_call_id=message.tool_call_id or "",
                    is_error=message.is_error,
                    created_at=now,
                )
            )
        calls.extend(_tool_call_rows(project, row, turn, now))
    Message.objects.bulk_create(messages)
    ToolCall.objects.bulk_create(calls)


def _tool_call_rows(project: Project, row: Turn, turn: suite.types.Turn, now: Any) -> list[ToolCall]:
    """One row per call, beside the result that answers it and the receipt that records it
    (paired as the suite pairs them: an id may be reused once its call was answered)."""
    out = []
    for call in turn.tool_calls:
        result_seq = turn.result_index(call)
        result = turn.messages[result_seq] if result_seq is not None else None
        receipt = turn.receipt_of(call)
        out.append(
            ToolCall(
                project=project,
                turn=row,
                call_id=call.call_id,
                tool=call.tool,
                arguments=call.arguments,
                request_seq=call.message_index,
                result=result.text if result else "",
                result_seq=result_seq,
                has_result=result is not None,
                receipt=dataclasses.asdict(receipt) if receipt else None,
                created_at=now,
            )
        )
    # Receipts of calls the transcript does not show are kept too: they are ground truth.
    for receipt in turn.receipts:
        if turn.call_of(receipt) is not None:
            continue
        out.append(
            ToolCall(
                project=project,
                turn=row,
                call_id=receipt.call_id or "",
                tool=receipt.tool,
                receipt=dataclasses.asdict(receipt),
                created_at=now,
            )
        )
    return out


@dataclass(frozen=True)
class ItemResult:
    """What became of one conversation of a bulk request."""

    index: int
    status: Literal["created", "unchanged", "appended", "conflict", "invalid"]
    external_id: str | None
    conversation: Conversation | None = None
    errors: list[dict[str, str]] = dataclasses.field(default_factory=list)
    run_id: int | None = None  # the check scheduled for it, if any


@transaction.atomic
def ingest_many(
    *, project: Project, items: list[tuple[Any, str]], format: str | None = "native"
) -> list[ItemResult]:
    """Stores many conversations in one transaction, each stored or refused on its own."""

    def attempt(payload: Any, body: str) -> Callable[[], IngestResult]:
        return lambda: ingest_conversation(
            project=project, payload=payload, body=body, format=format, enqueue=False
        )

    return _store_each([(_sender_id(payload), attempt(payload, body)) for payload, body in items])


def _sender_id(payload: Any) -> str | None:
    """The name the sender gave an item, to answer with its result. What no database can keep
    (U+0000, an unpaired surrogate, which the answer could not even encode as UTF-8) reads
    as U+FFFD, as on the Refusals page; the item's errors say what it was."""
    external_id = payload.get("external_id") if isinstance(payload, dict) else None
    return UNSTORABLE_TEXT.sub("\ufffd", external_id) if isinstance(external_id, str) else None


def _store_each(attempts: list[tuple[str | None, Callable[[], IngestResult]]]) -> list[ItemResult]:
    """Runs each ingestion on a savepoint of its own, so a refusal undoes only itself, and
    sends the checks of everything stored to the workers in batches once all is committed."""
    results = _attempt_each(attempts)
    run_ids = _run_ids(results)
    transaction.on_commit(lambda: checking.enqueue_runs(run_ids))
    return results


def _run_ids(results: list[ItemResult]) -> list[int]:
    """The runs scheduled for what was stored, each once (an export's conversations may share one)."""
    return list(dict.fromkeys(r.run_id for r in results if r.run_id is not None))


def _attempt_each(
    attempts: Sequence[tuple[str | None, Callable[[], IngestResult] | IngestResult]],
) -> list[ItemResult]:
    """Runs each ingestion on a savepoint of its own, so a refusal undoes only itself; an
    attempt that is a result already (stored with others: ``_store_new``) is taken as it is."""
    results: list[ItemResult] = []
    for index, (external_id, attempt) in enumerate(attempts):
        try:
            if isinstance(attempt, IngestResult):
                result = attempt
            else:
                with transaction.atomic():
                    result = attempt()
        except IngestError as exc:
            status: Literal["conflict", "invalid"] = "conflict" if exc.status_code == 409 else "invalid"
            results.append(ItemResult(index, status, external_id, errors=exc.errors))
            continue
        run_id = result.run.pk if result.run is not None else None
        results.append(
            ItemResult(
                index, result.status, result.conversation.external_id, result.conversation, run_id=run_id
            )
        )
    return results


@dataclass(frozen=True)
class ExportResult:
    """What became of an OTLP export: each conversation it carried (and each tool run it
    attached), the conversations it could not build, and the check runs to send once it is
    committed (``run_ids``: the caller sends them, after the settle time)."""

    items: list[ItemResult]
    skipped: list[dict[str, str]]
    run_ids: list[int] = dataclasses.field(default_factory=list)


@transaction.atomic
def ingest_export(
    *,
    project: Project,
    export: RawExport,
    reading: otel.Reading,
    tool_results: dict[str, list[pieces.ToolResult]] | None = None,
) -> ExportResult:
    """Stores the conversations of one OTLP export, kept as received in ``export``. Exports
    of one conversation arrive over time, each with the spans seen since: each is read as an
    extension of what is stored, under its own name, a name joined to a conversation before,
    or (each model call its own trace) the conversation its messages continue (``joining``).
    ``tool_results`` are the tool runs of conversations the reader could not build
    (``pieces.lone_tool_results``): each is put beside the stored call it answers, or
    refused. The checks are not sent: the caller sends ``run_ids`` once it commits."""
    tool_results = tool_results or {}
    names = [c["external_id"] for c in reading.conversations if isinstance(c.get("external_id"), str)]
    unknown = joining.unknown_names(project, [name for name in names if otel.storable(name)])
    stored_together = _store_new(project, reading.conversations, unknown, export)
    rest = [c for c in reading.conversations if id(c) not in stored_together]
    stored_together |= _extend_stored(project, rest, unknown, export)

    def attempt(conversation: dict[str, Any]) -> Callable[[], IngestResult] | IngestResult:
        if (result := stored_together.get(id(conversation))) is not None:
            return result
        return lambda: _store_piece(project, to_document(conversation), export, unknown)

    def attach(result: pieces.ToolResult) -> Callable[[], IngestResult]:
        return lambda: _attach_tool_result(project, result, export)

    # A tool run whose chat span came without its messages goes to the conversation of its
    # own name when one is stored (its content came as log records); else the reader's
    # reason for that name stands, and nothing is tried by call id.
    attached = {
        name: results
        for name, results in tool_results.items()
        if all(r.alone for r in results) or _stored_under(project, name)
    }
    attempts = [(_sender_id(c), attempt(c)) for c in reading.conversations]
    attempts += [(result.name, attach(result)) for results in attached.values() for result in results]
    items = _attempt_each(attempts)
    skipped = [s for s in reading.skipped if s["external_id"] not in attached]
    return ExportResult(items, skipped, _run_ids(items))


def _store_new(
    project: Project, conversations: list[dict[str, Any]], unknown: set[str], export: RawExport
) -> dict[int, IngestResult]:
    """The conversations of an export under names nothing is stored under (``unknown``), and
    that no other conversation may continue (named by the sender, not by a trace: see
    ``joining``), stored together: one insert per table for all of them, not one per
    conversation. By the identity of each conversation dict stored; what is not (invalid,
    or another worker stored one of the names meanwhile) is left to ``_store_piece``."""
    documents: dict[int, dict[str, Any]] = {}
    for conversation in conversations:
        name = conversation.get("external_id")
        if isinstance(name, str) and name in unknown and not joining.named_by_trace(name):
            try:
                documents[id(conversation)] = to_document(conversation)
            except IngestError:
                continue  # refused on its own, with its errors, by _store_piece
    if len(documents) < 2 or not connection.features.can_return_rows_from_bulk_insert:
        return {}
    rows = {
        key: _conversation_row(project, document, content_hash(document))
        for key, document in documents.items()
    }
    try:
        with transaction.atomic():
            Conversation.objects.bulk_create(rows.values())
            _store_turns_of(project, [(row, 0) for row in rows.values()], created=True)
            Payload.objects.bulk_create(
                Payload(project=project, conversation=row, body="", export=export, format="otlp")
                for row in rows.values()
            )
            runs = checking.settle_runs(list(rows.values()), created=True)
    except IntegrityError:
        return {}  # a name was stored meanwhile: each is stored on its own, and meets it
    for row in rows.values():
        unknown.discard(row.external_id)
    return {
        key: IngestResult("created", row, run) for (key, row), run in zip(rows.items(), runs, strict=True)
    }


def _extend_stored(
    project: Project, conversations: list[dict[str, Any]], unknown: set[str], export: RawExport
) -> dict[int, IngestResult]:
    """The conversations of an export that continue the conversation stored under their own
    name, stored together: the stored rows locked and the new turns written in a few
    statements for them all, not a dozen per conversation, as ``_store_piece`` would store
    each. By the identity of each conversation dict; what is anything else (invalid, a
    conflict, a name joined by an alias or by a trace, a name twice in the export) is left
    to ``_store_piece``, which says why."""
    times = Counter(c.get("external_id") for c in conversations)
    once = {name for name, n in times.items() if isinstance(name, str) and name not in unknown and n == 1}
    if len(once) < 2:
        return {}
    chosen, ids = sorted(once), list[int]()
    for start in range(0, len(chosen), joining.CHUNK):
        found = Conversation.objects.filter(
            project=project, external_id__in=chosen[start : start + joining.CHUNK]
        )
        ids += found.values_list("pk", flat=True)
    # Locked in the order of their ids, whatever names an export holds: two workers storing
    # exports that continue the same conversations wait for each other, never deadlock.
    ids.sort()
    stored: dict[str, Conversation] = {}
    for start in range(0, len(ids), joining.CHUNK):
        locked = Conversation.objects.select_for_update().filter(pk__in=ids[start : start + joining.CHUNK])
        for locked_row in locked.order_by("pk"):
            locked_row.project = project  # known: not read again for each row
            stored[locked_row.external_id] = locked_row
    results: dict[int, IngestResult] = {}
    changed: list[tuple[int, Conversation, int]] = []
    for conversation in conversations:
        name = conversation.get("external_id")
        if not isinstance(name, str) or name not in stored:
            continue
        row = stored[name]
        try:
            document = to_document(conversation)
            merged = pieces.merge_with_stored(row.document, document)
            if merged is row.document:
                results[id(conversation)] = IngestResult("unchanged", row, None)
                continue
            whole = to_document(merged)
        except IngestError:
            continue
        digest = content_hash(whole)
        if digest == row.content_hash:
            results[id(conversation)] = IngestResult("unchanged", row, None)
            continue
        same_header = merged is not document or _same_header(row.document, whole)
        first = pieces.first_changed_turn(row.document, whole) if same_header else None
        if first is None:
            continue  # a conflict: _store_piece refuses it, naming the first difference
        _replace_document(row, whole, digest)
        changed.append((id(conversation), row, first))
    if not changed:
        return results
    rows = [row for _, row, _ in changed]
    with transaction.atomic():
        Conversation.objects.bulk_update(rows, REPLACED_FIELDS)
        _store_turns_of(project, [(row, first) for _, row, first in changed])
        Payload.objects.bulk_create(
            Payload(project=project, conversation=row, body="", export=export, format="otlp") for row in rows
        )
        runs = checking.settle_runs(rows)
    for (key, row, _), run in zip(changed, runs, strict=True):
        results[key] = IngestResult("appended", row, run)
    return results


def _stored_under(project: Project, name: str) -> bool:
    return (
        Conversation.objects.filter(project=project, external_id=name).exists()
        or joining.by_alias(project, name) is not None
    )


def _store_piece(
    project: Project, document: dict[str, Any], export: RawExport, unknown: set[str]
) -> IngestResult:
    """One conversation of an export, stored where it belongs (see ``ingest_export``); a
    name among ``unknown`` (``joining.unknown_names``) is not looked up again."""
    name = document["external_id"]
    new_name = name in unknown
    unknown.discard(name)  # once stored here, a later piece of the name must find it
    stored = None if new_name else _locked_conversation(project, name)
    joined_by = None
    if stored is None and not new_name:
        stored = joining.by_alias(project, name)
    if stored is None and joining.named_by_trace(name):
        found = joining.continued(project, document)
        stored, joined_by = found.conversation, "its input begins with this conversation's messages"
        if found.fitting > 1:
            # Templated agents open alike: which one this call continues cannot be told.
            document = {
                **document,
                "metadata": {
                    **document["metadata"],
                    "not_joined": f"its input begins with the messages of {found.fitting} or more stored "
                    "conversations; stored apart",
                },
            }
    merged = pieces.merge_with_stored(stored.document, document) if stored is not None else document
    if joined_by and merged is document:
        stored = None  # its messages continue the stored ones, but not turn by turn: kept apart
    if stored is None:
        return _ingest_document(
            project=project,
            document=document,
            existing=None,
            body="",
            stored_format="otlp",
            enqueue=False,
            export=export,
        )
    if merged is stored.document:
        return IngestResult("unchanged", stored, None)
    if joined_by:
        merged = joining.noted(merged, trace=name, by=joined_by)
        joining.remember(stored, name)
    # Validated again (and held to the limits) as a whole; ingest_conversation would also
    # look the conversation up again.
    return _ingest_document(
        project=project,
        document=to_document(merged),
        existing=stored,
        body="",
        stored_format="otlp",
        enqueue=False,
        export=export,
        merged=merged is not document,
    )


def _attach_tool_result(project: Project, result: pieces.ToolResult, export: RawExport) -> IngestResult:
    """A tool run exported with no model call beside it, put beside the stored call it
    answers: in the conversation of its own name (or one it was joined to), else the one
    conversation that holds a call of its id; refused (Unattached) when there is none."""
    stored = _locked_conversation(project, result.name) or joining.by_alias(project, result.name)
    joined = stored is None
    fitting = 1
    if stored is None and result.call_id and result.alone and joining.named_by_trace(result.name):
        found = joining.holding_call(project, result.call_id, result.agent)
        stored, fitting = found.conversation, found.fitting
    attached = pieces.attach_tool_result(stored.document, result) if stored is not None else None
    if stored is None or attached is None:
        raise Unattached([{"path": "$", "message": _unattached_reason(result, fitting, stored)}])
    document, first = attached
    if joined:
        document = joining.noted(document, trace=result.name, by=f"it ran call {result.call_id}")
        joining.remember(stored, result.name)
    document = to_document(document)
    digest = content_hash(document)
    if digest == stored.content_hash:
        return IngestResult("unchanged", stored, None)
    return _store_again(
        stored, document, digest, first, body="", stored_format="otlp", export=export, enqueue=False
    )


def _unattached_reason(result: pieces.ToolResult, fitting: int, stored: Conversation | None) -> str:
    tool = (
        f"a tool span (execute_tool{', ' + result.tool if result.tool else ''}) with no chat span beside it"
    )
    if stored is not None:
        return (
            f"{tool}: conversation {stored.external_id!r} holds no call {result.call_id!r} for it to answer"
        )
    if not result.call_id:
        return (
            f"{tool} and no gen_ai.tool.call.id: nothing says which conversation it belongs to; "
            "export it in the trace of the model call that asked for it"
        )
    if not joining.named_by_trace(result.name):
        return (
            f"{tool}: its conversation {result.name!r} is not stored; send the chat span that asked for "
            f"call {result.call_id!r} first"
        )
    if fitting > 1:
        return (
            f"{tool}: {fitting} or more stored conversations hold a call {result.call_id!r}, so which "
            "one it answers cannot be told"
        )
    return (
        f"{tool}, and no conversation stored or extended within RECEIPTS_OTLP_JOIN_WINDOW_SECONDS holds "
        f"a call {result.call_id!r}; send the chat span that asked for it (gen_ai.input.messages / "
        "gen_ai.output.messages) first"
    )
