"""The checkers the suite runs, in the order their findings are reported at one position.

Adding a checker is one module with a class that has a ``name`` and a ``check`` method, plus
one line in ``CHECKERS``. Every checker, the entailment judge included, has the same method:

    check(conversation, options, context) -> CheckerReport

- ``conversation`` (``Conversation``) and ``options`` (``Options``) are the run's, read-only;
- ``context`` (``RunContext``) is what the caller knows beyond them: ``neighbours`` (answers
  of other conversations ranked beside this one's) and ``tokens_left_today`` (the daily
  judge budget left); a checker that needs neither ignores it;
- the ``CheckerReport`` holds the checker's ``findings`` and, when it has them, the
  ``provenance`` of values it grounded, fields for the output's per-turn entries (``turns``,
  by turn index) and its exchanges with a judge model (``judge``).

``run_suite`` calls each selected checker in this order and merges the reports the same way
for all: findings and provenance are concatenated, per-turn fields are added to each turn's
entry, and a ``judge`` report is kept.
"""

from __future__ import annotations

from typing import Protocol

from .action_claims import ActionClaims
from .arguments import ArgumentsChecker
from .entailment import Entailment
from .evidence import EvidenceChecker
from .negative_claims import NegativeClaims
from .options import Options
from .tool_receipts import ToolReceipts
from .types import CheckerReport, Conversation, RunContext


class Checker(Protocol):
    """A pure judgement of one conversation: it reads, never changes, and reports."""

    name: str

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport: ...


CHECKERS: list[Checker] = [
    ActionClaims(),
    ToolReceipts(),
    NegativeClaims(),
    EvidenceChecker(),
    ArgumentsChecker(),
    Entailment(),
]


def checker_names() -> list[str]:
    return [checker.name for checker in CHECKERS]
