"""The checkers the suite runs, in the order their findings are reported at one position.

Adding a checker is one module with a class that has a ``name`` and a ``check`` method (reading
the conversation, the options and the caller's ``RunContext``), plus one line in ``CHECKERS``;
``run_suite`` merges the reports of the selected checkers the same way for all.
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
