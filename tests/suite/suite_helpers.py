"""Builders for small native conversations and where the examples live, for the suite tests.

A module of its own (not conftest) so tests can import it by a name no other tests share.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def examples_dir() -> Path:
    """The example conversations: the repository's copy, else the shared originals beside it."""
    for candidate in (REPO / "demo", REPO.parent / "shared" / "examples"):
        if (candidate / "EXPECTED.json").exists():
            return candidate
    raise FileNotFoundError("no examples directory with EXPECTED.json")


def build_turn(
    answer: str,
    *,
    calls: list[dict[str, Any]] | None = None,
    offered: list[str] | None = None,
    receipts: list[dict[str, Any]] | None = None,
    claims: list[dict[str, Any]] | None = None,
    user: str = "Please help.",
) -> dict[str, Any]:
    """One turn. Each call is {"tool", "result", "args"?, "id"?}; results may be objects."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i, call in enumerate(calls or [], start=1):
        call_id = call.get("id", f"call-{i}")
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call["tool"], "arguments": json.dumps(call.get("args", {}))},
                    }
                ],
            }
        )
        result = call.get("result", "{}")
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": result if isinstance(result, str) else json.dumps(result),
            }
        )
    messages.append({"role": "assistant", "content": answer})
    turn: dict[str, Any] = {"messages": messages}
    if offered is not None:
        turn["tools_offered"] = offered
    if receipts is not None:
        turn["receipts"] = receipts
    if claims is not None:
        turn["claims"] = claims
    return turn


def build_conversation(
    *turns: dict[str, Any], complete: bool = True, external_id: str = "t-1"
) -> dict[str, Any]:
    return {"external_id": external_id, "receipts_complete": complete, "turns": list(turns)}
