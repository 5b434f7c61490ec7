from __future__ import annotations

from django.urls import path

from ingestion import console_views

urlpatterns = [
    path("sources/", console_views.source_list, name="console-sources"),
    path("sources/<int:pk>/", console_views.source_detail, name="console-source"),
    path("sources/<int:pk>/sync/", console_views.source_sync_now, name="console-source-sync"),
]
