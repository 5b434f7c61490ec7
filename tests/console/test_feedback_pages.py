"""The feedback list, its filters and the CSV export."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.models import Feedback

pytestmark = pytest.mark.django_db


def voted(project, question, vote, *, topic="Billing", channel="widget", comment="", days_ago=0):  # noqa: ANN001, ANN201, PLR0913
    asked = Interaction.objects.create(
        project=project, channel=channel, question=question, topic=topic,
        retrieval_query=question, answer=f"Answer to {question}",
        sources=[{"n": 1, "title": "Refunds", "url": "https://help.example/refunds"}],
    )  # fmt: skip
    row = Feedback.objects.create(
        interaction=asked, client_id="client-12345", vote=vote, comment=comment
    )
    Feedback.objects.filter(pk=row.pk).update(updated_at=timezone.now() - timedelta(days=days_ago))
    return row


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop")
    voted(project, "How do I get a refund?", 1)
    voted(project, "Student discount?", -1, comment='=HYPERLINK("http://evil")')
    voted(project, "Where is my token?", -1, topic="Tokens", channel="sms", days_ago=3)
    other = Project.objects.create(name="Elsewhere")
    voted(other, "Not ours", -1)
    return project


def test_it_lists_votes_with_question_answer_sources_and_comment(staff_client, shop):
    html = staff_client.get("/admin/feedback/", {"project": shop.pk}).content.decode()
    assert "<html" in html
    assert "3 matching" in html
    assert "Answer to Student discount?" in html and "https://help.example/refunds" in html
    assert "Not ours" not in html
    assert '<strong data-testid="up-rate">33%</strong>' in html


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"vote": "down"}, {"Student discount?", "Where is my token?"}),
        ({"vote": "up"}, {"How do I get a refund?"}),
        ({"vote": "up", "channel": "sms"}, set()),
        ({"topic": "Tokens"}, {"Where is my token?"}),
        ({"channel": "sms"}, {"Where is my token?"}),
        ({"since": (timezone.localdate() - timedelta(days=1)).isoformat()},
         {"How do I get a refund?", "Student discount?"}),
    ],
)  # fmt: skip
def test_the_filters_narrow_the_list(staff_client, shop, filters, expected):
    response = staff_client.get(
        "/admin/feedback/", {"project": shop.pk, **filters}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert "<html" not in html  # htmx gets the partial
    shown = {q for q in ("How do I get a refund?", "Student discount?", "Where is my token?")
             if f"<strong>{q}</strong>" in html}  # fmt: skip
    assert shown == expected
    assert ("No feedback matches these filters." in html) == (not expected)


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"vote": "sideways"}, "vote", "Select a valid choice."),
        ({"since": "yesterday"}, "since", "Enter a valid date."),
        ({"since": "2026-05-02", "until": "2026-05-01"}, "until", "before the start date"),
    ],
)
def test_bad_filters_show_the_error_next_to_the_field(staff_client, shop, params, field, message):
    html = staff_client.get("/admin/feedback/", {"project": shop.pk, **params}).content.decode()
    block = html.split(f'for="id_{field}"', 1)[1].split('<div class="field', 1)[0]
    assert message in block
    assert "matching" not in html


def test_the_csv_export_follows_the_filters_and_defuses_formulas(staff_client, shop):
    response = staff_client.get(
        "/admin/feedback/export.csv", {"project": shop.pk, "vote": "down", "topic": "Billing"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["date", "vote", "comment"]
    assert len(rows) == 2
    assert rows[1][1] == "down"
    assert rows[1][2] == '\'=HYPERLINK("http://evil")'
    assert rows[1][5] == "Student discount?"
    assert rows[1][7] == "https://help.example/refunds"


def test_a_bad_export_filter_is_refused_with_the_form(staff_client, shop):
    response = staff_client.get("/admin/feedback/export.csv", {"project": shop.pk, "vote": "x"})
    assert response.status_code == 400
    assert b"Select a valid choice." in response.content


def test_the_list_paginates(staff_client, shop):
    for n in range(30):
        voted(shop, f"Bulk question {n}", 1)
    html = staff_client.get("/admin/feedback/", {"project": shop.pk}).content.decode()
    assert "Page 1 of 2" in html
    second = staff_client.get("/admin/feedback/", {"project": shop.pk, "page": "2"})
    assert b"Page 2 of 2" in second.content


def test_a_day_at_zero_percent_is_drawn_not_left_blank():
    import re

    from django.template.loader import render_to_string

    from feedback.charts import bar_chart

    chart = bar_chart([("Nov 01", 0.0), ("Nov 02", 0.5)], top=1, percent=True)
    html = render_to_string("console/_bar_chart.html", {"chart": chart, "title": "Thumbs up"})
    rects = re.findall(r'<rect [^>]*height="([0-9.]+)"[^>]*>\s*<title>([^<]*)</title>', html)
    assert [title for _, title in rects] == ["Nov 01: 0%", "Nov 02: 50%"]
    zero, half = (float(height) for height, _ in rects)
    assert zero >= 2 and half > zero
    assert html.count('class="zero"') == 1


def test_a_row_renders_the_answers_markdown_safely_counts_the_sources_shown_and_links_out(
    staff_client, shop
):
    asked = Interaction.objects.create(
        project=shop, channel="widget", question="How do I revoke a token?", topic="Tokens",
        retrieval_query="q", conversation_id="conv-1",
        answer="Click **Revoke** [2]. <script>alert(1)</script>",
        sources=[{"n": n, "title": f"Page {n}", "url": f"https://help.example/{n}"}
                 for n in (1, 2, 3)],
    )  # fmt: skip
    Feedback.objects.create(interaction=asked, client_id="client-1", vote=-1)
    html = staff_client.get("/admin/feedback/", {"project": shop.pk}).content.decode()
    row = html.split("How do I revoke a token?", 1)[1].split("</tr>", 1)[0]
    assert "<strong>Revoke</strong>" in row and "**Revoke**" not in row
    assert "<script>" not in row
    assert "1 source shown" in row  # the one the answer cites, as the reader saw it
    assert "https://help.example/2" in row and "https://help.example/1" not in row
    assert "/admin/conversations/view/?project=" in row and "id=conv-1" in row
    assert "question=How%20do%20I%20revoke%20a%20token%3F&topic=Tokens" in row
