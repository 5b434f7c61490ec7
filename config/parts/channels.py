"""The ways in and out: SMS over Twilio, "Ask a person" by e-mail or webhook, the HTTP API, and
the widget's streaming and rate limits."""

from __future__ import annotations

import os

from config.env import check_twilio_settings, env, envbool, envfloat, envint, envrate, envurl
from config.parts.paths import DATA_DIR

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

# --- Slack (assistant/slack) ---------------------------------------------------------------------
# Each project's signing secret and bot token are entered in the console (sealed in the database).
# The Web API's base URL (tests point it at a local fake); the site's public address the Connect
# page writes into the app manifest (empty: the address the console was opened at).
ASKDOCS_SLACK_API_URL = (
    envurl("ASKDOCS_SLACK_API_URL", schemes=("http", "https")) or "https://slack.com/api/"
).rstrip("/") + "/"
ASKDOCS_SLACK_HTTP_TIMEOUT = envint("ASKDOCS_SLACK_HTTP_TIMEOUT", 10, minimum=1, maximum=60)
ASKDOCS_PUBLIC_BASE_URL = envurl("ASKDOCS_PUBLIC_BASE_URL", schemes=("http", "https")).rstrip("/")

# --- Discord (assistant/discord) -----------------------------------------------------------------
# Each project's application id, public key and bot token are entered in the console (the token
# sealed). Discord's REST API, versioned (tests point it at a local fake).
ASKDOCS_DISCORD_API_URL = (
    envurl("ASKDOCS_DISCORD_API_URL", schemes=("http", "https")) or "https://discord.com/api/v10"
).rstrip("/")
ASKDOCS_DISCORD_HTTP_TIMEOUT = envint("ASKDOCS_DISCORD_HTTP_TIMEOUT", 10, minimum=1, maximum=60)

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
    else "assistant.handoff.outbox.OutboxBackend"
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
# Slack: one workspace's questions, and one member's (a flood from a workspace or a script).
ASKDOCS_RATE_SLACK_PER_WORKSPACE = envrate("ASKDOCS_RATE_SLACK_PER_WORKSPACE", "60/m")
ASKDOCS_RATE_SLACK_PER_USER = envrate("ASKDOCS_RATE_SLACK_PER_USER", "10/m")
# Discord: one server's questions, and one member's.
ASKDOCS_RATE_DISCORD_PER_SERVER = envrate("ASKDOCS_RATE_DISCORD_PER_SERVER", "60/m")
ASKDOCS_RATE_DISCORD_PER_USER = envrate("ASKDOCS_RATE_DISCORD_PER_USER", "10/m")
# Each handoff reaches a person's inbox: a few an hour per visitor, two per conversation.
ASKDOCS_RATE_HANDOFF_PER_CLIENT = envrate("ASKDOCS_RATE_HANDOFF_PER_CLIENT", "5/h")
ASKDOCS_RATE_HANDOFF_PER_CONVERSATION = envrate("ASKDOCS_RATE_HANDOFF_PER_CONVERSATION", "2/10m")
# Wrong secret keys (MCP) one address may send before it is refused with 429.
ASKDOCS_RATE_WRONG_KEYS_PER_CLIENT = envrate("ASKDOCS_RATE_WRONG_KEYS_PER_CLIENT", "10/10m")

# --- Admission (assistant/admission.py) ----------------------------------------------------------
# Questions answered at once (the cores by default); the seconds within which an admitted
# question must be answerable (the rest get a 503 `busy` with Retry-After at once); the most of
# that one project may hold. The listen queue holds connections not yet accepted, so that a
# burst is answered (with 503s) rather than reset (daphne's own is 50).
ASKDOCS_ANSWER_SLOTS = envint("ASKDOCS_ANSWER_SLOTS", os.cpu_count() or 1, minimum=1, maximum=256)
ASKDOCS_ANSWER_DEADLINE_SECONDS = envfloat(
    "ASKDOCS_ANSWER_DEADLINE_SECONDS", 20.0, minimum=1.0, maximum=600.0
)
ASKDOCS_PROJECT_SHARE = envfloat("ASKDOCS_PROJECT_SHARE", 0.75, minimum=0.01, maximum=1.0)
ASKDOCS_LISTEN_BACKLOG = envint("ASKDOCS_LISTEN_BACKLOG", 1024, minimum=50, maximum=65535)
