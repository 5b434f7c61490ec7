"""Every console page links to its page of the manual, and that page and heading exist in the
built site (issue 31)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def docs_link(html: str) -> str:
    found = re.search(r'<a class="docs-link" href="([^"]+)"', html)
    assert found, "no Docs link in the page's header"
    return found.group(1)


def assert_it_leads_somewhere(client: Client, href: str, built: object) -> None:
    path, _, anchor = href.partition("#")
    assert path.startswith("/docs/")
    page = client.get(path)
    assert page.status_code == 200, href
    html = b"".join(page.streaming_content).decode()
    if anchor:
        assert f'id="{anchor}"' in html, href


def test_each_console_page_links_to_its_section_of_the_manual(
    staff_client, settings, demo, built_docs
):
    settings.ASKDOCS_DOCS_DIR = built_docs[0]
    source = demo.sources.first()
    pages = {
        "/admin/overview/": "/docs/console/#overview",
        "/admin/projects/": "/docs/console/#projects",
        f"/admin/projects/{demo.pk}/": "/docs/console/#projects",
        "/admin/sources/": "/docs/sources/",
        f"/admin/sources/{source.pk}/": "/docs/sources/",
        "/admin/sandbox/": "/docs/console/#sandbox",
        "/admin/conversations/": "/docs/console/#conversations",
        "/admin/metrics/": "/docs/console/#relevance",
        "/admin/blind-spots/": "/docs/console/#blind-spots",
        "/admin/feedback/": "/docs/console/#feedback",
        "/admin/tuner/": "/docs/console/#threshold-tuner",
        "/admin/handoffs/": "/docs/console/#handoffs",
    }
    for url, expected in pages.items():
        response = staff_client.get(url)
        assert response.status_code == 200, url
        href = docs_link(response.content.decode())
        assert href == expected, url
        assert_it_leads_somewhere(staff_client, href, built_docs)


def test_the_login_page_says_where_the_manual_tells_how_to_get_an_account(
    client, settings, built_docs
):
    settings.ASKDOCS_DOCS_DIR = built_docs[0]
    html = client.get("/admin/login/").content.decode()
    href = re.search(r'<a href="([^"]+)">the manual says how</a>', html).group(1)
    assert href == "/docs/console/#logging-in"
    assert_it_leads_somewhere(client, href, built_docs)


def test_the_docs_links_follow_a_configured_docs_address(staff_client, settings):
    settings.ASKDOCS_DOCS_URL = "https://docs.example.com/askai/"
    href = docs_link(staff_client.get("/admin/sources/").content.decode())
    assert href == "https://docs.example.com/askai/sources/"
