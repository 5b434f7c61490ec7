"""Login throttling: django-axes, with a second, higher bound per username.

Axes locks a username tried from one address after AXES_FAILURE_LIMIT failures (its lockout
parameters username + address), so a stranger cannot lock the real user out from elsewhere.
Alone, that lets a guesser with many addresses try on (30 addresses, 4 guesses each). Axes
compares every parameter set with the one limit, so adding "username" alone to its parameters
would lock an account after 5 failures from anywhere: here the failures for a username from
all addresses together are compared with a limit of their own
(ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME, 20 by default), over the same cool-off time.

That bound alone let a stranger lock the staff out: 20 wrong passwords from anywhere locked
`admin` for everyone. An address the user has logged in from before (axes' access log) is
let through it; the lock of username + address still holds there as everywhere.
"""

from __future__ import annotations

from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_ip_address, get_client_username
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone


class UsernameBoundHandler(AxesDatabaseHandler):
    def is_locked(self, request: Any, credentials: dict[str, Any] | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        username = get_client_username(request, credentials)
        if not username:
            return False
        if username_failures(username) < settings.ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME:
            return False
        if logged_in_before(username, get_client_ip_address(request)):
            return False
        # The lockout page, as for axes' own lock (its middleware reads this): the address
        # asking may have no failures of its own, so axes would not mark the request.
        request.axes_locked_out = True
        return True


def username_failures(username: str) -> int:
    """Failed logins for `username` from every address within the cool-off time."""
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    total = AccessAttempt.objects.filter(username=username, attempt_time__gte=since).aggregate(
        failures=Sum("failures_since_start")
    )["failures"]
    return int(total or 0)


def logged_in_before(username: str, address: str | None) -> bool:
    """This username has logged in from this address before (successful logins only)."""
    return (
        bool(address) and AccessLog.objects.filter(username=username, ip_address=address).exists()
    )
