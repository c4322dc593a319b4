"""The checker suite: a pure function from a conversation and options to findings.

No Django here: the suite runs the same in a worker, in a test and from the command line
(`python -m checks.suite FILE`).
"""

from __future__ import annotations

from typing import Any

from .action_claims import capability_statement
from .conversation import InvalidConversation, parse
from .entailment import Entailment
from .negative_claims import add_turn_summaries
from .options import Options, OptionsError, parse_options
from .registry import CHECKERS, checker_names
from .types import Conversation, Finding

SUITE_VERSION = "1.0.0"

__all__ = [
    "SUITE_VERSION",
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
) -> dict[str, Any]:
    """Judge one conversation; the CONTRACT §2 output object.

    ``only``/``skip`` name checkers to run or leave out. ``neighbours`` are answers of other
    conversations that a search ranked beside this one's sampled answers, and
    ``tokens_left_today`` what the project's daily judge budget still allows; both are
    read by the entailment checker, whose exchanges with its judge model are reported
    under ``judge`` when it asked one.

    Raises InvalidConversation for a payload that is not a conversation and OptionsError
    for options that cannot be used; whatever the checkers find is never an error.
    """
    conversation = data if isinstance(data, Conversation) else parse(data)
    opts = parse_options(options)
    selected = _selected(only, skip)
    judge: dict[str, Any] | None = None
    findings: list[Finding] = []
    provenance: list[dict[str, Any]] = []
    turn_stats = [
        {"turn": turn.index, "candidates": 0, "unread": 0, "index_truncated": False}
        for turn in conversation.turns
    ]
    for checker in CHECKERS:
        if checker.name not in selected:
            continue
        if isinstance(checker, Entailment):
            entailment = checker.judge(
                conversation, opts, neighbours=neighbours, tokens_left_today=tokens_left_today
            )
            findings.extend(entailment.findings)
            judge = entailment.judge
            continue
        analyse = getattr(checker, "analyse", None)
        if analyse is None:
            findings.extend(checker.check(conversation, opts))
            continue
        # A checker that also reports provenance and per-turn reading statistics.
        report = analyse(conversation, opts)
        findings.extend(report.findings)
        provenance.extend(report.provenance)
        turn_stats = report.turns
    out = {
        "external_id": conversation.external_id,
        "suite_version": SUITE_VERSION,
        "findings": [finding.to_dict() for finding in _in_order(findings)],
        "provenance": provenance,
        "turns": add_turn_summaries(turn_stats, findings, opts),
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
