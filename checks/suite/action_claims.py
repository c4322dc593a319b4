"""Checker ``action_claims``: an answer that reports a completed action nothing performed.

A model with no tool to call still narrates the action it was asked for ("I've saved your favourite tea
as sencha"), and the narration reads exactly like a real report. So a report of a completed change (a
first-person perfect or past, "successfully added", "has been cancelled", "is now cancelled", a list item
or a count that opens with the act, "Done!") needs a call of its turn, or for "has been" of an earlier
one, that could have made it: with none it is ``unverified_action``; where every such call failed or was
denied, ``failed_action_claimed``.

A call could have made it (``_could``) unless it only read: its verb must be able to do the claim's, and
it must act on what the claim names, as its name, its arguments' names or the parts of the record its
result returns say (what the claim names counts only where the conversation's tools deal in that kind of
thing: "your favourite tea" is content, not a kind). What the claim names may also be a thing that
record holds ("the credit has been added"): a write on a record covers the parts the record holds. A
call that is no read and whose result is a sentence reporting the claim's act done to a record of what
the claim names, by its id ("Voucher V-88 added to member M-2"), did it, whatever its name's verb
(``send_voucher``): the result is its receipt. A clause that says the act was not done, not yet, not for
sure, or undone ("will be added once approved", "added: false", "added, then rolled back") is no
receipt. A claim not told in the first person ("the ticket is closed") whose word a result read so far
holds as a record's text, or that a member is named for with the thing the claim names ("seats_booked":
2 of "two seats are booked", "notice_sent_at": a time), set (not zero, null or false) and naming no
bookkeeping ("updated_at"), chance or negation ("can_be_cancelled", "email_not_sent"), reports what that
record says: no action is claimed. Nor does one that says it was done "at" the clock time a record's
timestamp holds under a member named for that act ("- Booked this morning at 9:12 AM" beside
``"booked_at": "2025-03-04T09:12:00"``; "created_at" for an act that makes a record, any act's for
"updated"): that is when the record says it was done, never a slot's start.

Precision matters more than recall: a notice on a truthful answer teaches reviewers to ignore notices.
Refusals, offers, plans, hypotheticals and questions never count.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from . import deadline
from .options import Options
from .text import (
    APOSTROPHE,
    OFFER_OR_PLAN,
    Sentence,
    alternation,
    clause_start,
    name_tokens,
    prepare,
    sentence_at,
    sentences,
    singular,
)
from .tool_names import GROUPED_VERBS, READ_VERBS, VERB_GROUPS, object_words, verb_of
from .tool_receipts import result_evidence
from .types import CheckerReport, Conversation, Finding, Receipt, RunContext, Span, ToolCall, Turn, members
from .values import TimeValue, read_times

NAME = "action_claims"

# Past participles after "I've" / "I have": each names an action a tool would have to do.
_PERFECT_VERBS = tuple(
    """saved stored remembered created added written updated deleted removed sent run executed scheduled
    booked changed modified deployed installed uploaded emailed cancelled canceled submitted restarted
    published posted renamed archived committed recorded logged configured transferred refunded upgraded moved
    assigned reassigned issued placed reserved renewed extended replaced""".split()
) + ("set up",)
# Simple past after "I": only verbs whose past form is unmistakably a finished act.
_PAST_VERBS = tuple(
    """ran saved stored deleted removed sent executed scheduled booked deployed uploaded emailed
    submitted restarted""".split()
)
_SUCCESS_VERBS = tuple(
    """saved stored created added updated deleted removed sent scheduled booked deployed written
    uploaded submitted""".split()
)
# "It has been saved": the first ten, whose passive reads as a report of the model's own act,
# and the changes real agents report of a record ("your reservation has been cancelled").
_PASSIVE_VERBS = _SUCCESS_VERBS[:10] + tuple(
    "cancelled canceled refunded transferred changed modified upgraded downgraded".split()
)
# A list item that opens with what was done: "- Added three checked bags", "2. **Bags**: Added one".
_COUNT_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|a|an"
# A word of a counted noun phrase: not an auxiliary, which would make it a passive report.
_NOUNISH = r"(?!(?:has|have|had|been|is|are|was|were|be|being)\b)[a-z-]+"
_HEADLINE_VERBS = tuple("added removed cancelled canceled booked upgraded refunded updated changed".split())
_ADVERBS = (
    r"(?:\s+(?:just|now|already|also|successfully|finally|since|gone\s+ahead\s+and|went\s+ahead\s+and))*"
)


def _alternatives(words: tuple[str, ...]) -> str:
    return alternation(words).replace(r"\ ", r"\s+")


_HEADLINE = re.compile(
    r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\*\*[^*\n]{1,60}\*\*:?[ \t]*)?"
    rf"(?P<verb>{_alternatives(_HEADLINE_VERBS)})\b",
    re.I | re.M,
)
_CLAIM_PATTERNS = (_HEADLINE,) + tuple(
    re.compile(pattern, re.I)
    for pattern in (
        rf"\bI(?:{APOSTROPHE}ve|\s+have){_ADVERBS}\s+(?P<verb>{_alternatives(_PERFECT_VERBS)})\b",
        # "I ran into a problem" reports no action.
        rf"\bI(?:\s+(?:just|also|successfully|then|went\s+ahead\s+and))*\s+(?P<verb>{_alternatives(_PAST_VERBS)})\b"
        r"(?!\s+(?:into|out\s+of|across|short)\b)",
        rf"\bsuccessfully\s+(?P<verb>{_alternatives(_SUCCESS_VERBS)})\b",
        rf"\b(?:has|have)\s+(?:now\s+|just\s+)?been\s+(?:successfully\s+)?(?P<verb>{_alternatives(_PASSIVE_VERBS)})\b",
        # "Your reservation is now cancelled": a state only a change could have brought about.
        r"\b(?:is|are)\s+(?:now\s+)?(?:successfully\s+)?(?P<verb>cancell?ed|booked)\b",
        # "1 checked bag added": a count of things, then what was done to them, closing its clause.
        rf"(?<![\w-])(?:\d+|{_COUNT_WORDS})\s+(?:{_NOUNISH}\s+){{0,2}}?{_NOUNISH}\s+"
        rf"(?P<verb>{_alternatives(_HEADLINE_VERBS)})\b(?=\s*(?:[.,;:!)(\n]|$))",
        # "Done!" as an exclamation of completion; "well done!" praises the user instead.
        r"(?<![\w'])(?<!well )done!",
    )
)

# Every claim holds one of these words: an ASCII answer whose lower case holds none is read no
# further (elsewhere, a case-blind match may pair two letters lower() does not: "ſ" and "s").
_VERBS = _PERFECT_VERBS + _PAST_VERBS + _SUCCESS_VERBS + _PASSIVE_VERBS + _HEADLINE_VERBS
_CLAIM_WORD = re.compile(alternation({verb.split()[0] for verb in _VERBS} | {"done!"}))

# Anywhere in the answer, these say the model could not act: an honest refusal or failure
# report, in which a claim-shaped phrase is quoted or hypothetical.
_REFUSAL = re.compile(
    rf"\bI(?:\s+(?:can{APOSTROPHE}?t|cannot|can\s+not|couldn{APOSTROPHE}?t|could\s+not|was(?:n{APOSTROPHE}?t|\s+not)\s+able"
    rf"|was\s+unable|failed\s+to|(?:don{APOSTROPHE}?t|do\s+not)\s+have\s+(?:access|the\s+ability|any\s+tools?|a\s+tool)"
    rf"|have\s+no\s+(?:tools?|access|way))|(?:{APOSTROPHE}m|\s+am)\s+(?:unable|not\s+able))\b",
    re.I,
)
# Within the claim's own sentence, these make it an offer, a plan or a hypothetical.
_INTENT = re.compile(
    rf"{OFFER_OR_PLAN}|\bI\s+(?:would|could)\b|\bpretend|\bimagine\b|\bfor\s+example\b|\be\.g\.", re.I
)
# Before the claim, these make it a condition ("if I've saved it, ...").
_CONDITION = re.compile(r"\b(?:if|unless|once|whether|until|before)\b", re.I)
# Right after the claim, these undo it ("I've saved nothing", "I have sent no email").
_EMPTY_OBJECT = re.compile(r"\s+(?:nothing|none|no)\b", re.I)
_NEGATION = re.compile(rf"\b(?:not|never|nothing|none|no\s+one|nobody)\b|n{APOSTROPHE}t\b", re.I)

# Verbs a model also uses for text it wrote in the reply itself ("I've written a draft below").
_ARTIFACT_VERBS = tuple("written created added updated drafted rewritten prepared included listed".split())
_ARTIFACT_PLACE = re.compile(
    r"\b(?:below|above|the\s+following|in\s+(?:this|my)\s+(?:reply|answer|message|response))\b|:\s*$", re.I
)


@dataclass(frozen=True)
class ActionClaim:
    span: Span
    verb: str | None  # the action's past participle ("saved"), None for a bare "Done!"
    objects: frozenset[str] = frozenset()  # what it says was acted on, in the singular ("bag")
    perfect: bool = False  # "has been added": may report an act of an earlier turn
    sentence: str = ""  # the claim's sentence in lower case
    own: bool = False  # told in the first person ("I cancelled"), not as a state ("is cancelled")


def find_action_claims(answer: str) -> list[ActionClaim]:
    """Every phrase of the answer that reports a completed action, in answer order."""
    prepared = prepare(answer)
    if (prepared.isascii() and not _CLAIM_WORD.search(prepared.lower())) or _REFUSAL.search(prepared):
        return []
    parts = sentences(prepared)
    claims: list[ActionClaim] = []
    taken_until = -1
    for start, end, verb in _raw_matches(prepared):
        deadline.check()
        # None where it overlaps a claim already kept ("I've successfully saved").
        sentence = sentence_at(parts, start) if start >= taken_until else None
        if sentence is None or not _reports_completion(prepared, sentence, start, end, verb):
            continue
        objects = frozenset(claim_objects(prepared, sentence, start, end)) if verb else frozenset()
        perfect = _PERFECT.match(prepared, start) is not None
        own = prepared.startswith("I", start) or "successfully" in prepared[start:end].lower()
        span = Span(answer[start:end], start, end)
        claims.append(ActionClaim(span, verb, objects, perfect, sentence.text.lower(), own))
        taken_until = end
    return claims


# Words that name no particular thing: what they stand for cannot tell one call from another.
_FUNCTION_WORDS = frozenset(
    """a an the your my our their his her its this that these those it them you me us all any each every some
    both also now just successfully already been has have is are was were be new following changes change
    request requests update updates everything detail details information one two three four five six seven
    eight nine ten single another more additional extra""".split()
)
_OBJECT_END = re.compile(
    r"[,.;:!?()\n]|\b(?:to|from|for|with|on|in|at|into|onto|by|as|and|using|via)\b", re.I
)
_COUNTED = re.compile(rf"(?:\d+|{_COUNT_WORDS})\s", re.I)
_PERFECT = re.compile(r"(?:has|have)\b", re.I)
_PASSIVE_START = re.compile(r"(?:has|have|is|are)\b", re.I)
_PASSIVE_END = re.compile(r"\b(?:was|were|been|is|are)\s*$", re.I)
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_SUBJECT_END = re.compile(r"\b(?:from|to|for|with|on|in|at|of|under|between)\b", re.I)


def claim_objects(text: str, sentence: Sentence, start: int, end: int) -> set[str]:
    """What a claim says was acted on: the words after its verb (an active report), else the
    subject before it (a passive one), singular and without words that name nothing."""
    if _COUNTED.match(text, start):
        # "1 checked bag added": the things counted are what was acted on.
        return _content_words(text[start:end]) - {singular(w) for w in _HEADLINE_VERBS}
    before = text[clause_start(text, sentence, start) : start]
    if _PASSIVE_START.match(text, start) or _PASSIVE_END.search(before):
        # The head of the subject: "Your flight" of "Your flight from Rome (FCO) is booked".
        lead = re.split(r"[,;:\u2014\u2013]|\s-\s", _BRACKETED.sub(" ", text[sentence.start : start]))[-1]
        return _content_words(_SUBJECT_END.split(lead, maxsplit=1)[0])
    return _content_words(_OBJECT_END.split(text[end : end + 80], maxsplit=1)[0]) or _content_words(before)


def _content_words(chunk: str) -> set[str]:
    words = (word.lower() for word in re.findall(r"[A-Za-z][A-Za-z-]+", chunk))
    return {singular(word) for word in words if word not in _FUNCTION_WORDS and not word.endswith("ly")}


def _raw_matches(text: str) -> list[tuple[int, int, str | None]]:
    """Every claim-shaped phrase, earliest first; at one position the longest, which stands for the claim."""
    found: list[tuple[int, int, str | None]] = []
    for pattern in _CLAIM_PATTERNS:
        for match in pattern.finditer(text):
            verb = re.sub(r"\s+", " ", (match.groupdict().get("verb") or "").lower()) or None
            # A list item's claim starts at its verb, not at the bullet or label before it.
            start = match.start("verb") if pattern is _HEADLINE else match.start()
            found.append((start, match.end(), "run" if verb == "ran" else verb))
    return sorted(found, key=lambda item: (item[0], -(item[1] - item[0])))


def _reports_completion(text: str, sentence: Sentence, start: int, end: int, verb: str | None) -> bool:
    lead = text[sentence.start : start]
    return not (
        sentence.is_question
        or _INTENT.search(sentence.text)
        or _CONDITION.search(lead)
        or _NEGATION.search(lead)
        or _EMPTY_OBJECT.match(text, end)
        or lead.rstrip().endswith(('"', "'", "\u201c"))  # quoted: someone's words, not a report
        or (verb in _ARTIFACT_VERBS and _ARTIFACT_PLACE.search(sentence.text))
    )


# --- the checker --------------------------------------------------------------------------


def _failure(receipt: Receipt) -> str | None:
    """How a call failed, as its finding says it; None where it did not."""
    if not receipt.dispatched:
        return "was never dispatched"
    if receipt.outcome == "denied":
        return "was denied"
    return "failed" if not receipt.ok or receipt.outcome == "error" else None


# Which verbs of a tool's name can do what a claim's verb reports (``VERB_GROUPS``). A tool
# whose verb is in none of the groups (``process_payment``) may do anything its object allows.
_CLAIM_VERBS = {
    verb: tuple(groups.split())
    for verbs, groups in [
        ("added booked scheduled saved stored recorded placed reserved issued", "create change"),
        ("removed cancelled canceled", "remove change"),
        ("changed modified upgraded downgraded moved renewed extended replaced", "change"),
        ("sent emailed", "send"),
        ("created", "create"),
        ("deleted", "remove"),
        ("updated", "change create"),
        ("submitted", "send create"),
        ("transferred", "send change"),
    ]
    for verb in verbs.split()
}
_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')

# A call as ``_could`` reads it: its tool, its receipt's effect (None: no receipt), the words of its
# arguments' names, the parts of the record its result returns (a word of a member's name, the
# member's text in lower case), and the acts a result written as sentences reports done, each with
# what it was done to ("Certificate certificate_3221322 added to user ...": added, certificate).
# Calls share shapes, so a "has been" claim weighs each earlier one once.
_Shape = tuple[str, str | None, frozenset[str], frozenset[tuple[str, str]], frozenset[tuple[str, str]]]
MAX_REPORT = 400  # characters of a result written as a sentence: a short report of what was done
# A result's clause, and what a clause says when it reports a done act to a record it names: the
# record's noun, its id (a word with a digit), the act ("Voucher V-88 added"), or the act first
# ("Added licence L-301").
_CLAUSE = re.compile(r"(?:[^.;!?\n]|\.(?=\s*\d)|(?<=\bno)\.)+")
_RECEIPT = re.compile(
    r"\b(?P<n1>[a-z]+)\s+(?=[\w-]*\d)[\w-]+\s+(?:(?:was|were|has\s+been|have\s+been)\s+)?(?P<v1>[a-z]+ed)\b"
    r"|\b(?P<v2>[a-z]+ed)\s+(?:(?:a|an|the|\d+)\s+)?(?P<n2>[a-z]+)\s+(?=[\w-]*\d)[\w-]+",
    re.I,
)
# In a clause, these say the act was not done, not yet, not for sure or undone: no receipt of it.
_UNDONE = re.compile(
    r"\b(?:not|no(?!\.\s*\d)|never|error|fail\w*|unable|cannot|can|could|only|would|will|shall|should|must|may"
    r"|might|to be|once|after|until|when|if|denied|rejected|refused|blocked|invalid|queue\w*|pending|awaiting"
    r"|approval|review|waitlist\w*|dry|simulat\w*|test mode|preview|then|revoked|reverted|rolled"
    r"|undone|false|null|none|previously|already|last)\b|n't|:\s*0\b|^\s*0\s",
    re.I,
)


def _argument_name_words(call: ToolCall) -> frozenset[str]:
    """The words of a call's argument names: ``total_baggages`` says it changes bags."""
    return frozenset(singular(word) for key in _KEY.findall(call.arguments) for word in name_tokens(key))


def _texts(value: object) -> list[tuple[str, str]]:
    """The short texts a JSON value's objects hold under a name: a record's states."""
    return [
        (key, item)
        for key, item in members(value)
        if isinstance(key, str) and isinstance(item, str) and 3 <= len(item) <= 60 and not item.isdigit()
    ]


# A member named for a state is "<what>_<state>", or that with a time after ("notice_sent_at"); words
# that say it may happen or did not, and bookkeeping times every record has, name no state.
_STATE_TIME = frozenset("at on date time ts timestamp".split())
_NO_STATE = frozenset(
    "not non no never can cannot auto if allowed allow eligible pending will may un".split()
)
_BOOKKEEPING = frozenset("created updated modified changed".split())
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ](\d{2}):(\d{2})")  # a timestamp's clock time


def _stamp(text: str) -> tuple[int, int] | None:
    """The hour and minute of a timestamp a record holds ("2024-05-15T08:40:00"), or None."""
    match = _STAMP.match(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _done_stamps(texts: list[tuple[str, str]]) -> set[str]:
    """Of a record's texts (``_texts``), the clock times of timestamps held under a member named for
    a done act ("booked_at", "renewed", "created_at"), each as "<act>@HH:MM": "starts_at", "due" or a
    slot's time say when nothing was done."""
    out: set[str] = set()
    for key, text in texts:
        words = name_tokens(key)
        if words and words[-1] in _STATE_TIME:
            words = words[:-1]
        if words and words[-1].endswith("ed") and not _NO_STATE & set(words) and (stamp := _stamp(text)):
            out.add(_spelled(words[-1]) + _clock(stamp))
    return out


# "at 9:12 AM": when the sentence says the act was done.
_AT_TIME = re.compile(r"\bat\s+(\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?)", re.I)
# A record's bookkeeping times: an update's restates any act's time; its creation's, the act that made it.
_UPDATING_VERBS = frozenset("updated changed modified".split())
_CREATING_VERBS = frozenset("booked reserved placed created added submitted scheduled issued".split())


def _dated_by_record(claim: ActionClaim, stamps: AbstractSet[str]) -> bool:
    """Whether the claim says when it was done ("at 9:12 AM") at the time a record's member named
    for that act holds ("booked_at"), or its creation's for an act that makes a record ("created_at"
    of "booked"); a verb of updating restates any done act's time."""
    verb = claim.verb or ""
    acts = {_spelled(verb)} | ({"created"} if verb in _CREATING_VERBS else set())
    times = {_clock(t) for m in _AT_TIME.finditer(claim.sentence) for t in read_times(m.group(0))}
    return any(
        stamp.endswith(clock) and (stamp.split("@")[0] in acts or verb in _UPDATING_VERBS)
        for stamp in stamps
        for clock in times
    )


def _clock(time: TimeValue | tuple[int, int]) -> str:
    """A clock time as ``states`` holds it, apart from any text a record holds: "@08:40"."""
    hour, minute = (time.hour, time.minute) if isinstance(time, TimeValue) else time
    return f"@{hour:02d}:{minute:02d}"


NamedState = tuple[str, frozenset[str]]  # the state's word, and the stems of what holds it


def _named_states(value: object) -> set[NamedState]:
    """The states a JSON value's members are named for, where set (a count above zero, true, a
    text or a list): ``lessons_booked: 1`` says lessons are booked, ``notice_sent_at: "…"`` that a
    notice was sent."""
    out: set[NamedState] = set()
    for key, item in members(value):
        if not isinstance(key, str) or not _is_set(item):
            continue
        words = name_tokens(key)
        if words and words[-1] in _STATE_TIME:
            words = words[:-1]
        what = [w for w in words[:-1] if w not in _FUNCTION_WORDS]
        if what and words[-1] not in _BOOKKEEPING and not _NO_STATE & set(words):
            out.add((_spelled(words[-1]), frozenset(singular(w)[:3] for w in what)))
    return out


def _is_set(item: object) -> bool:
    if isinstance(item, bool) or item is None:
        return bool(item)
    if isinstance(item, int | float):
        return item > 0
    if isinstance(item, str):
        return item.strip().lower() not in ("", "false", "no", "none", "null", "0")
    return isinstance(item, list) and bool(item)


def _shape(turn: Turn, call: ToolCall, receipt: Receipt | None) -> _Shape:
    result = turn.result_of(call)
    parts: set[tuple[str, str]] = set()
    if result is not None and not result.is_error and verb_of(call.tool) not in READ_VERBS:
        given = {text.lower() for _, text in _texts(call.parsed)}  # the record's id: no change shown
        texts = [(key, text.lower()) for key, text in _texts(result.value)]
        parts = {(singular(word), low) for key, low in texts if low not in given for word in name_tokens(key)}
    effect = receipt.effect if receipt is not None else None
    reported: set[tuple[str, str]] = set()  # (the act, what it was done to) of each receipt clause
    text = result.text if result is not None and not result.is_error and result.value is None else ""
    if text and len(text) <= MAX_REPORT and verb_of(call.tool) not in READ_VERBS:
        for clause in _CLAUSE.findall(text):
            if not _UNDONE.search(clause):
                for m in _RECEIPT.finditer(clause):
                    noun, verb = (
                        (m.group("n1"), m.group("v1")) if m.group("n1") else (m.group("n2"), m.group("v2"))
                    )
                    reported.add((verb.lower(), singular(noun.lower())))
    return call.tool, effect, _argument_name_words(call), frozenset(parts), frozenset(reported)


def _held(shape: _Shape) -> set[str]:
    """The one-word texts of the record a call returned, in the singular (``refund``)."""
    return {singular(text) for _, text in shape[3] if text.isalpha()}


def _could(claim: ActionClaim, shape: _Shape) -> bool:
    """Whether a call of this shape could have done what ``claim`` reports."""
    tool, effect, name_words, parts, reported = shape
    if effect == "read":
        return False
    # Its result says, as a sentence, that it did the act to the thing the claim names: its receipt.
    if any(verb == claim.verb and word[:3] == noun[:3] for word in claim.objects for verb, noun in reported):
        return True
    if effect == "write" and (claim.verb is None or not claim.objects):
        return True
    verb = verb_of(tool)
    if verb in READ_VERBS:
        return False
    # A part of the record it returned whose text the claim states: acted on, whatever its verb.
    if any(word[:3] == part[:3] for word in claim.objects for part, text in parts if text in claim.sentence):
        return True
    # What the claim names is a thing the record it returned holds: the call made it.
    if not claim.objects.isdisjoint(_held(shape)):
        return True
    if claim.verb is None or claim.verb in ("refunded", "run", "executed"):  # any change may refund or run
        return True
    groups = _CLAIM_VERBS.get(claim.verb)
    if groups and verb in GROUPED_VERBS and not any(verb in VERB_GROUPS[g] for g in groups):
        return False
    names = {word[:3] for word in object_words(tool) | name_words | {verb}}
    return not claim.objects or any(word[:3] in names for word in claim.objects)


def _finding(turn: Turn, claims: list[ActionClaim], tools: list[str], failed: tuple[Receipt, ...]) -> Finding:
    verbs = list(dict.fromkeys(claim.verb for claim in claims if claim.verb)) or ["saved", "sent", "changed"]
    actions = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " or " + verbs[-1]
    named = sorted({word for claim in claims for word in claim.objects})
    what = f" ({', '.join(named)})" if named else ""
    if failed:
        calls = "; ".join(f"{r.tool or 'a tool'} {_failure(r)}" for r in failed)
        plural = "call" if len(failed) == 1 else "calls"
        why = f"The answer reports the action as done, but the {plural} able to do it failed: {calls}."
        note = (
            f"Note from Receipts: the tool {plural} in this turn that could have done this did not "
            f"succeed ({calls}), so nothing was actually {actions}. The answer reports an outcome that did "
            "not happen."
        )
    elif not tools:
        why = f"No tool ran during this turn, so nothing was {actions}."
        note = (
            f"Note from Receipts: no tool ran during this turn, so nothing was actually {actions}. The "
            "answer describes an action that did not take place, and nothing was changed."
        )
    else:
        why = (
            f"The answer reports something {actions}{what}, but no call of this turn could have done it: it "
            f"ran {', '.join(dict.fromkeys(tools))}, and none of these is a change of what the answer names."
        )
        note = (
            f"Note from Receipts: no call in this turn could have {actions} what the answer names{what}, so "
            "it was not actually done. The answer describes an action that did not take place."
        )
    code = "failed_action_claimed" if failed else "unverified_action"
    claim = next((c.span for c in claims if c.verb), claims[0].span)
    evidence = tuple(result_evidence(r.call_id, turn.result_of(r)) for r in failed)
    extra = {"phrases": [c.span.to_dict() for c in claims]}
    return Finding(turn.index, NAME, code, "flag", why, claim, evidence, note, extra=extra)


def known_kinds(turns: tuple[Turn, ...]) -> set[str]:
    """What the tools deal in: the words (first three letters) of their names, argument names, result keys."""
    words: set[str] = set()
    for turn in turns:
        for call in turn.tool_calls:
            words.update(name_tokens(call.tool), _argument_name_words(call))
        for result in turn.tool_results:
            words.update(w for key in _KEY.findall(result.text[:200_000]) for w in name_tokens(key))
    return {singular(word)[:3] for word in words if len(word) >= 3}


def _spelled(word: str) -> str:
    return word.replace("ll", "l")  # "cancelled" is "canceled"


def check_turn(
    turn: Turn,
    claims: list[ActionClaim],
    calls: list[tuple[Receipt | None, _Shape]],
    earlier: set[_Shape],
    kinds: set[str],
    states: set[str],
    named: AbstractSet[NamedState] = frozenset(),
) -> list[Finding]:
    """The turn's claims against the calls that could have made them: ``calls`` the turn's, ``earlier`` the
    shapes of earlier turns' calls that did not fail, ``states`` the texts results read so far hold."""
    if not calls:
        # Receipts with no calls in the transcript are judged by their outcomes alone: where
        # the runtime marked some call a write, the writes and the unmarked calls.
        if not any(r.dispatched for r in turn.receipts):
            return [_finding(turn, claims, [], ())]
        receipts = turn.receipts
        if any(r.effect == "write" for r in receipts):
            receipts = tuple(r for r in receipts if r.effect in ("write", "unknown"))
        return [_finding(turn, claims, [], receipts)] if receipts and all(map(_failure, receipts)) else []
    unbacked: list[ActionClaim] = []
    failed: list[ActionClaim] = []
    failed_receipts: list[Receipt] = []
    held = set().union(*(_held(shape) for _, shape in calls))
    for claim in claims:
        if not claim.own and claim.verb and _spelled(claim.verb) in states:
            continue  # a state the records hold, restated
        if not claim.own and _dated_by_record(claim, states):
            continue  # when a record says it was done ("Booked today at 8:40 AM"): the record, restated
        stems = {word[:3] for word in claim.objects}
        if (
            not claim.own
            and claim.verb
            and any(state == _spelled(claim.verb) and (not stems or stems & what) for state, what in named)
        ):
            continue  # a state a record's member is named for, restated of what it names
        claim = replace(claim, objects=frozenset(w for w in claim.objects if w[:3] in kinds or w in held))
        if claim.perfect and any(_could(claim, shape) for shape in earlier):
            continue  # an earlier call that did not fail could have done it
        able = [receipt for receipt, shape in calls if _could(claim, shape)]
        if not able:
            unbacked.append(claim)
        elif None not in able and all(_failure(r) for r in able if r is not None):
            failed.append(claim)
            failed_receipts.extend(r for r in able if r is not None and r not in failed_receipts)
    tools = [shape[0] for _, shape in calls]
    out = [_finding(turn, unbacked, tools, ())] if unbacked else []
    return out + ([_finding(turn, failed, tools, tuple(failed_receipts))] if failed else [])


class ActionClaims:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        findings: list[Finding] = []
        earlier: set[_Shape] = set()
        # The earlier turns' calls that did not fail, made shapes (their results read) only
        # once a "has been" claim asks: most turns claim nothing, and a result may be large.
        pending: list[tuple[Turn, ToolCall, Receipt | None]] = []
        kinds: set[str] | None = None
        states: set[str] = set()
        named: set[NamedState] = set()
        read = 0  # the turns whose results ``states`` holds, read only once a claim asks
        for position, turn in enumerate(conversation.turns):
            deadline.check()
            claims = find_action_claims(turn.answer) if turn.answer.strip() else []
            made = [(call, turn.receipt_of(call)) for call in turn.tool_calls]
            if claims:
                calls = [(r, _shape(turn, call, r)) for call, r in made]
                if any(claim.perfect for claim in claims):
                    earlier |= {_shape(*waiting) for waiting in pending}
                    pending.clear()
                if kinds is None and calls:  # read once, and only when a claim may be weighed
                    kinds = known_kinds(conversation.turns)
                results = [r for done in conversation.turns[read : position + 1] for r in done.tool_results]
                for texts in (_texts(r.value) for r in results):  # each result's texts, walked once
                    states.update(_spelled(text.lower()) for _, text in texts)
                    states.update(_done_stamps(texts))
                named.update(state for r in results for state in _named_states(r.value))
                read = position + 1
                findings.extend(check_turn(turn, claims, calls, earlier, kinds or set(), states, named))
            pending.extend(
                (turn, call, r) for call, r in made if r is None or not (r.effect == "read" or _failure(r))
            )
        return CheckerReport(findings)


def capability_statement(tools_offered: tuple[str, ...] | None, *, recall_hits: int = 0) -> str:
    """What the model can do this turn, to place beside its tool list. An empty tool list left unsaid reads
    to a model as "tools were not mentioned", and it fills the gap with capabilities it does not have, so
    "none" is said in so many words. Recalled memories are counted, never quoted: no stored text leaks."""
    lines = ["Before you answer, know what you can do in this turn:"]
    shown = "- Report an action as done only when a tool result in this conversation shows that it happened."
    if tools_offered is None:
        lines += [
            "- Use only the tools you were actually given, and call them rather than imagining "
            "their results.",
            shown,
        ]
    elif not tools_offered:
        lines += [
            "- You have NO tools in this turn. You cannot save, change, send, search or run anything, "
            "and you cannot open files or web pages.",
            "- Do not say or suggest that you did something: there is no way for you to do it. "
            "If the request needs a tool, tell the user plainly that you cannot do it in this turn, "
            "and what you would do with one.",
        ]
    else:
        lines += [
            "- Tools you may call (call them; never make up what they return):",
            *(f"  - {name}" for name in tools_offered),
            f"{shown} If a call failed, was refused, or was never made, say that instead.",
            "- A result that reports an error or a refusal means the action did not happen.",
        ]
    if recall_hits > 0:
        noun = "memory from this workspace is" if recall_hits == 1 else "memories from this workspace are"
        lines.append(f"- {recall_hits} relevant {noun} given above as established context.")
    return "\n".join(lines) + "\n"
