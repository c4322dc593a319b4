from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from checks.api import otlp
from checks.api import views as api
from checks.views import auth, health, keys, project_settings, queue, turns

# Swagger UI sets inline styles; only its page allows them, and still no inline script.
docs_view = csp_override({**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]})(
    SpectacularSwaggerSplitView.as_view(url_name="api-schema")
)

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", queue.home, name="home"),
    path("p/<slug:slug>/", queue.queue, name="queue"),
    path("p/<slug:slug>/settings", project_settings.project_settings, name="project-settings"),
    path("p/<slug:slug>/keys", keys.keys, name="keys"),
    path("p/<slug:slug>/keys/<int:pk>/revoke", keys.revoke_key, name="revoke-key"),
    path("p/<slug:slug>/conversations/<int:pk>/", turns.conversation, name="conversation"),
    path("p/<slug:slug>/conversations/<int:pk>/run", turns.run_status, name="run-status"),
    path("p/<slug:slug>/turns/<int:pk>/", turns.turn, name="turn"),
    path("p/<slug:slug>/turns/<int:pk>/audit", turns.audit_log, name="turn-audit"),
    path("p/<slug:slug>/findings/<int:pk>/decide", turns.decide, name="decide"),
    # API
    path("api/v1/conversations", api.conversations, name="api-conversations"),
    path("api/v1/conversations/bulk", api.conversations_bulk, name="api-conversations-bulk"),
    path("api/v1/check", api.check, name="api-check"),
    path("api/v1/capability-statement", api.capability_statement, name="api-capability-statement"),
    path("api/v1/stats", api.stats, name="api-stats"),
    path("v1/traces", otlp.traces, name="otlp-traces"),
    path("api/v1/conversations/<int:pk>", api.conversation_detail, name="api-conversation"),
    path("api/v1/conversations/<int:pk>/findings", api.conversation_findings, name="api-findings"),
    path("api/v1/schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs", docs_view, name="api-docs"),
    path("admin/", admin.site.urls),
]
