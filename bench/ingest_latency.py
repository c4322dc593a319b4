"""From sending a conversation to its findings being visible, at a steady rate, with a real worker.

    .venv/bin/python bench/ingest_latency.py [--rate 50] [--seconds 60] [--worker-concurrency 2]
        [--web-workers 3] [--port 18100] [--drain 240] [--seed 13] [--database receipts_latency]
        [--redis-url redis://127.0.0.1:6379/12]
        [--admin-url postgres://postgres@127.0.0.1:5432/postgres] [--keep]

The site runs as in production (the Procfile's ``web`` and ``worker`` lines), as child
processes of this one: gunicorn from the venv with ``--web-workers`` sync workers on
``--port``, and a Celery worker for the ``celery`` queue with ``--worker-concurrency`` pool
processes, on Redis (``--redis-url``, a database of its own: it is flushed before and
after) and a scratch PostgreSQL database (``receipts_latency``, created, migrated and
dropped here). The rate limit is raised out of the way; nothing else is changed.

An open-loop sender then POSTs one new conversation (the corpus of ``ingest_throughput.py``:
2 to 4 turns, 1 or 2 tool calls a turn with 10 to 50 result rows) to
``/api/v1/conversations`` every ``1 / --rate`` seconds for ``--seconds`` seconds, each on a
thread of its own and a new connection, never waiting for earlier answers. A poller asks
PostgreSQL, in one query every ``--poll`` seconds, which of the outstanding check runs are
finished. A conversation's latency runs from the moment it was due to be sent (so a sender
that falls behind its schedule counts against the figure, not for it) until a poll sees its
run done: its findings committed, visible to the API and the pages.

Printed: p50/p95/p99 of that latency (a run never seen finished counts as infinitely late),
how many took over the goal (2 s), how many were still unfinished when sending stopped and
after ``--drain`` more seconds, the POST's own latency, the achieved send rate, the
worker's throughput (conversations and turns per second, from the runs' ``finished_at``)
and the CPU seconds the web and worker processes spent per conversation, which bound the
rate two cores can take.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO

import psycopg
import redis
from ingest_throughput import (
    ROOT,
    add_database_arguments,
    conversation,
    create_database,
    drop_database,
    setup_django,
    with_database,
)
from processes import (
    CLOCK_TICKS,
    celery_worker_argv,
    command_ticks,
    gunicorn_argv,
    machine_ticks,
    start,
    stop,
    tree_cpu_seconds,
)

GOAL_SECONDS = 2.0


@dataclass
class Sent:
    """One conversation: when it was due, sent, answered, and seen checked (perf_counter)."""

    due: float
    started: float = math.nan
    answered: float = math.nan
    run_id: int | None = None
    turns: int = 0
    error: str = ""
    seen_done: float = math.nan
    status: str = ""


@dataclass
class Poller:
    """Asks PostgreSQL, one query a poll, which outstanding runs are finished."""

    database_url: str
    interval: float
    outstanding: dict[int, Sent] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    polls: int = 0

    def add(self, item: Sent) -> None:
        with self.lock:
            if item.run_id is not None:
                self.outstanding[item.run_id] = item

    def pending(self) -> int:
        with self.lock:
            return len(self.outstanding)

    def run(self) -> None:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.stop.is_set():
                with self.lock:
                    ids = list(self.outstanding)
                if ids:
                    rows = conn.execute(
                        "SELECT id, status FROM checks_checkrun "
                        "WHERE id = ANY(%s) AND status IN ('done', 'failed')",
                        [ids],
                    ).fetchall()
                    now = time.perf_counter()
                    self.polls += 1
                    with self.lock:
                        for run_id, status in rows:
                            item = self.outstanding.pop(run_id, None)
                            if item is not None:
                                item.seen_done, item.status = now, status
                self.stop.wait(self.interval)


# --- the child processes ------------------------------------------------------------------


def own_cpu_seconds() -> float:
    """User and system CPU of this process (the sender's and the poller's threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: IO[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start; see {log.name}") from exc
            time.sleep(0.2)


# --- sending ------------------------------------------------------------------------------


def post(port: int, secret: str, body: bytes, item: Sent) -> None:
    item.started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request(
            "POST",
            "/api/v1/conversations",
            body=body,
            headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        item.answered = time.perf_counter()
        if response.status != 201:
            item.error = f"HTTP {response.status}: {payload[:200]!r}"
            return
        item.run_id = json.loads(payload)["run"]["id"]
    except Exception as exc:  # counted and shown, never fatal to the schedule
        item.answered = time.perf_counter()
        item.error = f"{type(exc).__name__}: {exc}"


def warm_up(port: int, secret: str, poller: Poller, rng: random.Random, count: int) -> None:
    """A few conversations one at a time, each checked before the next: both children work."""
    for i in range(count):
        item = Sent(due=time.perf_counter())
        post(port, secret, json.dumps(conversation(rng, f"warm-{i}")).encode(), item)
        if item.error:
            raise SystemExit(f"warm-up request failed: {item.error}")
        poller.add(item)
        deadline = time.monotonic() + 60
        while math.isnan(item.seen_done):
            if time.monotonic() > deadline:
                raise SystemExit("the worker did not finish a warm-up run within 60 s")
            time.sleep(0.05)


# --- figures ------------------------------------------------------------------------------


def quantile(samples: list[float], q: float) -> float:
    """Nearest-rank quantile; infinite samples (never finished) sort last."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fmt(seconds: float) -> str:
    return "unfinished" if math.isinf(seconds) else f"{seconds * 1000:,.0f} ms"


@dataclass(frozen=True)
class Throughput:
    runs: int
    turns: int
    span: float  # first to last finished_at, seconds
    best: float  # conversations/s over the busiest 5 s
    sending_runs: int  # finished while the sender was sending
    sending_turns: int
    draining: float  # conversations/s after sending stopped, the backlog alone


def worker_throughput(database_url: str, run_ids: list[int], window: tuple[float, float]) -> Throughput:
    """The worker's pace from its runs' finished_at; ``window`` is the sending, in Unix time."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM r.finished_at)::float8, "
            "(SELECT count(*) FROM checks_turn t WHERE t.conversation_id = r.conversation_id) "
            "FROM checks_checkrun r WHERE r.id = ANY(%s) AND r.status = 'done' ORDER BY r.finished_at",
            [run_ids],
        ).fetchall()
    times = [r[0] for r in rows]
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > 5:
            lo += 1
        best = max(best, hi - lo + 1)
    during = [r for r in rows if window[0] <= r[0] <= window[1]]
    after = [t for t in times if t > window[1]]
    return Throughput(
        runs=len(rows),
        turns=sum(r[1] for r in rows),
        span=times[-1] - times[0] if times else 0.0,
        best=best / 5,
        sending_runs=len(during),
        sending_turns=sum(r[1] for r in during),
        draining=(len(after) - 1) / (after[-1] - after[0]) if len(after) > 10 else math.nan,
    )


# --- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=50, help="conversations sent per second")
    parser.add_argument("--seconds", type=float, default=60, help="how long to send")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="Celery pool processes")
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument("--port", type=int, default=18100)
    parser.add_argument(
        "--drain", type=float, default=240, help="seconds to wait for the backlog after sending"
    )
    parser.add_argument("--poll", type=float, default=0.05, help="seconds between polls of the check runs")
    parser.add_argument(
        "--senders", type=int, default=400, help="sender threads (requests in flight at most)"
    )
    parser.add_argument("--seed", type=int, default=13)
    add_database_arguments(parser, "receipts_latency")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12", help="flushed before and after")
    parser.add_argument("--keep", action="store_true", help="keep the database, the logs and the Redis data")
    args = parser.parse_args()

    try:
        socket.create_connection(("127.0.0.1", args.port), timeout=1).close()
        raise SystemExit(f"port {args.port} is taken; pass --port")
    except OSError:
        pass

    rng = random.Random(args.seed)
    count = int(args.rate * args.seconds)
    corpus = [conversation(rng, f"lat-{i}") for i in range(count)]
    bodies = [json.dumps(c).encode() for c in corpus]
    turns = [len(c["turns"]) for c in corpus]

    database_url = with_database(args.admin_url, args.database)
    var_dir = tempfile.mkdtemp(prefix="receipts-latency-")
    web_log = open(os.path.join(var_dir, "web.log"), "wb")  # closed in finally
    worker_log = open(os.path.join(var_dir, "worker.log"), "wb")
    broker = redis.Redis.from_url(args.redis_url)
    broker.flushdb()
    create_database(args.admin_url, args.database)
    children: list[subprocess.Popen[bytes]] = []
    poller = Poller(database_url, args.poll)
    poll_thread = threading.Thread(target=poller.run, daemon=True)
    try:
        setup_django(database_url, var_dir)
        from checks.models import ApiKey, Project

        project = Project.objects.create(name="Bench", slug="bench")
        _, secret = ApiKey.issue(project=project, name="bench")
        from django.db import connections

        connections.close_all()
        os.environ["REDIS_URL"] = args.redis_url  # the children's broker and cache
        os.environ["LOG_LEVEL"] = "INFO"
        venv = ROOT / ".venv/bin"
        web = start(gunicorn_argv(venv, args.port, args.web_workers), web_log, cwd=ROOT)
        children.append(web)
        worker = start(
            celery_worker_argv(venv, args.worker_concurrency, "bench-latency@%h"), worker_log, cwd=ROOT
        )
        children.append(worker)
        wait_for_port(args.port, web, web_log, "gunicorn")
        poll_thread.start()
        warm_up(args.port, secret, poller, rng, 3 * args.web_workers)

        load_before = os.getloadavg()
        cpu_web, cpu_worker = tree_cpu_seconds(web.pid), tree_cpu_seconds(worker.pid)
        busy_before, postgres_before = machine_ticks(), command_ticks("postgres")
        cpu_self = own_cpu_seconds()
        items = [Sent(due=0.0) for _ in range(count)]
        interval = 1 / args.rate
        pending_at_end = 0

        def send(index: int) -> None:
            item = items[index]
            post(args.port, secret, bodies[index], item)
            item.turns = turns[index]
            poller.add(item)

        with ThreadPoolExecutor(max_workers=args.senders) as pool:
            t0 = time.perf_counter() + 0.5
            wall_t0 = time.time() + (t0 - time.perf_counter())
            for index, item in enumerate(items):
                item.due = t0 + index * interval
                delay = item.due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(send, index)
            end_of_sending = t0 + count * interval
            time.sleep(max(0.0, end_of_sending - time.perf_counter()))
            # Everything not yet seen checked: in flight at the server, or waiting for the worker.
            pending_at_end = sum(1 for item in items if math.isnan(item.seen_done) and not item.error)
        deadline = time.perf_counter() + args.drain
        while poller.pending() and time.perf_counter() < deadline:
            time.sleep(0.1)
        drained = time.perf_counter()
        cpu_web = tree_cpu_seconds(web.pid) - cpu_web
        cpu_worker = tree_cpu_seconds(worker.pid) - cpu_worker
        cpu_self = own_cpu_seconds() - cpu_self
        busy_after, postgres_after = machine_ticks(), command_ticks("postgres")
        load_after = os.getloadavg()
        poller.stop.set()
        poll_thread.join(5)

        ok = [item for item in items if not item.error]
        errors = [item for item in items if item.error]
        latency = [item.seen_done - item.due if not math.isnan(item.seen_done) else math.inf for item in ok]
        post_latency = [item.answered - item.started for item in ok]
        lag = [item.started - item.due for item in items]
        starts = sorted(item.started for item in items)
        send_rate = (len(starts) - 1) / (starts[-1] - starts[0]) if len(starts) > 1 else 0.0
        unfinished = sum(1 for value in latency if math.isinf(value))
        failed = sum(1 for item in ok if item.status == "failed")
        pace = worker_throughput(
            database_url,
            [item.run_id for item in ok if item.run_id is not None],
            (wall_t0, wall_t0 + count * interval),
        )
        spent = {key: busy_after[key] - busy_before[key] for key in busy_after}
        machine = (spent["processes"] + spent["interrupts"]) / max(1, spent["total"])

        mean_kb = statistics.mean(len(b) for b in bodies) / 1e3
        print(
            f"Python {sys.version.split()[0]}; {os.cpu_count()} cores; logs in {var_dir} (kept with --keep)"
        )
        print(
            f"gunicorn --workers {args.web_workers}; celery worker --concurrency {args.worker_concurrency}; "
            f"Redis {args.redis_url}; PostgreSQL {args.database}"
        )
        print(f"load before: {' '.join(f'{v:.2f}' for v in load_before)}")
        print(
            f"\nsent {count} conversations ({sum(turns)} turns, {mean_kb:.1f} kB mean) "
            f"over {args.seconds:.0f} s: offered {args.rate:g}/s, achieved {send_rate:.1f}/s; "
            f"sender lag p95 {quantile(lag, 0.95) * 1000:.0f} ms, max {max(lag) * 1000:.0f} ms"
        )
        print(
            f"    refused or failed POSTs: {len(errors)}" + (f" (first: {errors[0].error})" if errors else "")
        )
        print(
            f"    POST latency: p50 {fmt(quantile(post_latency, 0.5))}, "
            f"p95 {fmt(quantile(post_latency, 0.95))}, "
            f"p99 {fmt(quantile(post_latency, 0.99))}"
        )
        print("\ningestion to findings visible (from when each was due to be sent):")
        print(
            f"    p50 {fmt(quantile(latency, 0.5))}, p95 {fmt(quantile(latency, 0.95))}, "
            f"p99 {fmt(quantile(latency, 0.99))}, max {fmt(max(latency))}"
        )
        behind = sum(1 for value in latency if value > GOAL_SECONDS)
        print(
            f"    over {GOAL_SECONDS:g} s: {behind} of {len(ok)} ({behind / max(1, len(ok)):.0%}); "
            f"not yet checked when sending stopped: {pending_at_end}; "
            f"still unfinished {drained - end_of_sending:.0f} s later: {unfinished}; failed runs: {failed}"
        )
        p95 = quantile(latency, 0.95)
        print(f"    goal p95 < {GOAL_SECONDS:g} s: {'met' if p95 < GOAL_SECONDS else 'NOT met'}")
        print(
            f"\nworker: {pace.runs} runs, {pace.turns} turns finished over {pace.span:.1f} s "
            f"(first to last finished_at): {pace.runs / pace.span if pace.span else 0:.1f} conversations/s, "
            f"{pace.turns / pace.span if pace.span else 0:.1f} turns/s; busiest 5 s {pace.best:.1f}/s"
        )
        print(
            f"    while sending ({args.seconds:g} s, web and worker sharing the cores): "
            f"{pace.sending_runs / args.seconds:.1f} conversations/s, "
            f"{pace.sending_turns / args.seconds:.1f} turns/s; "
            "after, the backlog alone: "
            + ("no backlog" if math.isnan(pace.draining) else f"{pace.draining:.1f} conversations/s")
        )
        print(
            f"CPU per conversation: web {cpu_web / count * 1000:.0f} ms, "
            f"worker {cpu_worker / count * 1000:.0f} ms "
            f"(web {cpu_web:.0f} s, worker {cpu_worker:.0f} s over {drained - t0:.0f} s); "
            f"all cores {machine:.0%} busy; polls {poller.polls}"
        )
        # What else the cores did: this process sending and polling, PostgreSQL's backends, the
        # kernel's interrupt work (the loopback network, the disk), the rest of the processes
        # (Redis, the system), and what the hypervisor gave other guests.
        cpu_postgres = (postgres_after - postgres_before) / CLOCK_TICKS
        processes = spent["processes"] / CLOCK_TICKS
        others = processes - cpu_web - cpu_worker - cpu_self - cpu_postgres

        def each(seconds: float) -> str:
            return f"{seconds / count * 1000:.0f} ms"

        print(
            f"    beside them, a conversation: PostgreSQL {each(cpu_postgres)}, "
            f"the sender and poller {each(cpu_self)}, other processes {each(others)}, "
            f"the kernel's interrupts {each(spent['interrupts'] / CLOCK_TICKS)}; "
            f"taken by the hypervisor {each(spent['steal'] / CLOCK_TICKS)}"
        )
        print(f"load after: {' '.join(f'{v:.2f}' for v in load_after)}")
        print(
            "\nreproduce: .venv/bin/python bench/ingest_latency.py "
            f"--rate {args.rate:g} --seconds {args.seconds:g} --worker-concurrency {args.worker_concurrency} "
            f"--web-workers {args.web_workers} --port {args.port} --drain {args.drain:g} --seed {args.seed} "
            f"--redis-url {args.redis_url} --database {args.database} --admin-url {args.admin_url}"
        )
    finally:
        poller.stop.set()
        if poll_thread.is_alive():
            poll_thread.join(5)
        for child in reversed(children):
            stop(child)
        web_log.close()
        worker_log.close()
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(args.admin_url, args.database)
            broker.flushdb()
            shutil.rmtree(var_dir, ignore_errors=True)
        broker.close()


if __name__ == "__main__":
    main()
