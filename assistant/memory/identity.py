"""Whose memory a question may use. Memory is personal, so an identity must be unguessable or
proven:

* ``visitor:<id>`` — the widget's anonymous visitor id, 16-64 random characters it keeps in
  localStorage; nobody else knows it.
* ``user:<id>`` — a host page's signed-in user. The page passes the id together with
  ``user_hash = hex(HMAC-SHA256(project secret key, id))``, computed on its server, so a
  visitor cannot claim another user's id with the public key alone (Intercom's "identity
  verification" pattern).
* ``sms:<E.164 number>`` — the SMS sender, as Twilio reports it.
* ``slack:<team id>:<user id>`` — a Slack workspace's member, as Slack's signed event names
  them (a member's id is their workspace's own).
* ``discord:<user id>`` — a Discord user, as Discord's signed interaction names them (one id
  in every server).
* Servers calling with the project's secret key may name any of these keys directly.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any

from assistant.models import Project

_VISITOR = re.compile(r"[A-Za-z0-9_-]{16,64}")
_USER_ID = re.compile(r"[A-Za-z0-9_.@:+-]{1,100}")
USER_KEY = re.compile(r"(?:visitor|user|sms|slack|discord):[A-Za-z0-9_.@:+-]{1,110}")


class IdentityError(ValueError):
    """An identity that cannot be used; the message is for the caller."""


def user_hash(project: Project, user_id: str) -> str:
    """What the host page's server computes for `user_id` (documented in docs/memory.md).
    IdentityError when the project has no readable secret key."""
    try:
        key = project.signing_key()
    except ValueError as error:
        raise IdentityError(f"User hashes cannot be checked: {error}.") from None
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


def user_key_from(data: Mapping[str, Any], *, project: Project) -> str:
    """The memory key of a widget question (`visitor_id`, or `user_id` + `user_hash`), or ""
    when the question carries no identity (then memory is not used)."""
    user_id = data.get("user_id") or ""
    if user_id:
        given = data.get("user_hash") or ""
        if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
            raise IdentityError("The user id must be 1-100 letters, digits or _.@:+-.")
        if not isinstance(given, str) or not hmac.compare_digest(
            given.lower(), user_hash(project, user_id)
        ):
            raise IdentityError("The user hash does not match the user id.")
        return f"user:{user_id}"
    visitor = data.get("visitor_id") or ""
    if not visitor:
        return ""
    if not isinstance(visitor, str) or not _VISITOR.fullmatch(visitor):
        raise IdentityError("The visitor id must be 16-64 letters, digits, _ or -.")
    return f"visitor:{visitor}"


def check_user_key(key: str) -> str:
    if not USER_KEY.fullmatch(key):
        raise IdentityError(
            'A user is named like "visitor:<id>", "user:<id>", "sms:+15551234567", '
            '"slack:<team id>:<user id>" or "discord:<user id>".'
        )
    return key
