"""The XSS corpus (tests/security/xss_corpus.py) placed everywhere untrusted text reaches a
page, and every such page opened in Chromium: no payload may run.

Each payload goes into a conversation of its own, in the user message, the tool's name, its
arguments and its result, the answer (shown escaped with its marks, and in the *Rendered*
markdown view), the title, the external id, the agent's name and model; and into the review
around it: a comment, a correction and a rejection note, a dismissal reason; and into the
project's name, key names, saved views, webhook addresses and delivery logs, and options.

The main pass runs with the Content-Security-Policy bypassed (Playwright's ``bypass_csp``),
so escaping and sanitizing alone must hold; a second pass keeps the policy and expects the
header on every page and no violation reported (a violation would mean markup from the
corpus reached the page and only the policy stopped it). On each page every <details> is
opened (for ``ontoggle``), and besides ``window.__xss`` the DOM is audited for what must
never come from the data: event-handler and hx-on attributes, javascript:/data: URLs,
frames, objects, base and meta refresh, foreign scripts, styles and images; and no request
may leave for another host (remote images are not loaded).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from django.conf import settings
from django.urls import reverse

from checks import checking, ingestion, review
from checks.models import (
    ApiKey,
    Conversation,
    Finding,
    Membership,
    Project,
    SavedView,
    Webhook,
    WebhookDelivery,
)
from tests.security.xss_corpus import Payload, corpus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIELDS = [
    "user message",
    "tool name",
    "tool arguments",
    "tool result",
    "answer",
    "title",
    "external id",
    "agent name",
    "agent model",
    "comment",
    "correction",
    "correction note",
    "dismissal reason",
]
SIDE_FIELDS = ["project name", "API key name", "saved view name", "webhook URL", "delivery log", "options"]

# What the DOM of a page may not hold, whatever the data: returns a description of each.
AUDIT_JS = r"""
async () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  await new Promise((resolve) => setTimeout(resolve, 50));  // toggle, error, animation events
  const bad = [];
  const origin = location.origin;
  const urlAttrs = ["href", "src", "action", "formaction", "data", "xlink:href", "poster",
                    "background", "srcset", "ping", "codebase", "lowsrc", "dynsrc"];
  const describe = (el) => el.outerHTML.slice(0, 160);
  for (const el of document.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    for (const a of Array.from(el.attributes)) {
      const name = a.name.toLowerCase();
      const value = a.value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
      if (name.startsWith("on")) bad.push("handler " + name + ": " + describe(el));
      if (/^(data-)?hx-on/.test(name) || name === "hx-vals" && value.startsWith("js:"))
        bad.push("htmx script attribute " + name + ": " + describe(el));
      if (name === "srcdoc") bad.push("srcdoc: " + describe(el));
      if (urlAttrs.includes(name) &&
          ["javascript:", "vbscript:", "livescript:", "data:text"].some((s) => value.startsWith(s)))
        bad.push("script URL in " + name + ": " + describe(el));
      if (name === "style" && /expression\(|javascript:|url\(|binding|behavior/.test(value))
        bad.push("style " + describe(el));
    }
    if (["iframe", "frame", "frameset", "object", "embed", "portal", "applet", "base", "template",
         "style", "xmp", "plaintext"].includes(tag) && el.closest("body"))
      bad.push("element " + tag + ": " + describe(el));
    if (tag === "meta" && (el.httpEquiv || "").toLowerCase() === "refresh") bad.push("meta refresh");
    if (tag === "script" && !(el.src && (el.src.startsWith(origin + "/static/") ||
                                         el.src === origin + "/api/v1/docs?script=")))
      bad.push("script not from /static/: " + describe(el));
    if (tag === "img" && el.src && !el.src.startsWith(origin + "/") && !el.src.startsWith("data:image/"))
      bad.push("foreign image: " + describe(el));
    if (tag === "link" && el.href && !el.href.startsWith(origin + "/"))
      bad.push("foreign link: " + describe(el));
  }
  return {ran: window.__xss === undefined ? null : String(window.__xss), bad: bad};
}
"""


def _conversation(p: Payload) -> dict[str, Any]:
    """One conversation carrying the payload in every field a sender controls. The answer
    states a value no tool returned (a flag) and one the result carries (a grounded mark)."""
    text = p.text
    tool = f"lookup_{p.id} {text}"[:200]
    return {
        "external_id": f"xss-{p.id} {text}"[:255],
        "title": f"{text} (xss {p.id})"[:500],
        "agent": {"name": text[:200], "model": text[:200]},
        "turns": [
            {
                "tools_offered": [tool],
                "messages": [
                    {"role": "user", "content": f"{text}\n\nWhich port is down on lva1-mds01?"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call-1",
                                "type": "function",
                                "function": {"name": tool, "arguments": json.dumps({"q": text})},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "call-1",
                        "content": json.dumps({"note": text, "port": "fc1/3", "fcid": "0x650000"}),
                    },
                    {
                        "role": "assistant",
                        "content": f"{text}\n\nPort fc1/3 has fcid 0x650000; its WWN is 0xef0101. {text}",
                    },
                ],
            }
        ],
    }


def _seed(project: Project, alice: Any, bob: Any, carl: Any, payloads: list[Payload]) -> dict[str, Any]:
    """Stores and checks every payload's conversation and reviews its findings with it."""
    refused: list[str] = []
    conversations: list[Conversation] = []
    for p in payloads:
        doc = _conversation(p)
        try:
            result = ingestion.ingest_conversation(project=project, payload=doc, body=json.dumps(doc))
        except ingestion.IngestError as exc:  # a field the contract refuses is not shown anywhere
            refused.append(f"{p.id}: {exc.errors[:1]}")
            continue
        checking.check_runs(run_ids=[result.run.pk])  # a no-op when the eager task ran it
        conversations.append(result.conversation)
        findings = list(Finding.objects.filter(conversation=result.conversation, severity="flag"))
        for index, finding in enumerate(findings):
            review.add_comment(finding=finding, author=bob, text=p.text)
            correction = review.propose_correction(finding=finding, author=bob, text=p.text)
            if index == 0:
                review.reject_correction(correction=correction, approver=carl, note=p.text)
                review.record_decision(
                    finding=finding, reviewer=carl, verdict="dismissed", reason=p.text, respect_hold=False
                )
    side = payloads[: min(len(payloads), 40)]
    project.name = f"Acme {side[0].text}"[:100]
    project.options = {"notes": [p.text for p in side]}
    project.save(update_fields=["name", "options"])
    for p in side:
        ApiKey.issue(project=project, name=p.text[:100])
        SavedView.objects.create(
            project=project, user=alice, name=f"{p.id} {p.text}"[:100], query="status=all"
        )
        hook = Webhook.objects.create(
            project=project, url=f"https://hooks.invalid/{p.text}"[:500], secret="s", events=["turn.flagged"]
        )
        WebhookDelivery.objects.create(
            project=project,
            webhook=hook,
            event="turn.flagged",
            payload={"note": p.text},
            response_excerpt=p.text,
            error=p.text,
            status_code=500,
        )
    return {"conversations": conversations, "refused": refused}


class Visit:
    """Opens pages, records what ran, what the DOM holds and what left for other hosts."""

    def __init__(self, context: Any, base: str) -> None:
        self.base = base
        self.page = context.new_page()
        self.dialogs: list[str] = []
        self.foreign: list[str] = []
        self.csp: list[str] = []
        self.problems: list[str] = []
        self.pages = 0
        self.page.on("dialog", self._dialog)
        self.page.on("console", self._console)
        self.page.on("request", self._request)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.csp.append(f"{self.page.url}: {message.text[:300]}")

    def _request(self, request: Any) -> None:
        url = request.url
        if not url.startswith(self.base) and not url.startswith(("data:", "about:", "blob:")):
            self.foreign.append(url)  # to a host that does not resolve: it fails, but must not start

    def open(self, path: str, *, expect_csp: bool = False) -> None:
        url = urljoin(self.base, path)
        response = self.page.goto(url, wait_until="load")
        self.pages += 1
        if response is None or response.status != 200:
            self.problems.append(f"{path}: answered {response.status if response else 'nothing'}")
            return
        if expect_csp:
            policy = response.headers.get("content-security-policy", "")
            script_src = next((d for d in policy.split(";") if d.strip().startswith("script-src")), "")
            if "'self'" not in script_src or "unsafe-inline" in script_src or "unsafe-eval" in script_src:
                self.problems.append(f"{path}: no strict script-src in the CSP header: {policy!r}")
        found = self.page.evaluate(AUDIT_JS)
        if not self.page.url.startswith(url.split("#")[0]):
            self.problems.append(f"{path}: the page navigated away to {self.page.url}")
            return
        if found["ran"] is not None:
            self.problems.append(f"{path}: payload {found['ran']} ran")
        self.problems.extend(f"{path}: {bad}" for bad in found["bad"])

    def close(self) -> None:
        self.page.close()


def _paths(project: Project, conversations: list[Conversation]) -> list[str]:
    slug = project.slug
    paths = [
        reverse("home"),
        reverse("overview", args=[slug]),
        reverse("agreement", args=[slug]),
        reverse("members", args=[slug]),
        reverse("keys", args=[slug]),
        reverse("project-settings", args=[slug]),
        reverse("webhooks", args=[slug]),
        reverse("exports", args=[slug]),
        reverse("api-docs"),
    ]
    for query in ("", "?status=all&severity=all"):
        paths.append(reverse("queue", args=[slug]) + query)
    # Every turn page (it shows every field); the conversation and history pages repeat the
    # title, agent, comments, corrections and reasons, so every fourth of them is enough.
    for index, convo in enumerate(conversations):
        for turn in convo.turns.all():
            paths.append(reverse("turn", args=[slug, turn.pk]))
        if index % 4 == 0:
            paths.append(reverse("conversation", args=[slug, convo.pk]))
    flagged = Finding.objects.filter(project=project, severity="flag").order_by("id")
    for finding in list(flagged)[2::4]:
        paths.append(reverse("history", args=[slug, "finding", finding.pk]))
    return paths


def _queue_pages(visit: Visit, project: Project) -> list[str]:
    """The later pages of the full queue, by following its 'more' links."""
    found: list[str] = []
    path = reverse("queue", args=[project.slug]) + "?status=all&severity=all"
    for _ in range(20):
        visit.page.goto(urljoin(visit.base, path), wait_until="load")
        more = visit.page.locator("a[href*='after=']")
        if more.count() == 0:
            break
        path = more.first.get_attribute("href") or ""
        if not path.startswith("/"):
            path = reverse("queue", args=[project.slug]) + path
        found.append(path)
    return found


def _report(figures: dict[str, Any]) -> None:
    out = Path(settings.BASE_DIR) / "test-results"
    out.mkdir(exist_ok=True)
    (out / "xss-corpus.json").write_text(json.dumps(figures, indent=2))


def test_no_payload_runs_on_any_page(
    browser: Any, live_server: Any, project: Any, alice: Any, bob: Any, capsys: Any
) -> None:
    from django.contrib.auth import get_user_model

    started = time.monotonic()
    carl = get_user_model().objects.create_user(username="carl", password="password")
    Membership.objects.create(project=project, user=carl, role="reviewer")
    payloads = corpus()
    seeded = _seed(project, alice, bob, carl, payloads)
    seeding = round(time.monotonic() - started, 1)
    conversations = seeded["conversations"]
    assert len(payloads) >= 200
    assert len(conversations) >= 200, f"refused by ingestion: {seeded['refused'][:5]}"
    assert Finding.objects.filter(project=project, severity="flag").count() >= len(conversations)

    paths = _paths(project, conversations)
    figures: dict[str, Any] = {"payloads": len(payloads), "stored": len(conversations)}

    # Pass 1: the policy bypassed, so escaping and sanitizing alone must hold.
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    context.add_cookies([_session_cookie(live_server, alice)])
    visit = Visit(context, live_server.url)
    try:
        for path in [*paths, *_queue_pages(visit, project)]:
            visit.open(path)
        # The rendered view really renders: markdown became markup, links kept, images text.
        turn = conversations[0].turns.first()
        visit.page.goto(urljoin(visit.base, reverse("turn", args=[project.slug, turn.pk])))
        assert visit.page.locator("[data-rendered-answer] p").count() >= 1
        # Not a vacuous pass: the payload is on the page, as text a reviewer can read.
        shown = visit.page.evaluate("document.body.innerText")
        assert payloads[0].text in shown, "the first payload is not shown on its turn page"
        pass1 = {"pages": visit.pages, "problems": visit.problems, "dialogs": visit.dialogs}
        pass1["foreign requests"] = visit.foreign
    finally:
        visit.close()
        context.close()

    # Pass 2: the policy enforced, on a page of each kind and a sample of turns.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([_session_cookie(live_server, alice)])
    visit = Visit(context, live_server.url)
    sample = [p for p in paths if "/turns/" not in p and "/conversations/" not in p and "/history/" not in p]
    sample += [p for p in paths if "/turns/" in p][::10] + [p for p in paths if "/conversations/" in p][::25]
    try:
        for path in sample:
            visit.open(path, expect_csp=path != reverse("api-docs"))
        pass2 = {"pages": visit.pages, "problems": visit.problems, "dialogs": visit.dialogs}
        pass2["foreign requests"], pass2["csp violations"] = visit.foreign, visit.csp
    finally:
        visit.close()
        context.close()

    executed = sorted(
        {line for line in pass1["problems"] + pass2["problems"] if " ran" in line}
        | set(pass1["dialogs"] + pass2["dialogs"])
    )
    figures.update(
        {
            "fields per payload": len(FIELDS),
            "fields": FIELDS,
            "side fields (first 40 payloads)": SIDE_FIELDS,
            "pages visited, CSP bypassed": pass1["pages"],
            "pages visited, CSP enforced": pass2["pages"],
            "executed": len(executed),
            "DOM problems": len(pass1["problems"]) + len(pass2["problems"]) - len(executed),
            "remote requests": len(pass1["foreign requests"]) + len(pass2["foreign requests"]),
            "CSP violations": len(pass2["csp violations"]),
            "seconds": round(time.monotonic() - started, 1),
            "seconds seeding": seeding,
        }
    )
    _report(figures)
    with capsys.disabled():
        print(
            f"\nXSS corpus: {figures['payloads']} payloads tried in {len(FIELDS)} fields each "
            f"(+{len(SIDE_FIELDS)} project-wide fields); pages visited: {pass1['pages']} with the CSP "
            f"bypassed, {pass2['pages']} with it enforced; executed: {figures['executed']}; "
            f"DOM problems: {figures['DOM problems']}; remote requests: {figures['remote requests']}; "
            f"CSP violations: {figures['CSP violations']} ({figures['seconds']}s)"
        )
    problems = pass1["problems"] + pass2["problems"] + executed
    assert not problems, "\n".join(problems[:50])
    assert not pass1["foreign requests"] + pass2["foreign requests"], "requests left for other hosts"
    assert not pass2["csp violations"], "\n".join(pass2["csp violations"][:20])


def _session_cookie(live_server: Any, user: Any) -> dict[str, Any]:
    """A signed-in session for the browser, made without the sign-in form (and its limits)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return {
        "name": settings.SESSION_COOKIE_NAME,
        "value": session.session_key,
        "url": live_server.url,
        "httpOnly": True,
    }
