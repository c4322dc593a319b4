"""A web worker connects before its first request (grounding_site/warm.py, called from
gunicorn.conf.py); a service it cannot reach yet is left to that request, never a failed start."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from grounding_site import warm
from grounding_site.celery import app

pytestmark = pytest.mark.django_db


def test_a_web_worker_warms_up(settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    warm.web_worker()


def test_a_broker_out_of_reach_is_left_to_the_first_request(
    settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionRefusedError("no broker")

    monkeypatch.setattr(app, "producer_or_acquire", unreachable)
    with caplog.at_level(logging.WARNING, logger="grounding_site.warm"):
        warm.web_worker()
    assert "could not reach the broker" in caplog.text
