"""One real two-step tool loop, driven by a real client library and its OpenTelemetry
instrumentation, exporting over OTLP/HTTP to a given base URL.

Run in a process of its own, one scenario per process, because the instrumentations patch
the OpenAI client for the whole process and read their settings from the environment once:

    python -m tests.integrations.tool_loop SCENARIO --model-url URL --otlp-url URL [--api-key KEY]

It prints one JSON line: the final answer and how many model calls were made. Nothing
leaves the machine: the model is the scripted one on loopback (model_server.py), the
exports go to ``--otlp-url``, and the libraries' own telemetry is switched off.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.integrations.model_server import MODEL, QUESTION, TOOL_NAME, get_order

SERVICE = "order-desk"
SYSTEM = "You are the order desk. Look orders up with get_order before answering."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Look an order up by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]
# Settings every scenario runs with: no telemetry of the libraries' own, no proxy between
# loopback peers, and an API key the scripted model ignores.
QUIET_ENV = {
    "TRACELOOP_TELEMETRY": "false",
    "OTEL_SDK_DISABLED": "false",
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OPENAI_API_KEY": "sk-loopback-only",
    "OPENAI_AGENTS_DONT_LOG_MODEL_DATA": "1",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
# The official instrumentation on the latest GenAI conventions, content in the spans or in
# log records.
LATEST_GENAI = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}


@dataclass(frozen=True)
class Scenario:
    """One library set-up: what it instruments, how the loop is run, and its environment."""

    library: str  # the distribution whose instrumentation produces the telemetry
    description: str
    env: dict[str, str] = field(default_factory=dict)
    parent_span: bool = True  # the loop inside one invoke_agent span, so one trace
    export_between_calls: bool = False  # force an export after the first model call
    per_span_export: bool = False  # SimpleSpanProcessor: every span exported when it ends
    logs: bool = False  # log records (events) exported to /v1/logs as well
    packages: tuple[str, ...] = ()  # the versions recorded beside a capture
    # An older release that cannot share our virtualenv with the pinned one: capture.py runs
    # the loop in a throwaway virtualenv with these pins (the live tests leave it out).
    own_venv: tuple[str, ...] = ()


OFFICIAL = (
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-util-genai",
)
SCENARIOS: dict[str, Scenario] = {
    "openai-v2-spans": Scenario(
        "opentelemetry-instrumentation-openai-v2",
        "content on the chat spans (span_only), one trace in two exports: flushed after the tool call",
        env={**LATEST_GENAI, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
        export_between_calls=True,
        packages=OFFICIAL,
    ),
    "openai-v2-per-call": Scenario(
        "opentelemetry-instrumentation-openai-v2",
        "no parent span: each model call its own trace, each exported as it ends",
        env={**LATEST_GENAI, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
        parent_span=False,
        per_span_export=True,
        packages=OFFICIAL,
    ),
    "openai-v2-events": Scenario(
        "opentelemetry-instrumentation-openai-v2",
        "content only in log records (event_only): gen_ai.client.inference.operation.details",
        env={**LATEST_GENAI, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only"},
        logs=True,
        packages=OFFICIAL,
    ),
    "openai-v2-legacy-events": Scenario(
        "opentelemetry-instrumentation-openai-v2",
        "the v1.30 conventions: gen_ai.system.message, gen_ai.user.message, gen_ai.choice… log records",
        env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
        logs=True,
        packages=("openai", "opentelemetry-sdk", "opentelemetry-instrumentation-openai-v2"),
        own_venv=("opentelemetry-instrumentation-openai-v2==2.2b0", "wrapt==1.17.3"),
    ),
    "openinference-openai": Scenario(
        "openinference-instrumentation-openai",
        "OpenInference attributes: llm.input_messages.N.message.*, llm.output_messages.*",
        packages=("openai", "opentelemetry-sdk", "openinference-instrumentation-openai"),
    ),
    "openllmetry-openai": Scenario(
        "opentelemetry-instrumentation-openai",
        "OpenLLMetry (Traceloop) with its default settings",
        env={"TRACELOOP_TRACE_CONTENT": "true"},
        packages=("openai", "opentelemetry-sdk", "opentelemetry-instrumentation-openai"),
    ),
    "openllmetry-legacy-attributes": Scenario(
        "opentelemetry-instrumentation-openai",
        "OpenLLMetry before the conventions moved: gen_ai.prompt.N.* and gen_ai.completion.N.*",
        env={"TRACELOOP_TRACE_CONTENT": "true"},
        packages=("openai", "opentelemetry-sdk", "opentelemetry-instrumentation-openai"),
        own_venv=(
            "opentelemetry-instrumentation-openai==0.47.5",
            "opentelemetry-sdk==1.36.0",
            "opentelemetry-exporter-otlp-proto-http==1.36.0",
        ),
    ),
    "openai-agents": Scenario(
        "openinference-instrumentation-openai-agents",
        "the OpenAI Agents SDK on Chat Completions, traced by OpenInference: agent, LLM and TOOL spans",
        parent_span=False,  # the SDK's own trace is the parent
        packages=(
            "openai",
            "openai-agents",
            "opentelemetry-sdk",
            "openinference-instrumentation-openai-agents",
        ),
    ),
}


@dataclass
class Telemetry:
    """The SDK providers of one run, exporting to the given OTLP base URL."""

    tracer_provider: Any
    logger_provider: Any | None

    def flush(self) -> None:
        self.tracer_provider.force_flush()
        if self.logger_provider is not None:
            self.logger_provider.force_flush()

    def shutdown(self) -> None:
        self.flush()
        self.tracer_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()


def telemetry(scenario: Scenario, otlp_url: str, api_key: str) -> Telemetry:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    headers = {"Authorization": f"Bearer {api_key}"}
    resource = Resource.create({"service.name": SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    span_exporter = OTLPSpanExporter(endpoint=f"{otlp_url}/v1/traces", headers=headers)
    processor = SimpleSpanProcessor if scenario.per_span_export else BatchSpanProcessor
    tracer_provider.add_span_processor(processor(span_exporter))
    logger_provider = None
    if scenario.logs:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        logger_provider = LoggerProvider(resource=resource)
        log_exporter = OTLPLogExporter(endpoint=f"{otlp_url}/v1/logs", headers=headers)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    return Telemetry(tracer_provider, logger_provider)


def chat_loop(client: Any, between_calls: Callable[[], None]) -> tuple[str, int]:
    """The loop as application code writes it with the plain client: ask, run the tool, ask again."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    asked = first.choices[0].message
    between_calls()
    messages.append(asked.model_dump(exclude_none=True))
    for call in asked.tool_calls or []:
        result = get_order(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    return second.choices[0].message.content or "", 2


def instrument(name: str, providers: Telemetry) -> Callable[[], None]:
    """Instruments the OpenAI client with the scenario's library; returns how to undo it."""
    if name.startswith("openai-v2"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Official

        official = Official()
        official.instrument(
            tracer_provider=providers.tracer_provider, logger_provider=providers.logger_provider
        )
        return official.uninstrument
    if name == "openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInference

        openinference = OpenInference()
        openinference.instrument(tracer_provider=providers.tracer_provider)
        return openinference.uninstrument
    if name.startswith("openllmetry"):
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetry

        openllmetry = OpenLLMetry()
        openllmetry.instrument(tracer_provider=providers.tracer_provider)
        return openllmetry.uninstrument
    if name == "openai-agents":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        agents = OpenAIAgentsInstrumentor()
        # exclusive: the SDK's own processor, which would send traces to the vendor, is replaced
        agents.instrument(tracer_provider=providers.tracer_provider, exclusive_processor=True)
        return agents.uninstrument
    raise SystemExit(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


def agents_loop(model_url: str) -> tuple[str, int]:
    """The same loop run by the Agents SDK, which calls the tool itself."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI

    @function_tool(name_override=TOOL_NAME)
    def order_lookup(order_id: str) -> str:
        """Look an order up by its id."""
        return json.dumps(get_order(order_id))

    client = AsyncOpenAI(base_url=model_url, api_key="sk-loopback-only", max_retries=0)
    agent = Agent(
        name=SERVICE,
        instructions=SYSTEM,
        tools=[order_lookup],
        model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
    )
    result = Runner.run_sync(agent, QUESTION)
    calls = sum(1 for item in result.raw_responses)
    return str(result.final_output), calls


def run(name: str, model_url: str, otlp_url: str, api_key: str) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    providers = telemetry(scenario, otlp_url, api_key)
    undo = instrument(name, providers)
    try:
        if name == "openai-agents":
            answer, calls = agents_loop(model_url)
        else:
            from openai import OpenAI

            client = OpenAI(base_url=model_url, api_key="sk-loopback-only", max_retries=0)
            between = providers.flush if scenario.export_between_calls else (lambda: None)
            if scenario.parent_span:
                tracer = providers.tracer_provider.get_tracer("order-desk.app")
                attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": SERVICE}
                with tracer.start_as_current_span(f"invoke_agent {SERVICE}", attributes=attributes):
                    answer, calls = chat_loop(client, between)
            else:
                answer, calls = chat_loop(client, between)
    finally:
        undo()
        providers.shutdown()
    return {"scenario": name, "answer": answer, "model_calls": calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--model-url", required=True, help="the scripted model's base URL (…/v1)")
    parser.add_argument(
        "--otlp-url", required=True, help="OTLP/HTTP base URL; /v1/traces and /v1/logs are added"
    )
    parser.add_argument("--api-key", default="none", help="sent as Authorization: Bearer KEY")
    args = parser.parse_args(argv)
    os.environ.update(QUIET_ENV)
    os.environ.update(SCENARIOS[args.scenario].env)
    print(json.dumps(run(args.scenario, args.model_url, args.otlp_url, args.api_key)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
