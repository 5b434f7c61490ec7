"""The console's "Connect an AI tool" page: staff only, the MCP address and ready client
configurations (without the secret key, which is never shown again), and the llms.txt switch."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from assistant.models import Project
from tests.conftest import secret_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    return Project.objects.create(name="Shop Docs")


def configs(html: str) -> dict[str, str]:
    found = re.findall(
        r'data-testid="config-([a-z-]+)" readonly rows="\d+">(.*?)</textarea>', html, re.S
    )
    return {name: unescape(text) for name, text in found}


def test_anonymous_visitors_are_sent_to_log_in(client, shop):
    assert client.get(f"/admin/projects/{shop.pk}/connect/").status_code == 302


def test_it_is_for_staff_only(reader_client, shop):
    assert reader_client.get(f"/admin/projects/{shop.pk}/connect/").status_code == 403
    assert (
        reader_client.post(f"/admin/projects/{shop.pk}/llms-txt/", {"enabled": "on"}).status_code
        == 403
    )
    shop.refresh_from_db()
    assert not shop.llms_txt_enabled


def test_it_gives_the_mcp_address_and_configurations_with_the_keys_hint(staff_client, shop):
    secret = secret_of(shop)
    html = staff_client.get(f"/admin/projects/{shop.pk}/connect/").content.decode()

    assert 'data-testid="mcp-url">http://testserver/mcp/<' in html
    assert secret not in html
    found = configs(html)
    assert set(found) == {"cursor", "vs-code", "claude-desktop", "claude-code"}
    cursor = json.loads(found["cursor"])["mcpServers"]["shop-docs-docs"]
    assert cursor == {
        "url": "http://testserver/mcp/",
        "headers": {"Authorization": f"Bearer {shop.secret_key_hint}"},
    }
    vscode = json.loads(found["vs-code"])["servers"]["shop-docs-docs"]
    assert vscode["type"] == "http" and vscode["url"] == "http://testserver/mcp/"
    args = json.loads(found["claude-desktop"])["mcpServers"]["shop-docs-docs"]["args"]
    assert "http://testserver/mcp/" in args
    assert found["claude-code"].startswith("claude mcp add --transport http shop-docs-docs")


def test_the_switch_publishes_llms_txt_and_takes_it_down(staff_client, shop):
    assert staff_client.get("/p/shop-docs/llms.txt").status_code == 404

    response = staff_client.post(
        f"/admin/projects/{shop.pk}/llms-txt/", {"enabled": "on"}, HTTP_HX_REQUEST="true"
    )

    assert 'href="http://testserver/p/shop-docs/llms.txt"' in response.content.decode()
    assert staff_client.get("/p/shop-docs/llms.txt").content.startswith(b"# Shop Docs\n")
    response = staff_client.post(f"/admin/projects/{shop.pk}/llms-txt/", {})
    assert response.status_code == 302
    assert staff_client.get("/p/shop-docs/llms.txt").status_code == 404
    shop.refresh_from_db()
    assert not shop.llms_txt_enabled


def test_the_project_page_links_to_it(staff_client, shop):
    html = staff_client.get(f"/admin/projects/{shop.pk}/").content.decode()
    assert f'href="/admin/projects/{shop.pk}/connect/"' in html
