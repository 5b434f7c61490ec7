"""Streamed responses are served the way the server consumes them: under ASGI as async
iterators (no "StreamingHttpResponse must consume synchronous iterators" warning, nothing
read whole into memory first), under WSGI as plain ones."""

from __future__ import annotations

import csv
import io
import warnings

import pytest

from assistant.models import Interaction, Project
from feedback.models import Feedback

pytestmark = pytest.mark.django_db(transaction=True)


async def _read(response) -> bytes:  # noqa: ANN001
    return b"".join([part async for part in response.streaming_content])


@pytest.fixture
def votes(transactional_db, django_user_model):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop")
    for i in range(450):  # more than one batch of rows
        asked = Interaction.objects.create(
            project=project, channel="widget", question=f"Question {i}?", retrieval_query="q"
        )
        Feedback.objects.create(interaction=asked, client_id=f"c-{i}", vote=1)
    staff = django_user_model.objects.create_user("ada", password="pw", is_staff=True)
    return project, staff


async def test_the_csv_export_streams_asynchronously_under_asgi(async_client, votes):
    project, staff = votes
    await async_client.aforce_login(staff)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django's warning about a sync iterator would raise
        response = await async_client.get("/admin/feedback/export.csv", {"project": project.pk})
        assert response.is_async
        rows = list(csv.reader(io.StringIO((await _read(response)).decode())))
    assert len(rows) == 451 and rows[0][0] == "date"
    assert {row[5] for row in rows[1:]} == {f"Question {i}?" for i in range(450)}


async def test_static_files_stream_asynchronously_under_asgi(async_client):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        response = await async_client.get("/static/console/console.js")
        assert response.status_code == 200 and response.is_async
        assert b"refilter" in await _read(response)


def test_under_wsgi_they_stay_plain_iterators(client):
    response = client.get("/static/console/console.js")
    assert response.status_code == 200 and not response.is_async
    assert b"refilter" in b"".join(response.streaming_content)
