"""Export and erasure of one person (assistant/privacy/erasure.py, `manage.py privacy`), on
the real stores: the database, the memory collection of the vector store, cached question
vectors, blind-spot marks and the outbox files of handoffs mailed without a mail server.
Erasure leaves no trace of one person while another's data stays; export lists what it
deletes; the audit record names no one."""

from __future__ import annotations

import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from assistant.handoff.models import Handoff
from assistant.handoff.sending import handoff_deliver
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
from assistant.wiring import runtime
from feedback.models import BlindSpotMark, Feedback, QuestionVector
from feedback.question_vectors import normalised, question_vectors
from feedback.services import feedback_record
from tests import asking

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(db) -> Project:  # noqa: ANN001
    return Project.objects.create(
        name=f"privacy-{uuid.uuid4().hex[:8]}", contact_support=Project.ContactSupport.EMAIL,
        contact_support_target="support@example.org",
    )  # fmt: skip


@pytest.fixture
def outbox(settings, tmp_path):  # noqa: ANN001, ANN201
    settings.EMAIL_BACKEND = "assistant.handoff.outbox.OutboxBackend"
    settings.EMAIL_FILE_PATH = tmp_path
    return tmp_path


class Someone:
    """One person's trail through every door, marked by a word only their data contains."""

    def __init__(self, project: Project, mark: str, phone: str, email: str) -> None:
        self.project, self.mark, self.phone, self.email = project, mark, phone, email
        self.visitor = f"visitor:{mark}{uuid.uuid4().hex}"
        self.client_id = self.visitor.removeprefix("visitor:")

    def leave_a_trail(self) -> None:
        project, mark = self.project, self.mark
        memory_remember(project=project, user_key=self.visitor, text=f"I run the {mark} shop")
        memory_remember(project=project, user_key=f"sms:{self.phone}", text=f"I am {mark} by SMS")
        asked = asking.ask(project=project, question=f"Where is my {mark} parcel?")
        feedback_record(
            interaction=Interaction.objects.get(answer_id=asked.answer_id),
            client_id=self.client_id, vote=-1, comment=f"{mark} is unhappy",
        )  # fmt: skip
        texted = asking.ask(
            project=project, question=f"Is {mark} open on Sunday?", channel="sms",
            conversation_id=f"sms-{mark}", user_key=f"sms:{self.phone}",
        )  # fmt: skip
        SmsConversation.objects.create(
            project=project, phone=self.phone, conversation_id=f"sms-{mark}",
            last_message_at=timezone.now(),
        )  # fmt: skip
        SmsMessage.objects.create(
            project=project, message_sid=f"SM{mark}", from_number=self.phone,
            to_number="+15559990000", body=f"Is {mark} open on Sunday?", kind="question",
            conversation_id=f"sms-{mark}",
            interaction=Interaction.objects.get(answer_id=texted.answer_id),
        )  # fmt: skip
        handed = asking.ask(
            project=project, question=f"Can a person help {mark}?", conversation_id=f"web-{mark}"
        )
        Interaction.objects.filter(answer_id=handed.answer_id).update(refused=True)
        from assistant.handoff.services import handoff_create

        handoff = handoff_create(
            project=project, conversation_id=f"web-{mark}", email=self.email,
            message=f"{mark} needs help",
        )  # fmt: skip
        handoff_deliver(handoff_id=handoff.pk, last_attempt=True)
        texts = [normalised(q) for q in Interaction.objects.values_list("question", flat=True)]
        question_vectors(texts=[t for t in texts if mark in t])
        BlindSpotMark.objects.create(
            project=project, question=f"Where is my {mark} parcel?", state="answered",
            texts=[normalised(f"Where is my {mark} parcel?")],
        )  # fmt: skip

    def traces(self, outbox) -> dict[str, object]:  # noqa: ANN001
        mark = self.mark
        asked = (f"Where is my {mark} parcel?", f"Is {mark} open on Sunday?",
                 f"Can a person help {mark}?")  # fmt: skip
        keys = question_vector_keys({normalised(question) for question in asked})
        facts = UserFact.objects.filter(text__contains=mark)
        vectors = runtime.memory_store().ids({"project_id": self.project.id})
        return {
            "interactions": Interaction.objects.filter(question__contains=mark).count(),
            "facts": sorted(facts.values_list("user_key", flat=True)),
            "vectors": len(self.vector_ids & vectors),
            "feedback": Feedback.objects.filter(comment__contains=mark).count(),
            "sms": SmsMessage.objects.filter(from_number=self.phone).count()
            + SmsConversation.objects.filter(phone=self.phone).count(),
            "handoffs": Handoff.objects.filter(email=self.email).count(),
            "outbox": sum(mark in p.read_text() for p in outbox.iterdir()),
            "question_vectors": QuestionVector.objects.filter(key__in=keys).count(),
            "marks": BlindSpotMark.objects.filter(question__contains=mark).count(),
        }

    @property
    def vector_ids(self) -> set[str]:
        if not hasattr(self, "_vectors"):
            facts = UserFact.objects.filter(text__contains=self.mark)
            self._vectors = set(facts.values_list("vector_id", flat=True))
        return self._vectors


def question_vector_keys(texts: set[str]) -> list[str]:
    from feedback.question_vectors import _key

    return [_key(runtime.embedder().id, text) for text in texts]


def run(*args: str) -> dict:
    out = StringIO()
    call_command("privacy", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("by", ["phone", "email", "visitor"])
def test_erasure_leaves_no_trace_of_one_person_and_the_other_untouched(project, outbox, by):
    alice = Someone(project, "alicemark", "+15550001111", "alice@example.com")
    bob = Someone(project, "bobmark", "+15550002222", "bob@example.com")
    alice.leave_a_trail()
    bob.leave_a_trail()
    alice_vectors = alice.vector_ids
    bob_before = bob.traces(outbox)
    assert all(bob_before[k] for k in ("interactions", "facts", "feedback", "sms", "outbox"))
    who = {"phone": alice.phone, "email": alice.email, "visitor": alice.visitor}[by]

    exported = run("export", who)
    erased = run("erase", who, "--yes")

    for kind in ("interactions", "feedback", "sms_messages", "handoffs", "outbox_files"):
        assert len(exported[kind]) == erased[kind], kind
    assert len(exported["memory_facts"]) == erased["facts"]
    dump = json.dumps(exported)
    assert "alicemark" in dump and "bobmark" not in dump
    assert bob.traces(outbox) == bob_before
    left = alice.traces(outbox)
    # What each identifier reaches (see assistant/privacy/holdings.py).
    keys = {"phone": ["sms:+15550001111"], "email": [], "visitor": [alice.visitor]}[by]
    assert not set(left["facts"]) & set(keys)
    assert left["vectors"] == len(alice_vectors) - len(keys)
    # Each identifier reaches one of the three questions: its text and its vector go.
    assert left["interactions"] == 2 and left["question_vectors"] == 2
    gone = {"phone": ["sms"], "email": ["handoffs", "outbox"], "visitor": ["feedback", "marks"]}
    for kind in gone[by]:
        assert left[kind] == 0, (kind, left)
    audit = PrivacyAudit.objects.filter(action="erase").get()
    record = json.dumps([audit.identifier_kind, audit.actor, audit.counts])
    assert "alice" not in record and "0001111" not in record
    assert audit.counts["interactions"] == erased["interactions"] > 0


def test_a_phone_erasure_takes_the_texts_their_questions_memory_and_vectors(project, outbox):
    alice = Someone(project, "alicemark", "+15550001111", "alice@example.com")
    alice.leave_a_trail()
    sms_fact = UserFact.objects.get(user_key="sms:+15550001111")
    run("erase", "+1 555 000 1111", "--yes")
    assert not SmsMessage.objects.exists() and not SmsConversation.objects.exists()
    assert not Interaction.objects.filter(question__contains="Sunday").exists()
    assert sms_fact.vector_id not in runtime.memory_store().ids({"project_id": project.id})
    key = question_vector_keys({normalised("Is alicemark open on Sunday?")})
    assert not QuestionVector.objects.filter(key__in=key).exists()
    # The web visitor's own facts are not the phone's.
    assert UserFact.objects.filter(user_key=alice.visitor).exists()


def test_an_email_erasure_takes_the_handed_over_conversation_and_its_mail(project, outbox):
    alice = Someone(project, "alicemark", "+15550001111", "alice@example.com")
    alice.leave_a_trail()
    assert any("alicemark" in p.read_text() for p in outbox.iterdir())
    erased = run("erase", "Alice@Example.com", "--yes")
    assert erased["handoffs"] == 1 and erased["outbox_files"] == 1
    assert not Interaction.objects.filter(conversation_id="web-alicemark").exists()
    assert not any("alicemark" in p.read_text() for p in outbox.iterdir())


def test_erasure_asks_for_confirmation_and_a_known_kind_of_identifier(project):
    with pytest.raises(CommandError, match="--yes"):
        call_command("privacy", "erase", "alice@example.com")
    with pytest.raises(CommandError, match="E.164"):
        call_command("privacy", "export", "alice")


def test_a_visitor_erasure_takes_every_question_they_asked_even_without_a_vote(project):
    visitor, other = f"visitor:{uuid.uuid4().hex}", f"visitor:{uuid.uuid4().hex}"
    for n, who in enumerate([visitor, visitor, other]):
        asking.ask(project=project, question=f"Where is parcel {n}?", user_key=who,
                   conversation_id=f"web-{n}")  # fmt: skip
    logged = Interaction.objects.filter(project=project)
    assert visitor not in json.dumps(list(logged.values_list("visitor", "asker")))

    exported = run("export", visitor)
    erased = run("erase", visitor, "--yes")

    assert sorted(i["question"] for i in exported["interactions"]) == [
        "Where is parcel 0?", "Where is parcel 1?",
    ]  # fmt: skip
    assert erased["interactions"] == 2
    assert list(logged.values_list("question", flat=True)) == ["Where is parcel 2?"]


def slack_asks(project: Project, *, team: str, user: str, thread: str, question: str) -> SlackEvent:
    """A question a Slack member asked in a thread, as the Slack door stores and logs it."""
    from assistant.slack.events import conversation_id, member_key

    conversation = conversation_id(team, "C0HELP", thread)
    asked = asking.ask(
        project=project, question=question, channel="slack", conversation_id=conversation,
        user_key=member_key(team, user), client=member_key(team, user),
    )  # fmt: skip
    return SlackEvent.objects.create(
        project=project, event_id=f"Ev{uuid.uuid4().hex[:12]}", team_id=team, channel_id="C0HELP",
        user_id=user, thread_ts=thread, text=question, conversation_id=conversation,
        interaction=Interaction.objects.get(answer_id=asked.answer_id), status="replied",
    )  # fmt: skip


def test_a_slack_member_erasure_takes_their_threads_votes_and_memory_only(project):
    alice, bob = "slack:T0ACME:U0ALICE", "slack:T0ACME:U0BOB"
    memory_remember(project=project, user_key=alice, text="I run the alicemark shop")
    memory_remember(project=project, user_key=bob, text="I run the bobmark shop")
    slack_asks(project, team="T0ACME", user="U0ALICE", thread="1.1", question="Where is alicemark?")
    # Bob's reply in Alice's thread is of her conversation: it carries hers as history.
    slack_asks(project, team="T0ACME", user="U0BOB", thread="1.1", question="And bobmark too?")
    own = slack_asks(project, team="T0ACME", user="U0BOB", thread="2.1", question="Is bobmark ok?")
    # The same member id in another workspace is someone else.
    slack_asks(project, team="T0OTHER", user="U0ALICE", thread="3.1", question="Is carolmark ok?")
    feedback_record(interaction=own.interaction, client_id=alice, vote=-1)
    feedback_record(interaction=own.interaction, client_id=bob, vote=1)

    exported = run("export", "slack:t0acme:u0alice")  # ids as pasted, in any case
    erased = run("erase", alice, "--yes")

    assert sorted(e["text"] for e in exported["slack_events"]) == [
        "And bobmark too?", "Where is alicemark?",
    ]  # fmt: skip
    assert (erased["slack_events"], erased["interactions"], erased["facts"]) == (2, 2, 1)
    assert erased["feedback"] == 1 and len(exported["feedback"]) == 1
    left = SlackEvent.objects.order_by("text")
    assert list(left.values_list("text", flat=True)) == ["Is bobmark ok?", "Is carolmark ok?"]
    assert sorted(Interaction.objects.values_list("question", flat=True)) == [
        "Is bobmark ok?", "Is carolmark ok?",
    ]  # fmt: skip
    assert list(Feedback.objects.values_list("client_id", flat=True)) == [bob]
    assert list(UserFact.objects.values_list("user_key", flat=True)) == [bob]
    audit = PrivacyAudit.objects.get(action="erase")
    assert audit.identifier_kind == "slack" and "ALICE" not in json.dumps(audit.counts)


def discord_asks(
    project: Project, *, user: str, guild: str, channel: str, question: str, thread: bool = False
) -> DiscordInteraction:
    """A question a Discord user asked with /ask, as the Discord door stores and logs it."""
    from assistant.discord.interactions import conversation_id, member_key

    conversation = conversation_id(guild_id=guild, channel_id=channel, user_id=user,
                                   in_thread=thread)  # fmt: skip
    asked = asking.ask(
        project=project, question=question, channel="discord", conversation_id=conversation,
        user_key=member_key(user), client=f"discord:{guild}:{user}",
    )  # fmt: skip
    return DiscordInteraction.objects.create(
        project=project, discord_id=uuid.uuid4().hex[:20], application_id="1100", guild_id=guild,
        channel_id=channel, user_id=user, text=question, conversation_id=conversation,
        interaction=Interaction.objects.get(answer_id=asked.answer_id), status="replied",
    )  # fmt: skip


def test_a_discord_user_erasure_takes_what_they_asked_in_every_server_and_their_presses(project):
    alice, bob = "1100000000000000401", "1100000000000000402"
    memory_remember(project=project, user_key=f"discord:{alice}", text="I run the alicemark shop")
    discord_asks(project, user=alice, guild="900", channel="10", question="Where is alicemark?")
    discord_asks(project, user=alice, guild="", channel="11", question="Is alicemark in a DM?")
    # In a channel each member's questions are their own conversation.
    other = discord_asks(project, user=bob, guild="900", channel="10", question="Is bobmark ok?")
    DiscordInteraction.objects.create(
        project=project, discord_id="press-1", kind="press", guild_id="900", channel_id="10",
        user_id=alice, text=f"askdocs_vote_down:{other.interaction.answer_id}", status="replied",
    )  # fmt: skip
    feedback_record(interaction=other.interaction, client_id=f"discord:900:{alice}", vote=-1)
    feedback_record(interaction=other.interaction, client_id=f"discord:900:{bob}", vote=1)

    erased = run("erase", f"discord:{alice}", "--yes")

    assert (erased["discord_interactions"], erased["interactions"]) == (3, 2)
    assert (erased["facts"], erased["feedback"]) == (1, 1)
    assert list(DiscordInteraction.objects.values_list("text", flat=True)) == ["Is bobmark ok?"]
    assert list(Interaction.objects.values_list("question", flat=True)) == ["Is bobmark ok?"]
    assert list(Feedback.objects.values_list("client_id", flat=True)) == [f"discord:900:{bob}"]
    assert not UserFact.objects.exists()


@pytest.mark.parametrize("who", ["slack:T0ACME", "slack:T0ACME:", "discord:alice", "discord:"])
def test_a_slack_or_discord_member_is_named_with_their_ids(project, who):
    with pytest.raises(CommandError, match="discord:<user id>"):
        call_command("privacy", "export", who)
