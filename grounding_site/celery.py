"""The Celery application; its settings are the CELERY_* names in settings.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding_site.settings")

app = Celery("receipts")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
