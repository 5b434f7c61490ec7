"""The Slack settings of a project: the two secrets (write-only) and the watched channels."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from assistant.models import Project

CHANNEL_ID = re.compile(r"[CG][A-Z0-9]{6,20}")
MAX_CHANNELS = 50


class SlackSettingsForm(forms.Form):
    # Write-only: the stored values are sealed and never rendered back (a hint only).
    signing_secret = forms.CharField(
        label="Signing secret", required=False, max_length=200, strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
    )  # fmt: skip
    bot_token = forms.CharField(
        label="Bot User OAuth Token", required=False, max_length=300, strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
    )  # fmt: skip
    channels = forms.CharField(
        label="Watched channels", required=False, max_length=2000,
        help_text="Channel ids (C0123ABCD; in Slack: the channel's name → About, at the bottom) "
        "where every message is a question, not only mentions. Separate them with spaces or "
        "commas. The app must be invited to them.",
    )  # fmt: skip
    forget = forms.BooleanField(label="Disconnect: forget both secrets", required=False)

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {"channels": " ".join(project.slack_channels or ())})
        super().__init__(*args, **kwargs)
        for name, hint, where in (
            ("signing_secret", project.slack_signing_secret_hint, "Basic Information → App "
             "Credentials → Signing Secret"),
            ("bot_token", project.slack_bot_token_hint, "OAuth & Permissions → Bot User OAuth "
             "Token (xoxb-…), after installing the app to the workspace"),
        ):  # fmt: skip
            self.fields[name].help_text = (
                f"Stored ({hint}); paste a new one to replace it, or leave empty to keep it."
                if hint
                else f"From the Slack app's page: {where}."
            )

    def clean_bot_token(self) -> str:
        token: str = self.cleaned_data["bot_token"]
        if token and not token.startswith("xoxb-"):
            raise forms.ValidationError(
                "This is not a bot token: it starts with xoxb- (a user token, xoxp-, would act "
                "as a person)."
            )
        return token

    def clean_channels(self) -> list[str]:
        ids = [part for part in re.split(r"[\s,]+", self.cleaned_data["channels"]) if part]
        wrong = [part for part in ids if not CHANNEL_ID.fullmatch(part)]
        if wrong:
            raise forms.ValidationError(
                f"Not a channel id: {', '.join(wrong[:3])}. Ids look like C0123ABCD (a "
                "channel's name, #help, is not its id)."
            )
        if len(ids) > MAX_CHANNELS:
            raise forms.ValidationError(f"At most {MAX_CHANNELS} channels.")
        return list(dict.fromkeys(ids))
