"""Discord's REST API, over httpx: the answer written through the interaction's webhook (its
token is the credential: no bot token needed), and, with the bot token, the command
registered and the connection tested. The base URL is a setting (ASKDOCS_DISCORD_API_URL) so
tests point it at a local fake."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

logger = logging.getLogger(__name__)

#: Discord asks bots to name themselves so (https://discord.com/developers/docs/reference).
USER_AGENT = "DiscordBot (askdocs, 0.1.0)"
#: A message Discord refuses with 429 is sent again after the `retry_after` it names, when that
#: is at most MAX_RETRY_WAIT seconds (the answer's lane waits meanwhile), at most RETRIES times.
MAX_RETRY_WAIT = 10.0
RETRIES = 2


class DiscordError(Exception):
    """Discord answered with an error: its HTTP status, its JSON error code and message, and
    with a 429 the seconds it asks to wait (`retry_after`)."""

    def __init__(self, status: int, code: int, message: str, retry_after: float = 0.0) -> None:
        super().__init__(f"Discord said {status} {message} (code {code})")
        self.status, self.code, self.message = status, code, message
        self.retry_after = retry_after


def _call(
    method: str, path: str, *, bot_token: str = "", json: Any = None, params: Any = None
) -> Any:  # noqa: ANN401 - Discord's JSON, read by the caller
    headers = {"User-Agent": USER_AGENT}
    if bot_token:
        headers["Authorization"] = f"Bot {bot_token}"
    # Cheap to build (no connection is kept between answers), and a token changes when staff
    # paste a new one.
    with httpx.Client(
        base_url=settings.ASKDOCS_DISCORD_API_URL + "/", headers=headers,
        timeout=settings.ASKDOCS_DISCORD_HTTP_TIMEOUT,
    ) as client:  # fmt: skip
        response = client.request(method, path.lstrip("/"), json=json, params=params)
    if response.status_code >= 400:
        raise _error(response)
    return response.json() if response.content else None


def _error(response: httpx.Response) -> DiscordError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or response.reason_phrase or "no reason given")
    return DiscordError(
        response.status_code, int(body.get("code") or 0), message[:120],
        retry_after=_seconds(body.get("retry_after") or response.headers.get("Retry-After")),
    )  # fmt: skip


def _seconds(value: object) -> float:
    try:
        return max(0.0, float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _may_wait(error: BaseException) -> bool:
    """A 429 whose wait is short enough to wait out."""
    return (
        isinstance(error, DiscordError)
        and error.status == 429
        and error.retry_after <= MAX_RETRY_WAIT
    )


def _wait_asked(state: RetryCallState) -> float:
    error = state.outcome.exception() if state.outcome else None
    return error.retry_after if isinstance(error, DiscordError) else 0.0


def _delivered(method: str, path: str, **options: Any) -> Any:  # noqa: ANN401 - as _call
    """`_call` for a message: a 429 is waited out as Discord asks, and the message sent again."""
    retrying = Retrying(
        retry=retry_if_exception(_may_wait), wait=_wait_asked,
        stop=stop_after_attempt(RETRIES + 1), reraise=True,
    )  # fmt: skip
    return retrying(_call, method, path, **options)


def _webhook(application_id: str, token: str) -> str:
    return f"webhooks/{quote(application_id, safe='')}/{quote(token, safe='')}"


def edit_original(*, application_id: str, token: str, message: dict[str, Any]) -> str:
    """Replace the deferred response ("… is thinking") with `message`; its message id."""
    path = f"{_webhook(application_id, token)}/messages/@original"
    sent = _delivered("PATCH", path, json=message)
    return str((sent or {}).get("id") or "")


def follow_up(*, application_id: str, token: str, message: dict[str, Any]) -> str:
    """One more message after the response (the rest of a long answer); its message id."""
    sent = _delivered(
        "POST", _webhook(application_id, token), json=message, params={"wait": "true"}
    )
    return str((sent or {}).get("id") or "")


def register_commands(
    *, application_id: str, bot_token: str, commands: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Put the application's global commands (Discord's bulk overwrite: these, and no other)."""
    path = f"applications/{quote(application_id, safe='')}/commands"
    registered = _call("PUT", path, bot_token=bot_token, json=commands)
    return registered if isinstance(registered, list) else []


#: What Discord's 401 to the connection test means, in the console's words.
NOT_ACCEPTED = (
    "Discord does not accept this bot token. On the application's Bot page, click Reset Token "
    "and paste the new one (the token is shown once)."
)


def connection_problem(
    *, application_id: str, public_key: str, bot_token: str
) -> tuple[str, dict[str, Any]]:
    """Ask Discord who the bot token is (`GET /users/@me`) and which application it belongs to
    (`GET /applications/@me`): ("", {bot, application}) when everything saved here belongs
    together, or what is wrong in plain words and {}."""
    if not bot_token:
        return "No bot token is saved yet: paste it from the application's Bot page first.", {}
    try:
        bot = _call("GET", "users/@me", bot_token=bot_token)
        application = _call("GET", "applications/@me", bot_token=bot_token)
    except DiscordError as error:
        if error.status == 401:
            return NOT_ACCEPTED, {}
        return f"Discord refused the connection test: {error.message} ({error.status}).", {}
    except (httpx.HTTPError, ValueError) as error:
        logger.warning("Discord could not be reached for a connection test: %s", error)
        return (
            f"Discord could not be reached from this server ({settings.ASKDOCS_DISCORD_API_URL})"
            f": {type(error).__name__}. Check the server's outbound access to discord.com.",
            {},
        )
    identity = {"bot": bot or {}, "application": application or {}}
    if str(identity["application"].get("id") or "") != application_id:
        return (
            "The bot token belongs to another application "
            f"({identity['application'].get('name', '?')}, id "
            f"{identity['application'].get('id', '?')}) than the application id saved here.",
            {},
        )
    if str(identity["application"].get("verify_key") or "") != public_key:
        return (
            "The public key saved here is not this application's: copy it again from the "
            "application's General Information page. Until then every request from Discord "
            "is refused.",
            {},
        )
    return "", identity
