"""Rewriting how values are written in real conversations changes no flag (issue 25).

A value is the same value however it is written ("2024-05-19" and "May 19, 2024", "$1000"
and "$1,000.00", "22:00" and "10:00 PM"), so each rewrite of ``tests/notation_rewrites.py``
run over the answers and user messages of real traffic must leave the suite's flags as
they were: none added, none removed. The conversations are the sample of both shared
corpora kept in ``tests/data/corpora/``; ``bench/real_traffic.py --rewrites`` measures the
whole corpora.

Not every rewrite holds yet. The invariance test runs the rewrites named in
``INVARIANT_REWRITES``, those the suite already passes on the sample; a rewrite joins the
list once the suite passes it, and the goal is that all do. The sample itself is tested
too: every rewrite, listed or not, must find a value to rewrite in some answer of it, so
that the list can grow to all of them and mean something.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import REPO

from checks.suite import run_suite
from tests.notation_rewrites import (
    BY_NAME,
    REWRITES,
    FlagChanges,
    NotationRewrite,
    flag_changes,
    rewrite_conversation,
)

SAMPLES = REPO / "tests" / "data" / "corpora"
CORPORA = ("airline-dev", "retail-dev")

# The rewrites that change no flag on the sample today; see the module's docstring.
INVARIANT_REWRITES = (
    "iso_date_to_written",
    "iso_date_to_slashed",
    "written_date_to_iso",
    "dollar_sign_to_usd",
    "dollars_add_grouping_and_cents",
    "dollars_drop_grouping_and_cents",
    "clock_24h_to_12h",
)


def _conversations(corpus: Path) -> list[dict[str, Any]]:
    with (corpus / "conversations.jsonl").open() as lines:
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def sample() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each sampled conversation of both corpora, with the suite's report on it as it is."""
    return [
        (conversation, run_suite(conversation))
        for name in CORPORA
        for conversation in _conversations(SAMPLES / name)
    ]


@pytest.mark.parametrize("name", INVARIANT_REWRITES)
def test_a_rewrite_of_how_values_are_written_changes_no_flag(
    name: str, sample: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    changes = FlagChanges()
    for conversation, report in sample:
        rewritten = rewrite_conversation(conversation, BY_NAME[name])
        if rewritten.values:
            changes += flag_changes(report, rewritten, run_suite(rewritten.conversation))
    assert changes.unchanged, "\n".join(
        [f"+ {flag.describe()}" for flag in changes.added]
        + [f"- {flag.describe()}" for flag in changes.removed]
    )


@pytest.mark.parametrize("rewrite", REWRITES, ids=[rewrite.name for rewrite in REWRITES])
def test_the_sample_gives_every_rewrite_an_answer_to_change(
    rewrite: NotationRewrite, sample: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    assert sum(rewrite_conversation(conversation, rewrite).answers_changed for conversation, _ in sample) > 0


def test_the_invariant_rewrites_are_rewrites_of_the_harness() -> None:
    assert set(INVARIANT_REWRITES) <= set(BY_NAME)
    assert len(set(INVARIANT_REWRITES)) == len(INVARIANT_REWRITES)


@pytest.mark.parametrize("name", CORPORA)
def test_each_sample_keeps_its_licence_and_labels_beside_it(name: str) -> None:
    corpus = SAMPLES / name
    assert "MIT License" in (corpus / "LICENSE").read_text()
    with (corpus / "labels.jsonl").open() as lines:
        done = {label["external_id"] for label in map(json.loads, lines) if label.get("done")}
    assert done == {conversation["external_id"] for conversation in _conversations(corpus)}
