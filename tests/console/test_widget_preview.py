"""The widget's preview page: the chosen look in the script tag, escaped, and the widget
itself on the page."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from assistant.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    return Project.objects.create(name="Shop", allowed_origins=["http://testserver"])


def snippet(page: str) -> str:
    raw = re.search(r'<textarea id="snippet"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    return html_lib.unescape(raw)


def test_the_chosen_look_goes_into_the_tag_and_the_page(staff_client, shop):
    page = staff_client.get(
        f"/admin/projects/{shop.pk}/widget/",
        {"title": "Help", "color": "#AA3300", "position": "left", "topic": 'Billing "plans"'},
    ).content.decode()
    tag = snippet(page)
    assert tag.startswith('<script src="http://testserver/static/widget/widget.js"')
    assert f'data-project="{shop.public_key}"' in tag
    assert 'data-topic="Billing &quot;plans&quot;"' in tag  # a quote cannot end the attribute
    assert 'data-title="Help"' in tag and 'data-color="#aa3300"' in tag
    assert 'data-position="left"' in tag and "data-question" not in tag
    assert 'data-topic="Billing &quot;plans&quot;" data-title="Help"' in page  # the live widget
    assert 'data-testid="origin-note">This server' in page and "is allowed" in page


def test_without_choices_the_tag_is_the_plain_one(staff_client, shop):
    tag = snippet(staff_client.get(f"/admin/projects/{shop.pk}/widget/").content.decode())
    assert tag == (
        '<script src="http://testserver/static/widget/widget.js" '
        f'data-project="{shop.public_key}" async></script>'
    )


def test_a_bad_colour_is_named_and_no_widget_is_loaded(staff_client, shop):
    page = staff_client.get(
        f"/admin/projects/{shop.pk}/widget/", {"color": "red;x", "position": "right"}
    ).content.decode()
    assert "Pick a colour like #3b5bdb." in page
    assert '<script src="http://testserver/static/widget/widget.js"' not in page


def test_an_origin_not_allowed_is_pointed_out(staff_client):
    project = Project.objects.create(name="Elsewhere", allowed_origins=["https://app.example"])
    page = staff_client.get(f"/admin/projects/{project.pk}/widget/").content.decode()
    assert "is not among the project's allowed origins" in page


def test_the_widgets_own_colour_needs_no_attribute(staff_client, shop):
    page = staff_client.get(
        f"/admin/projects/{shop.pk}/widget/", {"color": "#3B5BDB", "position": "right"}
    ).content.decode()
    assert "data-color" not in snippet(page)
    assert (
        'value="#3b5bdb"' in staff_client.get(f"/admin/projects/{shop.pk}/widget/").content.decode()
    )
