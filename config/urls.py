from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from assistant import docs_site
from assistant.ask import api, demo_views, handoff_api, llms_views, memory_api, sse, views
from feedback.api import FeedbackApi

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("api/v1/ask", api.AskApi.as_view(), name="api-ask"),
    path("api/v1/ask/stream", sse.ask_stream, name="api-ask-stream"),
    path("api/v1/memory/facts", memory_api.MemoryFactsApi.as_view(), name="api-memory-facts"),
    path("api/v1/memory/erase", memory_api.MemoryEraseApi.as_view(), name="api-memory-erase"),
    path("api/v1/feedback", FeedbackApi.as_view(), name="api-feedback"),
    path("api/v1/handoff", handoff_api.HandoffApi.as_view(), name="api-handoff"),
    path("demo/", demo_views.demo_page, name="demo"),
    path("demo/<slug:page>/", demo_views.demo_page, name="demo-page"),
    path("demo/help/<slug:page>", demo_views.demo_help_page, name="demo-help"),
    path("api/v1/retrieve", api.RetrieveApi.as_view(), name="api-retrieve"),
    path("api/v1/suggestions", api.SuggestionsApi.as_view(), name="api-suggestions"),
    path("api/v1/schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("p/<str:project>/llms.txt", llms_views.llms_index, name="llms-txt"),
    path("p/<str:project>/llms-full.txt", llms_views.llms_full, name="llms-full-txt"),
    path("docs/", docs_site.docs_page, name="docs"),
    path("docs/<path:path>", docs_site.docs_page, name="docs-page"),
    path("sms/", include("assistant.sms.urls")),
    path("slack/", include("assistant.slack.urls")),
    path("discord/", include("assistant.discord.urls")),
    path("admin/", include("assistant.console.urls")),
    path("django-admin/", admin.site.urls),
    path("", include("ingestion.urls")),
]

handler404 = "assistant.ask.views.not_found"
handler500 = "assistant.ask.views.server_error"
