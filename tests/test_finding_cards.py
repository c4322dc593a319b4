"""What a finding's card on the turn page says, and what it offers: info findings are no
alarm, "no tool result holds this" is said of values only, and the judge's absence is said
once, on the project's settings page, not on every turn."""

from __future__ import annotations

import re
from typing import Any

import pytest

from checks.models import Finding, Turn
from tests.conftest import load_example

pytestmark = pytest.mark.django_db


def card(html: str, finding: Finding) -> str:
    found = re.search(rf'<article [^>]*id="finding-{finding.pk}".*?</article>', html, re.S)
    assert found, f"no card for finding {finding.pk}"
    return found.group(0)


def turn_page(client: Any, conversation: Any) -> str:
    response = client.get(Turn.objects.get(conversation=conversation, index=0).get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(("example", "code"), [("10", "computed_value"), ("11", "established")])
def test_an_info_card_offers_no_red_confirm(
    client: Any, bob: Any, ingest: Any, example: str, code: str
) -> None:
    conversation = ingest(example)
    finding = Finding.objects.get(conversation=conversation, code=code)
    assert finding.severity == "info"
    client.force_login(bob)
    shown = card(turn_page(client, conversation), finding)
    assert re.search(r'<button class="confirm agree"[^>]*>Agree</button>', shown)
    assert 'class="confirm"' not in shown and ">Confirm<" not in shown


def test_a_flag_card_still_offers_confirm(client: Any, bob: Any, ingest: Any) -> None:
    conversation = ingest("01")
    finding = Finding.objects.get(conversation=conversation)
    client.force_login(bob)
    shown = card(turn_page(client, conversation), finding)
    assert '<button class="confirm" name="verdict" value="confirmed" type="submit">Confirm</button>' in shown


def test_agreeing_with_an_info_finding_is_a_decision(client: Any, bob: Any, ingest: Any) -> None:
    conversation = ingest("11")
    finding = Finding.objects.get(conversation=conversation, code="established")
    client.force_login(bob)
    response = client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"})
    assert response.status_code == 302
    finding.refresh_from_db()
    assert finding.status == "confirmed"


def test_no_result_holds_it_is_said_of_a_value_not_of_an_action(client: Any, alice: Any, ingest: Any) -> None:
    client.force_login(alice)
    invented = ingest("09")  # an identifier no result carries
    value = Finding.objects.get(conversation=invented, code="unsupported_value")
    assert "No tool result in this conversation holds this claim." in card(turn_page(client, invented), value)
    action = ingest("01")  # "I've saved", with no call that could have saved
    finding = Finding.objects.get(conversation=action)
    assert not finding.value
    shown = card(turn_page(client, action), finding)
    assert "No tool result" not in shown and "noevidence" not in shown


def test_explanations_show_the_value_as_written_without_markdown(
    client: Any, alice: Any, ingest: Any
) -> None:
    conversation = ingest("10")
    finding = Finding.objects.get(conversation=conversation, code="computed_value")
    client.force_login(alice)
    shown = card(turn_page(client, conversation), finding)
    assert "“53.2%” is written in no tool result" in shown
    assert "`" not in finding.explanation


def test_the_judges_absence_is_said_on_the_settings_page_not_on_the_turn(
    client: Any, alice: Any, ingest: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    first, second = ingest("06"), ingest(_renamed("06", "again"))
    unavailable = Finding.objects.filter(code="judge_unavailable")
    assert {f.conversation_id for f in unavailable} == {first.pk, second.pk}
    client.force_login(alice)
    html = turn_page(client, first)
    assert "judge_unavailable" not in html and "RECEIPTS_JUDGE_URL" not in html
    # The turn's other finding is still there.
    other = Finding.objects.get(conversation=first, code="false_absence")
    card(html, other)
    settings = client.get("/p/acme/settings").content.decode()
    assert settings.count("RECEIPTS_JUDGE_URL") == 1
    assert "The model-based checks did not run on 2 conversations" in settings


def test_a_turn_with_only_the_judges_absence_says_nothing_was_found(
    client: Any, alice: Any, ingest: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    conversation = ingest("06")
    Finding.objects.filter(conversation=conversation).exclude(code="judge_unavailable").delete()
    client.force_login(alice)
    assert "Nothing found on this turn." in turn_page(client, conversation)


def _renamed(example: str, external_id: str) -> dict[str, Any]:
    data = load_example(example)
    data["external_id"] = external_id
    return data


@pytest.mark.parametrize(
    ("example", "said"),
    [
        ("11", "the typed answer would go out <strong>as checked</strong>"),
        ("12", "the typed answer would be held back and <strong>the fallback answer</strong> sent instead"),
    ],
)
def test_the_negative_claims_summary_says_how_the_answer_would_go_out(
    client: Any, alice: Any, ingest: Any, example: str, said: str
) -> None:
    conversation = ingest(example)
    client.force_login(alice)
    html = turn_page(client, conversation)
    assert said in html
    assert "would go out <strong>fallback" not in html
