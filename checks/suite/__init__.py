"""The checker suite: a pure function from a conversation and options to findings.

No Django here: the suite runs the same in a worker, in a test and from the command line
(`python -m checks.suite FILE`).
"""

from __future__ import annotations

from typing import Any

from . import deadline
from .action_claims import capability_statement
from .conversation import InvalidConversation, parse
from .deadline import DeadlinePassed
from .options import Options, OptionsError, parse_options
from .outbound import Allow
from .registry import CHECKERS, checker_names
from .types import Conversation, Finding, RunContext

SUITE_VERSION = "1.0.0"

__all__ = [
    "SUITE_VERSION",
    "DeadlinePassed",
    "InvalidConversation",
    "Options",
    "OptionsError",
    "capability_statement",
    "parse",
    "parse_options",
    "run_suite",
]


def run_suite(
    data: dict[str, Any] | Conversation,
    options: dict[str, Any] | Options | None = None,
    *,
    only: set[str] | None = None,
    skip: set[str] | None = None,
    neighbours: list[dict[str, Any]] | None = None,
    tokens_left_today: int | None = None,
    judge_key: str | None = None,
    outbound_allow: Allow | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """Judge one conversation; the CONTRACT §2 output object.

    ``only``/``skip`` name checkers to run or leave out. ``neighbours`` are answers of other
    conversations that a search ranked beside this one's sampled answers, and
    ``tokens_left_today`` what the project's daily judge budget still allows; both reach
    every checker in its ``RunContext`` and are read by the entailment checker, whose
    exchanges with its judge model are reported under ``judge`` when it asked one. So are
    ``judge_key``, the project's own key for the judge its options name (the site's judge
    uses the site's key), and ``outbound_allow``, the addresses besides public ones that
    judge may reach (None: ``RECEIPTS_OUTBOUND_ALLOW`` from the environment). ``seconds``
    limits the run's time (None: no limit); the checkers observe it (``deadline``).

    Raises InvalidConversation for a payload that is not a conversation, OptionsError for
    options that cannot be used and DeadlinePassed for a run past its ``seconds``; whatever
    the checkers find is never an error.
    """
    with deadline.within(seconds):
        return _run(data, options, only, skip, neighbours, tokens_left_today, judge_key, outbound_allow)


def _run(
    data: dict[str, Any] | Conversation,
    options: dict[str, Any] | Options | None,
    only: set[str] | None,
    skip: set[str] | None,
    neighbours: list[dict[str, Any]] | None,
    tokens_left_today: int | None,
    judge_key: str | None,
    outbound_allow: Allow | None,
) -> dict[str, Any]:
    conversation = data if isinstance(data, Conversation) else parse(data)
    opts = parse_options(options)
    selected = _selected(only, skip)
    context = RunContext(
        neighbours=neighbours,
        tokens_left_today=tokens_left_today,
        judge_key=judge_key,
        outbound_allow=outbound_allow,
    )
    judge: dict[str, Any] | None = None
    findings: list[Finding] = []
    provenance: list[dict[str, Any]] = []
    # Every turn has an entry; its reading statistics stay zero unless a checker reports them.
    turns: list[dict[str, Any]] = [
        {"turn": turn.index, "candidates": 0, "unread": 0, "index_truncated": False}
        for turn in conversation.turns
    ]
    entry_of = {entry["turn"]: entry for entry in turns}
    for checker in CHECKERS:
        if checker.name not in selected:
            continue
        deadline.check()
        report = checker.check(conversation, opts, context)
        findings.extend(report.findings)
        provenance.extend(report.provenance)
        for index, fields in report.turns.items():
            if index in entry_of:
                entry_of[index].update(fields)
        if report.judge is not None:
            judge = report.judge
    out: dict[str, Any] = {
        "external_id": conversation.external_id,
        "suite_version": SUITE_VERSION,
        "findings": [finding.to_dict() for finding in _in_order(findings)],
        "provenance": provenance,
        "turns": turns,
    }
    if judge is not None:
        out["judge"] = judge
    return out


def _selected(only: set[str] | None, skip: set[str] | None) -> set[str]:
    """The names of the checkers to run; a name no checker has is refused, not ignored."""
    names = checker_names()
    for where, given in (("only", only), ("skip", skip)):
        unknown = sorted(set(given or ()) - set(names))
        if unknown:
            raise OptionsError(
                where, f"names no checker ({', '.join(unknown)}); the checkers are {', '.join(names)}"
            )
    return (set(names) if only is None else set(only)) - set(skip or ())


def _in_order(findings: list[Finding]) -> list[Finding]:
    """Turn, then place in the answer; findings with no place in the answer close their turn.

    The sort is stable, so at one place the registry's order (then each checker's) holds,
    and the same conversation always reports the same list.
    """

    def key(finding: Finding) -> tuple[int, int, int]:
        if finding.claim is None:
            return (finding.turn, 1, 0)
        return (finding.turn, 0, finding.claim.start)

    return sorted(findings, key=key)
