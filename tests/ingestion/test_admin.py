"""The Django admin: add a file to a files source and type a manual source's text."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ingestion.connectors.files import source_folder
from ingestion.models import Source

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db) -> Client:  # noqa: ANN001
    user = User.objects.create_superuser("admin", "a@example.com", "pw-for-tests-only")
    client = Client()
    client.force_login(user)
    return client


def form(project, **fields: object) -> dict[str, object]:  # noqa: ANN001
    base = {"project": project.pk, "schedule": "off", "config": "{}"}
    base.update(
        {
            "runs-TOTAL_FORMS": "0",
            "runs-INITIAL_FORMS": "0",
            "runs-MIN_NUM_FORMS": "0",
            "runs-MAX_NUM_FORMS": "0",
        }
    )
    return {**base, **fields}


def test_the_admin_stores_an_uploaded_file_and_refuses_a_bad_one(
    staff, project, settings, tmp_path
) -> None:  # noqa: ANN001
    settings.DATA_DIR = tmp_path
    response = staff.post(
        "/django-admin/ingestion/source/add/",
        form(
            project,
            kind="files",
            name="Guides",
            upload=SimpleUploadedFile("guide.md", b"# Guide\n\nHello."),
        ),
        follow=True,
    )
    assert response.status_code == 200
    source = Source.objects.get(name="Guides")
    assert (source_folder(source) / "guide.md").read_bytes() == b"# Guide\n\nHello."

    response = staff.post(
        f"/django-admin/ingestion/source/{source.pk}/change/",
        form(project, kind="files", name="Guides", upload=SimpleUploadedFile("tool.exe", b"MZ")),
        follow=True,
    )
    assert "unsupported file type" in response.content.decode()


def test_the_admin_keeps_a_manual_sources_text_in_its_config(staff, project) -> None:  # noqa: ANN001
    staff.post(
        "/django-admin/ingestion/source/add/",
        form(project, kind="manual", name="Hours", text="We answer from 9 to 5."),
        follow=True,
    )
    assert Source.objects.get(name="Hours").config == {"text": "We answer from 9 to 5."}
