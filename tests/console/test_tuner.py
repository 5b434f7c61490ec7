"""The threshold tuner replays stored scores against readers' votes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.models import Feedback
from feedback.tuner import advised_threshold, threshold_replay

pytestmark = pytest.mark.django_db


def asked(project, best, vote=None, error="", checked_out=False):  # noqa: ANN001, ANN201
    """A logged question as the pipeline writes it at the project's threshold of 0.5;
    `checked_out`: passages passed the gate but the answerability check refused."""
    passed = best is not None and best >= 0.5
    row = Interaction.objects.create(
        project=project, channel="widget", question=f"q {best}", retrieval_query="q",
        best_relevance=best, kept_count=int(passed),
        refused=not passed or checked_out,
        answerability={"answerable": False, "score": 0.1} if checked_out else {},
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
    asked(project, 0.35, vote=1)  # a refusal the reader liked
    asked(project, 0.05)
    asked(project, None, vote=-1)  # a refusal the reader wanted an answer to
    asked(project, 0.8, vote=-1, checked_out=True)  # refused by the answerability check
    asked(project, 0.99, error="unavailable")  # not a real answer: left out
    return project


def replayed(project):  # noqa: ANN001, ANN201
    since = timezone.now() - timedelta(days=1)
    return {r.threshold: r for r in threshold_replay(project=project, since=since)}


def test_it_counts_answered_and_refused_at_each_threshold(shop):
    replays = replayed(shop)
    assert list(replays) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    # The answerability check's refusal stays a refusal at every threshold.
    assert [(replays[t].answered, replays[t].refused) for t in (0.1, 0.4, 0.5, 0.6, 0.9)] == [
        (3, 3), (2, 4), (2, 4), (1, 5), (1, 5),
    ]  # fmt: skip


def test_the_current_row_counts_every_refusal_of_the_log(db):
    project = Project.objects.create(name="Log", threshold=0.5)
    for i in range(30):
        best = [0.9, 0.7, 0.2][i % 3]  # 10 under the gate
        asked(project, best, checked_out=i in (0, 1))  # 2 more by the answerability check
    log = Interaction.objects.filter(project=project)
    current = replayed(project)[0.5]
    assert (current.answered, current.refused) == (18, 12)
    assert current.refused == log.filter(refused=True).count()


def test_votes_are_scored_against_what_the_reader_judged(shop):
    replays = replayed(shop)
    at_half = replays[0.5]
    assert (at_half.liked_answered, at_half.liked_refused) == (1, 0)
    assert (at_half.disliked_answered, at_half.disliked_refused) == (1, 0)
    # Thumbs-down on refusals (the None and the answerability one) agree with no threshold.
    assert (at_half.refusal_disliked, at_half.refusal_answered) == (2, 0)
    assert at_half.judged == 2 and at_half.agreement == pytest.approx(1 / 2)
    at_high = replays[0.6]  # the disliked 0.55 answer is refused too: agreement
    assert at_high.agreement == pytest.approx(2 / 2)
    at_top = replays[0.9]  # the liked 0.95 answer is kept
    assert at_top.agreement == pytest.approx(2 / 2)
    at_low = replays[0.3]  # the liked refusal (0.35) would be answered: nobody read that
    assert (at_low.refusal_answered, at_low.judged) == (1, 2)
    assert at_low.agreement == at_half.agreement  # no answer it adds was judged
    assert len({r.agreement for r in replays.values()}) > 1


def test_with_few_votes_the_page_says_so_and_with_enough_it_advises(staff_client, shop):
    html = staff_client.get("/admin/tuner/", {"project": shop.pk}).content.decode()
    assert "Too few votes to advise." in html
    assert advised_threshold(list(replayed(shop).values()), current=0.5) is None
    for _ in range(12):  # liked answers scored 0.72, disliked ones 0.53
        asked(shop, 0.72, vote=1)
        asked(shop, 0.53, vote=-1)
    replays = list(replayed(shop).values())
    advice = advised_threshold(replays, current=0.5)
    assert advice is not None and advice.enough_votes
    assert advice.threshold == 0.6  # refuses the disliked answers, keeps the liked ones
    html = staff_client.get("/admin/tuner/", {"project": shop.pk}).content.decode()
    assert "Too few votes to advise." not in html
    assert "Readers' votes agree best with a threshold of 0.6" in html


def test_among_equal_thresholds_the_advice_keeps_the_one_in_use(db):
    project = Project.objects.create(name="Liked", threshold=0.5)
    for _ in range(20):  # every vote on an answer scored 0.95, liked: 0.1 ... 0.9 all agree
        asked(project, 0.95, vote=1)
    asked(project, 0.2, vote=-1)  # a disliked refusal: it scores no threshold
    replays = list(replayed(project).values())
    assert {r.agreement for r in replays} == {1.0}
    assert advised_threshold(replays, current=0.5).threshold == 0.5
    assert advised_threshold(replays, current=0.35).threshold == 0.3


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
