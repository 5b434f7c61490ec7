from __future__ import annotations

from django.urls import path

from feedback.console import checks as check_views
from feedback.console import conversations as conversation_views
from feedback.console import curated as curated_views
from feedback.console import feedback as feedback_views
from feedback.console import overview as overview_views
from feedback.console import views

urlpatterns = [
    path("overview/", overview_views.overview, name="console-overview"),
    path("conversations/", conversation_views.conversations_page, name="console-conversations"),
    path(
        "conversations/view/",
        conversation_views.conversation_detail,
        name="console-conversation",
    ),
    path("metrics/", views.metrics, name="console-metrics"),
    path("blind-spots/", views.blind_spots, name="console-blind-spots"),
    path("blind-spots/mark/", views.blind_spot_mark, name="console-blind-spot-mark"),
    path(
        "blind-spots/marks/<int:pk>/undo/",
        views.blind_spot_unmark,
        name="console-blind-spot-unmark",
    ),
    path("tuner/", views.tuner, name="console-tuner"),
    path("checks/", check_views.checks_page, name="console-checks"),
    path("checks/new/", check_views.check_new, name="console-check-new"),
    path("checks/run/", check_views.checks_run, name="console-checks-run"),
    path("checks/threshold/", check_views.checks_threshold, name="console-checks-threshold"),
    path("checks/<int:pk>/delete/", check_views.check_delete, name="console-check-delete"),
    path("curated/", curated_views.curated_list, name="console-curated"),
    path("curated/write/", curated_views.curated_write, name="console-curated-write"),
    path("curated/<int:pk>/", curated_views.curated_edit, name="console-curated-edit"),
    path("curated/<int:pk>/retire/", curated_views.curated_retire, name="console-curated-retire"),
    path("feedback/", feedback_views.feedback_page, name="console-feedback"),
    path("feedback/export.csv", feedback_views.feedback_export, name="console-feedback-export"),
]
