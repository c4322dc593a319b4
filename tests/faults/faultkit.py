"""Helpers of the fault tests: the private services, worker and scheduler processes, and the
audit of what became of every conversation sent."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from django.conf import settings

from tests.faults import private_services

ROOT = Path(settings.BASE_DIR)
CELERY = Path(sys.executable).with_name("celery")
# Short enough that a test sees a killed worker's runs recovered in seconds; the .ci/run step
# sets the same values.
FAULT_ENV_DEFAULTS = {
    "RECEIPTS_RUN_STALE_SECONDS": "5",
    "RECEIPTS_VISIBILITY_TIMEOUT": "10",
    "RECEIPTS_SWEEP_SECONDS": "2",
    "RECEIPTS_OTLP_LEASE_SECONDS": "5",
}


# --- the private services -----------------------------------------------------------------


def require_private_services() -> dict[str, Any]:
    """The private services' state, after checking that Django points at them and not at
    the shared ones (which these tests must never stop)."""
    problems = []
    try:
        state = private_services.load_state()
    except (RuntimeError, OSError) as exc:
        pytest.fail(
            f"fault tests need the private services ({exc}); run: "
            'eval "$(.venv/bin/python tests/faults/private_services.py start)"',
            pytrace=False,
        )
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql" or str(db.get("PORT")) != str(state["pg_port"]):
        problems.append(f"DATABASE_URL must point at the private PostgreSQL on port {state['pg_port']}")
    broker = urlsplit(settings.CELERY_BROKER_URL)
    if broker.scheme != "redis" or broker.port != state["redis_port"]:
        problems.append(f"REDIS_URL must point at the private Redis on port {state['redis_port']}")
    if problems:
        pytest.fail("fault tests: " + "; ".join(problems), pytrace=False)
    return state


def database_url(db: dict[str, Any]) -> str:
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db['PORT']}/{quote(db['NAME'], safe='')}"


class Process:
    """A celery process that leads its own process group (its pool children go with it)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("ab") as out:
            out.write(f"\n===== {name} starts at {time.strftime('%H:%M:%S')} =====\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def children(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def kill(self) -> None:
        """SIGKILL to the whole group: no warm shutdown, no ack, no cleanup."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(30)

    def kill_children(self) -> int:
        """SIGKILL to the pool processes only: the main process sees the worker lost."""
        killed = 0
        for pid in self.children():
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        return killed

    def stop(self, seconds: float = 20) -> None:
        if not self.alive():
            return
        try:
            os.killpg(self.pid, signal.SIGTERM)
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            self.kill()
        except ProcessLookupError:
            pass

    def log_tail(self, lines: int = 80) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class Cluster:
    """The workers and the scheduler of one test, on the private services."""

    def __init__(self, state: dict[str, Any], database_url: str, logs: Path) -> None:
        self.state = state
        self.database_url = database_url
        self.logs = logs
        self.processes: list[Process] = []
        self.started = 0

    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"CELERY_TASK_ALWAYS_EAGER", "PYTEST_XDIST_WORKER", "DJANGO_SETTINGS_MODULE"}
        }
        for key, value in FAULT_ENV_DEFAULTS.items():
            env.setdefault(key, value)
        env.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=os.environ["REDIS_URL"],
            DJANGO_SETTINGS_MODULE="grounding_site.settings",
            PYTHONUNBUFFERED="1",
            RECEIPTS_VAR_DIR=str(self.logs / "var"),
        )
        return env

    def worker(self, concurrency: int = 2) -> Process:
        self.started += 1
        name = f"faults-worker-{self.started}"
        argv = [
            str(CELERY),
            "-A",
            "grounding_site",
            "worker",
            "--queues",
            "celery,judge",
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--hostname",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        process = Process(name, argv, self.env(), self.logs / "workers.log")
        self.processes.append(process)
        return process

    def beat(self) -> Process:
        argv = [
            str(CELERY),
            "-A",
            "grounding_site",
            "beat",
            "--schedule",
            str(self.logs / "celerybeat-schedule"),
            "--loglevel",
            "INFO",
        ]
        process = Process("beat", argv, self.env(), self.logs / "beat.log")
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            process.stop()


def broker_backlog() -> dict[str, int]:
    """Messages waiting in the queues, and those handed out but not yet acknowledged."""
    from grounding_site.celery import app

    with app.connection_for_write() as connection:
        client = connection.default_channel.client
        return {
            "queued": int(client.llen("celery")) + int(client.llen("judge")),
            "unacked": int(client.hlen("unacked")),
        }


def redeliver_unacked() -> int:
    """Puts every message handed out but never acknowledged back on its queue, as Redis's
    visibility timeout does for a dead worker's messages (kombu looks for them only every
    unacked_restore_interval x unacked_restore_throttle seconds, 100 by default: too long to
    wait for here). Returns how many went back."""
    from grounding_site.celery import app

    with app.connection_for_write() as connection:
        channel = connection.default_channel
        tags = channel.client.hkeys("unacked")
        for tag in tags:
            channel.qos.restore_by_tag(tag, leftmost=False)
        return len(tags)


# --- what the suite must have found -------------------------------------------------------

JUDGE = "entailment"


def _key(item: dict[str, Any]) -> tuple[Any, ...]:
    return (item["turn"], item["checker"], item["code"], item["severity"], (item.get("value") or "")[:500])


def expected_findings(document: dict[str, Any], options: Any) -> Counter[tuple[Any, ...]]:
    """The suite's findings on the stored document, without the judge's (none is configured
    here: the entailment checker only says judge_unavailable)."""
    from checks import suite

    report = suite.run_suite(document, suite.parse_options(options or None))
    return Counter(_key(item) for item in report["findings"] if item["checker"] != JUDGE)


def audit_conversations(external_ids: list[str]) -> dict[str, Any]:
    """Per conversation sent: checked once (one finished deterministic run, findings as the
    suite gives them), lost (unchecked, or findings missing) or duplicated (more than one run,
    or findings beyond the suite's)."""
    from django.db.models import Count

    from checks.models import CheckRun, Conversation, Finding, RunKind, RunStatus

    conversations = {
        c.external_id: c
        for c in Conversation.objects.filter(external_id__in=external_ids).select_related("project")
    }
    runs: dict[int, list[CheckRun]] = {}
    for run in CheckRun.objects.filter(conversation__in=conversations.values(), kind=RunKind.CHECKS):
        runs.setdefault(run.conversation_id, []).append(run)
    found: dict[int, Counter[tuple[Any, ...]]] = {}
    for finding in Finding.objects.filter(conversation__in=conversations.values()).exclude(checker=JUDGE):
        details = {
            "turn": finding.details.get("turn"),
            "checker": finding.checker,
            "code": finding.code,
            "severity": finding.severity,
            "value": finding.value,
        }
        # A withdrawn finding would mean a later run disagreed: counted as found, so it shows.
        found.setdefault(finding.conversation_id, Counter())[_key(details)] += 1

    checked_once, lost, duplicated, problems = 0, 0, 0, []
    attempts: Counter[int] = Counter()
    for external_id in external_ids:
        conversation = conversations.get(external_id)
        if conversation is None:
            lost += 1
            problems.append(f"{external_id}: not stored")
            continue
        its_runs = runs.get(conversation.pk, [])
        for run in its_runs:
            attempts[run.attempts] += 1
        done = [run for run in its_runs if run.status == RunStatus.DONE]
        expected = expected_findings(conversation.document, conversation.project.options)
        actual = found.get(conversation.pk, Counter())
        missing, extra = expected - actual, actual - expected
        if not done or missing:
            lost += 1
            states = [(run.pk, run.status, run.attempts, run.error[:200]) for run in its_runs]
            problems.append(f"{external_id}: runs {states}, findings missing {dict(missing)}")
        elif len(its_runs) != 1 or extra:
            duplicated += 1
            problems.append(f"{external_id}: {len(its_runs)} runs, findings beyond the suite's {dict(extra)}")
        else:
            checked_once += 1
    same_print = Finding.objects.values("fingerprint").annotate(n=Count("id")).filter(n__gt=1).count()
    return {
        "sent": len(external_ids),
        "checked_once": checked_once,
        "lost": lost,
        "duplicated": duplicated,
        "duplicate_fingerprints": same_print,
        "findings": sum(sum(c.values()) for c in found.values()),
        "attempts": dict(sorted(attempts.items())),
        "problems": problems[:20],
    }


def unfinished_runs(external_ids: list[str]) -> int:
    from checks.models import CheckRun, RunKind, RunStatus

    return (
        CheckRun.objects.filter(conversation__external_id__in=external_ids, kind=RunKind.CHECKS)
        .exclude(status=RunStatus.DONE)
        .count()
    )


def conversations(count: int, prefix: str) -> list[dict[str, Any]]:
    """`count` distinct conversations made from the demo examples (each a different mix of
    grounded and flagged answers), every one with an external id of its own."""
    examples = sorted(p for p in (ROOT / "demo").glob("*.json") if p.name != "EXPECTED.json")
    out = []
    for i in range(count):
        payload = json.loads(examples[i % len(examples)].read_text())
        payload["external_id"] = f"{prefix}-{i:04d}-{examples[i % len(examples)].stem}"
        payload["title"] = f"{payload.get('title') or examples[i % len(examples)].stem} #{i}"
        out.append(payload)
    return out


def wait_until(
    condition: Callable[[], Any],
    *,
    timeout: float,
    what: str,
    every: float = 0.25,
    logs: Cluster | None = None,
) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(every)
    tail = ""
    if logs is not None and logs.processes:
        tail = f"\nlast worker log:\n{logs.processes[-1].log_tail()}"
    pytest.fail(f"timed out after {timeout}s waiting for {what} (last: {last!r}){tail}", pytrace=False)


# A sweep's line in the worker log, with how many runs it sent again.
SWEEP_LINE = re.compile(r"Task checks\.tasks\.sweep_pending_runs\[[^\]]+\] succeeded in [\d.e-]+s: (\d+)")


def poll(condition: Any, timeout: float, every: float = 0.005) -> Any:
    """``condition()``'s first truthy answer within ``timeout`` seconds, else None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(every)
    return None


def kill_in_turn(worker: Any, round_: int) -> bool:
    """Kills the worker's pool processes every third round, else the whole worker, so both
    kinds of death are met; True where only the pool died."""
    if round_ % 3 == 2:
        assert worker.kill_children() > 0, worker.log_tail()
        return True
    worker.kill()
    return False
