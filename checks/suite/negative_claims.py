"""Checker ``negative_claims``: "there is none", judged against the searches that ran.

A negative answer is the hardest to audit by reading it: nothing in it points at what was not found. So
a runtime may send its model's negatives as typed citations (``{"kind": "none" | "not-found" |
"complete", "about": …, "restsOn": ["r1", …]}``), each judged against the record of calls
(``record.Record``) by the decision table of CONTRACT.md §5: the first row that applies gives the code,
and a claim no row catches is ``established``. Every refusal is a fixed "I don't know…" sentence in the
project's own words, never the model's.

Absences stated in prose are read as ``tool_receipts`` reads them. One defect gives one finding: an
absence the receipts contradict is that checker's ``false_absence``, and a sentence that restates a typed
claim of its turn is that claim, whatever its shape. It restates one whose ``about`` it (or the sentence
before it) names, or that cites a read of its tool (for an unresolved entry, a receipt its handles name),
or that points at no read and names no subject; a named subject ranks first (most of all with the read
cited), then the first. Any other prose absence over a runtime read is judged by the same table, and
where the receipts cannot settle it, it is ``absence_unverified`` (info), naming what is missing. Each
turn's verdicts fold into a status and a delivery, for the turn page.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from . import deadline, tool_receipts
from .options import Options
from .record import Call, Record, after, same_batch
from .text import prepare, sentence_at, sentences
from .tool_receipts import same_tool
from .types import CheckerReport, Conversation, Finding, RunContext, Severity, Span, ToolClaim, Turn

NAME = "negative_claims"

MAX_CLAIMS = 16
MAX_HANDLES = 16
MAX_ABOUT = 256
KINDS = ("none", "not-found", "complete")
_ENTRY_KEYS = ("kind", "about", "restsOn")
_HANDLE = re.compile(r"r[1-9][0-9]{0,3}")

ESTABLISHED = "established"
UNVERIFIED = "absence_unverified"

# Fixed sentences: what may be said in place of a claim the record does not back.
REFUSALS = {
    "too_many_claims": "I don't know. There are more negative claims here than can be checked, "
    "so none of them is accepted.",
    "citation_unresolved": "I don't know. The citation does not point to a search in the record.",
    "kind_mismatch": "I don't know. This is not a kind of negative claim the record can check.",
    "record_incomplete": "I don't know. Part of the record of what ran may be missing, "
    "so it cannot back this claim.",
    "outside_trusted_context": "I don't know. The cited search ran outside this caller's trusted context.",
    "cited_call_undeclared": "I don't know. The cited call is not one whose results may back "
    "a negative claim.",
    "call_not_read": "I don't know. The cited call is not a completed read, so it cannot back this claim.",
    "contradicted_by_rows": "I don't know that this holds: the cited search returned rows.",
    "coverage_unverified": "I don't know. The runtime did not record what the cited search covered.",
    "undeclared_empty": "I don't know. The cited search returned an empty list without declaring "
    "the absence or recording that it searched everything.",
    "superseded_by_write": "I don't know. A call that may change the data was dispatched after "
    "the cited read or beside it, so that read no longer settles this.",
    "later_read_failed": "I don't know. A later repeat of the cited search failed, so the earlier "
    "result does not settle this now.",
    "wider_search_has_rows": "I don't know. A broader search of the same kind returned rows that "
    "may fall within this claim.",
    "other_read_has_rows": "I don't know. Another read of the same subject returned rows that are "
    "not shown to lie outside this claim.",
    "search_incomplete": "I don't know. The cited search did not cover everything this claim requires.",
    "about_mismatch": "I don't know. The claim's subject is not what the cited search looked for.",
    "evidence_kind_undetermined": "I don't know. The cited reads establish different kinds of fact, "
    "so no single claim follows from them.",
    UNVERIFIED: "I don't know. The record does not show a search that could settle this absence.",
}
NARROWER = "The requested complete-list claim is not established; only this absence is."

# Where the record was consulted, the claim holds or it does not; any other code: the check was not made.
_DISPOSITION = {ESTABLISHED: "checked-pass"} | dict.fromkeys(
    "contradicted_by_rows wider_search_has_rows other_read_has_rows search_incomplete about_mismatch".split(),
    "checked-fail",
)

# What a prose absence lacks when the table cannot judge it.
_MISSING = {
    "receipt": "no receipt was kept for the call it rests on",
    "runtime_receipt": "the runtime sent no receipt for this turn; the call is known only from the "
    "transcript, which does not say what it searched",
    "read_effect": "the receipt does not record the call as a read",
}


def _correction(verdict: Verdict) -> str | None:
    """The fixed sentence for a verdict; the stale one names the turn and time of the read."""
    if verdict.narrower is not None:
        return f"{NARROWER} {verdict.narrower}"
    if (stale := verdict.stale) is None:
        return None if verdict.code == ESTABLISHED else REFUSALS[verdict.code]
    at = f" at {when}" if (when := _moment(stale.receipt.at)) else ""
    read = f"I don't know. The cited result was read on turn {stale.turn}{at}"
    return f"{read}; it was not read again during this turn."


def _moment(at: str | None) -> str | None:
    """A receipt's timestamp in one spelling (UTC, ISO 8601), or None when it is not one."""
    if not isinstance(at, str):
        return None
    try:
        moment = datetime.fromisoformat(at.strip())
    except ValueError:
        return None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _norm(value: Any) -> str:
    """One spelling for comparing a filter value: case and surrounding space do not count."""
    if isinstance(value, Decimal):  # a row's number: spelled as the filter's float is
        value = float(value)
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, (int, float)):  # a flag too: "true", as JSON spells it
        return str(value).casefold()
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=float).casefold()


def _items(call: Call) -> set[tuple[str, str]] | None:
    return None if (filters := call.filters) is None else {(k, _norm(v)) for k, v in filters.items()}


def _same_filters(one: Call, other: Call) -> bool:
    return (items := _items(one)) is not None and items == _items(other)


def _wider(other: Call, cited: Call) -> bool:
    """``other`` searched the same population with fewer filters."""
    return (a := _items(other)) is not None and (b := _items(cited)) is not None and a < b


def _rows_outside(other: Call, cited: Call) -> bool:
    """Every row ``other`` read has a field of a cited filter with a different value: only that shows a
    row to lie outside the claim (rows not read, of another shape or missing the field may lie inside)."""
    rows, filters, count = other.rows, cited.filters or {}, other.receipt.result_count
    if not rows or not filters or (count is not None and len(rows) < count):
        return False
    return all(
        isinstance(row, dict)
        and any(key in row and _norm(row[key]) != _norm(value) for key, value in filters.items())
        for row in rows
    )


def _kin(others: Iterable[Call], cited: list[Call], test: Callable[[Call, Call], bool]) -> list[Call]:
    """The calls of ``others`` that ``test`` relates to a cited read of the same tool."""
    return [x for x in others if any(same_tool(x.receipt.tool, c.receipt.tool) and test(x, c) for c in cited)]


def _unique(calls: list[Call | None]) -> list[Call]:
    return [call for i, call in enumerate(calls) if call is not None and call not in calls[:i]]


@dataclass
class Verdict:
    code: str
    cited: list[Call] = field(default_factory=list)
    contrary: list[Call] = field(default_factory=list)  # other reads that overturn the cited ones
    writes: list[Call] = field(default_factory=list)  # may have changed the data since (so no contrary)
    stale: Call | None = None
    narrower: str | None = None  # the absence a failed complete-list claim does establish
    missing: str | None = None  # what a prose absence the table cannot judge lacks (``_MISSING``)


@dataclass(frozen=True)
class _Context:
    conversation: Conversation
    turn: Turn
    record: Record
    citable: frozenset[str] | None  # None: every tool with a read receipt up to the turn


def _good_about(about: Any) -> bool:
    if isinstance(about, str):
        return bool(about.strip()) and len(about) <= MAX_ABOUT
    # Every int is finite; isfinite would first make it a float, which 400 digits overflow.
    return type(about) is int or (isinstance(about, float) and math.isfinite(about))


def judge_entry(entry: Any, ctx: _Context, claims_in_turn: int) -> Verdict:
    """Rows 1–3 (the entry itself), then the reads it cites."""
    if claims_in_turn > MAX_CLAIMS:
        return Verdict("too_many_claims")
    handles = entry.get("restsOn") if isinstance(entry, dict) else None
    if (
        not isinstance(handles, list)  # also whenever the entry is not an object
        or not set(entry).issubset(_ENTRY_KEYS)
        or ("about" in entry and not _good_about(entry["about"]))
        or not 0 < len(handles) <= MAX_HANDLES
        or not all(isinstance(handle, str) and _HANDLE.fullmatch(handle) for handle in handles)
        or None in (found := [ctx.record.by_handle(handle, ctx.turn.index) for handle in handles])
    ):
        return Verdict("citation_unresolved")
    cited = _unique(found)
    if entry.get("kind") not in KINDS:
        return Verdict("kind_mismatch", cited=cited)
    return judge_reads(entry["kind"], entry.get("about"), cited, ctx)


def judge_reads(kind: str, about: Any, cited: list[Call], ctx: _Context) -> Verdict:
    """Rows 4–18 over the cited reads; a claim no row catches is established (``about`` None:
    no subject named, since an entry's given ``about`` passed row 2)."""
    turn, citable = ctx.turn.index, ctx.citable
    if not ctx.conversation.receipts_complete:
        return Verdict("record_incomplete", cited)
    if any(not c.receipt.trusted for c in cited):
        return Verdict("outside_trusted_context", cited)
    tools = [c.receipt.tool for c in cited]
    declared = (ctx.record.has_read(tool, turn) if citable is None else tool in citable for tool in tools)
    if not all(declared):
        return Verdict("cited_call_undeclared", cited)
    if any(not (c.receipt.effect == "read" and c.receipt.dispatched and c.receipt.ok) for c in cited):
        return Verdict("call_not_read", cited)
    reads_now = [x for x in ctx.record.in_turn(turn) if x.receipt.effect == "read" and x.receipt.dispatched]
    for c in cited:
        if c.turn < turn and not _kin(reads_now, [c], _same_filters):
            return Verdict("stale_turn", cited, stale=c)
    if any(c.has_rows for c in cited):
        return Verdict("contradicted_by_rows", cited)
    if any(c.filters is None for c in cited):
        return Verdict("coverage_unverified", cited)
    if any(c.receipt.emptiness == "empty" and not c.complete for c in cited):
        return Verdict("undeclared_empty", cited)
    if writes := _writes_since(cited, ctx):
        return Verdict("superseded_by_write", cited, writes=writes)
    others = [x for x in reads_now if x not in cited]
    unsuccessful = [x for x in others if not x.receipt.ok]
    if failed := _kin(unsuccessful, cited, lambda x, c: _same_filters(x, c) and after(x, c)):
        return Verdict("later_read_failed", cited, contrary=failed)
    peers = [x for x in others if x.receipt.trusted and x.receipt.ok and x.has_rows]
    if wider := _kin(peers, cited, _wider):
        return Verdict("wider_search_has_rows", cited, contrary=wider)
    if same := _kin(peers, cited, lambda x, c: _same_filters(x, c) and not _rows_outside(x, c)):
        return Verdict("other_read_has_rows", cited, contrary=same)
    # A complete-list claim needs complete searches; an absence, declared ones or complete.
    if any(not (c.complete or (kind != "complete" and c.declared_absent)) for c in cited):
        verdict = Verdict("search_incomplete", cited)
        if kind == "complete" and all(c.declared_absent for c in cited):
            if judge_reads("none", about, cited, ctx).code == ESTABLISHED:
                verdict.narrower = statement(cited)
        return verdict
    if about is not None:
        values = (v for c in cited for v in (c.filters or {}).values())
        if _norm(about) not in {_norm(item) for v in values for item in (v if isinstance(v, list) else [v])}:
            return Verdict("about_mismatch", cited)
    # Each read establishes an absence (declared) or a complete list; one claim needs one kind.
    if not (all(c.declared_absent for c in cited) or all(c.complete for c in cited)):
        return Verdict("evidence_kind_undetermined", cited)
    return Verdict(ESTABLISHED, cited)


def _writes_since(cited: list[Call], ctx: _Context) -> list[Call]:
    """Dispatched calls that may change data, after a cited read or in its batch, before the answer."""
    turn, answer_at = ctx.turn.index, ctx.turn.answer_index
    found: list[Call] = []
    # Only a call of a cited read's turn or later can follow it or share its batch.
    for w in ctx.record.changes_between(min(c.turn for c in cited), turn):
        asked = w.message_index
        after_answer = w.turn == turn and answer_at is not None and asked is not None and asked > answer_at
        if not after_answer and any(after(w, c) or same_batch(w, c) for c in cited):
            found.append(w)
    return found


def statement(cited: list[Call]) -> str:
    """What the cited reads establish, in the record's own terms (never the model's)."""
    parts = []
    for c in cited:
        terms = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in (c.filters or {}).items())
        what = "declared that nothing matched" if c.declared_absent else "returned nothing"
        where, whole = f" for {terms}" if terms else "", " over a complete search" if c.complete else ""
        parts.append(f"{c.receipt.tool} ({c.handle}) {what}{where}{whole}")
    return "Recorded: " + "; ".join(parts) + "."


def _explain(verdict: Verdict, subject: str) -> str:
    cited = ", ".join(c.handle for c in verdict.cited) or "no recorded search"
    code = verdict.code
    if code == ESTABLISHED:
        return f"{subject} is backed by {cited}: {statement(verdict.cited)}"
    if verdict.missing is not None:
        return f"{subject} and the record cannot settle it: {_MISSING[verdict.missing]}."
    if verdict.stale is not None:
        return f"{subject} rests on {verdict.stale.handle}, read on turn {verdict.stale.turn} and not again."
    others = ", ".join(f"{x.receipt.tool} ({x.handle})" for x in verdict.writes or verdict.contrary)
    if verdict.writes:
        return (
            f"{subject} rests on {cited}, but {others} may have changed the data after or beside that read."
        )
    if verdict.contrary:
        return f"{subject} rests on {cited}; {others} speaks against it ({code.replace('_', ' ')})."
    return f"{subject} is not established by {cited} ({code.replace('_', ' ')})."


def _finding(turn: Turn, verdict: Verdict, span: Span | None, subject: str, extra: dict[str, Any]) -> Finding:
    code, stale = verdict.code, verdict.stale
    shown = [*verdict.cited, *verdict.contrary, *verdict.writes]  # a write is never a cited read
    out = extra | {"verdict": code, "disposition": _DISPOSITION.get(code, "unreachable")}
    out |= {"cited": [c.handle for c in verdict.cited], "contrary": [x.handle for x in verdict.contrary]}
    optional = {
        "missing": verdict.missing,
        "superseded_by": [w.handle for w in verdict.writes] or None,
        "stale": {"turn": stale.turn, "at": stale.receipt.at, "handle": stale.handle} if stale else None,
        "statement": statement(verdict.cited) if code == ESTABLISHED else None,
        "narrower": {"kind": "none", "statement": verdict.narrower} if verdict.narrower is not None else None,
    }
    out |= {key: value for key, value in optional.items() if value is not None}
    severity: Severity = "info" if code in (ESTABLISHED, UNVERIFIED) else "flag"
    evidence = tuple(tool_receipts.result_evidence(c.receipt.call_id, c.result) for c in shown)
    why, correction = _explain(verdict, subject), _correction(verdict)
    return Finding(turn.index, NAME, code, severity, why, span, evidence, correction, extra=out)


@dataclass
class _Typed:
    index: int
    entry: Any
    verdict: Verdict
    span: Span | None = None

    def extra(self) -> dict[str, Any]:
        """Its fields; an entry that is not an object is also stored as sent, whatever its shape."""
        fields = self.entry if isinstance(self.entry, dict) else {}
        out = {"source": "typed", "index": self.index} | {key: fields.get(key) for key in _ENTRY_KEYS}
        return out if isinstance(self.entry, dict) else out | {"entry": self.entry}

    def reads(self, ctx: _Context) -> list[Call]:
        """The reads it cites; for a citation that did not resolve, the receipts its handles name."""
        if self.verdict.cited:
            return self.verdict.cited
        handles = self.entry.get("restsOn") if isinstance(self.entry, dict) else None
        handles = [handles] if isinstance(handles, str) else handles if isinstance(handles, list) else []
        valid = [h.strip() for h in handles if isinstance(h, str) and _HANDLE.fullmatch(h.strip())]
        return _unique([ctx.record.by_handle(handle, ctx.turn.index) for handle in valid])

    def about(self) -> str | None:
        """The subject it names, as text, when it names one (even an over-long one)."""
        about = self.entry.get("about") if isinstance(self.entry, dict) else None
        named = isinstance(about, (str, int, float)) and not isinstance(about, bool)
        return (str(about).strip() or None) if named else None


def _restated(claim: ToolClaim, span: Span, typed: list[_Typed], ctx: _Context) -> _Typed | None:
    """The typed claim of the turn that a prose absence restates (rule and ranking: module docstring)."""
    answer = ctx.turn.answer
    parts = sentences(prepare(answer))
    if (here := sentence_at(parts, span.start)) is None:
        context = answer[span.start : span.end]
    else:
        context = answer[parts[max(parts.index(here) - 1, 0)].start : here.end]  # with the sentence before
    ranked: list[tuple[int, int, _Typed]] = []
    for order, item in enumerate(typed):
        about = item.about()
        named = about is not None and re.search(rf"(?<![\w-]){re.escape(about)}(?![\w-])", context, re.I)
        reads = item.reads(ctx)
        linked = any(same_tool(c.receipt.tool, claim.tool) for c in reads) or (not reads and about is None)
        if named or linked:
            # Subject named and read linked, then subject named, then read linked.
            ranked.append((0 if named and linked else 1 if named else 2, order, item))
    return min(ranked, key=lambda r: r[:2])[2] if ranked else None


def check_turn(
    conversation: Conversation, turn: Turn, record: Record, options: Options, absences: list[ToolClaim]
) -> list[Finding]:
    tools = options.negative_claims.tools
    ctx = _Context(conversation, turn, record, None if tools is None else frozenset(tools))
    entries = turn.negative_claims
    typed = [_Typed(i, entry, judge_entry(entry, ctx, len(entries))) for i, entry in enumerate(entries)]
    prose: list[Finding] = []
    for claim in absences:
        if tool_receipts.judge(claim, conversation, turn) is not None:
            continue  # the receipts already answer it (false_absence and its kin): one finding
        span = tool_receipts.claim_span(claim, turn.answer)
        restated = _restated(claim, span, typed, ctx) if span is not None else None
        if restated is not None:
            restated.span = restated.span or span
        else:
            prose.append(_judge_prose(claim, span, ctx))
    return [_finding(turn, t.verdict, t.span, f"Negative claim {t.index}", t.extra()) for t in typed] + prose


def _judge_prose(claim: ToolClaim, span: Span | None, ctx: _Context) -> Finding:
    extra: dict[str, Any] = {"source": "prose", "index": None, "kind": "none", "about": None}
    extra |= {"restsOn": None, "tool": claim.tool}
    bound = tool_receipts.bind(claim, ctx.conversation, ctx.turn)
    call = ctx.record.of_receipt(bound[0]) if bound is not None else None
    if call is not None and not call.receipt.derived and call.receipt.effect == "read":
        verdict = judge_reads("none", None, [call], ctx)
        return _finding(ctx.turn, verdict, span, "The stated absence", extra)
    missing = "receipt" if call is None else "runtime_receipt" if call.receipt.derived else "read_effect"
    verdict = Verdict(UNVERIFIED, [call] if call is not None else [], missing=missing)
    return _finding(ctx.turn, verdict, span, f"The answer says the {claim.tool} tool found nothing,", extra)


def turn_summary(findings: list[Finding], options: Options) -> dict[str, Any]:
    """A turn's status for its page (a failed check fails it, else a check not made leaves it unverified)
    and how its typed answer would go out (as checked, as recorded, or the fallback)."""
    typed = [f.code for f in findings if f.extra.get("source") == "typed"]
    dispositions = [f.extra["disposition"] for f in findings]
    unestablished = "recorded" if options.negative_claims.unestablished == "state-searched" else "fallback"
    delivery = "as-checked" if all(code == ESTABLISHED for code in typed) else unestablished
    failed, unreachable = dispositions.count("checked-fail"), dispositions.count("unreachable")
    claims, established = len(typed), sum(f.code == ESTABLISHED for f in findings)
    out = {"claims": claims, "prose": len(findings) - claims, "established": established, "failed": failed}
    status = "failed" if failed else "unverified" if unreachable else "passed"
    return out | {"unreachable": unreachable, "status": status, "delivery": delivery if typed else None}


class NegativeClaims:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        findings: list[Finding] = []
        turns: dict[int, dict[str, Any]] = {}  # the summary of each turn with a finding
        record: Record | None = None
        for turn in conversation.turns:
            deadline.check()
            absences = tool_receipts.prose_absences(conversation, turn)
            if not turn.negative_claims and not absences:
                continue
            record = record or Record.of(conversation)  # built once, for the first turn that needs it
            if found := check_turn(conversation, turn, record, options, absences):
                findings += found
                turns[turn.index] = {"negative_claims": turn_summary(found, options)}
        return CheckerReport(findings, turns=turns)
