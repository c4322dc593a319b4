"""An argument finding's card shows the call, the argument's value marked where it stands in
the arguments, and links to every place before the call that could have supplied it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from checks.models import Finding
from checks.views.argument_evidence import marked_arguments
from tests.browser.desk import ingest_and_check

pytestmark = pytest.mark.django_db
CORPUS = Path(settings.BASE_DIR) / "tests" / "data" / "corpora" / "airline-dev" / "conversations.jsonl"


def test_the_value_is_marked_at_its_path_in_the_laid_out_arguments() -> None:
    arguments = json.dumps({"order": "A-1", "lines": [{"sku": "B-2", "qty": 3}, {"sku": "C-3", "qty": 3}]})
    cut = marked_arguments(arguments, "lines[1].qty", "lines[1].qty = 3")
    assert cut is not None
    marked = [(i, p.text) for i, p in enumerate(cut) if p.mark]
    assert [text for _, text in marked] == ["3"]
    before = "".join(p.text for p in cut[: marked[0][0]])
    assert before.rstrip().endswith('"sku": "C-3",\n      "qty":'), before[-40:]
    assert marked_arguments(arguments, "lines[7].qty", "") is None
    assert marked_arguments("not json", "order", "") is None


def test_a_real_argument_flag_shows_its_call_and_where_the_value_could_have_come_from(
    client: Any, project: Any, alice: Any
) -> None:
    payload = next(
        json.loads(line) for line in CORPUS.read_text().splitlines() if '"tau-airline-10-0-10"' in line
    )
    conversation = ingest_and_check(project, payload)
    finding = Finding.objects.filter(conversation=conversation, code="unsupported_argument").first()
    assert finding is not None, "the corpus turn no longer has an argument flag"
    client.force_login(alice)
    page = client.get(finding.turn.get_absolute_url()).content.decode()
    card = page[page.index(f'id="finding-{finding.pk}"') :]
    card = card[: card.index("</article>")]
    path = finding.details["path"]
    assert f"argument <code>{path}</code>" in card
    assert re.search(rf'<mark class="claim claim-flagged" title="{re.escape(path)} = [^"]*">', card)
    anchors = re.findall(r'<a href="#(msg-\d+|sysprompt)">', card)
    assert "sysprompt" in anchors and len(anchors) > 2
    for anchor in anchors:
        assert f'id="{anchor}"' in page, f"{anchor} leads nowhere on the page"
    assert "No tool result in this conversation holds this claim." not in card


def test_an_action_finding_lists_the_calls_its_turn_ran_each_a_link(
    client: Any, project: Any, alice: Any, ingest: Any
) -> None:
    from tests.conftest import load_example

    client.force_login(alice)
    nothing = ingest(load_example("01"))
    finding = Finding.objects.get(conversation=nothing, checker="action_claims")
    page = client.get(finding.turn.get_absolute_url()).content.decode()
    assert "No call ran in this turn." in page

    failed = ingest(load_example("04"))
    finding = Finding.objects.get(conversation=failed, checker="action_claims")
    page = client.get(finding.turn.get_absolute_url()).content.decode()
    listed = re.search(r"data-turn-calls>The calls this turn ran: (.*?)</p>", page)
    assert listed is not None
    anchors = re.findall(r'href="#(call-\d+)"', listed.group(1))
    assert anchors
    for anchor in anchors:
        assert f'id="{anchor}"' in page
