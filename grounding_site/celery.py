"""The Celery application; its settings are the CELERY_* names in settings.py."""

import os

from celery import Celery
from celery.signals import task_postrun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding_site.settings")
# Celery's Django fixup runs Django's system checks when a worker starts and discards what they
# say; their URL check imports every view, the REST framework and the schema generator into a
# process that serves no request (about 5 MiB of each worker process, more with the schema).
# `manage.py migrate` and `check` still run them and report.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("receipts")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_postrun.connect
def _release_memory(**kwargs: object) -> None:
    # A store task decodes whole exports; what it freed goes back to the system, so a pool
    # process does not stay at the size of the largest batch it took.
    from grounding_site import memory

    memory.release()
