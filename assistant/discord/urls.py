from __future__ import annotations

from django.urls import path

from assistant.discord import views

urlpatterns = [
    path("<str:key>/interactions", views.interactions, name="discord-interactions"),
]
