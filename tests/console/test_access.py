"""Who gets into the console at /admin/."""

from __future__ import annotations

import os
from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/", "/admin/sandbox/", "/admin/metrics/", "/admin/blind-spots/", "/admin/feedback/",
    "/admin/feedback/export.csv", "/admin/tuner/", "/admin/projects/", "/admin/sources/",
]  # fmt: skip


@pytest.mark.parametrize("url", PAGES)
def test_it_sends_anonymous_visitors_to_the_login_page(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=")


@pytest.mark.parametrize("url", PAGES)
def test_it_refuses_signed_in_people_who_are_not_staff(reader_client, url):
    assert reader_client.get(url).status_code == 403


def test_a_staff_member_logs_in_and_lands_on_the_page_asked_for(client, staff):
    page = client.get("/admin/login/?next=/admin/sandbox/")
    assert page.status_code == 200
    assert b"Log in to the console" in page.content
    response = client.post(
        "/admin/login/", {"username": "ada", "password": "pw-ada-123", "next": "/admin/sandbox/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/sandbox/"
    assert client.get("/admin/sandbox/").status_code == 200


def test_a_wrong_password_shows_the_error_and_logs_nobody_in(client, staff):
    response = client.post("/admin/login/", {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content
    assert client.get("/admin/sandbox/").status_code == 302


def test_logging_out_ends_the_session(staff_client):
    assert staff_client.post("/admin/logout/").status_code == 302
    assert staff_client.get("/admin/sandbox/").status_code == 302


def test_createadmin_makes_a_staff_login_from_the_environment(client, monkeypatch):
    monkeypatch.setitem(os.environ, "ASKDOCS_ADMIN_PASSWORD", "s3cret-pass-42")
    monkeypatch.setitem(os.environ, "ASKDOCS_ADMIN_USER", "ops")
    out = StringIO()
    call_command("createadmin", stdout=out)
    assert "Created staff user 'ops'" in out.getvalue()
    assert client.login(username="ops", password="s3cret-pass-42")
    assert client.get("/admin/sandbox/").status_code == 200


def test_createadmin_without_a_password_only_explains(monkeypatch, django_user_model):
    monkeypatch.delitem(os.environ, "ASKDOCS_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("createadmin", stdout=out)
    assert "ASKDOCS_ADMIN_PASSWORD" in out.getvalue()
    assert not django_user_model.objects.exists()
