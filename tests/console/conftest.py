from __future__ import annotations

import pytest


@pytest.fixture
def staff(db, django_user_model):  # noqa: ANN001, ANN201
    return django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)


@pytest.fixture
def staff_client(client, staff):  # noqa: ANN001, ANN201
    client.force_login(staff)
    return client


@pytest.fixture
def reader_client(client, django_user_model):  # noqa: ANN001, ANN201
    reader = django_user_model.objects.create_user("bob", password="pw-bob-123")
    client.force_login(reader)
    return client
