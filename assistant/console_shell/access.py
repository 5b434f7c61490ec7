"""Who may use the console, and which project a page is about."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any
from urllib.parse import unquote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.template.response import SimpleTemplateResponse
from django.utils import timezone
from django_htmx.middleware import HtmxDetails

from assistant.models import Project


def staff_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Anonymous visitors go to the login page; signed-in people who are not staff get 403
    (sending them to a login form they already passed would loop)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            raise PermissionDenied("The console is for staff.")
        with timezone.override(viewer_time_zone(request)):
            response = view(request, *args, **kwargs)
            # Render now: a TemplateResponse would otherwise render after the zone is reset.
            if isinstance(response, SimpleTemplateResponse):
                response.render()
            return response

    return wrapper


def staff_required_async(
    view: Callable[..., Awaitable[HttpResponseBase]],
) -> Callable[..., Awaitable[HttpResponseBase]]:
    """`staff_required` for async views (streaming responses)."""

    @wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        user = await request.auser()
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            raise PermissionDenied("The console is for staff.")
        return await view(request, *args, **kwargs)

    return wrapper


def viewer_time_zone(request: HttpRequest) -> ZoneInfo | None:
    """The browser's zone, which console.js stores in the `tz` cookie; None keeps the
    server's (UTC) until the script has run once."""
    name = unquote(request.COOKIES.get("tz", ""))
    if not name or len(name) > 64:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def chosen_project(request: HttpRequest) -> Project | None:
    """`?project=<id>` when it names a project, otherwise the first one."""
    wanted = request.GET.get("project") or request.POST.get("project") or ""
    if wanted.isdigit():
        found = Project.objects.filter(pk=int(wanted)).first()
        if found is not None:
            return found
    return Project.objects.first()


def console_context(request: HttpRequest, section: str) -> dict[str, Any]:
    """What every console page shows around its content: the chosen project and the others."""
    return {
        "project": chosen_project(request),
        "projects": Project.objects.only("pk", "name"),
        "section": section,
    }


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware (every request here does): for
    the type checker, which cannot see the attribute the middleware sets."""

    htmx: HtmxDetails


# --- Secrets shown once ---------------------------------------------------------------------------


def show_once(session: Any, kind: str, key: object, secret: str) -> None:
    """Keep a secret just issued (a project's secret key, a webhook token) for the next page
    view only: the page after the redirect shows it, once."""
    waiting = dict(session.get(f"console-show-once:{kind}", {}))
    waiting[str(key)] = secret
    session[f"console-show-once:{kind}"] = waiting


def shown_once(session: Any, kind: str, key: object) -> str | None:
    """The secret waiting for this page, removed as it is read; None after."""
    waiting = dict(session.get(f"console-show-once:{kind}", {}))
    secret = waiting.pop(str(key), None)
    if secret is not None:
        session[f"console-show-once:{kind}"] = waiting
    return secret if isinstance(secret, str) else None
