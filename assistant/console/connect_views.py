"""The console page "Connect an AI tool": the project's MCP address, a ready configuration for
common MCP clients, and the llms.txt switch with its links."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assistant.console.project_services import project_llms_txt_publish, secret_shown_once
from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from assistant.models import Project
from ingestion.llms_txt import project_slug


@dataclass(frozen=True, slots=True)
class ClientConfig:
    name: str
    where: str
    text: str

    @property
    def rows(self) -> int:
        """Tall enough to show it whole (a command wraps to about three lines)."""
        return max(3, self.text.count("\n") + 1)


def client_configs(*, name: str, url: str, secret: str) -> list[ClientConfig]:
    """What to paste into common MCP clients to reach this project over Streamable HTTP."""
    header = f"Bearer {secret}"
    cursor = {"mcpServers": {name: {"url": url, "headers": {"Authorization": header}}}}
    vscode = {
        "servers": {
            name: {"type": "http", "url": url, "headers": {"Authorization": header}},
        }
    }
    # Claude Desktop starts local (stdio) servers only; mcp-remote bridges it to a URL.
    claude_desktop = {
        "mcpServers": {
            name: {
                "command": "npx",
                "args": ["-y", "mcp-remote", url, "--header", f"Authorization:{header}"],
            }
        }
    }
    return [
        ClientConfig(
            "Cursor", "~/.cursor/mcp.json", json.dumps(cursor, indent=2, ensure_ascii=False)
        ),
        ClientConfig(
            "VS Code", ".vscode/mcp.json", json.dumps(vscode, indent=2, ensure_ascii=False)
        ),
        ClientConfig(
            "Claude Desktop",
            "claude_desktop_config.json",
            json.dumps(claude_desktop, indent=2, ensure_ascii=False),
        ),
        ClientConfig(
            "Claude Code",
            "a terminal",
            f'claude mcp add --transport http {name} {url} --header "Authorization: {header}"',
        ),
    ]


def _llms_context(request: HttpRequest, project: Project) -> dict[str, Any]:
    slug = project_slug(project)
    return {
        "project": project,
        "llms_url": request.build_absolute_uri(reverse("llms-txt", args=[slug])),
        "llms_full_url": request.build_absolute_uri(reverse("llms-full-txt", args=[slug])),
    }


@require_GET
@staff_required
def project_connect(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    context = console_context(request, "projects")
    # A key rotated on the project page a moment ago is filled in; otherwise its hint is.
    secret = secret_shown_once(session=request.session, project=project)
    mcp_url = request.build_absolute_uri("/mcp/")
    context.update(_llms_context(request, project))
    context.update(
        mcp_url=mcp_url,
        secret_key=secret,
        configs=client_configs(
            name=f"{project_slug(project)}-docs",
            url=mcp_url,
            secret=secret or project.secret_key_hint,
        ),
    )
    return TemplateResponse(request, "console/connect.html", context)


@require_POST
@staff_required
def project_llms_txt(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    project_llms_txt_publish(project=project, enabled=request.POST.get("enabled") == "on")
    if request.htmx:
        return TemplateResponse(request, "console/_llms_txt.html", _llms_context(request, project))
    messages.success(
        request, "llms.txt published." if project.llms_txt_enabled else "llms.txt taken down."
    )
    return redirect("console-project-connect", pk=project.pk)
