from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.db.backends.signals import connection_created

from .suite.outbound import Allow


def outbound_allow_list(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """RECEIPTS_OUTBOUND_ALLOW is read when a webhook or a judge is used; a mistyped entry is
    said at start-up (migrate, runserver, `manage.py check`), not when a project saves one."""
    try:
        Allow.parse(settings.RECEIPTS_OUTBOUND_ALLOW)
    except ValueError as exc:
        return [checks.Error(str(exc), hint="Fix or remove the entry.", id="receipts.E001")]
    return []


def _bind_lists_in_binary(sender: Any, connection: Any, **kwargs: Any) -> None:
    """On PostgreSQL, a list parameter (the arrays of Django's bulk insert, ``INSERT … SELECT *
    FROM UNNEST(…)``) is sent in the binary format. In the text format each element is quoted
    and escaped in Python, a regular expression over every string: storing an export's
    conversations spent more time there than anywhere else."""
    if connection.vendor != "postgresql":
        return
    from psycopg.types.array import ListBinaryDumper

    connection.connection.adapters.register_dumper(list, ListBinaryDumper)


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = "Receipts"

    def ready(self) -> None:
        # Imported here, once the apps are loaded, as Django asks of what registers itself.
        from . import superusers
        from .views import auth  # noqa: F401  (connects the sign-in limiter and its audit)

        superusers.connect()
        connection_created.connect(_bind_lists_in_binary)
        checks.register(outbound_allow_list, checks.Tags.security)
