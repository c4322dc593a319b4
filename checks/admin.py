"""The Django admin: where a site admin adds projects, members and their roles."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import ApiKey, AuditEvent, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `manage.py apikey create` (the only time a key is shown)."""

    list_display = ["prefix", "project", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["project"]
    readonly_fields = ["project", "prefix", "hashed", "created_at", "last_used_at"]
    fields = ["project", "name", "prefix", "hashed", "created_at", "last_used_at", "expires_at", "revoked_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the log is append-only, and `manage.py verify_audit` checks its chain."""

    list_display = ["created_at", "project", "actor_name", "verb", "object_type", "object_id"]
    list_filter = ["project", "verb"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
