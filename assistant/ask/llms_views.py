"""/p/<project>/llms.txt and /p/<project>/llms-full.txt (built by ingestion/llms_txt.py):
public, for projects that switch them on in the console (a 404 otherwise, the same as for a
project that does not exist), and counted against the client's retrieval rate limit, since
the full file reads every document of the project."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from assistant.ask import intake
from assistant.errors import IntakeError
from assistant.models import Project
from ingestion.llms_txt import llms_full_txt, llms_txt, published_project

TEXT = "text/plain; charset=utf-8"
#: Crawlers and proxies may keep a copy for a while: documents change at sync speed.
CACHE_CONTROL = "public, max-age=300"


@require_GET
def llms_index(request: HttpRequest, project: str) -> HttpResponse:
    # Counted first, so probing for published projects is counted too.
    if limited := _limited(request):
        return limited
    found = _published(project)
    full_url = request.build_absolute_uri(reverse("llms-full-txt", args=[project]))
    return _text(llms_txt(found, full_url=full_url))


@require_GET
def llms_full(request: HttpRequest, project: str) -> HttpResponse:
    if limited := _limited(request):
        return limited
    found = _published(project)
    full_url = request.build_absolute_uri(request.path)
    return _text(llms_full_txt(found, full_url=full_url))


def _published(ref: str) -> Project:
    found = published_project(ref)
    if found is None:
        raise Http404("No published llms.txt here.")
    return found


def _limited(request: HttpRequest) -> HttpResponse | None:
    try:
        intake.limit("retrieve", client=request.META.get("REMOTE_ADDR", ""))
    except IntakeError as error:
        return HttpResponse(error.message, status=error.status, content_type=TEXT)
    return None


def _text(body: str) -> HttpResponse:
    response = HttpResponse(body, content_type=TEXT)
    response["Cache-Control"] = CACHE_CONTROL
    return response
