"""Giving freed memory back to the system after a large piece of work.

Decoding an OTLP export, or a request carrying one, builds tens of megabytes of objects that
are freed once it is stored; glibc's allocator keeps the freed pages for the process, so each
gunicorn and Celery process would stay at the size of the largest export it ever handled.
``release`` asks the allocator to return them (``malloc_trim``), which takes a millisecond or
two; called after each Celery task (grounding_site/celery.py) and after each request whose
body was large (gunicorn.conf.py). Where the C library has no ``malloc_trim`` it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

# A request body at least this large is followed by a release.
LARGE_BODY_BYTES = 256 * 1024


def _trim() -> Callable[[], None] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


_release = _trim()


def release() -> None:
    """Returns the process's freed heap memory to the system, where the C library can."""
    if _release is not None:
        _release()
