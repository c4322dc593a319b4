"""The Redis broker transport the workers and the web process use: kombu's, with one fault mended.

When a worker loses Redis it collects the broken connection, which detaches the transport from its
client, and then closes the connection too. Closing a channel that still holds unacknowledged
messages restores them to their queue over a new connection built from that client; with the
client gone kombu raises an AttributeError, which is no connection error, so the worker treats it
as unrecoverable and exits instead of reconnecting (seen with kombu 5.7.0 when Redis restarts:
tests/faults/test_faults_redis_restart.py). Without a client there is no broker to reach, so the
transport says so as the connection error it is: the close ignores it and the worker reconnects.
Nothing is lost: the messages stay unacknowledged in Redis until the visibility timeout hands
them out again, and the sweeper sends any run that is left pending.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            raise RedisConnectionError("the broker connection was collected; reconnect to reach Redis")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
