"""/p/<project>/llms.txt and /p/<project>/llms-full.txt: public, for projects that switch
them on in the console (a 404 otherwise, the same as for a project that does not exist)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from assistant.models import Project
from ingestion.llms_txt import llms_full_txt, llms_txt, published_project

TEXT = "text/plain; charset=utf-8"


@require_GET
def llms_index(request: HttpRequest, project: str) -> HttpResponse:
    found = _published(project)
    full_url = request.build_absolute_uri(reverse("llms-full-txt", args=[project]))
    return HttpResponse(llms_txt(found, full_url=full_url), content_type=TEXT)


@require_GET
def llms_full(request: HttpRequest, project: str) -> HttpResponse:
    found = _published(project)
    full_url = request.build_absolute_uri(request.path)
    return HttpResponse(llms_full_txt(found, full_url=full_url), content_type=TEXT)


def _published(ref: str) -> Project:
    found = published_project(ref)
    if found is None:
        raise Http404("No published llms.txt here.")
    return found
