"""Corrections with four eyes: the suite proposes, a reviewer edits (seeing the diff against
the answer), a second reviewer approves or rejects; never the author. Comments too."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError

from checks import review
from checks.models import AuditEvent, Correction, CorrectionState, Finding, FindingStatus, Turn

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
def finding(ingest: Any) -> Finding:
    ingest("01")
    return Finding.objects.get()


def _post(client: Any, url: str, data: dict[str, str], htmx: bool = True) -> Any:
    return client.post(url, data, headers={"HX-Request": "true"} if htmx else {})


def test_needs_correction_confirms_and_starts_the_suites_correction(
    client: Any, bob: Any, finding: Any
) -> None:
    client.force_login(bob)
    response = _post(client, f"/p/acme/findings/{finding.pk}/decide", {"verdict": "correction"})
    assert response.status_code == 200
    finding.refresh_from_db()
    assert finding.status == FindingStatus.CONFIRMED
    correction = Correction.objects.get()
    assert (correction.author, correction.state) == (bob, "proposed")
    # The suite's text, as the contract has it, set right after the sentence it corrects, so
    # the reviewer edits that sentence in place.
    answer = finding.turn.answer
    claim_sentence_end = answer.index(".", finding.claim_end) + 1
    assert correction.text.startswith(answer[:claim_sentence_end] + " [" + finding.correction + "]")
    assert "You wrote this correction" in response.content.decode()
    verbs = list(AuditEvent.objects.order_by("id").values_list("verb", flat=True))
    assert verbs == ["finding.confirmed", "correction.proposed"]


def test_the_author_edits_and_sees_the_diff_against_the_answer(client: Any, bob: Any, finding: Any) -> None:
    client.force_login(bob)
    url = f"/p/acme/findings/{finding.pk}/correction"
    assert _post(client, url, {"text": "I could not save your favourite tea."}).status_code == 200
    response = _post(client, url, {"text": "I could not save your favourite tea, sorry."})
    html = response.content.decode()
    correction = Correction.objects.get()
    assert correction.text == "I could not save your favourite tea, sorry."
    assert "<ins>" in html and "<del>" in html
    edited = AuditEvent.objects.get(verb="correction.edited")
    assert edited.before == {"text": "I could not save your favourite tea."}
    assert edited.after["text"] == correction.text


def test_the_diff_is_word_level_and_keeps_every_character() -> None:
    pieces = review.diff("I've saved your tea.", "I could not save your tea.")
    assert "".join(p.text for p in pieces if p.op != "insert") == "I've saved your tea."
    assert "".join(p.text for p in pieces if p.op != "delete") == "I could not save your tea."
    assert {p.op for p in pieces} == {"equal", "insert", "delete"}


def test_a_second_reviewer_approves_and_the_author_cannot(
    client: Any, alice: Any, bob: Any, finding: Any
) -> None:
    client.force_login(bob)
    _post(client, f"/p/acme/findings/{finding.pk}/correction", {"text": "Nothing was saved."})
    correction = Correction.objects.get()

    refused = _post(client, f"/p/acme/corrections/{correction.pk}/approve", {})
    assert refused.status_code == 403
    assert "second reviewer" in refused.content.decode()
    assert Correction.objects.get().state == CorrectionState.PROPOSED

    client.force_login(alice)
    html = client.get(Turn.objects.get().get_absolute_url()).content.decode()
    assert "Approve correction" in html
    response = _post(client, f"/p/acme/corrections/{correction.pk}/approve", {"note": "Good"})
    assert response.status_code == 200
    correction.refresh_from_db()
    assert (correction.state, correction.approver, correction.note) == ("approved", alice, "Good")
    assert correction.decided_at is not None
    event = AuditEvent.objects.get(verb="correction.approved")
    assert (event.actor, event.after["author"]) == (alice, "bob")
    # Decided: neither can approve it again, nor can its author edit it.
    assert _post(client, f"/p/acme/corrections/{correction.pk}/approve", {}).status_code == 400
    with pytest.raises(review.ReviewError):
        review.edit_correction(correction=correction, editor=bob, text="changed")


def test_the_database_refuses_an_author_approving_their_own(bob: Any, finding: Any) -> None:
    correction = review.propose_correction(finding=finding, author=bob, text="x")
    correction.approver = bob
    with pytest.raises(IntegrityError):
        correction.save()


def test_a_rejection_needs_a_reason_and_a_new_correction_may_follow(
    client: Any, alice: Any, bob: Any, finding: Any
) -> None:
    correction = review.propose_correction(finding=finding, author=bob, text="Nothing was saved.")
    client.force_login(alice)
    assert _post(client, f"/p/acme/corrections/{correction.pk}/reject", {"note": ""}).status_code == 400
    assert (
        _post(client, f"/p/acme/corrections/{correction.pk}/reject", {"note": "Too vague"}).status_code == 200
    )
    assert Correction.objects.get().state == CorrectionState.REJECTED
    # Someone else may now propose another; only its author may edit it.
    _post(client, f"/p/acme/findings/{finding.pk}/correction", {"text": "I did not save it."})
    newer = Correction.objects.get(state="proposed")
    assert newer.author == alice
    client.force_login(bob)
    refused = _post(client, f"/p/acme/findings/{finding.pk}/correction", {"text": "mine now"})
    assert refused.status_code == 403 and "alice wrote this correction" in refused.content.decode()


def test_without_htmx_each_form_returns_to_the_card(client: Any, bob: Any, finding: Any) -> None:
    client.force_login(bob)
    response = _post(client, f"/p/acme/findings/{finding.pk}/correction", {"text": "Not saved."}, htmx=False)
    assert response.status_code == 302
    assert response["Location"].endswith(f"#finding-{finding.pk}")


def test_corrections_and_comments_are_escaped(client: Any, alice: Any, bob: Any, finding: Any) -> None:
    review.propose_correction(finding=finding, author=bob, text=f"Sorry {HOSTILE}")
    review.add_comment(finding=finding, author=bob, text=f"see {HOSTILE}")
    client.force_login(alice)
    html = client.get(Turn.objects.get().get_absolute_url()).content.decode()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # text, diff, comment


def test_a_comment_is_kept_and_audited(client: Any, bob: Any, finding: Any) -> None:
    client.force_login(bob)
    response = _post(client, f"/p/acme/findings/{finding.pk}/comments", {"text": "Asked the user."})
    assert response.status_code == 200 and "Asked the user." in response.content.decode()
    event = AuditEvent.objects.get()
    assert (event.verb, event.object_type, event.after["finding"]) == ("comment.added", "comment", finding.pk)
    assert _post(client, f"/p/acme/findings/{finding.pk}/comments", {"text": "  "}).status_code == 400


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("findings/{f}/correction", {"text": "x"}),
        ("findings/{f}/comments", {"text": "x"}),
        ("findings/{f}/assign", {"assignee": "bob"}),
        ("findings/{f}/decide", {"verdict": "correction"}),
        ("corrections/{c}/approve", {}),
        ("corrections/{c}/reject", {"note": "no"}),
        ("turns/{t}/hold", {}),
    ],
)
def test_viewers_get_403_and_outsiders_404(
    client: Any, alice: Any, bob: Any, vic: Any, olga: Any, finding: Any, path: str, data: dict[str, str]
) -> None:
    correction = review.propose_correction(finding=finding, author=alice, text="x")
    url = "/p/acme/" + path.format(f=finding.pk, c=correction.pk, t=finding.turn_id)
    before = AuditEvent.objects.count()
    client.force_login(vic)
    assert client.post(url, data).status_code == 403
    client.force_login(olga)
    assert client.post(url, data).status_code == 404
    assert AuditEvent.objects.count() == before


def test_an_approval_is_sent_to_the_projects_webhooks(
    alice: Any, bob: Any, finding: Any, django_capture_on_commit_callbacks: Any, monkeypatch: Any
) -> None:
    from checks import webhooks
    from checks.models import Webhook, WebhookDelivery

    Webhook.objects.create(
        project=finding.project, url="https://example.test/hook", secret="s", events=["correction.approved"]
    )
    sent: list[list[int]] = []
    monkeypatch.setattr(webhooks, "enqueue", sent.append)
    correction = review.propose_correction(finding=finding, author=bob, text="Nothing was saved.")
    with django_capture_on_commit_callbacks(execute=True):
        review.approve_correction(correction=correction, approver=alice)
    delivery = WebhookDelivery.objects.get()
    assert delivery.event == "correction.approved"
    assert delivery.payload["data"]["correction"] == {
        "id": correction.pk,
        "text": "Nothing was saved.",
        "author": "bob",
        "approver": "alice",
        "approved_at": Correction.objects.get().decided_at.isoformat(),
    }
    assert sent == [[delivery.pk]]


def test_the_diff_is_by_sentence_then_by_word_with_unchanged_runs_counted() -> None:
    from checks.review import diff

    original = "Hello. The parcel left on May 3. It weighs 2 kg. The driver is Ana. She calls ahead. Bye."
    revised = "Hello. The parcel left on May 4. It weighs 2 kg. The driver is Ana. She calls ahead. Bye."
    pieces = [(p.op, p.text) for p in diff(original, revised)]
    assert ("delete", "3") in pieces and ("insert", "4") in pieces
    assert ("skip", "… 3 unchanged sentences …\n") in pieces
    assert "".join(t for op, t in pieces if op in ("equal", "delete")).startswith(
        "Hello. The parcel left on May 3. "
    )
