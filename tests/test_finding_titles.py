"""Finding codes read in plain words beside the code, and repeated codes counted once."""

from __future__ import annotations

import re
from typing import Any

import pytest

from checks.finding_titles import TITLES, title_of
from checks.models import Finding
from tests.conftest import invented_parts


def test_every_code_the_contract_names_has_a_title() -> None:
    """The contract's table of codes, read from its own text, is covered whole."""
    from pathlib import Path

    contract = Path(__file__).resolve().parents[2] / "shared" / "CONTRACT.md"
    if not contract.exists():
        pytest.skip("the contract is not beside this checkout")
    codes = set(re.findall(r"^\|[^|]*\| `([a-z_]+)` \|", contract.read_text(), re.M))
    assert codes and codes <= set(TITLES), sorted(codes - set(TITLES))


def test_an_unknown_code_reads_as_itself() -> None:
    assert title_of("some_new_code") == "Some new code"


@pytest.mark.django_db
def test_the_turn_page_titles_each_card_and_counts_repeated_codes(
    client: Any, project: Any, alice: Any
) -> None:
    from tests.browser.desk import ingest_and_check

    conversation = ingest_and_check(project, invented_parts("three-invented", 3))
    flags = Finding.objects.filter(conversation=conversation, code="unsupported_value")
    assert flags.count() == 3
    client.force_login(alice)
    page = client.get(f"/p/acme/turns/{flags[0].turn_id}/").content.decode()
    assert f'<strong class="codetitle">{title_of("unsupported_value")}</strong>' in page
    assert '<code class="code">unsupported_value</code>' in page
    assert 'unsupported_value <span class="times">×3</span>' in page
    queue = client.get("/p/acme/").content.decode()
    assert 'unsupported_value <span class="times" aria-label="3 findings">×3</span>' in queue
