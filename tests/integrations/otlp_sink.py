"""An OTLP/HTTP receiver on loopback that keeps each export byte for byte.

Used to capture what real instrumentation sends (tests/integrations/capture.py): every
POST is kept with its path, content type and content encoding, in arrival order, and
answered as a collector would (200 with an empty export response, which in protobuf is
zero bytes and in JSON ``{}``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Export:
    path: str  # /v1/traces or /v1/logs (or /v1/metrics, which the captures leave out)
    content_type: str
    content_encoding: str | None
    body: bytes


class OtlpSink:
    """Keeps every export sent to it; port chosen by the system."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.exports: list[Export] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                content_type = self.headers.get("Content-Type") or ""
                with owner._lock:
                    owner.exports.append(
                        Export(self.path, content_type, self.headers.get("Content-Encoding"), body)
                    )
                answer = b"{}" if "json" in content_type else b""
                self.send_response(200)
                self.send_header("Content-Type", content_type or "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> OtlpSink:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
