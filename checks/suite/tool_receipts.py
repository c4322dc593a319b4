"""Checker ``tool_receipts``: what the answer says about its tools, against the receipts.

The runtime, not the model, ran the tools, so its receipts are the ground truth. Three
kinds of claim are checked:

- *invoked* ("I used the search tool"): a receipt for that tool (or the named call) must
  exist, else ``fabricated_tool_reference``;
- *count* ("the search returned 12 results"): must equal the receipt's ``result_count``,
  else ``count_misstatement``; a receipt that recorded no count cannot refute it;
- *absence* ("no logins were found"): the receipt must not record results, else
  ``false_absence``.

Where the receipts may have been trimmed (``receipts_complete: false``), a claim with no
receipt is ``ungroundable`` (info): the runtime forgetting its own record is no evidence
that the model invented the call.

Claims come from the turn's structured ``claims`` when the runtime sent them; otherwise
they are read from the answer: when the sentence names a tool, when it speaks of the turn's
only tool, or (counts and absences) when it is about one list the turn read, below. Offers,
plans, questions and hypotheticals are never read as claims.

Counts and absences by subject
------------------------------
Agents run several calls in a turn and report what a list held without naming the tool:
"your account has 7 open tickets", "you have 3 orders", "no tickets were found". Such a
sentence (a count after "has/have", "there are", "contains/lists/shows", "your N …",
"N … were found", a count after a verb of finding, or an absence) is bound to a read when:

- the read is a *list read* of this turn: it succeeded, its receipt has a result count, it
  is not a call that may change data, and no call that may change data was asked for after
  it (or in its batch), since the list would no longer say what is there now;
- the counted noun names it: the noun (the last word of its phrase, or an earlier one
  followed only by words such as "available" or "open") equals, in the singular and without
  hyphens, or as a short form of at least four letters, the last word of the tool's name
  (``list_tickets`` → ticket; ``list_account_tickets`` lists tickets, not accounts), a word
  of the result's list field (``{"tickets": […]}``) or of the rows' own id field (their
  first field, ``ticket_id``);
- exactly one list read is so named. Where several are, a word before the noun that is a
  word of one's name picks it ("archived orders" of ``list_orders`` and
  ``list_archived_orders``); else none is bound. Silence beats a wrong flag.

A sentence that names a tool is read as before and never by its subject; a count of the
turn's only tool is bound that way as before, and by subject where the noun names its list.

What the sentence counts may be a part of the list. The words that may qualify the noun
(in its phrase and after it in its clause: "open", "upcoming", "this week") are weighed
against what the receipts say every row is: a word of the call's arguments (what it
filtered on, the account it read), a short value every row holds (``"status": "open"``), a
word of the list's own name, or a word that restricts nothing ("your", "account", "in
total"). Then a bound claim is judged only where the receipts settle it:

- *fewer* than the list holds is a misstatement only when more rows than that are surely of
  the kind counted: every row when each qualifier is one every row satisfies, else the rows
  whose short values hold the other qualifiers (two rows say "open": "1 open ticket" is
  wrong; "1 upcoming order" of six is not judged);
- *more* than the list holds is a misstatement only when the list is everything the
  sentence counts: each filter of the call is said in the sentence (a date as "May 20" too),
  no argument or result field says the list is a page of a longer one (``limit``, ``page``,
  ``next``, ``total``…), and the runtime did not record the search as incomplete;
- a number the user wrote in the turn, or one a result states as a count
  (``"total": 7``), is never a misstatement;
- an *absence* ("no open tickets") is ``false_absence`` when some row is surely of the kind
  said absent; over an empty list it holds, and is left to ``negative_claims``;
- a sentence that leads up to the count with words the read does not account for ("John
  has…", "for your other account, you have…", "this week you have…") or that names an
  identifier the call and its result do not hold ("account 4410 has…") may speak of another
  list, and is not judged. Nor are "2 of them", "no other …", "3 more …" (parts of
  something said before) or "nobody else is booked" (no noun that names a list).

The same weighing of the noun phrase's own words also keeps a count of the only tool's list
("I found 3 open tickets" of five mixed rows) from being judged as a count of all of it.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
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
    Span,
    ToolCall,
    ToolClaim,
    Turn,
    members,
)

NAME = "tool_receipts"

# --- reading claims from the answer ---------------------------------------------------------

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

_COUNT = re.compile(
    rf"\b(?P<verb>{_RETURN_VERBS})\s+(?:only\s+|just\s+|exactly\s+|a\s+total\s+of\s+)?"
    rf"(?P<num>{NUMBER})\b(?:\s+{_NP})?",
    re.I,
)
_ABSENCE = (
    re.compile(
        rf"\bno\s+{_NP}\s+(?:were|was|have\s+been|has\s+been|had\s+been)\s+"
        r"(?P<verb>found|returned|recorded|located|matched|logged|detected|listed|retrieved|seen)\b",
        re.I,
    ),
    re.compile(rf"\bno\s+{_NP}\s+(?P<verb>came\s+back|turned\s+up|showed\s+up|matched)\b", re.I),
    re.compile(rf"\b(?P<verb>{_RETURN_VERBS})\s+(?:no|zero|0)\s+{_NP}", re.I),
    re.compile(
        rf"\b(?P<verb>{_RETURN_VERBS})\s+(?P<noun>nothing|an\s+empty\s+(?:list|result|set|array|response))\b",
        re.I,
    ),
    re.compile(
        rf"\b(?:did\s+not|didn{APOSTROPHE}?t|could\s+not|couldn{APOSTROPHE}?t|was\s+unable\s+to|"
        rf"wasn{APOSTROPHE}?t\s+able\s+to|failed\s+to)\s+(?P<verb>find|locate|retrieve|turn\s+up)\s+"
        rf"(?:any(?:thing)?|a\s+single)\b(?:\s+{_NP})?",
        re.I,
    ),
    re.compile(
        r"\b(?P<noun>nothing)\s+(?:was|were|has\s+been)\s+(?P<verb>found|returned|recorded|matched)\b", re.I
    ),
    re.compile(r"\b(?P<noun>nothing)\s+(?P<verb>came\s+back|turned\s+up|showed\s+up|matched)\b", re.I),
    re.compile(
        r"\b(?:there\s+(?:are|were|is|was)\s+)?(?:no|zero)\s+(?:matching\s+)?"
        r"(?P<noun>results|matches|hits|records|entries|rows)\b(?P<verb>)",
        re.I,
    ),
    re.compile(
        r"\b(?:(?:result|results|response|output|list)\s+(?:was|were|is|came\s+back)|came\s+back)\s+"
        r"(?P<noun>empty)\b(?P<verb>)",
        re.I,
    ),
    # "there is no backup record", "that machine has no logins on file": an absence stated as
    # a fact. The noun decides whether it speaks of a tool's output (see _holds).
    re.compile(
        rf"\bthere\s+(?:is|are|was|were|has\s+been|have\s+been)\s+no\s+{_NP}(?P<verb>)",
        re.I,
    ),
    re.compile(rf"\b(?:has|have|had)\s+no\s+{_NP}(?P<verb>)", re.I),
)
# Counts stated as facts rather than as a tool's output ("the account has 7 open tickets",
# "there are 3 orders", "your 2 tickets", "4 tickets were found"). They are claims only about
# a list read the sentence is about (see "Counts and absences by subject" below).
_STATED_COUNT = (
    re.compile(
        rf"\b(?P<verb>(?:has|have|had)(?:\s+got)?|there\s+(?:are|were|is|was)|contains?|holds?|lists?|shows?"
        rf"|I\s+(?:see|count(?:ed)?))\s+(?:only\s+|just\s+|exactly\s+|a\s+total\s+of\s+)?"
        rf"(?P<num>{NUMBER})\s+{_NP}",
        re.I,
    ),
    re.compile(rf"\b(?:your|all)\s+(?P<num>{NUMBER})\s+{_NP}(?P<verb>)", re.I),
    re.compile(
        rf"\b(?P<num>{NUMBER})\s+{_NP}\s+(?:were|was|have\s+been|has\s+been)\s+"
        r"(?P<verb>found|returned|listed|located|retrieved|recorded)\b",
        re.I,
    ),
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
    rf"{OFFER_OR_PLAN}|\bI\s+could\b(?!\s+not\b)"
    r"|\b(?:if|unless|whether|in\s+case|would|might|may|should)\b|\bcould\b(?!\s+not\b)",
    re.I,
)
_EXPLICIT_TOOL = re.compile(r"\b(?:the\s+)?(?P<name>[A-Za-z][\w.-]*)\s+(?:tool|function)\b", re.I)
# "the right tool", "that tool": words that point at a tool without naming one.
_POINTING_WORDS = set(
    """the a an that this same right correct appropriate proper relevant available only one your
    my its other another new wrong best""".split()
)


@dataclass(frozen=True)
class _ToolNames:
    """The tools the conversation knows up to this turn, and how to find each in text."""

    patterns: dict[str, re.Pattern[str]]

    @classmethod
    def for_turn(cls, conversation: Conversation, turn: Turn) -> _ToolNames:
        known = _history(conversation).names
        return known[min(turn.index, len(known) - 1)]

    def mentions(self, text: str, start: int, end: int) -> list[tuple[int, int, str]]:
        """Known tools named in text[start:end], as (start, end, tool), in text order."""
        found = []
        for tool, pattern in self.patterns.items():
            for match in pattern.finditer(text, start, end):
                found.append((match.start(), match.end(), tool))
        found.sort()
        return found

    def resolve(self, word: str) -> str | None:
        """The known tool a loose name ("the logins tool") stands for, when only one fits."""
        key = singular(word)
        fits = [t for t in self.patterns if t.lower() == word.lower() or key in map(singular, name_tokens(t))]
        return fits[0] if len(fits) == 1 else None


def _tool_key(tool: str) -> tuple[bool, Any]:
    """One key for the names ``same_tool`` takes for one tool: its words, else the name."""
    tokens = name_tokens(tool)
    return (True, tuple(tokens)) if tokens else (False, tool)


@dataclass(frozen=True)
class _History:
    """What the turns before each turn showed of tools, read in one pass over the conversation,
    so that a turn's claims are weighed without walking back through every earlier turn."""

    names: tuple[_ToolNames, ...]  # turn -> the tools known up to it (shared while none is new)
    first_active: int | None  # the first turn that called a tool or holds a receipt
    by_call: dict[str, list[int]]  # call id -> the turns (places) with a receipt of that id, in order
    by_tool: dict[tuple[bool, Any], list[int]]  # tool key -> the turns with a receipt of that tool

    @classmethod
    def of(cls, conversation: Conversation) -> _History:
        names: list[_ToolNames] = []
        patterns: dict[str, re.Pattern[str]] = {}
        current = _ToolNames({})
        first_active: int | None = None
        by_call: dict[str, list[int]] = {}
        by_tool: dict[tuple[bool, Any], list[int]] = {}
        for position, turn in enumerate(conversation.turns):
            calls = turn.tool_calls
            added = False
            for name in (
                *(turn.tools_offered or ()),
                *(call.tool for call in calls),
                *(r.tool for r in turn.receipts if r.tool),
            ):
                if name and name not in patterns:
                    patterns[name] = re.compile(name_pattern(name), re.I)
                    added = True
            if added:
                current = _ToolNames(dict(patterns))
            names.append(current)
            if first_active is None and (turn.receipts or calls):
                first_active = position
            for receipt in turn.receipts:
                if receipt.call_id is not None:
                    _add_place(by_call.setdefault(receipt.call_id, []), position)
                _add_place(by_tool.setdefault(_tool_key(receipt.tool), []), position)
        return cls(tuple(names) or (current,), first_active, by_call, by_tool)

    def latest_before(self, claim: ToolClaim, index: int) -> int | None:
        """The latest turn before ``index`` holding a receipt the claim may be about: one of
        its named call, else one of its tool."""
        if claim.call_id is not None:
            turns = self.by_call.get(claim.call_id)
        else:
            turns = self.by_tool.get(_tool_key(claim.tool))
        if not turns:
            return None
        at = bisect_left(turns, index)
        return turns[at - 1] if at > 0 else None


def _add_place(places: list[int], position: int) -> None:
    if not places or places[-1] != position:
        places.append(position)


# The last conversation's history: the checkers of one run ask for it turn after turn. The
# conversation is held (not its id), so a new one never matches.
_held_history: tuple[Conversation | None, _History | None] = (None, None)


def _history(conversation: Conversation) -> _History:
    global _held_history
    held, history = _held_history
    if held is not conversation or history is None:
        history = _History.of(conversation)
        _held_history = (conversation, history)
    return history


def only_tool(turn: Turn) -> tuple[str | None, bool]:
    """The turn's only tool and whether it ran: one tool called, or else one tool offered."""
    ran = list(dict.fromkeys([c.tool for c in turn.tool_calls] + [r.tool for r in turn.receipts if r.tool]))
    if len(ran) == 1:
        return ran[0], True
    if not ran and turn.tools_offered is not None and len(turn.tools_offered) == 1:
        return turn.tools_offered[0], False
    return None, False


@dataclass(frozen=True)
class _TextClaim:
    claim: ToolClaim
    noun: str | None  # head noun of what was counted or found absent
    named: bool  # the sentence names the tool (else it is the turn's only tool)
    whole_output: bool  # the verb reports everything the tool returned
    known: bool = True  # the tool is one the conversation offered, called or has receipts for
    by_subject: bool = False  # bound to the one list read the sentence is about (already weighed)


def read_claims(conversation: Conversation, turn: Turn) -> list[_TextClaim]:
    """Invoked, count and absence claims the answer makes in words, in answer order."""
    text = prepare(turn.answer)
    if not text.strip():
        return []
    names = _ToolNames.for_turn(conversation, turn)
    sole, _ = only_tool(turn)
    parts = sentences(text)
    reads: list[_ListRead] | None = None
    found: list[_TextClaim] = []
    for kind, match, stated in _candidates(text):
        deadline.check()
        sentence = sentence_at(parts, match.start())
        if sentence is None or sentence.is_question or _NOT_A_REPORT.search(sentence.text):
            continue
        item = None
        if not stated:
            item = _claim_from(kind, match, text, turn.answer, sentence, names, sole)
        # A sentence that names a tool speaks of that tool; it is never re-read by its subject.
        if kind != "invoked" and not names.mentions(text, sentence.start, sentence.end):
            if reads is None:
                reads = _list_reads(turn)
            subject = _claim_by_subject(kind, match, text, turn, sentence, reads)
            if subject is not None and subject.claim is not None:
                item = subject.claim
            elif subject is not None and item is not None and not subject.phrase_settles:
                if same_tool(item.claim.tool, subject.read.receipt.tool):
                    item = None  # "3 open tickets" of the only tool's list: a part of it
        if item is not None:
            found.append(item)
    return _without_overlaps(found)


def _candidates(text: str) -> list[tuple[str, re.Match[str], bool]]:
    """(kind, match, stated): ``stated`` counts are judged only by what they are about."""
    out: list[tuple[str, re.Match[str], bool]] = [("invoked", m, False) for m in _INVOKED.finditer(text)]
    for stated, patterns in ((False, (_COUNT,)), (True, _STATED_COUNT)):
        for pattern in patterns:
            for match in pattern.finditer(text):
                number = parse_number(match.group("num"))
                out.append(("absence" if number == 0 else "count", match, stated))
    out.extend(("absence", m, False) for pattern in _ABSENCE for m in pattern.finditer(text))
    out.sort(key=lambda item: (item[1].start(), -(item[1].end() - item[1].start())))
    return out


def _without_overlaps(found: list[_TextClaim]) -> list[_TextClaim]:
    """One claim per stretch of text: "returned 0 results" is one absence, not also a count.

    An invoked claim may share its words with a count ("I searched and found 3 tickets"):
    they are two claims, so only counts and absences exclude each other.
    """
    kept: list[_TextClaim] = []
    # In answer order, a claim overlaps one kept before it exactly when it starts before the
    # furthest end of those: one comparison each, however many claims the answer holds.
    reach = -1
    for item in sorted(found, key=lambda item: item.claim.start or 0):
        if item.claim.kind != "invoked":
            if (item.claim.start or 0) < reach:
                continue
            reach = max(reach, item.claim.end or 0)
        kept.append(item)
    return kept


def _claim_from(
    kind: str,
    match: re.Match[str],
    text: str,
    answer: str,
    sentence: Sentence,
    names: _ToolNames,
    sole: str | None,
) -> _TextClaim | None:
    if kind == "invoked":
        return _invoked_claim(match, text, answer, sentence, names, sole)
    noun = _head_noun(match)
    if noun is None and kind == "count":
        noun = ""
    if noun is not None and (singular(noun) in _UNITS or _is_subset(match)):
        return None
    count = parse_number(match.group("num")) if kind == "count" else None
    if kind == "count" and count is None:
        return None
    tool, named = _tool_of_sentence(text, sentence, match.start(), names, sole)
    if tool is None:
        return None
    if kind == "count" and not noun and not named:
        return None  # "found 3." with no noun and no tool named is too loose to hold
    start = clause_start(text, sentence, match.start())
    end = match.end()
    claim = ToolClaim(kind=kind, tool=tool, count=count, text=answer[start:end], start=start, end=end)
    whole = bool(_WHOLE_OUTPUT.match(match.group("verb") or ""))
    return _TextClaim(claim=claim, noun=noun or None, named=named, whole_output=whole)


def _head_noun(match: re.Match[str]) -> str | None:
    noun = match.groupdict().get("noun")
    if not noun:
        return None
    words = noun.lower().split()
    return words[-1] if words else None


def _is_subset(match: re.Match[str]) -> bool:
    noun = (match.groupdict().get("noun") or "").lower().split()
    if noun and noun[0] in _SUBSET_WORDS:
        return True
    # "3 of the 40 rows", "out of 12": a part of the results, not their number.
    tail = match.string[match.end() : match.end() + 12].lower()
    return bool(re.match(r"\s*(?:of\s+(?:the|them|those|these)|out\s+of)\b", tail))


def _tool_of_sentence(
    text: str, sentence: Sentence, at: int, names: _ToolNames, sole: str | None
) -> tuple[str | None, bool]:
    mentions = names.mentions(text, sentence.start, sentence.end)
    tools = list(dict.fromkeys(tool for _, _, tool in mentions))
    if len(tools) == 1:
        return tools[0], True
    if len(tools) > 1:
        before = [tool for start, _, tool in mentions if start < at]
        return (before[-1], True) if before else (None, False)
    return sole, False


def _invoked_claim(
    match: re.Match[str], text: str, answer: str, sentence: Sentence, names: _ToolNames, sole: str | None
) -> _TextClaim | None:
    # The tool must follow the verb closely ("I ran the deploy tool"), in the same clause.
    window_end = min(sentence.end, match.end() + 48)
    clause = re.search(r"[,;:]|\s(?:and|but|so|which|because)\s", text[match.end() : window_end])
    if clause:
        window_end = match.end() + clause.start()
    tool, end, named = _named_after(text, match.end(), window_end, names, sole)
    if tool is None:
        if not _LOOKUP_VERBS.match(match.group("verb")) or sole is None:
            return None
        tool, end, named = sole, match.end(), False
    start = match.start()
    claim = ToolClaim(kind="invoked", tool=tool, text=answer[start:end], start=start, end=end)
    return _TextClaim(claim=claim, noun=None, named=named, whole_output=False, known=tool in names.patterns)


def _named_after(
    text: str, start: int, end: int, names: _ToolNames, sole: str | None
) -> tuple[str | None, int, bool]:
    """The tool named right after a verb, where its mention ends, and whether it was named."""
    mentions = names.mentions(text, start, end)
    if mentions:
        _, m_end, tool = mentions[0]
        suffix = re.match(r"\s+(?:tool|function|api|command)\b", text[m_end:end])
        return tool, m_end + (suffix.end() if suffix else 0), True
    explicit = _EXPLICIT_TOOL.search(text, start, end)
    if explicit:
        word = explicit.group("name")
        if word.lower() in _POINTING_WORDS:
            return sole, explicit.end(), False
        return (names.resolve(word) or word), explicit.end(), True
    return None, start, False


# --- counts and absences by subject ---------------------------------------------------------

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
# Words that may follow the counted noun without changing what is counted ("3 flights
# available", "2 tickets open", "4 orders in total").
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
_ID_VALUE = re.compile(r"[^\s]*(?:\d|_|@)[^\s]*")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_CLAUSE_END = re.compile(
    r"(?<!\d)[,.]|[,.](?!\d)|[;:!?()\n\u2014\u2013]|\s(?:and|but|so|because|while|whereas|although|though)\s",
    re.I,
)
_TEXT_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def _key(word: str) -> str:
    """One spelling of a word for comparing: lower case, singular, hyphens gone (one-stop)."""
    return singular(word.lower().replace("-", "").replace("'", ""))


def _words(text: str) -> list[str]:
    return _TEXT_WORD.findall(text.lower())


def _fits(word: str, subject: frozenset[str]) -> bool:
    """A noun names a list when it is one of its subject words, or a short form of one."""
    key = _key(word)
    if key in subject:
        return True
    for other in subject:
        short, long_ = sorted((key, other), key=len)
        if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3:
            return True
    return False


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


def _list_reads(turn: Turn) -> list[_ListRead]:
    """The turn's successful reads whose result is a list (a receipt with a result count).

    A read followed by a call that may have changed data (later, or in the same batch) no
    longer says what the list holds now, so it is left out.
    """
    out = []
    calls = [turn.call_of(r) for r in turn.receipts]
    # Where each call stands: its asking message (a batch shares one), else its receipt's order.
    if all(c is not None for c in calls):
        places = [c.message_index for c in calls if c is not None]
    else:
        places = list(range(len(calls)))
    writes = [p for p, r in zip(places, turn.receipts, strict=True) if r.dispatched and may_write(r.tool, r)]
    for place, receipt in zip(places, turn.receipts, strict=True):
        if receipt.result_count is None or not receipt.ok or not receipt.dispatched:
            continue
        if may_write(receipt.tool, receipt) or any(w >= place for w in writes):
            continue
        call = turn.call_of(receipt)
        message = turn.result_of(receipt)
        out.append(_list_read(receipt, call, message))
    return out


def _list_read(receipt: Receipt, call: ToolCall | None, message: Message | None) -> _ListRead:
    result = message.value if message is not None else None
    rows = message.rows if message is not None else None
    arguments = call.parsed if call is not None else None
    named = [_key(t) for t in name_tokens(receipt.tool) if t not in _NAME_NOISE and not t[-1].isdigit()]
    # The name's last word is what it lists: list_account_tickets lists tickets, not accounts.
    subject = set(named[-1:])
    complete = not (isinstance(receipt.scope, dict) and receipt.scope.get("complete") is False)
    if isinstance(result, dict):
        # The name of the one list field names what it lists.
        subject.update(
            _key(t) for k, v in result.items() if isinstance(v, list) and v is rows for t in name_tokens(k)
        )
        complete = complete and not any(
            set(name_tokens(k)) & _PAGING for k, v in result.items() if not isinstance(v, list)
        )
    row_words: list[frozenset[str]] | None = [] if rows is not None else None
    for row in rows or ():
        if not isinstance(row, dict) or row_words is None:
            row_words = None
            continue
        # Short values only: a status or a kind ("open"), never free text that mentions it.
        row_words.append(
            frozenset(
                _key(w) for v in row.values() if isinstance(v, str) and len(_words(v)) <= 2 for w in _words(v)
            )
        )
    shared = frozenset.intersection(*row_words) if row_words else frozenset()
    if rows and isinstance(rows[0], dict) and rows[0]:
        first = name_tokens(next(iter(rows[0])))
        if len(first) > 1 and first[-1] in ("id", "number", "no", "code", "num"):
            subject.update(_key(t) for t in first[:-1])
    filters: list[tuple[str, Any]] = []
    argument_words: set[str] = set()
    for key, value in arguments.items() if isinstance(arguments, dict) else ():
        if set(name_tokens(key)) & _PAGING:
            complete = False
        elif isinstance(value, str):
            argument_words.update(_key(w) for w in _words(value))
            date = _ISO_DATE.match(value.strip())
            if date:
                filters.append(("date", date.groups()))
                if 1 <= int(date.group(2)) <= 12:  # every row is of that day: "on May 20"
                    argument_words.update({_MONTHS[int(date.group(2)) - 1], str(int(date.group(3)))})
            elif value.strip() and not _ID_VALUE.fullmatch(value.strip()):
                filters.append(("words", frozenset(_key(w) for w in _words(value))))
        elif value is not None:
            filters.append(("opaque", None))  # a number or a flag the sentence cannot be held to
    subject.discard("")
    accounted = frozenset(subject | set(named) | argument_words | shared | {_key(w) for w in _NEUTRAL})
    return _ListRead(
        receipt=receipt,
        subject=frozenset(subject),
        named=frozenset(named),
        accounted=accounted,
        rows=tuple(row_words) if row_words is not None else None,
        filters=tuple(filters),
        complete=complete,
        tokens=f"{call.arguments if call else ''} {message.text if message else ''}".lower(),
    )


def _said(spec: tuple[str, Any], clause: str, words: set[str]) -> bool:
    """Whether the sentence says what a filter narrowed the list to."""
    kind, value = spec
    if kind == "words":
        return bool(value) and value <= words
    if kind == "date":
        year, month, day = value
        if f"{year}-{month}-{day}" in clause:
            return True
        if not 1 <= int(month) <= 12:
            return False
        name, number = _MONTHS[int(month) - 1], str(int(day))
        return bool(
            re.search(
                rf"\b{name}\s+{number}(?:st|nd|rd|th)?\b|\b{number}(?:st|nd|rd|th)?\s+(?:of\s+)?{name}\b",
                clause,
            )
        )
    return False


def _head(words: list[str], reads: list[_ListRead]) -> tuple[int, _ListRead] | None:
    """The counted noun's place in the noun phrase and the one list it names, if one does.

    The head is the phrase's last word, or an earlier one followed only by words that leave
    the count unchanged ("flights available"). Where it names several lists, a word before it
    may pick one ("direct flights" of a direct and a one-stop search); else none is bound.
    """
    for at in range(len(words) - 1, -1, -1):
        fits = [r for r in reads if _fits(words[at], r.subject)]
        if fits:
            if len(fits) > 1:
                fits = [r for r in fits if any(_fits(w, r.subject | r.named) for w in words[:at])]
            return (at, fits[0]) if len(fits) == 1 else None
        if words[at] not in _POSTNOMINAL:
            return None
    return None


def _stated_elsewhere(count: int, turn: Turn) -> bool:
    """The number is one the user wrote, or a count a result of the turn states ("total": 7)."""
    for message in turn.messages:
        if message.role == "user" and re.search(rf"(?<![\d.,]){count}(?![\d.,]\d)", message.text):
            return True
    return any(
        type(item) is int
        and item == count
        and (set(name_tokens(key)) & _COUNT_KEYS or key.lower().startswith(("number_of", "n_")))
        for message in turn.tool_results
        for key, item in members(message.value)
    )


@dataclass(frozen=True)
class _Subject:
    """What a sentence's counted noun says of the one list read it names."""

    claim: _TextClaim | None  # the claim to judge, when the receipts can settle it
    read: _ListRead  # the list the noun names
    phrase_settles: bool  # the noun phrase alone (no words around it) could be settled


def _fitting_rows(read: _ListRead, qualifiers: set[str]) -> int:
    """How many listed rows are surely of the kind a sentence counts ("open tickets").

    Every row, when each qualifier is a word every row satisfies (what the call filtered
    on, a value all rows share, the list's own name); else the rows whose short values hold
    every other qualifier ("status": "open"); none where the rows cannot be read.
    """
    recorded = read.receipt.result_count or 0
    rest = {q for q in qualifiers if q not in read.accounted}
    if not rest:
        return recorded
    if read.rows is None or len(read.rows) != recorded:
        return 0
    return sum(rest <= row for row in read.rows)


def _claim_by_subject(
    kind: str, match: re.Match[str], text: str, turn: Turn, sentence: Sentence, reads: list[_ListRead]
) -> _Subject | None:
    """A count or an absence bound to the one list read of the turn the sentence is about.

    None when the noun names no one list; else the claim, kept only where the receipts can
    settle it (the rule is in the module docstring).
    """
    phrase = match.groupdict().get("noun")
    if not phrase or not reads or _is_subset(match):
        return None
    words = [w for w in (m.group() for m in _TEXT_WORD.finditer(phrase.lower())) if w != "matching"]
    found = _head(words, reads)
    if found is None:
        return None
    at, read = found
    count = parse_number(match.group("num")) if kind == "count" else 0
    if singular(words[at]) in _UNITS or count is None:
        return None
    start = clause_start(text, sentence, match.start())
    end_match = _CLAUSE_END.search(text, match.end(), sentence.end)
    end = end_match.start() if end_match else sentence.end
    # Everything before the count in its sentence ("for March, you have…" too), and the rest
    # of its clause after it.
    prefix = _words(text[sentence.start : match.start()])
    tail = _words(text[match.end() : end])[:8]
    said = prefix + words + tail
    clause = text[sentence.start : end].lower()
    clause_words = {_key(w) for w in said}

    def settles(qualifiers: set[str]) -> bool:
        recorded = read.receipt.result_count or 0
        fitting = _fitting_rows(read, qualifiers)
        if kind == "absence":
            return recorded == 0 or fitting > 0
        if count == recorded:
            return True
        if _stated_elsewhere(count, turn):
            return False
        if count < recorded:
            return count < fitting  # wrong only if more rows than that are of the kind counted
        # More than listed: wrong only if the list is all the sentence counts (no filter of
        # the call left unsaid, no sign of another page).
        return read.complete and all(_said(spec, clause, clause_words) for spec in read.filters)

    in_phrase = {_key(w) for w in words[:at]}
    result = _Subject(claim=None, read=read, phrase_settles=settles(in_phrase))
    # A sentence about a record the read does not hold ("account 9912 has…") is another
    # list's; one that leads with words the read does not account for ("John has…", "for
    # your other account, you have…", "this week you have…") may count another list or a
    # part of this one.
    if any(re.search(r"\d", w) and w not in read.tokens for w in said):
        return result
    if any(_key(w) not in read.accounted for w in prefix):
        return result
    if not settles(in_phrase | {_key(w) for w in words[at + 1 :] + tail}):
        return result
    receipt = read.receipt
    claim = ToolClaim(
        kind=kind,
        tool=receipt.tool,
        call_id=receipt.call_id,
        count=count if kind == "count" else None,
        text=turn.answer[start : match.end()],
        start=start,
        end=match.end(),
    )
    item = _TextClaim(claim=claim, noun=words[at], named=False, whole_output=False, by_subject=True)
    return _Subject(claim=item, read=read, phrase_settles=result.phrase_settles)


# --- binding claims to receipts -------------------------------------------------------------


def same_tool(a: str, b: str) -> bool:
    """Two names of one tool: the same name, or the same words (``searchLogs``, ``search_logs``)."""
    return a == b or (bool(name_tokens(a)) and name_tokens(a) == name_tokens(b))


def bind(claim: ToolClaim, conversation: Conversation, turn: Turn) -> tuple[Receipt, Turn] | None:
    """The receipt a claim is about: the named call's, else the first of the same tool.

    This turn's receipts come first; a claim about an earlier turn's call ("I searched
    earlier") binds to the latest earlier turn that has one. Where the named id was reused
    (CONTRACT.md §6), the call of the claim's tool is the one meant, else the first.
    """
    found = _bound_in(claim, turn)
    if found is not None:
        return found, turn
    earlier = _history(conversation).latest_before(claim, turn.index)
    if earlier is None:
        return None
    where = conversation.turns[earlier]
    found = _bound_in(claim, where)
    return (found, where) if found is not None else None


def _bound_in(claim: ToolClaim, where: Turn) -> Receipt | None:
    """The receipt of one turn a claim is about, if the turn has one."""
    named = None
    for receipt in where.receipts:
        if claim.call_id is not None:
            if receipt.call_id == claim.call_id:
                if same_tool(receipt.tool, claim.tool):
                    return receipt
                named = named or receipt
        elif same_tool(receipt.tool, claim.tool):
            return receipt
    return named


def _called_in_transcript(claim: ToolClaim, turn: Turn) -> bool:
    """The transcript shows the call even though no receipt was kept for it."""
    if claim.call_id is not None:
        return any(call.call_id == claim.call_id for call in turn.tool_calls)
    return any(same_tool(call.tool, claim.tool) for call in turn.tool_calls)


# --- judging ----------------------------------------------------------------------------------


def _results(n: int) -> str:
    return f"{n} result" if n == 1 else f"{n} results"


def _evidence(receipt: Receipt, where: Turn) -> tuple[Evidence, ...]:
    if receipt.call_id is None:
        return ()
    message = where.result_of(receipt)
    if message is None:
        return ()
    return (Evidence(call_id=receipt.call_id, path="", start=0, end=len(message.text)),)


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


def _finding(turn: Turn, claim: ToolClaim, code: str, explanation: str, **more: Any) -> Finding:
    extra = {"tool": claim.tool, "claim_kind": claim.kind}
    extra.update({k: v for k, v in more.items() if k not in ("evidence", "correction", "severity")})
    return Finding(
        turn=turn.index,
        checker=NAME,
        code=code,
        severity=more.get("severity", "flag"),
        explanation=explanation,
        claim=claim_span(claim, turn.answer),
        evidence=more.get("evidence", ()),
        correction=more.get("correction"),
        extra=extra,
    )


def judge(claim: ToolClaim, conversation: Conversation, turn: Turn) -> Finding | None:
    """The finding for one claim, or None when the receipts bear it out (or cannot refute it)."""
    bound = bind(claim, conversation, turn)
    if bound is None:
        if _called_in_transcript(claim, turn):
            return None
        return _unmatched(claim, conversation, turn)
    receipt, where = bound
    if claim.kind == "count":
        return _judge_count(claim, receipt, where, turn)
    if claim.kind == "absence":
        return _judge_absence(claim, receipt, where, turn)
    return None  # an invoked claim with a receipt: it really ran


def _unmatched(claim: ToolClaim, conversation: Conversation, turn: Turn) -> Finding:
    named_call = f" call {claim.call_id}" if claim.call_id else ""
    if not conversation.receipts_complete:
        return _finding(
            turn,
            claim,
            "ungroundable",
            f"No receipt for the {claim.tool} tool{named_call} is kept, and this conversation's receipts may "
            "have been trimmed, so the claim can be neither confirmed nor refuted.",
            severity="info",
            call_id=claim.call_id,
        )
    if claim.call_id:
        explanation = (
            f"The answer refers to {claim.tool} call {claim.call_id}, but no such call was recorded."
        )
        correction = f"Note from Receipts: no call {claim.call_id} of the {claim.tool} tool was recorded."
    else:
        explanation = f"The answer refers to the {claim.tool} tool, but no call to it was recorded."
        correction = f"Note from Receipts: the {claim.tool} tool did not run; no call to it was recorded."
    return _finding(
        turn, claim, "fabricated_tool_reference", explanation, correction=correction, call_id=claim.call_id
    )


def _judge_count(claim: ToolClaim, receipt: Receipt, where: Turn, turn: Turn) -> Finding | None:
    recorded, claimed = receipt.result_count, claim.count
    if recorded is None or claimed is None or recorded == claimed:
        return None
    return _finding(
        turn,
        claim,
        "count_misstatement",
        f"The answer says {claim.tool} returned {_results(claimed)}; its receipt records {recorded}.",
        evidence=_evidence(receipt, where),
        correction=f"Note from Receipts: the {claim.tool} tool returned {_results(recorded)}, not {claimed}.",
        call_id=receipt.call_id,
        claimed=claimed,
        recorded=recorded,
    )


def _judge_absence(claim: ToolClaim, receipt: Receipt, where: Turn, turn: Turn) -> Finding | None:
    count = receipt.result_count
    if not ((count is not None and count > 0) or receipt.emptiness == "non-empty"):
        return None
    what = _results(count) if count else "results"
    return _finding(
        turn,
        claim,
        "false_absence",
        f"The answer says {claim.tool} found nothing, but its receipt records {what}.",
        evidence=_evidence(receipt, where),
        correction=f"Note from Receipts: the {claim.tool} tool returned {what}; it did find something.",
        call_id=receipt.call_id,
        recorded=count,
    )


# --- which text claims to keep ----------------------------------------------------------------


def _argument_words(receipt: Receipt, where: Turn) -> set[str]:
    """Words of the call's arguments: what the search was for ("level": "error" -> error)."""
    call = where.call_of(receipt)
    if call is None:
        return set()
    arguments = call.arguments if call.parsed is None else call.parsed
    return {
        singular(token) for token in re.findall(r"[A-Za-z][A-Za-z-]+", json.dumps(arguments, default=float))
    }


def _holds(item: _TextClaim, conversation: Conversation, turn: Turn) -> bool:
    """Whether a claim read from text is firm enough to judge.

    A count or an absence is a claim about a tool's output only when its noun is that
    output: a generic word ("results"), a word of the tool's name or arguments, or any word
    after a verb that reports the whole output of a tool the sentence names. "No errors were
    found" over a log read that returned lines is a statement about the lines, not about
    the read, and is left to the checkers that read values.
    """
    claim = item.claim
    bound = bind(claim, conversation, turn)
    if claim.kind == "invoked":
        # A tool the conversation never mentions ("the calendar tool") may be a loose name
        # for one that ran; it can only be judged when nothing ran at all.
        first_active = _history(conversation).first_active
        return item.known or first_active is None or first_active > turn.index
    if item.by_subject:
        return True  # weighed when it was read (_claim_by_subject)
    if bound is None:
        # Only a named tool can be fabricated; an unnamed count with nothing to bind is a
        # statement of fact that other checkers weigh.
        return item.named
    if item.noun is None or (item.named and item.whole_output):
        return True
    noun = singular(item.noun)
    receipt, where = bound
    known = {singular(t) for t in name_tokens(claim.tool)} | _argument_words(receipt, where) | _GENERIC_NOUNS
    return noun in known or noun == "empty"


# The last conversation's claims, turn by turn: the suite runs its checkers one after another
# on one conversation, and a second checker that weighs the same sentences reads them from
# here instead of again. The conversation is held (not its id), so a new one never matches.
_last: tuple[Conversation | None, dict[int, tuple[ToolClaim, ...]]] = (None, {})


def turn_claims(conversation: Conversation, turn: Turn) -> list[ToolClaim]:
    """The claims to judge: the runtime's when it sent them, else those read from the answer."""
    global _last
    if turn.claims is not None:
        return list(turn.claims)
    ours = turn.index < len(conversation.turns) and conversation.turns[turn.index] is turn
    held, claims = _last
    if ours and held is not conversation:
        claims = {}
        _last = (conversation, claims)
    found = claims.get(turn.index) if ours else None
    if found is None:
        found = tuple(
            item.claim for item in read_claims(conversation, turn) if _holds(item, conversation, turn)
        )
        if ours:
            claims[turn.index] = found
    return list(found)


def prose_absences(conversation: Conversation, turn: Turn) -> list[ToolClaim]:
    """The absences the turn states: the runtime's absence claims, else those read from the answer.

    Every checker that weighs what the answer says was not found reads it through here, so
    one sentence is one absence whichever checker judges it.
    """
    return [claim for claim in turn_claims(conversation, turn) if claim.kind == "absence"]


def check_turn(conversation: Conversation, turn: Turn) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[tuple[str, str, str | None]] = set()
    for claim in turn_claims(conversation, turn):
        finding = judge(claim, conversation, turn)
        if finding is None:
            continue
        # One defect, one finding: "I searched … the search found nothing" about one missing
        # call is a single fabricated reference.
        key = (finding.code, claim.tool, finding.extra.get("call_id"))
        if key in seen:
            continue
        seen.add(key)
        findings.append(finding)
    return findings


class ToolReceipts:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        findings: list[Finding] = []
        for turn in conversation.turns:
            deadline.check()
            findings.extend(check_turn(conversation, turn))
        return CheckerReport(findings)
