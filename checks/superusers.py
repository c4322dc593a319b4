"""Superusers made anywhere but the Django admin, written to the site's audit chain.

A superuser can do anything on the site, so who became one, when and by what belongs in
the log however it happened. The admin audits its own changes with the signed-in user who
made them (``checks.admin``, which turns this off while it saves). Everything else that
saves a user goes through the user model's save signals, and so is caught here:

- ``manage.py createsuperuser``, asked or with ``--noinput`` and DJANGO_SUPERUSER_*;
- ``manage.py shell`` (or any script) calling ``create_superuser``, or setting
  ``is_superuser`` and saving;
- ``manage.py loaddata`` with a fixture that holds a superuser.

Each is ``user.created`` (a user made a superuser) or ``user.changed`` (made one, or no
longer one), the verbs the admin writes, by the command and the system user that ran it.
A queryset's ``update()`` and SQL send no signal and are not caught: they are as far
outside the application as a write to the audit tables themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save

from . import audit

_AUDITED_BY_CALLER: ContextVar[bool] = ContextVar("receipts_superuser_audited_by_caller", default=False)
_BEFORE = "_receipts_superuser_before"  # set on the instance between its pre_save and post_save
_UNCHANGED = object()


@contextmanager
def audited_by_caller() -> Iterator[None]:
    """Saves made inside write their own audit events (the Django admin's, with the
    signed-in user); none is written here for them."""
    token = _AUDITED_BY_CALLER.set(True)
    try:
        yield
    finally:
        _AUDITED_BY_CALLER.reset(token)


def process_actor() -> audit.System:
    """What is saving the user: the management command run, else the program."""
    path = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("python")
    program = path.parent.name if path.name == "__main__.py" else path.name  # python -m name
    if len(sys.argv) > 1 and program in ("manage.py", "django-admin", "django"):
        return audit.command_actor(sys.argv[1])
    return audit.System(username=f"{program} ({audit.login_name()})")


def _remember(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """Before a save: whether the user was a superuser (None for a user not stored yet)."""
    before: Any = _UNCHANGED
    if not _AUDITED_BY_CALLER.get() and (update_fields is None or "is_superuser" in update_fields):
        # A sign-in saves last_login alone: no query for it.
        stored = sender._default_manager.filter(pk=instance.pk) if instance.pk is not None else None
        before = stored.values_list("is_superuser", flat=True).first() if stored is not None else None
    setattr(instance, _BEFORE, before)


def _record(sender: Any, instance: Any, **kwargs: Any) -> None:
    """After a save: an event when the user became a superuser, or stopped being one."""
    before = getattr(instance, _BEFORE, _UNCHANGED)
    if hasattr(instance, _BEFORE):
        delattr(instance, _BEFORE)
    now = bool(instance.is_superuser)
    if before is _UNCHANGED or (before is None and not now) or before == now:
        return
    name = {"username": instance.get_username()}
    if before is None:
        after = {**name, "is_superuser": True, "is_staff": bool(instance.is_staff)}
        audit.record(project=None, actor=process_actor(), verb="user.created", target=instance, after=after)
        return
    audit.record(
        project=None,
        actor=process_actor(),
        verb="user.changed",
        target=instance,
        before={**name, "is_superuser": before},
        after={**name, "is_superuser": now},
    )


def connect() -> None:
    """Called once the apps are loaded (``checks.apps``)."""
    user = get_user_model()
    pre_save.connect(_remember, sender=user, dispatch_uid="receipts-superuser-before")
    post_save.connect(_record, sender=user, dispatch_uid="receipts-superuser-audit")
