from __future__ import annotations

from django.urls import path

from ingestion import api

urlpatterns = [
    path(
        "api/v1/sources/<int:source_id>/answers",
        api.SupportAnswerApi.as_view(),
        name="api-support-answer",
    ),
]
