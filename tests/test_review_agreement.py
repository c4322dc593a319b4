"""Blind double review, Cohen's kappa between reviewers, and precision per checker and code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from checks import review
from checks.models import ApiKey, AuditEvent, Correction, CorrectionState, Finding, FindingStatus, Turn

pytestmark = pytest.mark.django_db


def test_kappa_matches_the_textbook_example() -> None:
    # 50 items: both yes 20, both no 15, A yes/B no 5, A no/B yes 10 -> kappa 0.4.
    pairs = [("y", "y")] * 20 + [("n", "n")] * 15 + [("y", "n")] * 5 + [("n", "y")] * 10
    assert review.cohens_kappa(pairs) == pytest.approx(0.4)
    assert review.cohens_kappa([]) is None
    assert review.cohens_kappa([("y", "y")] * 3) == 1.0


def test_double_review_waits_for_two_blind_decisions(
    client: Any, project: Any, alice: Any, bob: Any, ingest: Any
) -> None:
    project.double_review = True
    project.save()
    ingest("01")
    finding = Finding.objects.get(severity="flag")
    review.record_decision(finding=finding, reviewer=bob, verdict="confirmed")
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.OPEN

    # alice cannot see bob's decision before she decides.
    client.force_login(alice)
    url = Turn.objects.get().get_absolute_url()
    html = client.get(url).content.decode()
    assert "Confirmed by bob" not in html and "1 other review recorded, hidden" in html

    review.record_decision(finding=finding, reviewer=alice, verdict="dismissed", reason="Other")
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.OPEN  # they disagree
    html = client.get(url).content.decode()
    assert "Confirmed by bob" in html and "Dismissed by alice" in html  # both in: nothing hidden

    # A third reviewer settles it.
    from tests.conftest import _member

    carol = _member(project, "carol", "reviewer")
    review.record_decision(finding=finding, reviewer=carol, verdict="confirmed")
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.CONFIRMED
    assert review.agreement(project).pairs == 1 and review.agreement(project).agreed == 0


def test_nothing_a_reviewer_opens_shows_another_decision_before_their_own(
    client: Any, project: Any, alice: Any, bob: Any, ingest: Any
) -> None:
    """The card, the turn's audit log, the finding's history and an export all keep bob's
    verdict and reason from alice until she has decided; a disagreement is no longer blind,
    so the third reviewer sees both verdicts, and finds it listed on the agreement page."""
    project.double_review = True
    project.save()
    ingest("01")
    finding = Finding.objects.get(severity="flag")
    review.record_decision(finding=finding, reviewer=bob, verdict="confirmed", reason="bob-reason-7")

    def what_alice_can_open(user: Any) -> dict[str, str]:
        client.force_login(user)
        return {
            "turn page": client.get(finding.turn.get_absolute_url()).content.decode(),
            "turn audit log": client.get(f"/p/acme/turns/{finding.turn_id}/audit").content.decode(),
            "history": client.get(f"/p/acme/history/finding/{finding.pk}").content.decode(),
            "export": b"".join(client.get("/p/acme/exports/file?kind=jsonl").streaming_content).decode(),
        }

    for where, text in what_alice_can_open(alice).items():
        assert "bob-reason-7" not in text and "finding.confirmed" not in text, where

    review.record_decision(finding=finding, reviewer=alice, verdict="dismissed", reason="alice-reason")
    for where, text in what_alice_can_open(alice).items():
        assert "bob-reason-7" in text, where

    # They disagree: the finding leaves blind review, so the third reviewer who settles it
    # sees both verdicts and both reasons, and the agreement page lists it for one.
    from tests.conftest import _member

    carol = _member(project, "carol", "reviewer")
    for where, text in what_alice_can_open(carol).items():
        assert "bob-reason-7" in text and "alice-reason" in text, where
    listed = client.get("/p/acme/agreement")
    assert [d.finding.pk for d in listed.context["disagreements"]] == [finding.pk]
    review.record_decision(finding=finding, reviewer=carol, verdict="confirmed")
    assert review.disagreements(project) == []


def _streamed(response: Any) -> str:
    assert response.status_code == 200, response.content[:300]
    return b"".join(response.streaming_content).decode()


def test_a_correction_under_blind_review_waits_for_the_other_reviewers_decision(
    client: Any, project: Any, alice: Any, bob: Any, vic: Any, ingest: Any
) -> None:
    """bob chooses Needs correction. Until alice has decided, neither she, a viewer nor an API
    key sees his correction, its author or his verdict: not on the turn page, not in an export
    (CSV or JSONL, from the page or the API). alice can neither approve it nor learn of it by
    proposing her own. Once she has decided, the finding is disputed and leaves blind review:
    she and the third reviewer who settles it see both verdicts, both reasons and the
    correction, and an API key sees them too."""
    project.double_review = True
    project.save()
    ingest("01")
    finding = Finding.objects.get(severity="flag")
    review.record_decision(finding=finding, reviewer=bob, verdict="correction", reason="bob-reason-7")
    correction = Correction.objects.get()
    review.edit_correction(correction=correction, editor=bob, text="bob-fix-7: nothing was saved.")
    _, key = ApiKey.issue(project=project, name="reader", scopes=["read"])
    keyed = Client(headers={"Authorization": f"Bearer {key}"})
    turn_url = finding.turn.get_absolute_url()

    def doors(user: Any) -> dict[str, str]:
        client.force_login(user)
        return {
            "turn page": client.get(turn_url).content.decode(),
            "page jsonl": _streamed(client.get("/p/acme/exports/file?kind=jsonl")),
            "page csv": _streamed(client.get("/p/acme/exports/file?kind=csv")),
            "api jsonl": _streamed(keyed.get("/api/v1/findings.jsonl")),
            "api csv": _streamed(keyed.get("/api/v1/findings.csv")),
        }

    for user in (alice, vic):
        for where, text in doors(user).items():
            assert "bob-fix-7" not in text and "bob-reason-7" not in text, (user, where)
            assert "Approve correction" not in text and f"corrections/{correction.pk}/" not in text
    record = json.loads(doors(alice)["api jsonl"])
    assert (record["decisions"], record["corrections"]) == ([], [])

    client.force_login(alice)
    headers = {"HX-Request": "true"}
    refused = client.post(f"/p/acme/corrections/{correction.pk}/approve", {"note": "ok"}, headers=headers)
    assert refused.status_code == 404
    proposed = client.post(f"/p/acme/findings/{finding.pk}/correction", {"text": "mine"}, headers=headers)
    assert proposed.status_code == 400 and "bob" not in proposed.content.decode()
    assert "decide" in proposed.content.decode().lower()
    assert Correction.objects.get().state == CorrectionState.PROPOSED

    review.record_decision(finding=finding, reviewer=alice, verdict="dismissed", reason="alice-reason")
    from tests.conftest import _member

    carol = _member(project, "carol", "reviewer")
    for user in (alice, carol):
        for where, text in doors(user).items():
            if where.endswith("csv"):  # a row holds the latest decision, and approved corrections
                assert "alice-reason" in text, (user, where)
                continue
            assert "bob-fix-7" in text and "bob-reason-7" in text and "alice-reason" in text, (user, where)
    client.force_login(carol)
    assert "Approve correction" in client.get(turn_url).content.decode()
    approved = client.post(f"/p/acme/corrections/{correction.pk}/approve", {"note": "ok"}, headers=headers)
    assert approved.status_code == 200
    assert Correction.objects.get().state == CorrectionState.APPROVED


def test_the_agreement_page_shows_kappa_and_precision(
    client: Any, project: Any, alice: Any, bob: Any, vic: Any, ingest: Any
) -> None:
    for name in ("01", "05", "07", "09"):
        ingest(name)
    flags = list(Finding.objects.filter(severity="flag").order_by("id"))
    for finding, (a, b) in zip(
        flags,
        [
            ("confirmed", "confirmed"),
            ("dismissed", "dismissed"),
            ("confirmed", "dismissed"),
            ("confirmed", "confirmed"),
        ],
        strict=False,
    ):
        review.record_decision(finding=finding, reviewer=alice, verdict=a, reason="r")
        review.record_decision(finding=finding, reviewer=bob, verdict=b, reason="r")
    client.force_login(vic)
    response = client.get("/p/acme/agreement")
    assert response.status_code == 200
    agreement = response.context["agreement"]
    assert (agreement.pairs, agreement.agreed) == (4, 3)
    assert agreement.kappa == pytest.approx(
        review.cohens_kappa([("c", "c"), ("d", "d"), ("c", "d"), ("c", "c")])
    )
    by_checker = {p.checker: p for p in response.context["by_checker"]}
    assert sum(p.decided for p in by_checker.values()) == 4
    assert "Cohen's kappa" in response.content.decode()


def test_only_an_admin_turns_double_review_on_and_it_is_audited(
    client: Any, project: Any, alice: Any, bob: Any
) -> None:
    client.force_login(bob)
    assert client.post("/p/acme/agreement/double-review", {"enabled": "on"}).status_code == 403
    client.force_login(alice)
    client.post("/p/acme/agreement/double-review", {"enabled": "on"})
    project.refresh_from_db()
    assert project.double_review
    event = AuditEvent.objects.get()
    assert (event.verb, event.before, event.after) == (
        "project.double_review_changed",
        {"double_review": False},
        {"double_review": True},
    )
