"""Connections a web worker makes before its first request rather than in it.

The first OTLP export a gunicorn worker answered took half a second more than the next:
it imported the Redis client and connected to Redis (the API's throttle counts there), then
connected the Celery publisher and declared the queue it sends the store task to, and only
then answered. An exporter counts that against its export timeout. ``web_worker`` does it
all as the worker starts (gunicorn.conf.py's ``post_worker_init``, after the fork, so no
connection is shared between workers); what fails here (Redis not up yet) is only done
again in the first request, as before.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def web_worker() -> None:
    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection

    try:
        connection.ensure_connection()
    except Exception:
        log.warning("could not connect to the database before the first request", exc_info=True)
    try:
        cache.get("receipts:warm")
    except Exception:
        log.warning("could not reach the cache before the first request", exc_info=True)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    from grounding_site.celery import app

    app.finalize(auto=True)  # the task registry, built on first use
    try:
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=1)
            queue = app.amqp.queues[app.conf.task_default_queue]
            producer.maybe_declare(queue)
    except Exception:
        log.warning("could not reach the broker before the first request", exc_info=True)
