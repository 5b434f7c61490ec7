"""The console page "Connect Slack" of a project: the app manifest to paste (with this
project's request URLs), the two secrets, the watched channels, and a connection test."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from assistant.console_shell.access import console_context, staff_required
from assistant.console_shell.addresses import public_url
from assistant.models import Project
from assistant.slack.console.forms import SlackSettingsForm
from assistant.slack.manifest import BOT_EVENTS, BOT_SCOPES, manifest_json
from assistant.slack.services import slack_settings_save
from assistant.slack.web_api import connection_problem


def _context(request: HttpRequest, project: Project, form: SlackSettingsForm) -> dict[str, Any]:
    events_url = public_url(request, reverse("slack-events", args=[project.public_key]))
    interactions_url = public_url(request, reverse("slack-interactions", args=[project.public_key]))
    context = console_context(request, "projects")
    context.update(
        project=project, form=form, events_url=events_url, interactions_url=interactions_url,
        manifest=manifest_json(
            name=project.name, events_url=events_url, interactions_url=interactions_url
        ),
        scopes=BOT_SCOPES, events=BOT_EVENTS,
        public_base_set=bool(settings.ASKDOCS_PUBLIC_BASE_URL),
    )  # fmt: skip
    return context


@require_http_methods(["GET", "POST"])
@staff_required
def slack_connect(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    form = SlackSettingsForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        slack_settings_save(
            project=project, signing_secret=data["signing_secret"], bot_token=data["bot_token"],
            channels=data["channels"], forget=data["forget"],
        )  # fmt: skip
        messages.success(
            request,
            "Slack settings saved. Test the connection below."
            if project.slack_connected
            else "Slack settings saved. Slack is not connected until both secrets are saved.",
        )
        return redirect("console-project-slack", pk=project.pk)
    return TemplateResponse(request, "console/slack_connect.html", _context(request, project, form))


@require_POST
@staff_required
def slack_connect_test(request: HttpRequest, pk: int) -> HttpResponse:
    """Call Slack's auth.test with the saved bot token and say what is wrong, if anything."""
    project = get_object_or_404(Project, pk=pk)
    problem, identity = connection_problem(project.slack_bot_token())
    if problem:
        messages.error(request, f"The connection failed: {problem}")
    else:
        messages.success(
            request,
            f"Connected: the bot token works in the workspace {identity.get('team', '?')} "
            f"as @{identity.get('user', '?')}."
            + ("" if project.slack_signing_secret_sealed else " Now save the signing secret."),
        )
    return redirect("console-project-slack", pk=project.pk)
