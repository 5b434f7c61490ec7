from __future__ import annotations

from django.urls import path

from ingestion import api, llms_views

urlpatterns = [
    path(
        "api/v1/sources/<int:source_id>/answers",
        api.SupportAnswerApi.as_view(),
        name="api-support-answer",
    ),
    path("p/<str:project>/llms.txt", llms_views.llms_index, name="llms-txt"),
    path("p/<str:project>/llms-full.txt", llms_views.llms_full, name="llms-full-txt"),
]
