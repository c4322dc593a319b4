"""The real-traffic bench reads a logged corpus as the API reads a payload sent with
``?format=auto``: the same conversations logged by another runtime, in Anthropic's
Messages blocks, as Chat Completions with a ``developer`` prompt, with calls and results
flattened, or with the results' call ids lost, score exactly as the native log does,
instead of being refused or read with their tool calls dropped.

The conversations are the sample of both shared corpora kept in ``tests/data/corpora/``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "data" / "corpora"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_traffic", ROOT / "bench" / "real_traffic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def as_anthropic(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as Anthropic's Messages API logs it: the prompt apart, tool calls as
    ``tool_use`` blocks, and each run of tool results one user message of ``tool_result`` blocks."""
    messages: list[dict[str, Any]] = []
    for message in conversation["messages"]:
        if message["role"] == "assistant":
            blocks = [{"type": "text", "text": message["content"]}] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                arguments = json.loads(call["function"]["arguments"] or "{}")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": arguments,
                    }
                )
            messages.append({"role": "assistant", "content": blocks})
        elif message["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            last = messages[-1] if messages else None
            if last and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        else:
            messages.append({"role": message["role"], "content": message["content"]})
    return {
        "external_id": conversation["external_id"],
        "system": conversation.get("system", ""),
        "messages": messages,
    }


def with_developer_prompt(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as a newer Chat Completions client logs it: the prompt a ``developer`` message."""
    rest = {key: value for key, value in conversation.items() if key != "system"}
    prompt = {"role": "developer", "content": conversation.get("system", "")}
    return rest | {"messages": [prompt, *conversation["messages"]]}


def with_flat_calls_and_object_results(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as a logger that flattens the shape writes it: each call
    ``{"id", "name", "arguments"}`` with its arguments an object, and each result that is
    JSON logged as the value the tool returned."""
    messages = []
    for message in conversation["messages"]:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": json.loads(call["function"]["arguments"] or "{}"),
                }
                for call in message["tool_calls"]
            ]
        if message["role"] == "tool":
            with contextlib.suppress(ValueError):
                message["content"] = json.loads(message["content"])
        messages.append(message)
    return conversation | {"messages": messages}


def with_result_ids_lost(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as a logger that keeps a result's tool name and not its call id."""
    names = {
        call["id"]: call["function"]["name"]
        for message in conversation["messages"]
        for call in message.get("tool_calls") or []
    }
    messages = [
        {"role": "tool", "name": names.get(m["tool_call_id"]), "content": m["content"]}
        if m["role"] == "tool"
        else m
        for m in conversation["messages"]
    ]
    return conversation | {"messages": messages}


def _figures(bench: ModuleType, corpus: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--corpus", str(corpus), "--json"])
    return json.loads(out.getvalue())[corpus.name]


@pytest.mark.parametrize("name", ["airline-dev", "retail-dev"])
@pytest.mark.parametrize(
    "logged_as",
    [as_anthropic, with_developer_prompt, with_flat_calls_and_object_results, with_result_ids_lost],
)
def test_a_corpus_logged_in_another_format_scores_as_the_native_one(
    name: str, logged_as: Callable[[dict[str, Any]], dict[str, Any]], tmp_path: Path
) -> None:
    bench = _bench()
    native = _figures(bench, SAMPLES / name)
    assert sum(part["checked_turns"] for part in native.values()) > 0
    assert sum(part["refused"] for part in native.values()) == 0

    converted = tmp_path / name
    converted.mkdir()
    lines = (SAMPLES / name / "conversations.jsonl").read_text().splitlines()
    rewritten = [json.dumps(logged_as(json.loads(line))) for line in lines if line.strip()]
    (converted / "conversations.jsonl").write_text("\n".join(rewritten) + "\n")
    (converted / "labels.jsonl").write_text((SAMPLES / name / "labels.jsonl").read_text())

    assert _figures(bench, converted) == native
