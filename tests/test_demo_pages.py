"""The demo host pages embed the widget with one script tag; the no-JS page is rate limited."""

from __future__ import annotations

import io
import random
import re

import pytest

from assistant.ask.cors import forget_origins

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "topic", "question"),
    [
        ("/demo/", "Billing", "How do I get my money back?"),
        ("/demo/billing/", "Billing", "How do I get my money back?"),
        ("/demo/tokens/", "Retrieval endpoint token management", "When does my token expire?"),
    ],
)
def test_each_demo_page_embeds_the_widget_with_its_topic(client, demo, path, topic, question):
    response = client.get(path, HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200
    html = response.content.decode()
    tag = re.search(r"<script src=\"([^\"]+)\"([^>]*)>", html)
    assert tag.group(1) == "http://127.0.0.1:8000/static/widget/widget.js"
    assert f'data-project="{demo.public_key}"' in tag.group(2)
    assert f'data-topic="{topic}"' in tag.group(2) and f'data-question="{question}"' in tag.group(2)
    assert "not one of the demo" not in html


def test_a_demo_page_says_when_its_origin_is_not_allowed(client, demo):
    html = client.get("/demo/billing/", HTTP_HOST="localhost:9999").content.decode()
    assert "http://localhost:9999</code>, which is not one of the demo" in html


def test_seed_demo_allows_the_origin_the_demo_is_served_from(client, demo):
    from django.core.management import CommandError, call_command

    call_command("seed_demo", "--origin", "HTTP://LocalHost:9999/", stdout=io.StringIO())
    call_command("seed_demo", "--origin", "http://localhost:9999", stdout=io.StringIO())
    demo.refresh_from_db()
    assert demo.allowed_origins.count("http://localhost:9999") == 1  # normalised, once
    assert "http://127.0.0.1:8000" in demo.allowed_origins  # the others stay
    forget_origins()
    html = client.get("/demo/billing/", HTTP_HOST="localhost:9999").content.decode()
    assert "not one of the demo" not in html

    before = list(demo.allowed_origins)
    with pytest.raises(CommandError, match="--origin: 'localhost:9999/x' is not an origin"):
        call_command("seed_demo", "--origin", "localhost:9999/x", stdout=io.StringIO())
    demo.refresh_from_db()
    assert demo.allowed_origins == before


def test_an_unknown_demo_page_is_not_found(client, demo):
    assert client.get("/demo/nothing/").status_code == 404


def test_the_widget_script_is_served(client):
    response = client.get("/static/widget/widget.js")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()
    assert "attachShadow" in body
    assert not re.search(r"\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write", body)


def test_the_plain_ask_page_is_rate_limited_too(client, demo, settings):
    settings.ASKDOCS_RATE_ASK_PER_CLIENT = "1/h"  # per hour: a minute window may roll over mid-test
    address = f"10.5.{random.randint(0, 255)}.{random.randint(1, 254)}"
    form = {"question": "Do you offer a student discount?"}
    first = client.post("/", form, REMOTE_ADDR=address).content.decode()
    second = client.post("/", form, REMOTE_ADDR=address).content.decode()
    assert "sorry" in first.lower() and "Too many questions" not in first
    assert "Too many questions" in second


def test_the_plain_ask_page_answers_from_the_demo_when_another_project_sorts_first(client, demo):
    from assistant.models import Interaction, Project

    other = Project.objects.create(name="Acme internal", allowed_origins=[])
    page = client.get("/").content.decode()
    assert "<strong>Demo</strong>" in page and "How do I get my money back?" in page
    client.post("/", {"question": "How do I get my money back?", "topic": "Billing",
                      "project": demo.public_key})  # fmt: skip
    logged = Interaction.objects.filter(project=demo).latest("pk")
    assert logged.question == "How do I get my money back?"
    assert logged.channel == Interaction.Channel.WIDGET  # a visitor's question, not a sandbox try
    assert not logged.refused

    chosen = client.get(f"/?project={other.public_key}").content.decode()
    assert "<strong>Acme internal</strong>" in chosen
    assert "How do I get my money back?" not in chosen  # the demo's question is not offered


def test_the_demo_help_centre_is_served_with_the_anchors_its_citations_link_to(client, tmp_path):
    """`.bin/run` seeds the demo with this server's /demo/help/ as its pages' address, so a
    newcomer clicking a citation opens a page (help.acme.example does not exist)."""
    import json

    from assistant.demo import DOCS_DIR, demo_export
    from assistant.rag.chunking.pieces import chunk_markdown

    rows = [json.loads(line) for line in demo_export("http://127.0.0.1:8000/demo/help/").open()]
    assert {row["url"] for row in rows} == {
        f"http://127.0.0.1:8000/demo/help/{path.stem}" for path in DOCS_DIR.glob("*.md")
    }
    for row in rows:
        page = client.get(row["url"].removeprefix("http://127.0.0.1:8000"))
        assert page.status_code == 200, row["url"]
        html = page.content.decode()
        assert f"<h1>{row['title']}</h1>" in html
        pieces = chunk_markdown(
            row["text"], count_tokens=lambda t: len(t.split()), title=row["title"]
        )
        for piece in pieces:
            assert not piece.anchor or f'id="{piece.anchor}"' in html, (row["url"], piece.anchor)
    assert client.get("/demo/help/no-such-page").status_code == 404
    assert client.get("/demo/help/..%2Fsettings").status_code == 404
