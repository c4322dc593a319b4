"""Memory of a check worker over many turns: does its RSS stay flat as the count grows?

    .venv/bin/python bench/worker_memory.py [--turns 100000] [--samples 20] [--pool prefork]
        [--batch 100] [--seed 5] [--database receipts_memory]
        [--admin-url postgres://postgres@127.0.0.1:5432/postgres] [--keep]

A scratch PostgreSQL database (``receipts_memory``) is created and migrated, and a real
Celery worker (``celery -A grounding_site worker --queues celery --concurrency 1``, the
Procfile's worker with one child) is started on it as a child process, on a file broker in
a scratch var/ directory. This process then stores conversations of the corpus of
``ingest_throughput.py`` (2 to 4 turns each) until they total ``--turns`` turns, through
``ingestion.ingest_many`` in transactions of ``--batch`` (the bulk endpoint's service, without
HTTP); each commit sends its check runs to the file broker, and the worker checks them while
the rest is being stored, so the full 100,000 turns take about as long as the slower of the
two, not their sum.

A sampler thread counts the turns of finished check runs (one query per poll) and, each time
another ``--turns / --samples`` turns are checked, reads ``VmRSS`` and ``VmHWM`` from
``/proc/PID/status`` of the worker's pool child (the process that runs the suite; never
recycled, as settings.py sets no max-tasks-per-child) and of its main process. Printed: the
table of turns checked against RSS, and the growth from the sample at 10% of the turns to
the last one, with the slope of RSS over the second half in kB per 1,000 turns: flat means
neither grows beyond allocator noise. ``--pool solo`` runs the suite in the main process.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

import psycopg
from ingest_throughput import (
    ROOT,
    add_database_arguments,
    conversation,
    create_database,
    drop_database,
    setup_django,
    with_database,
)
from processes import celery_worker_argv, children, memory_kib, start, stop

# --- the worker's memory ------------------------------------------------------------------


@dataclass
class Sample:
    turns: int
    runs: int
    seconds: float
    child_pid: int
    child_rss: int
    child_hwm: int
    main_rss: int


@dataclass
class Sampler:
    """Polls finished check runs and samples the worker's memory every ``step`` turns."""

    database_url: str
    worker: subprocess.Popen[bytes]
    pool: str
    step: int
    turns_of: dict[int, int] = field(default_factory=dict)  # conversation id -> turns
    samples: list[Sample] = field(default_factory=list)
    checked_turns: int = 0
    checked_runs: int = 0
    failed_runs: int = 0
    unknown: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    first_finish: float | None = None
    last_finish: float | None = None

    def suite_process(self) -> int:
        if self.pool == "solo":
            return self.worker.pid
        kids = children(self.worker.pid)
        return kids[0] if kids else self.worker.pid

    def sample(self) -> Sample:
        pid = self.suite_process()
        child, main = memory_kib(pid), memory_kib(self.worker.pid)
        return Sample(
            turns=self.checked_turns,
            runs=self.checked_runs,
            seconds=time.monotonic() - self.started,
            child_pid=pid,
            child_rss=child.get("VmRSS", 0),
            child_hwm=child.get("VmHWM", 0),
            main_rss=main.get("VmRSS", 0),
        )

    def run(self) -> None:
        seen: set[int] = set()
        since = datetime(1970, 1, 1, tzinfo=UTC)
        next_at = self.step
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.stop.is_set():
                rows = conn.execute(
                    "SELECT id, conversation_id, status, finished_at FROM checks_checkrun "
                    "WHERE kind = 'checks' AND finished_at >= %s",
                    [since],
                ).fetchall()
                with self.lock:
                    for run_id, conversation_id, status, finished in rows:
                        if run_id in seen:
                            continue
                        seen.add(run_id)
                        since = max(since, finished)
                        turns = self.turns_of.get(conversation_id)
                        if turns is None:
                            self.unknown += 1
                            turns = 0
                        self.checked_turns += turns
                        self.checked_runs += 1
                        self.failed_runs += status == "failed"
                    if rows:
                        now = time.monotonic()
                        self.first_finish = self.first_finish or now
                        self.last_finish = now
                    while self.checked_turns >= next_at:
                        self.samples.append(self.sample())
                        next_at += self.step
                self.stop.wait(0.25)


# --- main ---------------------------------------------------------------------------------


def start_worker(pool: str, log: IO[bytes], var_dir: str) -> subprocess.Popen[bytes]:
    """The worker runs in the scratch directory: the file broker keeps its control (pidbox)
    files in ``control/`` under the working directory, which must not be the checkout."""
    # The pool's options go last, in extra, so that the command line stays the one this benchmark
    # has always run (the solo pool takes no --concurrency).
    pool_options = ["--pool", "solo"] if pool == "solo" else ["--concurrency", "1"]
    extra = ["--without-mingle", "--without-gossip", *pool_options]
    command = celery_worker_argv(ROOT / ".venv/bin", None, "bench-memory@%h", extra, "WARNING")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # In this process's session, as it always was, so stopped as one process (the main process
    # stops its pool child on SIGTERM), and Ctrl-C here reaches it too.
    return start(command, log, var_dir, env, new_session=False)


def mb(kb: float) -> str:
    return f"{kb / 1024:.1f}"


def report(sampler: Sampler, total_turns: int) -> None:
    samples = sampler.samples
    print(
        f"\n{'turns checked':>14} {'runs':>7} {'s':>7} "
        f"{'child RSS MB':>13} {'child HWM MB':>13} {'main RSS MB':>12}"
    )
    for s in samples:
        print(
            f"{s.turns:>14,} {s.runs:>7,} {s.seconds:>7.0f} {mb(s.child_rss):>13} "
            f"{mb(s.child_hwm):>13} {mb(s.main_rss):>12}"
        )
    if len({s.child_pid for s in samples}) > 1:
        print("    note: the pool child changed during the run (it was replaced); growth is per process")
    if len(samples) < 3:
        print("too few samples to judge growth")
        return
    base = next(s for s in samples if s.turns >= total_turns * 0.1)
    last = samples[-1]
    tail = [s for s in samples if s.turns >= total_turns * 0.9]
    half = [s for s in samples if s.turns >= total_turns * 0.5]
    rss_growth = last.child_rss - base.child_rss
    hwm_growth = last.child_hwm - base.child_hwm
    print(
        f"\ngrowth from {base.turns:,} turns (first 10%) to {last.turns:,} (last 10%): "
        f"RSS {rss_growth / 1024:+.1f} MB ({rss_growth / base.child_rss:+.1%}), "
        f"peak RSS (VmHWM) {hwm_growth / 1024:+.1f} MB ({hwm_growth / base.child_hwm:+.1%}); "
        f"median RSS of the last 10% of samples {mb(statistics.median(s.child_rss for s in tail))} MB"
    )
    if len(half) >= 2:
        slope = statistics.linear_regression([s.turns for s in half], [s.child_rss for s in half]).slope
        print(f"slope of RSS over the second half: {slope * 1000:+.1f} kB per 1,000 turns")
    flat = abs(hwm_growth) <= max(0.05 * base.child_hwm, 5 * 1024)
    print(f"flat (peak RSS within 5% or 5 MB of the 10% mark): {'yes' if flat else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns to store and check")
    parser.add_argument("--samples", type=int, default=20, help="memory samples over the run")
    parser.add_argument("--batch", type=int, default=100, help="conversations per ingestion transaction")
    parser.add_argument("--pool", choices=["prefork", "solo"], default="prefork")
    parser.add_argument("--seed", type=int, default=5)
    add_database_arguments(parser, "receipts_memory")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database afterwards")
    parser.add_argument("--stall", type=float, default=180, help="give up after this long without progress")
    args = parser.parse_args()

    database_url = with_database(args.admin_url, args.database)
    var_dir = tempfile.mkdtemp(prefix="receipts-memory-")
    worker_log = tempfile.NamedTemporaryFile(prefix="receipts-memory-worker-", suffix=".log", delete=False)
    create_database(args.admin_url, args.database)
    worker: subprocess.Popen[bytes] | None = None
    sampler: Sampler | None = None
    thread: threading.Thread | None = None
    try:
        setup_django(database_url, var_dir)
        from checks import ingestion
        from checks.models import Project

        project = Project.objects.create(name="Bench", slug="bench")
        worker = start_worker(args.pool, worker_log, var_dir)
        sampler = Sampler(database_url, worker, args.pool, max(1, args.turns // args.samples))
        print(
            f"Python {sys.version.split()[0]}; {os.cpu_count()} cores; worker pid {worker.pid} "
            f"(pool {args.pool}); log {worker_log.name}"
        )
        print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        thread = threading.Thread(target=sampler.run, daemon=True)
        thread.start()

        rng = random.Random(args.seed)
        stored = conversations = 0
        ingest_started = time.monotonic()
        while stored < args.turns:
            batch: list[dict[str, Any]] = []
            while stored < args.turns and len(batch) < args.batch:
                item = conversation(rng, f"mem-{conversations}")
                conversations += 1
                stored += len(item["turns"])
                batch.append(item)
            results = ingestion.ingest_many(project=project, items=[(item, "") for item in batch])
            with sampler.lock:
                for result, item in zip(results, batch, strict=True):
                    if result.status != "created" or result.conversation is None:
                        raise SystemExit(f"{item['external_id']}: {result.status} {result.errors}")
                    sampler.turns_of[result.conversation.pk] = len(item["turns"])
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited ({worker.returncode}); see {worker_log.name}")
        ingest_seconds = time.monotonic() - ingest_started
        print(
            f"stored {conversations:,} conversations, {stored:,} turns in {ingest_seconds:.0f}s "
            f"({conversations / ingest_seconds:.1f} conversations/s, while the worker checked)"
        )

        last_progress, last_count = time.monotonic(), -1
        while True:
            with sampler.lock:
                done, count = sampler.checked_runs >= conversations, sampler.checked_turns
            if done:
                break
            if count != last_count:
                last_progress, last_count = time.monotonic(), count
            elif time.monotonic() - last_progress > args.stall:
                print(f"no progress for {args.stall:.0f}s at {count:,} turns; stopping")
                break
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited ({worker.returncode}); see {worker_log.name}")
            time.sleep(1)
        sampler.stop.set()
        thread.join(5)
        if not sampler.samples or sampler.samples[-1].turns != sampler.checked_turns:
            sampler.samples.append(sampler.sample())

        span = (sampler.last_finish or 0) - (sampler.first_finish or 0)
        print(
            f"checked {sampler.checked_runs:,} runs ({sampler.failed_runs} failed), "
            f"{sampler.checked_turns:,} turns; worker {sampler.checked_turns / span if span else 0:.1f} "
            f"turns/s between its first and last finished run"
        )
        if sampler.unknown:
            print(
                f"    {sampler.unknown} finished runs of conversations not yet recorded here (counted as 0)"
            )
        load = os.getloadavg()
        print(f"load after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        report(sampler, stored)
        print(
            f"\nreproduce: .venv/bin/python bench/worker_memory.py --turns {args.turns} "
            f"--samples {args.samples} --batch {args.batch} --pool {args.pool} --seed {args.seed} "
            f"--database {args.database} --admin-url {args.admin_url}"
        )
    finally:
        if sampler is not None:
            sampler.stop.set()
        if thread is not None:
            thread.join(5)
        if worker is not None:
            stop(worker, group=False)
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(args.admin_url, args.database)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
