"""The stored call that a finding's evidence points at.

An evidence item names a tool result by its call id alone (CONTRACT.md §2), and one id may
name several calls of a conversation: runtimes number calls afresh each turn, and models
reuse an id once its call was answered (§6). Of the calls with the item's id, the one meant
is in the finding's turn, else in the latest earlier turn (evidence never points ahead);
within that turn, the one whose result holds the item's span (its offsets fall inside the
result and the JSON path it names is the path there), and of those, one whose text at the
span spells the value judged, when one is known; the latest such when several are left
(the answer most often reports the latest result). Where an id names one call, that call is
the answer, as it always was.

This is a best reading, not a certainty: two results of one shape (a reservation read, then
the same reservation changed) may hold the same path at the same offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from .models import Finding, ToolCall
from .suite.evidence_index import json_path_at


def grouped[T](rows: Iterable[T], key: Callable[[T], Hashable]) -> dict[Hashable, list[T]]:
    """Rows by ``key``, each group in the order given (the transcript's, for calls)."""
    out: dict[Hashable, list[T]] = {}
    for row in rows:
        out.setdefault(key(row), []).append(row)
    return out


def call_for[T](
    candidates: Sequence[T],
    item: dict[str, Any],
    turn: int,
    *,
    turn_of: Callable[[T], int],
    result_of: Callable[[T], str],
    value: str | None = None,
) -> T | None:
    """Of the calls that share the item's id (in transcript order), the one it points into."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    before = [c for c in candidates if turn_of(c) <= turn] or list(candidates)
    latest = max(turn_of(c) for c in before)
    same = [c for c in before if turn_of(c) == latest]
    if len(same) > 1:
        same = [c for c in same if _holds(result_of(c), item)] or same
    if len(same) > 1 and value:
        same = [c for c in same if _spells(result_of(c), item, value)] or same
    return same[-1]


def _holds(result: str, item: dict[str, Any]) -> bool:
    start, end = item.get("start"), item.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return True
    if not 0 <= start <= end <= len(result):
        return False
    path = item.get("path")
    return not path or json_path_at(result, start) == path


def _spells(result: str, item: dict[str, Any], value: str) -> bool:
    """The text at the item's span is the value (as the suite writes values: lower case,
    without thousands separators)."""
    start, end = item.get("start"), item.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return False
    return value.lower() in result[start:end].lower().replace(",", "")


# Stored calls as ``stored_calls`` reads them: (conversation id, call id) -> the calls with
# that id, in transcript order, each a dict of its turn's index, tool and result.
StoredCalls = dict[Any, list[Mapping[str, Any]]]


def stored_calls(findings: Iterable[Finding]) -> StoredCalls:
    """The stored calls the findings' evidence may point at, in one query."""
    findings = list(findings)
    wanted = {item.get("call_id") for f in findings for item in f.evidence if isinstance(item, dict)}
    wanted.discard(None)
    if not wanted:
        return {}
    calls = (
        ToolCall.objects.filter(
            turn__conversation_id__in={f.conversation_id for f in findings}, call_id__in=wanted
        )
        .order_by("turn__index", "id")
        .values("turn__conversation_id", "turn__index", "call_id", "tool", "result")
    )
    return grouped(calls, lambda c: (c["turn__conversation_id"], c["call_id"]))


def evidence_call(finding: Finding, item: dict[str, Any], calls: StoredCalls) -> Mapping[str, Any] | None:
    """The stored call that one evidence item of a finding points into, if it is kept."""
    candidates = calls.get((finding.conversation_id, item.get("call_id") or ""), [])
    if len(candidates) <= 1:  # the finding's turn is read only where it decides
        return candidates[0] if candidates else None
    return call_for(
        candidates,
        item,
        finding.turn.index,
        turn_of=lambda c: c["turn__index"],
        result_of=lambda c: c["result"],
        value=finding.value,
    )
