"""Users' memory end to end: real embeddings (bge-small-en-v1.5), the real Chroma store, the
database; only Ollama is faked, at its HTTP edge, to see the prompt it receives."""

from __future__ import annotations

import uuid

import pytest

from assistant.ask import services
from assistant.memory.models import UserFact
from assistant.memory.services import (
    memory_erase_user,
    memory_facts,
    memory_recall,
    memory_remember,
)
from assistant.models import Interaction, Project
from assistant.rag.memory import ACK, FactRefused
from assistant.rag.write.prompting import REMINDER
from assistant.wiring import runtime
from assistant.wiring.resilience import reset_circuits
from tests import asking

pytestmark = pytest.mark.django_db


def new_user() -> str:
    # Vectors outlive the test's database transaction: every test gets users of its own.
    return f"visitor:{uuid.uuid4().hex}"


@pytest.fixture
def project(db) -> Project:  # noqa: ANN001
    return Project.objects.create(name=f"memory-{uuid.uuid4().hex[:8]}")


def vectors_of(project: Project, user: str) -> set[str]:
    return runtime.memory_store().ids({"project_id": project.id, "user_key": user})


def say(project: Project, user: str, text: str) -> services.AskResult:
    return asking.ask(project=project, question=text, user_key=user)


def test_it_remembers_a_fact_in_the_database_and_the_vector_store(project):
    user = new_user()
    result = say(project, user, "Remember that I'm on the Enterprise plan.")
    assert result.answer == "Got it, I'll remember that: I'm on the Enterprise plan."
    (fact,) = memory_facts(project=project, user_key=user)
    assert fact.text == "I'm on the Enterprise plan"
    assert vectors_of(project, user) == {fact.vector_id}
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.generator == "memory" and logged.retrieval_query == ""


def test_it_merges_a_near_duplicate_instead_of_storing_it_twice(project):
    user = new_user()
    first = memory_remember(project=project, user_key=user, text="I deploy on Kubernetes")
    again = memory_remember(project=project, user_key=user, text="We deploy on kubernetes.")
    other = memory_remember(project=project, user_key=user, text="I'm on the Pro plan")
    assert again.merged and again.fact.pk == first.fact.pk and not other.merged
    assert [f.text for f in memory_facts(project=project, user_key=user)] == [
        "We deploy on kubernetes",
        "I'm on the Pro plan",
    ]
    assert len(vectors_of(project, user)) == 2


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        ("remember my email is ana@example.com", "I don't store e-mail addresses."),
        ("remember my phone is +1 555 123 4567", "I don't store phone numbers."),
        ("remember my card 4111 1111 1111 1111", "I don't store card or account numbers."),
        ("remember my password: Tr0ub4dor&3", "I don't store passwords, keys or tokens."),
        ("remember", "There is nothing to remember"),
        ("remember " + "very " * 80 + "long", "That is too long to remember"),
    ],
)
def test_it_refuses_contact_data_empty_and_oversized_facts_with_a_clear_message(
    project, message, reply
):
    user = new_user()
    result = say(project, user, message)
    assert result.answer.startswith(reply) and not result.error
    assert memory_facts(project=project, user_key=user) == []
    assert vectors_of(project, user) == set()


def test_it_lists_what_it_remembers_without_asking_the_model(project, fake_ollama, settings):
    settings.OLLAMA_HOST = fake_ollama.url
    runtime.reset()
    project.generator = "ollama"
    project.save()
    user = new_user()
    assert say(project, user, "What do you remember about me?").answer == (
        "I don't remember anything about you yet."
    )
    say(project, user, "remember I like reading sci-fi books")
    say(project, user, "remember I deploy on Kubernetes")
    assert say(project, user, "what do you remember about me?").answer == (
        "Here is what I remember about you:\n- I like reading sci-fi books\n"
        "- I deploy on Kubernetes"
    )
    assert fake_ollama.requests_to("/api/chat") == []
    runtime.reset()


def test_the_seeds_cases_find_the_fact_or_nothing(project):
    user = new_user()
    memory_remember(project=project, user_key=user, text="User likes reading sci-fi books")
    memory_remember(project=project, user_key=user, text="I'm on the Enterprise plan")
    found = memory_recall(project=project, user_key=user, question="sci-fi book recommendations")
    assert [h.text for h in found.used] == ["User likes reading sci-fi books"]
    assert found.used[0].similarity > found.threshold
    weather = memory_recall(project=project, user_key=user, question="what's the weather")
    assert weather.used == []
    assert len(weather.log) == 2 and not any(entry["injected"] for entry in weather.log)


def test_it_uses_at_most_two_facts_and_the_project_threshold_cuts(project):
    user = new_user()
    project.memory_threshold = 0.3
    project.save()
    for text in (
        "I like reading sci-fi books",
        "My favourite sci-fi author is Ursula K. Le Guin",
        "I read sci-fi novels every evening",
    ):
        memory_remember(project=project, user_key=user, text=text)
    question = "Any good sci-fi book recommendations?"
    found = memory_recall(project=project, user_key=user, question=question)
    assert len(found.used) == 2 and sum(e["injected"] for e in found.log) == 2
    assert all(e["similarity"] > found.threshold for e in found.log)  # three relevant, two used
    assert found.used[0].similarity >= found.used[1].similarity
    project.memory_threshold = 0.99
    project.save()
    assert memory_recall(project=project, user_key=user, question=question).used == []


def test_no_question_ever_sees_another_users_or_projects_facts(project):
    owner, stranger = new_user(), new_user()
    other_project = Project.objects.create(name=f"memory-{uuid.uuid4().hex[:8]}")
    memory_remember(project=project, user_key=owner, text="User likes reading sci-fi books")
    question = "sci-fi book recommendations"
    assert memory_recall(project=project, user_key=owner, question=question).used
    assert memory_recall(project=project, user_key=stranger, question=question).log == []
    assert memory_recall(project=other_project, user_key=owner, question=question).log == []
    assert say(project, stranger, "What do you remember about me?").answer == (
        "I don't remember anything about you yet."
    )
    say(project, stranger, "forget everything")
    assert say(other_project, owner, "forget sci-fi").answer == (
        "I don't remember anything like that."
    )
    assert len(memory_facts(project=project, user_key=owner)) == 1
    assert len(vectors_of(project, owner)) == 1


def test_it_forgets_one_fact_then_everything(project):
    user = new_user()
    for text in ("I deploy on Kubernetes", "I'm on the Enterprise plan", "I like sci-fi books"):
        memory_remember(project=project, user_key=user, text=text)
    assert say(project, user, "forget that I deploy on Kubernetes").answer == (
        "Done, I've forgotten: I deploy on Kubernetes."
    )
    assert say(project, user, "Forget my plan").answer == (
        "Done, I've forgotten: I'm on the Enterprise plan."
    )
    assert [f.text for f in memory_facts(project=project, user_key=user)] == ["I like sci-fi books"]
    assert len(vectors_of(project, user)) == 1
    assert say(project, user, "forget everything").answer == (
        "Done, I've forgotten everything you told me."
    )
    assert memory_facts(project=project, user_key=user) == []
    assert vectors_of(project, user) == set()


def test_erasing_a_user_deletes_rows_and_vectors_including_orphans(project):
    user, neighbour = new_user(), new_user()
    memory_remember(project=project, user_key=user, text="I deploy on Kubernetes")
    memory_remember(project=project, user_key=neighbour, text="I deploy on Kubernetes")
    # A vector whose row is gone (a crash between the two writes) must go too.
    UserFact.objects.filter(project=project, user_key=user).delete()
    memory_remember(project=project, user_key=user, text="I'm on the Enterprise plan")
    assert len(vectors_of(project, user)) == 2
    assert memory_erase_user(project=project, user_key=user) == 1
    assert vectors_of(project, user) == set()
    assert len(vectors_of(project, neighbour)) == 1


def test_it_learns_statements_only_when_the_project_opts_in(project):
    user = new_user()
    say(project, user, "I'm on the Enterprise plan. How do I add seats?")
    assert memory_facts(project=project, user_key=user) == []
    project.memory_learns_statements = True
    project.save()
    say(project, user, "I'm on the Enterprise plan. How do I add seats?")
    assert [f.text for f in memory_facts(project=project, user_key=user)] == [
        "I'm on the Enterprise plan"
    ]


def test_without_a_user_memory_commands_are_ordinary_questions(project):
    result = asking.ask(project=project, question="remember I like sci-fi")
    assert result.refused
    assert not UserFact.objects.filter(project=project).exists()


@pytest.fixture
def ollama_demo(demo, fake_ollama, settings):  # noqa: ANN001, ANN201
    settings.OLLAMA_HOST = fake_ollama.url
    runtime.reset()
    reset_circuits()
    demo.generator = "ollama"
    demo.save()
    yield demo
    runtime.reset()
    reset_circuits()


def test_a_relevant_fact_reaches_the_model_as_a_turn_before_the_question_only(
    ollama_demo, fake_ollama
):
    user = new_user()
    say(ollama_demo, user, "remember I'm on the Enterprise plan")
    fake_ollama.tokens = ["On Enterprise you can pay by bank transfer [1]."]
    result = say(ollama_demo, user, "How do I pay for my plan?")
    # The answer is the last request; where the check is unsure of the passages, the model is
    # asked first whether they answer (how sure it is differs with the CPU), without the fact.
    *judged, chat = fake_ollama.requests_to("/api/chat")
    assert all("Just so you know" not in str(request.body) for request in judged)
    assert chat.body["messages"][1:] == [
        {"role": "user", "content": "Just so you know, I'm on the Enterprise plan."},
        {"role": "assistant", "content": ACK},
        {"role": "user", "content": f"How do I pay for my plan?\n\n{REMINDER}"},
    ]
    assert "Enterprise plan" not in chat.body["messages"][0]["content"].split("texts:")[0]
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert "Enterprise" not in logged.retrieval_query
    (entry,) = logged.memory
    assert entry["injected"] and entry["similarity"] > 0.62
    assert logged.latency_ms["memory_ms"] > 0


def test_an_unrelated_question_is_answered_without_the_fact(ollama_demo, fake_ollama):
    user = new_user()
    say(ollama_demo, user, "remember User likes reading sci-fi books")
    fake_ollama.tokens = ["Open Billing > Invoices [1]."]
    result = say(ollama_demo, user, "How do I get a refund?")
    (chat,) = fake_ollama.requests_to("/api/chat")
    assert chat.body["messages"][1:] == [
        {"role": "user", "content": f"How do I get a refund?\n\n{REMINDER}"}
    ]
    (entry,) = Interaction.objects.get(answer_id=result.answer_id).memory
    assert not entry["injected"]


def test_it_refuses_facts_through_the_service_with_a_reason(project):
    with pytest.raises(FactRefused, match="e-mail"):
        memory_remember(project=project, user_key=new_user(), text="ana@example.com")
