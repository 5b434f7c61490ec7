"""`manage.py project_key`: the key's hint, or a new secret key printed once, which then
authenticates (through the intake, as the MCP door does) while the old one no longer does."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assistant.ask import mcp_intake
from assistant.ask.intake import Caller
from assistant.errors import IntakeError
from assistant.models import Project
from tests.conftest import secret_of

pytestmark = pytest.mark.django_db


def project_key(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("project_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def authorises(secret: str) -> Project | None:
    try:
        return mcp_intake.authorise_mcp(Caller(key="", bearer=secret))
    except IntakeError:
        return None


def test_it_shows_the_hint_and_never_the_key():
    project = Project.objects.create(name="Docs")
    secret = secret_of(project)

    out, _ = project_key("--project", "Docs")

    assert project.secret_key_hint in out and project.public_key in out
    assert secret not in out


def test_rotating_prints_a_new_key_alone_that_works_and_the_old_one_stops():
    project = Project.objects.create(name="Docs")
    old = secret_of(project)

    out, err = project_key("--project", "Docs", "--rotate")

    new = out.strip()
    assert new.startswith("sk_") and new != old and "\n" not in new
    assert "shown only now" in err and new not in err
    assert authorises(new) == project
    assert authorises(old) is None


def test_an_unknown_project_is_a_clear_error():
    Project.objects.create(name="Docs")

    with pytest.raises(CommandError, match="No project named 'Nope' .*Docs"):
        project_key("--project", "Nope")
