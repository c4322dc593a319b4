"""Deciding and going on in one action: "Confirm and next" records the verdict, then leads
to the next finding of the turn still open to the reviewer, else to the next turn of the
queue they came from, else back to that queue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.models import Decision, Finding
from tests.browser.desk import ingest_and_check
from tests.conftest import invented_parts, load_example

pytestmark = pytest.mark.django_db


def _decide_next(client: Any, finding: Finding, **headers: str) -> Any:
    return client.post(f"/p/acme/findings/{finding.pk}/decide", {"then_next": "confirmed"}, **headers)


def test_it_goes_to_the_next_open_flag_of_the_turn_then_to_the_next_turn(
    client: Any, project: Any, bob: Any
) -> None:
    older = ingest_and_check(project, load_example("01"))
    newer = ingest_and_check(project, invented_parts("parts", 3))
    first, second, third = Finding.objects.filter(conversation=newer, severity="flag").order_by("claim_start")
    client.force_login(bob)

    response = _decide_next(client, first)
    assert response.status_code == 302
    assert response["Location"] == f"{first.turn.get_absolute_url()}#finding-{second.pk}"
    assert Decision.objects.get(finding=first).verdict == "confirmed"

    # By htmx, the next flag on the same page: the card comes back and the page moves on.
    response = _decide_next(client, second, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and f'id="finding-{second.pk}"' in response.content.decode()
    assert json.loads(response["HX-Trigger"])["goto-finding"] == {"id": f"finding-{third.pk}"}

    # The turn's last open flag: on to the next turn of the queue (newest first).
    response = _decide_next(client, third, HTTP_HX_REQUEST="true")
    assert response.status_code == 204
    following = Finding.objects.get(conversation=older).turn
    assert response["HX-Redirect"] == following.get_absolute_url()

    # Nothing after the last turn: back to the queue.
    response = _decide_next(client, Finding.objects.get(conversation=older))
    assert response.status_code == 302 and response["Location"].startswith("/p/acme/")
    assert "/turns/" not in response["Location"]


def test_a_dismissal_still_needs_its_reason(client: Any, project: Any, bob: Any) -> None:
    conversation = ingest_and_check(project, invented_parts("parts", 1))
    finding = Finding.objects.get(conversation=conversation, severity="flag")
    client.force_login(bob)
    response = client.post(f"/p/acme/findings/{finding.pk}/decide", {"then_next": "dismissed"})
    assert response.status_code == 400 and not Decision.objects.exists()
