"""What a small hostile body costs the server: OTLP exports of empty spans, bulk JSON Lines.

    .venv/bin/python bench/input_limits.py [--spans 1000000] [--bulk-mb 50] [--flood 26000000]
        [--members 200000] [--only NAME]

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
- ``otlp-entity-refs``: one resource holding ``--flood`` empty entity references, protobuf,
  gzipped (26 million are 52 MB, about 50 kB gzipped);
- ``otlp-unknown-fields``: ``--flood`` empty fields of a number no OTLP version has, at
  the top of the export, protobuf, gzipped (as large);
- ``otlp-gzip-members``: ``--members`` empty gzip members one after another (20 bytes
  each: 4 MB for 200,000);
- ``otlp-at-limits``: a real export as large as the limits allow, to show it is taken:
  10,000 spans with every field set, 50,000 events, 200,000 attributes of 200-byte
  values (about 45 MB), protobuf, gzipped.
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

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

ROOT = Path(__file__).resolve().parent.parent
CASES = (
    "otlp-protobuf",
    "otlp-json",
    "otlp-attributes",
    "otlp-groups",
    "otlp-entity-refs",
    "otlp-unknown-fields",
    "otlp-gzip-members",
    "otlp-at-limits",
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


def export_at_limits() -> bytes:
    """10,000 spans of 15 attributes and 5 events (of one attribute each): every limit's
    default exactly, each field of a span set, each attribute value 200 bytes."""
    kv = field(1, b"gen_ai.prompt") + field(2, field(1, b"x" * 200))
    event = b"\x09" + b"\x03" * 8 + field(2, b"gen_ai.choice") + field(3, kv)  # time, name, attribute
    span = (
        field(1, b"t" * 16)  # trace_id, span_id, trace_state, parent_span_id, name
        + field(2, b"s" * 8)
        + field(3, b"k=v")
        + field(4, b"p" * 8)
        + field(5, b"chat gpt")
        + b"\x30\x03"  # kind
        + b"\x39"
        + b"\x01" * 8  # start_time_unix_nano
        + b"\x41"
        + b"\x02" * 8  # end_time_unix_nano
        + field(9, kv) * 15
        + field(11, event) * 5
        + field(15, field(2, b"ok") + b"\x18\x01")  # status
        + b"\x85\x01"
        + b"\x01" * 4  # flags
    )
    return field(1, field(2, field(1, field(1, b"bench")) + field(2, span) * 10_000))


def body_of(
    case: str, spans: int, bulk_mb: int, flood: int = 0, members: int = 0
) -> tuple[str, bytes, str, dict[str, str]]:
    gz = {"Content-Encoding": "gzip"}
    if case == "otlp-entity-refs":  # ExportTraceServiceRequest{resource_spans{resource{entity_refs…}}}
        return (
            "/v1/traces",
            gzip.compress(field(1, field(1, field(3, b"") * flood))),
            "application/x-protobuf",
            gz,
        )
    if case == "otlp-unknown-fields":  # field 2 of ExportTraceServiceRequest is no field of it
        return "/v1/traces", gzip.compress(field(2, b"") * flood), "application/x-protobuf", gz
    if case == "otlp-gzip-members":
        return "/v1/traces", gzip.compress(b"") * members, "application/x-protobuf", gz
    if case == "otlp-at-limits":
        return "/v1/traces", gzip.compress(export_at_limits()), "application/x-protobuf", gz
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


def child(case: str, spans: int, bulk_mb: int, flood: int, members: int) -> None:
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
    path, body, content_type, headers = body_of(case, spans, bulk_mb, flood, members)
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
        answer = response.json()
        errors = answer.get("errors") or [{}]
        said = (errors[0].get("message") or answer.get("detail") or "")[:100]
        if "partialSuccess" in answer:  # taken, with what gave no conversation counted
            said = f"partial success: {answer['partialSuccess'].get('rejectedSpans')} spans rejected"
    except ValueError:  # a protobuf answer
        partial = ExportTraceServiceResponse.FromString(response.content).partial_success
        said = f"partial success: {partial.rejected_spans} spans rejected" if partial.error_message else ""
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
    parser.add_argument("--flood", type=int, default=26_000_000, help="entity references or unknown fields")
    parser.add_argument("--members", type=int, default=200_000, help="empty gzip members")
    parser.add_argument("--only", choices=CASES, action="append", help="run only this case (repeatable)")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.spans, args.bulk_mb, args.flood, args.members)
        return
    sizes = f"--spans {args.spans} --bulk-mb {args.bulk_mb} --flood {args.flood} --members {args.members}"
    print(f"$ .venv/bin/python bench/input_limits.py {sizes}")
    for case in args.only or CASES:
        with tempfile.TemporaryDirectory(prefix="receipts-limits-") as var:
            command = [sys.executable, __file__, "--child", case, *sizes.split()]
            subprocess.run(command, check=False, cwd=ROOT, env={**os.environ, "RECEIPTS_VAR_DIR": var})


if __name__ == "__main__":
    main()
