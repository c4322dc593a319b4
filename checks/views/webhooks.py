"""A project's webhooks: admins register URLs (the secret is shown once) and choose events;
members read the delivery log, and admins alone what the receivers answered."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import administration, webhooks
from ..models import Role, Webhook, WebhookDelivery
from .access import project_for, require_admin

CHANGE = "change its webhooks"


@login_required
def webhooks_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "events": webhooks.EVENTS,
        "secret": None,
        "error": "",
        "url": "",
    }
    status = 200
    if request.method == "POST":
        require_admin(membership, CHANGE)
        context["url"] = request.POST.get("url", "").strip()
        try:
            _, secret = administration.create_webhook(
                project=project,
                actor=request.user,
                url=context["url"],
                events=request.POST.getlist("events"),
            )
        except administration.AdminError as exc:
            context["error"], status = str(exc), 400
        else:
            context["secret"], context["url"] = secret, ""  # shown on this response only
    context["webhooks"] = Webhook.objects.filter(project=project).order_by("-created_at")
    deliveries = WebhookDelivery.objects.filter(project=project).select_related("webhook")
    if membership.role != Role.ADMIN:
        # What a receiver answered can be anything it holds: admins chose the URL and read it.
        deliveries = deliveries.defer("response_excerpt")
    context["deliveries"] = deliveries[:50]
    return render(request, "checks/webhooks.html", context, status=status)


@login_required
@require_POST
def toggle_webhook(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, CHANGE)
    hook = get_object_or_404(Webhook.objects.filter(project=project), pk=pk)
    administration.toggle_webhook(webhook=hook, actor=request.user)
    return redirect("webhooks", project.slug)


@login_required
@require_POST
def redeliver(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, CHANGE)
    delivery = get_object_or_404(WebhookDelivery.objects.filter(project=project), pk=pk)
    webhooks.redeliver(delivery, actor=request.user)
    return redirect("webhooks", project.slug)
