"""The request of a page that answers htmx: django-htmx's middleware gives it ``request.htmx``.

A view that reads ``request.htmx`` takes this type instead of ``HttpRequest``, so the type
check knows the attribute (the pattern django-htmx documents).
"""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
