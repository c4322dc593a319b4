"""The broker transport on a real Redis: a worker whose connection was collected after Redis went
away closes it without a fatal error, and the message it held stays in Redis to be handed out again
(grounding_site/broker.py)."""

from __future__ import annotations

import uuid

import kombu
import pytest
import redis
from django.conf import settings
from kombu.common import ignore_errors

from grounding_site.broker import Transport
from tests.services.conftest import require_real_services

pytestmark = [pytest.mark.services]


def test_closing_a_collected_connection_that_holds_an_unacknowledged_message() -> None:
    require_real_services()
    from grounding_site.celery import app

    name = f"receipts-broker-test-{uuid.uuid4().hex}"
    queue = kombu.Queue(name, routing_key=name)
    connection = app.connection_for_write()
    assert isinstance(connection.transport, Transport), "the app must use the mended transport"
    with connection.Producer() as producer:
        producer.publish({"run_ids": [1]}, routing_key=name, declare=[queue])
    channel = connection.default_channel
    message = channel.basic_get(name, no_ack=False)
    assert message is not None
    tag = message.delivery_tag
    store = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        # What the worker's collect() leaves when Redis went away: the transport without its client.
        connection.transport.client = None
        # The worker closes the collected connection ignoring connection errors; anything else
        # (kombu's own AttributeError here) ends the worker instead of letting it reconnect.
        ignore_errors(connection, connection.close)
        assert store.hexists(channel.unacked_key, tag), "the unacknowledged message left Redis"
    finally:
        store.hdel(channel.unacked_key, tag)
        store.zrem(channel.unacked_index_key, tag)
        store.delete(name)
