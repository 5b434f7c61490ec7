"""Rate limits for every door, counted over a moving window by the `limits` library: a burst
gets at most the stated rate (a fixed window lets twice through when it resets mid-burst).

The counters live in Redis when REDIS_URL is set, so every web process shares them, and in
this process's memory otherwise (the embedded default is one process). If Redis cannot be
reached the request is let through and a warning logged: the limits protect the models from
abuse, and an outage of the counter store should not take every answer down with it.
"""

from __future__ import annotations

import logging
import math
import re
import time
from functools import cache

from django.conf import settings
from limits import RateLimitItem, parse
from limits.storage import Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

logger = logging.getLogger(__name__)

RATE_LIMITED = "Too many questions at once. Please wait a minute and ask again."
FEEDBACK_RATE_LIMITED = "Too much feedback at once. Please wait a minute."
SMS_RATE_LIMITED = "Too many messages at once. Please wait a few minutes and text again."
SLACK_RATE_LIMITED = "Too many questions at once. Please wait a minute and ask again."
DISCORD_RATE_LIMITED = "Too many questions at once. Please wait a minute and ask again."
HANDOFF_RATE_LIMITED = "This conversation was just sent to a person. Please wait for their reply."
WRONG_KEYS = "Too many wrong secret keys from this address. Please wait a few minutes."

MESSAGES = {
    "ask": RATE_LIMITED,
    "retrieve": RATE_LIMITED,
    "feedback": FEEDBACK_RATE_LIMITED,
    "sms": SMS_RATE_LIMITED,
    "slack": SLACK_RATE_LIMITED,
    "discord": DISCORD_RATE_LIMITED,
    "handoff": HANDOFF_RATE_LIMITED,
}
#: Which counters a kind of request is counted against, and the setting that holds each rate.
RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "ask": (
        ("client", "ASKDOCS_RATE_ASK_PER_CLIENT"),
        ("conversation", "ASKDOCS_RATE_ASK_PER_CONVERSATION"),
    ),
    "retrieve": (("client", "ASKDOCS_RATE_RETRIEVE_PER_CLIENT"),),
    "feedback": (("client", "ASKDOCS_RATE_FEEDBACK_PER_CLIENT"),),
    "sms": (("sender", "ASKDOCS_RATE_SMS_PER_SENDER"),),
    # A Slack workspace is the client (its team id), a member of it the sender.
    "slack": (
        ("client", "ASKDOCS_RATE_SLACK_PER_WORKSPACE"),
        ("sender", "ASKDOCS_RATE_SLACK_PER_USER"),
    ),
    # A Discord server is the client (its guild id), a member of it the sender.
    "discord": (
        ("client", "ASKDOCS_RATE_DISCORD_PER_SERVER"),
        ("sender", "ASKDOCS_RATE_DISCORD_PER_USER"),
    ),
    "handoff": (
        ("client", "ASKDOCS_RATE_HANDOFF_PER_CLIENT"),
        ("conversation", "ASKDOCS_RATE_HANDOFF_PER_CONVERSATION"),
    ),
}
_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def is_limited(kind: str, *, client: str = "", conversation_id: str = "", sender: str = "") -> bool:
    """Count one request of `kind` against each of its counters; True when one is over."""
    keys = _keys(client=client, conversation_id=conversation_id, sender=sender)
    try:
        for scope, setting in RULES[kind]:
            if keys[scope] and not _limiter().hit(
                rate_item(getattr(settings, setting)), kind, scope, keys[scope]
            ):
                return True
    except Exception:  # noqa: BLE001 - an unreachable counter store fails open (see above)
        logger.warning("rate-limit store unreachable; letting a %s request through", kind)
    return False


def _keys(*, client: str, conversation_id: str, sender: str) -> dict[str, str]:
    return {"client": client or "0.0.0.0", "conversation": conversation_id, "sender": sender}  # noqa: S104


def wait_seconds(
    kind: str, *, client: str = "", conversation_id: str = "", sender: str = ""
) -> int:
    """The whole seconds until every counter of `kind` these keys are over has room again (at
    least 1), without counting a request: when a refused question may be asked again."""
    keys = _keys(client=client, conversation_id=conversation_id, sender=sender)
    wait = 1.0
    try:
        for scope, setting in RULES[kind]:
            if not keys[scope]:
                continue
            stats = _limiter().get_window_stats(
                rate_item(getattr(settings, setting)), kind, scope, keys[scope]
            )
            if stats.remaining <= 0:
                wait = max(wait, stats.reset_time - time.time())
    except Exception:  # noqa: BLE001 - the store is unreachable: a minute, as the message said
        logger.warning("rate-limit store unreachable; not reading when a %s may come again", kind)
        return 60
    return math.ceil(wait)


def told_when(kind: str, seconds: int) -> str:
    """A refused request's message, saying when to ask again."""
    first = MESSAGES[kind].split(". ")[0].rstrip(".")
    if seconds > 90:
        return f"{first}: please ask again in {math.ceil(seconds / 60)} minutes."
    return f"{first}: please ask again in {seconds} second{'' if seconds == 1 else 's'}."


#: How often one sender is told they are over a limit: a flood gets no flood of notices.
NOTICE_RATE = "1/m"


def notice_due(kind: str, *, sender: str) -> bool:
    """Should `sender`, over a limit of `kind`, be told so now? Once a minute at most."""
    try:
        return bool(_limiter().hit(rate_item(NOTICE_RATE), "notice", kind, sender))
    except Exception:  # noqa: BLE001 - fails open, as above
        logger.warning("rate-limit store unreachable; telling a %s sender anyway", kind)
        return True


def wrong_keys_exceeded(client: str) -> bool:
    """This address has already sent as many wrong secret keys as it may (not counted)."""
    try:
        return not _limiter().test(_wrong_keys_rate(), "wrong_key", client or "0.0.0.0")  # noqa: S104
    except Exception:  # noqa: BLE001 - fails open, as above
        logger.warning("rate-limit store unreachable; not checking wrong keys")
        return False


def count_wrong_key(client: str) -> None:
    try:
        _limiter().hit(_wrong_keys_rate(), "wrong_key", client or "0.0.0.0")  # noqa: S104
    except Exception:  # noqa: BLE001 - fails open, as above
        logger.warning("rate-limit store unreachable; a wrong key not counted")


def _wrong_keys_rate() -> RateLimitItem:
    return rate_item(settings.ASKDOCS_RATE_WRONG_KEYS_PER_CLIENT)


def rate_item(rate: str) -> RateLimitItem:
    """'20/m' -> 20 per minute; '5/10m' -> 5 per 10 minutes (the form env.envrate checks)."""
    count, per = rate.split("/")
    match = re.fullmatch(r"(\d*)([smhd])", per)
    if match is None:
        raise ValueError(f"{rate!r} is not a rate like 20/m")
    return parse(f"{count} per {match.group(1) or 1} {_UNITS[match.group(2)]}")


@cache
def _storage() -> Storage:
    if settings.REDIS_URL:
        storage = storage_from_string(
            settings.REDIS_URL, key_prefix=f"{settings.REDIS_KEY_PREFIX}:limits"
        )
    else:
        storage = storage_from_string("memory://")
    assert isinstance(storage, Storage)  # noqa: S101 - a sync URI gives a sync storage
    return storage


@cache
def _limiter() -> MovingWindowRateLimiter:
    return MovingWindowRateLimiter(_storage())


def reset() -> None:
    """Forget every counter (tests)."""
    _storage().reset()
