"""The test server answers one request at a time when its database is SQLite.

Django's live server runs each request in a thread of its own but, for an in-memory SQLite
database, hands every thread the test's one connection: two requests at once (a page and
the htmx request it starts, a span export and a log export) then share a cursor, and one of
them fails as "the database is unavailable" or reads another's rows. A real deployment has
a connection per thread, so the server here takes requests in turn rather than the tests
working around it. Connections are still accepted concurrently (keep-alive included); only
the application is entered by one request at a time, its whole body read inside.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.core.servers.basehttp import ThreadedWSGIServer
from django.db import connections

App = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class OneRequestAtATime(ThreadedWSGIServer):
    def set_app(self, application: App) -> None:
        lock = threading.Lock()

        def in_turn(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            with lock:
                answer = application(environ, start_response)
                try:
                    return list(answer)
                finally:
                    close = getattr(answer, "close", None)
                    if close is not None:
                        close()

        super().set_app(in_turn)


def shares_one_connection() -> bool:
    """Whether the live server would share the test's connection among its threads: the
    test database of SQLite is in memory (a file one would lock up as soon as two write)."""
    return connections["default"].vendor == "sqlite"
