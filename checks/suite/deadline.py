"""A time limit that the checkers observe themselves.

A caller that cannot stop a check from outside (a web server's request thread) gives ``run_suite`` a
number of seconds; each checker calls ``check`` where its work grows with the conversation, and past the
limit the run ends with ``DeadlinePassed``, never with findings that look complete and are not. The limit
is a context variable: each thread keeps its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# (when the running block's limit passes, on the monotonic clock; the limit as given)
_LIMIT: ContextVar[tuple[float, float] | None] = ContextVar("suite_deadline", default=None)


class DeadlinePassed(BaseException):
    """The run went past its time limit. Not an Exception: a checker that keeps the rest of the suite
    going past its own failure (``except Exception``) must not swallow it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the check took longer than {seconds:g} s")
        self.seconds = seconds


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Runs the block with a limit of ``seconds`` (None or 0 or less: no limit)."""
    token = _LIMIT.set((time.monotonic() + seconds, seconds)) if seconds is not None and seconds > 0 else None
    try:
        yield
    finally:
        if token is not None:
            _LIMIT.reset(token)


def check() -> None:
    """Raises DeadlinePassed once the running block's limit has passed."""
    limit = _LIMIT.get()
    if limit is not None and time.monotonic() > limit[0]:
        raise DeadlinePassed(limit[1])
