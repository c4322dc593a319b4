"""Checker ``tool_receipts``: what the answer says about its tools, against the receipts.

The runtime, not the model, ran the tools, so its receipts are the ground truth: an *invoked* claim ("I
used the search tool") with no receipt of that tool or call is ``fabricated_tool_reference``; a *count*
("the search returned 12 results") other than the receipt's ``result_count`` is ``count_misstatement``;
an *absence* ("no logins were found") over a receipt that records results is ``false_absence``. Where the
receipts may have been trimmed (``receipts_complete: false``), a claim with none is ``ungroundable``.

Claims are the runtime's structured ``claims``, else read from the answer (never from an offer, a plan, a
question or a hypothetical): of the tool the sentence names or the turn's only tool, or, for a count or an
absence, of the one *list read* of the turn (successful, counted, no call that may change data after it
or in its batch) whose subject the counted noun names: the tool name's last noun, the result's list field
or the rows' id field.

A claim by subject is judged only where the receipts settle it, the sentence's other words ("open", "this
week") weighed against what every row is: *fewer* than listed only when more rows are surely of the kind
counted; *more* only when the list is all the sentence counts (every filter of the call said, no sign of
another page); an absence when some row is surely of the kind. A number the user wrote or a result states
as a count is never wrong, and a sentence that leads with words the read does not account for ("John
has…"), names an identifier it does not hold, or counts a part ("2 of them") is not judged: silence beats
a wrong flag.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from . import deadline
from .options import Options
from .text import (
    APOSTROPHE,
    NUMBER,
    OFFER_OR_PLAN,
    Sentence,
    clause_start,
    name_pattern,
    name_tokens,
    parse_number,
    prepare,
    sentence_at,
    sentences,
    singular,
)
from .tool_names import READ_VERBS, may_write
from .types import (
    CheckerReport,
    Conversation,
    Evidence,
    Finding,
    Message,
    Receipt,
    RunContext,
    Severity,
    Span,
    ToolCall,
    ToolClaim,
    Turn,
    members,
)

NAME = "tool_receipts"

# Nouns that stand for "whatever the tool returned", whichever tool it was.
_GENERIC_NOUNS = set("result match record row entry hit item document anything nothing data response".split())
# A number followed by one of these is a time or a size, not a count of results.
_UNITS = set(
    "second minute hour day week month year m ms byte kb mb gb tb percent pct time status ok".split()
)
# "no other logins" / "no new logins" speak of a part of the results, not of all of them.
_SUBSET_WORDS = {"other", "new", "further", "more", "additional", "different", "similar", "else", "recent"}
_STOP = (
    r"(?:for|from|about|in|on|with|that|which|who|matching|to|of|at|by|and|or|since|during|last|this|"
    r"across|under|were|was|is|are|have|has|had)"
)
_WORD = rf"(?!{_STOP}\b)[a-z][\w-]*"
# A short noun phrase: up to three words, stopping at a preposition or a verb; its last word
# is the head ("12 open tickets about the VPN" -> tickets).
_NP = rf"(?:matching\s+)?(?P<noun>(?:{_WORD}\s+){{0,2}}{_WORD}\b)"
_RETURN_VERBS = (
    r"returned|found|got|yielded|produced|gave(?:\s+back)?|brought\s+back|came\s+back\s+with|"
    r"turned\s+up|retrieved|fetched|located|matched|pulled(?:\s+up)?"
)
# Verbs that report the whole output of a tool, whatever the noun that follows them.
_WHOLE_OUTPUT = re.compile(r"returned|yielded|gave|brought\s+back|came\s+back\s+with|produced", re.I)
_EXACTLY = r"(?:only\s+|just\s+|exactly\s+|a\s+total\s+of\s+)?"
_COUNT = re.compile(rf"\b(?P<verb>{_RETURN_VERBS})\s+{_EXACTLY}(?P<num>{NUMBER})\b(?:\s+{_NP})?", re.I)
_ABSENCE = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        rf"\bno\s+{_NP}\s+(?:were|was|have\s+been|has\s+been|had\s+been)\s+"
        r"(?P<verb>found|returned|recorded|located|matched|logged|detected|listed|retrieved|seen)\b",
        rf"\bno\s+{_NP}\s+(?P<verb>came\s+back|turned\s+up|showed\s+up|matched)\b",
        rf"\b(?P<verb>{_RETURN_VERBS})\s+(?:no|zero|0)\s+{_NP}",
        rf"\b(?P<verb>{_RETURN_VERBS})\s+(?P<noun>nothing|an\s+empty\s+(?:list|result|set|array|response))\b",
        rf"\b(?:did\s+not|didn{APOSTROPHE}?t|could\s+not|couldn{APOSTROPHE}?t|was\s+unable\s+to|"
        rf"wasn{APOSTROPHE}?t\s+able\s+to|failed\s+to)\s+(?P<verb>find|locate|retrieve|turn\s+up)\s+"
        rf"(?:any(?:thing)?|a\s+single)\b(?:\s+{_NP})?",
        r"\b(?P<noun>nothing)\s+(?:was|were|has\s+been)\s+(?P<verb>found|returned|recorded|matched)\b",
        r"\b(?P<noun>nothing)\s+(?P<verb>came\s+back|turned\s+up|showed\s+up|matched)\b",
        r"\b(?:there\s+(?:are|were|is|was)\s+)?(?:no|zero)\s+(?:matching\s+)?"
        r"(?P<noun>results|matches|hits|records|entries|rows)\b(?P<verb>)",
        r"\b(?:(?:result|results|response|output|list)\s+(?:was|were|is|came\s+back)|came\s+back)\s+"
        r"(?P<noun>empty)\b(?P<verb>)",
        # An absence stated as a fact ("there is no backup record", "that machine has no
        # logins"): its noun decides whether it speaks of a tool's output.
        rf"\bthere\s+(?:is|are|was|were|has\s+been|have\s+been)\s+no\s+{_NP}(?P<verb>)",
        rf"\b(?:has|have|had)\s+no\s+{_NP}(?P<verb>)",
    )
)
# Every absence pattern needs one of these words, and the last count pattern its verb: a text
# without them skips those patterns, the costliest of an answer's reading.
_ABSENCE_WORDS = re.compile(r"\b(?:no|zero|nothing|empty|find|locate|retrieve|turn)\b|\s0\s", re.I)
_LISTED_VERBS = r"found|returned|listed|located|retrieved|recorded"
_FOUND_WORDS = re.compile(rf"(?:were|was|been)\s+(?:{_LISTED_VERBS})\b", re.I)
# Counts stated as facts ("the account has 7 open tickets", "your 2 tickets", "4 tickets were
# found"): claims only about a list read the sentence is about.
_STATED_COUNT = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        rf"\b(?P<verb>(?:has|have|had)(?:\s+got)?|there\s+(?:are|were|is|was)|contains?|holds?|lists?|shows?"
        rf"|I\s+(?:see|count(?:ed)?))\s+{_EXACTLY}(?P<num>{NUMBER})\s+{_NP}",
        rf"\b(?:your|all)\s+(?P<num>{NUMBER})\s+{_NP}(?P<verb>)",
        rf"\b(?P<num>{NUMBER})\s+{_NP}\s+(?:were|was|have\s+been|has\s+been)\s+(?P<verb>{_LISTED_VERBS})\b",
    )
)
_INVOKED = re.compile(
    rf"\bI(?:{APOSTROPHE}ve|\s+have)?(?:\s+(?:just|already|also|then|first|successfully))*\s+"
    r"(?P<verb>used|called|ran|run|invoked|executed|tried|consulted|queried|searched|looked\s+(?:it\s+)?up|"
    r"did\s+a\s+(?:search|lookup|query)|ran\s+a\s+(?:search|lookup|query)|checked)\b",
    re.I,
)
# These verbs imply a lookup on their own; the others need the tool named after them.
_LOOKUP_VERBS = re.compile(r"queried|searched|looked|did\s+a|ran\s+a", re.I)
# A sentence holding one of these is an offer, a plan, a guess, a condition or a question.
_NOT_A_REPORT = re.compile(
    rf"{OFFER_OR_PLAN}|\b(?:if|unless|whether|in\s+case|would|might|may|should)\b|\bcould\b(?!\s+not\b)", re.I
)
_EXPLICIT_TOOL = re.compile(r"\b(?:the\s+)?(?P<name>[A-Za-z][\w.-]*)\s+(?:tool|function)\b", re.I)
# "the right tool", "that tool": words that point at a tool without naming one.
_POINTING_WORDS = set(
    """the a an that this same right correct appropriate proper relevant available only one your
    my its other another new wrong best""".split()
)


def _bound_by(call_id: str | None, tool: str) -> tuple[str, Any]:
    """What a claim is bound by: its call id, else its tool's words (``same_tool``), else its name."""
    if call_id is not None:
        return "call", call_id
    words = tuple(name_tokens(tool))
    return ("words", words) if words else ("name", tool)


class _History:
    """The tools the turns showed, read in one pass so no turn walks back; each turn's claims once read."""

    def __init__(self, conversation: Conversation) -> None:
        self.tools: dict[str, tuple[int, re.Pattern[str]]] = {}  # tool -> the first turn naming it
        self.first_active: int | None = None  # the first turn that called a tool or holds a receipt
        self.places: dict[tuple[str, Any], list[int]] = {}  # ``_bound_by`` a receipt -> its turns
        self.claims: dict[int, tuple[ToolClaim, ...]] = {}
        for position, turn in enumerate(conversation.turns):
            calls, receipts = turn.tool_calls, turn.receipts
            for name in (*(turn.tools_offered or ()), *(c.tool for c in calls), *(r.tool for r in receipts)):
                if name and name not in self.tools:
                    self.tools[name] = (position, re.compile(name_pattern(name), re.I))
            if self.first_active is None and (receipts or calls):
                self.first_active = position
            for receipt in receipts:
                for key in (_bound_by(receipt.call_id, receipt.tool), _bound_by(None, receipt.tool)):
                    self.places.setdefault(key, []).append(position)  # a turn repeated: ``bind`` picks alike


# The last conversation's history: the checkers of one run ask for it turn after turn. The
# conversation is held (not its id), so a new one never matches.
_held: list[Any] = [None, None]


def _history(conversation: Conversation) -> _History:
    if _held[0] is not conversation:
        _held[:] = [conversation, _History(conversation)]
    return _held[1]


# A claim read from the answer, and whether it is firm enough to judge.
_Read = tuple[ToolClaim, bool]


def read_claims(conversation: Conversation, turn: Turn) -> list[ToolClaim]:
    """The claims the answer makes in words that are firm enough to judge, in answer order."""
    text = prepare(turn.answer)
    if not text.strip():
        return []
    history = _history(conversation)
    known = {tool: pattern for tool, (first, pattern) in history.tools.items() if first <= turn.index}
    reading = _Reading(conversation, turn, text, known, history.first_active)
    parts = sentences(text)
    found: list[_Read] = []
    for kind, match, stated in _candidates(text):
        deadline.check()
        sentence = sentence_at(parts, match.start())
        if sentence is None or sentence.is_question or _NOT_A_REPORT.search(sentence.text):
            continue
        mentions = reading.mentions(sentence.start, sentence.end)
        item = None if stated else reading.claim(kind, match, sentence, mentions)
        # A sentence that names a tool speaks of that tool; it is never re-read by its subject.
        if kind != "invoked" and not mentions:
            item = reading.by_subject(kind, match, sentence, item)
        if item is not None:
            found.append(item)
    # One count or absence per stretch of text ("returned 0 results" is not also a count); an invoked claim
    # may share its words with one ("I searched and found 3 tickets"). In answer order a claim overlaps one
    # kept before it exactly when it starts before their furthest end.
    kept: list[ToolClaim] = []
    reach = -1
    for claim, holds in sorted(found, key=lambda item: item[0].start or 0):
        if claim.kind != "invoked":
            if (claim.start or 0) < reach:
                continue
            reach = max(reach, claim.end or 0)
        if holds:
            kept.append(claim)
    return kept


def _candidates(text: str) -> list[tuple[str, re.Match[str], bool]]:
    """(kind, match, stated): ``stated`` counts are judged only by what they are about."""
    out: list[tuple[str, re.Match[str], bool]] = [("invoked", m, False) for m in _INVOKED.finditer(text)]
    patterns = (_COUNT, *_STATED_COUNT) if _FOUND_WORDS.search(text) else (_COUNT, *_STATED_COUNT[:2])
    counts = [(m, p is not _COUNT) for p in patterns for m in p.finditer(text)]
    out += [("absence" if parse_number(m.group("num")) == 0 else "count", m, stated) for m, stated in counts]
    if _ABSENCE_WORDS.search(text):
        out.extend(("absence", m, False) for pattern in _ABSENCE for m in pattern.finditer(text))
    out.sort(key=lambda item: (item[1].start(), -(item[1].end() - item[1].start())))
    return out


def _is_subset(match: re.Match[str]) -> bool:
    """ "No other logins", "3 of the 40 rows": a part of the results, not all of them."""
    noun = (match.groupdict().get("noun") or "").lower().split()
    if noun and noun[0] in _SUBSET_WORDS:
        return True
    tail = match.string[match.end() : match.end() + 12].lower()
    return bool(re.match(r"\s*(?:of\s+(?:the|them|those|these)|out\s+of)\b", tail))


@dataclass
class _Reading:
    """One turn's answer as its claims are read."""

    conversation: Conversation
    turn: Turn
    text: str  # the answer, prepared
    tools: dict[str, re.Pattern[str]]  # the tools known up to the turn
    first_active: int | None  # the first turn that called a tool

    @cached_property
    def reads(self) -> list[_ListRead]:
        """The turn's successful list reads (a result count) that no call that may write follows or joins."""
        turn = self.turn
        calls = [turn.call_of(r) for r in turn.receipts]
        # Where each call stands: its asking message (a batch shares one), else its receipt's order.
        known = all(c is not None for c in calls)
        places = [c.message_index if known and c is not None else i for i, c in enumerate(calls)]
        writes = [
            p for p, r in zip(places, turn.receipts, strict=True) if r.dispatched and may_write(r.tool, r)
        ]
        return [
            _list_read(receipt, call, turn.result_of(receipt))
            for place, receipt, call in zip(places, turn.receipts, calls, strict=True)
            if receipt.result_count is not None and receipt.ok and receipt.dispatched
            if not may_write(receipt.tool, receipt) and not any(w >= place for w in writes)
        ]

    @cached_property
    def sole(self) -> str | None:
        """The turn's only tool: the one tool called, or else the one tool offered."""
        ran = {*(c.tool for c in self.turn.tool_calls), *(r.tool for r in self.turn.receipts if r.tool)}
        if len(ran) == 1:
            return ran.pop()
        offered = self.turn.tools_offered or ()
        return offered[0] if not ran and len(offered) == 1 else None

    def made(self, kind: str, tool: str, start: int, end: int, call: str | None, n: int | None) -> ToolClaim:
        """The claim of ``text[start:end]``, its words as the answer writes them."""
        return ToolClaim(kind, tool, call, n, self.turn.answer[start:end], start, end)

    def mentions(self, start: int, end: int) -> list[tuple[int, int, str]]:
        """Known tools named in text[start:end], as (start, end, tool), in text order."""
        return sorted(
            (match.start(), match.end(), tool)
            for tool, pattern in self.tools.items()
            for match in pattern.finditer(self.text, start, end)
        )

    def claim(
        self, kind: str, match: re.Match[str], sentence: Sentence, mentions: list[tuple[int, int, str]]
    ) -> _Read | None:
        """The claim a match makes of the tool its sentence names, else of the only tool."""
        if kind == "invoked":
            return self.invoked(match, sentence)
        words = (match.groupdict().get("noun") or "").lower().split()
        noun = words[-1] if words else ("" if kind == "count" else None)
        if noun is not None and (singular(noun) in _UNITS or _is_subset(match)):
            return None
        count = parse_number(match.group("num")) if kind == "count" else None
        if kind == "count" and count is None:
            return None
        tools = {tool for _, _, tool in mentions}
        if len(tools) > 1:  # several tools named: the last one named before the claim, if any
            tools = set([tool for start, _, tool in mentions if start < match.start()][-1:])
            if not tools:
                return None
        named = bool(tools)
        tool = next(iter(tools)) if tools else self.sole
        if tool is None or (kind == "count" and not noun and not named):
            return None  # "found 3." with no noun and no tool named is too loose to hold
        start = clause_start(self.text, sentence, match.start())
        claim = self.made(kind, tool, start, match.end(), None, count)
        # It holds where it is about the tool's output: a generic noun, a word of the tool's name or
        # arguments, or any word after a verb reporting a named tool's whole output ("no errors were found"
        # over a log read is about the lines, left to value checkers). Unbound, it holds if a tool is named.
        bound = bind(claim, self.conversation, self.turn)
        if bound is None or not noun or (named and _WHOLE_OUTPUT.match(match.group("verb") or "")):
            return claim, bound is not None or named
        known = {singular(t) for t in name_tokens(claim.tool)} | _argument_words(*bound) | _GENERIC_NOUNS
        return claim, singular(noun) in known | {"empty"}

    def invoked(self, match: re.Match[str], sentence: Sentence) -> _Read | None:
        """ "I ran the deploy tool": the tool must follow the verb closely, in its clause."""
        end = min(sentence.end, match.end() + 48)
        clause = re.search(r"[,;:]|\s(?:and|but|so|which|because)\s", self.text[match.end() : end])
        if clause:
            end = match.end() + clause.start()
        tool, end = self.named_after(match.end(), end)
        if tool is None:
            if not _LOOKUP_VERBS.match(match.group("verb")) or self.sole is None:
                return None
            tool, end = self.sole, match.end()
        # A tool never named ("the calendar tool") may loosely name one that ran: judged only if none ran yet.
        holds = tool in self.tools or self.first_active is None or self.first_active > self.turn.index
        return self.made("invoked", tool, match.start(), end, None, None), holds

    def named_after(self, start: int, end: int) -> tuple[str | None, int]:
        """The tool named right after a verb, and where its mention ends."""
        mentions = self.mentions(start, end)
        if mentions:
            _, m_end, tool = mentions[0]
            suffix = re.match(r"\s+(?:tool|function|api|command)\b", self.text[m_end:end])
            return tool, m_end + (suffix.end() if suffix else 0)
        explicit = _EXPLICIT_TOOL.search(self.text, start, end)
        if explicit is None:
            return None, start
        word = explicit.group("name")
        low = word.lower()
        if low in _POINTING_WORDS:
            return self.sole, explicit.end()
        # A loose name ("the logins tool") stands for the one known tool it fits, if one does.
        fits = [t for t in self.tools if t.lower() == low or singular(word) in map(singular, name_tokens(t))]
        return (fits[0] if len(fits) == 1 else word), explicit.end()

    def by_subject(
        self, kind: str, match: re.Match[str], sentence: Sentence, item: _Read | None
    ) -> _Read | None:
        """The count or absence bound to the one list read the sentence is about, where the receipts
        can settle it; else ``item`` (the claim of the sentence's tool), or None where it counts a part."""
        phrase = match.groupdict().get("noun")
        if not phrase or not self.reads or _is_subset(match):
            return item
        words = [w for w in _words(phrase) if w != "matching"]
        found = _head(words, self.reads)
        count = parse_number(match.group("num")) if kind == "count" else 0
        if found is None or count is None or singular(words[found[0]]) in _UNITS:
            return item
        at, read = found
        end_match = _CLAUSE_END.search(self.text, match.end(), sentence.end)
        end = end_match.start() if end_match else sentence.end
        # All before the count in its sentence ("for March, you have…" too), and the rest of its clause.
        prefix = _words(self.text[sentence.start : match.start()])
        tail = _words(self.text[match.end() : end])[:8]
        said = prefix + words + tail
        clause = self.text[sentence.start : end].lower()
        clause_words = {_key(w) for w in said}
        recorded = read.receipt.result_count or 0

        def settles(qualifiers: set[str]) -> bool:
            fitting = _fitting_rows(read, qualifiers)
            if kind == "absence":
                return recorded == 0 or fitting > 0
            if count == recorded:
                return True
            if _stated_elsewhere(count, self.turn):
                return False
            if count < recorded:
                return count < fitting  # wrong only if more rows than that are of the kind counted
            return read.complete and all(_said(spec, clause, clause_words) for spec in read.filters)

        in_phrase = {_key(w) for w in words[:at]}
        # A sentence naming a record the read does not hold ("account 9912 has…"), or leading with words it
        # does not account for ("John has…", "this week you have…"), may count another list or a part of it.
        if (
            any(re.search(r"\d", w) and w not in read.tokens for w in said)
            or any(_key(w) not in read.accounted for w in prefix)
            or not settles(in_phrase | {_key(w) for w in words[at + 1 :] + tail})
        ):
            if item is not None and not settles(in_phrase) and same_tool(item[0].tool, read.receipt.tool):
                return None  # "3 open tickets" of the only tool's list: a part of it
            return item
        start, number = clause_start(self.text, sentence, match.start()), count if kind == "count" else None
        return self.made(kind, read.receipt.tool, start, match.end(), read.receipt.call_id, number), True


# Words that restrict nothing: determiners, pronouns, prepositions, auxiliaries, the owner of
# a list ("your account") and words that mean "all of it".
_NEUTRAL = frozenset(
    """a an the this that these those it its there here you your yours we our us
    i my me on in under for to at by of with from into within across as
    is are was were be been being has have had got do does did can see seem seems look looks
    looked looking like appear appears confirm so far yet now right currently moment present
    still total overall altogether all only just exactly also already then well unfortunately
    fortunately good great news okay ok sure yes however actually account profile name file
    record system listed found returned recorded shown matching list result results search
    searched lookup query response show shows contain contains hold holds check checked review
    reviewed pull pulled up after based according what""".split()
)
# Words after the counted noun that leave what is counted as it is ("3 flights available").
_POSTNOMINAL = frozenset(
    "available left remaining today currently now total overall altogether pending outstanding "
    "open active listed found shown recorded here there".split()
)
# Tool-name words that say nothing about what a list holds.
_NAME_NOISE = READ_VERBS | {"all", "by", "for", "of", "detail", "info", "data", "the", "my"}
# Argument keys and result fields that say a list may be one page of a longer one.
_PAGING = frozenset(
    "limit page offset cursor per size max top first next more truncated remaining total".split()
)
# Result fields whose number is a count of something ("total": 7, "ticket_count": 7).
_COUNT_KEYS = frozenset("total count num size length hits matches".split())
_MONTHS = "january february march april may june july august september october november december".split()
# A day as a sentence says it: "May 20th", "20 of May".
_SPOKEN_DATE = r"\b{name}\s+{day}(?:st|nd|rd|th)?\b|\b{day}(?:st|nd|rd|th)?\s+(?:of\s+)?{name}\b"
_CLAUSE_END = re.compile(
    r"(?<!\d)[,.]|[,.](?!\d)|[;:!?()\n\u2014\u2013]|\s(?:and|but|so|because|while|whereas|although|though)\s",
    re.I,
)


def _key(word: str) -> str:
    """One spelling of a word for comparing: lower case, singular, hyphens gone (one-stop)."""
    return singular(word.lower().replace("-", "").replace("'", ""))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[-'][a-z0-9]+)*", text.lower())


def _names(word: str, subject: frozenset[str]) -> bool:
    """Whether a noun names a list: it is one of its subject words, or a short form of one."""
    key = _key(word)
    pairs = (sorted((key, other), key=len) for other in subject)
    return key in subject or any(len(a) >= 4 and b.startswith(a) and len(b) - len(a) <= 3 for a, b in pairs)


@dataclass(frozen=True)
class _ListRead:
    """A list a call of this turn returned, and what a sentence about it may say."""

    receipt: Receipt
    subject: frozenset[str]  # words that name what it lists: its name's last noun, list and id fields
    named: frozenset[str]  # every word of the tool's name but its verb ("archived", "order")
    accounted: frozenset[str]  # words every row satisfies: subject, argument and shared row words
    rows: tuple[frozenset[str], ...] | None  # each row's short field values, as words
    filters: tuple[tuple[str, Any], ...]  # what the call narrowed the list on
    complete: bool  # nothing says the list is one page of a longer one
    tokens: str  # the call's arguments and result, lower case, for finding identifiers


def _list_read(receipt: Receipt, call: ToolCall | None, message: Message | None) -> _ListRead:
    result, rows = (message.value, message.rows) if message is not None else (None, None)
    named = [_key(t) for t in name_tokens(receipt.tool) if t not in _NAME_NOISE and not t[-1].isdigit()]
    # The name's last word is what it lists: list_account_tickets lists tickets, not accounts.
    subject = set(named[-1:])
    fields = list(result.items()) if isinstance(result, dict) else []
    # The name of the one list field names what it lists.
    subject.update(_key(t) for k, v in fields if isinstance(v, list) and v is rows for t in name_tokens(k))
    paged = any(set(name_tokens(k)) & _PAGING for k, v in fields if not isinstance(v, list))
    complete = not paged and not (isinstance(receipt.scope, dict) and receipt.scope.get("complete") is False)
    row_words = None
    if rows is not None and all(isinstance(row, dict) for row in rows):
        # Short values only: a status or a kind ("open"), never free text that mentions it.
        values = [[_words(v) for v in row.values() if isinstance(v, str)] for row in rows]
        row_words = tuple(
            frozenset(_key(w) for words in row if len(words) <= 2 for w in words) for row in values
        )
    if rows and isinstance(rows[0], dict) and rows[0]:
        first = name_tokens(next(iter(rows[0])))
        if len(first) > 1 and first[-1] in ("id", "number", "no", "code", "num"):
            subject.update(_key(t) for t in first[:-1])
    filters: list[tuple[str, Any]] = []
    argument_words: set[str] = set()
    arguments = call.parsed if call is not None else None
    for key, value in arguments.items() if isinstance(arguments, dict) else ():
        if set(name_tokens(key)) & _PAGING:
            complete = False
        elif isinstance(value, str):
            argument_words.update(_key(w) for w in _words(value))
            if date := re.match(r"(\d{4})-(\d{2})-(\d{2})", value.strip()):
                month, day, spoken = int(date.group(2)), str(int(date.group(3))), None
                if 1 <= month <= 12:  # every row is of that day: "on May 20"
                    argument_words.update({_MONTHS[month - 1], day})
                    spoken = _SPOKEN_DATE.format(name=_MONTHS[month - 1], day=day)
                filters.append(("date", (date.group(), spoken)))
            elif value.strip() and not re.fullmatch(r"[^\s]*(?:\d|_|@)[^\s]*", value.strip()):
                filters.append(("words", frozenset(_key(w) for w in _words(value))))
        elif value is not None:
            filters.append(("opaque", None))  # a number or a flag the sentence cannot be held to
    shared = frozenset.intersection(*row_words) if row_words else frozenset()
    accounted = frozenset(subject | set(named) | argument_words | shared | {_key(w) for w in _NEUTRAL})
    tokens = f"{call.arguments if call else ''} {message.text if message else ''}".lower()
    return _ListRead(
        receipt, frozenset(subject), frozenset(named), accounted, row_words, tuple(filters), complete, tokens
    )


def _said(spec: tuple[str, Any], clause: str, words: set[str]) -> bool:
    """Whether the sentence says what a filter narrowed the list to (a date as "May 20" too)."""
    kind, value = spec
    if kind == "date":
        written, spoken = value  # as the call wrote it, and as a sentence says it
        return written in clause or (spoken is not None and re.search(spoken, clause) is not None)
    return kind == "words" and bool(value) and value <= words


def _head(words: list[str], reads: list[_ListRead]) -> tuple[int, _ListRead] | None:
    """The counted noun's place in the noun phrase and the one list it names, if one does: the phrase's
    last word, or an earlier one followed only by words that leave the count unchanged ("flights
    available"). Of several lists, a word before it may pick one ("direct flights")."""
    for at in range(len(words) - 1, -1, -1):
        fits = [r for r in reads if _names(words[at], r.subject)]
        if fits:
            if len(fits) > 1:
                fits = [r for r in fits if any(_names(w, r.subject | r.named) for w in words[:at])]
            return (at, fits[0]) if len(fits) == 1 else None
        if words[at] not in _POSTNOMINAL:
            return None
    return None


def _stated_elsewhere(count: int, turn: Turn) -> bool:
    """The number is one the user wrote, or a count a result of the turn states ("total": 7)."""
    written = rf"(?<![\d.,]){count}(?![\d.,]\d)"  # the number alone, not a part of a longer one
    return any(m.role == "user" and re.search(written, m.text) for m in turn.messages) or any(
        type(item) is int
        and item == count
        and (set(name_tokens(key)) & _COUNT_KEYS or key.lower().startswith(("number_of", "n_")))
        for message in turn.tool_results
        for key, item in members(message.value)
    )


def _fitting_rows(read: _ListRead, qualifiers: set[str]) -> int:
    """How many listed rows are surely of the kind counted ("open tickets"): all where each qualifier is one
    every row satisfies, else those whose short values hold the rest; none where rows cannot be read."""
    recorded = read.receipt.result_count or 0
    rest = {q for q in qualifiers if q not in read.accounted}
    if not rest:
        return recorded
    if read.rows is None or len(read.rows) != recorded:
        return 0
    return sum(rest <= row for row in read.rows)


def same_tool(a: str, b: str) -> bool:
    """Two names of one tool: the same name, or the same words (``searchLogs``, ``search_logs``)."""
    return a == b or (bool(name_tokens(a)) and name_tokens(a) == name_tokens(b))


def bind(claim: ToolClaim, conversation: Conversation, turn: Turn) -> tuple[Receipt, Turn] | None:
    """The receipt a claim is about, and its turn: the named call's, else the first of the tool, in this
    turn or else the latest earlier turn that has one ("I searched earlier"). Where the named id was
    reused (CONTRACT.md §6), the call of the claim's tool is meant."""
    turns = _history(conversation).places.get(_bound_by(claim.call_id, claim.tool), [])
    at = bisect_left(turns, turn.index)
    latest = [conversation.turns[turns[at - 1]]] if at else []  # the latest earlier turn that has one
    for where in (turn, *latest):
        fits = [r for r in where.receipts if claim.call_id is None or r.call_id == claim.call_id]
        any_of_id = fits[0] if fits and claim.call_id is not None else None
        if (found := next((r for r in fits if same_tool(r.tool, claim.tool)), any_of_id)) is not None:
            return found, where
    return None


def _results(n: int) -> str:
    return f"{n} result" if n == 1 else f"{n} results"


def result_evidence(call_id: str | None, message: Message | None) -> Evidence:
    """A pointer to the whole result of a call, or to the call alone where none is shown."""
    return Evidence(call_id) if message is None else Evidence(call_id, "", 0, len(message.text))


def claim_span(claim: ToolClaim, answer: str) -> Span | None:
    """Where a claim stands in the answer: its own offsets, else its text found there."""
    if claim.start is not None and claim.end is not None:
        return Span(answer[claim.start : claim.end], claim.start, claim.end)
    if not claim.text or not claim.text.strip():
        return None
    pattern = "".join(
        APOSTROPHE if ch in "'\u2019\u2018\u02bc" else (r"\s+" if ch.isspace() else re.escape(ch))
        for ch in claim.text.strip()
    )
    match = re.search(re.sub(r"(?:\\s\+)+", r"\\s+", pattern), answer, re.I)
    return Span(match.group(), match.start(), match.end()) if match else None


def judge(claim: ToolClaim, conversation: Conversation, turn: Turn) -> Finding | None:
    """The finding for one claim, or None when the receipts bear it out (or cannot refute it)."""
    tool, call_id = claim.tool, claim.call_id
    bound = bind(claim, conversation, turn)
    evidence: tuple[Evidence, ...] = ()
    extra: dict[str, Any] = {"tool": tool, "claim_kind": claim.kind, "call_id": call_id}
    if bound is None:
        # No receipt: the transcript may still show the call, or the receipts may be trimmed.
        if any(same_tool(c.tool, tool) if call_id is None else c.call_id == call_id for c in turn.tool_calls):
            return None
        code = "fabricated_tool_reference"
        why = f"The answer refers to {tool} call {call_id}, but no such call was recorded."
        fix: str | None = f"Note from Receipts: no call {call_id} of the {tool} tool was recorded."
        if not conversation.receipts_complete:
            code, fix = "ungroundable", None
            why = (
                f"No receipt for the {tool} tool{f' call {call_id}' if call_id else ''} is kept, and this "
                "conversation's receipts may have been trimmed, so the claim can be neither confirmed "
                "nor refuted."
            )
        elif not call_id:
            why = f"The answer refers to the {tool} tool, but no call to it was recorded."
            fix = f"Note from Receipts: the {tool} tool did not run; no call to it was recorded."
    else:
        receipt, where = bound
        recorded, claimed = receipt.result_count, claim.count
        extra["call_id"] = receipt.call_id
        if claim.kind == "count" and recorded is not None and claimed is not None and recorded != claimed:
            code, extra = "count_misstatement", {**extra, "claimed": claimed, "recorded": recorded}
            why = f"The answer says {tool} returned {_results(claimed)}; its receipt records {recorded}."
            fix = f"Note from Receipts: the {tool} tool returned {_results(recorded)}, not {claimed}."
        elif claim.kind == "absence" and ((recorded or 0) > 0 or receipt.emptiness == "non-empty"):
            what = _results(recorded) if recorded else "results"
            code, extra = "false_absence", {**extra, "recorded": recorded}
            why = f"The answer says {tool} found nothing, but its receipt records {what}."
            fix = f"Note from Receipts: the {tool} tool returned {what}; it did find something."
        else:
            return None  # borne out (an invoked claim with a receipt really ran)
        message = where.result_of(receipt)
        evidence = (result_evidence(receipt.call_id, message),) if message is not None else ()
    severity: Severity = "info" if code == "ungroundable" else "flag"
    span = claim_span(claim, turn.answer)
    return Finding(turn.index, NAME, code, severity, why, span, evidence, fix, extra=extra)


def _argument_words(receipt: Receipt, where: Turn) -> set[str]:
    """Words of the call's arguments: what the search was for ("level": "error" -> error)."""
    call = where.call_of(receipt)
    if call is None:
        return set()
    arguments = call.arguments if call.parsed is None else call.parsed
    words = re.findall(r"[A-Za-z][A-Za-z-]+", json.dumps(arguments, default=float))
    return {singular(word) for word in words}


def turn_claims(conversation: Conversation, turn: Turn) -> list[ToolClaim]:
    """The runtime's claims when it sent them, else those read from the answer, once whoever asks."""
    if turn.claims is not None:
        return list(turn.claims)
    ours = turn.index < len(conversation.turns) and conversation.turns[turn.index] is turn
    held = _history(conversation).claims if ours else {}
    if turn.index not in held:
        held[turn.index] = tuple(read_claims(conversation, turn))
    return list(held[turn.index])


def prose_absences(conversation: Conversation, turn: Turn) -> list[ToolClaim]:
    """The turn's absences: every checker weighing "not found" reads them here, so a sentence is one."""
    return [claim for claim in turn_claims(conversation, turn) if claim.kind == "absence"]


class ToolReceipts:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        findings: list[Finding] = []
        for turn in conversation.turns:
            deadline.check()
            # One defect, one finding: "I searched … the search found nothing" about one missing call.
            found: dict[tuple[str, str, str | None], Finding] = {}
            for claim in turn_claims(conversation, turn):
                finding = judge(claim, conversation, turn)
                if finding is not None:
                    found.setdefault((finding.code, claim.tool, finding.extra.get("call_id")), finding)
            findings.extend(found.values())
        return CheckerReport(findings)
