"""A receiver on loopback for the tests of outbound requests (webhooks, the judge's client).

It records each request's method and path and answers 200 with ``received``, or a redirect
to ``location``; it speaks real HTTP, so the code under test makes real connections.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """Records each request (method and path); answers 200, or 302 to ``location``."""

    def __init__(self, host: str = "127.0.0.1", location: str | None = None) -> None:
        self.requests: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                owner.requests.append(f"{self.command} {self.path}")
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(302 if location else 200)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "8")
                self.end_headers()
                self.wfile.write(b"received")

            do_GET = do_POST = _answer  # noqa: N815 - the http.server names

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
