"""Conversation memory per (project, phone number), with the clock in the test's hands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from assistant.models import Project
from assistant.sms.conversations import conversation_reset, conversation_touch
from tests.sms.conftest import CALLER

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def project() -> Project:
    return Project.objects.create(name="Memory", sms_number="+15550100101")


def test_messages_within_30_minutes_of_each_other_stay_in_one_conversation(project):
    first = conversation_touch(project=project, phone=CALLER, now=T0).conversation_id
    later = T0 + timedelta(minutes=29, seconds=59)
    assert conversation_touch(project=project, phone=CALLER, now=later).conversation_id == first
    # the quiet spell counts from the last message, not the first
    even_later = later + timedelta(minutes=29)
    assert (
        conversation_touch(project=project, phone=CALLER, now=even_later).conversation_id == first
    )


def test_30_minutes_without_a_message_start_a_fresh_conversation(project):
    first = conversation_touch(project=project, phone=CALLER, now=T0).conversation_id
    fresh = conversation_touch(project=project, phone=CALLER, now=T0 + timedelta(minutes=30))
    assert fresh.conversation_id != first
    assert fresh.last_message_at == T0 + timedelta(minutes=30)


def test_the_quiet_spell_is_a_setting(project, settings):
    settings.SMS_CONVERSATION_IDLE_MINUTES = 5
    first = conversation_touch(project=project, phone=CALLER, now=T0).conversation_id
    later = conversation_touch(project=project, phone=CALLER, now=T0 + timedelta(minutes=6))
    assert later.conversation_id != first


def test_each_phone_and_each_project_has_its_own_conversation(project):
    other_project = Project.objects.create(name="Other", sms_number="+15550100102")
    ids = {
        conversation_touch(project=p, phone=phone, now=T0).conversation_id
        for p in (project, other_project)
        for phone in (CALLER, "+15557654000")
    }
    assert len(ids) == 4


def test_reset_starts_a_new_conversation_at_once(project):
    first = conversation_touch(project=project, phone=CALLER, now=T0).conversation_id
    reset = conversation_reset(project=project, phone=CALLER, now=T0 + timedelta(seconds=5))
    assert reset.conversation_id != first
    after = conversation_touch(project=project, phone=CALLER, now=T0 + timedelta(seconds=9))
    assert after.conversation_id == reset.conversation_id
