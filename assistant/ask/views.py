"""Server-rendered pages of the assistant app."""

from __future__ import annotations

import sys

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.views import defaults
from django.views.decorators.http import require_GET, require_http_methods

from assistant.api_errors import json_error
from assistant.ask import intake, services
from assistant.demo import PROJECT_NAME as DEMO_PROJECT
from assistant.errors import IntakeError
from assistant.markdown import render
from assistant.models import Interaction, Project
from assistant.overload import log_database_trouble
from assistant.privacy.projects import masked
from assistant.wiring import readiness


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """A plain page to try the assistant: no JavaScript needed. Its questions are a visitor's
    (logged as the widget's: the page is the widget without JavaScript)."""
    project = home_project(request)
    context: dict[str, object] = {
        "project": project,
        "question": "",
        "topic": "",
        "is_demo": project is not None and project.name == DEMO_PROJECT,
    }
    if request.method == "POST" and project is not None:
        context.update(
            question=request.POST.get("question", "").strip(),
            topic=request.POST.get("topic", "").strip()[: intake.MAX_TOPIC_CHARS],
        )
        try:
            question = intake.question_field(request.POST)
            topic = intake.topic_field(request.POST)
            intake.limit("ask", client=request.META.get("REMOTE_ADDR", ""))
        except IntakeError as error:
            context["error"] = (
                "Type a question first."
                if error.code == "invalid" and not context["question"]
                else error.message
            )
        else:
            result = services.ask(
                project=project, question=masked(project, question), topic=topic,
                channel=Interaction.Channel.WIDGET,
                client=request.META.get("REMOTE_ADDR", ""),
            )  # fmt: skip
            context["result"] = result
            context["answer_html"] = render(result.answer)
    return TemplateResponse(request, "assistant/home.html", context)


def home_project(request: HttpRequest) -> Project | None:
    """The project named by `?project=<public key>`; else the demo (the page suggests its
    question), else the oldest project. Never the alphabetically first one: a second project
    must not take the page over."""
    key = (request.POST.get("project") or request.GET.get("project") or "").strip()
    if key:
        found = Project.objects.filter(public_key=key).first()
        if found is not None:
            return found
    return (
        Project.objects.filter(name=DEMO_PROJECT).first() or Project.objects.order_by("pk").first()
    )


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process is up (it does not look at any dependency)."""
    return JsonResponse({"ok": True})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: every configured dependency answers (503 naming the ones that do not)."""
    results = readiness.checks()
    ok = all(check.ok for check in results)
    body = {
        "ok": ok,
        "checks": {
            check.name: {
                "ok": check.ok,
                "ms": check.ms,
                **({"error": check.detail} if check.detail else {}),
            }
            for check in results
        },
    }
    return JsonResponse(body, status=200 if ok else 503)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask every site for /favicon.ico: point them at the icon in static/."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's last resort (handler500), called while the exception is being handled: the API
    answers JSON (503 when the database refused, as for any unavailable dependency)."""
    if not request.path.startswith("/api/"):
        return defaults.server_error(request)
    error = sys.exc_info()[1]
    if isinstance(error, DatabaseError):
        log_database_trouble(error, request.path)
        return json_error("unavailable", intake.DATABASE_UNAVAILABLE, 503)
    return json_error("server_error", "Something went wrong on our side.", 500)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/"):
        return json_error("not_found", "No such endpoint.", 404)
    return TemplateResponse(request, "404.html", status=404)
