"""capture.py, which made tests/otel_captures/, still makes what the replays rest on.

Run for the span-only scenario into a temporary folder: two trace exports of ONE trace,
the first holding the tool call and the second the final answer, written byte for byte
with a meta.json that names each file's path and content type and the library versions.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.integrations.capture import capture
from tests.integrations.model_server import FINAL_ANSWER, TOOL_CALL_ID


def spans_of(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest.FromString(body)
    return [s for r in request.resource_spans for g in r.scope_spans for s in g.spans]


def test_the_span_only_scenario_is_captured_as_two_exports_of_one_trace(tmp_path: Path) -> None:
    meta = capture("openai-v2-spans", sys.executable, tmp_path)
    folder = tmp_path / "openai-v2-spans"
    assert json.loads((folder / "meta.json").read_text()) == meta
    assert [(e["file"], e["path"], e["content_type"]) for e in meta["exports"]] == [
        ("001-traces.pb", "/v1/traces", "application/x-protobuf"),
        ("002-traces.pb", "/v1/traces", "application/x-protobuf"),
    ]
    assert meta["versions"]["opentelemetry-instrumentation-openai-v2"] == version(
        "opentelemetry-instrumentation-openai-v2"
    )
    first, second = (spans_of((folder / e["file"]).read_bytes()) for e in meta["exports"])
    assert len({s.trace_id for s in first + second}) == 1
    written = [(folder / e["file"]).read_bytes() for e in meta["exports"]]
    assert TOOL_CALL_ID.encode() in written[0] and FINAL_ANSWER.encode() not in written[0]
    assert FINAL_ANSWER.encode() in written[1]
