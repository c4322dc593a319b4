"""A huge number in a conversation, stored or checked inline: the run is done and reports what
it reports without the number (and what it finds of the number itself), never a 500.

A tool result holding one 400-digit integer once failed the stored run with OverflowError,
every checker with it, and /api/v1/check with a 500. The cases are the suite tests' own
(``tests/suite/huge_numbers.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.models import CheckRun, Finding, RunStatus
from tests.suite.huge_numbers import VARIANTS, Key, Variant, conversation

pytestmark = pytest.mark.django_db

CHECK = "/api/v1/check"


def stored(conversation_: Any) -> set[Key]:
    return {
        (f.turn.index, f.checker, f.code, f.value)
        for f in Finding.objects.filter(conversation=conversation_).select_related("turn")
    }


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.name)
def test_the_stored_run_finds_what_it_finds_without_the_number(ingest: Any, variant: Variant) -> None:
    plain = ingest(conversation("plain"))
    huge = ingest(variant.apply(conversation("huge")))
    run = CheckRun.objects.get(conversation=huge)
    assert (run.status, run.error) == (RunStatus.DONE, "")
    assert stored(huge) == stored(plain) | variant.extra


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.name)
def test_the_inline_check_answers_what_it_answers_without_the_number(
    post_conversation: Any, variant: Variant
) -> None:
    plain = post_conversation(conversation("plain"), path=CHECK)
    huge = post_conversation(variant.apply(conversation("huge")), path=CHECK)
    assert huge.status_code == 200

    def reported(response: Any) -> set[Key]:
        return {
            (f["turn"], f["checker"], f["code"], f.get("value") or "") for f in response.json()["findings"]
        }

    assert reported(huge) == reported(plain) | variant.extra
