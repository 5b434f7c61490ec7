"""The console page "Connect Discord" of a project: what to paste where in Discord's Developer
Portal (this project's interactions endpoint URL), the application's id, public key and bot
token, the `/ask` command (registered with a button, or its JSON to paste), and a connection
test."""

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
from assistant.discord.commands import commands_json, install_url
from assistant.discord.console.forms import DiscordSettingsForm
from assistant.discord.services import discord_commands_register, discord_settings_save
from assistant.discord.web_api import connection_problem
from assistant.models import Project


def _context(request: HttpRequest, project: Project, form: DiscordSettingsForm) -> dict[str, Any]:
    endpoint = reverse("discord-interactions", args=[project.public_key])
    context = console_context(request, "projects")
    context.update(
        project=project, form=form, endpoint_url=public_url(request, endpoint),
        commands=commands_json(
            name=project.name, max_chars=settings.ASKDOCS_MAX_QUESTION_CHARS
        ),
        install_url=install_url(project.discord_application_id)
        if project.discord_application_id else "",
        public_base_set=bool(settings.ASKDOCS_PUBLIC_BASE_URL),
    )  # fmt: skip
    return context


@require_http_methods(["GET", "POST"])
@staff_required
def discord_connect(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    form = DiscordSettingsForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        discord_settings_save(
            project=project, application_id=data["application_id"],
            public_key=data["public_key"], bot_token=data["bot_token"], forget=data["forget"],
        )  # fmt: skip
        messages.success(
            request,
            "Discord settings saved. Now give Discord the endpoint URL and register /ask."
            if project.discord_connected
            else "Discord settings saved. Discord is not connected until the application ID and "
            "public key are saved.",
        )
        return redirect("console-project-discord", pk=project.pk)
    context = _context(request, project, form)
    return TemplateResponse(request, "console/discord_connect.html", context)


@require_POST
@staff_required
def discord_connect_test(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask Discord whether the saved token, application id and public key belong together."""
    project = get_object_or_404(Project, pk=pk)
    problem, identity = connection_problem(
        application_id=project.discord_application_id, public_key=project.discord_public_key,
        bot_token=project.discord_bot_token(),
    )  # fmt: skip
    if problem:
        messages.error(request, f"The connection failed: {problem}")
    else:
        messages.success(
            request,
            f"Connected: the bot token works as @{identity['bot'].get('username', '?')} for the "
            f"application {identity['application'].get('name', '?')}, and its public key is "
            "the one saved here.",
        )
    return redirect("console-project-discord", pk=project.pk)


@require_POST
@staff_required
def discord_connect_register(request: HttpRequest, pk: int) -> HttpResponse:
    """Register `/ask` as the application's command (Discord's bulk overwrite)."""
    project = get_object_or_404(Project, pk=pk)
    problem = discord_commands_register(project=project)
    if problem:
        messages.error(request, f"/ask was not registered: {problem}")
    else:
        messages.success(
            request,
            "/ask is registered. Discord may take a minute to show it; type /ask in a server "
            "the application was added to.",
        )
    return redirect("console-project-discord", pk=project.pk)
