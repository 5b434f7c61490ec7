"""Relevance metrics and blind spots over a logged history of our own project."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback import selectors
from feedback.blind_spots import blind_spots

pytestmark = pytest.mark.django_db


def logged(project, question, *, topic="Billing", best=0.9, kept=1, days_ago=0, ms=100, error=""):  # noqa: ANN001, ANN201, PLR0913
    refused = kept == 0 and not error
    row = Interaction.objects.create(
        project=project, channel="widget", question=question, topic=topic,
        retrieval_query=f"({topic}) {question}", best_relevance=best, kept_count=kept,
        refused=refused, total_ms=ms, error=error,
    )  # fmt: skip
    Interaction.objects.filter(pk=row.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    return row


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop", threshold=0.5)
    logged(project, "How do I get a refund?", best=0.95, ms=100)
    logged(project, "Can I pay by invoice?", best=0.7, ms=300)
    logged(project, "Student discount?", best=0.2, kept=0, ms=50)
    logged(project, "student discount?", best=0.3, kept=0, ms=50, days_ago=1)
    logged(project, "Where is my API token?", topic="Tokens", best=None, kept=0, days_ago=1)
    logged(project, "Model down", topic="Tokens", best=None, kept=0, error="unavailable")
    logged(project, "Ancient question", best=0.1, kept=0, days_ago=400)
    return project


def test_relevance_by_day_counts_found_refused_and_latency_per_day(shop):
    days = selectors.relevance_by_day(project=shop, since=timezone.now() - timedelta(days=30))
    assert [d.questions for d in days] == [2, 4]
    today = days[-1]
    assert (today.found, today.refused, today.errors) == (2, 1, 1)
    assert today.avg_ms == pytest.approx(150)  # errors left out of latency
    assert today.found_share == pytest.approx(0.5)


def test_best_relevance_histogram_bins_scores_and_counts_the_unscored(shop):
    counts, unscored = selectors.best_relevance_histogram(
        project=shop, since=timezone.now() - timedelta(days=30)
    )
    assert counts == [0, 0, 1, 1, 0, 0, 0, 1, 0, 1]
    assert unscored == 2


def test_blind_spots_count_the_same_question_together_by_topic_most_frequent_first(shop):
    report = blind_spots(project=shop, since=timezone.now() - timedelta(days=30), below=0.5)
    assert [t.topic for t in report.topics] == ["Billing", "Tokens"]
    discount = report.topics[0].clusters[0]
    assert discount.times == 2 and discount.question == "Student discount?"  # the latest casing
    assert discount.best == pytest.approx(0.3)
    assert [c.question for c in report.topics[1].clusters] == [
        "Where is my API token?"
    ]  # no errors
    assert (report.clustered, report.total) == (3, 3)


def test_the_metrics_page_shows_the_figures(staff_client, shop):
    html = staff_client.get("/admin/metrics/", {"project": shop.pk, "days": "30"}).content.decode()
    assert "<html" in html
    assert '<strong data-testid="total">6</strong>' in html
    assert '<strong data-testid="found-share">33%</strong>' in html
    assert "<svg" in html and "Student" not in html


def test_a_topic_filter_narrows_the_figures_and_htmx_gets_the_partial(staff_client, shop):
    response = staff_client.get(
        "/admin/metrics/", {"project": shop.pk, "days": "30", "topic": "Tokens"},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    html = response.content.decode()
    assert "<html" not in html
    assert '<strong data-testid="total">2</strong>' in html


def test_days_are_counted_in_the_viewers_time_zone(staff_client, shop):
    staff_client.cookies["tz"] = "Pacific/Kiritimati"
    html = staff_client.get("/admin/metrics/", {"project": shop.pk}).content.decode()
    assert '<span data-testid="tz">Pacific/Kiritimati</span>' in html


@pytest.mark.parametrize(
    ("url", "params", "field", "message"),
    [
        ("/admin/metrics/", {"days": "12"}, "days", "Select a valid choice."),
        ("/admin/blind-spots/", {"below": "2"}, "below", "less than or equal to 1"),
        ("/admin/blind-spots/", {"below": "high"}, "below", "Enter a number."),
    ],
)
def test_bad_filters_show_the_error_next_to_the_field(
    staff_client, shop, url, params, field, message
):  # noqa: ANN001, PLR0913
    html = staff_client.get(url, {"project": shop.pk, **params}).content.decode()
    block = html.split(f'for="id_{field}"', 1)[1].split('<div class="field', 1)[0]
    assert message in block
    assert 'data-testid="total"' not in html and "blind-group" not in html


def test_the_blind_spots_page_links_each_question_to_the_sandbox(staff_client, shop):
    html = staff_client.get("/admin/blind-spots/", {"project": shop.pk}).content.decode()
    assert "2×" in html
    assert (
        f"/admin/sandbox/?project={shop.pk}&question=Where%20is%20my%20API%20token%3F&topic=Tokens"
    ) in html


def test_without_filters_the_page_shows_and_uses_the_last_30_days(staff_client, shop):
    html = staff_client.get("/admin/metrics/", {"project": shop.pk}).content.decode()
    assert '<option value="30" selected>' in html
    assert '<strong data-testid="total">6</strong>' in html


def test_measure_metrics_times_the_pages_and_leaves_nothing_behind(settings):
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["testserver"]
    before = Project.objects.count()
    out = StringIO()
    call_command("measure_metrics", questions=300, repeat=1, stdout=out)
    report = out.getvalue()
    assert "/admin/metrics/" in report and "at 300 questions" in report
    assert Project.objects.count() == before
    assert not get_user_model().objects.filter(username__startswith="bench-").exists()


@pytest.mark.parametrize(
    ("zone", "utc_times", "expected"),
    [
        # 03:00 UTC is still the evening before in New York.
        (
            "America/New_York",
            ["2026-01-10 03:00", "2026-01-10 05:30"],
            {"2026-01-09": 1, "2026-01-10": 1},
        ),  # noqa: E501
        # Kolkata is +5:30: 18:29 UTC is 23:59 there, 18:31 UTC already the next day.
        (
            "Asia/Kolkata",
            ["2026-01-10 18:29", "2026-01-10 18:31"],
            {"2026-01-10": 1, "2026-01-11": 1},
        ),  # noqa: E501
        ("UTC", ["2026-01-10 00:00", "2026-01-10 23:59"], {"2026-01-10": 2}),
    ],
)
def test_days_are_the_viewers_days_even_in_half_hour_zones(zone, utc_times, expected):
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    project = Project.objects.create(name="Zones")
    for stamp in utc_times:
        row = logged(project, "Q")
        at = datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
        Interaction.objects.filter(pk=row.pk).update(created_at=at)
    since = datetime(2026, 1, 1, tzinfo=UTC)
    with timezone.override(ZoneInfo(zone)):
        days = selectors.relevance_by_day(project=project, since=since)
    assert {d.day.isoformat(): d.questions for d in days} == expected


def test_the_by_day_table_paginates_newest_first(staff_client):
    project = Project.objects.create(name="Busy")
    for days_ago in range(40):
        logged(project, "Q", days_ago=days_ago)
    params = {"project": project.pk, "days": "90"}
    first = staff_client.get("/admin/metrics/", params).content.decode()
    assert "Page 1 of 2" in first
    oldest = (timezone.localdate() - timedelta(days=39)).strftime("%a, %b %-d")
    assert oldest not in first
    second = staff_client.get(
        "/admin/metrics/", {**params, "day_page": "2"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in second and oldest in second and "Page 2 of 2" in second
    previous = re.search(r'href="\?([^"]*day_page=1)"', second).group(1)
    assert f"project={project.pk}" in previous and "days=90" in previous  # filters kept
