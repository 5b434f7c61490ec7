"""Console forms for sources: add one of any kind, edit it, delete it with everything it
indexed."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from assistant.console_shell.access import console_context, staff_required
from ingestion.connectors.registry import BY_KIND
from ingestion.console.forms import FilesSourceForm, SourceForm, SupportSourceForm, form_for
from ingestion.console.services import SourceBusy, source_create, source_delete, source_update
from ingestion.models import Source
from ingestion.selectors import source_counts
from ingestion.uploads import source_files


def _chosen(request: HttpRequest) -> dict[str, str]:
    """A choice made with a link (`?provider=discord`) when JavaScript is off: the page is
    rendered with that choice's fields."""
    return {"provider": request.GET["provider"]} if "provider" in request.GET else {}


def _inputs(form: SourceForm) -> dict[str, object]:
    """The uploads and imported answers a form carries, for the service."""
    return {
        "files": form.cleaned_data.get("files", []) if isinstance(form, FilesSourceForm) else [],
        "answers": form.answers if isinstance(form, SupportSourceForm) else [],
    }


@require_http_methods(["GET", "POST"])
@staff_required
def source_new(request: HttpRequest, kind: str) -> HttpResponse:
    row = BY_KIND.get(kind)
    form_class = form_for(kind)
    if row is None or form_class is None:
        raise Http404("No such kind of source.")
    context = console_context(request, "sources")
    project = context["project"]
    if project is None:
        messages.error(request, "Create a project first.")
        return redirect("console-projects")
    form = form_class(
        request.POST or None, request.FILES or None, project=project, initial=_chosen(request)
    )
    if request.method == "POST" and form.is_valid():
        source = source_create(
            project=project,
            kind=kind,
            name=form.cleaned_data["name"],
            schedule=form.cleaned_data["schedule"],
            config=form.config(),
            **_inputs(form),  # type: ignore[arg-type]
        )
        messages.success(request, f"Added “{source.name}”. Its first sync is under way.")
        return redirect(f"{reverse('console-source', args=[source.pk])}?after=0")
    context.update(form=form, kind=kind, kind_label=row.label, source=None)
    return TemplateResponse(request, "console/source_form.html", context)


@require_http_methods(["GET", "POST"])
@staff_required
def source_edit(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("project"), pk=pk)
    context = console_context(request, "sources")
    if source.kind == Source.Kind.CURATED:  # its documents are written on their own page
        return redirect(f"{reverse('console-curated')}?project={source.project_id}")
    form_class = form_for(source.kind)
    if form_class is None:
        raise Http404("This kind of source is not edited here.")
    extra = {"stored": source_files(source=source)} if form_class is FilesSourceForm else {}
    form = form_class(
        request.POST or None, request.FILES or None, project=source.project, source=source,
        initial=_chosen(request), **extra,
    )  # fmt: skip
    if request.method == "POST" and form.is_valid():
        latest = source.runs.order_by("-id").values_list("id", flat=True).first() or 0
        resync = source_update(
            source=source,
            name=form.cleaned_data["name"],
            schedule=form.cleaned_data["schedule"],
            config=form.config(),
            remove_files=form.cleaned_data.get("remove", []),
            **_inputs(form),  # type: ignore[arg-type]
        )
        if not resync:
            messages.success(request, f"Saved “{source.name}”.")
            return redirect("console-source", pk=source.pk)
        messages.success(request, f"Saved “{source.name}”. A sync applies the changes now.")
        return redirect(f"{reverse('console-source', args=[source.pk])}?after={latest}")
    if request.method == "POST":
        source.refresh_from_db()  # the page heading shows the stored name, not the rejected one
    context.update(
        form=form, kind_label=source.get_kind_display(), source=source, project=source.project
    )
    return TemplateResponse(request, "console/source_form.html", context)


@require_http_methods(["GET", "POST"])
@staff_required
def source_remove(request: HttpRequest, pk: int) -> HttpResponse:
    """GET asks for confirmation (what will go); POST deletes."""
    source = get_object_or_404(Source.objects.select_related("project"), pk=pk)
    if request.method == "POST":
        project_pk, name = source.project_id, source.name
        try:
            source_delete(source=source)
        except SourceBusy as error:
            messages.error(request, str(error))
            return redirect("console-source", pk=pk)
        messages.success(request, f"Deleted “{name}” and everything indexed from it.")
        return redirect(f"{reverse('console-sources')}?project={project_pk}")
    context = console_context(request, "sources")
    context.update(source=source, project=source.project, counts=source_counts(source=source))
    return TemplateResponse(request, "console/source_delete.html", context)
