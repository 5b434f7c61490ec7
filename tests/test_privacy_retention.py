"""Retention (assistant/privacy/retention.py) on the real stores: what is past each period is
deleted (texts, memory vectors, question vectors, SMS texts, outbox files), what is younger
stays, the numbers the charts count stay, and each run is counted in an audit record."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from assistant.handoff.models import Handoff
from assistant.handoff.sending import handoff_deliver
from assistant.handoff.services import handoff_create
from assistant.memory.models import UserFact
from assistant.memory.services import memory_remember
from assistant.models import (
    DiscordInteraction,
    Interaction,
    PrivacyAudit,
    Project,
    SlackEvent,
    SmsConversation,
    SmsMessage,
)
from assistant.privacy.retention import retention_run
from assistant.privacy.tasks import privacy_retention_task
from assistant.wiring import runtime
from feedback.blind_spots import blind_spots
from feedback.models import Feedback, QuestionVector
from feedback.question_vectors import _key, normalised, question_vectors
from feedback.services import feedback_record
from feedback.tuner import threshold_replay
from tests import asking

pytestmark = pytest.mark.django_db
DAY = timedelta(days=1)


@pytest.fixture
def project(db, settings, tmp_path) -> Project:  # noqa: ANN001
    settings.EMAIL_BACKEND = "assistant.handoff.outbox.OutboxBackend"
    settings.EMAIL_FILE_PATH = tmp_path
    return Project.objects.create(
        name=f"retention-{uuid.uuid4().hex[:8]}", contact_support="email",
        contact_support_target="support@example.org", keep_conversations_days=30,
        keep_feedback_comments_days=10, keep_handoffs_days=20, keep_memory_days=90,
    )  # fmt: skip


def aged(project: Project, word: str, days: int) -> Interaction:
    """A question, its vote and comment, an SMS text, a handoff and a fact, `days` old."""
    then = timezone.now() - days * DAY
    asked = asking.ask(project=project, question=f"Where is the {word} setting?")
    logged = Interaction.objects.get(answer_id=asked.answer_id)
    feedback_record(interaction=logged, client_id=f"client{word}", vote=-1, comment=f"{word}!")
    Interaction.objects.filter(pk=logged.pk).update(created_at=then, conversation_id=word)
    Feedback.objects.filter(interaction=logged).update(created_at=then)
    SmsMessage.objects.create(
        project=project, message_sid=f"SM{word}", from_number="+15550001111",
        to_number="+15559990000", body=f"{word} by text", kind="question", received_at=then,
    )  # fmt: skip
    SmsConversation.objects.create(
        project=project, phone=f"+1555{days:07d}", conversation_id=word, last_message_at=then
    )
    SlackEvent.objects.create(
        project=project, event_id=f"Ev{word}", team_id="T1", channel_id="C1", user_id="U1",
        thread_ts="1.1", text=f"{word} in Slack", conversation_id=word, received_at=then,
    )  # fmt: skip
    DiscordInteraction.objects.create(
        project=project, discord_id=f"D{word}", application_id="1", channel_id="2",
        user_id="3", text=f"{word} in Discord", conversation_id=word, received_at=then,
    )  # fmt: skip
    handoff = handoff_create(
        project=project, conversation_id=word, email=f"{word}@example.com", message=word
    )
    handoff_deliver(handoff_id=handoff.pk, last_attempt=True)
    Handoff.objects.filter(pk=handoff.pk).update(created_at=then)
    memory_remember(project=project, user_key=f"visitor:{word}{'x' * 16}", text=f"I use {word}")
    UserFact.objects.filter(text=f"I use {word}").update(updated_at=then)
    question_vectors(texts=[normalised(logged.question)])
    logged.refresh_from_db()
    return logged


def test_what_is_past_its_period_goes_on_every_store_and_the_rest_stays(project, tmp_path):
    old = aged(project, "oldword", days=100)
    recent = aged(project, "newword", days=5)
    old_fact = UserFact.objects.get(text="I use oldword")
    new_fact = UserFact.objects.get(text="I use newword")
    embedder = runtime.embedder().id

    report = retention_run(actor="test")

    assert report[project.name] == {
        "interactions": 1, "question_vectors": 1, "sms_messages": 1, "sms_conversations": 1,
        "slack_events": 1, "discord_interactions": 1, "feedback_comments": 1, "handoffs": 1,
        "outbox_files": 1, "memory_facts": 1,
    }  # fmt: skip
    stripped = Interaction.objects.get(pk=old.pk)
    assert (stripped.question, stripped.answer, stripped.conversation_id) == ("", "", "")
    # The numbers the charts and the tuner count stay.
    assert (stripped.refused, stripped.best_relevance, stripped.channel) == (
        old.refused, old.best_relevance, old.channel,
    )  # fmt: skip
    assert Interaction.objects.get(pk=recent.pk).question == recent.question
    assert Feedback.objects.get(interaction=old).comment == ""
    assert Feedback.objects.get(interaction=old).vote == -1
    assert Feedback.objects.get(interaction=recent).comment == "newword!"
    assert list(SmsMessage.objects.values_list("body", flat=True)) == ["newword by text"]
    assert list(SmsConversation.objects.values_list("conversation_id", flat=True)) == ["newword"]
    assert list(SlackEvent.objects.values_list("text", flat=True)) == ["newword in Slack"]
    assert list(DiscordInteraction.objects.values_list("text", flat=True)) == ["newword in Discord"]
    assert Handoff.objects.get(created_at__lt=timezone.now() - 50 * DAY).exchanges == []
    assert Handoff.objects.filter(email="newword@example.com").exists()
    files = [path.read_text() for path in tmp_path.iterdir()]
    assert len(files) == 1 and "newword" in files[0]
    assert not UserFact.objects.filter(pk=old_fact.pk).exists()
    vectors = runtime.memory_store().ids({"project_id": project.id})
    assert old_fact.vector_id not in vectors and new_fact.vector_id in vectors
    keys = set(QuestionVector.objects.values_list("key", flat=True))
    assert _key(embedder, normalised(old.question)) not in keys
    assert _key(embedder, normalised(recent.question)) in keys

    since = timezone.now() - 365 * DAY
    assert threshold_replay(project=project, since=since)[0].questions == 2
    spots = blind_spots(project=project, since=since, below=1.1)
    assert spots.clustered == 1  # the stripped question is not clustered
    audit = PrivacyAudit.objects.get(action="retention", project=project)
    assert audit.counts == report[project.name] and audit.actor == "test"


def test_a_second_run_deletes_nothing_more_and_unlimited_projects_are_left_alone(project):
    aged(project, "oldword", days=100)
    keeper = Project.objects.create(
        name=f"keeper-{uuid.uuid4().hex[:8]}", contact_support="email",
        contact_support_target="support@example.org",
    )  # fmt: skip
    kept = aged(keeper, "keptword", days=1000)
    privacy_retention_task()
    again = retention_run()
    assert set(again[project.name].values()) == {0}
    assert keeper.name not in again
    assert Interaction.objects.get(pk=kept.pk).question == kept.question
    assert PrivacyAudit.objects.filter(project=keeper).count() == 0
    assert PrivacyAudit.objects.filter(project=project).count() == 2


def test_the_command_runs_retention_and_prints_what_it_deleted(project):
    aged(project, "oldword", days=100)
    out = StringIO()
    call_command("privacy", "retention", stdout=out)
    assert json.loads(out.getvalue())[project.name]["interactions"] == 1
    assert PrivacyAudit.objects.get(project=project).actor == "command"
