"""The README's "try it without Twilio": `sms_text` texts the demo project's number through
the real webhook in this process when no Twilio settings are given."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assistant.demo import DEMO_SMS_NUMBER
from assistant.models import Interaction

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def no_twilio(settings):  # noqa: ANN001, ANN201
    settings.TWILIO_ACCOUNT_SID = settings.TWILIO_AUTH_TOKEN = ""
    settings.TWILIO_PUBLIC_BASE_URL = ""


@pytest.fixture
def demo(transactional_db):  # noqa: ANN001, ANN201
    """Seeded here: a transactional test's database is emptied after it."""
    from assistant.demo import demo_seed

    return demo_seed().project


def test_without_twilio_the_demo_number_answers_in_this_process(no_twilio, demo):
    assert demo.sms_number == DEMO_SMS_NUMBER
    out = StringIO()
    call_command(
        "sms_text", "--to", DEMO_SMS_NUMBER, "How do I get my money back?", "reset", stdout=out
    )
    printed = out.getvalue()
    assert "texting the webhook in this process" in printed
    replies = [line for line in printed.splitlines() if line.startswith("< ")]
    assert len(replies) == 2 and "refund" in replies[0].lower()
    assert printed.count("[HTTP 200 in") == 2
    logged = Interaction.objects.get(project=demo, question="How do I get my money back?")
    assert logged.channel == "sms" and not logged.refused


def test_texting_a_server_needs_the_twilio_settings(no_twilio):
    with pytest.raises(CommandError, match="needs TWILIO_AUTH_TOKEN"):
        call_command("sms_text", "--to", DEMO_SMS_NUMBER, "--url", "http://127.0.0.1:8000", "Hi")
