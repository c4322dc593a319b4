"""The judge client against a real chat completions server on loopback, and verdict reading.

``JudgeServer`` speaks the OpenAI chat completions protocol over HTTP and answers by rule:
an answer that calls a service healthy over a result that says it is down is not entailed,
and two answers that disagree on the same thing contradict. Tests can make it fail, stall
or talk nonsense, and it keeps every request so a test can count what was asked.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from checks.suite import judge as judge_module
from checks.suite.judge import Judge, JudgeConfig, JudgeUnavailable, endpoint, resolve, verdict_of
from checks.suite.options import EntailmentOptions, OptionsError, parse_options
from checks.suite.outbound import Allow


def by_rule(question: str) -> str:
    """The server's judgement: the words 'down' and 'healthy' on opposite sides disagree."""
    if "## Answer A" in question:
        a, b = question.split("## Answer A", 1)[1].split("## Answer B", 1)
        at_odds = ("healthy" in a and "down" in b) or ("down" in a and "healthy" in b)
        if at_odds:
            return "yes\nOne answer says the service is healthy, the other that it is down."
        return "no\nThey do not disagree."
    evidence, answer = question.split("## The answer", 1)
    if "down" in evidence and "healthy" in answer:
        return "no\nThe results say the service is down, but the answer calls it healthy."
    return "yes\nThe answer says what the results say."


class JudgeServer:
    """A chat completions endpoint on 127.0.0.1, port chosen by the system."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.rule: Callable[[str], str] = by_rule
        self.failures: list[int] = []  # statuses to answer with, one per request, before any reply
        self.delay_s = 0.0
        self.usage: dict[str, int] | None = None  # fixed usage; None: counted from the texts
        self.raw_body: bytes | None = None  # a response body sent as is
        self.redirect_to: str | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if owner.redirect_to:
                    self.send_response(302)
                    self.send_header("Location", owner.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if owner.failures:
                    status = owner.failures.pop(0)
                    self._send(status, {"error": {"message": f"failure {status}"}})
                    return
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                if owner.raw_body is not None:
                    self._send_bytes(200, owner.raw_body)
                    return
                question = body["messages"][-1]["content"]
                content = owner.rule(question)
                prompt, completion = len(question) // 4, len(content) // 4 + 1
                usage = owner.usage or {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                }
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(owner.requests)}",
                        "object": "chat.completion",
                        "created": 1_700_000_000,
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": usage,
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(payload).encode())

            def _send_bytes(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def questions(self) -> list[str]:
        return [r["body"]["messages"][-1]["content"] for r in self.requests]


@contextmanager
def running_judge() -> Iterator[JudgeServer]:
    server = JudgeServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    with running_judge() as server:
        yield server


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_module, "BACKOFF_S", 0.01)


def client(server: JudgeServer, *, key: str | None = None, timeout_s: float = 1.0) -> Judge:
    return Judge(JudgeConfig(url=server.url, model="judge-7b", api_key=key, timeout_s=timeout_s))


# --- verdicts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said", "reason"),
    [
        ("yes\nIt restates the result.", "yes", "It restates the result."),
        ("no\nThe result says down.", "no", "The result says down."),
        ("Yes.", "yes", ""),
        ("NO - the tool said the disk is full", "no", "the tool said the disk is full"),
        ("\n   \n  no\n\nThe answer invents a date.", "no", "The answer invents a date."),
        ("**Yes**", "yes", ""),
        ('"No." It adds a figure.', "no", "It adds a figure."),
        ("<think>maybe no</think>\nyes\nFine.", "yes", "Fine."),
        ("Maybe\nhard to say", None, "Maybe hard to say"),
        ("Nothing is wrong.", None, "Nothing is wrong."),
        ("Not entailed.", None, "Not entailed."),
        ("Yesterday's result agrees.", None, "Yesterday's result agrees."),
        ("", None, ""),
        ("   \n\n", None, ""),
    ],
)
def test_a_verdict_is_the_first_word_of_the_first_line_and_the_reason_after(
    text: str, said: str | None, reason: str
) -> None:
    verdict = verdict_of(text)
    assert (verdict.said, verdict.reason) == (said, reason)


# --- where the judge comes from -------------------------------------------------------------


def configured(*args: Any, **kwargs: Any) -> JudgeConfig:
    config = resolve(*args, **kwargs)
    assert config is not None
    return config


def test_the_site_wide_judge_comes_from_the_environment_and_options_override_it() -> None:
    env = {
        "RECEIPTS_JUDGE_URL": "http://judge.internal/v1",
        "RECEIPTS_JUDGE_MODEL": "site-model",
        "RECEIPTS_JUDGE_API_KEY": "site-key",
    }
    site = resolve(EntailmentOptions(timeout_s=5), env)
    assert site == JudgeConfig("http://judge.internal/v1", "site-model", "site-key", 5.0)
    assert configured(EntailmentOptions(model="project-model"), env).model == "project-model"
    assert resolve(EntailmentOptions(), {}) is None
    assert resolve(EntailmentOptions(judge_url="http://x/v1"), {}) is None  # a URL and no model


def test_the_site_wide_key_goes_only_to_the_site_wide_judge() -> None:
    env = {
        "RECEIPTS_JUDGE_URL": "http://judge.internal/v1",
        "RECEIPTS_JUDGE_MODEL": "m",
        "RECEIPTS_JUDGE_API_KEY": "site-key",
    }
    elsewhere = EntailmentOptions(judge_url="http://elsewhere.example/v1")
    assert configured(elsewhere, env).api_key is None
    assert configured(elsewhere, env, project_key="project-key").api_key == "project-key"
    # The site's own URL, named in a project's options too, is the site's judge.
    same = EntailmentOptions(judge_url="http://judge.internal/v1/")
    assert configured(same, env, project_key="project-key").api_key == "site-key"
    assert configured(EntailmentOptions(), env, project_key="project-key").api_key == "site-key"


def test_only_a_judge_url_of_the_options_is_checked_against_the_allow_list() -> None:
    env = {"RECEIPTS_JUDGE_URL": "http://127.0.0.1:11434/v1", "RECEIPTS_JUDGE_MODEL": "m"}
    assert configured(EntailmentOptions(), env).allow is None  # the operator's own URL
    project = configured(EntailmentOptions(judge_url="http://elsewhere.example/v1"), env)
    assert project.allow == Allow()  # nothing allowed beyond public addresses
    env["RECEIPTS_OUTBOUND_ALLOW"] = "127.0.0.1/32,judge.internal"
    project = configured(EntailmentOptions(judge_url="http://elsewhere.example/v1"), env)
    assert project.allow == Allow.parse(["127.0.0.1/32", "judge.internal"])
    given = configured(EntailmentOptions(judge_url="http://x.example/v1"), env, allow=Allow())
    assert given.allow == Allow()


def test_options_cannot_name_a_variable_to_read_a_key_from() -> None:
    """api_key_env let a project admin send the site's key (or any RECEIPTS_JUDGE_ secret)
    to a URL of their choosing: it is refused, with where a key goes instead."""
    raw = {"entailment": {"judge_url": "http://x/v1", "model": "m", "api_key_env": "RECEIPTS_JUDGE_API_KEY"}}
    with pytest.raises(OptionsError, match=r"entailment\.api_key_env.*settings page"):
        parse_options(raw)


@pytest.mark.parametrize(
    "host",
    ["127.1", "0x7f000001", "[::ffff:127.0.0.1]", "169.254.169.254", "10.0.0.1", "[::1]", "localhost"],
)
def test_a_judge_at_an_address_that_is_not_public_is_refused_before_connecting(
    judge_server: JudgeServer, host: str
) -> None:
    port = judge_server.httpd.server_address[1]
    config = JudgeConfig(f"http://{host}:{port}/v1", "judge-7b", "sk-project", 1.0, allow=Allow())
    with pytest.raises(JudgeUnavailable, match="is refused"):
        Judge(config).ask("## The answer\n\nok")
    assert judge_server.requests == []


def test_an_allowed_network_is_reached(judge_server: JudgeServer) -> None:
    config = JudgeConfig(judge_server.url, "judge-7b", None, 1.0, allow=Allow.parse("127.0.0.1/32"))
    assert Judge(config).ask("## The answer\n\nok").text.startswith("yes")


def test_the_endpoint_is_the_chat_completions_path_of_the_base() -> None:
    assert endpoint("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1/chat/completions"
    assert endpoint("http://h/v1/") == "http://h/v1/chat/completions"
    assert endpoint("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


# --- asking ---------------------------------------------------------------------------------


def test_it_asks_at_temperature_zero_and_reads_the_reply_and_its_usage(judge_server: JudgeServer) -> None:
    judge_server.usage = {"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}
    reply = client(judge_server).ask("## Answer A\n\nup\n\n## Answer B\n\nup")
    (request,) = judge_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "judge-7b"
    assert request["body"]["temperature"] == 0
    assert request["body"]["messages"] == [
        {"role": "user", "content": "## Answer A\n\nup\n\n## Answer B\n\nup"}
    ]
    assert reply.text.startswith("no\n")
    assert (reply.prompt_tokens, reply.completion_tokens, reply.total_tokens) == (40, 7, 47)
    assert reply.model == "judge-7b"


def test_a_missing_total_is_the_sum_of_its_parts(judge_server: JudgeServer) -> None:
    judge_server.usage = {"prompt_tokens": 40, "completion_tokens": 7}
    assert client(judge_server).ask("## The answer\n\nok").total_tokens == 47


def test_the_key_is_sent_as_a_bearer_token_and_no_header_without_one(judge_server: JudgeServer) -> None:
    client(judge_server, key="sk-test-123").ask("## The answer\n\nok")
    client(judge_server).ask("## The answer\n\nok")
    with_key, without = judge_server.requests
    assert with_key["headers"]["Authorization"] == "Bearer sk-test-123"
    assert "Authorization" not in without["headers"]


@pytest.mark.parametrize("status", [500, 503, 429])
def test_a_passing_failure_is_retried(judge_server: JudgeServer, status: int) -> None:
    judge_server.failures = [status, status]
    reply = client(judge_server).ask("## The answer\n\nok")
    assert reply.text.startswith("yes")
    assert len(judge_server.requests) == 3


def test_a_lasting_failure_is_retried_twice_then_unavailable(judge_server: JudgeServer) -> None:
    judge_server.failures = [500] * 5
    with pytest.raises(JudgeUnavailable, match=r"HTTP 500.*after 3 attempts"):
        client(judge_server).ask("## The answer\n\nok")
    assert len(judge_server.requests) == 3


def test_a_refused_key_is_not_retried(judge_server: JudgeServer) -> None:
    judge_server.failures = [401]
    with pytest.raises(JudgeUnavailable, match=r"HTTP 401 \(check the API key\)"):
        client(judge_server, key="wrong").ask("## The answer\n\nok")
    assert len(judge_server.requests) == 1


def test_a_judge_slower_than_the_timeout_is_unavailable(judge_server: JudgeServer) -> None:
    judge_server.delay_s = 2.5
    started = time.monotonic()
    with pytest.raises(JudgeUnavailable, match=r"did not answer within 1 s"):
        client(judge_server, timeout_s=1).ask("## The answer\n\nok")
    assert time.monotonic() - started < 2.0
    assert len(judge_server.requests) == 1


def test_a_judge_no_one_listens_for_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = JudgeConfig(url=f"http://127.0.0.1:{port}/v1", model="m", api_key=None, timeout_s=1)
    with pytest.raises(JudgeUnavailable, match="could not be reached"):
        Judge(config).ask("question")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>gateway</html>", "not JSON"),
        (b'{"object": "chat.completion", "choices": []}', "no choices"),
        (b'{"choices": [{"message": {"content": 7}}]}', "not text"),
    ],
)
def test_a_reply_outside_the_protocol_is_unavailable(
    judge_server: JudgeServer, body: bytes, reason: str
) -> None:
    judge_server.raw_body = body
    with pytest.raises(JudgeUnavailable, match=reason):
        client(judge_server).ask("q")


def test_a_reply_in_content_parts_is_every_part_s_text_joined(judge_server: JudgeServer) -> None:
    parts = [{"type": "text", "text": "No."}, {"type": "image_url"}, {"text": "It says more."}, "x"]
    judge_server.raw_body = json.dumps({"choices": [{"message": {"content": parts}}]}).encode()
    assert client(judge_server).ask("q").text == "No.\n\nIt says more."


def test_a_redirect_is_not_followed_with_the_key(judge_server: JudgeServer) -> None:
    judge_server.redirect_to = "http://127.0.0.1:9/v1/chat/completions"
    with pytest.raises(JudgeUnavailable, match="HTTP 302"):
        client(judge_server, key="sk-test").ask("q")
    assert len(judge_server.requests) == 1
