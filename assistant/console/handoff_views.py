"""The console's list of handoffs: conversations visitors handed to a person."""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from assistant.handoff.models import Handoff
from assistant.handoff.sending import mail_goes_to_outbox

PAGE_SIZE = 20


@require_GET
@staff_required
def handoff_list(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "handoffs")
    project = context["project"]
    rows = Handoff.objects.filter(project=project)  # none without a project
    context["page"] = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context["query"] = f"project={project.pk}" if project is not None else ""
    context["outbox"] = settings.EMAIL_FILE_PATH if mail_goes_to_outbox() else None
    # The pager asks for the next page with htmx: the list alone, swapped in place.
    template = "console/_handoffs_body.html" if request.htmx else "console/handoffs.html"
    return TemplateResponse(request, template, context)
