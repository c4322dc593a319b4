"""Exports captured byte for byte from real instrumentations (tests/otel_captures/), replayed.

Each folder is one run of the scripted tool loop under one library (see meta.json there and
capture.py, which made them). Its exports are posted in the order they arrived, as they
are, to /v1/traces or /v1/logs with a project key; the app must keep one whole
conversation with the final answer and flag the answer's wrong figure. An export it takes
nothing from must say so (a partial success with a count and a reason), never a bare 200.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.integrations.stored import assert_one_whole_conversation, assert_wrong_figure_flagged

pytestmark = pytest.mark.django_db

CAPTURES = Path(__file__).resolve().parents[1] / "otel_captures"
CAPTURED = sorted(p.parent.name for p in CAPTURES.glob("*/meta.json"))


def meta_of(name: str) -> dict[str, Any]:
    return dict(json.loads((CAPTURES / name / "meta.json").read_text()))


def rejected(path: str, response: Any) -> tuple[int, str]:
    """What the export response says was not taken: a count and the reason."""
    if path == "/v1/traces":
        traces = ExportTraceServiceResponse.FromString(response.content).partial_success
        return traces.rejected_spans, traces.error_message
    logs = ExportLogsServiceResponse.FromString(response.content).partial_success
    return logs.rejected_log_records, logs.error_message


def replay(client: Any, api_key: str, name: str) -> list[tuple[str, int, str]]:
    """Posts the capture's exports in order; returns each one's path, refused count, reason."""
    answers = []
    for export in meta_of(name)["exports"]:
        headers = {"Authorization": f"Bearer {api_key}"}
        if export["content_encoding"]:
            headers["Content-Encoding"] = export["content_encoding"]
        body = (CAPTURES / name / export["file"]).read_bytes()
        response = client.post(
            export["path"], data=body, content_type=export["content_type"], headers=headers
        )
        assert response.status_code == 200, f"{export['file']}: {response.status_code} {response.content!r}"
        assert response["Content-Type"].startswith(export["content_type"])
        count, reason = rejected(export["path"], response)
        assert not count or reason, f"{export['file']}: {count} refused without a reason"
        answers.append((export["file"], count, reason))
    return answers


def test_the_captures_cover_the_libraries_the_issue_names() -> None:
    libraries = {meta_of(name)["library"] for name in CAPTURED}
    assert {
        "opentelemetry-instrumentation-openai-v2",
        "openinference-instrumentation-openai",
        "opentelemetry-instrumentation-openai",
        "openinference-instrumentation-openai-agents",
    } <= libraries
    # span-only in two exports, and a run whose content is only in log records
    assert len(meta_of("openai-v2-spans")["exports"]) == 2
    assert {e["path"] for e in meta_of("openai-v2-events")["exports"]} == {"/v1/traces", "/v1/logs"}


@pytest.mark.parametrize("name", CAPTURED)
def test_a_replayed_capture_is_one_whole_conversation_with_its_wrong_figure_flagged(
    name: str, client: Any, api_key: str, project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        answers = replay(client, api_key, name)
    conversation = assert_one_whole_conversation(project, answers)
    assert_wrong_figure_flagged(conversation)


@pytest.mark.parametrize("name", CAPTURED)
def test_a_replay_sent_twice_changes_nothing(
    name: str, client: Any, api_key: str, project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        replay(client, api_key, name)
    first = assert_one_whole_conversation(project)
    with django_capture_on_commit_callbacks(execute=True):
        replay(client, api_key, name)
    again = assert_one_whole_conversation(project)
    assert again.pk == first.pk and again.document == first.document
