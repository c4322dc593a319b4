"""The checker suite: a pure function from a conversation and options to findings.

No Django here: the suite runs the same in a worker, in a test and on the command line (`__main__`).

One defect, one flag: a value ``evidence`` finds unsupported inside words another checker
flags (a count that a receipt contradicts, within "the search returned 5 bins") is that
checker's finding, which says what is wrong more exactly; it is not flagged twice.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
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
UNSUPPORTED = "unsupported_value"

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
    """Judge one conversation into the CONTRACT §2 output object; raises InvalidConversation, OptionsError
    or DeadlinePassed (a finding is never an error). ``only``/``skip`` name checkers to run or leave out,
    ``seconds`` limits the run's time (None: no limit) as the checkers observe it (``deadline``), and the
    other keywords reach every checker as its ``RunContext``."""
    with deadline.within(seconds):
        conversation = data if isinstance(data, Conversation) else parse(data)
        opts = parse_options(options)
        selected = _selected(only, skip)
        context = RunContext(neighbours, tokens_left_today, judge_key, outbound_allow)
        findings: list[Finding] = []
        provenance: list[dict[str, Any]] = []
        # Every turn has an entry; its reading statistics stay zero unless a checker reports them.
        reading = {"candidates": 0, "unread": 0, "index_truncated": False}
        turns = {t.index: {"turn": t.index} | reading for t in conversation.turns}
        judge: dict[str, Any] | None = None
        for checker in (checker for checker in CHECKERS if checker.name in selected):
            deadline.check()
            report = checker.check(conversation, opts, context)
            findings.extend(report.findings)
            provenance.extend(report.provenance)
            for index, fields in report.turns.items():
                if index in turns:
                    turns[index].update(fields)
            judge = report.judge if report.judge is not None else judge
        # Turn, then place in the answer; findings with no place close their turn. The sort is
        # stable: at one place the registry's order (then each checker's) holds.
        findings.sort(key=lambda f: (f.turn, 0, f.claim.start) if f.claim else (f.turn, 1, 0))
        findings = _one_flag_per_defect(findings)
        out = {
            "external_id": conversation.external_id,
            "suite_version": SUITE_VERSION,
            "findings": [f.to_dict() for f in findings],
            "provenance": provenance,
            "turns": list(turns.values()),
        }
        return out if judge is None else out | {"judge": judge}


def _selected(only: set[str] | None, skip: set[str] | None) -> set[str]:
    """The names of the checkers to run; a name no checker has is refused, not ignored."""
    names = checker_names()
    for where, given in (("only", only), ("skip", skip)):
        if unknown := sorted(set(given or ()) - set(names)):
            listed = f"names no checker ({', '.join(unknown)}); the checkers are {', '.join(names)}"
            raise OptionsError(where, listed)
    return (set(names) if only is None else set(only)) - set(skip or ())


def _one_flag_per_defect(findings: list[Finding]) -> list[Finding]:
    """The findings without an unsupported value that lies within another checker's flag.

    Each turn's covering flags are sorted by where they start, with the furthest end reached
    so far: whether one covers a value is one binary search, however many flags a turn has."""
    reporters = {f.checker for f in findings if f.code == UNSUPPORTED and f.claim}
    spans: dict[int, list[tuple[int, int]]] = {}
    for f in findings:
        if f.severity == "flag" and f.claim and f.checker not in reporters:
            spans.setdefault(f.turn, []).append((f.claim.start, f.claim.end))
    covers: dict[int, tuple[list[int], list[int]]] = {}
    for turn, found in spans.items():
        found.sort()
        covers[turn] = ([start for start, _ in found], list(accumulate((end for _, end in found), max)))

    def repeated(f: Finding) -> bool:
        if f.code != UNSUPPORTED or f.claim is None or f.turn not in covers:
            return False
        starts, reach = covers[f.turn]
        last = bisect_right(starts, f.claim.start) - 1
        return last >= 0 and reach[last] >= f.claim.end

    return [f for f in findings if not repeated(f)]
