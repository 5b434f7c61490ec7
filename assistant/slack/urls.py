from __future__ import annotations

from django.urls import path

from assistant.slack import views

urlpatterns = [
    path("<str:key>/events", views.events, name="slack-events"),
    path("<str:key>/interactions", views.interactions, name="slack-interactions"),
]
