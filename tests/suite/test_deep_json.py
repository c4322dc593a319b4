"""Tool arguments and results nested far deeper than any real one still get checked.

Ingestion refuses tool JSON nested deeper than its limit, but an operator may raise the
limit, and the suite also runs on its own: no walk over a call's arguments or a result may
recurse once per level, or nesting near the interpreter's recursion limit stops the check
with a RecursionError and the conversation is never checked.
"""

from __future__ import annotations

import json
import sys

from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite


def _nested(depth: int, leaf: object) -> str:
    return "[" * depth + json.dumps(leaf) + "]" * depth


def test_arguments_and_results_nested_as_deep_as_the_recursion_limit_are_checked() -> None:
    depth = sys.getrecursionlimit()
    arguments = '{"order_id": "ORD-1234", "filters": ' + _nested(depth, "ORD-9999") + "}"
    result = '{"orders": ' + _nested(depth, {"order_id": "ORD-1234"}) + "}"
    read = build_turn("I found ORD-1234.", calls=[{"tool": "search_orders", "result": result}])
    write = build_turn("I've cancelled ORD-1234.", calls=[{"tool": "cancel_order", "result": {"ok": True}}])
    read["messages"][1]["tool_calls"][0]["function"]["arguments"] = arguments
    write["messages"][1]["tool_calls"][0]["function"]["arguments"] = arguments
    write["messages"][1]["tool_calls"][0]["id"] = write["messages"][2]["tool_call_id"] = "call-2"

    report = run_suite(build_conversation(read, write))

    assert [entry["turn"] for entry in report["turns"]] == [0, 1]
    invented = [f for f in report["findings"] if f["code"] == "unsupported_argument"]
    assert {f["value"] for f in invented} >= {"ord-9999"}
