"""The console page "Connect Slack": staff only, the app manifest with this project's request
URLs, the two secrets stored sealed (a hint shown back, never the secret), the watched
channels, and the connection test against a fake Slack Web API."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from assistant.models import Project
from tests.fake_slack import FakeSlack
from tests.servers import free_port

pytestmark = pytest.mark.django_db

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # noqa: S105 - a test value
TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"  # noqa: S105 - a test value


def page(client, project: Project) -> str:  # noqa: ANN001
    return client.get(f"/admin/projects/{project.pk}/slack/").content.decode()


def save(client, project: Project, **fields: str):  # noqa: ANN001, ANN201
    data = {"signing_secret": "", "bot_token": "", "channels": "", **fields}
    return client.post(f"/admin/projects/{project.pk}/slack/", data, follow=True)


def test_it_is_for_staff_only(reader_client, demo):
    from django.test import Client

    url = f"/admin/projects/{demo.pk}/slack/"
    assert Client().get(url).status_code == 302  # to the login page
    assert reader_client.get(url).status_code == 403
    assert reader_client.post(url, {"signing_secret": SECRET}).status_code == 403
    assert reader_client.post(url + "test/").status_code == 403
    demo.refresh_from_db()
    assert not demo.slack_signing_secret_sealed


def test_it_gives_the_manifest_with_this_projects_request_urls(staff_client, demo, settings):
    html = page(staff_client, demo)
    found = re.search(
        r'data-testid="slack-manifest" readonly rows="\d+">(.*?)</textarea>', html, re.S
    )
    manifest = json.loads(unescape(found.group(1)))
    events = f"http://testserver/slack/{demo.public_key}/events"
    assert manifest["settings"]["event_subscriptions"]["request_url"] == events
    assert manifest["settings"]["interactivity"]["request_url"] == events.replace(
        "/events", "/interactions"
    )
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read", "chat:write", "channels:history", "im:history",
    }  # fmt: skip
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_mention", "message.im", "message.channels",
    }  # fmt: skip
    assert 'href="/docs/slack/"' in html

    settings.ASKDOCS_PUBLIC_BASE_URL = "https://docs-bot.example.com"
    assert f"https://docs-bot.example.com/slack/{demo.public_key}/events" in page(
        staff_client, demo
    )


def test_the_secrets_are_stored_sealed_and_shown_back_only_as_a_hint(staff_client, demo):
    response = save(staff_client, demo, signing_secret=SECRET, bot_token=TOKEN,
                    channels="C0HELP0001, C0SUPPORT2")  # fmt: skip
    html = response.content.decode()
    assert SECRET not in html and TOKEN not in html
    assert "ending …85a5" in html and "ending …bqgy" in html
    demo.refresh_from_db()
    assert demo.slack_connected and SECRET not in demo.slack_signing_secret_sealed
    assert demo.slack_signing_secret() == SECRET and demo.slack_bot_token() == TOKEN
    assert demo.slack_channels == ["C0HELP0001", "C0SUPPORT2"]

    save(staff_client, demo, channels="")  # empty secrets keep the stored ones
    demo.refresh_from_db()
    assert demo.slack_bot_token() == TOKEN and demo.slack_channels == []

    save(staff_client, demo, forget="on")
    demo.refresh_from_db()
    assert not demo.slack_connected and demo.slack_bot_token() == ""


def test_it_explains_a_wrong_token_or_channel(staff_client, demo):
    html = save(
        staff_client, demo, bot_token="xoxp-a-user-token", channels="#help"
    ).content.decode()
    assert "starts with xoxb-" in html and "Not a channel id: #help" in html
    demo.refresh_from_db()
    assert not demo.slack_bot_token_sealed


def test_the_connection_test_reports_a_good_token_a_bad_token_and_no_slack(
    staff_client, demo, settings
):
    with FakeSlack(TOKEN) as slack:
        settings.ASKDOCS_SLACK_API_URL = slack.url
        save(staff_client, demo, bot_token=TOKEN)
        ok = staff_client.post(f"/admin/projects/{demo.pk}/slack/test/", follow=True)
        assert "Connected: the bot token works in the workspace Acme as @askdocs" in unescape(
            ok.content.decode()
        )
        save(staff_client, demo, bot_token="xoxb-revoked-or-mistyped-0000")
        bad = staff_client.post(f"/admin/projects/{demo.pk}/slack/test/", follow=True)
        assert "Slack does not accept this bot token" in bad.content.decode()

    settings.ASKDOCS_SLACK_API_URL = f"http://127.0.0.1:{free_port()}/api/"
    down = staff_client.post(f"/admin/projects/{demo.pk}/slack/test/", follow=True)
    assert "Slack could not be reached from this server" in down.content.decode()


def test_the_project_page_links_to_it(staff_client, demo):
    html = staff_client.get(f"/admin/projects/{demo.pk}/").content.decode()
    assert f'href="/admin/projects/{demo.pk}/slack/"' in html
