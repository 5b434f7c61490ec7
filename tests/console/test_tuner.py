"""The threshold tuner replays stored scores against readers' votes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.models import Feedback
from feedback.tuner import threshold_replay

pytestmark = pytest.mark.django_db


def asked(project, best, vote=None, error=""):  # noqa: ANN001, ANN201
    row = Interaction.objects.create(
        project=project, channel="widget", question=f"q {best}", retrieval_query="q",
        best_relevance=best, kept_count=int(best is not None and best >= 0.5),
        candidates=[{"relevance": best}] if best is not None else [], error=error,
    )  # fmt: skip
    if vote is not None:
        Feedback.objects.create(interaction=row, client_id=f"c-{row.pk:08d}", vote=vote)
    return row


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop", threshold=0.5)
    asked(project, 0.95, vote=1)
    asked(project, 0.55, vote=-1)
    asked(project, 0.35, vote=1)
    asked(project, 0.05)
    asked(project, None, vote=-1)
    asked(project, 0.99, error="unavailable")  # not a real answer: left out
    return project


def test_it_counts_answered_and_refused_at_each_threshold(shop):
    replays = {r.threshold: r for r in threshold_replay(
        project=shop, since=timezone.now() - timedelta(days=1))}  # fmt: skip
    assert list(replays) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert [(replays[t].answered, replays[t].refused) for t in (0.1, 0.4, 0.5, 0.6, 0.9)] == [
        (3, 2), (2, 3), (2, 3), (1, 4), (1, 4),
    ]  # fmt: skip


def test_it_measures_agreement_with_the_thumbs(shop):
    replays = {r.threshold: r for r in threshold_replay(
        project=shop, since=timezone.now() - timedelta(days=1))}  # fmt: skip
    at_half = replays[0.5]
    assert (at_half.liked_answered, at_half.liked_refused) == (1, 1)
    assert (at_half.disliked_answered, at_half.disliked_refused) == (1, 1)  # None counts refused
    assert at_half.agreement == pytest.approx(0.5)
    at_high = replays[0.6]
    assert at_high.agreement == pytest.approx(0.75)  # the disliked 0.55 answer is refused too


def test_the_page_marks_the_current_threshold_and_htmx_gets_the_partial(staff_client, shop):
    html = staff_client.get("/admin/tuner/", {"project": shop.pk}).content.decode()
    assert "<html" in html
    assert '<tr class="current" data-threshold="0.5">' in html
    partial = staff_client.get(
        "/admin/tuner/", {"project": shop.pk, "days": "7"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in partial and 'data-threshold="0.9"' in partial


def test_a_bad_period_shows_the_error_next_to_the_field(staff_client, shop):
    html = staff_client.get("/admin/tuner/", {"project": shop.pk, "days": "-1"}).content.decode()
    block = html.split('for="id_days"', 1)[1].split('<div class="field', 1)[0]
    assert "Select a valid choice." in block
    assert "data-threshold" not in html
