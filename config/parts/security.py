"""Who gets in and how safely: logins (django-axes throttling) and HTTPS (redirects, HSTS, the
proxy header, Secure cookies)."""

from __future__ import annotations

import re
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from config.env import env, envbool, envint, envlist
from config.parts.paths import DEBUG, TESTING

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
AXES_HANDLER = "assistant.console_shell.login_lockout.UsernameBoundHandler"
ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME = envint(
    "ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME", 20, minimum=1
)
AXES_RESET_ON_SUCCESS = True  # a successful login forgets the earlier failures
AXES_LOCKOUT_TEMPLATE = "console/lockout.html"

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

# Requests made for others (crawls, webhooks) reach only global addresses, and these hosts or
# networks (e.g. "127.0.0.1,10.1.0.0/16,wiki.internal"): see docs/hardening.md.
ASKDOCS_ALLOWED_PRIVATE_HOSTS = envlist("ASKDOCS_ALLOWED_PRIVATE_HOSTS")
# Seconds a 503's Retry-After asks clients to wait (assistant/overload.py).
ASKDOCS_RETRY_AFTER_SECONDS = envint("ASKDOCS_RETRY_AFTER_SECONDS", 10, minimum=1)
# Widget sockets one address may hold open at once, per web process (then closed with 4429).
ASKDOCS_WEBSOCKETS_PER_CLIENT = envint("ASKDOCS_WEBSOCKETS_PER_CLIENT", 20, minimum=1)
