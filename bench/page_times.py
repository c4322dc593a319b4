"""Server time of the reviewer's pages on the generated project, and the plans of their queries.

    .venv/bin/python bench/page_times.py [--database receipts_scale] [--repeat 30]
        [--admin-url postgres://postgres@127.0.0.1:5432/postgres] [--explain]

Needs the database ``bench/generate.py`` made (a million turns in project "scale"). Each
page is requested ``--repeat`` times (after two warm-up requests) through Django's test
client in this process, signed in as a reviewer of the project: the whole server side
(middleware, access, queries, templates), no socket. Printed per page: p50 and p95 in
milliseconds, the SQL queries it made, and the time they took.

The pages: the triage queue unfiltered and with each filter and a combination, at the
first page, 10 pages in and 2,000 pages in (keyset cursors taken from the same ordering);
a turn page whose tool result has 500 rows (the largest in the project); the
conversation page; the overview (30 days, a year, and 30 days with today's figures to count
again first, as while conversations keep arriving); the conversations list (first page, with
open flags, a text search) and the audit log. Goals (issue 10): the queue's p95 under 100 ms
at a million turns, the turn page's under 100 ms; (issue 20) the overview well under a second.

The overview reads the figures kept per day (``checks/reporting/daily.py``). ``generate.py``
writes its findings in SQL, around the app, so the first run here counts every day's figures
from the findings (``rebuild_daily_figures``, timed and printed) when the project has none.

With ``--explain``, every distinct query of every page is run again under
``EXPLAIN (ANALYZE, BUFFERS)`` and any sequential scan of a table over 10,000 rows is
printed with the query that made it.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingest_throughput import with_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup(database_url: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        RECEIPTS_VAR_DIR=tempfile.mkdtemp(prefix="receipts-pages-"),
        DJANGO_SETTINGS_MODULE="grounding_site.settings",
        LOG_LEVEL="WARNING",
        DEBUG="false",
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()


def pages(project: Any, reviewer: Any) -> list[tuple[str, str]]:
    """(name, URL) of each page measured, with the cursors and rows they need found first."""
    from datetime import timedelta

    from django.urls import reverse
    from django.utils import timezone

    from checks.models import Finding, ToolCall, Turn
    from checks.views.queue import PAGE_SIZE, _cursor

    queue = reverse("queue", args=[project.slug])
    flagged = (
        Turn.objects.filter(project=project)
        .filter(pk__in=Finding.objects.open().flags().filter(project=project).values("turn_id"))
        .order_by("-created_at", "-id")
    )

    def cursor_at(page: int) -> str:
        turn = flagged[page * PAGE_SIZE - 1 : page * PAGE_SIZE].get()
        return _cursor(turn)

    today = timezone.localdate()
    month = f"from={(today - timedelta(days=30)).isoformat()}&to={today.isoformat()}"
    biggest = (
        ToolCall.objects.filter(project=project)
        .extra(select={"size": "length(result)"})  # noqa: S610 (a constant expression)
        .order_by("-size")
        .values_list("turn_id", "turn__conversation_id")
        .first()
    )
    turn_id, conversation_id = biggest
    return [
        ("projects (home)", reverse("home")),
        ("queue: first page", queue),
        ("queue: page 10", f"{queue}?after={cursor_at(10)}"),
        ("queue: page 2,000", f"{queue}?after={cursor_at(2000)}"),
        ("queue: status all", f"{queue}?status=all&severity=all"),
        ("queue: checker evidence", f"{queue}?checker=evidence"),
        ("queue: code false_absence", f"{queue}?code=false_absence"),
        ("queue: agent billing-agent", f"{queue}?agent=billing-agent"),
        ("queue: model other-70b", f"{queue}?model=other-70b"),
        ("queue: assigned to me", f"{queue}?assignee=mine"),
        ("queue: last 30 days", f"{queue}?{month}"),
        ("queue: text search", f"{queue}?q=reference"),
        ("queue: combined", f"{queue}?checker=tool_receipts&agent=support-agent&model=example-9b&{month}"),
        ("queue: combined, page 10", None),
        ("turn: 500-row result", reverse("turn", args=[project.slug, turn_id])),
        ("conversation", reverse("conversation", args=[project.slug, conversation_id])),
        ("overview", reverse("overview", args=[project.slug])),
        (
            "overview: a year",
            f"{reverse('overview', args=[project.slug])}?since={today - timedelta(days=364)}",
        ),
        (RECOUNT, reverse("overview", args=[project.slug])),
        ("conversations: first page", reverse("conversations", args=[project.slug])),
        ("conversations: with open flags", f"{reverse('conversations', args=[project.slug])}?flags=yes"),
        ("conversations: text search", f"{reverse('conversations', args=[project.slug])}?q=reference"),
        ("audit log", reverse("audit-log", args=[project.slug])),
    ]


# The overview with today's figures marked to be counted again before each request, as a
# check run or a decision marks them while the project is in use.
RECOUNT = "overview: today counted again"


def measure(
    client: Any, url: str, repeat: int, before: Callable[[], None] = lambda: None
) -> tuple[list[float], list[dict[str, str]], bytes]:
    """``before`` runs ahead of each request, untimed."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(2):
        before()
        client.get(url)
    samples = []
    for _ in range(repeat):
        before()
        started = time.perf_counter()
        response = client.get(url)
        samples.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
    before()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    return samples, list(captured.captured_queries), response.content


def next_link(content: bytes) -> str | None:
    """The queue's own "more" link, so deep filtered pages are reached as a reviewer would."""
    match = re.search(rb"[?&]after=([0-9T_]+)", content)
    return match.group(1).decode() if match else None


def explain(queries: list[dict[str, str]]) -> list[str]:
    """Sequential scans of tables over 10,000 rows in the plans of these queries."""
    from django.db import connection

    out = []
    with connection.cursor() as cursor:
        big = {
            name
            for name, rows in cursor.execute(
                "SELECT relname, reltuples FROM pg_class WHERE relkind = 'r' AND reltuples > 10000"
            ).fetchall()
        }
        for query in {q["sql"]: q for q in queries}.values():
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            for table in sorted(big):
                if re.search(rf"Seq Scan on {table}\b", plan):
                    ms = re.search(r"Execution Time: ([\d.]+) ms", plan)
                    out.append(f"Seq Scan on {table} ({ms.group(1) if ms else '?'} ms): {sql[:300]}")
    return out


def ms(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="receipts_scale")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--only", default="", help="measure only pages whose name contains this")
    parser.add_argument("--slowest", type=int, default=0, help="print each page's N slowest queries")
    args = parser.parse_args()
    setup(with_database(args.admin_url, args.database))

    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    from checks.models import DailyFigure, Finding, Project, Turn
    from checks.models_daily import mark_days
    from checks.reporting import daily

    project = Project.objects.get(slug="scale")
    if not DailyFigure.objects.filter(project=project).exists():
        started = time.perf_counter()
        days = daily.rebuild(project)
        print(
            f"figures per day counted from the findings: {days} days in {time.perf_counter() - started:.1f} s"
        )

    def mark_today() -> None:
        mark_days(project.pk, [timezone.localdate()])

    def no_op() -> None:
        pass

    reviewer = get_user_model().objects.get(username="rev-ana")
    client = Client()
    client.force_login(reviewer)
    turns = Turn.objects.filter(project=project).count()
    findings = Finding.objects.filter(project=project).count()
    print(f"project {project.slug}: {turns:,} turns, {findings:,} findings; {args.repeat} requests per page")
    print(f"{'page':32} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'SQL ms':>8}")
    previous = None
    scans: list[str] = []
    for name, url in pages(project, reviewer):
        if url is None:  # the page after the previous one, by its own link, ten times over
            url = previous
            for _ in range(9):
                _, _, content = measure(client, url, 0)
                after = next_link(content)
                if after is None:
                    break
                url = previous.split("&after=")[0] + f"&after={after}"
        previous = url
        if args.only and args.only not in name:
            continue
        samples, queries, _ = measure(
            client, url, args.repeat, before=mark_today if name == RECOUNT else no_op
        )
        sql_ms = sum(float(q["time"]) for q in queries) * 1000
        print(
            f"{name:32} {ms(samples, 50):8.1f} {ms(samples, 95):8.1f} {len(queries):8} {sql_ms:8.1f}",
            flush=True,
        )
        for query in sorted(queries, key=lambda q: -float(q["time"]))[: args.slowest]:
            print(f"    {float(query['time']) * 1000:7.1f} ms  {query['sql'][:160]}")
        if args.explain:
            scans.extend(f"[{name}] {line}" for line in explain(queries))
    if args.explain:
        print(
            "\nSequential scans of tables over 10,000 rows:"
            if scans
            else "\nNo sequential scan of a table over 10,000 rows."
        )
        for line in scans:
            print("  " + line)
    print(f"\nReproduce: .venv/bin/python {' '.join(['bench/page_times.py', *sys.argv[1:]])}")


if __name__ == "__main__":
    main()
