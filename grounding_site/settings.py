"""Settings for Receipts: one file, read from the environment, safe local defaults.

With nothing set, Receipts runs on the embedded default: SQLite and a Celery broker kept in
files under ``var/``, so no external service is needed. ``DATABASE_URL`` switches to
PostgreSQL and ``REDIS_URL`` to Redis as the broker.
"""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("RECEIPTS_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def _local_secret_key() -> str:
    # Without SECRET_KEY in the environment, a random key is made once and kept in var/,
    # so sessions survive restarts and no key is ever committed.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY") or _local_secret_key()
# Former keys, so that sessions (and audit events keyed from one) survive a rotation.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", "")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "checks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "grounding_site.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "grounding_site.urls"
WSGI_APPLICATION = "grounding_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]

# --- database -----------------------------------------------------------------------------

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'receipts.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write to the same file: WAL lets readers go on while
    # one writes, and IMMEDIATE transactions wait for the lock instead of failing midway.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The pages' queries are short: starting parallel workers for one took longer (20-30 ms
    # here) than it saved, on cores the web server and the workers need. 0 turns it off.
    parallel = int(os.environ.get("DATABASE_PARALLEL_WORKERS", "0"))
    options = DATABASES["default"].setdefault("OPTIONS", {})
    # After any server options DATABASE_URL gives (?options=...), not instead of them.
    options["options"] = f"{options.get('options', '')} -c max_parallel_workers_per_gather={parallel}".strip()
    # Parameters travel apart from the query (server-side binding): psycopg then needs no
    # quoting of each value into the SQL text, which cost a quarter of a worker's time storing
    # conversations, whose messages are long strings. DATABASE_SERVER_SIDE_BINDING=0 turns it off.
    options["server_side_binding"] = os.environ.get("DATABASE_SERVER_SIDE_BINDING", "1") != "0"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- auth, i18n, static -------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

# --- security -----------------------------------------------------------------------------

# Model output and tool results are shown on every page: nothing inline may run.
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", str(12 * 3600)))  # a working day
# HTTPS=true: served behind a proxy that terminates TLS and sets X-Forwarded-Proto.
HTTPS = env_bool("HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    # Health probes come from inside, over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Failed sign-ins per username and client address before a pause of LOGIN_LOCKOUT_SECONDS;
# and per username from all addresses, after which only addresses the user has signed in
# from before may go on trying (checks/views/auth.py says why).
LOGIN_MAX_FAILURES = int(os.environ.get("LOGIN_MAX_FAILURES", "5"))
LOGIN_USER_MAX_FAILURES = int(os.environ.get("LOGIN_USER_MAX_FAILURES", "50"))
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS", "900"))
# How many proxies that append to X-Forwarded-For stand in front of the app. 0: the client
# is REMOTE_ADDR and the header is ignored (anyone can send one).
RECEIPTS_TRUSTED_PROXY_HOPS = int(os.environ.get("RECEIPTS_TRUSTED_PROXY_HOPS", "0"))

# The audit chain's key, kept out of the database. Unset: derived from SECRET_KEY (under a
# fixed label). The fallbacks are older keys, for events written before a rotation.
RECEIPTS_AUDIT_KEY = os.environ.get("RECEIPTS_AUDIT_KEY", "")
RECEIPTS_AUDIT_KEY_FALLBACKS = env_list("RECEIPTS_AUDIT_KEY_FALLBACKS", "")
# Where each audit chain's head (its newest event) is written as it advances.
RECEIPTS_AUDIT_DIR = Path(os.environ.get("RECEIPTS_AUDIT_DIR", VAR_DIR / "audit"))

# Request bodies over these sizes are refused with 413 before they are read.
RECEIPTS_MAX_BODY_BYTES = int(os.environ.get("RECEIPTS_MAX_BODY_BYTES", str(5 * 1024 * 1024)))
RECEIPTS_BULK_MAX_BYTES = int(os.environ.get("RECEIPTS_BULK_MAX_BYTES", str(50 * 1024 * 1024)))
RECEIPTS_BULK_MAX_ITEMS = int(os.environ.get("RECEIPTS_BULK_MAX_ITEMS", "1000"))
# Every JSON body: how deep its arrays and objects may nest (a 400 past it), and how many
# values it may hold, counted before it is decoded (a 413 past it): a few bytes of JSON can
# decode into millions of objects.
RECEIPTS_JSON_MAX_DEPTH = int(os.environ.get("RECEIPTS_JSON_MAX_DEPTH", "100"))
RECEIPTS_JSON_MAX_VALUES = int(os.environ.get("RECEIPTS_JSON_MAX_VALUES", "2000000"))
# One OTLP trace export: its spans (and resource and scope groups of spans), its events
# (span events and links), its attributes (each value inside an array or key-value list
# counting as one) and its size once decompressed; a 413 past any of them.
RECEIPTS_OTLP_MAX_SPANS = int(os.environ.get("RECEIPTS_OTLP_MAX_SPANS", "10000"))
RECEIPTS_OTLP_MAX_EVENTS = int(os.environ.get("RECEIPTS_OTLP_MAX_EVENTS", "50000"))
RECEIPTS_OTLP_MAX_ATTRIBUTES = int(os.environ.get("RECEIPTS_OTLP_MAX_ATTRIBUTES", "200000"))
# Every field of a protobuf export read to count the rest, known or not: the work of that
# count, bounded whatever the fields are. An export at each of the limits above, with every
# field of its spans, links and attributes set, reads about 1.4 million.
RECEIPTS_OTLP_MAX_FIELDS = int(os.environ.get("RECEIPTS_OTLP_MAX_FIELDS", "2000000"))
RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES = int(
    os.environ.get("RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES", str(RECEIPTS_BULK_MAX_BYTES))
)
# A gzipped export is one gzip member as every exporter writes it; several, one after
# another, are read, up to this many (each costs an inflater of its own); a 413 past it.
RECEIPTS_OTLP_MAX_GZIP_MEMBERS = int(os.environ.get("RECEIPTS_OTLP_MAX_GZIP_MEMBERS", "1000"))
DATA_UPLOAD_MAX_MEMORY_SIZE = max(RECEIPTS_MAX_BODY_BYTES, RECEIPTS_BULK_MAX_BYTES)
# Each model call its own trace: a call whose input begins with exactly the messages of a
# conversation of the same agent stored or extended within this many seconds continues it,
# and a tool run exported alone joins the conversation holding its call (ingestion.py).
RECEIPTS_OTLP_JOIN_WINDOW_SECONDS = int(os.environ.get("RECEIPTS_OTLP_JOIN_WINDOW_SECONDS", "3600"))
# /v1/traces and /v1/logs answer once the body is kept as received; workers decode and store
# what is waiting, this many exports per batch (one transaction), each taken under a lease of
# this many seconds: a worker killed mid-batch leaves its exports to be taken again once the
# lease runs out (checks/raw_exports.py). An export is a batch of spans already (an SDK's
# batch processor sends up to 512), and each export sends a store task: a small batch lets
# every worker take part in a burst, and holds a worker's memory to a couple of exports.
RECEIPTS_OTLP_STORE_BATCH = int(os.environ.get("RECEIPTS_OTLP_STORE_BATCH", "2"))
RECEIPTS_OTLP_LEASE_SECONDS = int(os.environ.get("RECEIPTS_OTLP_LEASE_SECONDS", "60"))
# The backlog of exports received and not yet stored: past either bound an export is answered
# 503 with Retry-After, which OTLP exporters retry, rather than kept waiting for.
RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS = int(os.environ.get("RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS", "10000"))
RECEIPTS_OTLP_BACKLOG_MAX_BYTES = int(os.environ.get("RECEIPTS_OTLP_BACKLOG_MAX_BYTES", str(1024**3)))
# When a trace is settled: its conversation is checked this many seconds after the last
# export that changed it, so a trace sent in many exports is checked once, not per export.
RECEIPTS_OTLP_SETTLE_SECONDS = float(os.environ.get("RECEIPTS_OTLP_SETTLE_SECONDS", "2"))
# How many refusals (what an API key sent that gave no conversation, and why) each project
# keeps for its Refusals page; older ones are pruned as new ones come.
RECEIPTS_REFUSALS_KEPT = int(os.environ.get("RECEIPTS_REFUSALS_KEPT", "200"))
# What one conversation may hold, whichever way it comes (a POST, bulk, OTLP, /check): its
# turns, its messages, and how deep the JSON of a tool call's arguments or of a tool result
# nests (arrays and objects, the outermost is 1). Past any of them it is refused with 413
# and stored nowhere: the check's time grows with its turns and messages, and these bound
# what the inline /check spends in the web process.
RECEIPTS_MAX_TURNS = int(os.environ.get("RECEIPTS_MAX_TURNS", "2000"))
RECEIPTS_MAX_MESSAGES = int(os.environ.get("RECEIPTS_MAX_MESSAGES", "20000"))
RECEIPTS_MAX_TOOL_JSON_DEPTH = int(os.environ.get("RECEIPTS_MAX_TOOL_JSON_DEPTH", "64"))
# And how long the text of one assistant message (a turn's answer, or what the model says
# between its calls) may be, in bytes of UTF-8: the checkers read every answer claim by claim.
RECEIPTS_MAX_ANSWER_BYTES = int(os.environ.get("RECEIPTS_MAX_ANSWER_BYTES", str(128 * 1024)))
# Requests per API key (or signed-in user), as DRF rates: "1200/min", "50/s".
RECEIPTS_API_RATE = os.environ.get("RECEIPTS_API_RATE", "1200/min")
# How long the queue offers to undo a bulk action, in seconds.
RECEIPTS_BULK_UNDO_SECONDS = int(os.environ.get("RECEIPTS_BULK_UNDO_SECONDS", "600"))

# --- API ----------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "checks.api.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["checks.api.permissions.ApiKeyRateThrottle"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "checks.api.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # A JSON body DRF parses (request.data, or request.POST in a session's CSRF check) is
    # read as the views read theirs: too long a number or too deep a nesting is a 400.
    "DEFAULT_PARSER_CLASSES": [
        "checks.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "UNAUTHENTICATED_USER": None,
    # `?format=` names the input format (CONTRACT.md §1), not a renderer.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Receipts API",
    "DESCRIPTION": "Send agent conversations and read the findings of the checker suite.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Rate limits and other shared counters: in Redis when there is one, so every process of
# the site counts together; in this process's memory otherwise.
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["REDIS_URL"]}
        if os.environ.get("REDIS_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Celery -------------------------------------------------------------------------------

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT = "grounding_site.broker:Transport"  # kombu's, a worker-killing fault mended
    # Late acknowledgement means a task waits in Redis until finished; the visibility
    # timeout must outlast the longest check or it is handed out twice.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": int(os.environ.get("RECEIPTS_VISIBILITY_TIMEOUT", "3600"))
    }
else:
    # No server: messages are files under var/broker, shared by the web process and the worker.
    # The exchange tables (control_folder) go there too: kombu's default is ./control, in
    # whatever directory the process was started from. kombu creates that folder without its
    # parents, so all three are made here.
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Checks use the default queue ("celery") and the judge's questions "judge" (chosen where they
# are enqueued). Webhook deliveries and export jobs get queues of their own, each with its own
# worker (Procfile, make run), so a backlog of either never holds up a check.
CELERY_TASK_ROUTES = {
    "checks.tasks.deliver_webhook": {"queue": "webhooks"},
    "checks.tasks.run_export": {"queue": "exports"},
}
CELERY_BEAT_SCHEDULE = {
    "sweep-pending-runs": {
        "task": "checks.tasks.sweep_pending_runs",
        "schedule": float(os.environ.get("RECEIPTS_SWEEP_SECONDS", "30")),
    },
    # OTLP exports whose lease ran out (a worker killed mid-batch) or whose message was lost.
    "sweep-raw-exports": {
        "task": "checks.tasks.sweep_raw_exports",
        "schedule": float(os.environ.get("RECEIPTS_SWEEP_SECONDS", "30")),
    },
    # The overview's figures of the days something changed, counted before anyone asks.
    "refresh-daily-figures": {
        "task": "checks.tasks.refresh_daily_figures",
        "schedule": float(os.environ.get("RECEIPTS_DAILY_FIGURES_SECONDS", "300")),
    },
}

# A run still pending (or claimed but unfinished) after this many seconds is enqueued again.
RECEIPTS_RUN_STALE_SECONDS = int(os.environ.get("RECEIPTS_RUN_STALE_SECONDS", "120"))
# How many conversations one check task takes at most.
RECEIPTS_CHECK_BATCH = int(os.environ.get("RECEIPTS_CHECK_BATCH", "50"))
# How long one conversation's check may run in a worker before it is stopped and recorded as
# failed (0: no limit). Keep it under RECEIPTS_RUN_STALE_SECONDS, or a check still running
# is taken to be lost and started again beside itself.
RECEIPTS_CHECK_SECONDS = float(os.environ.get("RECEIPTS_CHECK_SECONDS", "60"))
# How long POST /api/v1/check may spend checking, in the web process (0: no limit). The
# checkers observe it themselves; past it the request is answered 503 with the reason.
RECEIPTS_INLINE_CHECK_SECONDS = float(os.environ.get("RECEIPTS_INLINE_CHECK_SECONDS", "10"))

# Requests to URLs a project chose (its judge_url, its webhooks) never reach loopback,
# private, link-local, multicast, reserved or cloud metadata addresses, except those listed
# here: networks or host names, e.g. "127.0.0.1/32,judge.internal" for a judge on this host.
# URLs from the environment (RECEIPTS_JUDGE_URL) are the operator's own and not checked.
RECEIPTS_OUTBOUND_ALLOW = env_list("RECEIPTS_OUTBOUND_ALLOW", "")

# LOG_FORMAT=json: one JSON object per line, for a log collector.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "grounding_site.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if os.environ.get("LOG_FORMAT") == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
