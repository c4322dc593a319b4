"""How fast conversations go into PostgreSQL, beside a raw COPY of the same rows.

    .venv/bin/python bench/ingest_throughput.py [--conversations 2000] [--batch 200]
        [--requests 300] [--seed 11] [--admin-url postgres://postgres@127.0.0.1:5432/postgres]

(a) Bulk ingestion: the generated conversations are sent to `POST /api/v1/conversations/bulk`
in batches, through Django's test client in this process (the whole request path: auth,
JSON decoding, validation, canonical form, the writes, the answer; no socket). Its rate is
every row written per second: conversations, turns, messages, tool calls, payloads and
check runs. Then the same rows, read back out with `COPY … TO STDOUT`, are written with
`COPY … FROM STDIN` (psycopg 3 `cursor.copy`) into scratch tables made `LIKE` the real ones
(with their indexes, without foreign keys): the ceiling one round of bulk writes could
reach. The ratio of the two is printed (goal: ingestion at 25% of COPY or better).

(b) Latency of one conversation: `POST /api/v1/conversations`, one request at a time, each
a new conversation, to `manage.py runserver --noreload` (Django's threaded development
server; no other server is installed) in a child process, on a new connection each time;
p50, p95 and p99 measured at the client. The same requests through the in-process test
client are shown beside it, to separate the server's share from the app's.

Everything runs in a scratch database (`receipts_bench`, created and migrated here, dropped
at the end) with a scratch var/ directory, so the broker messages of the check runs go
nowhere and no worker runs: only ingestion is measured. Needs a PostgreSQL that the admin
URL can create databases on.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLES = [
    "checks_conversation",
    "checks_turn",
    "checks_message",
    "checks_toolcall",
    "checks_payload",
    "checks_checkrun",
]
TOOLS = {
    "search_orders": ("order", ["id", "customer", "status", "total_eur", "placed_at", "items"]),
    "list_tickets": ("ticket", ["id", "subject", "priority", "state", "opened_at", "assignee"]),
    "query_inventory": ("sku", ["sku", "warehouse", "on_hand", "reserved", "reorder_at", "updated_at"]),
}
STATES = ["open", "pending", "shipped", "closed", "on_hold"]
PEOPLE = ["Ada Ortiz", "Bo Lindqvist", "Chen Wei", "Dana Kowalski", "Eli Haddad", "Femi Adeyemi"]


# --- the corpus ---------------------------------------------------------------------------


def rows_for(rng: random.Random, tool: str, count: int) -> list[dict[str, Any]]:
    kind, _ = TOOLS[tool]
    out = []
    for i in range(count):
        day = (
            f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
            f"T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
        )
        if kind == "order":
            row = {
                "id": f"ORD-{rng.randrange(10**6):06d}",
                "customer": rng.choice(PEOPLE),
                "status": rng.choice(STATES),
                "total_eur": round(rng.uniform(5, 2500), 2),
                "placed_at": day,
                "items": rng.randint(1, 12),
            }
        elif kind == "ticket":
            row = {
                "id": f"T-{rng.randrange(10**5):05d}",
                "subject": rng.choice(["VPN drops", "Invoice wrong", "Login loop", "Slow export", "Refund"]),
                "priority": rng.choice(["low", "normal", "high", "urgent"]),
                "state": rng.choice(STATES),
                "opened_at": day,
                "assignee": rng.choice(PEOPLE),
            }
        else:
            row = {
                "sku": f"SKU-{rng.randrange(10**6):06d}",
                "warehouse": rng.choice(["AMS-1", "FRA-2", "WAW-1", "LIS-3"]),
                "on_hand": rng.randint(0, 5000),
                "reserved": rng.randint(0, 300),
                "reorder_at": rng.randint(10, 400),
                "updated_at": day,
            }
        row["row"] = i
        out.append(row)
    return out


def turn(rng: random.Random, index: int) -> dict[str, Any]:
    calls = rng.randint(1, 2)
    offered = list(TOOLS)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": rng.choice(["How many", "List the", "Which"]) + " open items this week?"}
    ]
    tool_calls, results, receipts, counts = [], [], [], []
    for c in range(calls):
        tool = rng.choice(offered)
        call_id = f"call-{index}-{c}"
        rows = rows_for(rng, tool, rng.randint(10, 50))
        counts.append((tool, len(rows), rows))
        tool_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps({"state": "open", "limit": 50})},
            }
        )
        results.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(rows)})
        receipts.append(
            {"call_id": call_id, "tool": tool, "ok": True, "result_count": len(rows), "effect": "read"}
        )
    messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
    messages.extend(results)
    tool, count, rows = counts[0]
    said = count if rng.random() < 0.8 else count + rng.randint(1, 9)  # some answers misstate the count
    first = rows[0]
    named = first.get("id") or first.get("sku")
    messages.append(
        {
            "role": "assistant",
            "content": f"The {tool} tool returned {said} results. The first is {named}, "
            f"and {sum(1 for r in rows if r.get('status', r.get('state')) == 'open')} of them are open.",
        }
    )
    return {"tools_offered": offered, "messages": messages, "receipts": receipts}


def conversation(rng: random.Random, external_id: str) -> dict[str, Any]:
    return {
        "external_id": external_id,
        "title": f"Support session {external_id}",
        "agent": {"name": "support-agent", "model": "example-9b"},
        "metadata": {"channel": rng.choice(["web", "email", "chat"]), "tenant": f"t-{rng.randrange(50)}"},
        "turns": [turn(rng, i) for i in range(rng.randint(2, 4))],
    }


# --- the scratch database -----------------------------------------------------------------


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def create_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def setup_django(database_url: str, var_dir: str, server_side_binding: bool = False) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        RECEIPTS_VAR_DIR=var_dir,
        DJANGO_SETTINGS_MODULE="grounding_site.settings",
        RECEIPTS_API_RATE="1000000/min",
        LOG_LEVEL="WARNING",
        DEBUG="false",
    )
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0, interactive=False)
    if server_side_binding:
        # An experiment for this process only, from the next connection on: psycopg sends
        # parameters apart from the SQL instead of quoting them into it (settings.py does
        # not set this; migrations run as settings.py has it).
        connections["default"].close()
        connections["default"].settings_dict.setdefault("OPTIONS", {})["server_side_binding"] = True


def count_rows(cursor: Any) -> dict[str, int]:
    return {table: cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


# --- (a) bulk ingestion beside COPY -------------------------------------------------------


def bulk_ingest(corpus: list[dict[str, Any]], batch: int, secret: str) -> tuple[float, int]:
    from django.db import connection
    from django.test import Client

    client = Client()
    bodies = [json.dumps(corpus[i : i + batch]) for i in range(0, len(corpus), batch)]
    with connection.cursor() as cursor:
        before = count_rows(cursor.cursor)
    started = time.perf_counter()
    for body in bodies:
        response = client.post(
            "/api/v1/conversations/bulk",
            data=body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}"},
        )
        counts = response.json().get("counts") if response.status_code == 207 else None
        if counts != {"created": len(json.loads(body))}:
            raise SystemExit(f"bulk request answered {response.status_code}: {response.content[:500]!r}")
    elapsed = time.perf_counter() - started
    with connection.cursor() as cursor:
        after = count_rows(cursor.cursor)
    return elapsed, sum(after[t] - before[t] for t in TABLES)


def copy_same_rows(database_url: str) -> tuple[float, int, int]:
    """Writes every row of the six tables again with COPY into LIKE-made scratch tables."""
    with psycopg.connect(database_url) as conn, conn.cursor() as cursor:
        dumps: dict[str, bytes] = {}
        for table in TABLES:
            buffer = io.BytesIO()
            with cursor.copy(f"COPY {table} TO STDOUT") as copy:
                for chunk in copy:
                    buffer.write(chunk)
            dumps[table] = buffer.getvalue()
            cursor.execute(f"DROP TABLE IF EXISTS bench_copy_{table}")
            cursor.execute(f"CREATE TABLE bench_copy_{table} (LIKE {table} INCLUDING ALL)")
        conn.commit()
        started = time.perf_counter()
        for table in TABLES:
            with cursor.copy(f"COPY bench_copy_{table} FROM STDIN") as copy:
                data = dumps[table]
                for start in range(0, len(data), 1 << 20):
                    copy.write(data[start : start + (1 << 20)])
        conn.commit()
        elapsed = time.perf_counter() - started
        copied = sum(
            cursor.execute(f"SELECT count(*) FROM bench_copy_{table}").fetchone()[0] for table in TABLES
        )
        for table in TABLES:
            cursor.execute(f"DROP TABLE bench_copy_{table}")
        conn.commit()
    return elapsed, copied, sum(len(d) for d in dumps.values())


# --- (b) one conversation at a time -------------------------------------------------------


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": cuts[49] * 1000, "p95": cuts[94] * 1000, "p99": cuts[98] * 1000, "n": len(ordered)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def latency_runserver(bodies: list[bytes], warmup: list[bytes], secret: str) -> dict[str, float]:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError as exc:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(
                        f"runserver did not start:\n{log.read().decode(errors='replace')}"
                    ) from exc
                time.sleep(0.2)
        headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}

        def send(body: bytes) -> float:
            started = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/api/v1/conversations", body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            conn.close()
            elapsed = time.perf_counter() - started
            if response.status != 201:
                log.seek(0)
                tail = log.read().decode(errors="replace")[-3000:]
                raise SystemExit(f"runserver answered {response.status}: {payload[:300]!r}\n{tail}")
            return elapsed

        for body in warmup:
            send(body)
        return percentiles([send(body) for body in bodies])
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)


def latency_in_process(bodies: list[bytes], warmup: list[bytes], secret: str) -> dict[str, float]:
    from django.test import Client

    client = Client()

    def send(body: bytes) -> float:
        started = time.perf_counter()
        response = client.post(
            "/api/v1/conversations",
            data=body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}"},
        )
        elapsed = time.perf_counter() - started
        if response.status_code != 201:
            raise SystemExit(f"in-process answered {response.status_code}: {response.content[:300]!r}")
        return elapsed

    for body in warmup:
        send(body)
    return percentiles([send(body) for body in bodies])


# --- main ---------------------------------------------------------------------------------


def add_database_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The scratch database every benchmark makes: where to make it, and its name."""
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("BENCH_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL URL allowed to create and drop the scratch database",
    )
    parser.add_argument("--database", default=name, help="the scratch database's name")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000, help="for the bulk measure")
    parser.add_argument("--batch", type=int, default=200, help="conversations per bulk request")
    parser.add_argument("--requests", type=int, default=300, help="single POSTs per latency measure")
    parser.add_argument("--seed", type=int, default=11)
    add_database_arguments(parser, "receipts_bench")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database afterwards")
    parser.add_argument(
        "--server-side-binding",
        action="store_true",
        help="experiment: psycopg server-side parameter binding in this process (bulk and in-process "
        "figures only; the runserver child keeps the settings as they are)",
    )
    args = parser.parse_args()

    rng = random.Random(args.seed)
    corpus = [conversation(rng, f"bulk-{i}") for i in range(args.conversations)]
    warmup = [json.dumps(conversation(rng, f"warm-{i}")).encode() for i in range(20)]
    singles = [json.dumps(conversation(rng, f"one-{i}")).encode() for i in range(args.requests)]
    inproc_warmup = [json.dumps(conversation(rng, f"warm-ip-{i}")).encode() for i in range(20)]
    inproc = [json.dumps(conversation(rng, f"ip-{i}")).encode() for i in range(args.requests)]
    n_turns = sum(len(c["turns"]) for c in corpus)
    size = sum(len(json.dumps(c)) for c in corpus)
    mean_single = statistics.mean(len(b) for b in singles)

    database_url = with_database(args.admin_url, args.database)
    var_dir = tempfile.mkdtemp(prefix="receipts-bench-")
    create_database(args.admin_url, args.database)
    try:
        setup_django(database_url, var_dir, args.server_side_binding)
        from checks.models import ApiKey, Project

        project = Project.objects.create(name="Bench", slug="bench")
        _, secret = ApiKey.issue(project=project, name="bench")

        with psycopg.connect(database_url) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
        binding = "server-side" if args.server_side_binding else "client-side (as settings.py has it)"
        print(f"PostgreSQL {version}; Python {sys.version.split()[0]}; {os.cpu_count()} cores")
        print(f"parameter binding: {binding}")
        print(
            f"corpus: {len(corpus)} conversations, {n_turns} turns, {size / 1e6:.1f} MB of JSON "
            f"(2-4 turns, 1-2 tool calls a turn, 10-50 result rows a call)"
        )

        elapsed, rows = bulk_ingest(corpus, args.batch, secret)
        ingest_rate = rows / elapsed
        copy_elapsed, copied, copy_bytes = copy_same_rows(database_url)
        copy_rate = copied / copy_elapsed
        ratio = ingest_rate / copy_rate
        print("\n(a) bulk ingestion, POST /api/v1/conversations/bulk (in-process test client)")
        print(
            f"    {rows} rows in {elapsed:.2f}s: {ingest_rate:,.0f} rows/s, "
            f"{len(corpus) / elapsed:,.0f} conversations/s ({args.batch} per request)"
        )
        print(
            f"    COPY of the same {copied} rows ({copy_bytes / 1e6:.1f} MB) in {copy_elapsed:.2f}s: "
            f"{copy_rate:,.0f} rows/s"
        )
        print(f"    ratio: {ratio:.1%} of COPY (goal >= 25%: {'met' if ratio >= 0.25 else 'NOT met'})")

        server = latency_runserver(singles, warmup, secret)
        local = latency_in_process(inproc, inproc_warmup, secret)
        print(f"\n(b) one conversation, POST /api/v1/conversations ({mean_single / 1e3:.1f} kB mean body)")
        for name, figures in (
            ("manage.py runserver --noreload, new connection per request", server),
            ("in-process test client (no server, no socket)", local),
        ):
            print(
                f"    {name}: n={figures['n']:.0f}  p50 {figures['p50']:.1f} ms  "
                f"p95 {figures['p95']:.1f} ms  p99 {figures['p99']:.1f} ms"
            )
        print(f"    goal p95 < 50 ms through the server: {'met' if server['p95'] < 50 else 'NOT met'}")
        print(
            "\nreproduce: .venv/bin/python bench/ingest_throughput.py "
            f"--conversations {args.conversations} --batch {args.batch} --requests {args.requests} "
            f"--seed {args.seed} --admin-url {args.admin_url}"
            + (" --server-side-binding" if args.server_side_binding else "")
        )
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(args.admin_url, args.database)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
