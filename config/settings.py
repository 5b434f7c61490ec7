"""The one settings module Django loads, driven by environment variables (see
docs/configuration.md): Django's own settings here, the product's by concern in config/parts/
(paths, stores, models, channels, security).

Embedded defaults need no servers: SQLite, an in-process Chroma store, an in-memory channel
layer and ONNX models. Set DATABASE_URL, REDIS_URL, CHROMA_URL or OLLAMA_HOST to scale out.
"""

from __future__ import annotations

from importlib.util import find_spec

from django.core.exceptions import ImproperlyConfigured

from config.env import env, envbool, envlist
from config.parts.paths import BASE_DIR, DATA_DIR, DEBUG, TESTING

SECRET_KEY = env("DJANGO_SECRET_KEY")
_generated_key = DATA_DIR / "secret_key"  # written by .bin/run on first start
if not SECRET_KEY and not TESTING and _generated_key.is_file():
    SECRET_KEY = _generated_key.read_text().strip()
if not SECRET_KEY:
    # manage.py sets ASKDOCS_HELP_ONLY for `--help`: reading a command's help signs nothing.
    if not (DEBUG or TESTING or envbool("ASKDOCS_HELP_ONLY", False)):
        raise ImproperlyConfigured(
            f"No secret key: DJANGO_SECRET_KEY is unset and {_generated_key} does not exist. "
            "Set ASKDOCS_DATA_DIR to the data folder .bin/run uses (its first start writes "
            "secret_key there), or set DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE)."
        )
    SECRET_KEY = "insecure-dev-only-key"  # noqa: S105 - only with DEBUG, tests or --help

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
    "ingestion",
    "feedback",
    "axes",
]
# The measuring lab (measuring/: evaluate, bench, measure_*) is an app only where it is
# installed, with the `measure` extra (`pip install -e '.[measure]'`; .bin/test's `test` extra
# includes it). The extra's own dependency is the sign, as no setting has to be kept in step
# with the install: a production install leaves the extra out, so the lab's commands too.
if find_spec("rouge_score") is not None:
    INSTALLED_APPS.append("measuring")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "assistant.overload.retry_after_on_503",  # outside the rest: sees every 503
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

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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

# The product's settings, by concern (config/parts/).
from config.parts.channels import *  # noqa: E402, F403
from config.parts.models import *  # noqa: E402, F403
from config.parts.security import *  # noqa: E402, F403
from config.parts.stores import *  # noqa: E402, F403

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# The manual (docs/, MkDocs), built by .bin/run into the data folder and served at /docs/; the
# console's "Docs" links point at ASKDOCS_DOCS_URL (another copy of the manual, if you host one).
ASKDOCS_DOCS_DIR = DATA_DIR / "docs_site"
ASKDOCS_DOCS_URL = env("ASKDOCS_DOCS_URL", "/docs/").rstrip("/") + "/"

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG or TESTING

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
