"""An SMS text is kept and answered with its personal data masked (the sender's number, where
the reply goes, is kept). Transactional: the answer runs in a worker thread."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, SmsMessage
from tests.sms.conftest import CALLER, FIELD_NUMBER, twiml_messages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]


def test_an_sms_text_is_kept_and_answered_masked(webhook, field_project):
    text = "How often should I change the generator oil? Card 4111 1111 1111 1111, a@b.co"
    assert twiml_messages(webhook.post(text, to=FIELD_NUMBER))
    message = SmsMessage.objects.get(to_number=FIELD_NUMBER)
    masked = "How often should I change the generator oil? Card [card], [email]"
    assert message.body == masked
    assert message.from_number == CALLER
    assert Interaction.objects.get(pk=message.interaction_id).question == masked
