"""Curated answers in the console: written from a logged answer (its question, topic, the
visitor's comment and the passages it found offered), listed with what each did, edited,
retired at once, warned about when a section they rest on changes; staff only. And the same
from `manage.py curated_answer`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assistant.demo import DOCS_DIR, DOCS_URL
from feedback.models import Feedback
from ingestion.curated import curated_answer_save, sections_of
from ingestion.models import Chunk, CuratedAnswer, Document, Source
from ingestion.services import document_upsert
from tests.asking import ask
from tests.curated_fixtures import ANSWER, CHEAPER, LINK, plans_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(db):  # noqa: ANN001, ANN201
    return plans_project("Acme")


def refused_turn(project):  # noqa: ANN001, ANN201
    """The demo visitor's refused question with a thumbs-down and a comment."""
    result = ask(project=project, question=CHEAPER, topic="Billing", channel="widget")
    assert result.refused
    Feedback.objects.create(
        interaction_id=project.interactions.get(answer_id=result.answer_id).pk,
        client_id="visitor-1", vote=-1, comment="The plans page says I can downgrade any time!",
    )  # fmt: skip
    return result


def test_a_lead_writes_the_answer_from_a_refused_turn_and_it_is_served_at_once(staff_client, acme):
    turn = refused_turn(acme)
    page = staff_client.get("/admin/curated/write/", {"project": acme.pk, "answer": turn.answer_id})
    assert page.status_code == 200
    html = page.content.decode()
    assert CHEAPER in html and "I can downgrade any time!" in html  # the visitor's comment
    assert "Changing plan" in html  # a passage it found, offered as a section it rests on
    changing = Chunk.objects.get(document__source__project=acme, heading_path="Changing plan")

    saved = staff_client.post(
        f"/admin/curated/write/?project={acme.pk}",
        {"project": acme.pk, "phrasings": f"{CHEAPER}\nCan I downgrade mid-cycle?",
         "answer": ANSWER, "url": LINK, "topic": "Billing", "rests_on": [changing.vector_id],
         "from_answer": turn.answer_id},
    )  # fmt: skip
    assert saved.status_code == 302

    curated = CuratedAnswer.objects.get()
    assert curated.phrasings == [CHEAPER, "Can I downgrade mid-cycle?"]
    assert curated.rests_on == [
        {"vector_id": changing.vector_id, "title": changing.title, "url": changing.url}
    ]
    assert curated.from_answer_id == turn.answer_id and curated.written_by is not None
    again = ask(project=acme, question=CHEAPER, topic="Billing")
    assert not again.refused and "next billing period" in again.answer
    assert again.sources[0]["curated"] is True and again.sources[0]["url"] == LINK
    # An answer it gave gets a thumbs-down: the list shows the count and the last thumbs.
    Feedback.objects.create(
        interaction=acme.interactions.get(answer_id=again.answer_id),
        client_id="visitor-2", vote=-1, comment="Not what I asked",
    )  # fmt: skip
    listing = staff_client.get("/admin/curated/", {"project": acme.pk}).content.decode()
    assert CHEAPER in listing and "Not what I asked" in listing
    assert 'data-testid="answered-count">1<' in listing


def test_the_form_refuses_a_link_that_is_not_http_and_stores_nothing(staff_client, acme):
    response = staff_client.post(
        f"/admin/curated/write/?project={acme.pk}",
        {"project": acme.pk, "phrasings": CHEAPER, "answer": ANSWER, "url": "javascript:alert(1)"},
    )
    assert response.status_code == 200
    assert "only http and https links" in response.content.decode()
    assert not CuratedAnswer.objects.exists()
    assert not Source.objects.filter(
        project=acme, kind=Source.Kind.CURATED, documents__isnull=False
    ).exists()


@pytest.mark.parametrize(
    ("url", "because"),
    [("http://exa mple.com/", "not a host name"), ("https://exa\tmple.com/", "not a host name"),
     ("https://docs.example/my page", "a link holds no spaces"),
     ("https://docs.example:80x/", "not a port number")],
)  # fmt: skip
def test_the_form_refuses_a_link_no_browser_could_open_and_stores_nothing(
    staff_client, acme, url, because
):  # noqa: ANN001
    response = staff_client.post(
        f"/admin/curated/write/?project={acme.pk}",
        {"project": acme.pk, "phrasings": CHEAPER, "answer": ANSWER, "url": url},
    )
    assert response.status_code == 200
    assert because in response.content.decode()
    assert not CuratedAnswer.objects.exists()


def test_editing_reindexes_and_retiring_takes_it_out_of_the_index_at_once(staff_client, acme):
    curated = curated_answer_save(project=acme, phrasings=[CHEAPER], answer=ANSWER)
    edited = "Yes: downgrades apply from the next billing period; write to billing@acme.example."
    staff_client.post(
        f"/admin/curated/{curated.pk}/",
        {"phrasings": CHEAPER, "answer": edited, "url": "", "topic": ""},
    )
    assert "billing@acme.example" in ask(project=acme, question=CHEAPER, topic="Billing").answer

    response = staff_client.post(f"/admin/curated/{curated.pk}/retire/")
    assert response.status_code == 302
    curated.refresh_from_db()
    assert not curated.active and curated.retired_at is not None
    assert not Document.objects.filter(source__kind=Source.Kind.CURATED).exists()
    assert ask(project=acme, question=CHEAPER, topic="Billing").refused
    # Edited while retired, it stays out.
    staff_client.post(f"/admin/curated/{curated.pk}/", {"phrasings": CHEAPER, "answer": ANSWER})
    assert ask(project=acme, question=CHEAPER, topic="Billing").refused


def test_a_sync_that_changes_a_section_it_rests_on_is_warned_about(staff_client, acme):
    changing = Chunk.objects.get(document__source__project=acme, heading_path="Changing plan")
    curated_answer_save(
        project=acme, phrasings=[CHEAPER], answer=ANSWER, rests_on=[changing.vector_id]
    )
    listing = staff_client.get("/admin/curated/", {"project": acme.pk}).content.decode()
    assert 'data-testid="section-changed"' not in listing

    source = changing.document.source
    text = (DOCS_DIR / "plans.md").read_text(encoding="utf-8").split("\n", 1)[1]
    text = text.replace("next billing period", "next calendar month")
    document_upsert(source=source, external_id="plans.md", title="Plans and billing", text=text,
                    url=DOCS_URL + "plans")  # fmt: skip

    listing = staff_client.get("/admin/curated/", {"project": acme.pk}).content.decode()
    assert 'data-testid="section-changed"' in listing and "Changing plan" in listing


def test_an_answer_rests_only_on_sections_of_its_own_project(acme):
    other = plans_project("Other company")
    theirs = Chunk.objects.filter(document__source__project=other).first()
    ours = Chunk.objects.filter(document__source__project=acme).first()
    assert sections_of(project=acme, vector_ids=[theirs.vector_id, ours.vector_id]) == [
        {"vector_id": ours.vector_id, "title": ours.title, "url": ours.url}
    ]


def test_visitors_and_readers_cannot_write_or_retire_one(client, reader_client, acme):
    curated = curated_answer_save(project=acme, phrasings=[CHEAPER], answer=ANSWER)
    body = {"project": acme.pk, "phrasings": "Injected?", "answer": "Injected."}
    assert reader_client.post("/admin/curated/write/", body).status_code == 403
    assert reader_client.post(f"/admin/curated/{curated.pk}/retire/").status_code == 403
    reader_client.logout()
    assert client.post("/admin/curated/write/", body).status_code == 302  # to the login page
    assert client.post(f"/admin/curated/{curated.pk}/retire/").status_code == 302
    assert list(CuratedAnswer.objects.values_list("phrasings", "active")) == [([CHEAPER], True)]
    # No door of the public API writes one.
    assert client.post("/api/v1/curated", {"question": "x"}).status_code == 404


def test_the_buttons_lead_to_the_form_from_a_turn_a_thumbs_down_and_a_blind_spot(
    staff_client, acme
):
    turn = refused_turn(acme)
    conversation = staff_client.get(
        "/admin/conversations/view/", {"project": acme.pk, "id": turn.answer_id}
    ).content.decode()
    assert f"/admin/curated/write/?project={acme.pk}&amp;answer={turn.answer_id}" in conversation
    assert "Write the right answer" in conversation  # the turn has a thumbs-down
    feedback = staff_client.get("/admin/feedback/", {"project": acme.pk}).content.decode()
    assert "Write the right answer" in feedback
    spots = staff_client.get("/admin/blind-spots/", {"project": acme.pk}).content.decode()
    assert 'data-testid="write-answer"' in spots and "question=Can%20I%20switch" in spots
    assert "Visitor: “The plans page says I can downgrade any time!”" in spots
    form = staff_client.get(
        "/admin/curated/write/", {"project": acme.pk, "question": [CHEAPER, "Downgrade mid-month?"]}
    ).content.decode()
    assert f"{CHEAPER}\nDowngrade mid-month?" in form


def test_the_command_adds_lists_and_retires(acme):
    out = StringIO()
    call_command("curated_answer", "add", "--project", "Acme", "--question", CHEAPER,
                 "--answer", ANSWER, "--url", LINK, stdout=out)  # fmt: skip
    assert not ask(project=acme, question=CHEAPER, topic="Billing").refused
    out = StringIO()
    call_command("curated_answer", "list", "--project", "Acme", "--json", stdout=out)
    [row] = json.loads(out.getvalue())
    assert row["phrasings"] == [CHEAPER] and row["active"] and row["answered"] == 1
    call_command("curated_answer", "retire", "--project", "Acme", str(row["id"]), stdout=out)
    assert ask(project=acme, question=CHEAPER, topic="Billing").refused
    with pytest.raises(CommandError, match="only http and https"):
        call_command("curated_answer", "add", "--project", "Acme", "--question", "Q?",
                     "--answer", "A.", "--url", "ftp://x.example/")  # fmt: skip
    with pytest.raises(CommandError, match="No curated answer"):
        call_command("curated_answer", "retire", "--project", "Acme", "999999")


def test_the_overview_counts_open_thumbs_downs_failing_checks_and_changed_sections(
    staff_client, acme
):
    from feedback.checks import check_create, check_run

    turn = refused_turn(acme)
    check_create(project=acme, question=CHEAPER, topic="Billing", expect="answered")
    check_run(project=acme)

    def counts() -> dict[str, str]:
        html = staff_client.get("/admin/overview/", {"project": acme.pk}).content.decode()
        return {
            name: html.split(f'data-testid="{name}"', 1)[1].split(">", 1)[1].split("<", 1)[0]
            for name in ("open-thumbs-down", "failing-checks", "curated-count")
        }

    assert counts() == {"open-thumbs-down": "1", "failing-checks": "1", "curated-count": "0"}
    curated_answer_save(
        project=acme, phrasings=[CHEAPER], answer=ANSWER, from_answer_id=turn.answer_id
    )
    check_run(project=acme)
    assert counts() == {"open-thumbs-down": "0", "failing-checks": "0", "curated-count": "1"}


def test_the_curated_source_is_listed_and_synced_like_any_other_but_edited_on_its_page(
    staff_client, acme
):
    from ingestion.sync import source_sync

    curated_answer_save(project=acme, phrasings=[CHEAPER], answer=ANSWER)
    source = Source.objects.get(project=acme, kind=Source.Kind.CURATED)
    assert (
        "Curated answers"
        in staff_client.get("/admin/sources/", {"project": acme.pk}).content.decode()
    )
    edit = staff_client.get(f"/admin/sources/{source.pk}/edit/")
    assert edit.status_code == 302 and edit.url == f"/admin/curated/?project={acme.pk}"
    # A sync reads the active answers again (a repair path): nothing changes, nothing is lost.
    run = source_sync(source=source, trigger="manual")
    assert (run.status, run.unchanged, run.removed) == ("succeeded", 1, 0)
    assert not ask(project=acme, question=CHEAPER, topic="Billing").refused
