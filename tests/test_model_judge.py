"""A refusal the answerability check is unsure of is put to the project's model: answered only
on its yes, refused on its no, refused as before when it cannot say in time; a project without
a model never asks one. The model is a fake Ollama server (the outside world); the check, the
gate and the quote are the product's own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from assistant.models import Interaction, Project
from assistant.rag.judge.answerability import Verdict
from assistant.rag.judge.model_judge import (
    DRAFT_SYSTEM,
    SYSTEM,
    ModelJudge,
    draft_of,
    said_yes,
    worth_asking,
)
from assistant.rag.reading.scoring import draft_reading, draft_terms
from assistant.rag.types import SORRY, Question
from assistant.wiring import resilience, runtime
from assistant.wiring.generators import generator_for
from ingestion.models import Source, SyncRun
from ingestion.sync import source_sync
from ingestion.uploads import source_file_add
from tests import asking
from tests.fake_ollama import FakeOllama
from tests.test_extractive_answers import STUDENT_PAGE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("allow_loopback")]

#: On-topic, not answered by the page: the check refuses it, not by far (0.26 against 0.29).
UNSURE = "How many students use the discount?"


@pytest.fixture
def model(settings, tmp_path) -> Iterator[FakeOllama]:  # noqa: ANN001
    settings.DATA_DIR = tmp_path
    with FakeOllama() as server:
        settings.OLLAMA_HOST = server.url
        settings.ASKDOCS_OLLAMA_TIMEOUTS = {
            "connect": 1.0, "first_token": 5.0, "between_tokens": 1.0,
        }  # fmt: skip
        settings.ASKDOCS_JUDGE_WITHIN = 1.5
        runtime.reset()
        resilience.reset_circuits()
        try:
            yield server
        finally:
            runtime.reset()
            resilience.reset_circuits()


def students(generator: str, *, check: bool = True) -> Project:
    project = Project.objects.create(
        name=f"students-{uuid.uuid4().hex[:8]}", generator=generator, check_llm_answers=check
    )
    files = Source.objects.create(project=project, kind=Source.Kind.FILES, name="files")
    source_file_add(source=files, name="student-discount.md", data=STUDENT_PAGE)
    assert source_sync(source=files).status == SyncRun.Status.SUCCEEDED
    return project


def judgements(model: FakeOllama) -> list[str]:
    """The questions the model was asked to judge (not to write)."""
    asked = []
    for request in model.requests_to("/api/chat"):
        messages = request.body["messages"]
        if messages[0]["content"] == SYSTEM:
            asked.append(messages[-1]["content"])
    return asked


def test_the_models_no_leaves_the_refusal_and_is_logged(model) -> None:  # noqa: ANN001
    model.tokens = ["No", "."]
    project = students(Project.Generator.OLLAMA)

    result = asking.ask(project=project, question=UNSURE)

    assert result.refused and result.answer == SORRY
    [asked] = judgements(model)
    assert UNSURE in asked and "Students get 50% off the Team plan." in asked
    logged = Interaction.objects.get(answer_id=result.answer_id).answerability
    assert logged["answerable"] is False and logged["judged_by"].startswith("ollama:")


def test_the_models_yes_answers_with_the_quote(model) -> None:  # noqa: ANN001
    model.tokens = ["Yes"]
    project = students(Project.Generator.OLLAMA)

    result = asking.ask(project=project, question=UNSURE, write_within=5)

    assert not result.refused
    # The quote comes first, as for any answer the check lets through (the fake model then
    # writes "Yes", which is the written answer).
    assert result.quote.startswith("Students get 50% off the Team plan. [1]")
    assert len(judgements(model)) == 1
    logged = Interaction.objects.get(answer_id=result.answer_id).answerability
    assert logged["answerable"] is True and logged["judged_by"].startswith("ollama:")


def test_a_model_that_cannot_say_in_time_leaves_the_refusal_at_once(model) -> None:  # noqa: ANN001
    model.tokens = ["Yes"]
    model.stall_before_first_token = 6.0
    project = students(Project.Generator.OLLAMA)

    started = time.monotonic()
    result = asking.ask(project=project, question=UNSURE)

    assert result.refused and result.answer == SORRY
    # The judge's 1.5 s, then the draft's (the second reading), not the model's stall.
    assert time.monotonic() - started < 6.0
    logged = Interaction.objects.get(answer_id=result.answer_id).answerability
    assert logged["judged_by"] == ""


def test_a_clear_answer_and_a_clear_miss_ask_no_judgement(model) -> None:  # noqa: ANN001
    model.tokens = ["Yes"]
    project = students(Project.Generator.OLLAMA)

    answered = asking.ask(project=project, question="Do you offer a student discount?")
    far = asking.ask(project=project, question="Which university e-mail domains are accepted?")

    assert not answered.refused and far.refused
    assert judgements(model) == []
    # The miss is read a second time in the model's draft ("Yes" finds nothing): the answered
    # question never is.
    assert drafts_asked(model) == ["Which university e-mail domains are accepted?"]


def test_a_project_that_quotes_asks_no_model(model) -> None:  # noqa: ANN001
    model.tokens = ["Yes"]
    project = students(Project.Generator.EXTRACTIVE)

    result = asking.ask(project=project, question=UNSURE)

    assert result.refused
    assert model.requests_to("/api/chat") == []


@pytest.mark.parametrize(
    ("text", "said"),
    [("Yes", True), ("yes.", True), (" No, they do not.", False), ("NO", False),
     ("Maybe", None), ("", None), ("**Yes**", True)],
)  # fmt: skip
def test_the_models_first_word_is_its_verdict(text: str, said: bool | None) -> None:
    assert said_yes(text) is said


def test_only_a_refusal_near_the_threshold_for_no_missing_name_is_put_to_the_model() -> None:
    near = Verdict(answerable=False, score=0.2, reason="r")
    assert worth_asking(near, 0.29)
    assert not worth_asking(Verdict(answerable=False, score=0.1, reason="r"), 0.29)
    assert not worth_asking(Verdict(answerable=True, score=0.9, reason=""), 0.29)
    named = Verdict(answerable=False, score=0.2, reason="r", missing=("Temporal",))
    assert not worth_asking(named, 0.29)


# -- the second reading: a question in the reader's words, read again in the model's draft --

SETTINGS_PAGE = b"""# Settings

## PRAGMA user_version

The user_version pragma gets or sets the user-version integer, stored at offset 60 in the
database header. SQLite itself never uses it: an application may keep the version of its own
schema there and read it back with PRAGMA user_version.

## PRAGMA busy_timeout

The busy_timeout pragma sets a busy handler that sleeps when a table is locked, for at most the
given number of milliseconds.
"""
#: Asked in the reader's words: the cross-encoder reads the user_version entry 0.00 against it.
READERS_WORDS = "Where can my app remember which of its migrations already ran?"
DRAFT = "Use PRAGMA user_version to store the schema version."


def settings_project() -> Project:
    project = Project.objects.create(
        name=f"settings-{uuid.uuid4().hex[:8]}", generator=Project.Generator.OLLAMA,
        check_llm_answers=True,
    )  # fmt: skip
    files = Source.objects.create(project=project, kind=Source.Kind.FILES, name="files")
    source_file_add(source=files, name="settings.md", data=SETTINGS_PAGE)
    assert source_sync(source=files).status == SyncRun.Status.SUCCEEDED
    return project


def a_model(*, draft: str, verdict: str, written: str = "Use PRAGMA user_version [1].") -> object:
    """The model's replies by what it is asked: a draft, a judgement, or a written answer."""

    def reply(messages: list[dict[str, object]]) -> list[str]:
        system = messages[0]["content"]
        if system == DRAFT_SYSTEM:
            return [draft]
        if system == SYSTEM:
            return [verdict]
        return [written]

    return reply


def drafts_asked(model: FakeOllama) -> list[str]:
    return [
        r.body["messages"][-1]["content"]
        for r in model.requests_to("/api/chat")
        if r.body["messages"][0]["content"] == DRAFT_SYSTEM
    ]


def test_a_question_in_the_readers_words_is_answered_from_the_models_draft(model) -> None:  # noqa: ANN001
    model.reply = a_model(draft=DRAFT, verdict="Yes")
    project = settings_project()

    result = asking.ask(project=project, question=READERS_WORDS, write_within=5)

    assert not result.refused
    assert "user_version" in result.quote and "busy" not in result.quote
    assert drafts_asked(model) == [READERS_WORDS]
    # The model judged the passages the draft found against the question as asked.
    [asked] = judgements(model)
    assert READERS_WORDS in asked and DRAFT not in asked and "offset 60" in asked
    logged = Interaction.objects.get(answer_id=result.answer_id).answerability
    assert logged["read_as"] == DRAFT and logged["judged_by"].startswith("ollama:")


def test_the_models_no_on_what_its_draft_found_leaves_the_refusal(model) -> None:  # noqa: ANN001
    model.reply = a_model(draft=DRAFT, verdict="No")
    project = settings_project()

    result = asking.ask(project=project, question=READERS_WORDS)

    assert result.refused and result.answer == SORRY
    assert len(drafts_asked(model)) == 1 and len(judgements(model)) == 1


def test_a_draft_that_finds_nothing_asks_no_judgement(model) -> None:  # noqa: ANN001
    # Another product's setting: the draft names it, nothing in the documents reads as it.
    model.reply = a_model(draft="Set shared_buffers in postgresql.conf.", verdict="Yes")
    project = settings_project()

    result = asking.ask(project=project, question="How do I set shared_buffers in postgresql.conf?")

    assert result.refused and result.answer == SORRY
    assert len(drafts_asked(model)) == 1 and judgements(model) == []


def test_a_model_that_cannot_draft_in_time_leaves_the_refusal(model) -> None:  # noqa: ANN001
    model.reply = a_model(draft=DRAFT, verdict="Yes")
    model.stall_before_first_token = 6.0
    project = settings_project()

    started = time.monotonic()
    result = asking.ask(project=project, question=READERS_WORDS)

    assert result.refused and result.answer == SORRY
    assert time.monotonic() - started < 6.0  # the draft's 1.5 s budget, not the model's stall
    assert judgements(model) == []


def test_the_draft_and_its_judgement_share_one_deadline(model, settings) -> None:  # noqa: ANN001
    # Each ask alone fits the budget (1.2 s of 2.0), both together do not: the visitor waits
    # the budget, not the budget for each ask, and the refusal stands.
    settings.ASKDOCS_JUDGE_WITHIN = 2.0
    model.reply = a_model(draft=DRAFT, verdict="Yes")
    model.stall_before_first_token = 1.2
    project = settings_project()

    result = asking.ask(project=project, question=READERS_WORDS)

    assert result.refused and result.answer == SORRY
    assert drafts_asked(model) == [READERS_WORDS]
    # The judgement had what the draft left, under the 1.2 s the model takes to start; both
    # together took the budget, not the 2.4 s and more of two whole asks.
    timings = result.latency_ms
    assert timings["judge_ms"] < 1200
    assert timings["draft_ms"] + timings["judge_ms"] < 2000 + 300


@pytest.mark.parametrize(
    ("said", "draft"),
    [("Use `PRAGMA user_version`. It is an integer.", "Use `PRAGMA user_version`."),
     ("Run  the `.dump` command\nthen gzip it", "Run the `.dump` command"),
     ("Use `sqlite3_bind_text()` or `sqlite3_bind_int(stmt", "Use `sqlite3_bind_text()` or"),
     ("", "")],
)  # fmt: skip
def test_a_draft_is_its_first_sentence_with_its_code_marks(said: str, draft: str) -> None:
    assert draft_of(said) == draft


@pytest.mark.parametrize(
    ("said", "asked"),
    [("Yes, requests can throw an exception when the response is a 404.",
      "Can requests throw an exception by itself when the response is a 404?"),
     ("To choose the order of pages in the sidebar, use the Order option in the settings.",
      "The pages show up in the sidebar in the wrong order, how can I choose the order?")],
)  # fmt: skip
def test_a_draft_that_names_nothing_new_is_no_draft(said: str, asked: str) -> None:
    # Read again, it would be the question again (the option and setting are the request's
    # own words): nothing to search for that was not searched.
    assert draft_of(said, Question(asked)) == ""
    assert draft_of("Yes, use the raise_for_status method.", Question(asked)) == (
        "use the raise_for_status method."
    )


def test_the_names_a_draft_marks_as_code_are_read_before_the_question() -> None:
    marked = Question("How do I find the id of the new row?", draft="Use `RETURNING` or `rowid`.")
    assert draft_terms(marked) == "RETURNING rowid How do I find the id of the new row?"
    assert draft_reading(marked) == "Use RETURNING or rowid."
    assert draft_terms(Question("How?", draft="Use the returning clause.")) is None


def test_a_draft_is_not_cut_at_a_stop_that_starts_a_name(model) -> None:  # noqa: ANN001
    # Streamed as the model writes it: "from ." then "html" must not end the sentence.
    model.reply = lambda messages: ["Set use_directory_urls to go from .", "html links", " back."]
    judge = ModelJudge(generator_for("ollama"), within=5)

    assert judge.drafts(Question("Links should end in .html?")) == (
        "Set use_directory_urls to go from .html links back."
    )


def manual_project() -> Project:
    """The settings page among forty more entries, and a page about reading rows with SELECT:
    more passages than a search brings, so the draft's search and the question's find
    different ones."""
    entries = b"".join(
        b"\n## PRAGMA cache_slot_%d\n\nThe cache_slot_%d pragma stores an integer in the database "
        b"header that SQLite reads when it opens the schema.\n" % (n, n)
        for n in range(40)
    )
    rows = b"# Reading rows\n\nA SELECT statement reads the rows of a table, in any order.\n"
    project = settings_project()
    files = project.sources.get()
    source_file_add(source=files, name="settings.md", data=SETTINGS_PAGE + entries)
    source_file_add(source=files, name="rows.md", data=rows)
    assert source_sync(source=files).status == SyncRun.Status.SUCCEEDED
    return project


def test_a_keyword_the_asker_copies_from_code_is_no_product_the_documents_lack(model) -> None:  # noqa: ANN001
    # "SELECT" is a name to `unsaid` (a near miss names a product the documents never met).
    # The documents do meet it: the question's own search finds the rows page, the draft's
    # does not. Both readings are the search, so the draft's passages are put to the model.
    model.reply = a_model(draft=DRAFT, verdict="Yes")
    project = manual_project()
    asked = f"At start-up my app runs a SELECT on a table of its own. {READERS_WORDS}"

    result = asking.ask(project=project, question=asked, write_within=5)

    assert not result.refused
    assert "user_version" in result.quote
    assert len(judgements(model)) == 1
