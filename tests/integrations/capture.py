"""Captures what real instrumentation exports, byte for byte, into tests/otel_captures/.

For each scenario of tool_loop.py it starts the scripted model and an OTLP sink on
loopback, runs the loop in a process of its own (with this Python, or ``--python`` from
another virtualenv, for a library that cannot share ours), and writes every export in
arrival order as ``NNN-traces.pb`` / ``NNN-logs.pb`` (``.json`` for JSON bodies) beside a
``meta.json`` that holds each file's path, content type and encoding, the library
versions, and what the loop did (the final answer, the number of model calls).

    .venv/bin/python -m tests.integrations.capture [SCENARIO ...] [--python PATH] [--into DIR]

The replays in test_captured_exports.py post these files as they are.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.integrations.model_server import (
    FINAL_ANSWER,
    ORDER,
    QUESTION,
    TOOL_NAME,
    WRONG_FIGURE,
    ModelServer,
)
from tests.integrations.otlp_sink import Export, OtlpSink
from tests.integrations.tool_loop import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "otel_captures"
# Only what the app reads is kept: metrics are not conversations.
KEPT_PATHS = {"/v1/traces": "traces", "/v1/logs": "logs"}
VERSIONS_SCRIPT = (
    "import importlib.metadata as m, json, sys\nprint(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
)


def versions(python: str, packages: tuple[str, ...]) -> dict[str, str]:
    """The installed versions of ``packages`` in the interpreter that runs the loop."""
    done = subprocess.run(
        [python, "-c", VERSIONS_SCRIPT, *packages], capture_output=True, text=True, check=True, timeout=60
    )
    return dict(json.loads(done.stdout))


def own_venv(name: str, pins: tuple[str, ...]) -> str:
    """A throwaway virtualenv under the temp folder holding the client, the SDK and ``pins``.

    The client and SDK are pinned as in requirements-dev.txt unless ``pins`` names them too
    (an old instrumentation may need the SDK of its time).
    """
    wanted = ("openai==", "httpx==", "opentelemetry-sdk==", "opentelemetry-exporter-otlp-proto-http==")
    overridden = tuple(pin.split("==")[0] + "==" for pin in pins)
    ours = [
        line.strip()
        for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
        if line.startswith(wanted) and not line.startswith(overridden)
    ]
    folder = Path(tempfile.gettempdir()) / f"receipts-capture-{name}"
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*install, *ours, *pins], check=True, timeout=900)
    return str(python)


def file_name(number: int, export: Export) -> str:
    kind = KEPT_PATHS[export.path]
    suffix = "json" if "json" in export.content_type else "pb"
    return f"{number:03d}-{kind}.{suffix}"


def capture(name: str, python: str, into: Path) -> dict[str, Any]:
    """Runs one scenario against the sink and writes its exports and meta.json under ``into``."""
    scenario = SCENARIOS[name]
    with ModelServer() as model, OtlpSink() as sink:
        command = [python, "-m", "tests.integrations.tool_loop", name]
        command += ["--model-url", model.url, "--otlp-url", sink.url]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"{name}: the loop failed\n{done.stderr}")
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
        exports = [e for e in sink.exports if e.path in KEPT_PATHS]
    if outcome["answer"] != FINAL_ANSWER:
        raise SystemExit(f"{name}: the loop ended with {outcome['answer']!r}, not the scripted answer")
    folder = into / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    files = []
    for number, export in enumerate(exports, start=1):
        file = file_name(number, export)
        (folder / file).write_bytes(export.body)
        files.append(
            {
                "file": file,
                "path": export.path,
                "content_type": export.content_type,
                "content_encoding": export.content_encoding,
            }
        )
    meta = {
        "scenario": name,
        "library": scenario.library,
        "description": scenario.description,
        "environment": scenario.env,
        "versions": versions(python, scenario.packages),
        "exports": files,
        "loop": {
            "question": QUESTION,
            "tool": TOOL_NAME,
            "tool_result": ORDER,
            "answer": outcome["answer"],
            "wrong_figure": WRONG_FIGURE,
            "model_calls": outcome["model_calls"],
        },
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help=f"default: all of {', '.join(SCENARIOS)}")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the loop")
    parser.add_argument("--into", type=Path, default=CAPTURES)
    args = parser.parse_args(argv)
    for name in args.scenarios or list(SCENARIOS):
        pins = SCENARIOS[name].own_venv
        python = own_venv(name, pins) if pins and args.python == sys.executable else args.python
        meta = capture(name, python, args.into)
        print(f"{name}: {len(meta['exports'])} exports, {meta['versions']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
