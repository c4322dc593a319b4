"""What each finding code means, in the plain words a reviewer reads beside the code.

One table for every page and export that names a finding: the code stays the contract's
name (CONTRACT.md, "Codes"), and its title says what was found, without jargon.
"""

from __future__ import annotations

TITLES: dict[str, str] = {
    "unverified_action": "Action reported that no tool performed",
    "failed_action_claimed": "Action reported as done, but its call failed",
    "fabricated_tool_reference": "Names a tool or call that never ran",
    "count_misstatement": "Count differs from what the tool returned",
    "false_absence": "Says nothing was found, but results came back",
    "ungroundable": "Cannot be checked: the receipts are incomplete",
    "unsupported_value": "Value no tool returned and no one supplied",
    "repeated_unsupported_value": "Unsupported value repeated from an earlier answer",
    "contradicted_value": "Value contradicts the tool's record",
    "value_of_other_record": "Value belongs to another record",
    "computed_value": "Value computed from values that were read",
    "prior_turn_evidence": "Rests only on what earlier turns read",
    "unsupported_argument": "Tool argument nothing supplied",
    "empty_lookup": "Looked up a value that another tool produced, and found nothing",
    "established": "Absence backed by a complete search",
    "absence_unverified": "Absence the receipts cannot settle",
    "not_entailed": "Says more than its evidence (judge model)",
    "contradiction": "Contradicts another answer (judge model)",
    "judge_unavailable": "Judge model did not run",
    "too_many_claims": "Too many absence claims in one turn",
    "citation_unresolved": "Absence claim cites no usable read",
    "kind_mismatch": "Absence claim of an unknown kind",
    "record_incomplete": "Absence claimed while the receipts are incomplete",
    "outside_trusted_context": "Absence rests on an untrusted read",
    "cited_call_undeclared": "Absence rests on a tool not declared for it",
    "call_not_read": "Absence rests on a call that was not a successful read",
    "stale_turn": "Absence rests on an earlier turn's read",
    "contradicted_by_rows": "Absence contradicted by the rows the read returned",
    "coverage_unverified": "Absence rests on a read of unknown coverage",
    "undeclared_empty": "Absence rests on an empty list that declares nothing",
    "superseded_by_write": "Absence read before a change",
    "later_read_failed": "Absence followed by a failed read of the same search",
    "wider_search_has_rows": "A wider search found rows",
    "other_read_has_rows": "Another read of the same subject found rows",
    "search_incomplete": "Absence rests on an incomplete search",
    "about_mismatch": "Absence is about something the reads did not search",
    "evidence_kind_undetermined": "The reads establish different things",
}


def title_of(code: str) -> str:
    """The plain title of a code; an unknown code (a newer suite's) reads as itself."""
    return TITLES.get(code, code.replace("_", " ").capitalize())
