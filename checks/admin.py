"""The Django admin: where a site admin adds projects, members and their roles, and accounts.

Every change made here is written to the audit log, as the same change made on the site's
pages is: a project's settings, members and keys to the project's chain; accounts, groups,
and projects added or deleted to the site's (a project's own chain would keep it from ever
being deleted, and one being deleted has none left).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db import models, transaction
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse

from . import administration, audit, superusers
from .models import ApiKey, AuditEvent, Membership, Project, SiteEvent


def _plain(value: Any) -> Any:
    """A form value as the audit log keeps it: JSON, with objects by their id."""
    if isinstance(value, models.Model):
        return str(value.pk)
    if isinstance(value, (models.QuerySet, list, tuple, set)):
        return sorted(str(_plain(v)) for v in value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool, dict)):
        return value
    return str(value)


def _changes(form: BaseForm) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields a form changed, before and after; a password's value is never kept."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for name in form.changed_data:
        if "password" in name:
            before[name] = after[name] = "(changed)"
            continue
        was, now = _plain(form.initial.get(name)), _plain(form.cleaned_data.get(name))
        if was != now:  # a form can call a field changed that is not (a JSON field, for one)
            before[name], after[name] = was, now
    return before, after


class AuditedAdmin(admin.ModelAdmin):
    """Writes what is added, changed and deleted here to the audit log; the admin runs each of
    these in a transaction, which the event joins."""

    def audit_chain(self, obj: Any, *, adding: bool = False, deleting: bool = False) -> Project | None:
        """The project whose chain an event about obj goes to; None for the site's."""
        return None

    def _record(self, request: HttpRequest, obj: Any, action: str, **change: Any) -> None:
        kind = obj._meta.model_name
        chain = self.audit_chain(obj, adding=action == "created", deleting=action == "deleted")
        audit.record(project=chain, actor=request.user, verb=f"{kind}.{action}", target=obj, **change)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        before, after = _changes(form)
        super().save_model(request, obj, form, change)
        if change and not after:
            return  # saved unchanged
        self._record(
            request,
            obj,
            "changed" if change else "created",
            before=before if change else None,
            after=after,
        )

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self._record(request, obj, "deleted", before={"name": str(obj)})
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self._record(request, obj, "deleted", before={"name": str(obj)})
        super().delete_queryset(request, queryset)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


def _members(project: Project) -> dict[int, Membership]:
    return {m.pk: m for m in Membership.objects.filter(project=project).select_related("user")}


class OptionsField(forms.JSONField):
    """A project's checker options, read and checked as its settings page reads and checks
    them (``administration``): no option the suite refuses, no judge URL this site may not
    call, and JSON that cannot cost more to read than its size."""

    def to_python(self, value: Any) -> Any:
        if self.disabled or not isinstance(value, str):
            return super().to_python(value)
        try:
            return administration.options_from_text(value)
        except administration.InvalidOptions as exc:
            raise forms.ValidationError(str(exc), code="invalid") from exc

    def bound_data(self, data: Any, initial: Any) -> Any:
        # What the form shows back when refused, read as safely as when cleaned.
        if self.disabled or not isinstance(data, str):
            return super().bound_data(data, initial)
        try:
            return administration.options_from_text(data)
        except administration.InvalidOptions:
            return forms.fields.InvalidJSONInput(data)

    def validate(self, value: Any) -> None:
        super().validate(value)
        try:
            administration.validate_options(value)
        except administration.InvalidOptions as exc:
            raise forms.ValidationError(str(exc), code="invalid") from exc


class ProjectForm(forms.ModelForm):
    options = OptionsField(required=False, help_text=Project._meta.get_field("options").help_text)

    class Meta:
        model = Project
        fields = ["name", "slug", "options", "double_review"]


JUDGE_KEY_CLEARED = (
    "The judge URL changed, so the project's judge key was cleared: it was entered for the judge "
    "before. Enter the key for the new judge on the project's Settings page."
)


@admin.register(Project)
class ProjectAdmin(AuditedAdmin):
    form = ProjectForm
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]

    def audit_chain(self, obj: Any, *, adding: bool = False, deleting: bool = False) -> Project | None:
        return None if adding or deleting else obj

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: Any = None,
    ) -> HttpResponse:
        response = super().changeform_view(request, object_id, form_url, extra_context)
        # Refused options answer 400, as on the settings page, not the admin's usual 200.
        context = getattr(response, "context_data", None) or {}
        if request.method == "POST" and context.get("errors"):
            response.status_code = 400
        return response

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Saved and audited as any object here; then, as the settings page does, a judge URL
        changed clears the judge key entered for the old one."""
        super().save_model(request, obj, form, change)
        if not change:
            return  # a project made here has no key yet
        stored = form.initial.get("options")  # as the admin read it for this request
        if administration.forget_judge_key_if_moved(project=obj, actor=request.user, before=stored):
            self.message_user(request, JUDGE_KEY_CLEARED, messages.WARNING)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Members added, changed or removed in the inline, each as the members page writes it."""
        project = form.instance
        before = _members(project) if change else {}
        was = {pk: {"user": m.user.username, "role": m.role} for pk, m in before.items()}
        super().save_related(request, form, formsets, change)
        after = _members(project)
        for pk, member in after.items():
            now = {"user": member.user.username, "role": member.role}
            if pk not in was:
                verb, old = "member.added", None
            elif was[pk] != now:
                same_user = was[pk]["user"] == now["user"]
                verb, old = ("member.role_changed" if same_user else "member.changed"), was[pk]
            else:
                continue
            audit.record(project=project, actor=request.user, verb=verb, target=member, before=old, after=now)
        for pk in was.keys() - after.keys():
            audit.record(
                project=project, actor=request.user, verb="member.removed", target=before[pk], before=was[pk]
            )


@admin.register(ApiKey)
class ApiKeyAdmin(AuditedAdmin):
    """Keys are created on the project's keys page or with `manage.py apikey create` (the only
    times a key is shown), and revoked there or with `manage.py apikey revoke`.

    Revocation is read-only here: a revoked key stays revoked, since it may have leaked
    (issue a new one instead). Nor are keys deleted: a revoked key's row is what its audit
    events name. A key's name and expiry can be changed, and the change is audited."""

    list_display = ["prefix", "project", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["project"]
    readonly_fields = ["project", "prefix", "hashed", "created_at", "last_used_at", "revoked_at"]
    fields = ["project", "name", "prefix", "hashed", "created_at", "last_used_at", "expires_at", "revoked_at"]

    def audit_chain(self, obj: Any, *, adding: bool = False, deleting: bool = False) -> Project | None:
        return obj.project

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyLogAdmin(admin.ModelAdmin):
    """Read-only: the log is append-only, and `manage.py audit verify` checks its chains."""

    list_display = ["created_at", "actor_name", "verb", "object_type", "object_id"]
    list_filter = ["verb"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyLogAdmin):
    list_display = ["created_at", "project", "actor_name", "verb", "object_type", "object_id"]
    list_filter = ["project", "verb"]


@admin.register(SiteEvent)
class SiteEventAdmin(ReadOnlyLogAdmin):
    pass


# Accounts and groups, Django's own pages, audited to the site's chain: who made whom a
# superuser or staff, gave which permissions, or set whose password.

User = get_user_model()
admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AuditedUserAdmin(AuditedAdmin, UserAdmin):
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        # Audited here, with who is signed in, so not again as a superuser made elsewhere.
        with superusers.audited_by_caller():
            super().save_model(request, obj, form, change)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        with transaction.atomic():
            user = self.get_object(request, unquote(id))
            before = user.password if user is not None else None
            response = super().user_change_password(request, id, form_url)
            if user is not None and request.method == "POST":
                user.refresh_from_db(fields=["password"])
                if user.password != before:
                    audit.record(
                        project=None,
                        actor=request.user,
                        verb="user.password_changed",
                        target=user,
                        after={"usable": user.has_usable_password()},
                    )
            return response


@admin.register(Group)
class AuditedGroupAdmin(AuditedAdmin, GroupAdmin):
    pass
