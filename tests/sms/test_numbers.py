"""A project's SMS number: E.164, unique among projects, optional, editable in the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from assistant.models import Project

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("number", ["5551234567", "+0551234567", "+1 555 123 4567", "+1555"])
def test_it_refuses_a_number_that_is_not_e164(number):
    with pytest.raises(ValidationError) as error:
        Project(name="N", sms_number=number).full_clean()
    assert "sms_number" in error.value.message_dict


def test_two_projects_cannot_share_a_number_but_many_can_have_none():
    Project.objects.create(name="A", sms_number="+15550100201")
    Project.objects.create(name="B")
    Project.objects.create(name="C")
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(name="D", sms_number="+15550100201")


def test_the_admin_sets_a_project_number(client):
    admin = User.objects.create_superuser("admin", "admin@example.test", "pw-for-tests-only")
    client.force_login(admin)
    project = Project.objects.create(name="Admin-set")
    page = client.get(f"/django-admin/assistant/project/{project.pk}/change/")
    assert page.status_code == 200 and b'name="sms_number"' in page.content
    listing = client.get("/django-admin/assistant/smsmessage/")
    assert listing.status_code == 200
