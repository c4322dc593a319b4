"""One made-up turn in which a source states a value and the answer states it again, for the
property tests of each family of values (amounts, percents, identifier fragments).

The source is one of ``ROLES``: the user's message, the system prompt, a tool's text, a
string of a tool's JSON, a number of it, or the arguments of the call the tool answered (a
query that found something is part of its receipt). The turn names no domain beyond the question and
the sentence each test brings from its own settings.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings

ROLES = ["user", "system", "tool text", "tool JSON string", "tool JSON number", "call argument"]

CHECKS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def one_turn(
    question: str, sentence: str, role: str, source: str, answer: str, *, noun: str, number_key: str = ""
) -> dict[str, Any]:
    """The user asks ``question``, a lookup returns, the answer is ``sentence`` with ``answer``
    in it. ``source`` is what ``role`` says (for a JSON number, the number's JSON text, under
    ``number_key``, else ``noun``)."""
    user = f"{question} I was told {source}." if role == "user" else question
    if role == "tool text":
        result = f"{noun.capitalize()} on file: {source}"
    elif role == "tool JSON string":
        result = json.dumps({noun: source, "status": "on file"})
    elif role == "tool JSON number":
        result = '{"' + (number_key or noun) + '": ' + source + ', "status": "on file"}'
    else:
        result = json.dumps({"status": "on file"})
    arguments = json.dumps({noun: source}) if role == "call argument" else "{}"
    call = {"id": "call-a", "type": "function", "function": {"name": "lookup", "arguments": arguments}}
    data: dict[str, Any] = {
        "external_id": f"{noun}-values",
        "messages": [
            {"role": "user", "content": user},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call-a", "content": result},
            {"role": "assistant", "content": sentence.format(answer)},
        ],
    }
    if role == "system":
        data["system"] = f"The standing {noun} is {source}."
    return data


def unsupported(report: dict[str, Any]) -> list[str]:
    """The claims the evidence checker found no source for."""
    return [f["claim"]["text"] for f in report["findings"] if f["code"] == "unsupported_value"]
