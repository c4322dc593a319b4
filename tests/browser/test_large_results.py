"""A large tool result on the turn page, in a real browser: a 500-row result and a 5 MB one.

The answer stands within the first two screens (it stood 33,800 px down when the result was
printed whole); the result is folded (rows and objects open and close, long ones start
closed, the parts not drawn load as they are opened); an array of objects reads as a table;
choosing a claim opens the way to the span that grounds it, scrolls it into view and
highlights it; the card's evidence link leads to the same span in the conversation.
Screenshots go to test-results/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from checks.models import Finding, Turn
from tests.browser.desk import ingest_and_check, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"
SCREEN = 900  # the viewport's height (tests/browser/conftest.py)
STATES = ["open", "pending", "shipped", "on_hold"]
# One token to the suite (so the grounded row stays within what it indexes), 100 bytes.
NOTE = "kept-for-the-audit-trail-" + "0123456789abcdef" * 4 + "-of-the-order-desk-x"


def _orders(count: int, note: str) -> list[dict[str, Any]]:
    rows = []
    for i in range(count):
        row = {"id": f"ORD-{i:06d}", "status": STATES[i % 4], "total": round(10 + i * 1.37, 2)}
        rows.append({**row, "placed": f"2026-11-{1 + i % 28:02d}", **({"note": note} if note else {})})
    return rows


def _conversation(external_id: str, rows: list[dict[str, Any]], picked: int) -> dict[str, Any]:
    """One read of the orders, then an answer that misstates their count, names one deep in
    the result with its total, and sums two others (a computed figure). The count is said in
    words: a count in figures is read whole against the whole result, where a row's digits
    or a rounded total may ground it, and would open a range of its own."""
    call = {"id": "c1", "type": "function", "function": {"name": "search_orders", "arguments": "{}"}}
    pair = rows[2]["total"] + rows[3]["total"]
    answer = (
        f"I found forty open orders. {rows[picked]['id']} totals ${rows[picked]['total']:.2f}; "
        f"ORD-000002 and ORD-000003 come to ${pair:.2f} together."
    )
    return {
        "external_id": external_id,
        "messages": [
            {
                "role": "user",
                "content": f"How many orders are open, and what does {rows[picked]['id']} total?",
            },
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(rows)},
            {"role": "assistant", "content": answer},
        ],
    }


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def _our_errors(page: Any) -> list[str]:
    blocked = [m.text for m in page.console_messages if "Content Security Policy" in m.text]
    return [f"{e.name}: {e.message}" for e in page.errors] + blocked


@pytest.mark.parametrize(
    ("count", "picked", "note", "name"),
    [(500, 317, "", "500-rows"), (30_000, 12_345, NOTE, "5-mb")],
    ids=["500 rows", "5 MB"],
)
def test_a_large_result_reads_folded_and_its_spans_are_found(
    page: Any, live_server: Any, project: Any, bob: Any, count: int, picked: int, note: str, name: str
) -> None:
    rows = _orders(count, note)
    payload = _conversation(name, rows, picked)
    size = len(payload["messages"][2]["content"])
    assert size > (4_500_000 if count > 500 else 40_000)
    conversation = ingest_and_check(project, payload)
    turn = Turn.objects.get(conversation=conversation)
    computed = Finding.objects.get(turn=turn, code="computed_value")

    sign_in(page, live_server, bob)
    response = page.goto(f"{live_server.url}{turn.get_absolute_url()}")
    assert response.status == 200
    assert len(response.body()) < 400_000, "the result was drawn whole"

    # The answer starts within the first two screens.
    answer = page.locator(".msg.answer")
    assert answer.bounding_box()["y"] < 2 * SCREEN
    expect(answer).to_be_in_viewport()
    _shot(page, f"large-result-{name}-top.png")

    # The result in the conversation: folded to one line, then, opened, one closed line
    # saying how many rows it holds.
    message = page.locator("details.msg.role-tool")
    assert message.get_attribute("open") is None
    message.locator(":scope > summary").click()
    tree = page.locator(".msg.role-tool .rt")
    root = tree.locator(":scope > details.rt-node")
    expect(root.locator(":scope > summary")).to_contain_text(f"{count} items")
    assert root.get_attribute("open") is None
    root.locator(":scope > summary").click()
    first = "[0 … 99]" if count <= 10_000 else "[0 … 9999]"
    ranges = root.locator(":scope > .rt-kids > details.rt-node > summary .rt-range")
    expect(ranges.first).to_have_text(first)

    # A range not drawn yet loads when opened, then one of its rows, then it folds again.
    closed_range = root.locator(":scope > .rt-kids > details.rt-node[hx-get]").first
    closed_range.locator(":scope > summary").click()
    if count > 10_000:  # a range of 10,000 opens onto ranges of 100
        closed_range = closed_range.locator(":scope > .rt-kids > details.rt-node").first
        closed_range.locator(":scope > summary").click()
    row = closed_range.locator(":scope > .rt-kids > details.rt-node").first
    index = int(row.locator(":scope > summary .rt-index").inner_text())
    row.locator(":scope > summary").click()
    leaf = row.locator(".rt-leaf", has_text=f'"ORD-{index:06d}"')
    expect(leaf).to_be_visible()
    expect(row.locator(".rt-leaf", has_text='"total"')).to_contain_text(str(rows[index]["total"]))
    row.locator(":scope > summary").click()
    expect(leaf).to_be_hidden()

    # The rows as a table, a hundred at a time; the tree's rows give way while it shows.
    toggle = root.locator(":scope > details.rt-tableview")
    toggle.locator(":scope > summary").click()
    table = toggle.locator("table.rt-grid")
    expect(table.locator("thead th")).to_have_text(
        ["#", "id", "status", "total", "placed", *(["note"] if note else [])]
    )
    expect(table.locator("tbody tr")).to_have_count(100)
    expect(root.locator(":scope > .rt-kids")).to_be_hidden()
    expect(table.locator("tbody tr").nth(5)).to_contain_text("ORD-000005")
    _shot(page, f"large-result-{name}-table.png")
    toggle.get_by_role("button", name="next rows").click()
    expect(table.locator("tbody tr").first).to_contain_text("ORD-000100")
    toggle.locator(":scope > summary").click()
    expect(root.locator(":scope > .rt-kids")).to_be_visible()
    root.locator(":scope > summary").click()  # folded again, as it came

    # Choosing the claim of the row deep in the result (its total) opens the way to its span in the
    # conversation, scrolls it into view and highlights it.
    total = rows[picked]["total"]
    claim = page.locator(".msg.answer mark.claim-grounded", has_text=f"{total:.2f}")
    target = claim.get_attribute("data-target")
    claim.click()
    span = tree.locator(f'mark.rt-span[data-for~="{target}"]')
    expect(span).to_have_text(json.dumps(total))
    expect(span).to_have_class(re.compile(r"\brt-chosen\b"))
    expect(span).to_be_in_viewport()
    _shot(page, f"large-result-{name}-claim.png")

    # The computed figure's claim leads to its card, its operands marked there in view.
    page.locator(f'.msg.answer mark[data-target="finding-{computed.pk}"]').click()
    card = page.locator(f"#finding-{computed.pk}")
    operand = card.locator("mark.rt-span.rt-chosen")
    expect(operand).to_be_in_viewport()
    assert operand.inner_text() in (str(rows[2]["total"]), str(rows[3]["total"]))

    # The card's evidence link leads to the same span where the result stands.
    link = card.locator("a[data-reveal]").first
    link.click()
    there = page.locator(f"#{link.get_attribute('data-reveal')}")
    expect(there).to_have_class(re.compile(r"\brt-chosen\b"))
    expect(there).to_be_in_viewport()
    assert tree.locator(f"#{link.get_attribute('data-reveal')}").count() == 1
    _shot(page, f"large-result-{name}-evidence.png")
    assert _our_errors(page) == []
