from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import include, path

from assistant.console import (
    connect_views,
    handoff_views,
    project_views,
    sandbox_stream,
    views,
)

urlpatterns = [
    path("", views.console_home, name="console-home"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="console/login.html", redirect_authenticated_user=True
        ),
        name="console-login",
    ),
    path(
        "logout/", auth_views.LogoutView.as_view(next_page="console-login"), name="console-logout"
    ),
    path("sandbox/", views.sandbox, name="console-sandbox"),
    path(
        "sandbox/answer/<slug:token>/",
        sandbox_stream.sandbox_answer,  # type: ignore[arg-type]  # an async view: the stubs know sync ones
        name="console-sandbox-answer",
    ),
    path("", include("feedback.console.urls")),
    path("", include("ingestion.console.urls")),
    path("", include("assistant.privacy.console.urls")),
    path("", include("assistant.slack.console.urls")),
    path("", include("assistant.discord.console.urls")),
    path("handoffs/", handoff_views.handoff_list, name="console-handoffs"),
    path("projects/", project_views.project_list, name="console-projects"),
    path("projects/new/", project_views.project_new, name="console-project-new"),
    path("projects/<int:pk>/", project_views.project_detail, name="console-project"),
    path(
        "projects/<int:pk>/rotate-secret/",
        project_views.project_rotate_secret,
        name="console-project-rotate-secret",
    ),
    path("projects/<int:pk>/widget/", project_views.project_preview, name="console-project-widget"),
    path("projects/<int:pk>/delete/", project_views.project_remove, name="console-project-delete"),
    path(
        "projects/<int:pk>/rotate-key/", project_views.project_rotate, name="console-project-rotate"
    ),
    path(
        "projects/<int:pk>/connect/",
        connect_views.project_connect,
        name="console-project-connect",
    ),
    path(
        "projects/<int:pk>/llms-txt/",
        connect_views.project_llms_txt,
        name="console-project-llms-txt",
    ),
]
