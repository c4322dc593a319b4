"""What the browser tests do over and over: store a conversation and check it as a worker
would, and sign in through the real form (by mouse, or by keyboard alone)."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import expect

from checks import checking, ingestion
from checks.models import CheckRun, RunStatus


def ingest_and_check(project: Any, payload: dict[str, Any]) -> Any:
    """Stores a conversation and runs its check here and now; the conversation."""
    result = ingestion.ingest_conversation(project=project, payload=payload, body=json.dumps(payload))
    checking.check_runs(run_ids=[result.run.pk])  # a no-op if the eager task already ran it
    run = CheckRun.objects.get(pk=result.run.pk)
    assert run.status == RunStatus.DONE, run.error
    return result.conversation


def sign_in(page: Any, live_server: Any, user: Any, *, by_keyboard: bool = False) -> None:
    """Signs in on the login page (every test user's password is "password")."""
    page.goto(f"{live_server.url}/login/")
    if by_keyboard:
        # The username field takes the focus as the page loads: wait for it before typing, or
        # a loaded machine types the name into nothing.
        expect(page.locator("input[name=username]")).to_be_focused()
        page.keyboard.type(user.username)
        page.keyboard.press("Tab")
        page.keyboard.type("password")
        with page.expect_navigation():
            page.keyboard.press("Enter")
    else:
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill("password")
        with page.expect_navigation():
            page.get_by_role("button", name="Sign in").click()
    assert "/login/" not in page.url, page.locator("p.error").all_inner_texts()
    assert page.locator(".topbar .who").inner_text().startswith(user.username)


def settle(page: Any) -> None:
    """Waits until the page's own requests are over (a turn page posts its hold as it loads),
    so the test's next query of the database does not meet the server's write on SQLite,
    whose one in-memory connection the live server and the test share."""
    page.wait_for_load_state("networkidle")
