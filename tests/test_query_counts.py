"""No page's query count grows with its rows.

Each page a signed-in member can GET is measured twice: on a small project, with one of
everything the page lists (one conversation, its two flagged turns, a decision, a comment,
a correction, a member, a saved view, a key, a webhook and its deliveries, an export job),
and again after a large one is added beside it, with many of everything (conversations,
turns, tool calls, findings per turn, decisions, comments and corrections per finding,
members, saved views, keys, webhooks, deliveries, export jobs, audit events). The rows are
made as they are in use: conversations are ingested and checked by the suite, and reviewers
act through the review services. The two counts must be equal; when they are not, the
failure lists the statements that repeat, which names the N+1.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client, TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from checks import administration, audit, ingestion, review, webhooks
from checks.models import (
    ApiKey,
    Comment,
    Conversation,
    Correction,
    ExportJob,
    ExportStatus,
    Finding,
    Membership,
    Project,
    Role,
    SavedView,
    Turn,
    Webhook,
)
from checks.reporting import exports, jobs
from checks.views.queue import _cursor

LARGE = 5  # the large project's scale: conversations, turns, calls and values per turn, people


@dataclass
class World:
    """What one build made, and the rows the pages are pointed at (the busiest of each)."""

    conversation: Conversation
    turn: Turn  # flagged, with earlier turns before it and the most findings
    newest: Turn  # the newest flagged turn: its cursor pages to the rest
    finding: Finding  # with decisions, comments and corrections
    correction: Correction
    comment: Comment
    membership: Membership
    saved_view: SavedView
    key: ApiKey
    job: ExportJob
    assigned: Finding  # open, assigned to bob: the filtered queue finds it


def _payload(
    external_id: str, *, turns: int, values: int, calls: int, agent: str, model: str
) -> dict[str, Any]:
    """A conversation whose every turn reads ``calls`` search results, cites each of them
    (grounded), and states ``values`` identifiers and a count no result carries (flags)."""
    number = int(re.sub(r"\D", "", external_id) or 0) * 1000
    out = []
    for t in range(turns):
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"Which tickets are open? ({t})"}]
        receipts = []
        grounded = []
        for i in range(calls):
            call_id = f"call-{t}-{i}"
            ticket = f"T-{10000 + number + t * 100 + i}"
            grounded.append(ticket)
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "search", "arguments": json.dumps({"q": f"vpn {t} {i}"})},
                        }
                    ],
                }
            )
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": json.dumps([{"id": ticket}])}
            )
            receipts.append(
                {"call_id": call_id, "tool": "search", "ok": True, "result_count": 1, "effect": "read"}
            )
        invented = [f"U-{60000 + number + t * 100 + i}" for i in range(values)]
        answer = (
            f"The search returned {calls + 40} tickets. "
            f"Open: {', '.join(grounded)}. Also {', '.join(invented)} are open."
        )
        messages.append({"role": "assistant", "content": answer})
        out.append({"tools_offered": ["search"], "messages": messages, "receipts": receipts})
    return {
        "external_id": external_id,
        "title": f"Conversation {external_id}",
        "agent": {"name": agent, "model": model},
        "turns": out,
    }


def _user(username: str) -> Any:
    return get_user_model().objects.create_user(username=username, password="password")


def _build(project: Project, alice: Any, bob: Any, ingest: Callable[..., Any], *, n: int, tag: str) -> World:
    """``n`` of everything in ``project``; n=1 makes the small project, LARGE the large one."""
    people = [alice, bob]
    for i in range(n):
        user = _user(f"rev-{tag}-{i}")
        administration.add_member(project=project, actor=alice, username=user.username, role=Role.REVIEWER)
        people.append(user)
        viewer = _user(f"view-{tag}-{i}")
        administration.add_member(project=project, actor=alice, username=viewer.username, role=Role.VIEWER)
        side = Project.objects.create(name=f"Side {tag} {i}", slug=f"side-{tag}-{i}")
        Membership.objects.create(project=side, user=alice, role=Role.REVIEWER)
    membership = Membership.objects.get(project=project, user=people[-1])
    administration.change_role(membership=membership, actor=alice, role=Role.VIEWER)
    administration.change_role(membership=membership, actor=alice, role=Role.REVIEWER)

    for i in range(n):
        Webhook.objects.create(
            project=project,
            url=f"https://hooks.example.com/{tag}/{i}",
            secret="s",
            events=list(webhooks.EVENTS),
        )
    conversations = [
        ingest(
            _payload(
                f"{tag}{c}",
                turns=n + 1,
                values=n,
                calls=n,
                agent=f"agent-{tag}-{c}",
                model=f"model-{tag}-{c % 2}",
            )
        )
        for c in range(n)
    ]
    conversation = conversations[-1]
    turns = list(conversation.turns.order_by("index"))
    turn = turns[-1]
    findings = list(Finding.objects.filter(turn=turn, severity="flag").order_by("id"))
    assert len(findings) >= n + 1, [f.code for f in findings]

    # Decisions by every reviewer on the first n findings; the rest stay open.
    for i, finding in enumerate(findings[:n]):
        for j, person in enumerate(people):
            verdict = "confirmed" if (i + j) % 2 == 0 or j == len(people) - 1 else "dismissed"
            review.record_decision(
                finding=finding, reviewer=person, verdict=verdict, reason=f"r{j}", respect_hold=False
            )
            review.add_comment(finding=finding, author=person, text=f"note {j} by {person.username}")
    finding = findings[0]
    for j in range(n):
        rejected = review.propose_correction(finding=finding, author=people[j % 2], text=f"Try {j}.")
        review.reject_correction(correction=rejected, approver=people[(j + 1) % 2], note=f"not yet {j}")
    correction = review.propose_correction(finding=finding, author=bob, text="The final one.")
    review.approve_correction(correction=correction, approver=alice)
    for other in findings[1:n]:  # more approved corrections, for the dataset exports
        approved = review.propose_correction(finding=other, author=bob, text=f"Corrected {other.pk}.")
        review.approve_correction(correction=approved, approver=alice)
    review.propose_correction(finding=findings[-1], author=bob, text="Waiting for a second reviewer.")
    for i, other in enumerate(
        Finding.objects.open().filter(conversation__in=conversations).order_by("id")[: 3 * n]
    ):
        review.assign(finding=other, assignee=people[i % len(people)], actor=alice)
    assigned = findings[-1]
    review.assign(finding=assigned, assignee=bob, actor=alice)
    for earlier in conversations[:-1]:
        first = Finding.objects.filter(conversation=earlier, severity="flag").order_by("id").first()
        assert first is not None
        review.record_decision(finding=first, reviewer=people[-1], verdict="confirmed", respect_hold=False)

    for i in range(n):
        review.save_view(
            project=project,
            user=alice,
            name=f"view {tag} {i}",
            query=f"checker=evidence&agent=agent-{tag}-{i}",
        )
        review.save_view(project=project, user=bob, name=f"bob's {tag} {i}", query="status=all")
    keys = []
    for i in range(n):
        key, _ = ApiKey.issue(project=project, name=f"key {tag} {i}")
        audit.record(
            project=project, actor=alice, verb="apikey.created", target=key, after={"prefix": key.prefix}
        )
        keys.append(key)
    administration.set_double_review(project=project, actor=alice, enabled=not project.double_review)
    administration.set_double_review(project=project, actor=alice, enabled=not project.double_review)
    for i in range(n):
        ExportJob.objects.create(
            project=project,
            requested_by=people[i % len(people)],
            kind="csv",
            status=ExportStatus.DONE,
            filename=f"{tag}-{i}.csv",
        )
    job = jobs.start_job(project=project, user=alice, kind="jsonl", filters={"checker": "evidence"})
    jobs.run_job(job.pk)
    job.refresh_from_db()

    newest = Turn.objects.filter(project=project).flagged().order_by("-created_at", "-id").first()
    assert newest is not None
    return World(
        conversation=conversation,
        turn=turn,
        newest=newest,
        finding=finding,
        correction=correction,
        comment=Comment.objects.filter(finding=finding).latest("id"),
        membership=membership,
        saved_view=SavedView.objects.filter(project=project, user=alice).latest("id"),
        key=keys[-1],
        job=job,
        assigned=assigned,
    )


@dataclass(frozen=True)
class Page:
    name: str
    url: Callable[[World], str]
    user: str = "alice"  # who asks: alice (admin), bob (reviewer), vic (viewer), or "key"
    htmx: bool = False
    double_review: bool = False
    lists: bool = True  # shows more for the large project (a form, or one object, does not)


def _export_file(kind: str) -> Callable[[World], str]:
    return lambda w: f"/p/acme/exports/file?kind={kind}"


def _history(kind: str, pk: Callable[[World], Any]) -> Callable[[World], str]:
    return lambda w: f"/p/acme/history/{kind}/{pk(w)}"


PAGES = [
    Page("home", lambda w: "/"),
    Page("queue", lambda w: "/p/acme/"),
    Page("queue as a viewer", lambda w: "/p/acme/", user="vic"),
    Page("queue, every status and severity", lambda w: "/p/acme/?status=all&severity=all"),
    Page(
        "queue, filtered",
        lambda w: (
            f"/p/acme/?checker={w.assigned.checker}&code={w.assigned.code}"
            f"&agent={w.conversation.agent_name}&model={w.conversation.agent_model}&assignee=bob&q=open"
            "&from=2000-01-01&to=2100-01-01"
        ),
    ),
    Page("queue, assigned to me", lambda w: "/p/acme/?assignee=mine&status=all"),
    Page("queue, after a cursor", lambda w: f"/p/acme/?after={_cursor(w.newest)}"),
    Page("queue results (htmx)", lambda w: "/p/acme/?checker=evidence", htmx=True),
    Page("queue rows after a cursor (htmx)", lambda w: f"/p/acme/?after={_cursor(w.newest)}", htmx=True),
    Page("reviewers' progress", lambda w: "/p/acme/progress"),
    Page("conversation", lambda w: f"/p/acme/conversations/{w.conversation.pk}/"),
    Page(
        "run status (htmx)",
        lambda w: f"/p/acme/conversations/{w.conversation.pk}/run",
        htmx=True,
        lists=False,
    ),
    Page("turn", lambda w: f"/p/acme/turns/{w.turn.pk}/"),
    Page("turn as a reviewer", lambda w: f"/p/acme/turns/{w.turn.pk}/", user="bob"),
    Page("turn as a viewer", lambda w: f"/p/acme/turns/{w.turn.pk}/", user="vic"),
    Page("turn under double review", lambda w: f"/p/acme/turns/{w.turn.pk}/", user="bob", double_review=True),
    Page("turn audit log (htmx)", lambda w: f"/p/acme/turns/{w.turn.pk}/audit", htmx=True),
    Page("finding history", _history("finding", lambda w: w.finding.pk)),
    Page("correction history", _history("correction", lambda w: w.correction.pk)),
    Page("comment history", _history("comment", lambda w: w.comment.pk)),
    Page("membership history", _history("membership", lambda w: w.membership.pk)),
    Page("project history", _history("project", lambda w: w.conversation.project_id)),
    Page("saved view history", _history("savedview", lambda w: w.saved_view.pk)),
    Page("API key history", _history("apikey", lambda w: w.key.pk)),
    Page("agreement", lambda w: "/p/acme/agreement"),
    Page("overview", lambda w: "/p/acme/overview"),
    Page("project report", lambda w: "/p/acme/report.pdf"),
    Page("conversation report", lambda w: f"/p/acme/conversations/{w.conversation.pk}/report.pdf"),
    Page("exports", lambda w: "/p/acme/exports"),
    Page("exports, offering a large one", lambda w: "/p/acme/exports?kind=csv&large=1&checker=evidence"),
    *[Page(f"export file ({kind})", _export_file(kind)) for kind in exports.FORMATS],
    Page("export job", lambda w: f"/p/acme/exports/jobs/{w.job.pk}"),
    Page("export job progress (htmx)", lambda w: f"/p/acme/exports/jobs/{w.job.pk}", htmx=True),
    Page("export job file", lambda w: f"/p/acme/exports/jobs/{w.job.pk}/file"),
    Page("members", lambda w: "/p/acme/members"),
    Page("settings", lambda w: "/p/acme/settings", lists=False),
    Page("keys", lambda w: "/p/acme/keys"),
    Page("webhooks", lambda w: "/p/acme/webhooks"),
    Page("API conversations", lambda w: "/api/v1/conversations", user="key"),
    Page("API conversations, signed in", lambda w: "/api/v1/conversations"),
    Page(
        "API conversation by external id",
        lambda w: f"/api/v1/conversations?external_id={w.conversation.external_id}",
        user="key",
        lists=False,
    ),
    Page("API conversation", lambda w: f"/api/v1/conversations/{w.conversation.pk}", user="key", lists=False),
    Page("API findings", lambda w: f"/api/v1/conversations/{w.conversation.pk}/findings", user="key"),
    Page("API stats", lambda w: "/api/v1/stats", user="key", lists=False),
]


class _FakePDF:
    """WeasyPrint's HTML, minus the typesetting: the report's queries are all made before."""

    def __init__(self, string: str) -> None:
        self.string = string

    def write_pdf(self) -> bytes:
        return self.string.encode()


def _shape(sql: str) -> str:
    """A statement with its literals taken out, so repeats of one query count together."""
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    sql = re.sub(r"\b\d+\b", "?", sql)
    return re.sub(r"\(\?(?:, \?)*\)", "(…)", sql)


def _explain(page: Page, few: list[dict[str, Any]], many: list[dict[str, Any]]) -> str:
    grown = Counter(_shape(q["sql"]) for q in many) - Counter(_shape(q["sql"]) for q in few)
    lines = [f"{page.name}: {len(few)} queries with few rows, {len(many)} with many."]
    lines += ["Repeated with many rows:"] + [f"  +{n} × {sql}" for sql, n in grown.most_common(10)]
    lines += ["With few rows:"] + [f"  {i}. {q['sql']}" for i, q in enumerate(few, 1)]
    lines += ["With many rows:"] + [f"  {i}. {q['sql']}" for i, q in enumerate(many, 1)]
    return "\n".join(lines)


@dataclass(frozen=True)
class Measurement:
    queries: list[dict[str, Any]]
    size: int  # bytes of the answer: the large project's must be longer, or it shows no more


def _measure(client: Client, url: str, headers: dict[str, str]) -> Measurement:
    """The queries of one GET, once a first GET has done what happens only once (a key's
    last use, a hold taken)."""
    cache.clear()  # the API's rate limit counts every request
    client.get(url, headers=headers)
    with CaptureQueriesContext(connection) as queries:
        response: Any = client.get(url, headers=headers)
        body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code in (200, 286), (url, response.status_code)
    return Measurement(list(queries.captured_queries), len(body))


def _ingest(project: Project, payload: dict[str, Any]) -> Conversation:
    """Stores and checks a conversation as the API would (the check runs on commit)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        result = ingestion.ingest_conversation(project=project, payload=payload, body=json.dumps(payload))
    return result.conversation


Measured = dict[str, tuple[Measurement, Measurement] | BaseException]


def _measure_every_page() -> Measured:
    """Each page's queries on the small project, then on the large one beside it."""
    project = Project.objects.create(name="Acme support", slug="acme")
    people = {}
    for username, role in (("alice", Role.ADMIN), ("bob", Role.REVIEWER), ("vic", Role.VIEWER)):
        people[username] = _user(username)
        Membership.objects.create(project=project, user=people[username], role=role)
    _, secret = ApiKey.issue(project=project, name="tests")
    clients = {}
    for username, user in people.items():
        clients[username] = Client()
        clients[username].force_login(user)
    clients["key"] = Client()

    def ingest(payload: dict[str, Any]) -> Conversation:
        return _ingest(project, payload)

    out: dict[str, Any] = {}
    for n, tag in ((1, "s"), (LARGE, "l")):
        world = _build(project, people["alice"], people["bob"], ingest, n=n, tag=tag)
        for page in PAGES:
            if isinstance(out.get(page.name), BaseException):
                continue
            headers = {"HX-Request": "true"} if page.htmx else {}
            if page.user == "key":
                headers["Authorization"] = f"Bearer {secret}"
            Project.objects.filter(pk=project.pk).update(double_review=page.double_review)
            try:
                measurement = _measure(clients[page.user], page.url(world), headers)
            except Exception as exc:  # reported by the page's own test
                out[page.name] = exc
            else:
                out.setdefault(page.name, []).append(measurement)
            Project.objects.filter(pk=project.pk).update(double_review=False)
    return {name: value if isinstance(value, BaseException) else tuple(value) for name, value in out.items()}


@pytest.fixture(scope="module")
def measured(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: Any) -> Iterator[Measured]:
    """Every page measured once for the module: building the two projects is the slow part,
    so it is done once, in a transaction rolled back at the end."""
    from grounding_site.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    with (
        django_db_blocker.unblock(),
        override_settings(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            VAR_DIR=tmp_path_factory.mktemp("var"),
        ),
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(webhooks, "enqueue", lambda ids: None)  # deliveries recorded, never sent
        # The report imports WeasyPrint when it renders; a stand-in module keeps Pango, which
        # the real one loads on import, out of the test (make test needs Python alone).
        patch.setitem(sys.modules, "weasyprint", types.SimpleNamespace(HTML=_FakePDF))
        try:
            with transaction.atomic():
                yield _measure_every_page()
                transaction.set_rollback(True)
        finally:
            app.conf.task_always_eager = eager
            cache.clear()


@pytest.mark.django_db  # nothing is queried here, but the test database is made for it
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_it_makes_as_many_queries_for_many_rows_as_for_few(page: Page, measured: Measured) -> None:
    """The page's query count with a large project beside it equals its count with only the
    small one."""
    result = measured[page.name]
    if isinstance(result, BaseException):
        raise result
    few, many = result
    if page.lists:
        assert many.size > few.size, f"{page.name}: the large project shows no more than the small one"
    assert len(many.queries) == len(few.queries), _explain(page, few.queries, many.queries)
