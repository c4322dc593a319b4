"""Checker ``entailment``: a separate judge model asked narrow yes/no questions.

Some misstatements carry no value to compare ("the service is healthy" over a result that says it is
down). For those, a model that is not the agent's own reads the answer beside its evidence:

- ``not_entailed`` (flag): the answer states something its turn's tool results (shown up to
  ``EVIDENCE_CLIP`` characters, the question saying when they were cut) do not;
- ``contradiction`` (flag): this answer and another that a search ranked beside it contradict each other;
- ``judge_unavailable`` (info): one finding per run, on the last turn, whenever a question went unasked
  or unanswered, whatever the cause; its ``unjudged`` lists each and why.

Turns are sampled newest first, ``sample`` per run, among those with an answer; only a turn with tool
results is asked about entailment. A reply whose first line starts with neither yes nor no is no
verdict: it is reported as not judged, never as a defect.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .judge import ENV_KEY, ENV_MODEL, ENV_URL, Judge, JudgeUnavailable, resolve, verdict_of
from .options import Options
from .types import CheckerReport, Conversation, Evidence, Finding, RunContext, Turn

NAME = "entailment"
# Characters the judge is shown of a turn's tool results, its answer, the user's message, a pair's answers.
EVIDENCE_CLIP, ANSWER_CLIP, USER_CLIP, PAIR_CLIP = 6000, 4000, 2000, 3000


@dataclass(frozen=True)
class _Question:
    turn: int
    kind: str  # entailment | contradiction
    text: str
    evidence: tuple[Evidence, ...] = ()
    other: dict[str, Any] | None = None  # the neighbour, for a contradiction

    def about(self, **fields: Any) -> dict[str, Any]:
        """An exchange or an unjudged item: which question, ``fields``, and the neighbour."""
        other = {} if self.other is None else {"other": self.other}
        return {"turn": self.turn, "kind": self.kind, **fields, **other}

    @property
    def label(self) -> str:
        """``turn 3 (entailment)``, or ``turn 3 (contradiction with conv-7#2)``."""
        other = f" with {self.other['external_id']}#{self.other['turn']}" if self.other else ""
        return f"turn {self.turn} ({self.kind}{other})"


def sampled_turns(conversation: Conversation, sample: int) -> list[int]:
    """The turns a run judges, newest first: up to ``sample`` turns that have an answer."""
    return [t.index for t in reversed(conversation.turns) if t.answer.strip()][:sample]


def entailment_question(turn: Turn) -> tuple[str, tuple[Evidence, ...]]:
    """The question about one turn, and where in its tool results the judge was shown."""
    whole = 0  # characters of the results before this one
    blocks: list[str] = []
    evidence: list[Evidence] = []
    for i, message in enumerate(turn.messages):
        if message.role == "tool":
            call = turn.answers.get(i)
            shown = message.text[: max(EVIDENCE_CLIP - whole, 0)]
            whole += len(message.text)
            blocks.append(f"[{message.tool_call_id or 'result'}: {call.tool if call else 'tool'}]\n{shown}")
            evidence.append(Evidence(call_id=message.tool_call_id, path="", start=0, end=len(shown)))
    results = "in full"
    if whole > EVIDENCE_CLIP:
        results = (
            f"the first {EVIDENCE_CLIP} of {whole} characters; the rest was not shown, so do not count "
            "against the answer what could be in the part cut off"
        )
    clipped = len(turn.answer) > ANSWER_CLIP
    answer = f" (its first {ANSWER_CLIP} characters; judge only these)" if clipped else ""
    user = next((m.text for m in turn.messages if m.role == "user"), "")[:USER_CLIP]
    shown_results = "\n\n".join(blocks)
    text = (
        "You check an assistant's answer against the tool results it had in the same turn.\n"
        "Question: does the answer state nothing that the tool results (or the user's own message) do not "
        "state? An answer that adds a fact, a figure, a name or an outcome the results do not show, or "
        "that says the opposite of them, does not. Rewording, summarising, leaving things out and "
        "repeating the user's words are fine.\n"
        "Reply with one word on the first line, yes or no, and one sentence of reason on the second "
        f"line.\n\n## The user's message\n\n{user}\n\n## The tool results ({results})\n\n"
        f"{shown_results}\n\n## The answer{answer}\n\n{turn.answer[:ANSWER_CLIP]}"
    )
    return text, tuple(evidence)


def contradiction_question(answer: str, other: str) -> str:
    return (
        "You compare two answers an assistant gave, which a search found to be about related things.\n"
        "Question: do they contradict each other, that is, does one say is so what the other says is not "
        "so, or do they give different answers to the same question? Answers about different subjects or "
        "different moments do not contradict, and neither does one that is merely more detailed than the "
        "other.\nReply with one word on the first line, yes or no, and on the second line one sentence "
        f"naming the claim they disagree on.\n\n## Answer A\n\n{answer[:PAIR_CLIP]}\n\n"
        f"## Answer B\n\n{other[:PAIR_CLIP]}"
    )


def _neighbour(item: Any, turns: int) -> dict[str, Any] | None:
    """A well-formed neighbour, else None (a caller's malformed item is ignored)."""
    if not isinstance(item, Mapping):
        return None
    good = {key: item.get(key) for key in ("external_id", "turn", "answer", "for_turn")}
    external_id, turn, answer, for_turn = good.values()
    texts = isinstance(external_id, str) and isinstance(answer, str) and answer.strip()
    numbers = type(turn) is int and type(for_turn) is int and 0 <= for_turn < turns
    return good if texts and numbers else None


def _plan(conversation: Conversation, sample: int, neighbours: Iterable[Any] | None) -> list[_Question]:
    turns = len(conversation.turns)
    wellformed = [good for item in neighbours or () if (good := _neighbour(item, turns)) is not None]
    asked: set[str] = set()  # each pair of answers is asked about once
    plan: list[_Question] = []
    for index in sampled_turns(conversation, sample):
        turn = conversation.turns[index]
        if turn.tool_results:
            plan.append(_Question(index, "entailment", *entailment_question(turn)))
        for other in (good for good in wellformed if good["for_turn"] == index):
            itself = other["external_id"] == conversation.external_id and other["turn"] == index
            pair = "\x00".join(sorted((turn.answer, other["answer"])))
            if itself or other["answer"].strip() == turn.answer.strip() or pair in asked:
                continue  # an answer, or a text, cannot contradict itself
            asked.add(pair)
            text = contradiction_question(turn.answer, other["answer"])
            where = {"external_id": other["external_id"], "turn": other["turn"]}
            plan.append(_Question(index, "contradiction", text, other=where))
    return plan


class Entailment:
    name = NAME

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        """The report's ``judge`` holds the exchanges (None when none was asked). Never raises."""
        if not conversation.turns:
            return CheckerReport()
        try:
            return _judge(conversation, options, context)
        except Exception as exc:  # the rest of the suite must still report
            reason = f"the entailment check stopped ({type(exc).__name__}: {exc})"
            return CheckerReport([_unavailable(conversation.turns[-1].index, reason, "error")])


def _judge(conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
    opts, last = options.entailment, conversation.turns[-1].index
    plan = _plan(conversation, opts.sample, context.neighbours)
    try:
        config = resolve(opts, project_key=context.judge_key, allow=context.outbound_allow)
    except ValueError as exc:  # an allow-list the operator mistyped
        return CheckerReport([_unavailable(last, str(exc), "configuration")] if plan else [])
    if config is None:
        return CheckerReport([_unavailable(last, _NO_JUDGE, "no_judge")] if plan else [])
    exchanges: list[dict[str, Any]] = []
    summary = {"model": config.model, "tokens": 0, "questions": 0, "exchanges": exchanges}
    if not plan:
        return CheckerReport(judge=summary)  # nothing to ask: no tool results, no neighbours
    if conversation.agent_model and conversation.agent_model.strip().lower() == config.model.lower():
        reason = (
            f"the judge model ({config.model}) is the model that wrote these answers, and a model cannot "
            "be its own checker; name a different model in the entailment options"
        )
        return CheckerReport([_unavailable(last, reason, "same_model")], judge=summary)
    judge, spent = Judge(config), 0
    stopped: str | None = None
    findings: list[Finding] = []
    unjudged: list[tuple[_Question, str]] = []  # each question not judged, and why
    for question in plan:
        stopped = stopped or _budget_spent(spent, opts.token_budget, context.tokens_left_today)
        if stopped is None:
            try:
                reply = judge.ask(question.text)
            except JudgeUnavailable as exc:
                stopped = exc.reason  # one failure ends the run's questions: no pile of timeouts
        if stopped is not None:
            unjudged.append((question, stopped))
            continue
        spent += reply.total_tokens
        verdict = verdict_of(reply.text)
        exchange = {"question": question.text, "raw": reply.text, "tokens": reply.total_tokens}
        exchanges.append(question.about(**exchange, verdict=verdict.said))
        if verdict.said is None:
            first = next((ln.strip() for ln in reply.text.splitlines() if ln.strip()), "")
            shown = f"{first[:80]!r}" if first else "an empty reply"
            unjudged.append((question, f"the judge's reply began with neither yes nor no ({shown})"))
        elif verdict.said == ("no" if question.kind == "entailment" else "yes"):
            common = {"model": config.model, "reason": verdict.reason} | exchange
            findings.append(_finding(question, verdict.reason, common))
    if unjudged:
        reasons = "; ".join(dict.fromkeys(reason for _, reason in unjudged))
        why = (
            f"The judge model ({config.model}) left {len(unjudged)} question(s) unanswered: {reasons}. "
            f"Not judged: {', '.join(question.label for question, _ in unjudged)}."
        )
        items = [question.about(reason=reason) for question, reason in unjudged]
        findings.append(_unavailable(last, reasons, "not_judged", why, model=config.model, unjudged=items))
    return CheckerReport(findings, judge=summary | {"tokens": spent, "questions": len(exchanges)})


def _budget_spent(spent: int, token_budget: int, tokens_left_today: int | None) -> str | None:
    if spent >= token_budget:
        return f"this run's token budget is spent ({spent} of entailment.token_budget {token_budget})"
    if tokens_left_today is not None and spent >= tokens_left_today:
        return (
            "the project's daily token budget is spent "
            f"({max(tokens_left_today, 0)} tokens were left today; entailment.daily_token_budget)"
        )
    return None


def _finding(question: _Question, reason: str, common: dict[str, Any]) -> Finding:
    """The defect a verdict finds: an answer its results do not entail, or a contradiction."""
    other = question.other or {}
    if question.kind == "entailment":
        code, extra = "not_entailed", common
        value = hashlib.sha256(question.text.encode("utf-8")).hexdigest()[:16]  # the question, in short
        beside = "the turn's tool results and said the answer states more than they show."
    else:
        code, value = "contradiction", f"{other.get('external_id')}#{other.get('turn')}"
        extra = {"other": other, "claim_at_odds": reason.split(". ")[0].strip() if reason else "", **common}
        answer = f"answer {other.get('turn')} of {other.get('external_id')}"
        beside = f"{answer}, which a search ranked next to it, and said the two contradict each other."
    because = f" Its reason: {reason}" if reason else " It gave no reason."
    why = f"A separate judge model ({common['model']}) read this answer beside {beside}{because}"
    return Finding(question.turn, NAME, code, "flag", why, None, question.evidence, value=value, extra=extra)


_NO_JUDGE = (
    "no judge model is configured, so the model-based checks did not run (whether each answer says more "
    "than its tool results, and whether answers contradict each other); to turn them on, set "
    f"{ENV_URL} and {ENV_MODEL} (and {ENV_KEY} if the judge needs a key) for the whole site, or "
    "judge_url and model in the project's entailment options"
)


def _unavailable(turn: int, reason: str, cause: str, why: str = "", **more: Any) -> Finding:
    extra = {"cause": cause, "reason": reason, **more}
    return Finding(turn, NAME, "judge_unavailable", "info", why or f"Not judged: {reason}.", extra=extra)


# --- neighbours without a search engine (the command line) ---------------------------------

_WORD = re.compile(r"[a-z0-9][a-z0-9_.:-]*[a-z0-9]|[a-z0-9]")
_STOP = frozenset(
    "the a an and or but of to in on at for with from by is are was were be been being it its this that "
    "these those i you we they he she your our their my me us them as if so not no yes do does did have "
    "has had will would can could should may might there here what which who when where how all any "
    "some than then also just only into about over under up out please thanks thank".split()
)


def terms(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP)


def neighbours_among(
    conversation: Conversation, others: Iterable[Conversation], sample: int
) -> list[dict[str, Any]]:
    """For each sampled turn, the two answers of ``others`` that share most terms with it: a stand-in for
    a full-text search when there is no database. Answers are ranked by how many distinctive words they
    share (scaled by both lengths), a pair needs at least two to be put side by side, ties keep the order."""
    pool = [
        ({"external_id": other.external_id, "turn": turn.index, "answer": turn.answer}, terms(turn.answer))
        for other in others
        if other.external_id != conversation.external_id
        for turn in other.turns
        if turn.answer.strip()
    ]
    found: list[dict[str, Any]] = []
    for index in sampled_turns(conversation, sample):
        mine = terms(conversation.turns[index].answer)
        scored = sorted(
            (-len(mine & theirs) / math.sqrt(len(mine) * len(theirs)), position)
            for position, (_, theirs) in enumerate(pool)
            if len(mine & theirs) >= 2
        )
        found += [pool[position][0] | {"for_turn": index} for _, position in scored[:2]]
    return found
