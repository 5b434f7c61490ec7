"""The SMS sender's memory: keyed by the sender's number, per project."""

from __future__ import annotations

import uuid

import pytest

from assistant.memory.services import memory_facts
from assistant.models import Interaction
from assistant.rag.memory import ACK
from assistant.rag.write.prompting import REMINDER
from tests.sms.conftest import OFFICE_NUMBER, twiml_messages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]


def new_number() -> str:
    return f"+1555{uuid.uuid4().int % 10**7:07d}"


def test_a_texted_fact_reaches_the_model_for_a_relevant_question_only(
    webhook, field_project, office_project, ollama_llm
):
    field_project.generator = "ollama"
    field_project.save()
    sender = new_number()
    [reply] = twiml_messages(webhook.post("Remember I maintain a G-40 generator", sender=sender))
    assert reply == "Got it, I'll remember that: I maintain a G-40 generator."
    assert [f.text for f in memory_facts(project=field_project, user_key=f"sms:{sender}")] == [
        "I maintain a G-40 generator"
    ]

    question = "How often should I change the oil of my G-40 generator?"
    twiml_messages(webhook.post(question, sender=sender))
    messages = ollama_llm.requests_to("/api/chat")[-1].body["messages"]
    assert messages[1:] == [
        {"role": "user", "content": "Just so you know, I maintain a G-40 generator."},
        {"role": "assistant", "content": ACK},
        {"role": "user", "content": f"{question}\n\n{REMINDER}"},
    ]
    logged = Interaction.objects.get(question=question)
    # The memory command is not conversation history: it never reaches the retrieval query.
    assert logged.retrieval_query == question

    unrelated = "How do I reset the pump controller?"
    twiml_messages(webhook.post(unrelated, sender=sender))
    messages = ollama_llm.requests_to("/api/chat")[-1].body["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == (
        f"{unrelated}\n\n{REMINDER}"
    )
    assert not any("Just so you know" in m["content"] for m in messages)

    # The same number texting another project's number has no memory there.
    [recalled] = twiml_messages(
        webhook.post("what do you remember about me?", sender=sender, to=OFFICE_NUMBER)
    )
    assert recalled == "I don't remember anything about you yet."
