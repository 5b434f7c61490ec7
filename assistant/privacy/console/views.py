"""The console's privacy request page for one project: export one person's data as JSON, or
erase it (assistant/privacy/erasure.py); each is an audit record naming the staff member, not
the person."""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from assistant.console_shell.access import console_context, staff_required
from assistant.models import Project
from assistant.privacy.erasure import privacy_erase, privacy_export
from assistant.privacy.holdings import Person, UnknownIdentifier, person_from


class PersonForm(forms.Form):
    who = forms.CharField(
        label="Visitor key, phone number, e-mail address or Slack or Discord member",
        max_length=254,
        help_text='visitor:<id> or user:<id> (the widget\'s identity), +15551234567, '
        "jane@example.com, slack:<team id>:<member id> (T…:U…) or discord:<user id>.",
    )  # fmt: skip
    action = forms.ChoiceField(choices=[("export", "Export as JSON"), ("erase", "Erase")])
    confirm = forms.BooleanField(
        required=False, label="Yes, delete everything held about this person (no undo)"
    )

    def clean_who(self) -> Person:
        try:
            return person_from(self.cleaned_data["who"])
        except UnknownIdentifier as error:
            raise forms.ValidationError(str(error)) from None

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if cleaned.get("action") == "erase" and not cleaned.get("confirm"):
            self.add_error("confirm", "Tick this box to erase: it cannot be undone.")
        return cleaned


@require_http_methods(["GET", "POST"])
@staff_required
def project_privacy(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    form = PersonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        person: Person = form.cleaned_data["who"]
        projects = Project.objects.filter(pk=project.pk)
        actor = f"staff:{request.user.pk}"
        if form.cleaned_data["action"] == "export":
            exported = privacy_export(person=person, projects=projects, actor=actor)
            response = HttpResponse(
                json.dumps(exported, indent=2, ensure_ascii=False),
                content_type="application/json",
            )
            response["Content-Disposition"] = 'attachment; filename="privacy-export.json"'
            return response
        counts = privacy_erase(person=person, projects=projects, actor=actor)
        deleted = ", ".join(f"{what.replace('_', ' ')}: {n}" for what, n in counts.items() if n)
        messages.success(request, f"Erased: {deleted or 'nothing was held'}.")
        return redirect("console-project-privacy", pk=project.pk)
    context = console_context(request, "projects")
    context.update(project=project, form=form)
    return TemplateResponse(request, "console/project_privacy.html", context)
