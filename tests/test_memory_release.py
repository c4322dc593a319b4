"""Freed memory is given back after large work (grounding_site/memory.py): after each Celery
task, and after a request with a large body (gunicorn.conf.py)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from grounding_site import memory

ROOT = Path(settings.BASE_DIR)


def test_release_returns_freed_memory_without_failing() -> None:
    freed = [bytes(1024) for _ in range(1000)]
    del freed
    memory.release()


def test_only_a_large_body_is_followed_by_a_release(monkeypatch: pytest.MonkeyPatch) -> None:
    conf: dict[str, Any] = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    calls: list[int] = []
    monkeypatch.setattr(memory, "release", lambda: calls.append(1))
    conf["post_request"](None, None, {"CONTENT_LENGTH": "10"}, None)
    assert calls == []
    conf["post_request"](None, None, {"CONTENT_LENGTH": str(memory.LARGE_BODY_BYTES)}, None)
    assert calls == [1]
