"""The project page's privacy settings: masking on or off, a project's own patterns (checked
before they are stored), retention periods."""

from __future__ import annotations

import pytest

from assistant.models import Project
from tests.console.test_projects import form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db) -> Project:  # noqa: ANN001
    return Project.objects.create(name="Shop", allowed_origins=["https://shop.example"])


def test_a_new_project_masks_personal_data_and_keeps_until_erased(shop):
    assert shop.mask_personal_data is True and shop.mask_patterns == []
    assert shop.keep_conversations_days == 0


def test_patterns_and_periods_are_saved_from_the_project_page(staff_client, shop):
    response = staff_client.post(
        f"/admin/projects/{shop.pk}/",
        form_data(shop, mask_personal_data="on", mask_patterns="account: ACC-\\d{8}\n",
                  keep_conversations_days="90", keep_feedback_comments_days="",
                  keep_handoffs_days="30", keep_memory_days="365"),
    )  # fmt: skip
    assert response.status_code == 302
    shop.refresh_from_db()
    assert shop.mask_patterns == [{"label": "account", "pattern": "ACC-\\d{8}"}]
    assert (shop.keep_conversations_days, shop.keep_feedback_comments_days) == (90, 0)
    assert (shop.keep_handoffs_days, shop.keep_memory_days) == (30, 365)
    page = staff_client.get(f"/admin/projects/{shop.pk}/").content.decode()
    assert "account: ACC-\\d{8}" in page


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"mask_patterns": "account: (a+)+$"}, "mask_patterns", "takes too long"),
        ({"mask_patterns": "account: ACC-(\\d"}, "mask_patterns", "not a regular expression"),
        ({"mask_patterns": "phone: \\d+"}, "mask_patterns", "built in"),
        ({"keep_memory_days": "4000"}, "keep_memory_days", "less than or equal to 3650"),
    ],
)
def test_bad_privacy_settings_are_refused_next_to_their_field(
    staff_client, shop, changes, field, message
):
    response = staff_client.post(f"/admin/projects/{shop.pk}/", form_data(shop, **changes))
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    shop.refresh_from_db()
    assert shop.mask_patterns == [] and shop.keep_memory_days == 0
