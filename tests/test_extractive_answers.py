"""Extractive answers on the demo content (real models): the answer is the sentence that
answers, not a sentence of a passage that merely shares the topic; and a question whose
passages are on topic but hold no answer is refused by the answerability check."""

from __future__ import annotations

import uuid

import pytest

from assistant.models import Interaction, Project
from assistant.rag.types import SORRY
from ingestion.models import Source, SyncRun
from ingestion.sync import source_sync
from ingestion.uploads import source_file_add
from tests import asking

pytestmark = pytest.mark.django_db

#: Every sentence but the answer says "student discount": embedding similarity used to
#: leave the answer out ("To apply for the student discount, open ..." came first).
STUDENT_PAGE = b"""# Student discount

Students get 50% off the Team plan.

## Applying

To apply for the student discount, open **Billing > Discounts** and choose **Student**. The
student discount needs a university e-mail address. The student discount is renewed every year
while you study. The student discount cannot be combined with other discounts. Your student
discount ends when you graduate.
"""


def test_an_export_question_is_not_answered_with_delivery_times(demo) -> None:  # noqa: ANN001
    result = asking.ask(project=demo, question="How long does an export take?")
    assert not result.refused
    assert "up to an hour" in result.answer
    assert "Standard delivery" not in result.answer
    assert "business days" not in result.answer


@pytest.mark.parametrize(
    ("question", "not_said"),
    [
        # Not the page's intro sentence ("… protected by tokens") beside the answer.
        ("When does it expire?", "protected by tokens"),
        # Names no subject: its own words read the export page's "The link is valid for 7
        # days." over the token expiry, which only the page's topic finds. The topic's reading
        # is not one to put off (docs/measuring/history.md, 2026-11-29).
        ("How long are they valid?", "link"),
    ],
)
def test_a_vague_question_is_answered_from_the_page_it_was_asked_on(
    demo,  # noqa: ANN001
    question: str,
    not_said: str,
) -> None:
    result = asking.ask(
        project=demo, question=question, topic="Retrieval endpoint token management"
    )
    assert not result.refused
    assert "90 days" in result.answer
    assert not_said not in result.answer
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.answerability["answerable"] is True
    assert "90 days" in logged.answerability["best_sentence"]


@pytest.fixture
def student_project(settings, tmp_path) -> Project:  # noqa: ANN001
    settings.DATA_DIR = tmp_path
    project = Project.objects.create(
        name=f"students-{uuid.uuid4().hex[:8]}", generator=Project.Generator.EXTRACTIVE
    )
    files = Source.objects.create(project=project, kind=Source.Kind.FILES, name="files")
    source_file_add(source=files, name="student-discount.md", data=STUDENT_PAGE)
    assert source_sync(source=files).status == SyncRun.Status.SUCCEEDED
    return project


def test_an_uploaded_student_discount_page_answers_with_the_discount(student_project) -> None:  # noqa: ANN001
    result = asking.ask(project=student_project, question="Do you offer a student discount?")
    assert not result.refused
    assert "Students get 50% off" in result.answer


def test_an_on_topic_question_without_an_answer_is_refused_with_a_reason(
    student_project,  # noqa: ANN001
) -> None:
    result = asking.ask(project=student_project, question="How many students use the discount?")
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert result.refused and result.answer == SORRY and result.sources == []
    assert logged.kept_count > 0  # the gate let the student-discount page through...
    check = logged.answerability  # ...and the answerability check refused, before any generator
    assert check["answerable"] is False and check["score"] < 0.5
    assert "no sentence in them answers the question" in check["reason"]
    assert logged.generator == "" and logged.refused


def test_a_two_part_question_is_answered_for_the_part_the_documents_cover(demo) -> None:  # noqa: ANN001
    # As one request the check refuses it (the cancel part pulls it under); the price part,
    # read against the plans passage alone, passes the check (0.62). ("What does the Team plan
    # cost and how do I cancel my subscription?" reads the plans passage 0.47 as a whole on an
    # AMD EPYC, under the gate, where it read over it on the machines before: a question the
    # gate refuses as a whole is not read part by part.)
    result = asking.ask(
        project=demo, question="How much does the Team plan cost per user, and how do I cancel "
        "my subscription?", topic="Billing",
    )  # fmt: skip
    assert not result.refused
    assert "12 USD per user per month" in result.answer
    assert "*Not found in the documents: How do I cancel my subscription?*" in result.answer
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.answerability["answerable"] is True


def test_a_two_part_question_no_passage_passes_the_gate_for_as_a_whole_is_read_part_by_part(
    demo,  # noqa: ANN001
) -> None:
    # As a whole it reads the plans passage 0.35 (on an Intel Xeon with AVX-512), under the
    # gate: each part is read against what the cross-encoder read, and each keeps its passage.
    result = asking.ask(
        project=demo, question="What does the Team plan cost and how do I delete my account?",
        topic="Billing",
    )  # fmt: skip
    assert not result.refused
    assert "12 USD per user per month" in result.answer
    assert "deleted permanently after a 14-day grace period" in result.answer
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.kept_count == 2 and logged.answerability["answerable"] is True


def test_a_two_part_question_asked_without_a_page_topic_is_answered(demo) -> None:  # noqa: ANN001
    # Typed into the demo's widget off any product page. The delete part's best sentence
    # ("All data ... is deleted permanently after a 14-day grace period") held none of its key
    # words while "deleted" and "delete" were counted apart, and the check refused both parts
    # on an AMD EPYC (0.24 and 0.28 against 0.287).
    result = asking.ask(
        project=demo, question="What does the Team plan cost and how do I delete my account?"
    )
    assert not result.refused
    assert "12 USD per user per month" in result.answer
    assert "deleted permanently after a 14-day grace period" in result.answer


def test_a_question_for_a_duration_is_answered_with_one(demo) -> None:  # noqa: ANN001
    # "How long until the deletion is final?" had "long" and "until" counted as key words
    # the answer lacks ("... is deleted permanently after a 14-day grace period ..."): a
    # quarter of its key words, and the check refused (0.275 against 0.287).
    result = asking.ask(project=demo, question="How long until the deletion is final?")
    assert not result.refused
    assert "14-day grace period" in result.answer


def test_with_its_llm_server_down_a_project_still_refuses_what_the_passages_do_not_answer(
    student_project,
    settings,  # noqa: ANN001
) -> None:
    """The fallback quotes only behind the answerability check, which had not run for the LLM
    (the project does not ask for it)."""
    from assistant.wiring import runtime
    from tests.fake_ollama import unused_url

    student_project.generator = Project.Generator.OLLAMA
    student_project.save()
    settings.OLLAMA_HOST = unused_url()
    runtime.reset()
    try:
        missing = asking.ask(
            project=student_project, question="How many students use the discount?"
        )
        answered = asking.ask(project=student_project, question="Do you offer a student discount?")
    finally:
        runtime.reset()
    logged = Interaction.objects.get(answer_id=missing.answer_id)
    assert missing.refused and missing.answer == SORRY and logged.kept_count > 0
    assert logged.answerability["answerable"] is False
    assert "Students get 50% off" in answered.answer and answered.generator == "extractive"
    assert "unavailable" in answered.fallback


def test_the_topic_does_not_push_the_answering_sentence_out(demo, settings, tmp_path) -> None:  # noqa: ANN001
    """On a billing page, "(Billing) ..." scores the sentence that repeats "Billing" far above
    the one with the discount; the answer must still carry the discount."""
    project = Project.objects.create(
        name=f"topic-{uuid.uuid4().hex[:8]}", generator=Project.Generator.EXTRACTIVE
    )
    files = Source.objects.create(project=project, name="Uploads", kind=Source.Kind.FILES)
    source_file_add(
        source=files, name="student-discount.md",
        data=b"# Student discount\n\nStudents get 50% off any annual plan with a valid student "
        b"email address. To apply, open Billing > Plans and choose Student.\n",
    )  # fmt: skip
    source_sync(source=files)
    result = asking.ask(
        project=project, question="Do you offer a student discount?", topic="Billing"
    )
    assert not result.refused
    assert "Students get 50% off" in result.answer


def test_the_cli_question_gets_both_commands_in_the_order_of_the_page(demo) -> None:  # noqa: ANN001
    result = asking.ask(
        project=demo, question="How do I install the Acme CLI and log in? Show me the commands."
    )
    assert not result.refused
    assert "pip install acme-cli" in result.answer and "acme login --key" in result.answer
    assert result.answer.index("pip install acme-cli") < result.answer.index("acme login")
    assert result.answer.count("```") == 4 and not result.answer.startswith("```")
