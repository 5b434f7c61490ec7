from __future__ import annotations

from django.urls import path

from assistant.slack.console import views

urlpatterns = [
    path("projects/<int:pk>/slack/", views.slack_connect, name="console-project-slack"),
    path(
        "projects/<int:pk>/slack/test/",
        views.slack_connect_test,
        name="console-project-slack-test",
    ),
]
