"""Every route of the URL configuration against every persona: who may read, who may change,
and that nobody outside a project learns anything about it.

The routes are enumerated from ``get_resolver().url_patterns`` (recursively), so a page or
endpoint added without an entry in MATRIX below fails ``test_every_route_is_in_the_matrix``
and cannot be forgotten. Each route's path parameters are filled with real objects of the
project *acme* (named by the kwargs: slug, pk of a key, conversation, turn, finding,
correction, saved view, membership, export job, webhook, delivery; kind and object_id of a
history), and each method it accepts is sent as each persona:

    anonymous     no session, no key            pages: redirect to login; API: 401
    key_own       a valid key of acme           the API only; pages treat it as anonymous
    key_other     a valid key of another project  404 for acme's objects, no acme data anywhere
    key_revoked   a revoked key of acme         401
    key_expired   an expired key of acme        401
    outsider      olga, admin of another project  404 (acme's existence is not revealed)
    viewer        vic                            reads; 403 on anything that changes
    reviewer      bob                            reads and reviews; 403 on admin pages
    admin         alice                          everything

Each request runs inside a savepoint that is rolled back, so every persona meets the same
state (an admin removing a member does not change what the next request sees). Any answer
that refuses (401, 403, 404, 405, a redirect to login) and any answer to someone outside
acme must not contain acme's data; methods a route does not accept must never succeed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from tests.conftest import load_example

# --- what each persona may expect ----------------------------------------------------------

LOGIN = "login"  # 302 to the sign-in page
OK = "ok"  # the request got past access control: 2xx, a redirect elsewhere, or a 4xx about its body
OK_NODATA = "ok, none of acme's data"  # allowed, but it is someone else's view of the world
DENIED_401, DENIED_403, DENIED_404 = 401, 403, 404

PERSONAS = [
    "anonymous",
    "key_own",
    "key_other",
    "key_revoked",
    "key_expired",
    "outsider",
    "viewer",
    "reviewer",
    "admin",
]
KEYS = ["key_own", "key_other", "key_revoked", "key_expired"]
MEMBERS = ["viewer", "reviewer", "admin"]
ROLE_ORDER = {"viewer": 0, "reviewer": 1, "admin": 2}

# Statuses that mean "past access control" for OK: the view ran for this persona. A 400, 409
# or 422 is the view refusing the (deliberately empty) body, not the persona.
PASSED = {200, 201, 204, 207, 286, 301, 302, 303, 400, 409, 413, 422}
# What a method the route does not accept may answer: refused, never done.
NOT_ACCEPTED = {401, 403, 404, 405}

Expect = dict[str, Any]  # persona -> LOGIN, OK, OK_NODATA or a status


def page(role: str | None = "viewer") -> Expect:
    """A page behind sign-in: outsiders 404, members below ``role`` 403, API keys count for
    nothing (a page is not the API). ``role=None``: any signed-in person (no project)."""
    out: Expect = {p: LOGIN for p in ["anonymous", *KEYS]}
    if role is None:
        out.update({p: OK for p in MEMBERS}, outsider=OK_NODATA)
        return out
    out["outsider"] = DENIED_404
    for member in MEMBERS:
        out[member] = OK if ROLE_ORDER[member] >= ROLE_ORDER[role] else DENIED_403
    return out


def api(*, detail: bool = False, key_only: bool = False) -> Expect:
    """An API operation: bad keys 401; another project's key and outsiders see nothing of
    acme (404 for one of its objects); ``key_only`` operations refuse a session with 403."""
    out: Expect = {"anonymous": DENIED_401, "key_revoked": DENIED_401, "key_expired": DENIED_401}
    out["key_own"] = OK
    out["key_other"] = DENIED_404 if detail else OK_NODATA
    if key_only:
        out.update({p: DENIED_403 for p in ["outsider", *MEMBERS]})
    else:
        out["outsider"] = DENIED_404 if detail else OK_NODATA
        out.update({p: OK for p in MEMBERS})
    return out


def public() -> Expect:
    return {p: OK_NODATA for p in PERSONAS}


def only(expect: Expect, **overrides: Any) -> Expect:
    return {**expect, **overrides}


# Route name -> {method: expectations}. Methods not listed must not succeed.
MATRIX: dict[str, dict[str, Expect]] = {
    # probes and signing in
    "healthz": {"GET": public()},
    "readyz": {"GET": public()},
    "login": {"GET": public(), "POST": public()},
    "logout": {"POST": {p: LOGIN for p in PERSONAS}},
    # the desk
    "home": {"GET": page(None)},
    "queue": {"GET": page()},
    "project-settings": {"GET": page("admin"), "POST": page("admin")},
    "keys": {"GET": page("admin"), "POST": page("admin")},
    # What the project's keys sent that gave no conversation: any member reads it.
    "refusals": {"GET": page()},
    "revoke-key": {"POST": page("admin")},
    "conversation": {"GET": page()},
    "run-status": {"GET": page()},
    "turn": {"GET": page()},
    "turn-audit": {"GET": page()},
    "decide": {"POST": page("reviewer")},
    "save-correction": {"POST": page("reviewer")},
    "comment": {"POST": page("reviewer")},
    "assign": {"POST": page("reviewer")},
    "approve-correction": {"POST": page("reviewer")},
    "reject-correction": {"POST": page("reviewer")},
    "turn-hold": {"POST": page("reviewer")},
    "turn-release": {"POST": page("reviewer")},
    # A part of a tool result, fetched as the turn page opens it: any member reads it.
    "result-part": {"GET": page()},
    "bulk": {"POST": page("reviewer")},
    "queue-progress": {"GET": page("reviewer")},
    "save-view": {"POST": page()},
    # A saved view is its owner's (alice's): other members do not find it.
    "delete-view": {"POST": only(page(), viewer=DENIED_404, reviewer=DENIED_404)},
    "members": {"GET": page(), "POST": page("admin")},
    "member-role": {"POST": page("admin")},
    "member-remove": {"POST": page("admin")},
    "member-invite": {"POST": page("admin")},
    "invitation-revoke": {"POST": page("admin")},
    # An invitation link works for whoever holds it; one that names nothing is gone for all.
    "invitation": {"GET": {p: 410 for p in PERSONAS}, "POST": {p: 410 for p in PERSONAS}},
    "history": {"GET": page()},
    "agreement": {"GET": page()},
    # Every conversation, and the project's whole audit log: any member reads them.
    "conversations": {"GET": page()},
    "audit-log": {"GET": page()},
    "audit-verify": {"GET": page()},
    "double-review": {"POST": page("admin")},
    "overview": {"GET": page()},
    "project-report": {"GET": page()},
    "conversation-report": {"GET": page()},
    "exports": {"GET": page()},
    "export-file": {"GET": page()},
    "export-start": {"POST": page()},
    # A background export is its starter's alone (alice's here): other members get a 404.
    "export-job": {"GET": only(page(), viewer=DENIED_404, reviewer=DENIED_404)},
    "export-job-file": {"GET": only(page(), viewer=DENIED_404, reviewer=DENIED_404)},
    "webhooks": {"GET": page(), "POST": page("admin")},
    "webhook-toggle": {"POST": page("admin")},
    "webhook-redeliver": {"POST": page("admin")},
    # the API
    "api-conversations": {"GET": api(), "POST": api(key_only=True)},
    "api-conversations-bulk": {"POST": api(key_only=True)},
    "api-check": {"POST": api(key_only=True)},
    "api-capability-statement": {"GET": only(api(), outsider=OK_NODATA, **dict.fromkeys(MEMBERS, OK_NODATA))},
    "api-stats": {"GET": api()},
    "otlp-traces": {"POST": api(key_only=True)},
    "otlp-logs": {"POST": api(key_only=True)},
    # What became of an export: a key of its project (one that sends, or reads), or a member.
    "api-otlp-export": {"GET": api(detail=True)},
    "api-conversation": {"GET": api(detail=True)},
    "api-findings": {"GET": api(detail=True)},
    # A project's findings and report: a key's own project; a member names one (400 unnamed).
    "api-findings-csv": {"GET": api()},
    "api-findings-jsonl": {"GET": api()},
    "api-report-pdf": {"GET": api()},
    # The schema and its page describe the API, not any project's data: open to all, but a
    # key that is sent must be a valid one.
    "api-schema": {"GET": only(public(), key_revoked=DENIED_401, key_expired=DENIED_401)},
    "api-docs": {"GET": only(public(), key_revoked=DENIED_401, key_expired=DENIED_401)},
}

# Routes deliberately outside the matrix, with the reason.
SKIPPED = {
    "admin/": "Django's admin site: staff accounts only, guarded by Django's own permission checks",
    "static/": "static files are served by WhiteNoise's middleware, not by the URL configuration",
}


# --- the routes, from the URL configuration ------------------------------------------------


@dataclass(frozen=True)
class Route:
    name: str
    route: str
    params: tuple[str, ...]


def routes() -> list[Route]:
    """Every named route of the project, recursively, except the SKIPPED prefixes."""
    found: list[Route] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if any(route.startswith(skipped) for skipped in SKIPPED):
                continue
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route)
            elif isinstance(entry, URLPattern):
                params = tuple(getattr(entry.pattern, "converters", {}) or ())
                found.append(Route(entry.name or f"<unnamed {route}>", route, params))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_route_is_in_the_matrix() -> None:
    enumerated = {r.name for r in routes()}
    unknown = sorted(enumerated - MATRIX.keys())
    stale = sorted(MATRIX.keys() - enumerated)
    assert not unknown, f"routes without an access expectation in MATRIX: {unknown}"
    assert not stale, f"MATRIX names routes that no longer exist: {stale}"
    names = [r.name for r in routes()]
    assert len(names) == len(set(names)), "two routes share a name: the matrix could not tell them apart"


def test_skipped_prefixes_are_really_routed_elsewhere() -> None:
    """admin/ is the only skipped prefix in the URL configuration; static/ is not in it at all."""
    tops = [str(entry.pattern) for entry in get_resolver().url_patterns]
    assert "admin/" in tops
    assert not any(top.startswith("static/") for top in tops)


# --- the world the requests meet -----------------------------------------------------------

SECRET_MARKERS = ("acme-private-7f3a", "Acme support", "sencha")  # in acme's data only


@dataclass
class World:
    clients: dict[str, Client]
    headers: dict[str, dict[str, str]]
    kwargs: Callable[[Route], dict[str, Any]]


@pytest.fixture
def world(
    project: Any, other_project: Any, alice: Any, bob: Any, vic: Any, olga: Any, ingest: Any
) -> Iterator[World]:
    from django.contrib.auth import get_user_model

    from checks import administration, review
    from checks.models import (
        ApiKey,
        ExportJob,
        ExportStatus,
        Finding,
        Membership,
        RawExport,
        SavedView,
        Webhook,
        WebhookDelivery,
    )
    from checks.reporting import jobs

    payload = load_example("01")
    payload["external_id"] = "acme-private-7f3a"
    payload["title"] = "acme-private-7f3a title"
    conversation = ingest(payload)
    turn = conversation.turns.order_by("index").first()
    finding = Finding.objects.filter(conversation=conversation).first()
    assert finding is not None, "the example must produce a finding"

    # A second flagged conversation whose finding has no correction waiting, for the review
    # actions (a waiting correction may be edited by its author only: a rule, not access).
    second = load_example("05")
    second["external_id"] = "acme-private-7f3a-second"
    reviewed = Finding.objects.filter(conversation=ingest(second)).first()
    assert reviewed is not None, "the second example must produce a finding"

    carl = get_user_model().objects.create_user(username="carl", password="password")
    Membership.objects.create(project=project, user=carl, role="reviewer")
    dora = get_user_model().objects.create_user(username="dora", password="password")
    target_membership = Membership.objects.create(project=project, user=dora, role="viewer")
    correction = review.propose_correction(finding=finding, author=carl, text="A corrected answer.")
    review.add_comment(finding=finding, author=carl, text="A note.")
    view = SavedView.objects.create(project=project, user=alice, name="mine", query="status=all")
    key_to_revoke, _ = ApiKey.issue(project=project, name="to revoke")
    hook = Webhook.objects.create(project=project, url="http://127.0.0.1:9/hook", secret="s", events=["*"])
    delivery = WebhookDelivery.objects.create(project=project, webhook=hook, event="turn.flagged", payload={})
    export_path = jobs.exports_dir() / f"matrix-{project.pk}-{timezone.now().timestamp()}.csv"
    export_path.write_text("id\nacme-private-7f3a\n")
    job = ExportJob.objects.create(
        project=project,
        requested_by=alice,
        kind="csv",
        status=ExportStatus.DONE,
        path=str(export_path.relative_to(jobs.exports_dir().parent)),
        filename="acme.csv",
    )

    invitation, _ = administration.invite(project=project, actor=alice, role="viewer")
    export = RawExport.objects.create(
        project=project, body=b'{"resourceSpans": []}', content_type="application/json", state="stored"
    )
    _, own = ApiKey.issue(project=project, name="own")
    _, other = ApiKey.issue(project=other_project, name="other")
    revoked_key, revoked = ApiKey.issue(project=project, name="revoked")
    revoked_key.revoked_at = timezone.now()
    revoked_key.save(update_fields=["revoked_at"])
    _, expired = ApiKey.issue(project=project, name="expired", expires_at=timezone.now() - timedelta(days=1))

    clients = {p: Client() for p in PERSONAS}
    for persona, user in {"outsider": olga, "viewer": vic, "reviewer": bob, "admin": alice}.items():
        clients[persona].force_login(user)
    bearer = {"key_own": own, "key_other": other, "key_revoked": revoked, "key_expired": expired}
    headers = {p: {"Authorization": f"Bearer {bearer[p]}"} if p in bearer else {} for p in PERSONAS}

    pk_of = {
        "revoke-key": key_to_revoke.pk,
        "conversation": conversation.pk,
        "run-status": conversation.pk,
        "conversation-report": conversation.pk,
        "api-conversation": conversation.pk,
        "api-findings": conversation.pk,
        "turn": turn.pk,
        "turn-audit": turn.pk,
        "turn-hold": turn.pk,
        "turn-release": turn.pk,
        "result-part": reviewed.turn_id,  # a turn with a tool result
        "decide": reviewed.pk,
        "save-correction": reviewed.pk,
        "comment": reviewed.pk,
        "assign": reviewed.pk,
        "approve-correction": correction.pk,
        "reject-correction": correction.pk,
        "delete-view": view.pk,
        "member-role": target_membership.pk,
        "member-remove": target_membership.pk,
        "invitation-revoke": invitation.pk,
        "export-job": job.pk,
        "export-job-file": job.pk,
        "webhook-toggle": hook.pk,
        "webhook-redeliver": delivery.pk,
        "api-otlp-export": export.pk,
    }

    def kwargs(route: Route) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for param in route.params:
            if param == "slug":
                values[param] = project.slug
            elif param == "pk":
                assert route.name in pk_of, f"{route.name}: say which object its pk names in pk_of"
                values[param] = pk_of[route.name]
            elif param == "kind":
                values[param] = "finding"
            elif param == "object_id":
                values[param] = str(finding.pk)
            elif param == "token":  # no invitation has it
                values[param] = "no-such-invitation"
            elif param == "seq":  # the tool message of the turn "result-part" names
                values[param] = reviewed.turn.messages.get(role="tool").seq
            else:
                raise AssertionError(f"{route.name}: no object known for the path parameter {param!r}")
        return values

    try:
        yield World(clients, headers, kwargs)
    finally:
        export_path.unlink(missing_ok=True)


def _send(world: World, persona: str, method: str, url: str) -> Any:
    """One request as one persona, rolled back afterwards so the next meets the same state."""
    from django.core.cache import cache

    cache.clear()  # sign-in pauses and API rates count per test elsewhere, not across personas
    client = world.clients[persona]
    savepoint = transaction.savepoint_create()
    try:
        send = getattr(client, method.lower())
        if method in ("GET", "HEAD"):
            return send(url, headers=world.headers[persona])
        return send(url, data=b"", content_type="application/json", headers=world.headers[persona])
    finally:
        transaction.savepoint_rollback(savepoint)


def _body(response: Any) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


def _leaks(response: Any) -> list[str]:
    body = _body(response)
    return [m for m in SECRET_MARKERS if m.encode() in body]


def _check(expected: Any, response: Any) -> str | None:
    """What is wrong with a response given what was expected, or None."""
    status = response.status_code
    location = response.get("Location", "")
    to_login = status == 302 and location.startswith(reverse("login"))
    if expected == LOGIN:
        return None if to_login else f"expected a redirect to sign in, got {status} {location}"
    if expected in (OK, OK_NODATA):
        if status not in PASSED or to_login:
            return f"expected to pass access control, got {status} {location}"
        if expected == OK_NODATA and (leaked := _leaks(response)):
            return f"answered {status} with acme's data: {leaked}"
        return None
    if status != expected:
        return f"expected {expected}, got {status} {location}"
    return None


def _not_accepted(read: Expect | None, persona: str, response: Any) -> str | None:
    """A method the route is not listed for: refused, or (on a read-only page that does not
    restrict its methods) answered as the GET would be, to the same personas only."""
    if response.status_code in NOT_ACCEPTED or _check(LOGIN, response) is None:
        return None
    if read is not None and read[persona] in (OK, OK_NODATA):
        return _check(read[persona], response)
    return f"a method the route does not accept answered {response.status_code}"


def _route(name: str) -> Route:
    (route,) = [r for r in routes() if r.name == name]
    return route


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_route_against_every_persona(world: World, name: str) -> None:
    route = _route(name)
    url = reverse(name, kwargs=world.kwargs(route))
    problems: list[str] = []
    for method in ("GET", "POST", "PUT", "DELETE"):
        expectations = MATRIX[name].get(method)
        for persona in PERSONAS:
            response = _send(world, persona, method, url)
            if expectations is None:
                wrong = _not_accepted(MATRIX[name].get("GET"), persona, response)
            else:
                wrong = _check(expectations[persona], response)
            allowed = (expectations or MATRIX[name].get("GET") or {}).get(persona)
            if wrong is None and allowed != OK:
                # Refused, or allowed for someone outside acme: not a byte of acme's data.
                if leaked := _leaks(response):
                    wrong = f"answered {response.status_code} with acme's data: {leaked}"
            if wrong:
                problems.append(f"{method} {url} as {persona}: {wrong}")
    assert not problems, "\n".join(problems)


def test_the_matrix_names_every_persona_for_every_method() -> None:
    for name, methods in MATRIX.items():
        for method, expectations in methods.items():
            assert set(expectations) == set(PERSONAS), f"{name} {method}: {set(PERSONAS) ^ set(expectations)}"


def test_members_see_acme_data_where_the_matrix_says_ok(world: World) -> None:
    """The matrix's OK is not a vacuous pass: a member really reads acme's conversation."""
    for persona, name in (("viewer", "conversation"), ("key_own", "api-conversation")):
        route = _route(name)
        response = _send(world, persona, "GET", reverse(name, kwargs=world.kwargs(route)))
        assert response.status_code == 200
        assert b"acme-private-7f3a" in _body(response), name


def test_a_revoked_key_is_refused_even_on_its_own_project(world: World) -> None:
    response = _send(world, "key_revoked", "GET", reverse("api-stats"))
    assert response.status_code == 401
    assert "revoked" in json.loads(response.content)["detail"]
