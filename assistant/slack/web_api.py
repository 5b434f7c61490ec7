"""Slack's Web API, through slack_sdk's WebClient: one client per bot token, built from checked
settings. Its base URL is a setting (ASKDOCS_SLACK_API_URL) so tests point it at a local fake.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

logger = logging.getLogger(__name__)


def client(token: str) -> WebClient:
    # Cheap to build (no connection is held), and a token changes when staff paste a new one.
    return WebClient(
        token=token,
        base_url=settings.ASKDOCS_SLACK_API_URL,
        timeout=settings.ASKDOCS_SLACK_HTTP_TIMEOUT,
    )


def post_message(*, token: str, channel: str, thread_ts: str, message: dict[str, Any]) -> str:
    """Post `message` (text and blocks) in the thread; Slack's ts of the new message."""
    response = client(token).chat_postMessage(
        channel=channel, thread_ts=thread_ts, unfurl_links=False, unfurl_media=False, **message
    )
    return str(response.get("ts") or "")


def update_message(*, token: str, channel: str, ts: str, message: dict[str, Any]) -> None:
    """Replace the app's message `ts` with `message` (text and blocks)."""
    client(token).chat_update(channel=channel, ts=ts, **message)


def post_ephemeral(*, token: str, channel: str, user: str, thread_ts: str, text: str) -> None:
    """A note only `user` sees (a vote's thanks)."""
    client(token).chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)


#: What Slack's error codes for auth.test mean, in the console's words.
_AUTH_ERRORS = {
    "invalid_auth": "Slack does not accept this bot token. Copy the Bot User OAuth Token "
    "(xoxb-…) from the app's OAuth & Permissions page again.",
    "not_authed": "No bot token was sent. Paste the Bot User OAuth Token and save.",
    "account_inactive": "This token belongs to a deleted app or a deactivated workspace.",
    "token_revoked": "This token was revoked. Reinstall the app to the workspace and paste "
    "the new token.",
    "token_expired": "This token has expired. Reinstall the app and paste the new token.",
}


def connection_problem(token: str) -> tuple[str, dict[str, Any]]:
    """Call auth.test with the token: ("", {team, user, …}) when Slack knows it, or what is
    wrong in plain words and {}."""
    if not token:
        return "No bot token is saved yet: paste the Bot User OAuth Token (xoxb-…) first.", {}
    try:
        response = client(token).auth_test()
    except SlackApiError as error:
        code = str(error.response.get("error") or "")
        return _AUTH_ERRORS.get(code, f"Slack refused the token ({code or 'no reason given'})."), {}
    except (SlackClientError, OSError) as error:
        logger.warning("Slack's auth.test could not be reached: %s", error)
        return (
            f"Slack could not be reached from this server ({settings.ASKDOCS_SLACK_API_URL}): "
            f"{type(error).__name__}. Check the server's outbound access to slack.com.",
            {},
        )
    return "", dict(response.data) if isinstance(response.data, dict) else {}
