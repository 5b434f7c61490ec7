"""The document and chunk browser: which documents a source became, and which chunks (in
order, with their text) each document became."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from ingestion.models import Document, Source
from ingestion.selectors import chunks_of, documents_of

DOCUMENTS_PER_PAGE = 25
CHUNKS_PER_PAGE = 20


def _query_without_page(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


@require_GET
@staff_required
def document_list(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("project"), pk=pk)
    search = request.GET.get("q", "").strip()[:200]
    rows = documents_of(source=source, search=search)
    context = console_context(request, "sources")
    context.update(
        source=source,
        project=source.project,
        search=search,
        page=Paginator(rows, DOCUMENTS_PER_PAGE).get_page(request.GET.get("page")),
        query=_query_without_page(request),
    )
    template = "console/_documents.html" if request.htmx else "console/documents.html"
    return TemplateResponse(request, template, context)


@require_GET
@staff_required
def document_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    document = get_object_or_404(Document.objects.select_related("source__project"), pk=pk)
    context = console_context(request, "sources")
    page = Paginator(chunks_of(document=document), CHUNKS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context.update(
        document=document,
        source=document.source,
        project=document.source.project,
        page=page,
        query=_query_without_page(request),
    )
    template = "console/_chunks.html" if request.htmx else "console/document.html"
    return TemplateResponse(request, template, context)
