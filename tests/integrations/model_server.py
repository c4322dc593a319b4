"""A scripted OpenAI-compatible model on loopback, for driving real client libraries.

It serves Chat Completions (``POST …/chat/completions``, no streaming) and plays one
two-step tool loop: while the conversation holds no tool result it answers with a call to
``get_order``; once a tool result is in, it answers with the final text, which gets the
number of items WRONG (the result says 2, the answer says 5), so the audit has something
to flag. The reply depends only on the messages sent, so a library that retries or sends
the history again gets the same answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-order-model"
ORDER_ID = "A-1001"
QUESTION = f"How many items are in order {ORDER_ID}, and has it shipped?"
TOOL_NAME = "get_order"
TOOL_CALL_ID = "call_get_order_1"
# What the tool returns: two items. The answer below says five.
ORDER = {
    "order_id": ORDER_ID,
    "status": "shipped",
    "item_count": 2,
    "items": [{"sku": "MUG-01", "quantity": 1}, {"sku": "TEE-02", "quantity": 1}],
}
WRONG_FIGURE = "5"
FINAL_ANSWER = f"Order {ORDER_ID} has {WRONG_FIGURE} items and it has shipped."
# A fixed creation time: nothing in the replies depends on the clock.
CREATED = 1767225600


def get_order(order_id: str) -> dict[str, Any]:
    """The tool the loops run: the order as the shop knows it."""
    if order_id != ORDER_ID:
        return {"error": f"no order {order_id}"}
    return dict(ORDER)


def reply_to(messages: list[dict[str, Any]], number: int) -> dict[str, Any]:
    """The chat completion answering ``messages``: a tool call first, then the final text."""
    has_result = any(m.get("role") == "tool" for m in messages)
    if has_result:
        message: dict[str, Any] = {"role": "assistant", "content": FINAL_ANSWER}
        finish = "stop"
    else:
        arguments = json.dumps({"order_id": ORDER_ID})
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": TOOL_CALL_ID,
                    "type": "function",
                    "function": {"name": TOOL_NAME, "arguments": arguments},
                }
            ],
        }
        finish = "tool_calls"
    prompt_tokens = sum(len(json.dumps(m)) // 4 for m in messages)
    completion_tokens = len(json.dumps(message)) // 4
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ModelServer:
    """The scripted model on 127.0.0.1, port chosen by the system; keeps each request body."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"only chat/completions here, not {self.path}"}})
                    return
                try:
                    request = json.loads(raw)
                    messages = request["messages"]
                except (ValueError, KeyError, TypeError):
                    self._send(400, {"error": {"message": "a JSON body with messages is needed"}})
                    return
                if request.get("stream"):
                    self._send(400, {"error": {"message": "this scripted model does not stream"}})
                    return
                with owner._lock:
                    owner.requests.append(request)
                    number = len(owner.requests)
                self._send(200, reply_to(messages, number))

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # What an OpenAI client takes as base_url.
        self.url = f"http://{host}:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
