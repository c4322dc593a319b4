from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

# `schema` registers how the schema describes API keys. It is imported here, beside the schema's
# view, and not when the apps load, so that a Celery worker (which serves no schema) does not
# import drf-spectacular and the REST framework's fields, and with them requests, markdown and
# pygments: about 26 MiB in each worker process.
from checks.api import otlp, otlp_exports, otlp_logs, schema  # noqa: F401
from checks.api import reports as api_reports
from checks.api import views as api
from checks.views import audit_log as audit_log_views
from checks.views import auth, health, keys, project_settings, queue, results, turns
from checks.views import conversations as conversation_views
from checks.views import exports as export_views
from checks.views import history as history_views
from checks.views import members as member_views
from checks.views import overview as overview_views
from checks.views import refusals as refusal_views
from checks.views import webhooks as webhook_views

# Swagger UI sets inline styles; only its page allows them, and still no inline script.
docs_view = csp_override({**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]})(
    SpectacularSwaggerSplitView.as_view(url_name="api-schema")
)

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("login/", auth.limit_sign_in(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", queue.home, name="home"),
    path("p/<slug:slug>/", queue.queue, name="queue"),
    path("p/<slug:slug>/settings", project_settings.project_settings, name="project-settings"),
    path("p/<slug:slug>/keys", keys.keys, name="keys"),
    path("p/<slug:slug>/keys/<int:pk>/revoke", keys.revoke_key, name="revoke-key"),
    path("p/<slug:slug>/refusals", refusal_views.refusals, name="refusals"),
    path("p/<slug:slug>/conversations/", conversation_views.conversations, name="conversations"),
    path("p/<slug:slug>/conversations/<int:pk>/", turns.conversation, name="conversation"),
    path("p/<slug:slug>/conversations/<int:pk>/run", turns.run_status, name="run-status"),
    path("p/<slug:slug>/turns/<int:pk>/", turns.turn, name="turn"),
    path("p/<slug:slug>/turns/<int:pk>/audit", turns.audit_log, name="turn-audit"),
    path("p/<slug:slug>/findings/<int:pk>/decide", turns.decide, name="decide"),
    path("p/<slug:slug>/findings/<int:pk>/correction", turns.save_correction, name="save-correction"),
    path("p/<slug:slug>/findings/<int:pk>/comments", turns.comment, name="comment"),
    path("p/<slug:slug>/findings/<int:pk>/assign", turns.assign, name="assign"),
    path(
        "p/<slug:slug>/corrections/<int:pk>/approve",
        turns.decide_correction,
        {"action": "approve"},
        name="approve-correction",
    ),
    path(
        "p/<slug:slug>/corrections/<int:pk>/reject",
        turns.decide_correction,
        {"action": "reject"},
        name="reject-correction",
    ),
    path("p/<slug:slug>/turns/<int:pk>/hold", turns.hold, name="turn-hold"),
    path("p/<slug:slug>/turns/<int:pk>/release", turns.release, name="turn-release"),
    path("p/<slug:slug>/turns/<int:pk>/results/<int:seq>", results.result_part, name="result-part"),
    path("p/<slug:slug>/bulk", queue.bulk, name="bulk"),
    path("p/<slug:slug>/progress", queue.queue_progress, name="queue-progress"),
    path("p/<slug:slug>/views", queue.save_view, name="save-view"),
    path("p/<slug:slug>/views/<int:pk>/delete", queue.delete_view, name="delete-view"),
    path("p/<slug:slug>/members", member_views.members, name="members"),
    path("p/<slug:slug>/members/<int:pk>/role", member_views.change_role, name="member-role"),
    path("p/<slug:slug>/members/<int:pk>/remove", member_views.remove, name="member-remove"),
    path("p/<slug:slug>/members/invite", member_views.invite, name="member-invite"),
    path(
        "p/<slug:slug>/invitations/<int:pk>/revoke",
        member_views.revoke_invitation,
        name="invitation-revoke",
    ),
    path("invite/<str:token>/", member_views.invitation, name="invitation"),
    path("p/<slug:slug>/history/<str:kind>/<str:object_id>", history_views.history, name="history"),
    path("p/<slug:slug>/agreement", history_views.agreement, name="agreement"),
    path("p/<slug:slug>/audit", audit_log_views.audit_log, name="audit-log"),
    path("p/<slug:slug>/audit/verify", audit_log_views.verify_chain, name="audit-verify"),
    path("p/<slug:slug>/agreement/double-review", history_views.double_review, name="double-review"),
    path("p/<slug:slug>/overview", overview_views.overview, name="overview"),
    path("p/<slug:slug>/report.pdf", overview_views.project_report, name="project-report"),
    path(
        "p/<slug:slug>/conversations/<int:pk>/report.pdf",
        overview_views.conversation_report,
        name="conversation-report",
    ),
    path("p/<slug:slug>/exports", export_views.exports_page, name="exports"),
    path("p/<slug:slug>/exports/file", export_views.export_file, name="export-file"),
    path("p/<slug:slug>/exports/jobs", export_views.start_export, name="export-start"),
    path("p/<slug:slug>/exports/jobs/<int:pk>", export_views.export_job, name="export-job"),
    path("p/<slug:slug>/exports/jobs/<int:pk>/file", export_views.export_job_file, name="export-job-file"),
    path("p/<slug:slug>/webhooks", webhook_views.webhooks_page, name="webhooks"),
    path("p/<slug:slug>/webhooks/<int:pk>/toggle", webhook_views.toggle_webhook, name="webhook-toggle"),
    path(
        "p/<slug:slug>/webhooks/deliveries/<int:pk>/redeliver",
        webhook_views.redeliver,
        name="webhook-redeliver",
    ),
    # API
    path("api/v1/conversations", api.conversations, name="api-conversations"),
    path("api/v1/conversations/bulk", api.conversations_bulk, name="api-conversations-bulk"),
    path("api/v1/check", api.check, name="api-check"),
    path("api/v1/capability-statement", api.capability_statement, name="api-capability-statement"),
    path("api/v1/stats", api.stats, name="api-stats"),
    path("v1/traces", otlp.traces, name="otlp-traces"),
    path("v1/logs", otlp_logs.logs, name="otlp-logs"),
    path("api/v1/otlp-exports/<int:pk>", otlp_exports.otlp_export, name="api-otlp-export"),
    path("api/v1/conversations/<int:pk>", api.conversation_detail, name="api-conversation"),
    path("api/v1/conversations/<int:pk>/findings", api.conversation_findings, name="api-findings"),
    path("api/v1/findings.csv", api_reports.findings_csv, name="api-findings-csv"),
    path("api/v1/findings.jsonl", api_reports.findings_jsonl, name="api-findings-jsonl"),
    path("api/v1/report.pdf", api_reports.report_pdf, name="api-report-pdf"),
    path("api/v1/schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs", docs_view, name="api-docs"),
    # The admin's sign-in page, through the same limiter as the site's (before admin.site.urls,
    # which would otherwise answer the same path unlimited).
    path("admin/login/", auth.limit_sign_in(admin.site.login), name="admin-login"),
    path("admin/", admin.site.urls),
]
