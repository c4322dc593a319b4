"""Explicit output shapes of the API, one per resource."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from ..models import CheckRun, Conversation, Finding, RawExport


class RunSerializer(serializers.ModelSerializer[CheckRun]):
    class Meta:
        model = CheckRun
        fields = ["id", "status", "suite_version", "attempts", "error", "created_at", "finished_at"]


class ConversationSerializer(serializers.ModelSerializer[Conversation]):
    url = serializers.SerializerMethodField()
    findings_url = serializers.SerializerMethodField()
    turns = serializers.IntegerField(source="turn_count", read_only=True)
    latest_run = serializers.SerializerMethodField()

    class Meta:
        model = Conversation
        fields = [
            "id",
            "external_id",
            "title",
            "agent_name",
            "agent_model",
            "started_at",
            "created_at",
            "updated_at",
            "turns",
            "url",
            "findings_url",
            "latest_run",
        ]

    def get_url(self, obj: Conversation) -> str:
        return self.context["request"].build_absolute_uri(obj.get_absolute_url())

    def get_findings_url(self, obj: Conversation) -> str:
        from django.urls import reverse

        return self.context["request"].build_absolute_uri(reverse("api-findings", args=[obj.pk]))

    def get_latest_run(self, obj: Conversation) -> dict[str, Any] | None:
        latest = getattr(obj, "latest_runs", None)  # prefetched by visible_conversations
        if latest is not None:
            run = latest[0] if latest else None
        else:
            run = obj.runs.order_by("-created_at", "-id").first()
        return RunSerializer(run).data if run else None


class FindingSerializer(serializers.Serializer[Finding]):
    """The finding as the suite reported it (CONTRACT.md §2), plus where review stands."""

    def to_representation(self, instance: Finding) -> dict[str, Any]:
        out = dict(instance.details)
        out.update(
            {
                "id": instance.pk,
                "status": instance.status,
                "url": self.context["request"].build_absolute_uri(instance.turn.get_absolute_url())
                + f"#finding-{instance.pk}",
            }
        )
        return out


class RawExportSerializer(serializers.ModelSerializer[RawExport]):
    """What became of an OTLP export: ``waiting`` to be stored, ``stored`` (``rejected``
    records refused, ``reason`` saying why), or ``refused`` whole, with the reason."""

    endpoint = serializers.SerializerMethodField()
    received_at = serializers.DateTimeField(source="created_at", read_only=True)
    bytes = serializers.IntegerField(source="size", read_only=True)
    conversations = serializers.DictField(source="counts", child=serializers.IntegerField(), read_only=True)

    class Meta:
        model = RawExport
        fields = [
            "id",
            "endpoint",
            "state",
            "received_at",
            "finished_at",
            "bytes",
            "records",
            "rejected",
            "reason",
            "conversations",
        ]

    def get_endpoint(self, obj: RawExport) -> str:
        return "/v1/logs" if obj.signal == "logs" else "/v1/traces"
