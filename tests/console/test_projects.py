"""Project settings, key rotation and the widget snippet."""

from __future__ import annotations

import pytest

from assistant.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    return Project.objects.create(name="Shop", allowed_origins=["https://shop.example"])


def form_data(project, **changes):  # noqa: ANN001, ANN201
    data = {
        "name": project.name, "allowed_origins": "\n".join(project.allowed_origins),
        "threshold": project.threshold, "num_candidates": project.num_candidates,
        "rerank_top": project.rerank_top, "max_kept": project.max_kept,
        "generator": project.generator,
    }  # fmt: skip
    data.update(changes)
    return data


def test_the_list_and_the_page_show_the_key_and_the_snippet(staff_client, shop):
    assert b"Shop" in staff_client.get("/admin/projects/").content
    html = staff_client.get(f"/admin/projects/{shop.pk}/").content.decode()
    assert (
        f'&lt;script src="http://testserver/static/widget/widget.js" '
        f'data-project="{shop.public_key}"'
    ) in html


def test_saving_normalises_origins_and_applies_the_settings(staff_client, shop):
    response = staff_client.post(
        f"/admin/projects/{shop.pk}/",
        form_data(shop, allowed_origins="HTTPS://Shop.Example:443/\nhttp://127.0.0.1:8000",
                  threshold="0.35", rerank_top="8"),
    )  # fmt: skip
    assert response.status_code == 302
    shop.refresh_from_db()
    assert shop.allowed_origins == ["https://shop.example", "http://127.0.0.1:8000"]
    assert shop.threshold == 0.35
    assert shop.rerank_top == 8
    assert b"Project saved." in staff_client.get(response["Location"]).content


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"allowed_origins": "https://ok.example\nhttps://bad.example/path"}, "allowed_origins",
         "must be an origin only"),
        ({"threshold": "1.5"}, "threshold", "less than or equal to 1"),
        ({"max_kept": "0"}, "max_kept", "greater than or equal to 1"),
        ({"rerank_top": "0"}, "rerank_top", "greater than or equal to 1"),
        ({"name": ""}, "name", "This field is required."),
        ({"memory_threshold": "1.2"}, "memory_threshold", "less than or equal to 1"),
    ],
)  # fmt: skip
def test_bad_input_shows_the_error_next_to_the_field_and_changes_nothing(
    staff_client, shop, changes, field, message
):
    before = Project.objects.values().get(pk=shop.pk)
    response = staff_client.post(f"/admin/projects/{shop.pk}/", form_data(shop, **changes))
    assert response.status_code == 200
    html = response.content.decode()
    block = html.split(f'for="id_{field}"', 1)[1].split('<div class="field', 1)[0]
    assert message in block
    assert Project.objects.values().get(pk=shop.pk) == before


def test_rotating_the_key_issues_a_new_one_and_htmx_gets_the_snippet(staff_client, shop):
    old = shop.public_key
    response = staff_client.post(f"/admin/projects/{shop.pk}/rotate-key/", HTTP_HX_REQUEST="true")
    shop.refresh_from_db()
    assert shop.public_key != old and shop.public_key.startswith("pk_")
    html = response.content.decode()
    assert "<html" not in html and f'data-project="{shop.public_key}"' in html


def test_rotating_without_javascript_redirects_back(staff_client, shop):
    response = staff_client.post(f"/admin/projects/{shop.pk}/rotate-key/")
    assert response.status_code == 302 and response["Location"] == f"/admin/projects/{shop.pk}/"


def test_rotating_needs_a_post_and_staff(client, reader_client, shop):
    url = f"/admin/projects/{shop.pk}/rotate-key/"
    old = shop.public_key
    assert reader_client.post(url).status_code == 403
    reader_client.logout()
    assert client.post(url).status_code == 302  # to the login page
    shop.refresh_from_db()
    assert shop.public_key == old


def test_rotating_is_refused_on_get(staff_client, shop):
    assert staff_client.get(f"/admin/projects/{shop.pk}/rotate-key/").status_code == 405


def test_the_rerank_cost_is_one_measured_figure_in_the_console_and_the_manual(staff_client, demo):
    import re
    from pathlib import Path

    from assistant.rag.types import RERANK_MS_PER_CHUNK

    root = Path(__file__).resolve().parents[2]
    manual = "".join(p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")])
    assert set(re.findall(r"about (\d+) (?:CPU-)?ms", manual)) == {str(RERANK_MS_PER_CHUNK)}
    page = staff_client.get(f"/admin/projects/{demo.pk}/").content.decode()
    assert f"about {RERANK_MS_PER_CHUNK} ms" in page


def test_the_memory_settings_are_saved_and_an_empty_threshold_means_the_calibrated_one(
    staff_client, shop
):
    url = f"/admin/projects/{shop.pk}/"
    staff_client.post(url, form_data(shop, memory_threshold="0.7", memory_learns_statements="on"))
    shop.refresh_from_db()
    assert shop.memory_threshold == 0.7 and shop.memory_learns_statements
    staff_client.post(url, form_data(shop, memory_threshold=""))
    shop.refresh_from_db()
    assert shop.memory_threshold is None and not shop.memory_learns_statements


def test_custom_instructions_are_saved_within_their_bound_and_reach_the_prompt_after_the_rules(
    staff_client, shop
):
    from assistant.rag.types import Question
    from assistant.rag.write.prompting import MAX_INSTRUCTIONS_CHARS, build_prompt

    url = f"/admin/projects/{shop.pk}/"
    too_long = "x" * (MAX_INSTRUCTIONS_CHARS + 1)
    response = staff_client.post(url, form_data(shop, custom_instructions=too_long))
    assert response.status_code == 200 and b"at most" in response.content
    staff_client.post(url, form_data(shop, custom_instructions="Call the product Shopfront."))
    shop.refresh_from_db()
    assert shop.custom_instructions == "Call the product Shopfront."

    system = build_prompt(Question("q"), [], instructions=shop.custom_instructions).system
    assert system.index("Call the product Shopfront.") > system.index("Never answer from")
    assert "never change the rules above" in system
