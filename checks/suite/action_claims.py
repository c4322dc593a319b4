"""Checker ``action_claims``: an answer that reports a completed action nothing performed.

A model with no tool to call will still narrate the action it was asked for ("I've saved
your favourite tea as sencha"), and the narration reads exactly like a real report. This
checker compares the answer's wording with what the transcript and the receipts show ran:

- ``unverified_action``: the answer reports an action and no tool ran in the turn;
- ``failed_action_claimed``: tools ran, but every call that could have done the action
  failed or was denied.

Precision matters more than recall here: a notice on a truthful answer teaches reviewers to
ignore notices. So a phrase counts only when it reports a *completed* action in the first
person, and refusals, offers, plans, hypotheticals and questions never count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .options import Options
from .text import APOSTROPHE, OFFER_OR_PLAN, Sentence, prepare, sentence_at, sentences
from .types import Conversation, Evidence, Finding, Receipt, Span, Turn

NAME = "action_claims"

# Past participles after "I've" / "I have": each names an action a tool would have to do.
_PERFECT_VERBS = (
    "saved",
    "stored",
    "remembered",
    "created",
    "added",
    "written",
    "updated",
    "deleted",
    "removed",
    "sent",
    "run",
    "executed",
    "scheduled",
    "booked",
    "changed",
    "modified",
    "deployed",
    "installed",
    "uploaded",
    "emailed",
    "cancelled",
    "canceled",
    "submitted",
    "restarted",
    "published",
    "posted",
    "renamed",
    "archived",
    "committed",
    "recorded",
    "logged",
    "configured",
    "set up",
)
# Simple past after "I": only verbs whose past form is unmistakably a finished act.
_PAST_VERBS = (
    "ran",
    "saved",
    "stored",
    "deleted",
    "removed",
    "sent",
    "executed",
    "scheduled",
    "booked",
    "deployed",
    "uploaded",
    "emailed",
    "submitted",
    "restarted",
)
_SUCCESS_VERBS = (
    "saved",
    "stored",
    "created",
    "added",
    "updated",
    "deleted",
    "removed",
    "sent",
    "scheduled",
    "booked",
    "deployed",
    "written",
    "uploaded",
    "submitted",
)
# "It has been saved": the first ten, whose passive reads as a report of the model's own act.
_PASSIVE_VERBS = _SUCCESS_VERBS[:10]
_ADVERBS = (
    r"(?:\s+(?:just|now|already|also|successfully|finally|since|gone\s+ahead\s+and|went\s+ahead\s+and))*"
)


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


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
_ARTIFACT_VERBS = (
    "written",
    "created",
    "added",
    "updated",
    "drafted",
    "rewritten",
    "prepared",
    "included",
    "listed",
)
_ARTIFACT_PLACE = re.compile(
    r"\b(?:below|above|the\s+following|in\s+(?:this|my)\s+(?:reply|answer|message|response))\b|:\s*$", re.I
)


@dataclass(frozen=True)
class ActionClaim:
    span: Span
    verb: str | None  # the action's past participle ("saved"), None for a bare "Done!"


def find_action_claims(answer: str) -> list[ActionClaim]:
    """Every phrase of the answer that reports a completed action, in answer order."""
    prepared = prepare(answer)
    if _REFUSAL.search(prepared):
        return []
    parts = sentences(prepared)
    claims: list[ActionClaim] = []
    taken_until = -1
    for start, end, verb in _raw_matches(prepared):
        if start < taken_until:
            continue  # overlaps a claim already kept ("I've successfully saved")
        sentence = sentence_at(parts, start)
        if sentence is None or not _reports_completion(prepared, sentence, start, end, verb):
            continue
        claims.append(ActionClaim(Span(answer[start:end], start, end), verb))
        taken_until = end
    return claims


def _raw_matches(text: str) -> list[tuple[int, int, str | None]]:
    found: list[tuple[int, int, str | None]] = []
    for pattern in _CLAIM_PATTERNS:
        for match in pattern.finditer(text):
            verb = match.groupdict().get("verb")
            found.append((match.start(), match.end(), _participle(verb) if verb else None))
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


def _could_have_acted(receipts: tuple[Receipt, ...]) -> list[Receipt]:
    """The calls that could have done the claimed action.

    Where the runtime marked some call a write, the writes and the unmarked calls are the
    candidates; where it marked none, the labels cannot tell which call acted, so all count.
    """
    if any(r.effect == "write" for r in receipts):
        return [r for r in receipts if r.effect in ("write", "unknown")]
    return list(receipts)


def _tools_ran(turn: Turn) -> bool:
    return bool(turn.tool_calls) or any(r.dispatched for r in turn.receipts)


def _actions(claims: list[ActionClaim]) -> str:
    verbs: list[str] = []
    for claim in claims:
        if claim.verb and claim.verb not in verbs:
            verbs.append(claim.verb)
    if not verbs:
        return "saved, sent or changed"
    if len(verbs) == 1:
        return verbs[0]
    return ", ".join(verbs[:-1]) + " or " + verbs[-1]


def _lead(claims: list[ActionClaim]) -> Span:
    """The claim a finding stands on: the first that names its action, else the first."""
    return next((c.span for c in claims if c.verb), claims[0].span)


def _unverified(turn: Turn, claims: list[ActionClaim]) -> Finding:
    actions = _actions(claims)
    return Finding(
        turn=turn.index,
        checker=NAME,
        code="unverified_action",
        severity="flag",
        claim=_lead(claims),
        explanation=f"No tool ran during this turn, so nothing was {actions}.",
        correction=(
            f"Note from Receipts: no tool ran during this turn, so nothing was actually {actions}. "
            "The answer describes an action that did not take place, and nothing was changed."
        ),
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


def check_turn(turn: Turn) -> list[Finding]:
    if not turn.answer.strip():
        return []
    claims = find_action_claims(turn.answer)
    if not claims:
        return []
    if not _tools_ran(turn):
        return [_unverified(turn, claims)]
    candidates = _could_have_acted(turn.receipts)
    # No receipt at all for calls that did run: nothing to judge the outcome by.
    if candidates and all(_failed(r) for r in candidates):
        return [_failed_claim(turn, claims, candidates)]
    return []


class ActionClaims:
    name = NAME

    def check(self, conversation: Conversation, options: Options) -> list[Finding]:
        findings: list[Finding] = []
        for turn in conversation.turns:
            findings.extend(check_turn(turn))
        return findings


def capability_statement(tools_offered: tuple[str, ...] | None, *, recall_hits: int = 0) -> str:
    """What the model can do this turn, to place beside its tool list.

    An empty tool list left unsaid reads to a model as "tools were not mentioned", and it
    fills the gap with capabilities it does not have; so "none" is said in so many words.
    Recalled memories are counted, never quoted, so no stored text leaks into a prompt.
    """
    lines = ["Before you answer, know what you can do in this turn:"]
    if tools_offered is None:
        lines.append(
            "- Use only the tools you were actually given, and call them rather than imagining their results."
        )
        lines.append(
            "- Report an action as done only when a tool result in this conversation shows that it happened."
        )
    elif not tools_offered:
        lines.append(
            "- You have NO tools in this turn. You cannot save, change, send, search or run anything, "
            "and you cannot open files or web pages."
        )
        lines.append(
            "- Do not say or suggest that you did something: there is no way for you to do it. "
            "If the request needs a tool, tell the user plainly that you cannot do it in this turn, "
            "and what you would do with one."
        )
    else:
        lines.append("- Tools you may call (call them; never make up what they return):")
        lines.extend(f"  - {name}" for name in tools_offered)
        lines.append(
            "- Report an action as done only when a tool result in this conversation shows that it happened. "
            "If a call failed, was refused, or was never made, say that instead."
        )
        lines.append("- A result that reports an error or a refusal means the action did not happen.")
    if recall_hits > 0:
        noun = "memory from this workspace is" if recall_hits == 1 else "memories from this workspace are"
        lines.append(f"- {recall_hits} relevant {noun} given above as established context.")
    return "\n".join(lines) + "\n"
