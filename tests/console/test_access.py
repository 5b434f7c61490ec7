"""Who gets into the console at /admin/."""

from __future__ import annotations

import os
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db

# Every console URL by name, with the method it takes; pks come from the `objects` fixture.
ROUTES = [
    ("console-home", "get", None), ("console-sandbox", "get", None),
    ("console-sandbox-answer", "get", "token"), ("console-metrics", "get", None),
    ("console-blind-spots", "get", None), ("console-feedback", "get", None),
    ("console-feedback-export", "get", None), ("console-tuner", "get", None),
    ("console-projects", "get", None), ("console-project", "post", "project"),
    ("console-project-rotate", "post", "project"), ("console-sources", "get", None),
    ("console-project-new", "post", None), ("console-project-rotate-secret", "post", "project"),
    ("console-source-new", "post", "kind"), ("console-source", "get", "source"),
    ("console-source-sync", "post", "source"), ("console-source-edit", "post", "source"),
    ("console-source-delete", "post", "source"), ("console-documents", "get", "source"),
    ("console-document", "get", "document"),
    ("console-source-webhook-token", "post", "source"),
    ("console-source-webhook-revoke", "post", "source"),
    ("console-conversations", "get", None), ("console-conversation", "get", None),
    ("console-blind-spot-mark", "post", None), ("console-blind-spot-unmark", "post", "mark"),
    ("console-project-delete", "post", "project"), ("console-overview", "get", None),
    ("console-project-widget", "get", "project"), ("console-handoffs", "get", None),
    ("console-project-connect", "get", "project"), ("console-project-llms-txt", "post", "project"),
    ("console-curated", "get", None), ("console-curated-write", "post", None),
    ("console-curated-edit", "post", "curated"), ("console-curated-retire", "post", "curated"),
    ("console-checks", "get", None), ("console-check-new", "post", None),
    ("console-checks-run", "post", None), ("console-checks-threshold", "get", None),
    ("console-check-delete", "post", "check"),
    ("console-project-privacy", "post", "project"),
    ("console-project-slack", "post", "project"), ("console-project-slack-test", "post", "project"),
    ("console-project-discord", "post", "project"),
    ("console-project-discord-test", "post", "project"),
    ("console-project-discord-register", "post", "project"),
]  # fmt: skip


@pytest.fixture
def objects(db):  # noqa: ANN001, ANN201
    from assistant.models import Project
    from feedback.models import AnswerCheck, BlindSpotMark
    from ingestion.models import CuratedAnswer, Document, Source

    project = Project.objects.create(name="Access")
    source = Source.objects.create(project=project, kind="manual", name="Notes")
    document = Document.objects.create(source=source, external_id="x", title="X", content_hash="")
    mark = BlindSpotMark.objects.create(project=project, question="Q?", state="dismissed")
    curated_source = Source.objects.create(project=project, kind="curated", name="Curated")
    curated = CuratedAnswer.objects.create(source=curated_source, phrasings=["Q?"], answer="A.")
    check = AnswerCheck.objects.create(project=project, question="Q?", expect="refused")
    return {
        "curated": {"pk": curated.pk},
        "check": {"pk": check.pk},
        "mark": {"pk": mark.pk},
        "project": {"pk": project.pk},
        "source": {"pk": source.pk},
        "document": {"pk": document.pk},
        "kind": {"kind": "manual"},
        "token": {"token": "0" * 32},
        None: {},
    }


def _console_route_names(patterns, names=None):  # noqa: ANN001, ANN202
    names = set() if names is None else names
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):
            _console_route_names(pattern.url_patterns, names)
        elif pattern.name:
            names.add(pattern.name)
    return names


def test_every_console_route_is_checked_here():
    from assistant.console.urls import urlpatterns

    names = _console_route_names(urlpatterns) - {"console-login", "console-logout"}
    assert names == {name for name, _, _ in ROUTES}


@pytest.mark.parametrize(("name", "method", "args"), ROUTES)
def test_it_sends_anonymous_visitors_to_the_login_page(client, objects, name, method, args):
    response = getattr(client, method)(reverse(name, kwargs=objects[args]))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=")


@pytest.mark.parametrize(("name", "method", "args"), ROUTES)
def test_it_refuses_signed_in_people_who_are_not_staff(reader_client, objects, name, method, args):
    from ingestion.models import Source

    before = list(Source.objects.values_list("pk", "name", "config").order_by("pk"))
    assert getattr(reader_client, method)(reverse(name, kwargs=objects[args])).status_code == 403
    assert list(Source.objects.values_list("pk", "name", "config").order_by("pk")) == before


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


def test_a_login_without_next_lands_on_the_console(client, staff):
    page = client.get("/admin/login/")
    # Where to get an account, without shell commands or settings for whoever opens the page.
    assert b"Whoever runs this server creates them" in page.content
    assert b"manage.py" not in page.content and b"ASKDOCS_" not in page.content
    response = client.post(
        "/admin/login/", {"username": "ada", "password": "pw-ada-123", "next": ""}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert client.get(response["Location"], follow=True).status_code == 200


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
    response = client.post("/admin/login/", {"username": "ops", "password": "s3cret-pass-42"})
    assert response.status_code == 302
    assert client.get("/admin/sandbox/").status_code == 200


def test_createadmin_without_a_password_only_explains(monkeypatch, django_user_model):
    monkeypatch.delitem(os.environ, "ASKDOCS_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("createadmin", "--url", "http://10.0.0.5:9000/admin/", stdout=out)
    assert "ASKDOCS_ADMIN_PASSWORD" in out.getvalue()
    assert "http://10.0.0.5:9000/admin/" in out.getvalue()
    assert "HOST" not in out.getvalue().replace("ASKDOCS", "")
    assert not django_user_model.objects.exists()


def test_createadmin_says_nothing_once_a_staff_user_exists(monkeypatch, staff):
    monkeypatch.delitem(os.environ, "ASKDOCS_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("createadmin", "--url", "http://127.0.0.1:8000/admin/", stdout=out)
    assert out.getvalue() == ""


def _fail(client, url: str, username: str, times: int) -> None:  # noqa: ANN001
    """Wrong passwords: the login page again with its error, until the 5th locks."""
    for attempt in range(1, times + 1):
        response = client.post(url, {"username": username, "password": "wrong"})
        assert response.status_code == (429 if attempt >= 5 else 200)


@pytest.mark.parametrize("url", ["/admin/login/", "/django-admin/login/"])
def test_five_wrong_passwords_lock_the_login_even_for_the_right_one(client, staff, url):
    _fail(client, url, "ada", 5)
    response = client.post(url, {"username": "ada", "password": "pw-ada-123"})
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed logins" in page
    assert "After 5 wrong passwords for <strong>ada</strong>" in page
    assert "locked for 15 minutes" in page
    assert "someone with access to the server to unlock it" in page
    assert "manage.py" not in page
    assert client.get("/admin/sandbox/").status_code == 302  # nobody is logged in


def test_the_lock_is_for_that_username_only(client, staff, django_user_model):
    django_user_model.objects.create_user("grace", password="pw-grace-123", is_staff=True)
    _fail(client, "/admin/login/", "ada", 5)
    response = client.post("/admin/login/", {"username": "grace", "password": "pw-grace-123"})
    assert response.status_code == 302


def test_fewer_failures_then_the_right_password_log_in(client, staff):
    _fail(client, "/admin/login/", "ada", 4)
    response = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"})
    assert response.status_code == 302
    assert client.get("/admin/sandbox/").status_code == 200


def test_axes_reset_username_unlocks(client, staff):
    _fail(client, "/admin/login/", "ada", 5)
    assert (
        client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"}).status_code
        == 429
    )
    out = StringIO()
    call_command("axes_reset_username", "ada", stdout=out)
    response = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"})
    assert response.status_code == 302
    assert client.get("/admin/sandbox/").status_code == 200


def test_many_addresses_guessing_one_username_lock_it_at_the_per_username_bound(
    client, staff, settings
):
    """30 addresses with 4 guesses each stayed under the per-address lock; the username's
    failures from every address together are bounded too (20 by default)."""
    assert settings.ASKDOCS_LOGIN_FAILURE_LIMIT_PER_USERNAME == 20
    for n in range(5):  # 5 addresses x 4 guesses = 20: each address under its own limit
        for _ in range(4):
            response = client.post("/admin/login/", {"username": "ada", "password": "wrong"},
                                   REMOTE_ADDR=f"198.51.100.{n}")  # fmt: skip
            assert response.status_code == 200
    right = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                        REMOTE_ADDR="203.0.113.9")  # fmt: skip
    assert right.status_code == 429  # the right password too, from a new address
    other = client.post("/admin/login/", {"username": "grace", "password": "wrong"},
                        REMOTE_ADDR="203.0.113.9")  # fmt: skip
    assert other.status_code == 200  # another username is not locked
    call_command("axes_reset_username", "ada", stdout=StringIO())
    again = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                        REMOTE_ADDR="203.0.113.9")  # fmt: skip
    assert again.status_code == 302


def test_a_stranger_cannot_lock_the_staff_out_of_an_address_they_logged_in_from(client, staff):
    """20 wrong passwords from anywhere locked `admin` for everyone for 15 minutes."""
    known = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                        REMOTE_ADDR="192.0.2.10")  # fmt: skip
    assert known.status_code == 302
    client.logout()
    for n in range(5):  # 20 failures from strangers: the per-username bound is reached
        for _ in range(4):
            client.post("/admin/login/", {"username": "ada", "password": "wrong"},
                        REMOTE_ADDR=f"198.51.100.{n}")  # fmt: skip
    stranger = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                           REMOTE_ADDR="203.0.113.9")  # fmt: skip
    assert stranger.status_code == 429
    back = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                       REMOTE_ADDR="192.0.2.10")  # fmt: skip
    assert back.status_code == 302
    assert client.get("/admin/sandbox/").status_code == 200


def test_a_few_failures_from_several_addresses_do_not_lock_the_username(client, staff):
    for n in range(4):
        client.post("/admin/login/", {"username": "ada", "password": "wrong"},
                    REMOTE_ADDR=f"198.51.100.{n}")  # fmt: skip
    right = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"},
                        REMOTE_ADDR="203.0.113.9")  # fmt: skip
    assert right.status_code == 302
