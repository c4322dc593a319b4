"""The shared examples: each reports what EXPECTED.json lists, and nothing else of severity flag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import examples_dir

from checks.suite import run_suite

EXAMPLES = examples_dir()
EXPECTED: dict[str, list[dict[str, Any]]] = json.loads((EXAMPLES / "EXPECTED.json").read_text())


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def key(finding: dict[str, Any]) -> tuple[int, str, str, str]:
    return (finding["turn"], finding["checker"], finding["code"], finding["severity"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_reports_exactly_what_the_example_expects(name: str) -> None:
    """Every expected finding appears (with its value, where one is given), and no other flag."""
    result = run_suite(example(name))
    expected = sorted(key(f) for f in EXPECTED[name])
    flags = sorted(key(f) for f in result["findings"] if f["severity"] == "flag")
    reported = {key(f) for f in result["findings"]}
    assert set(expected) <= reported
    assert flags == [k for k in expected if k[3] == "flag"]
    for wanted in EXPECTED[name]:
        if "value" in wanted:
            values = [f.get("value") for f in result["findings"] if key(f) == key(wanted)]
            assert wanted["value"] in values


def test_every_finding_span_points_at_its_own_text() -> None:
    """Offsets are Python indices into the turn's answer, for every example."""
    for path in sorted(Path(EXAMPLES).glob("[0-9]*.json")):
        data = json.loads(path.read_text())
        answers = [t["messages"][-1]["content"] for t in data["turns"]]
        for finding in run_suite(data)["findings"]:
            claim = finding["claim"]
            if claim is not None:
                assert answers[finding["turn"]][claim["start"] : claim["end"]] == claim["text"], path.name


@pytest.mark.parametrize(
    ("name", "code"),
    [("05_count_misstatement", "count_misstatement"), ("07_fabricated_tool", "fabricated_tool_reference")],
)
def test_the_text_reading_reaches_the_same_finding_without_structured_claims(name: str, code: str) -> None:
    """With the runtime's claims removed, reading the answer finds the same defect."""
    data = example(name)
    for turn in data["turns"]:
        turn.pop("claims", None)
    assert code in [f["code"] for f in run_suite(data)["findings"]]


def test_the_output_has_the_contract_shape() -> None:
    """Top-level keys, the suite version and one turns entry per turn."""
    result = run_suite(example("01_sencha"))
    assert list(result) == ["external_id", "suite_version", "findings", "provenance", "turns"]
    assert result["suite_version"] == "1.0.0"
    assert result["turns"] == [{"turn": 0, "candidates": 0, "unread": 0, "index_truncated": False}]
    finding = result["findings"][0]
    assert {"turn", "checker", "code", "severity", "claim", "evidence", "explanation", "correction"} <= set(
        finding
    )
