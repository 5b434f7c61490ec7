"""Celery app. Tasks are thin: load by id, call a service."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("askdocs")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(  # their tasks.py
    ["assistant.sms", "assistant.slack", "assistant.discord", "assistant.handoff",
     "assistant.privacy"]
)  # fmt: skip
