"""Receipts beside Arize Phoenix: one OTLP workload, sent until checked against sent until queryable.

    .venv/bin/python bench/peer_compare.py --phoenix-python /work/peer/bin/python [--n 2000]
        [--batch 100] [--concurrency 1] [--port 18000] [--phoenix-port 16006]
        [--admin-url postgres://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/11]

One command does the whole comparison of issue 10 with the shared harness
(`../shared/bench/peer_ingest.py`, read-only, outside this checkout):

1. a scratch PostgreSQL database (`receipts_peer`) is created and migrated, and a project
   with an API key made in it, with the helpers of `bench/ingest_throughput.py`;
2. Receipts starts as in production (the Procfile's `web` and `worker` lines): gunicorn from
   the venv and a Celery worker for the `celery` queue, on Redis database 11, bound to
   loopback;
3. Phoenix starts as the shared README says, from its own venv (`--phoenix-python`, or
   `PHOENIX_PYTHON`), in a scratch working directory;
4. `peer_ingest.py` runs once with both targets (Phoenix first, the baseline of its ratios):
   the same generated conversations go to each, and each is timed from the first send until
   its probe sees all of them: Phoenix's GraphQL trace count, Receipts' `GET /api/v1/stats`
   field `checked` (conversations whose check run is done, hence visible with findings);
5. meanwhile the resident memory of each system is sampled from /proc every 0.2 s, summed
   over its process tree (gunicorn master and workers plus the Celery worker and its pool for
   Receipts; Phoenix's process and any children), and the peaks are printed beside the rates.

Everything started here is stopped, the Redis database flushed and the scratch database
dropped at the end, also on failure or Ctrl-C (`--keep` keeps the database and the scratch
directory for a look afterwards).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any
from urllib.parse import urlsplit

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# The scratch-database helpers are shared with the ingestion benchmark rather than copied.
from ingest_throughput import (  # noqa: E402
    add_database_arguments,
    create_database,
    drop_database,
    setup_django,
    with_database,
)
from processes import celery_worker_argv, cpu_seconds, descendants, gunicorn_argv, rss_kib  # noqa: E402
from processes import start as start_process  # noqa: E402
from processes import stop as stop_process  # noqa: E402

VENV_BIN = ROOT / ".venv" / "bin"
DEFAULT_PEER_DIR = ROOT.parent / "shared" / "bench"
PROJECT_SLUG = "peer"


# --- processes ----------------------------------------------------------------------------


@dataclass
class Service:
    """A child started in a session of its own, so it and its children stop together."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes] = field(repr=False)

    def tail(self, chars: int = 3000) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        stop_process(self.process)  # the session: SIGTERM, SIGKILL after 20 s and for what is left
        self.log.close()


def start(name: str, argv: list[str], env: dict[str, str], cwd: Path, log_dir: Path) -> Service:
    log_path = log_dir / f"{name}.log"
    log = log_path.open("wb")
    return Service(name, start_process(argv, log, cwd, env), log_path, log)


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        # As the servers bind: a connection of the previous run in TIME_WAIT does not count.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def http_status(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_until(service: Service, ready: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if service.process.poll() is not None:
            raise SystemExit(f"{service.name} exited ({service.process.returncode}):\n{service.tail()}")
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{service.name}: not {what} after {timeout:.0f}s:\n{service.tail()}")
        time.sleep(0.3)


# --- memory -------------------------------------------------------------------------------


def process_tree(roots: list[int]) -> set[int]:
    # Living processes only (a root that has exited, a child gone since it was listed): the
    # process count printed is of what was running at the sample.
    return {pid for root in roots for pid in (root, *descendants(root)) if os.path.exists(f"/proc/{pid}")}


def process_name(pid: int) -> str:
    """The process's command line, shortened to its program and first words."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        return "?"
    return " ".join(os.path.basename(w.decode(errors="replace")) for w in words[:4])


class PeakSampler:
    """The peak of the summed RSS of each system's process tree, every `interval` seconds."""

    def __init__(self, systems: dict[str, list[int]], interval: float = 0.2) -> None:
        self.systems, self.interval = systems, interval
        self.peak_kib = dict.fromkeys(systems, 0)
        self.processes = dict.fromkeys(systems, 0)
        # each process's RSS (KiB) at the sample of the peak, largest first: what to cut
        self.at_peak: dict[str, list[tuple[str, int]]] = {name: [] for name in systems}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        for name, roots in self.systems.items():
            parts = [(process_name(pid), rss_kib(pid)) for pid in process_tree(roots)]
            total = sum(kib for _, kib in parts)
            if total > self.peak_kib[name]:
                self.peak_kib[name] = total
                self.at_peak[name] = sorted(parts, key=lambda part: -part[1])
            self.processes[name] = max(self.processes[name], len(parts))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> PeakSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


# --- the two systems ----------------------------------------------------------------------


def prepare_receipts(admin_url: str, database: str, var_dir: Path) -> str:
    """Creates and migrates the scratch database; returns an API key's secret."""
    database_url = with_database(admin_url, database)
    create_database(admin_url, database)
    setup_django(database_url, str(var_dir))
    from django.db import connections

    from checks.models import ApiKey, Project

    project = Project.objects.create(name="Peer comparison", slug=PROJECT_SLUG)
    _, secret = ApiKey.issue(project=project, name="peer_ingest")
    connections.close_all()
    return secret


def flush_redis(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        client.flushdb()
    finally:
        client.close()


def start_receipts(
    args: argparse.Namespace, database_url: str, var_dir: Path, log_dir: Path
) -> tuple[Service, Service]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": args.redis_url,
        "RECEIPTS_VAR_DIR": str(var_dir),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
    }
    # The Procfile's lines, bound to loopback, with the hostname made ours so that a worker
    # of someone else's on the same machine is never mistaken for this one.
    web = start("gunicorn", gunicorn_argv(VENV_BIN, args.port, args.web_concurrency), env, ROOT, log_dir)
    argv = celery_worker_argv(VENV_BIN, args.worker_concurrency, f"peer-checks-{os.getpid()}@%h")
    worker = start("celery", argv, env, ROOT, log_dir)
    wait_until(web, lambda: http_status(args.port, "/healthz")[0] == 200, "answering /healthz")
    wait_until(worker, lambda: " ready." in worker.tail(100_000), "ready")
    return web, worker


def start_phoenix(args: argparse.Namespace, work_dir: Path, log_dir: Path) -> Service:
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work_dir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(args.phoenix_port),
        "PHOENIX_GRPC_PORT": str(args.phoenix_grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    phoenix = start(
        "phoenix", [args.phoenix_python, str(args.peer_dir / "launch_phoenix.py")], env, work_dir, log_dir
    )
    wait_until(
        phoenix, lambda: http_status(args.phoenix_port, "/healthz")[0] == 200, "answering /healthz", 180
    )
    return phoenix


def targets(args: argparse.Namespace, secret: str, phoenix_pid: int, receipts_pids: list[int]) -> list[Any]:
    phoenix_base = f"http://127.0.0.1:{args.phoenix_port}"
    receipts_base = f"http://127.0.0.1:{args.port}"
    return [
        {
            "name": "phoenix",
            "target": f"{phoenix_base}/v1/traces",
            "format": "protobuf",
            "probe": "phoenix",
            "phoenix_base": phoenix_base,
            "server_pid": [phoenix_pid],
            "disk_path": [str(args.phoenix_dir)],
        },
        {
            "name": "receipts",
            "target": f"{receipts_base}/v1/traces",
            "format": "protobuf",
            "headers": {"Authorization": f"Bearer {secret}"},
            "probe": "url",
            "visible_url": f"{receipts_base}/api/v1/stats",
            "visible_field": "checked",
            "visible_kind": "traces",
            "server_pid": receipts_pids,
        },
    ]


# --- main ---------------------------------------------------------------------------------


def reproduce_command(args: argparse.Namespace) -> str:
    parts = [".venv/bin/python", "bench/peer_compare.py", "--phoenix-python", args.phoenix_python]
    parts += ["--n", str(args.n), "--batch", str(args.batch), "--concurrency", str(args.concurrency)]
    parts += ["--seed", str(args.seed), "--web-concurrency", str(args.web_concurrency)]
    parts += ["--worker-concurrency", str(args.worker_concurrency)]
    return shlex.join(parts)


@dataclass
class Database:
    """The scratch database after the run: its size, and the CPU its server processes spent."""

    mib: float
    backend_cpu_s: float
    backends: int


def database_figures(database_url: str) -> Database:
    # Phoenix's SQLite works inside Phoenix's process and so inside its CPU figure; Receipts'
    # PostgreSQL works in backends of a server it does not own. Their CPU is read here, before
    # the connections close (gunicorn and Celery keep theirs for DATABASE_CONN_MAX_AGE).
    with psycopg.connect(database_url) as conn:
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    pids = [row[0] for row in rows]
    return Database((size[0] if size else 0) / 2**20, sum(cpu_seconds(p) for p in pids), len(pids))


def report(
    args: argparse.Namespace,
    results: dict[str, Any],
    sampler: PeakSampler,
    load: tuple[str, str],
    database: Database,
) -> None:
    phoenix, receipts = results["phoenix"], results["receipts"]
    print("\n=== Receipts beside Phoenix (issues 10 and 29) ===")
    print(f"workload: {args.n} conversations ({receipts['n_spans']} spans, {receipts['payload_mb']} MB of")
    print(f"          protobuf), batches of {args.batch}, {args.concurrency} connection(s), seed {args.seed}")
    for name, r in (("phoenix", phoenix), ("receipts", receipts)):
        what = "sent until queryable" if name == "phoenix" else "sent until checked (stats.checked)"
        e2e = r.get("e2e_traces_per_s")
        rate = f"{e2e} conversations/s" if e2e else "NOT all visible"
        print(
            f"{name:9} e2e {rate} ({what}; {r.get('visible_total_s', '?')} s in all, "
            f"+{r.get('visible_after_send_s', '?')} s after the last send); send "
            f"{r['send_traces_per_s']}/s, p95 {r['req_latency_p95_ms']} ms, {r['retries']} retries"
        )
        print(
            f"{'':9} peak RSS {sampler.peak_kib[name] / 1024:.0f} MiB over {sampler.processes[name]} "
            f"process(es); server CPU {r.get('server_cpu_s', '?')} s"
        )
        for program, kib in sampler.at_peak[name]:
            print(f"{'':11} {kib / 1024:6.0f} MiB  {program}")
    # Issue 29's goals, for this same run: each OTLP request answered within 250 ms at p95
    # (from its first attempt), with no 429 or 503 asked to retry; sent-until-checked at
    # least 3x Phoenix's sent-until-queryable; a peak memory no higher than Phoenix's.
    p95, retried = receipts["req_latency_p95_ms"], receipts["retries"] + receipts["failed_requests"]
    print(
        f"latency   Receipts' p95 per request {p95} ms, {retried} retried or failed "
        f"(goal <= 250 ms and none: {'met' if p95 <= 250 and not retried else 'not met'})"
    )
    if phoenix.get("e2e_traces_per_s") and receipts.get("e2e_traces_per_s"):
        ratio = receipts["e2e_traces_per_s"] / phoenix["e2e_traces_per_s"]
        verdict = "met" if ratio >= 3 else "not met"
        print(f"ratio     e2e {ratio:.2f}x Phoenix's (goal >= 3x: {verdict})")
    memory = sampler.peak_kib["receipts"] / max(sampler.peak_kib["phoenix"], 1)
    verdict = "met" if memory <= 1 else "not met"
    print(f"memory    Receipts' peak is {memory:.2f}x Phoenix's (goal <= 1x: {verdict})")
    print(
        f"disk      Phoenix {phoenix.get('disk_mib', '?')} MiB (SQLite), Receipts {database.mib:.0f} MiB "
        f"(PostgreSQL)"
    )
    print(
        f"postgres  {database.backend_cpu_s:.1f} s of CPU in the {database.backends} backends of Receipts' "
        "connections (not in its server CPU or RSS above)"
    )
    print(f"load      before: {load[0]}\n          after:  {load[1]}")
    print(f"reproduce: {reproduce_command(args)}")


def uptime() -> str:
    path = shutil.which("uptime")
    if path is None:
        return "load average: {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg())
    return subprocess.run([path], capture_output=True, text=True, check=False).stdout.strip()


def raise_on_term(signum: int, frame: FrameType | None) -> None:
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop what was started.
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--phoenix-python",
        default=os.environ.get("PHOENIX_PYTHON"),
        help="the interpreter of a venv with arize-phoenix and opentelemetry-proto (or PHOENIX_PYTHON)",
    )
    parser.add_argument(
        "--peer-dir",
        type=Path,
        default=Path(os.environ.get("PEER_BENCH_DIR", DEFAULT_PEER_DIR)),
        help="where peer_ingest.py and launch_phoenix.py are (default ../shared/bench)",
    )
    parser.add_argument("--n", type=int, default=2000, help="conversations (one trace each)")
    parser.add_argument("--batch", type=int, default=100, help="conversations per OTLP request")
    parser.add_argument("--concurrency", type=int, default=1, help="client connections per target")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--port", type=int, default=18000, help="Receipts (a free one if taken)")
    parser.add_argument("--phoenix-port", type=int, default=16006)
    parser.add_argument("--phoenix-grpc-port", type=int, default=14317)
    parser.add_argument("--web-concurrency", type=int, default=3, help="gunicorn workers (WEB_CONCURRENCY)")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="Celery pool (WORKER_CONCURRENCY)")
    add_database_arguments(parser, "receipts_peer")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11", help="flushed before and after")
    parser.add_argument("--visible-timeout", type=float, default=900.0, help="seconds after the last send")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database and directory")
    args = parser.parse_args()

    if not args.phoenix_python:
        parser.error("give --phoenix-python (or PHOENIX_PYTHON): a venv with arize-phoenix installed")
    for host in (urlsplit(args.admin_url).hostname, urlsplit(args.redis_url).hostname):
        if host not in ("127.0.0.1", "localhost", "::1"):
            parser.error(f"only loopback services: {host}")
    if not port_is_free(args.port):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    for port in (args.phoenix_port, args.phoenix_grpc_port):
        if not port_is_free(port):
            parser.error(f"port {port} is taken; Phoenix needs it (--phoenix-port, --phoenix-grpc-port)")

    signal.signal(signal.SIGTERM, raise_on_term)
    scratch = Path(tempfile.mkdtemp(prefix="receipts-peer-"))
    args.phoenix_dir = scratch / "phoenix"
    var_dir, logs = scratch / "var", scratch / "logs"
    for folder in (args.phoenix_dir, var_dir, logs):
        folder.mkdir()
    services: list[Service] = []
    database_url = with_database(args.admin_url, args.database)
    try:
        flush_redis(args.redis_url)
        secret = prepare_receipts(args.admin_url, args.database, var_dir)
        web, worker = start_receipts(args, database_url, var_dir, logs)
        services += [web, worker]
        phoenix = start_phoenix(args, args.phoenix_dir, logs)
        services.append(phoenix)
        receipts_pids = [web.process.pid, worker.process.pid]
        print(f"Receipts on 127.0.0.1:{args.port} (gunicorn {web.process.pid}, celery {worker.process.pid});")
        print(f"Phoenix on 127.0.0.1:{args.phoenix_port} ({phoenix.process.pid}); scratch {scratch}")

        spec = scratch / "targets.json"
        spec.write_text(json.dumps(targets(args, secret, phoenix.process.pid, receipts_pids), indent=1))
        saved = scratch / "peer_ingest.json"
        harness = [args.phoenix_python, str(args.peer_dir / "peer_ingest.py"), "--spec", str(spec)]
        harness += ["--n", str(args.n), "--batch", str(args.batch), "--concurrency", str(args.concurrency)]
        harness += ["--seed", str(args.seed), "--visible-timeout", str(args.visible_timeout)]
        harness += ["--save-json", str(saved)]
        load_before = uptime()
        print(f"{load_before}\n$ {shlex.join(harness)}", flush=True)
        with PeakSampler({"phoenix": [phoenix.process.pid], "receipts": receipts_pids}) as sampler:
            finished = subprocess.run(harness, check=False)
        load_after = uptime()
        database = database_figures(database_url)
        if not saved.exists():
            raise SystemExit(f"peer_ingest.py wrote no results (exit {finished.returncode})")
        results = {r["name"]: r for r in json.loads(saved.read_text())["results"]}
        report(args, results, sampler, (load_before, load_after), database)
        return finished.returncode
    except KeyboardInterrupt:
        print("interrupted; stopping what was started", file=sys.stderr)
        return 130
    finally:
        for service in reversed(services):
            service.stop()
        try:
            flush_redis(args.redis_url)
        except Exception as exc:  # cleanup goes on; the next run flushes again
            print(f"could not flush {args.redis_url}: {exc}", file=sys.stderr)
        if not args.keep:
            drop_database(args.admin_url, args.database)
        if args.keep:
            print(f"kept: database {args.database}, scratch {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
