"""`python -m checks.suite`: one JSON line per conversation, exit 0 when it could judge, 2 on bad options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from suite_helpers import REPO, examples_dir

EXAMPLES = examples_dir()


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checks.suite", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines()]


def example_text(name: str) -> str:
    return (EXAMPLES / f"{name}.json").read_text()


def test_it_judges_one_conversation_file() -> None:
    """A single conversation gives one line with its findings."""
    done = run(str(EXAMPLES / "01_sencha.json"))
    assert done.returncode == 0, done.stderr
    (result,) = lines(done.stdout)
    assert result["external_id"] == "ex-sencha"
    assert [f["code"] for f in result["findings"]] == ["unverified_action"]


def test_it_judges_a_json_array_one_line_each(tmp_path: Path) -> None:
    """An array of conversations gives one line per item, in order."""
    items = [json.loads(example_text("01_sencha")), json.loads(example_text("03_saved_for_real"))]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(items))
    done = run(str(path))
    assert done.returncode == 0
    assert [r["external_id"] for r in lines(done.stdout)] == ["ex-sencha", "ex-saved"]


def test_it_reads_jsonl_and_reports_a_broken_line_on_its_own(tmp_path: Path) -> None:
    """A line that is not JSON becomes an error line; the lines around it are judged."""
    good = [json.dumps(json.loads(example_text(n))) for n in ("01_sencha", "05_count_misstatement")]
    path = tmp_path / "batch.jsonl"
    path.write_text(f"{good[0]}\n{{not json\n\n{good[1]}\n")
    done = run(str(path))
    assert done.returncode == 0
    results = lines(done.stdout)
    assert [r.get("external_id") for r in results] == ["ex-sencha", None, "ex-count"]
    assert "line 2" in results[1]["error"]
    assert results[2]["findings"][0]["code"] == "count_misstatement"


def test_it_reads_standard_input_for_a_dash() -> None:
    """`-` reads the conversation from stdin."""
    done = run("-", stdin=example_text("06_false_absence_text"))
    assert done.returncode == 0
    (result,) = lines(done.stdout)
    # With no judge configured the entailment checker adds an info finding saying so.
    assert [f["code"] for f in result["findings"] if f["severity"] == "flag"] == ["false_absence"]


def test_it_reports_an_unreadable_item_and_judges_the_others(tmp_path: Path) -> None:
    """An item that is not a conversation is an error line naming it; exit stays 0."""
    bad = {"external_id": "broken", "turns": [{"messages": [{"role": "wizard"}]}]}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([bad, json.loads(example_text("02_honest_refusal")), 7]))
    done = run(str(path))
    assert done.returncode == 0
    first, second, third = lines(done.stdout)
    assert first["external_id"] == "broken" and "$.turns[0].messages[0].role" in first["error"]
    assert second == {**second, "external_id": "ex-refusal", "findings": []}
    assert third["external_id"] is None and third["error"]


def test_it_applies_a_valid_config(tmp_path: Path) -> None:
    """Valid options are accepted and judging proceeds."""
    config = tmp_path / "options.json"
    config.write_text(
        json.dumps({"evidence": {"posture": "guard"}, "negative_claims": {"tools": ["find_logins"]}})
    )
    done = run(str(EXAMPLES / "01_sencha.json"), "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[0]["findings"]


def test_it_exits_2_on_bad_options_naming_the_option(tmp_path: Path) -> None:
    """Nothing is judged with unusable options; stderr names the option and what is accepted."""
    config = tmp_path / "options.json"
    config.write_text(json.dumps({"evidence": {"posture": "loud"}}))
    done = run(str(EXAMPLES / "01_sencha.json"), "--config", str(config))
    assert done.returncode == 2
    assert done.stdout == ""
    assert "evidence.posture" in done.stderr and "assist, guard, rails" in done.stderr


def test_it_exits_2_when_the_config_is_not_json(tmp_path: Path) -> None:
    """A config file that does not parse is an options error too."""
    config = tmp_path / "options.json"
    config.write_text("{posture: guard")
    done = run(str(EXAMPLES / "01_sencha.json"), "--config", str(config))
    assert done.returncode == 2
    assert "--config" in done.stderr


def test_it_exits_1_when_the_input_file_cannot_be_read(tmp_path: Path) -> None:
    """A missing FILE is neither judged nor mistaken for bad options."""
    done = run(str(tmp_path / "missing.json"))
    assert done.returncode == 1
    assert "missing.json" in done.stderr
