"""The project page's privacy settings: masking on or off, a project's own patterns (checked
before they are stored), retention periods."""

from __future__ import annotations

import json

import pytest

from assistant.memory.models import UserFact
from assistant.memory.services import memory_remember
from assistant.models import PrivacyAudit, Project
from assistant.privacy.retention import retention_run
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


def test_the_project_page_says_what_is_masked_and_kept_for_how_long(staff_client, shop):
    shop.keep_conversations_days = 90
    shop.mask_patterns = [{"label": "account", "pattern": "ACC-\\d{8}"}]
    shop.save()
    retention_run(actor="test")
    html = staff_client.get(f"/admin/projects/{shop.pk}/").content.decode()
    card = html[html.index('data-testid="privacy"') :]
    assert "card numbers (Luhn-checked)" in card and "your own kinds: account" in card
    assert "<td>90 days</td>" in card and "until erased" in card
    assert "Last retention run" in card and "nothing was past its period" in card
    shop.mask_personal_data = False
    shop.save()
    html = staff_client.get(f"/admin/projects/{shop.pk}/").content.decode()
    assert "<strong>not masked</strong>" in html


def test_staff_export_and_erase_one_persons_data_from_the_console(staff_client, shop, staff):
    key = "visitor:" + "a" * 20
    memory_remember(project=shop, user_key=key, text="I run the Lisbon office")
    page = f"/admin/projects/{shop.pk}/privacy/"
    assert staff_client.get(page).status_code == 200

    exported = staff_client.post(page, {"who": key, "action": "export"})
    assert exported["Content-Type"] == "application/json"
    assert json.loads(exported.content)["memory_facts"][0]["text"] == "I run the Lisbon office"

    refused = staff_client.post(page, {"who": key, "action": "erase"})
    assert "Tick this box" in refused.content.decode() and UserFact.objects.exists()
    unknown = staff_client.post(page, {"who": "Lisbon", "action": "export"})
    assert "E.164" in unknown.content.decode()

    erased = staff_client.post(page, {"who": key, "action": "erase", "confirm": "on"}, follow=True)
    assert "Erased: facts: 1." in erased.content.decode()
    assert not UserFact.objects.exists()
    audits = list(PrivacyAudit.objects.values_list("action", "actor", "identifier_kind"))
    actor = f"staff:{staff.pk}"
    assert audits == [("erase", actor, "visitor"), ("export", actor, "visitor")]


def test_readers_cannot_reach_the_privacy_requests(reader_client, shop):
    assert reader_client.get(f"/admin/projects/{shop.pk}/privacy/").status_code == 403
