from __future__ import annotations

from django.urls import path

from ingestion.console import documents as console_document_views
from ingestion.console import sources as console_source_views
from ingestion.console import views as console_views
from ingestion.console import webhooks as console_webhook_views

urlpatterns = [
    path("sources/", console_views.source_list, name="console-sources"),
    path("sources/new/<slug:kind>/", console_source_views.source_new, name="console-source-new"),
    path("sources/<int:pk>/", console_views.source_detail, name="console-source"),
    path("sources/<int:pk>/sync/", console_views.source_sync_now, name="console-source-sync"),
    path("sources/<int:pk>/edit/", console_source_views.source_edit, name="console-source-edit"),
    path(
        "sources/<int:pk>/delete/", console_source_views.source_remove, name="console-source-delete"
    ),
    path(
        "sources/<int:pk>/webhook-token/",
        console_webhook_views.webhook_token_new,
        name="console-source-webhook-token",
    ),
    path(
        "sources/<int:pk>/webhook-token/revoke/",
        console_webhook_views.webhook_token_revoke,
        name="console-source-webhook-revoke",
    ),
    path(
        "sources/<int:pk>/documents/",
        console_document_views.document_list,
        name="console-documents",
    ),
    path("documents/<int:pk>/", console_document_views.document_detail, name="console-document"),
]
