"""Creating a project in the console, its secret key shown once, rotation, the SMS number."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from assistant.models import PIPELINE_DEFAULTS, Project
from tests.console.test_projects import form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project(name="Shop", allowed_origins=["https://shop.example"])
    project.secret = project.issue_secret_key()  # what the console showed when it was made
    project.save()
    return project


def shown_secret(html: str) -> str | None:
    """The secret key shown in full on a page, if any."""
    found = re.search(r'data-testid="secret-key">(sk_[A-Za-z0-9_-]+)<', html)
    return found.group(1) if found else None


def page(client, project):  # noqa: ANN001, ANN201
    response = client.get(f"/admin/projects/{project.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_projects_page_offers_a_new_project_form(staff_client):
    html = staff_client.get("/admin/projects/").content.decode()
    assert 'action="/admin/projects/new/"' in html
    assert 'name="name"' in html and 'name="allowed_origins"' in html
    assert 'name="threshold"' not in html  # the knobs keep their defaults


def test_creating_a_project_shows_its_secret_key_exactly_once(staff_client):
    response = staff_client.post(
        "/admin/projects/new/",
        {"name": "Docs", "allowed_origins": "HTTPS://Docs.Example:443/\nhttps://docs.example"},
    )
    project = Project.objects.get(name="Docs")
    assert response.status_code == 302
    assert response["Location"] == f"/admin/projects/{project.pk}/"
    assert project.allowed_origins == ["https://docs.example"]
    assert project.threshold == PIPELINE_DEFAULTS.threshold
    assert project.rerank_top == PIPELINE_DEFAULTS.rerank_top
    assert project.public_key.startswith("pk_")

    first = page(staff_client, project)
    secret = shown_secret(first)
    assert secret and secret.startswith("sk_") and project.secret_key_matches(secret)
    assert "Project Docs created." in first
    second = page(staff_client, project)
    assert secret not in second and shown_secret(second) is None
    assert f"sk_…{secret[-4:]}" in second
    assert secret not in staff_client.get("/admin/projects/").content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "", "allowed_origins": ""}, "This field is required."),
        ({"name": "Shop", "allowed_origins": ""}, "Project with this Name already exists."),
        ({"name": "New", "allowed_origins": "https://ok.example/path"}, "must be an origin only"),
        ({"name": "New", "allowed_origins": "ftp://files.example"}, "is not an origin"),
    ],
)
def test_bad_input_for_a_new_project_shows_the_error_and_creates_nothing(
    staff_client, shop, data, message
):
    before = Project.objects.count()
    response = staff_client.post("/admin/projects/new/", data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Project.objects.count() == before


def test_creating_needs_staff_a_post_and_the_csrf_token(reader_client, staff):
    data = {"name": "Docs", "allowed_origins": ""}
    assert reader_client.post("/admin/projects/new/", data).status_code == 403
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(staff)
    # A typed or bookmarked address gets the form, not a blank 405.
    response = csrf_client.get("/admin/projects/new/")
    assert (response.status_code, response["Location"]) == (302, "/admin/projects/#new-project")
    assert 'id="new-project"' in csrf_client.get("/admin/projects/").content.decode()
    assert csrf_client.post("/admin/projects/new/", data).status_code == 403
    assert not Project.objects.filter(name="Docs").exists()


def test_rotating_the_secret_key_shows_the_new_one_once(staff_client, shop):
    old = shop.secret
    assert old not in page(staff_client, shop)  # only the hint before any rotation
    response = staff_client.post(f"/admin/projects/{shop.pk}/rotate-secret/")
    assert response.status_code == 302 and response["Location"] == f"/admin/projects/{shop.pk}/"
    shop.refresh_from_db()
    first = page(staff_client, shop)
    new = shown_secret(first)
    assert new and new != old and new.startswith("sk_") and old not in first
    assert shop.secret_key_matches(new) and not shop.secret_key_matches(old)
    second = page(staff_client, shop)
    assert new not in second and f"sk_…{new[-4:]}" in second


def test_rotating_the_secret_key_with_htmx_returns_only_the_key_fragment(staff_client, shop):
    response = staff_client.post(
        f"/admin/projects/{shop.pk}/rotate-secret/", HTTP_HX_REQUEST="true"
    )
    shop.refresh_from_db()
    html = response.content.decode()
    new = shown_secret(html)
    assert "<html" not in html and new and shop.secret_key_matches(new)
    assert new not in page(staff_client, shop)  # shown in the fragment, not again


def test_rotating_the_secret_key_needs_staff_and_a_post(reader_client, staff, shop):
    url = f"/admin/projects/{shop.pk}/rotate-secret/"
    old = shop.secret
    assert reader_client.post(url).status_code == 403
    staff_client = Client(enforce_csrf_checks=True)
    staff_client.force_login(staff)
    assert staff_client.get(url).status_code == 405
    assert staff_client.post(url).status_code == 403  # no CSRF token
    shop.refresh_from_db()
    assert shop.secret_key_matches(old)


def test_the_project_page_sets_and_clears_the_sms_number(staff_client, shop):
    url = f"/admin/projects/{shop.pk}/"
    assert staff_client.post(url, form_data(shop, sms_number="+15551234567")).status_code == 302
    shop.refresh_from_db()
    assert shop.sms_number == "+15551234567"
    assert staff_client.post(url, form_data(shop, sms_number="")).status_code == 302
    shop.refresh_from_db()
    assert shop.sms_number == ""


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("555-1234", "E.164"),
        ("+0123456789", "E.164"),
        ("+15550000000", "already"),  # the other project's number
    ],
)
def test_a_bad_or_taken_sms_number_is_refused_next_to_the_field(
    staff_client, shop, number, message
):
    Project.objects.create(name="Other", sms_number="+15550000000")
    response = staff_client.post(f"/admin/projects/{shop.pk}/", form_data(shop, sms_number=number))
    assert response.status_code == 200
    block = (
        response.content.decode()
        .split('for="id_sms_number"', 1)[1]
        .split('<div class="field', 1)[0]
    )
    assert message in block
    shop.refresh_from_db()
    assert shop.sms_number == ""


def test_the_django_admin_shows_only_the_hint_of_the_secret_key(client, django_user_model, shop):
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    html = client.get(f"/django-admin/assistant/project/{shop.pk}/change/").content.decode()
    assert shop.secret not in html and shop.secret_key_hint in html
    assert shop.secret_key_sealed not in html and shop.secret_key_digest not in html


def test_a_new_project_says_to_add_a_source_until_it_has_one(staff_client, shop):
    first = page(staff_client, shop)
    assert 'data-testid="next-step"' in first and "Next: add a source" in first
    assert f"/admin/sources/?project={shop.pk}#add-a-source" in first
    sources = staff_client.get(f"/admin/sources/?project={shop.pk}").content.decode()
    assert 'id="add-a-source"' in sources

    from ingestion.models import Source

    Source.objects.create(project=shop, kind="text", name="Notes")
    assert 'data-testid="next-step"' not in page(staff_client, shop)
