from __future__ import annotations

from django.urls import path

from assistant.discord.console import views

urlpatterns = [
    path("projects/<int:pk>/discord/", views.discord_connect, name="console-project-discord"),
    path(
        "projects/<int:pk>/discord/test/",
        views.discord_connect_test,
        name="console-project-discord-test",
    ),
    path(
        "projects/<int:pk>/discord/register/",
        views.discord_connect_register,
        name="console-project-discord-register",
    ),
]
