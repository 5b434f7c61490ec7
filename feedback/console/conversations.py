"""Console pages over whole conversations: the filterable list and one transcript."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from feedback.conversations import conversation_list, conversation_rows, conversation_transcript
from feedback.forms import ConversationFilterForm

PAGE_SIZE = 25


@require_GET
@staff_required
def conversations_page(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "conversations")
    project = context["project"]
    form = ConversationFilterForm(request.GET)
    context["form"] = form
    if project is not None and form.is_valid():
        groups = conversation_list(project=project, **form.filters())
        page = Paginator(groups, PAGE_SIZE).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        context.update(
            page=page,
            rows=conversation_rows(project=project, groups=list(page.object_list)),
            query=query.urlencode(),
        )
    template = "console/_conversations_body.html" if request.htmx else "console/conversations.html"
    return TemplateResponse(request, template, context)


@require_GET
@staff_required
def conversation_detail(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "conversations")
    project = context["project"]
    key = request.GET.get("id", "")[:100]
    turns = conversation_transcript(project=project, key=key) if project else []
    if not turns:
        raise Http404("No such conversation in this project.")
    context.update(turns=turns, key=key, first=turns[0].interaction)
    return TemplateResponse(request, "console/conversation.html", context)
