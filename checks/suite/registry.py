"""The checkers the suite runs, in the order their findings are reported at one position.

Adding a checker is one module with a class that has a ``name`` and a ``check`` method, plus
one line in ``CHECKERS``.
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
from .types import Conversation, Finding


class Checker(Protocol):
    """A pure judgement of one conversation: it reads, never changes, and returns findings."""

    name: str

    def check(self, conversation: Conversation, options: Options) -> list[Finding]: ...


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
