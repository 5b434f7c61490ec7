"""The `/ask` slash command as Discord registers it (`PUT /applications/{id}/commands`, or
pasted by hand), and the link that adds the application to a server."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from assistant.discord.interactions import COMMAND, OPTION

#: Discord's limits: a description holds 100 characters, a string option 6,000.
_DESCRIPTION_LIMIT = 100
_OPTION_LIMIT = 6000
CHAT_INPUT = 1
STRING = 3
#: Installed in a server (0); used in its channels and threads (0) and in a direct message
#: to the app (1).
INTEGRATION_TYPES = [0]
CONTEXTS = [0, 1]


def ask_command(*, name: str, max_chars: int) -> dict[str, Any]:
    return {
        "name": COMMAND,
        "type": CHAT_INPUT,
        "description": f"Ask the {name} documentation"[:_DESCRIPTION_LIMIT],
        "options": [
            {
                "type": STRING, "name": OPTION, "description": "Your question",
                "required": True, "max_length": min(max_chars, _OPTION_LIMIT),
            }
        ],
        "integration_types": INTEGRATION_TYPES,
        "contexts": CONTEXTS,
    }  # fmt: skip


def commands_json(*, name: str, max_chars: int) -> str:
    """The body of the registration: a list of the application's commands (only /ask)."""
    return json.dumps([ask_command(name=name, max_chars=max_chars)], indent=2, ensure_ascii=False)


def install_url(application_id: str) -> str:
    """Where a server's admin adds the application: its commands, and its bot (so members may
    also ask it in a direct message); no permissions are asked for."""
    query = urlencode(
        {"client_id": application_id, "scope": "applications.commands bot", "permissions": "0"}
    )
    return f"https://discord.com/oauth2/authorize?{query}"
