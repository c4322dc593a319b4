"""How far a reviewer can trust the suite's flags on real, labelled agent traffic.

Runs the suite (default options, no judge model) over a labelled corpus, a folder holding
``conversations.jsonl`` and ``labels.jsonl``, and scores it by the rule of the corpus's
README. Each conversation is read as the API reads a payload sent with ``?format=auto``
(``read_as_sent``), so a corpus logged in another runtime's format scores as its native log:

- a flag (a finding of severity ``flag``) matches a labelled error of the same
  conversation and turn when the words of its claim text appear, in order and adjacent,
  among the words of the error's excerpt, or the excerpt's among the claim's (a claim may
  hold the excerpt only if it has at most twice its words plus three); words are the text
  lower-cased, without ``$``, commas, quotes, backticks and ``*``, split at spaces and
  brackets. A flag with no claim text matches no value. An ``unsupported_argument`` flag
  matches an ``invented_argument`` error when its explanation names the error's call id and
  argument and holds the value's words;
- precision is matched flags over all flags; false-flag turns are the checked turns with a
  flag that matches no error, over all checked turns; recall is the errors outside the
  judge's scope (and not marked unsure) that some flag matches, over all such errors. A
  conversation the suite refuses misses all its errors and counts in no other figure.

Each corpus is split by task into a development part, whose flags and misses are read while
working, and a validation part, which is only counted: a rule that lifts the development
part and not the validation part fits one agent's phrasing. The split is fixed: a
conversation's task is the first number in its ``external_id`` (``tau-airline-10-3-160`` is
task 10, ``grok-retail-7-0`` task 7); even tasks develop, odd tasks validate.

    .venv/bin/python bench/real_traffic.py             # both shared corpora, both parts
    .venv/bin/python bench/real_traffic.py -v          # and the development parts' false flags and misses
    .venv/bin/python bench/real_traffic.py --corpus DIR [--corpus DIR] --json
    .venv/bin/python bench/real_traffic.py --rewrites  # and how far rewriting notations moves the flags

``--rewrites`` runs the metamorphic harness (``tests/notation_rewrites.py``) on each part:
for each rewrite of how values are written in the answers and user messages (ISO dates as
words, dollar amounts with and without grouping and cents, "$X" as "X USD", 24-hour times
as 12-hour ones), the flags it added and removed against the original conversations. A
value written another way is the same value, so the goal is none; ``-v`` lists the
development parts' changed flags.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checks.ingest import AUTO, Unreadable, to_native  # noqa: E402
from checks.suite import InvalidConversation, run_suite  # noqa: E402
from tests.notation_rewrites import (  # noqa: E402
    REWRITES,
    FlagChanges,
    flag_changes,
    rewrite_conversation,
)

SHARED = ROOT.parent / "shared" / "corpora"
DEFAULT_CORPORA = [SHARED / "airline-dev", SHARED / "retail-dev"]
PARTS = ("development", "validation")
_TASK = re.compile(r"\d+")
_DROPPED = str.maketrans("", "", "$,\"'`*\u2018\u2019\u201c\u201d")
_SPLIT = re.compile(r"[\s()\[\]{}]+")


def words(text: str) -> list[str]:
    """The scoring rule's words of a text."""
    return [word for word in _SPLIT.split(text.lower().translate(_DROPPED)) if word]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    """Whether ``needle`` stands in ``haystack`` in order and adjacent."""
    if not needle or len(needle) > len(haystack):
        return False
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def claim_matches(claim: str, excerpt: str) -> bool:
    claim_words, excerpt_words = words(claim), words(excerpt)
    if not claim_words or not excerpt_words:
        return False
    if _contains(excerpt_words, claim_words):
        return True
    return len(claim_words) <= 2 * len(excerpt_words) + 3 and _contains(claim_words, excerpt_words)


def flag_matches(finding: dict[str, Any], error: dict[str, Any]) -> bool:
    if finding["code"] == "unsupported_argument":
        if error["kind"] != "invented_argument":
            return False
        explanation = finding.get("explanation") or ""
        return (
            error.get("call_id", "") in explanation
            and error.get("argument", "") in explanation
            and _contains(words(explanation), words(error["excerpt"]))
        )
    claim = finding.get("claim") or {}
    text = claim.get("text") or ""
    return bool(text) and claim_matches(text, error["excerpt"])


@dataclass
class Score:
    flags: int = 0
    matched_flags: int = 0
    checked_turns: int = 0
    false_flag_turns: int = 0
    conversations: int = 0
    refused: list[str] = field(default_factory=list)
    in_scope: Counter[tuple[str, str]] = field(default_factory=Counter)  # (scope, kind) -> errors
    caught: Counter[tuple[str, str]] = field(default_factory=Counter)
    false_flags: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    flags_by_code: Counter[str] = field(default_factory=Counter)
    false_by_code: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        caught, in_scope = sum(self.caught.values()), sum(self.in_scope.values())
        return {
            "conversations": self.conversations,
            "refused": len(self.refused),
            "flags": self.flags,
            "matched_flags": self.matched_flags,
            "precision": _ratio(self.matched_flags, self.flags),
            "checked_turns": self.checked_turns,
            "false_flag_turns": self.false_flag_turns,
            "false_flag_turn_rate": _ratio(self.false_flag_turns, self.checked_turns),
            "errors_in_scope": in_scope,
            "errors_caught": caught,
            "recall": _ratio(caught, in_scope),
            "flags_by_code": dict(self.flags_by_code),
            "false_flags_by_code": dict(self.false_by_code),
            "recall_by_scope_and_kind": {
                f"{scope}/{kind}": [self.caught[(scope, kind)], n]
                for (scope, kind), n in sorted(self.in_scope.items())
            },
        }


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def read_as_sent(payload: Any) -> Any:
    """A logged conversation as the API reads it with ``?format=auto``: in whichever format
    the runtime logged it (Chat Completions with a ``developer`` prompt, Anthropic's blocks,
    the Responses API, ...), converted to the native shape. One no reader understands is
    kept as sent, for the suite to refuse or read as native."""
    try:
        return to_native(payload, AUTO)
    except Unreadable:
        return payload


def load(corpus: Path) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    lines = (corpus / "conversations.jsonl").open()
    conversations = [read_as_sent(json.loads(line)) for line in lines if line.strip()]
    errors: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (corpus / "labels.jsonl").open():
        if line.strip():
            label = json.loads(line)
            if "kind" in label:
                errors[label["external_id"]].append(label)
    return conversations, errors


def part_of(external_id: str) -> str:
    """The part a conversation belongs to, by its task (the module's docstring)."""
    task = _TASK.search(external_id)
    return "validation" if task and int(task.group()) % 2 else "development"


def split(conversations: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    parts: dict[str, list[dict[str, Any]]] = {part: [] for part in PARTS}
    for conversation in conversations:
        parts[part_of(conversation["external_id"])].append(conversation)
    return parts


def counts_for_recall(error: dict[str, Any]) -> bool:
    return error["checker_scope"] != "judge" and not error.get("unsure")


def score(conversations: list[dict[str, Any]], errors: dict[str, list[dict[str, Any]]]) -> Score:
    out = Score()
    for conversation in conversations:
        external_id = conversation["external_id"]
        labelled = errors.get(external_id, [])
        for error in labelled:
            if counts_for_recall(error):
                out.in_scope[(error["checker_scope"], error["kind"])] += 1
        out.conversations += 1
        try:
            report = run_suite(conversation)
        except InvalidConversation:
            out.refused.append(external_id)
            out.missed.extend(e for e in labelled if counts_for_recall(e))
            continue
        out.checked_turns += len(report["turns"])
        caught: set[int] = set()
        false_turns: set[int] = set()
        for finding in report["findings"]:
            if finding["severity"] != "flag":
                continue
            out.flags += 1
            out.flags_by_code[finding["code"]] += 1
            hits = [
                i
                for i, error in enumerate(labelled)
                if error["turn"] == finding["turn"] and flag_matches(finding, error)
            ]
            if hits:
                out.matched_flags += 1
                caught.update(hits)
            else:
                false_turns.add(finding["turn"])
                out.false_by_code[finding["code"]] += 1
                out.false_flags.append((external_id, finding))
        out.false_flag_turns += len(false_turns)
        for i, error in enumerate(labelled):
            if not counts_for_recall(error):
                continue
            if i in caught:
                out.caught[(error["checker_scope"], error["kind"])] += 1
            else:
                out.missed.append(error)
    return out


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def counts(result: Score) -> str:
    """One part's figures by counts: right flags of flags, false-flag turns, errors caught."""
    figures = result.as_dict()
    return (
        f"{figures['matched_flags']} right of {figures['flags']} flags "
        f"({figures['flags'] - figures['matched_flags']} false, on {figures['false_flag_turns']} of "
        f"{figures['checked_turns']} turns); {figures['errors_caught']} of {figures['errors_in_scope']} "
        f"errors caught; {figures['conversations']} conversations"
        + (f", {figures['refused']} refused" if figures["refused"] else "")
    )


def report(result: Score, corpus: Path, verbose: bool) -> str:
    figures = result.as_dict()
    lines = [
        f"corpus: {corpus}",
        f"conversations: {figures['conversations']} read, {figures['refused']} refused"
        + (f" ({', '.join(result.refused)})" if result.refused else ""),
        f"precision: {_percent(figures['precision'])} "
        f"({figures['matched_flags']} of {figures['flags']} flags point at a labelled error)",
        f"false-flag turns: {_percent(figures['false_flag_turn_rate'])} ({figures['false_flag_turns']} of "
        f"{figures['checked_turns']} checked turns)",
        f"recall: {_percent(figures['recall'])} ({figures['errors_caught']} of {figures['errors_in_scope']} "
        "errors outside the judge's scope)",
        "flags by code (false / all): "
        + (
            ", ".join(
                f"{code} {result.false_by_code[code]}/{n}" for code, n in sorted(result.flags_by_code.items())
            )
            or "none"
        ),
        "recall by scope and kind:",
    ]
    for (scope, kind), n in sorted(result.in_scope.items()):
        lines.append(f"  {scope:<14} {kind:<22} {result.caught[(scope, kind)]} of {n}")
    if verbose:
        lines.append("")
        lines.append(f"false flags ({len(result.false_flags)}):")
        for external_id, finding in result.false_flags:
            claim = (finding.get("claim") or {}).get("text")
            where = f"{claim!r}" if claim else (finding.get("explanation") or "")[:160]
            lines.append(f"  {external_id} turn {finding['turn']}: {finding['code']} {where}")
        lines.append("")
        lines.append(f"missed errors ({len(result.missed)}):")
        for error in result.missed:
            lines.append(
                f"  {error['external_id']} turn {error['turn']}: {error['checker_scope']}/{error['kind']} "
                f"{error['excerpt']!r}"
            )
    return "\n".join(lines)


@dataclass
class RewriteResult:
    """What one rewrite did to one part: values rewritten, and the flags it moved."""

    values: int = 0
    answers: int = 0
    changes: FlagChanges = field(default_factory=FlagChanges)
    refused: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "values_rewritten": self.values,
            "answers_changed": self.answers,
            "flags_added": len(self.changes.added),
            "flags_removed": len(self.changes.removed),
            "refused_after_rewrite": len(self.refused),
        }

    def summary(self) -> str:
        if not self.values:
            return "no value to rewrite"
        refused = f", {len(self.refused)} refused" if self.refused else ""
        return (
            f"+{len(self.changes.added)} -{len(self.changes.removed)} flags "
            f"({_plural(self.values, 'value')} rewritten, {_plural(self.answers, 'answer')} changed{refused})"
        )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def rewrite_results(conversations: list[dict[str, Any]]) -> dict[str, RewriteResult]:
    """Each rewrite's flag changes over ``conversations`` (a conversation the suite refuses
    as it is counts in none)."""
    results = {rewrite.name: RewriteResult() for rewrite in REWRITES}
    for conversation in conversations:
        try:
            original = run_suite(conversation)
        except InvalidConversation:
            continue
        for rewrite in REWRITES:
            rewritten = rewrite_conversation(conversation, rewrite)
            result = results[rewrite.name]
            if not rewritten.values:
                continue  # the same conversation: the same flags
            result.values += rewritten.values
            result.answers += rewritten.answers_changed
            try:
                report = run_suite(rewritten.conversation)
            except InvalidConversation:
                result.refused.append(conversation["external_id"])
                continue
            result.changes += flag_changes(original, rewritten, report)
    return results


def rewrite_report(results: dict[str, dict[str, RewriteResult]], verbose: bool) -> list[str]:
    """Per rewrite, one line with each part's figures; with ``verbose``, the development
    part's changed flags."""
    lines = [f"  {'rewrite':<32} " + " | ".join(f"{part:<56}" for part in PARTS).rstrip()]
    for rewrite in REWRITES:
        lines.append(
            f"  {rewrite.name:<32} "
            + " | ".join(f"{results[part][rewrite.name].summary():<56}" for part in PARTS).rstrip()
        )
    if verbose:
        for rewrite in REWRITES:
            changes = results["development"][rewrite.name].changes
            if changes.unchanged:
                continue
            lines.append(f"  {rewrite.name} ({rewrite.description}), development part:")
            lines.extend(f"    + {flag.describe()}" for flag in changes.added)
            lines.extend(f"    - {flag.describe()}" for flag in changes.removed)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a folder with the two JSONL files (repeatable; default: both shared corpora)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list the development parts' false flags and misses"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--rewrites",
        action="store_true",
        help="also rewrite how values are written in answers and user messages, and count the flags it moves",
    )
    args = parser.parse_args(argv)
    out: dict[str, dict[str, Any]] = {}
    text: list[str] = []
    for corpus in args.corpus or DEFAULT_CORPORA:
        conversations, errors = load(corpus)
        results = {part: score(chosen, errors) for part, chosen in split(conversations).items()}
        out[corpus.name] = {part: result.as_dict() for part, result in results.items()}
        text.append(f"{corpus.name}:")
        text.extend(f"  {part:<12} {counts(result)}" for part, result in results.items())
        if args.rewrites:
            by_part = {part: rewrite_results(chosen) for part, chosen in split(conversations).items()}
            out[corpus.name]["rewrites"] = {
                rewrite.name: {part: by_part[part][rewrite.name].as_dict() for part in PARTS}
                for rewrite in REWRITES
            }
            text.append("  flags a rewrite adds (+) and removes (-), against the original conversations:")
            text.extend(rewrite_report(by_part, args.verbose))
        if args.verbose:
            text.append("")
            text.append(report(results["development"], corpus, verbose=True))
            text.append("")
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print("\n".join(text))
        options = (" --rewrites" if args.rewrites else "") + (" -v" if args.verbose else "")
        print(f"\n(.venv/bin/python bench/real_traffic.py{options})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
