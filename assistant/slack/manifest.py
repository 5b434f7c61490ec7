"""The Slack app manifest a team pastes into "Create New App → From an app manifest": the
project's two request URLs, the bot scopes and the events the door answers."""

from __future__ import annotations

import json
from typing import Any

BOT_SCOPES = ("app_mentions:read", "chat:write", "channels:history", "im:history")
BOT_EVENTS = ("app_mention", "message.im", "message.channels")
#: Slack's limits for an app's name and its bot's display name.
_NAME_LIMIT = 35
_DISPLAY_NAME_LIMIT = 80


def manifest(*, name: str, events_url: str, interactions_url: str) -> dict[str, Any]:
    app_name = f"{name} docs"[:_NAME_LIMIT].strip()
    return {
        "display_information": {
            "name": app_name,
            "description": f"Answers questions from the {name} documentation, with sources.",
        },
        "features": {
            "app_home": {"messages_tab_enabled": True, "messages_tab_read_only_enabled": False},
            "bot_user": {"display_name": app_name[:_DISPLAY_NAME_LIMIT], "always_online": True},
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {
            "event_subscriptions": {"request_url": events_url, "bot_events": list(BOT_EVENTS)},
            "interactivity": {"is_enabled": True, "request_url": interactions_url},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


def manifest_json(**fields: str) -> str:
    return json.dumps(manifest(**fields), indent=2, ensure_ascii=False)
