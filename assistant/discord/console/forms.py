"""The Discord settings of a project: the application id and public key (shown: Discord
publishes them), and the bot token (write-only)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from assistant.discord.signing import public_key_problem
from assistant.models import Project

APPLICATION_ID = re.compile(r"\d{17,20}")
#: A bot token is three dot-separated parts (the bot's id, a time, a signature), base64url.
BOT_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}")


class DiscordSettingsForm(forms.Form):
    application_id = forms.CharField(
        label="Application ID", required=False, max_length=20, strip=True,
        help_text="From the application's General Information page in Discord's Developer "
        "Portal (a number of 17 to 20 digits).",
    )  # fmt: skip
    public_key = forms.CharField(
        label="Public key", required=False, max_length=64, strip=True,
        help_text="From the same page, under the application ID: 64 hexadecimal characters. "
        "Every request from Discord is checked with it.",
    )  # fmt: skip
    # Write-only: the stored token is sealed and never rendered back (a hint only).
    bot_token = forms.CharField(
        label="Bot token", required=False, max_length=200, strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
    )  # fmt: skip
    forget = forms.BooleanField(
        label="Disconnect: forget the application and its token", required=False
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        kwargs.setdefault(
            "initial",
            {
                "application_id": project.discord_application_id,
                "public_key": project.discord_public_key,
            },
        )
        super().__init__(*args, **kwargs)
        hint = project.discord_bot_token_hint
        self.fields["bot_token"].help_text = (
            f"Stored ({hint}); paste a new one to replace it, or leave empty to keep it."
            if hint
            else "From the application's Bot page: Reset Token, then copy it (Discord shows it "
            "once). Used to register /ask and to test the connection; answers need no token."
        )

    def clean_application_id(self) -> str:
        value: str = self.cleaned_data["application_id"]
        if value and not APPLICATION_ID.fullmatch(value):
            raise forms.ValidationError(
                "An application ID is a number of 17 to 20 digits (the application's name is "
                "not its ID)."
            )
        return value

    def clean_public_key(self) -> str:
        value: str = self.cleaned_data["public_key"].lower()
        if value and (problem := public_key_problem(value)):
            raise forms.ValidationError(problem)
        return value

    def clean_bot_token(self) -> str:
        token: str = self.cleaned_data["bot_token"].removeprefix("Bot ").strip()
        if token and not BOT_TOKEN.fullmatch(token):
            raise forms.ValidationError(
                "This is not a bot token: it has three parts separated by dots. The client "
                "secret (OAuth2 page) and the public key are not the bot token."
            )
        return token
