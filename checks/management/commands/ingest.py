"""`manage.py ingest --project NAME FILE…`: conversations from files and folders.

A file holds one conversation, a JSON array of them, or JSON Lines (.jsonl, .ndjson); a
folder is read for such files, recursively. Each conversation is stored or refused on its
own, as over the bulk API, and the command exits 1 when anything was refused.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import audit, ingestion
from ...projects import get_or_create_project

SUFFIXES = {".json", ".jsonl", ".ndjson"}
BATCH = 200


class Command(BaseCommand):
    help = "Ingest conversations from files and folders into a project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="FILE", help="Files or folders to read.")
        parser.add_argument(
            "--project", required=True, help="The project's name (made if it does not exist)."
        )
        parser.add_argument("--format", default="native", help="Input format of every conversation.")

    def handle(self, *args: Any, **options: Any) -> None:
        project, _ = get_or_create_project(options["project"], actor=audit.command_actor("ingest"))
        files = list(_files(options["paths"]))
        if not files:
            raise CommandError("No .json, .jsonl or .ndjson file found in the paths given.")
        items = list(_items(files))
        counts: Counter[str] = Counter()
        refused: list[str] = []
        batch: list[tuple[Any, str]] = []
        sources: list[str] = []
        done = 0
        for source, payload, body in items:
            if payload is _UNREADABLE:
                counts["invalid"] += 1
                refused.append(f"{source}: {body}")
                done += 1
                continue
            batch.append((payload, body))
            sources.append(source)
            if len(batch) == BATCH:
                done += self._flush(project, batch, sources, options["format"], counts, refused)
                self._progress(done, len(items))
        done += self._flush(project, batch, sources, options["format"], counts, refused)
        self._progress(done, len(items), final=True)

        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        self.stdout.write(
            f"{len(items)} conversations from {len(files)} files into {project.name!r}: {summary}."
        )
        for line in refused[:50]:
            self.stderr.write(f"refused {line}")
        if len(refused) > 50:
            self.stderr.write(f"… and {len(refused) - 50} more refused")
        if refused:
            raise CommandError(f"{len(refused)} conversations were refused.", returncode=1)

    def _flush(
        self,
        project: Any,
        batch: list[tuple[Any, str]],
        sources: list[str],
        format: str,
        counts: Counter[str],
        refused: list[str],
    ) -> int:
        if not batch:
            return 0
        for result in ingestion.ingest_many(project=project, items=batch, format=format):
            counts[result.status] += 1
            if result.errors:
                first = result.errors[0]
                more = f" (+{len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
                refused.append(
                    f"{sources[result.index]}: {result.status}: {first['path']}: {first['message']}{more}"
                )
        size = len(batch)
        batch.clear()
        sources.clear()
        return size

    def _progress(self, done: int, total: int, final: bool = False) -> None:
        width = 30
        filled = width * done // max(total, 1)
        line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        if sys.stderr.isatty():
            self.stderr.write(f"\r{line}", ending="\n" if final else "")
        elif final or done % (BATCH * 10) == 0:
            self.stderr.write(line)


_UNREADABLE = object()


def _files(paths: list[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            yield path
        else:
            raise CommandError(f"{raw}: no such file or folder.")


def _items(files: list[Path]) -> Iterator[tuple[str, Any, str]]:
    """(where it came from, the decoded conversation, its text) for every conversation."""
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            yield str(path), _UNREADABLE, f"cannot be read ({exc})"
            continue
        if path.suffix in (".jsonl", ".ndjson"):
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    yield from _decoded(f"{path}:{number}", line)
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield str(path), _UNREADABLE, f"not valid JSON ({exc})"
            continue
        if isinstance(data, list):
            for i, item in enumerate(data):
                yield f"{path}[{i}]", item, json.dumps(item, ensure_ascii=False)
        else:
            yield str(path), data, text


def _decoded(source: str, text: str) -> Iterator[tuple[str, Any, str]]:
    try:
        yield source, json.loads(text), text
    except (ValueError, RecursionError) as exc:
        yield source, _UNREADABLE, f"not valid JSON ({exc})"
