"""``python -m checks.suite FILE``: judge conversations with no database, server or network.

FILE is one conversation, a JSON array of them, or JSONL (``-`` reads standard input); one JSON object is
printed per conversation, on its own line. Exit status: 0 when the suite could judge (whatever it found),
2 when the options are invalid, 1 when FILE cannot be read. When a judge model is named, each answer's
neighbours for contradictions are the answers of the file's other conversations that share most words
with it, and the daily token budget is spent across the whole file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from . import InvalidConversation, OptionsError, parse, parse_options, run_suite
from .entailment import neighbours_among
from .judge import resolve
from .options import Options
from .types import Conversation

EXIT_OK, EXIT_UNREADABLE, EXIT_BAD_OPTIONS = 0, 1, 2


def _load_options(path: str | None) -> Options:
    try:
        raw = None if path is None else json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror}); give a readable JSON file"
    except ValueError as exc:
        problem = f"is not valid JSON ({exc}); give one JSON object of options"
    else:
        return parse_options(raw)
    raise OptionsError("--config", problem)


def items(text: str) -> list[tuple[Any, str | None]]:
    """Each item of the input as (value, problem); problem is set when it is not JSON."""
    if not (stripped := text.strip()):
        return []
    try:
        whole = json.loads(stripped)
    except ValueError as exc:
        whole_error = exc
    else:
        return [(value, None) for value in (whole if isinstance(whole, list) else [whole])]
    # Not one JSON document: read it as JSONL, one item per non-blank line.
    parsed: list[tuple[Any, str | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            if line.strip():
                parsed.append((json.loads(line), None))
        except ValueError as exc:
            parsed.append((None, f"line {number} is not JSON ({exc})"))
    if all(problem for _, problem in parsed):  # no line stands alone either: one broken document
        return [(None, f"not a JSON conversation, array or JSONL ({whole_error})")]
    return parsed


def _judge_all(entries: list[tuple[Any, str | None]], options: Options) -> Iterator[dict[str, Any]]:
    """Judge each item; when a judge is named, with its neighbours among the others and one daily budget."""
    try:
        judged = resolve(options.entailment) is not None
    except ValueError:
        judged = True  # named, but RECEIPTS_OUTBOUND_ALLOW is not readable: the suite reports why
    rows: list[tuple[Any, str | None, Conversation | None]] = []
    for value, problem in entries:
        try:
            rows.append((value, problem, parse(value) if problem is None else None))
        except InvalidConversation as exc:
            rows.append((value, str(exc), None))
    readable = [c for _, _, c in rows if c is not None]
    left = options.entailment.daily_token_budget
    for value, problem, conversation in rows:
        if conversation is None:
            external_id = value.get("external_id") if isinstance(value, dict) else None
            yield {"external_id": external_id, "error": problem}
            continue
        others = [c for c in readable if c is not conversation]
        neighbours = neighbours_among(conversation, others, options.entailment.sample) if judged else None
        result = run_suite(conversation, options, neighbours=neighbours, tokens_left_today=left)
        left -= result.get("judge", {}).get("tokens", 0)
        yield result


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    description = "Check conversations against their tool receipts and print findings as JSON lines."
    parser = argparse.ArgumentParser(prog="python -m checks.suite", description=description)
    file_help = "a conversation, a JSON array of them, or JSONL; - for stdin"
    parser.add_argument("file", metavar="FILE", help=file_help)
    parser.add_argument("--config", metavar="FILE", help="a JSON object of checker options (CONTRACT §3)")
    args = parser.parse_args(argv)
    try:
        options = _load_options(args.config)
    except OptionsError as exc:
        print(f"invalid options: {exc}", file=sys.stderr)
        return EXIT_BAD_OPTIONS
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    for result in _judge_all(items(text), options):
        print(json.dumps(result, ensure_ascii=False), file=out or sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
