"""The Celery application; its settings are the CELERY_* names in settings.py."""

import os

from celery import Celery
from celery.signals import task_postrun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding_site.settings")

app = Celery("receipts")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_postrun.connect
def _release_memory(**kwargs: object) -> None:
    # A store task decodes whole exports; what it freed goes back to the system, so a pool
    # process does not stay at the size of the largest batch it took.
    from grounding_site import memory

    memory.release()
