"""Server-rendered pages of the assistant app."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods

from assistant.ask import services
from assistant.ask.api_errors import json_error
from assistant.ask.ratelimits import RATE_LIMITED, ask_is_limited
from assistant.markdown import render
from assistant.models import Interaction, Project


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """A plain page to try the assistant: no JavaScript needed."""
    project = Project.objects.first()
    context: dict[str, object] = {"project": project, "question": "", "topic": ""}
    if request.method == "POST" and project is not None:
        question = request.POST.get("question", "").strip()
        topic = request.POST.get("topic", "").strip()[:200]
        context.update(question=question, topic=topic)
        if not question:
            context["error"] = "Type a question first."
        elif len(question) > settings.ASKDOCS_MAX_QUESTION_CHARS:
            context["error"] = (
                f"Questions are limited to {settings.ASKDOCS_MAX_QUESTION_CHARS} characters."
            )
        elif ask_is_limited(client=request.META.get("REMOTE_ADDR", "")):
            context["error"] = RATE_LIMITED
        else:
            result = services.ask(
                project=project, question=question, topic=topic,
                channel=Interaction.Channel.SANDBOX,
            )  # fmt: skip
            context["result"] = result
            context["answer_html"] = render(result.answer)
    return TemplateResponse(request, "assistant/home.html", context)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/"):
        return json_error("not_found", "No such endpoint.", 404)
    return TemplateResponse(request, "404.html", status=404)
