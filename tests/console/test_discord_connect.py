"""The console page "Connect Discord": staff only, this project's interactions endpoint URL,
the application id and public key (checked), the bot token stored sealed (a hint shown back,
never the token), the /ask command registered, and the connection test, against a fake
Discord API on a loopback port."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from assistant.models import Project
from tests.discord.conftest import APPLICATION_ID, BOT_TOKEN, PUBLIC_KEY, public_key_of
from tests.fake_discord import FakeDiscord
from tests.servers import free_port

pytestmark = pytest.mark.django_db


def page(client, project: Project) -> str:  # noqa: ANN001
    return unescape(client.get(f"/admin/projects/{project.pk}/discord/").content.decode())


def save(client, project: Project, **fields: str):  # noqa: ANN001, ANN201
    data = {"application_id": "", "public_key": "", "bot_token": "", **fields}
    return client.post(f"/admin/projects/{project.pk}/discord/", data, follow=True)


def connect(client, project: Project, **fields: str):  # noqa: ANN001, ANN201
    fields = {"application_id": APPLICATION_ID, "public_key": PUBLIC_KEY, "bot_token": BOT_TOKEN,
              **fields}  # fmt: skip
    return save(client, project, **fields)


def said(response) -> str:  # noqa: ANN001
    return unescape(response.content.decode())


def test_it_is_for_staff_only(reader_client, demo):
    from django.test import Client

    url = f"/admin/projects/{demo.pk}/discord/"
    assert Client().get(url).status_code == 302  # to the login page
    assert reader_client.get(url).status_code == 403
    assert reader_client.post(url, {"application_id": APPLICATION_ID}).status_code == 403
    assert reader_client.post(url + "test/").status_code == 403
    assert reader_client.post(url + "register/").status_code == 403
    demo.refresh_from_db()
    assert not demo.discord_application_id


def test_it_gives_the_endpoint_url_and_the_command_to_register(staff_client, demo, settings):
    html = page(staff_client, demo)
    endpoint = f"http://testserver/discord/{demo.public_key}/interactions"
    assert f'data-testid="discord-endpoint-url">{endpoint}<' in html
    found = re.search(r'data-testid="discord-commands" readonly rows="\d+">(.*?)</textarea>',
                      html, re.S)  # fmt: skip
    [command] = json.loads(found.group(1))
    assert command["name"] == "ask" and command["options"][0]["name"] == "question"
    assert command["options"][0]["required"] is True
    assert 'href="/docs/discord/"' in html
    assert "discord-install" not in html  # no application id yet

    settings.ASKDOCS_PUBLIC_BASE_URL = "https://docs-bot.example.com"
    assert f"https://docs-bot.example.com/discord/{demo.public_key}/interactions" in page(
        staff_client, demo
    )


def test_the_settings_are_saved_and_the_token_shown_back_only_as_a_hint(staff_client, demo):
    html = said(connect(staff_client, demo))
    assert BOT_TOKEN not in html and "ending …9abc" in html
    assert "connected" in html and f"client_id={APPLICATION_ID}" in html  # the install link
    demo.refresh_from_db()
    assert demo.discord_connected and BOT_TOKEN not in demo.discord_bot_token_sealed
    assert demo.discord_bot_token() == BOT_TOKEN
    assert (demo.discord_application_id, demo.discord_public_key) == (APPLICATION_ID, PUBLIC_KEY)

    save(staff_client, demo, application_id=APPLICATION_ID, public_key=PUBLIC_KEY.upper())
    demo.refresh_from_db()  # an empty token keeps the stored one; the key is read in lower case
    assert demo.discord_bot_token() == BOT_TOKEN and demo.discord_public_key == PUBLIC_KEY

    save(staff_client, demo, forget="on")
    demo.refresh_from_db()
    assert not demo.discord_connected and demo.discord_bot_token() == ""


def test_it_explains_what_was_pasted_in_the_wrong_place(staff_client, demo):
    html = said(save(staff_client, demo, application_id="Acme docs", public_key="abc123",
                     bot_token="a-client-secret"))  # fmt: skip
    assert "An application ID is a number" in html
    assert "A public key is 64 hexadecimal characters" in html
    assert "This is not a bot token" in html
    demo.refresh_from_db()
    assert not (demo.discord_application_id or demo.discord_bot_token_sealed)


def test_the_connection_test_reports_what_is_wrong(staff_client, demo, settings):
    with FakeDiscord(APPLICATION_ID, BOT_TOKEN, PUBLIC_KEY) as discord:
        settings.ASKDOCS_DISCORD_API_URL = discord.url
        test = f"/admin/projects/{demo.pk}/discord/test/"
        assert "No bot token is saved yet" in said(staff_client.post(test, follow=True))

        connect(staff_client, demo)
        ok = said(staff_client.post(test, follow=True))
        assert "Connected: the bot token works as @Acme docs for the application Acme docs" in ok

        another_key = public_key_of(Ed25519PrivateKey.generate())
        connect(staff_client, demo, public_key=another_key)
        assert "The public key saved here is not this application's" in said(
            staff_client.post(test, follow=True)
        )
        connect(staff_client, demo, application_id="1100000000000000999")
        assert "The bot token belongs to another application" in said(
            staff_client.post(test, follow=True)
        )
        revoked = "MTEwMDAwMDAwMDAwMDAwMDk5OQ.GhTz4k.revoked-or-mistyped-token-000"
        connect(staff_client, demo, bot_token=revoked)
        assert "Discord does not accept this bot token" in said(
            staff_client.post(test, follow=True)
        )

    settings.ASKDOCS_DISCORD_API_URL = f"http://127.0.0.1:{free_port()}/api/v10"
    down = said(staff_client.post(test, follow=True))
    assert "Discord could not be reached from this server" in down


def test_register_puts_the_ask_command(staff_client, demo, settings):
    with FakeDiscord(APPLICATION_ID, BOT_TOKEN, PUBLIC_KEY) as discord:
        settings.ASKDOCS_DISCORD_API_URL = discord.url
        register = f"/admin/projects/{demo.pk}/discord/register/"
        assert "Save the application id and the bot token first" in said(
            staff_client.post(register, follow=True)
        )
        connect(staff_client, demo)
        assert "/ask is registered" in said(staff_client.post(register, follow=True))
        [command] = discord.commands
        assert command["name"] == "ask" and command["description"] == "Ask the Demo documentation"

        discord.fail_next("commands", status=400, code=50035, message="Invalid Form Body")
        refused = said(staff_client.post(register, follow=True))
        assert "/ask was not registered: Discord refused the command: Invalid Form Body" in refused


def test_the_project_page_links_to_it(staff_client, demo):
    html = staff_client.get(f"/admin/projects/{demo.pk}/").content.decode()
    assert f'href="/admin/projects/{demo.pk}/discord/"' in html
