"""Conversations kept as checks: kept from a transcript turn (question, history, topic, what must
happen), run through the real pipeline (console, in the background, and `manage.py
check_answers`), showing what changed since the run before; and a threshold change that would
break one shown before it is saved."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from feedback.checks import check_answer, check_create, check_run, checks_broken_by
from feedback.models import AnswerCheck, CheckRun
from ingestion.curated import curated_answer_save
from tests.asking import ask
from tests.curated_fixtures import ANSWER, CHEAPER, plans_project
from tests.sms.conftest import restore_demo, wait_until  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

REFUND = "How do I get my money back?"


def test_a_turn_of_a_conversation_is_kept_with_its_history_and_topic(staff_client, demo):
    first = ask(project=demo, question=REFUND, topic="Billing", conversation_id="c-1")
    follow = ask(project=demo, question="And how long does it take?", topic="Billing",
                 conversation_id="c-1",
                 history=[])  # fmt: skip
    assert not first.refused
    page = staff_client.get("/admin/checks/new/", {"project": demo.pk, "answer": follow.answer_id})
    form = page.context["form"]
    assert form.initial["question"] == "And how long does it take?"
    assert form.initial["topic"] == "Billing"
    assert form.initial["history"][0] == {"role": "user", "content": REFUND}
    assert form.initial["expect"] == ("refused" if follow.refused else "answered")

    saved = staff_client.post(
        f"/admin/checks/new/?project={demo.pk}",
        {"project": demo.pk, "question": REFUND, "topic": "Billing", "expect": "answered",
         "cites": "Refunds", "facts": "refund\n", "history": "[]", "from_answer": first.answer_id},
    )  # fmt: skip
    assert saved.status_code == 302
    check = AnswerCheck.objects.get(project=demo)
    assert (check.expect, check.cites, check.facts) == ("answered", "Refunds", ["refund"])
    assert check.from_answer_id == first.answer_id


def test_it_passes_and_fails_by_what_must_happen(demo):
    answered = check_create(project=demo, question=REFUND, topic="Billing", expect="answered",
                            cites="Refunds and returns", facts=["refund"])  # fmt: skip
    assert check_answer(check=answered).passed
    wrong_fact = check_create(project=demo, question=REFUND, topic="Billing", expect="answered",
                              facts=["a full moon"])  # fmt: skip
    assert check_answer(check=wrong_fact).problems == ["does not say “a full moon”"]
    wrong_source = check_create(project=demo, question=REFUND, expect="answered",
                                cites="Shipping and delivery")  # fmt: skip
    assert check_answer(check=wrong_source).problems == ["does not cite “Shipping and delivery”"]
    refused = check_create(project=demo, question="Who won the 1998 World Cup?", expect="refused")
    assert check_answer(check=refused).passed
    must_refuse = check_create(project=demo, question=REFUND, expect="refused")
    assert check_answer(check=must_refuse).problems == ["answered, but it must be refused"]


def test_a_run_shows_what_changed_since_the_run_before(staff_client):
    acme = plans_project("Acme")
    check = check_create(project=acme, question=CHEAPER, topic="Billing", expect="answered",
                         facts=["next billing period"])  # fmt: skip
    run = check_run(project=acme)
    assert (run.total, run.done, run.failed) == (1, 1, 1)
    check.refresh_from_db()
    assert check.passed is False and check.last_result["refused"] is True

    curated_answer_save(project=acme, phrasings=[CHEAPER], answer=ANSWER)
    check_run(project=acme)
    check.refresh_from_db()
    assert check.passed is True and check.changed
    assert check.previous_result["passed"] is False
    page = staff_client.get("/admin/checks/", {"project": acme.pk}).content.decode()
    assert 'data-passed="yes"' in page and "fixed" in page


def test_a_threshold_that_would_break_a_check_is_shown_before_it_is_saved(staff_client, demo):
    answered = check_create(project=demo, question=REFUND, topic="Billing", expect="answered")
    check_create(project=demo, question="Who won the 1998 World Cup?", expect="refused")
    check_run(project=demo)

    assert checks_broken_by(project=demo, threshold=0.3) == []
    [broken] = checks_broken_by(project=demo, threshold=1.0)
    assert broken.check == answered and broken.outcome.refused

    html = staff_client.get(
        "/admin/checks/threshold/", {"project": demo.pk, "threshold": "1.0"}
    ).content.decode()
    assert "would break 1 of 2 checks" in html and REFUND in html
    demo.refresh_from_db()
    assert demo.threshold == 0.5  # nothing was saved
    # The settings page and the tuner ask for it as the threshold changes.
    settings_page = staff_client.get(f"/admin/projects/{demo.pk}/").content.decode()
    assert 'hx-include="#id_threshold"' in settings_page
    tuner = staff_client.get("/admin/tuner/", {"project": demo.pk}).content.decode()
    assert 'data-testid="try-threshold"' in tuner
    assert (
        staff_client.get(
            "/admin/checks/threshold/", {"project": demo.pk, "threshold": "2"}
        ).status_code
        == 204
    )


def test_while_a_run_goes_the_page_polls_its_progress_and_a_second_run_is_not_started(
    staff_client, demo
):
    check_create(project=demo, question=REFUND, expect="answered")
    CheckRun.objects.create(project=demo, total=1)
    page = staff_client.get("/admin/checks/", {"project": demo.pk}).content.decode()
    assert 'hx-trigger="every 1s"' in page and "Running: 0 of 1" in page
    staff_client.post(f"/admin/checks/run/?project={demo.pk}")
    assert CheckRun.objects.filter(project=demo).count() == 1


def test_the_command_runs_the_checks_for_ci_and_fails_when_one_fails(demo, tmp_path):
    check_create(project=demo, question=REFUND, topic="Billing", expect="answered")
    out = tmp_path / "checks.json"
    call_command("check_answers", "--project", "Demo", "--json", str(out))
    report = json.loads(out.read_text())
    assert report["total"] == 1 and report["failed"] == 0 and report["checks"][0]["passed"]
    check_create(project=demo, question=REFUND, expect="refused")
    with pytest.raises(CommandError, match="1 check failed"):
        call_command("check_answers", "--project", "Demo", "--json", str(out))
    assert json.loads(out.read_text())["failed"] == 1


@pytest.mark.parametrize("where", ["missing/checks.json", "folder", "file/checks.json"])
def test_the_command_says_at_once_when_it_cannot_write_its_json(demo, tmp_path, where):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("not a folder")
    check_create(project=demo, question=REFUND, topic="Billing", expect="answered")
    with pytest.raises(CommandError, match=r"^Cannot write .*\.$"):
        call_command("check_answers", "--project", "Demo", "--json", str(tmp_path / where))
    # Refused before any check ran: none has a result.
    assert all(check.last_result is None for check in AnswerCheck.objects.filter(project=demo))
    assert not CheckRun.objects.filter(project=demo).exists()


def test_readers_cannot_keep_or_run_checks(reader_client, demo):
    body = {"project": demo.pk, "question": "Q?", "expect": "refused", "history": "[]"}
    assert reader_client.post("/admin/checks/new/", body).status_code == 403
    assert reader_client.post("/admin/checks/run/", {"project": demo.pk}).status_code == 403
    assert not AnswerCheck.objects.exists() and not CheckRun.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("restore_demo", "tasks_here")
def test_the_console_runs_them_in_the_background_with_progress(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ada", is_staff=True))
    acme = plans_project("Acme")
    for question in (CHEAPER, "How much does the Team plan cost?"):
        check_create(project=acme, question=question, topic="Billing", expect="answered")
    response = client.post(f"/admin/checks/run/?project={acme.pk}")
    assert response.status_code == 302

    def finished() -> bool:
        """The run finished."""
        return CheckRun.objects.filter(project=acme, finished_at__isnull=False).exists()

    wait_until(finished, timeout=120)
    run = CheckRun.objects.get(project=acme)
    assert (run.total, run.done, run.failed) == (2, 2, 1)
    page = client.get("/admin/checks/", {"project": acme.pk}).content.decode()
    assert "2 run in" in page and "1 failed" in page and 'hx-trigger="every 1s"' not in page


@pytest.mark.parametrize(
    ("cites", "passes"),
    [
        ("backup-dump.html#BACKUP-DUMP-ALL", True),  # a section, as written in the page's link
        ("backup-dump.html", True),  # the page
        ("https://www.postgresql.org/docs/current/backup-dump.html#backup-dump-all", True),
        ("Using pg_dumpall", True),  # part of the title
        ("backup-dump.html#BACKUP-DUMP-RESTORE", False),  # another section
        ("backup-file.html", False),
    ],
)
def test_citing_matches_part_of_a_title_or_of_a_url(cites, passes):
    from feedback.checks import Outcome, problems_of

    url = "https://www.postgresql.org/docs/current/backup-dump.html#BACKUP-DUMP-ALL"
    cited = [{"title": "SQL Dump > Using pg_dumpall", "url": url}]
    outcome = Outcome(refused=False, answer="Run pg_dumpall [1].", cited=cited, ms=1.0)
    check = AnswerCheck(question="How do I back up every database?", cites=cites)
    assert (problems_of(check, outcome) == []) is passes
