"""The real client libraries and their instrumentations, live against the app.

Each scenario of tool_loop.py (those whose library is in our virtualenv) runs in a process
of its own: the OpenAI client talks to the scripted model on loopback, and the
instrumentation's OTLP exporters send to the app under pytest-django's live server, with a
project key. What arrives must be one whole conversation with its wrong figure flagged,
the same as for the captured exports. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.model_server import FINAL_ANSWER, ModelServer
from tests.integrations.stored import assert_one_whole_conversation, assert_wrong_figure_flagged
from tests.integrations.tool_loop import QUIET_ENV, SCENARIOS

# The live server answers from another thread, so the data must be committed for it to see.
pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
LIVE = sorted(name for name, scenario in SCENARIOS.items() if not scenario.own_venv)
# A generous bound on one loop's process (imports, two model calls, exports), so a hang
# fails the test instead of holding the suite.
LOOP_TIMEOUT_S = 180


def run_loop(name: str, model_url: str, otlp_url: str, api_key: str) -> dict[str, Any]:
    env = {**os.environ, **QUIET_ENV, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.integrations.tool_loop", name]
    command += ["--model-url", model_url, "--otlp-url", otlp_url, "--api-key", api_key]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=LOOP_TIMEOUT_S)
    assert done.returncode == 0, f"the loop failed:\n{done.stderr[-4000:]}"
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("name", LIVE)
def test_a_library_run_live_is_one_whole_conversation_with_its_wrong_figure_flagged(
    name: str, live_server: Any, api_key: str, project: Any
) -> None:
    with ModelServer() as model:
        outcome = run_loop(name, model.url, live_server.url, api_key)
        asked = len(model.requests)
    assert outcome["answer"] == FINAL_ANSWER and asked == 2
    conversation = assert_one_whole_conversation(project)
    assert_wrong_figure_flagged(conversation)
