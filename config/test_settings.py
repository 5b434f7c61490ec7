"""The test suite's settings: the product's settings with the choices only tests make.

pytest loads it (pyproject.toml), and the suite's own subprocesses (live servers, workers) are
started with it. It sets ASKDOCS_TESTING before the product's settings load, which gives every
run a fresh data folder under /tmp and an insecure secret key of its own.
"""

from __future__ import annotations

import os

os.environ.setdefault("ASKDOCS_TESTING", "1")

from config.env import envfloat, envint, envrate  # noqa: E402
from config.settings import *  # noqa: E402, F403
from config.settings import DATA_DIR, DATABASES  # noqa: E402

# A cheap hasher: tests create and log in many users.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not shared memory: webhook threads and a Celery worker process must see the
    # rows a transactional test commits.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}

# Limits high enough for the suite's bursts; the tests of the limits set their own.
ASKDOCS_RATE_ASK_PER_CLIENT = envrate("ASKDOCS_RATE_ASK_PER_CLIENT", "5000/m")
ASKDOCS_RATE_FEEDBACK_PER_CLIENT = envrate("ASKDOCS_RATE_FEEDBACK_PER_CLIENT", "5000/m")
ASKDOCS_RATE_RETRIEVE_PER_CLIENT = envrate("ASKDOCS_RATE_RETRIEVE_PER_CLIENT", "5000/m")
ASKDOCS_RATE_SMS_PER_SENDER = envrate("ASKDOCS_RATE_SMS_PER_SENDER", "5000/m")
ASKDOCS_RATE_SLACK_PER_WORKSPACE = envrate("ASKDOCS_RATE_SLACK_PER_WORKSPACE", "5000/m")
ASKDOCS_RATE_SLACK_PER_USER = envrate("ASKDOCS_RATE_SLACK_PER_USER", "5000/m")
ASKDOCS_RATE_DISCORD_PER_SERVER = envrate("ASKDOCS_RATE_DISCORD_PER_SERVER", "5000/m")
ASKDOCS_RATE_DISCORD_PER_USER = envrate("ASKDOCS_RATE_DISCORD_PER_USER", "5000/m")
ASKDOCS_RATE_HANDOFF_PER_CLIENT = envrate("ASKDOCS_RATE_HANDOFF_PER_CLIENT", "5000/m")
ASKDOCS_RATE_HANDOFF_PER_CONVERSATION = envrate("ASKDOCS_RATE_HANDOFF_PER_CONVERSATION", "5000/m")
# A handoff's retries follow each other at once (a failing webhook is retried five times).
ASKDOCS_HANDOFF_RETRY_SECONDS = 0.01

# Answers stream as they come, unless a test of the pace (or its live server) asks for one.
ASKDOCS_STREAM_WORDS_PER_SECOND = envfloat("ASKDOCS_STREAM_WORDS_PER_SECOND", 0.0, minimum=0.0)

# Admission (assistant/admission.py) as wide as the suite's bursts and slow fake model servers
# need: a test that holds a slot for seconds would otherwise turn the next tests' concurrent
# asks into 503s. The tests of admission set their own.
ASKDOCS_ANSWER_SLOTS = envint("ASKDOCS_ANSWER_SLOTS", 256, minimum=1, maximum=256)
ASKDOCS_ANSWER_DEADLINE_SECONDS = envfloat(
    "ASKDOCS_ANSWER_DEADLINE_SECONDS", 600.0, minimum=1.0, maximum=600.0
)
