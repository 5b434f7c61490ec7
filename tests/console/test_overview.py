"""A login lands on the overview of the project: this week's questions, answers, votes and
sources, and the latest conversations."""

from __future__ import annotations

import re

import pytest

from assistant.models import Interaction, Project
from feedback.models import Feedback

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop")
    for i in range(4):
        asked = Interaction.objects.create(
            project=project, channel="widget", question=f"Question {i}?", retrieval_query="q",
            conversation_id=f"conv-{i}", refused=i == 3,
        )  # fmt: skip
        if i < 2:
            Feedback.objects.create(interaction=asked, client_id=f"c-{i}", vote=1 if i else -1)
    return project


def stat(html: str, name: str) -> str:
    return re.search(rf'data-testid="{name}">([^<]*)<', html).group(1)


def test_the_console_home_is_the_overview_of_the_project(staff_client, shop):
    response = staff_client.get("/admin/", follow=True)
    assert response.redirect_chain[-1][0] == "/admin/overview/"
    html = staff_client.get("/admin/overview/", {"project": shop.pk}).content.decode()
    assert stat(html, "questions") == "4"
    assert stat(html, "answered") == "75%"
    assert stat(html, "up-rate") == "50%"
    assert stat(html, "sources") == "0"
    assert html.count("/admin/conversations/view/?project=") == 4


def test_an_empty_project_says_what_to_do(staff_client):
    project = Project.objects.create(name="New")
    html = staff_client.get("/admin/overview/", {"project": project.pk}).content.decode()
    assert stat(html, "answered") == "—" and "No questions yet." in html
