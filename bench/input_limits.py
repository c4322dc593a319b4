"""What a small hostile body costs the server: OTLP exports of empty spans, bulk JSON Lines.

    .venv/bin/python bench/input_limits.py [--spans 1000000] [--bulk-mb 50] [--only NAME]

Each case runs in a child process of its own, on a scratch SQLite database in a temporary
var/ directory (migrated, with one project and its API key), and POSTs its body once through
Django's test client (after one small request, which loads the URLconf and the views): the
whole request path, no socket. The child prints the answer's status and the start of its
first error, the wall time of the request, and its peak RSS (``VmHWM``, reset through
/proc/self/clear_refs just before) beside the RSS just before the request; the growth is
what the body cost, the body itself included.

The cases:

- ``otlp-protobuf``: an ExportTraceServiceRequest of ``--spans`` empty spans, gzipped
  (``Content-Encoding: gzip``): two bytes a span, about 2 kB on the wire for a million;
- ``otlp-json``: the same as OTLP/JSON (``{}`` a span), gzipped;
- ``otlp-attributes``: one span holding ``--spans`` empty attributes, protobuf, gzipped;
- ``otlp-groups``: ``--spans`` empty scope groups of spans (no span at all), protobuf, gzipped;
- ``bulk-jsonl``: ``--bulk-mb`` MB of ``{}`` lines to the bulk endpoint (JSON Lines);
- ``check-saved`` and ``check-no-results``: ``POST /api/v1/check`` of one turn (a search and
  its rows) whose answer repeats ``"I've saved "`` or ``"no results "`` to a quarter, a half
  and the whole of ``RECEIPTS_MAX_ANSWER_BYTES`` (1x, 2x, 4x: the time should double with
  each), then one byte over it (a 413). The inline check's time limit is lifted for them, so
  the time shown is the checkers' own.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = (
    "otlp-protobuf",
    "otlp-json",
    "otlp-attributes",
    "otlp-groups",
    "bulk-jsonl",
    "check-saved",
    "check-no-results",
)
# The phrase each inline check case repeats.
PHRASES = {"check-saved": "I've saved ", "check-no-results": "no results "}


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def protobuf_export(spans: int, attributes: int = 0) -> bytes:
    """resource_spans { scope_spans { spans × n } }, each span empty (or with empty attributes)."""
    span = field(9, b"") * attributes  # Span.attributes, empty KeyValues
    scope_spans = field(2, span) * spans
    return field(1, field(2, scope_spans))


def json_export(spans: int) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{}] * spans}]}]}).encode()


def body_of(case: str, spans: int, bulk_mb: int) -> tuple[str, bytes, str, dict[str, str]]:
    gz = {"Content-Encoding": "gzip"}
    if case == "otlp-protobuf":
        return "/v1/traces", gzip.compress(protobuf_export(spans)), "application/x-protobuf", gz
    if case == "otlp-json":
        return "/v1/traces", gzip.compress(json_export(spans)), "application/json", gz
    if case == "otlp-attributes":
        body = gzip.compress(protobuf_export(1, attributes=spans))
        return "/v1/traces", body, "application/x-protobuf", gz
    if case == "otlp-groups":
        return "/v1/traces", gzip.compress(field(1, field(2, b"") * spans)), "application/x-protobuf", gz
    if case == "bulk-jsonl":
        return (
            "/api/v1/conversations/bulk",
            b"{}\n" * (bulk_mb * 1024 * 1024 // 3),
            "application/x-ndjson",
            {},
        )
    raise SystemExit(f"no case {case!r}")


def checked_turn(answer: str) -> dict[str, Any]:
    """One turn: a search, its rows, and the answer."""
    rows = [{"id": f"R-{i}", "title": f"row {i}"} for i in range(5)]
    return {
        "external_id": "long-answer",
        "turns": [
            {
                "messages": [
                    {"role": "user", "content": "Find the rows and save them."},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "search_rows", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"rows": rows})},
                    {"role": "assistant", "content": answer},
                ]
            }
        ],
    }


def check_bodies(case: str, limit: int) -> list[tuple[str, bytes]]:
    """The inline check case's bodies: the answer at 1x, 2x and 4x, then over the limit."""
    phrase = PHRASES[case]
    sizes = [("1x", limit // 4), ("2x", limit // 2), ("4x", limit)]
    bodies = [
        (label, json.dumps(checked_turn(phrase * (size // len(phrase)))).encode()) for label, size in sizes
    ]
    over = phrase * (limit // len(phrase)) + "x" * (limit % len(phrase) + 1)
    return bodies + [("over", json.dumps(checked_turn(over)).encode())]


def vm(name: str) -> int:
    """A line of /proc/self/status in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def child(case: str, spans: int, bulk_mb: int) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="grounding_site.settings",
        RECEIPTS_API_RATE="1000000/min",
        LOG_LEVEL="ERROR",
        DEBUG="false",
        CELERY_TASK_ALWAYS_EAGER="false",
    )
    os.environ.pop("DATABASE_URL", None)  # the scratch var/ directory's SQLite file
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from checks.models import ApiKey, Project

    call_command("migrate", verbosity=0, interactive=False)
    project = Project.objects.create(name="Bench", slug="bench")
    _, secret = ApiKey.issue(project=project, name="bench")
    client = Client()
    # The first request imports the URLconf and every view: not what the body costs.
    client.get("/api/v1/stats", headers={"Authorization": f"Bearer {secret}"})
    if case in PHRASES:
        from django.conf import settings

        settings.RECEIPTS_INLINE_CHECK_SECONDS = 0
        for label, body in check_bodies(case, settings.RECEIPTS_MAX_ANSWER_BYTES):
            post(client, secret, f"{case} {label}", "/api/v1/check", body, "application/json", {})
        return
    path, body, content_type, headers = body_of(case, spans, bulk_mb)
    post(client, secret, case, path, body, content_type, headers)


def post(
    client: Any, secret: str, case: str, path: str, body: bytes, content_type: str, headers: dict[str, str]
) -> None:
    """POSTs one body and prints its answer, time and memory."""
    from checks.models import Conversation

    Path("/proc/self/clear_refs").write_text("5")  # VmHWM starts again from VmRSS
    before = vm("VmRSS")
    started = time.perf_counter()
    response: Any = client.post(
        path, data=body, content_type=content_type, headers={"Authorization": f"Bearer {secret}", **headers}
    )
    seconds = time.perf_counter() - started
    peak = vm("VmHWM")
    try:
        errors = response.json().get("errors") or [{}]
        said = (errors[0].get("message") or response.json().get("detail") or "")[:100]
    except ValueError:
        said = f"{len(response.content)} bytes"
    print(
        f"{case:20} body {len(body):>10,} B  {response.status_code}  {seconds:7.2f} s  "
        f"peak RSS {peak / 1024:8.1f} MB (+{(peak - before) / 1024:.1f} MB)  "
        f"stored {Conversation.objects.count()}  {said}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spans", type=int, default=1_000_000, help="empty spans (or attributes) per export")
    parser.add_argument("--bulk-mb", type=int, default=50, help="megabytes of {} lines for the bulk case")
    parser.add_argument("--only", choices=CASES, action="append", help="run only this case (repeatable)")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.spans, args.bulk_mb)
        return
    print(f"$ .venv/bin/python bench/input_limits.py --spans {args.spans} --bulk-mb {args.bulk_mb}")
    for case in args.only or CASES:
        with tempfile.TemporaryDirectory(prefix="receipts-limits-") as var:
            command = [sys.executable, __file__, "--child", case, "--spans", str(args.spans)]
            command += ["--bulk-mb", str(args.bulk_mb)]
            subprocess.run(command, check=False, cwd=ROOT, env={**os.environ, "RECEIPTS_VAR_DIR": var})


if __name__ == "__main__":
    main()
