"""Checker ``action_claims``: an answer that reports a completed action nothing performed.

A model with no tool to call will still narrate the action it was asked for ("I've saved
your favourite tea as sencha"), and the narration reads exactly like a real report. This
checker compares the answer's wording with what the transcript and the receipts show ran:

- ``unverified_action``: the answer reports a completed change and no successful call of the
  turn (or, for "has been", of an earlier turn) could have made it;
- ``failed_action_claimed``: calls that could have made it ran, and every one failed or was
  denied.

What counts as a report: a first-person perfect or past ("I've added", "I cancelled"),
"successfully added", a passive perfect ("has been cancelled"), a state only a change brings
("is now cancelled"), a list item that opens with the act ("- Added three bags"), a counted
thing and its act ("1 checked bag added"), and "Done!". The verbs are in the tuples below.

Which call could have made it (``_able``): not one named as a read (``tool_names``: get,
search, list, find, lookup, calculate, think, …) nor one whose receipt says ``read``; one
whose name's verb can do the claim's (``_VERB_GROUPS``: "added" takes book/create/add or
update/change, "cancelled" takes cancel/delete or update, "sent" takes send/email/transfer;
an unknown verb, such as a name that starts with a noun, can do anything); and one that acts
on what the claim names: the claim's object (after an active verb, the subject of a passive
one, singular, "1 checked bag" -> bag) must share its first three letters with a word of the
tool's name or of its arguments' names (``update_reservation_baggages`` and
``total_baggages`` change bags; ``update_reservation_flights`` does not). An object counts
only when the conversation's tools deal in that kind of thing (a word of a tool name, an
argument name or a result key): "your favourite tea" is content, not a kind. A refund is what
any change pays back, so any call that changes data could have made one.

Precision matters more than recall here: a notice on a truthful answer teaches reviewers to
ignore notices. So a phrase counts only when it reports a *completed* action in the first
person, and refusals, offers, plans, hypotheticals and questions never count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from . import deadline
from .options import Options
from .text import (
    APOSTROPHE,
    OFFER_OR_PLAN,
    Sentence,
    clause_start,
    name_tokens,
    prepare,
    sentence_at,
    sentences,
    singular,
)
from .tool_names import VERB_GROUPS, is_read_named, object_words, verb_of
from .types import (
    CheckerReport,
    Conversation,
    Evidence,
    Finding,
    Receipt,
    RunContext,
    Span,
    ToolCall,
    Turn,
    members,
)

NAME = "action_claims"

# Past participles after "I've" / "I have": each names an action a tool would have to do.
_PERFECT_VERBS = tuple(
    """saved stored remembered created added written updated deleted removed sent run executed
    scheduled booked changed modified deployed installed uploaded emailed cancelled canceled
    submitted restarted published posted renamed archived committed recorded logged configured
    transferred refunded upgraded moved assigned reassigned issued placed reserved renewed extended
    replaced""".split()
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
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_HEADLINE = re.compile(
    r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\*\*[^*\n]{1,60}\*\*:?[ \t]*)?"
    rf"(?P<verb>{_alternatives(_HEADLINE_VERBS)})\b",
    re.I | re.M,
)
_CLAIM_PATTERNS = (
    re.compile(
        rf"\bI(?:{APOSTROPHE}ve|\s+have){_ADVERBS}\s+(?P<verb>{_alternatives(_PERFECT_VERBS)})\b", re.I
    ),
    # "I ran into a problem" reports no action.
    re.compile(
        rf"\bI(?:\s+(?:just|also|successfully|then|went\s+ahead\s+and))*\s+(?P<verb>{_alternatives(_PAST_VERBS)})\b"
        r"(?!\s+(?:into|out\s+of|across|short)\b)",
        re.I,
    ),
    re.compile(rf"\bsuccessfully\s+(?P<verb>{_alternatives(_SUCCESS_VERBS)})\b", re.I),
    re.compile(
        rf"\b(?:has|have)\s+(?:now\s+|just\s+)?been\s+(?:successfully\s+)?(?P<verb>{_alternatives(_PASSIVE_VERBS)})\b",
        re.I,
    ),
    # "Your reservation is now cancelled": a state only a change could have brought about.
    re.compile(r"\b(?:is|are)\s+(?:now\s+)?(?:successfully\s+)?(?P<verb>cancell?ed|booked)\b", re.I),
    _HEADLINE,
    # "1 checked bag added": a count of things, then what was done to them, closing its clause.
    re.compile(
        rf"(?<![\w-])(?:\d+|{_COUNT_WORDS})\s+(?:{_NOUNISH}\s+){{0,2}}?{_NOUNISH}\s+"
        rf"(?P<verb>{_alternatives(_HEADLINE_VERBS)})\b"
        r"(?=\s*(?:[.,;:!)(\n]|$))",
        re.I,
    ),
    # "Done!" as an exclamation of completion; "well done!" praises the user instead.
    re.compile(r"(?<![\w'])(?<!well )done!", re.I),
)

# Anywhere in the answer, these say the model could not act: an honest refusal or failure
# report, in which a claim-shaped phrase is quoted or hypothetical.
_REFUSAL = re.compile(
    rf"\bI(?:\s+(?:can{APOSTROPHE}?t|cannot|can\s+not|couldn{APOSTROPHE}?t|could\s+not|wasn{APOSTROPHE}?t\s+able|"
    rf"was\s+not\s+able|was\s+unable|failed\s+to|don{APOSTROPHE}?t\s+have\s+(?:access|the\s+ability|any\s+tools?|a\s+tool)|"
    r"do\s+not\s+have\s+(?:access|the\s+ability|any\s+tools?|a\s+tool)|have\s+no\s+(?:tools?|access|way))"
    rf"|{APOSTROPHE}m\s+(?:unable|not\s+able)|\s+am\s+(?:unable|not\s+able))\b",
    re.I,
)
# Within the claim's own sentence, these make it an offer, a plan or a hypothetical.
_INTENT = re.compile(
    rf"{OFFER_OR_PLAN}|\bI\s+(?:would|could)\b"
    r"|\bpretend|\bimagine\b|\bfor\s+example\b|\be\.g\.",
    re.I,
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
    if _REFUSAL.search(prepared):
        return []
    parts = sentences(prepared)
    claims: list[ActionClaim] = []
    taken_until = -1
    for start, end, verb in _raw_matches(prepared):
        deadline.check()
        if start < taken_until:
            continue  # overlaps a claim already kept ("I've successfully saved")
        sentence = sentence_at(parts, start)
        if sentence is None or not _reports_completion(prepared, sentence, start, end, verb):
            continue
        objects = frozenset(claim_objects(prepared, sentence, start, end)) if verb else frozenset()
        perfect = bool(re.match(r"(?:has|have)\b", prepared[start : start + 5], re.I))
        own = prepared.startswith("I", start) or "successfully" in prepared[start:end].lower()
        span = Span(answer[start:end], start, end)
        claims.append(ActionClaim(span, verb, objects, perfect, sentence.text.lower(), own))
        taken_until = end
    return claims


# Words that name no particular thing: what they stand for cannot tell one call from another.
_FUNCTION_WORDS = frozenset(
    """a an the your my our their his her its this that these those it them you me us all any each
    every some both also now just successfully already been has have is are was were be new
    following changes change request requests update updates everything detail details
    information booking trip account item items order one two three four five six seven eight
    nine ten single another more additional extra free checked""".split()
)
_OBJECT_END = re.compile(
    r"[,.;:!?()\n]|\b(?:to|from|for|with|on|in|at|into|onto|by|as|and|using|via)\b", re.I
)


_COUNTED = re.compile(rf"(?:\d+|{_COUNT_WORDS})\s", re.I)
_PASSIVE_START = re.compile(r"(?:has|have|is|are)\b", re.I)
_PASSIVE_END = re.compile(r"\b(?:was|were|been|is|are)\s*$", re.I)


def claim_objects(text: str, sentence: Sentence, start: int, end: int) -> set[str]:
    """What a claim says was acted on: the words after its verb (an active report), else the
    subject before it (a passive one), singular and without words that name nothing."""
    if _COUNTED.match(text, start):
        # "1 checked bag added": the things counted are what was acted on.
        return _content_words(text[start:end]) - {singular(w) for w in _HEADLINE_VERBS}
    before = text[clause_start(text, sentence, start) : start]
    if _PASSIVE_START.match(text, start) or _PASSIVE_END.search(before):
        return _content_words(_subject(text[sentence.start : start]))
    after = text[end : end + 80]
    cut = _OBJECT_END.search(after)
    return _content_words(after[: cut.start()] if cut else after) or _content_words(before)


_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_SUBJECT_END = re.compile(r"\b(?:from|to|for|with|on|in|at|of|under|between)\b", re.I)


def _subject(lead: str) -> str:
    """The head of the subject a passive claim follows: "Your flight" of "Your flight from New
    York (JFK) to Seattle (SEA) has been booked"."""
    lead = _BRACKETED.sub(" ", lead)
    lead = re.split(r"[,;:\u2014\u2013]|\s-\s", lead)[-1]
    cut = _SUBJECT_END.search(lead)
    return lead[: cut.start()] if cut else lead


def _content_words(chunk: str) -> set[str]:
    out = set()
    for word in re.findall(r"[A-Za-z][A-Za-z-]+", chunk):
        word = word.lower()
        if word not in _FUNCTION_WORDS and not word.endswith("ly"):
            out.add(singular(word))
    return out


def _raw_matches(text: str) -> list[tuple[int, int, str | None]]:
    found: list[tuple[int, int, str | None]] = []
    for pattern in _CLAIM_PATTERNS:
        for match in pattern.finditer(text):
            verb = match.groupdict().get("verb")
            # A list item's claim starts at its verb, not at the bullet or label before it.
            start = match.start("verb") if pattern is _HEADLINE else match.start()
            found.append((start, match.end(), _participle(verb) if verb else None))
    # Earliest first; at one position the longest phrase, so it stands for the claim.
    found.sort(key=lambda item: (item[0], -(item[1] - item[0])))
    return found


def _participle(verb: str) -> str:
    verb = re.sub(r"\s+", " ", verb.lower())
    return "run" if verb == "ran" else verb


def _reports_completion(text: str, sentence: Sentence, start: int, end: int, verb: str | None) -> bool:
    if sentence.is_question:
        return False
    lead = text[sentence.start : start]
    if _INTENT.search(sentence.text) or _CONDITION.search(lead) or _NEGATION.search(lead):
        return False
    if _EMPTY_OBJECT.match(text, end):
        return False
    if lead.rstrip().endswith(('"', "'", "\u201c")):
        return False  # quoted: someone's words, not this answer's report
    if verb in _ARTIFACT_VERBS and _ARTIFACT_PLACE.search(sentence.text):
        return False
    return True


# --- the checker --------------------------------------------------------------------------


def _failed(receipt: Receipt) -> bool:
    return not receipt.ok or receipt.outcome in ("error", "denied") or not receipt.dispatched


# Which verbs of a tool's name can do what a claim's verb reports (``VERB_GROUPS``). A tool
# whose verb is in none of the groups (``process_payment``) may do anything its object allows.
_CLAIM_VERBS = {
    **dict.fromkeys("added booked scheduled saved stored recorded".split(), ("create", "change")),
    **dict.fromkeys("removed cancelled canceled".split(), ("remove", "change")),
    **dict.fromkeys(
        "changed modified upgraded downgraded moved renewed extended replaced".split(), ("change",)
    ),
    **dict.fromkeys("placed reserved issued".split(), ("create", "change")),
    **dict.fromkeys("sent emailed".split(), ("send",)),
    "created": ("create",),
    "deleted": ("remove",),
    "updated": ("change", "create"),
    "submitted": ("send", "create"),
    "transferred": ("send", "change"),
}
_KNOWN_TOOL_VERBS = frozenset().union(*VERB_GROUPS.values())


def _fits(claim: ActionClaim, tool: str, argument_words: AbstractSet[str]) -> bool:
    """Whether a call of ``tool`` (with arguments named by ``argument_words``) could have done
    what the claim reports: its verb can do the claim's, and it acts on what the claim names.

    A refund is what a change or a cancellation pays back, so any call that changes data
    could have made one.
    """
    if is_read_named(tool):
        return False
    if claim.verb is None or claim.verb in ("refunded", "run", "executed"):
        return True
    verb = verb_of(tool)
    groups = _CLAIM_VERBS.get(claim.verb)
    if groups and verb in _KNOWN_TOOL_VERBS and not any(verb in VERB_GROUPS[g] for g in groups):
        return False
    if not claim.objects:
        return True
    names = {word[:3] for word in object_words(tool) | argument_words | {verb}}
    return any(word[:3] in names for word in claim.objects)


_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')


def _argument_words(raw: str) -> set[str]:
    """The words of a call's argument names: ``total_baggages`` says it changes bags."""
    return {singular(word) for key in _KEY.findall(raw) for word in name_tokens(key)}


# A call as ``_could`` reads it: its tool, its receipt's effect (None: no receipt), the
# words of its arguments' names, and the parts of the record its result returns (each a
# word of a member's name and the member's text in lower case).
_Shape = tuple[str, str | None, frozenset[str], frozenset[tuple[str, str]]]


def _shape(turn: Turn, call: ToolCall) -> _Shape:
    receipt = turn.receipt_of(call)
    result = turn.result_of(call)
    parts = set()
    if result is not None and not result.is_error and not is_read_named(call.tool):
        # A text the call was given (the record's id) shows nothing it changed.
        given = {text.lower() for _, text in _texts(call.parsed)}
        parts = {
            (singular(word), low)
            for key, text in _texts(result.value)
            if (low := text.lower()) not in given
            for word in name_tokens(key)
        }
    effect = receipt.effect if receipt is not None else None
    return call.tool, effect, frozenset(_argument_words(call.arguments)), frozenset(parts)


def _texts(value: object) -> list[tuple[str, str]]:
    """The short texts a JSON value's objects hold under a name: a record's states."""
    return [
        (key, item)
        for key, item in members(value)
        if isinstance(key, str) and isinstance(item, str) and 3 <= len(item) <= 60 and not item.isdigit()
    ]


def _able(
    claim: ActionClaim, calls: list[tuple[ToolCall, Receipt | None]], turn: Turn
) -> list[tuple[ToolCall, Receipt | None]]:
    """The calls of ``turn`` that could have done what ``claim`` reports."""
    return [(call, receipt) for call, receipt in calls if _could(claim, _shape(turn, call))]


def _could(claim: ActionClaim, shape: _Shape) -> bool:
    """Whether a call of this shape could have done what ``claim`` reports; a read never could.

    The call's result is the receipt of what it did: a part of the record it returns whose
    text the claim's sentence states ("the status has been updated to 'closed'") is a part
    it acted on, whatever the verb of its name.
    """
    tool, effect, argument_words, parts = shape
    if effect == "read":
        return False
    if effect == "write" and (claim.verb is None or not claim.objects):
        return True
    if any(word[:3] == part[:3] for word in claim.objects for part, text in parts if text in claim.sentence):
        return True
    return _fits(claim, tool, argument_words)


def _shapes(turn: Turn) -> set[_Shape]:
    """The shapes of the turn's calls that did not fail: what a "has been" claim of a later
    turn may rest on. Many calls share a shape, so a claim is weighed against each shape
    once rather than against every call the conversation made."""
    out: set[_Shape] = set()
    for call in turn.tool_calls:
        receipt = turn.receipt_of(call)
        if receipt is None or (receipt.effect != "read" and not _failed(receipt)):
            out.add(_shape(turn, call))
    return out


def _tools_ran(turn: Turn) -> bool:
    return bool(turn.tool_calls) or any(r.dispatched for r in turn.receipts)


def _actions(claims: list[ActionClaim]) -> str:
    verbs = list(dict.fromkeys(claim.verb for claim in claims if claim.verb))
    if not verbs:
        return "saved, sent or changed"
    if len(verbs) == 1:
        return verbs[0]
    return ", ".join(verbs[:-1]) + " or " + verbs[-1]


def _lead(claims: list[ActionClaim]) -> Span:
    """The claim a finding stands on: the first that names its action, else the first."""
    return next((c.span for c in claims if c.verb), claims[0].span)


def _unverified(
    turn: Turn, claims: list[ActionClaim], calls: Sequence[tuple[ToolCall, Receipt | None]] = ()
) -> Finding:
    """``unverified_action``: with no tool run in the turn, or with ``calls`` none of which
    could have done what the claims report."""
    actions = _actions(claims)
    if not calls:
        explanation = f"No tool ran during this turn, so nothing was {actions}."
        correction = (
            f"Note from Receipts: no tool ran during this turn, so nothing was actually {actions}. "
            "The answer describes an action that did not take place, and nothing was changed."
        )
    else:
        ran = ", ".join(dict.fromkeys(call.tool for call, _ in calls))
        named = sorted({word for claim in claims for word in claim.objects})
        what = f" ({', '.join(named)})" if named else ""
        explanation = (
            f"The answer reports something {actions}{what}, but no call of this turn could have done it: "
            f"it ran {ran}, and none of these is a change of what the answer names."
        )
        correction = (
            f"Note from Receipts: no call in this turn could have {actions} what the answer names{what}, "
            "so it was not actually done. The answer describes an action that did not take place."
        )
    return Finding(
        turn=turn.index,
        checker=NAME,
        code="unverified_action",
        severity="flag",
        claim=_lead(claims),
        explanation=explanation,
        correction=correction,
        extra={"phrases": [c.span.to_dict() for c in claims]},
    )


def _failed_claim(turn: Turn, claims: list[ActionClaim], failed: list[Receipt]) -> Finding:
    actions = _actions(claims)
    evidence = []
    for receipt in failed:
        result = turn.result_of(receipt)
        if result is None:
            evidence.append(Evidence(call_id=receipt.call_id))
        else:
            evidence.append(Evidence(call_id=receipt.call_id, path="", start=0, end=len(result.text)))
    calls = "; ".join(f"{r.tool or 'a tool'} {_outcome_word(r)}" for r in failed)
    plural = "call" if len(failed) == 1 else "calls"
    return Finding(
        turn=turn.index,
        checker=NAME,
        code="failed_action_claimed",
        severity="flag",
        claim=_lead(claims),
        evidence=tuple(evidence),
        explanation=f"The answer reports the action as done, but the {plural} able to do it failed: {calls}.",
        correction=(
            f"Note from Receipts: the tool {plural} in this turn that could have done this did not succeed "
            f"({calls}), so nothing was actually {actions}. "
            "The answer reports an outcome that did not happen."
        ),
        extra={"phrases": [c.span.to_dict() for c in claims]},
    )


def _outcome_word(receipt: Receipt) -> str:
    if not receipt.dispatched:
        return "was never dispatched"
    return "was denied" if receipt.outcome == "denied" else "failed"


def known_kinds(turns: list[Turn]) -> set[str]:
    """The kinds of thing the conversation's tools deal in: the words (first three letters)
    of their names, their arguments' names and their results' keys. A claim's object counts
    only where it is one of these ("bag" where a result has ``total_baggages``); "your
    favourite tea" is content, not a kind, and constrains no call."""
    words: set[str] = set()
    for turn in turns:
        for call in turn.tool_calls:
            words.update(name_tokens(call.tool))
            words.update(_argument_words(call.arguments))
        for result in turn.tool_results:
            words.update(w for key in _KEY.findall(result.text[:200_000]) for w in name_tokens(key))
    return {singular(word)[:3] for word in words if len(word) >= 3}


def _spelled(word: str) -> str:
    return word.replace("ll", "l")  # "cancelled" is "canceled"


def check_turn(
    turn: Turn,
    claims: list[ActionClaim],
    earlier: set[_Shape],
    kinds: set[str],
    states: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """The turn's action claims against the calls that could have made them.

    With no tool run in the turn, every claim is ``unverified_action``. Otherwise each claim
    needs a call that could have done it (``_able``): of this turn, or for "has been", of an
    earlier one. A claim no call could have done is ``unverified_action``; one whose able
    calls all failed is ``failed_action_claimed``. ``kinds`` are the conversation's
    (``known_kinds``), ``earlier`` the shapes of the earlier turns' calls (``_shapes``).

    A state read is no action claimed: a claim not told in the first person ("Status:
    closed", "the ticket is closed") whose word a result read so far holds as a record's
    text reports what that record says (``states``, spelled as ``_spelled``).
    """
    if not claims:
        return []
    if not _tools_ran(turn):
        return [_unverified(turn, claims)]
    calls = [(call, turn.receipt_of(call)) for call in turn.tool_calls]
    if not calls:
        return _by_receipts(turn, claims)
    unbacked: list[ActionClaim] = []
    failed: list[ActionClaim] = []
    failed_receipts: list[Receipt] = []
    for claim in claims:
        if not claim.own and claim.verb and _spelled(claim.verb) in states:
            continue
        claim = replace(claim, objects=frozenset(w for w in claim.objects if w[:3] in kinds))
        if claim.perfect and any(_could(claim, shape) for shape in earlier):
            continue  # an earlier call that did not fail could have done it
        able = _able(claim, calls, turn)
        if not able:
            unbacked.append(claim)
            continue
        receipts = [receipt for _, receipt in able if receipt is not None]
        if len(receipts) == len(able) and all(_failed(r) for r in receipts):
            failed.append(claim)
            failed_receipts.extend(r for r in receipts if r not in failed_receipts)
    out = []
    if unbacked:
        out.append(_unverified(turn, unbacked, calls))
    if failed:
        out.append(_failed_claim(turn, failed, failed_receipts))
    return out


def _by_receipts(turn: Turn, claims: list[ActionClaim]) -> list[Finding]:
    """Receipts with no calls in the transcript: judged by the receipts' outcomes alone."""
    candidates = _could_have_acted(turn.receipts)
    if candidates and all(_failed(r) for r in candidates):
        return [_failed_claim(turn, claims, candidates)]
    return []


def _could_have_acted(receipts: tuple[Receipt, ...]) -> list[Receipt]:
    """Where the runtime marked some call a write, the writes and the unmarked calls."""
    if any(r.effect == "write" for r in receipts):
        return [r for r in receipts if r.effect in ("write", "unknown")]
    return list(receipts)


class ActionClaims:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        findings: list[Finding] = []
        earlier: set[_Shape] = set()
        kinds: set[str] | None = None
        states: set[str] = set()
        read = 0  # the turns whose results ``states`` holds, read only once a claim asks
        for position, turn in enumerate(conversation.turns):
            deadline.check()
            claims = find_action_claims(turn.answer) if turn.answer.strip() else []
            # Read once, and only when a claim may be weighed against calls.
            if kinds is None and turn.tool_calls and claims:
                kinds = known_kinds(list(conversation.turns))
            for done in conversation.turns[read : position + 1] if claims else ():
                states.update(
                    _spelled(text.lower()) for r in done.tool_results for _, text in _texts(r.value)
                )
                read = position + 1
            findings.extend(check_turn(turn, claims, earlier, kinds or set(), states))
            earlier |= _shapes(turn)
        return CheckerReport(findings)


def capability_statement(tools_offered: tuple[str, ...] | None, *, recall_hits: int = 0) -> str:
    """What the model can do this turn, to place beside its tool list.

    An empty tool list left unsaid reads to a model as "tools were not mentioned", and it
    fills the gap with capabilities it does not have; so "none" is said in so many words.
    Recalled memories are counted, never quoted, so no stored text leaks into a prompt.
    """
    lines = ["Before you answer, know what you can do in this turn:"]
    if tools_offered is None:
        lines += [
            "- Use only the tools you were actually given, and call them rather than imagining "
            "their results.",
            "- Report an action as done only when a tool result in this conversation shows that it happened.",
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
        lines.append("- Tools you may call (call them; never make up what they return):")
        lines.extend(f"  - {name}" for name in tools_offered)
        lines += [
            "- Report an action as done only when a tool result in this conversation shows that it happened. "
            "If a call failed, was refused, or was never made, say that instead.",
            "- A result that reports an error or a refusal means the action did not happen.",
        ]
    if recall_hits > 0:
        noun = "memory from this workspace is" if recall_hits == 1 else "memories from this workspace are"
        lines.append(f"- {recall_hits} relevant {noun} given above as established context.")
    return "\n".join(lines) + "\n"
