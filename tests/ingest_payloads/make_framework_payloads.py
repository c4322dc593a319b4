"""Writes the framework payloads beside this file from the Chat Completions ones (openai.json).

Each demo conversation of openai.json is rebuilt with the framework's own classes and
dumped by the framework's own serializers, so the fixtures are byte for byte what an
integrator's code sends:

- langchain.json, langchain_dict.json, langchain_dumpd.json: the messages as LangChain
  objects (AI messages as langchain-anthropic builds them in the dumpd file: text and
  tool_use blocks beside `tool_calls`), dumped by `model_dump()`, `messages_to_dict()` and
  `dumpd()`; tools by `convert_to_openai_tool`. Made with langchain-core 1.8.3.
- pydantic_ai.json: a pydantic-ai Agent run against a FunctionModel that replays the
  demo's assistant messages, with the demo's tools (`Tool.from_schema`) answering as in
  the demo; `result.all_messages_json()`, the second turn of a two-turn demo run with the
  first turn's history. Made with pydantic-ai-slim 2.68.0.
- bedrock.json: Converse requests with the final answer as the response's
  `output.message`, written by this script after the Converse API reference (boto3 would
  only send them on).

The libraries are not dependencies of the project; to make the files again::

    python -m venv /tmp/fw && /tmp/fw/bin/pip install langchain-core==1.8.3 pydantic-ai-slim==2.68.0
    /tmp/fw/bin/python tests/ingest_payloads/make_framework_payloads.py
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def openai_payloads() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / "openai.json").read_text())
    return data


def schema_tools(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [tool["function"] for tool in payload["tools"]]


# --- LangChain ---------------------------------------------------------------------------


def langchain_messages(payload: dict[str, Any], *, anthropic_blocks: bool) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for message in payload["messages"]:
        role, content = message["role"], message.get("content")
        if role == "user":
            out.append(HumanMessage(content=content))
        elif role in ("system", "developer"):
            out.append(SystemMessage(content=content))
        elif role == "tool":
            failed = isinstance(json.loads(content), dict) and "error" in json.loads(content)
            out.append(
                ToolMessage(
                    content=content,
                    tool_call_id=message["tool_call_id"],
                    status="error" if failed else "success",
                )
            )
        else:
            calls = [
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"]}
                for c in message.get("tool_calls") or []
            ]
            if anthropic_blocks:
                blocks: list[Any] = [{"type": "text", "text": content}] if content else []
                blocks += [
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls
                ]
                out.append(AIMessage(content=blocks, tool_calls=calls))
            else:
                out.append(AIMessage(content=content or "", tool_calls=calls))
    return out


def langchain_variants() -> list[Any]:
    """Messages as newer providers write them: an AI message in LangChain's own content
    blocks (reasoning, text, a tool_call block beside `tool_calls`), a streamed chunk, a
    tool's list result, and a chat message naming its role."""
    from langchain_core.messages import AIMessage, AIMessageChunk, ChatMessage, HumanMessage, ToolMessage

    call = {"name": "find_order", "args": {"order": "A-7"}, "id": "call_1"}
    return [
        HumanMessage("Where is order A-7?"),
        AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "Look the order up."},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_call", **call},
            ],
            tool_calls=[call],
            output_version="v1",
        ),
        ToolMessage(content=[{"order": "A-7", "state": "shipped", "parcels": 2}], tool_call_id="call_1"),
        AIMessageChunk(content="Order A-7 has shipped "),
        ChatMessage(role="assistant", content="in 3 parcels."),
    ]


def langchain_files() -> dict[str, dict[str, Any]]:
    from langchain_core.load import dumpd
    from langchain_core.messages import messages_to_dict
    from langchain_core.utils.function_calling import convert_to_openai_tool

    made = f"langchain-core {version('langchain-core')}"
    files: dict[str, dict[str, Any]] = {
        "langchain": {"_made_with": f"{made}: message.model_dump()"},
        "langchain_dict": {"_made_with": f"{made}: messages_to_dict(messages)"},
        "langchain_dumpd": {
            "_made_with": f"{made}: dumpd(message), content as langchain-anthropic writes it"
        },
    }
    for key, payload in openai_payloads().items():
        tools = [
            convert_to_openai_tool({"title": t["name"], "description": t["description"], **t["parameters"]})
            for t in schema_tools(payload)
        ]
        plain = langchain_messages(payload, anthropic_blocks=False)
        blocks = langchain_messages(payload, anthropic_blocks=True)
        header = {"external_id": payload["external_id"], "model": payload["model"], "tools": tools}
        files["langchain"][key] = {**header, "messages": [m.model_dump() for m in plain]}
        files["langchain_dict"][key] = {**header, "messages": messages_to_dict(plain)}
        files["langchain_dumpd"][key] = {**header, "messages": [dumpd(m) for m in blocks]}
    variants = langchain_variants()
    files["langchain"]["variants"] = {
        "external_id": "lc-variants",
        "messages": [m.model_dump() for m in variants],
    }
    files["langchain_dict"]["variants"] = {
        "external_id": "lc-variants",
        "messages": messages_to_dict(variants),
    }
    files["langchain_dumpd"]["variants"] = {
        "external_id": "lc-variants",
        "messages": [dumpd(m) for m in variants],
    }
    return files


# --- pydantic-ai -------------------------------------------------------------------------


def pydantic_ai_run(payload: dict[str, Any]) -> dict[str, Any]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    replies = [m for m in payload["messages"] if m["role"] == "assistant"]
    results = {
        m["tool_call_id"]: json.loads(m["content"]) for m in payload["messages"] if m["role"] == "tool"
    }
    said = iter(replies)
    offered: list[Any] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        offered[:] = info.function_tools
        reply = next(said)
        parts: list[Any] = [TextPart(reply["content"])] if reply.get("content") else []
        parts += [
            ToolCallPart(c["function"]["name"], c["function"]["arguments"], tool_call_id=c["id"])
            for c in reply.get("tool_calls") or []
        ]
        return ModelResponse(parts=parts, model_name=payload["model"])

    calls = {c["id"]: c for m in replies for c in m.get("tool_calls") or []}

    def tool_for(spec: dict[str, Any]) -> Tool[Any]:
        def run(**arguments: Any) -> Any:
            # The demo's result for the call these arguments were written by.
            for call_id, call in calls.items():
                if (
                    call["function"]["name"] == spec["name"]
                    and json.loads(call["function"]["arguments"]) == arguments
                ):
                    return results[call_id]
            raise AssertionError(f"no demo result for {spec['name']}({arguments})")

        return Tool.from_schema(
            run, name=spec["name"], description=spec["description"], json_schema=spec["parameters"]
        )

    agent = Agent(FunctionModel(model), tools=[tool_for(spec) for spec in schema_tools(payload)])
    history: list[Any] = []
    for message in payload["messages"]:
        if message["role"] == "user":
            history = agent.run_sync(message["content"], message_history=history).all_messages()
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    tools = [
        {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters_json_schema}
        for t in offered
    ]
    return {
        "external_id": payload["external_id"],
        "tools": tools,
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(history)),
    }


def pydantic_ai_retried() -> dict[str, Any]:
    """A run with instructions and a system prompt whose tool asks for a retry once
    (ModelRetry) before it succeeds: the retried call answered by a tool-return part."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    calls = iter(["call_1", "call_2"])

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        call_id = next(calls, None)
        if call_id is None:
            return ModelResponse(parts=[TextPart("Order A-7 is cancelled.")], model_name="gpt-5-mini")
        return ModelResponse(
            parts=[
                TextPart("Cancelling it."),
                ToolCallPart("cancel_order", {"order": "A-7"}, tool_call_id=call_id),
            ],
            model_name="gpt-5-mini",
        )

    agent = Agent(
        FunctionModel(model), instructions="Answer from the order system only.", system_prompt="Be brief."
    )
    tries: list[str] = []

    @agent.tool_plain
    def cancel_order(order: str) -> dict[str, Any]:
        """Cancel an order."""
        tries.append(order)
        if len(tries) == 1:
            raise ModelRetry("the order service is busy; try again")
        return {"order": order, "state": "cancelled"}

    result = agent.run_sync("Please cancel order A-7.")
    return {"external_id": "pai-retried", "messages": json.loads(result.all_messages_json())}


def pydantic_ai_file() -> dict[str, Any]:
    out: dict[str, Any] = {
        "_made_with": f"pydantic-ai-slim {version('pydantic-ai-slim')}: result.all_messages(), "
        "ModelMessagesTypeAdapter.dump_json"
    }
    for key, payload in openai_payloads().items():
        out[key] = pydantic_ai_run(payload)
    out["retried"] = pydantic_ai_retried()
    return out


# --- Bedrock Converse --------------------------------------------------------------------


def converse_message(message: dict[str, Any]) -> dict[str, Any]:
    if message["role"] == "tool":
        result = json.loads(message["content"])
        failed = isinstance(result, dict) and "error" in result
        return {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": message["tool_call_id"],
                        "content": [{"json": result}],
                        "status": "error" if failed else "success",
                    }
                }
            ],
        }
    blocks: list[Any] = [{"text": message["content"]}] if message.get("content") else []
    blocks += [
        {
            "toolUse": {
                "toolUseId": c["id"],
                "name": c["function"]["name"],
                "input": json.loads(c["function"]["arguments"]),
            }
        }
        for c in message.get("tool_calls") or []
    ]
    return {"role": message["role"], "content": blocks}


def bedrock_file() -> dict[str, Any]:
    out: dict[str, Any] = {
        "_made_with": "Converse request and response, written after the Converse API reference"
    }
    for key, payload in openai_payloads().items():
        messages = [converse_message(m) for m in payload["messages"]]
        reply = messages.pop()
        out[key] = {
            "external_id": payload["external_id"],
            "modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": t["name"],
                            "description": t["description"],
                            "inputSchema": {"json": t["parameters"]},
                        }
                    }
                    for t in schema_tools(payload)
                ]
            },
            "messages": messages,
            "output": {"message": reply},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 412, "outputTokens": 38, "totalTokens": 450},
        }
    return out


def main() -> None:
    files = {**langchain_files(), "pydantic_ai": pydantic_ai_file(), "bedrock": bedrock_file()}
    for name, content in files.items():
        (HERE / f"{name}.json").write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
