"""SMS wording: commands and trimming. Pure functions, no database."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from assistant.rag.types import SORRY
from assistant.sms.text import (
    SMS_LIMIT,
    Command,
    classify,
    cut,
    plain_text,
    refusal_reply,
    sms_reply,
)
from config.env import check_twilio_settings

URL = "https://help.acme.example/refunds#getting-your-money-back"
SENTENCES = [
    "If you are not happy with a purchase, you can ask for a refund within 30 days.",
    "Open Billing > Invoices, choose the invoice and click Request refund.",
    "Refunds go back to the original payment method, card or PayPal.",
    "They usually arrive within 5 to 10 business days.",
    "Annual subscriptions cancelled within 30 days are refunded in full.",
    "Monthly subscriptions are refunded for the unused part of the month.",
]


@pytest.mark.parametrize(
    ("body", "command"),
    [
        ("reset", Command.RESET),
        ("  RESET \n", Command.RESET),
        ("Clear", Command.RESET),
        ("help", Command.HELP),
        (" Help ", Command.HELP),
        ("STOP", Command.OPT_OUT),
        ("unsubscribe", Command.OPT_OUT),
        ("Start", Command.OPT_OUT),
        ("", Command.EMPTY),
        ("   ", Command.EMPTY),
        ("reset my password", Command.QUESTION),
        ("How do I stop the pump?", Command.QUESTION),
        ("help me reset the pump", Command.QUESTION),
    ],
)
def test_it_recognises_commands_only_as_the_whole_message(body, command):
    assert classify(body) is command


def test_it_turns_markdown_into_one_plain_line():
    markdown = (
        "## Refunds\n\nOpen **Billing > Invoices** [1], "
        "then see [the guide](https://x.example/g) [2, 3].\n* one\n* two"
    )
    assert (
        plain_text(markdown) == "Refunds Open Billing > Invoices, then see the guide. - one - two"
    )


def test_it_keeps_a_short_answer_whole_with_the_source_url():
    reply = sms_reply(" ".join(SENTENCES[:2]) + " [1]", url=URL)
    assert reply == f"{SENTENCES[0]} {SENTENCES[1]} {URL}"


def test_it_cuts_a_long_answer_after_the_last_sentence_that_fits_and_keeps_the_url():
    reply = sms_reply(" ".join(SENTENCES), url=URL)
    assert len(reply) <= SMS_LIMIT
    assert reply.endswith(f". {URL}")
    text = reply.removesuffix(f" {URL}")
    assert " ".join(SENTENCES).startswith(text)
    # the next sentence would not have fitted next to the URL
    next_sentence = SENTENCES[text.count(". ") + 1]
    assert len(text) + 1 + len(next_sentence) + 1 + len(URL) > SMS_LIMIT


def test_it_prefers_the_whole_answer_to_the_url_when_both_do_not_fit():
    answer = ("word " * 60).strip() + "."  # 300 characters: fits alone, not with the URL
    assert sms_reply(answer, url=URL) == answer


def test_it_cuts_at_a_word_boundary_when_no_sentence_fits():
    answer = " ".join(f"w{i:03d}" for i in range(200))  # no sentence end at all
    reply = sms_reply(answer)
    assert len(reply) <= SMS_LIMIT and reply.endswith("...")
    kept = reply.removesuffix("...").split(" ")
    assert kept == answer.split(" ")[: len(kept)]  # whole words only
    assert len(reply) > SMS_LIMIT - 10  # and not much shorter than it could be


@pytest.mark.parametrize("extra", [0, 1])
def test_the_limit_is_inclusive(extra):
    answer = "x" * (SMS_LIMIT - 1 + extra) + "."
    reply = cut(answer, SMS_LIMIT)
    assert (reply == answer) is (extra == 0)
    assert len(reply) <= SMS_LIMIT


def test_a_point_inside_a_number_is_not_a_sentence_end():
    answer = "Use SAE 15W-40 oil, 2.5 litres of it " + "and more words " * 30
    reply = cut(answer, 100)
    assert reply.endswith("...") and "2." not in reply[-5:]


def test_the_sms_settings_are_all_or_nothing_and_name_what_is_missing():
    check_twilio_settings(account_sid="", auth_token="", public_base_url="")
    with pytest.raises(ImproperlyConfigured, match="TWILIO_PUBLIC_BASE_URL"):
        check_twilio_settings(account_sid="AC" + "0" * 32, auth_token="t", public_base_url="")
    with pytest.raises(ImproperlyConfigured, match="TWILIO_ACCOUNT_SID='oops'"):
        check_twilio_settings(account_sid="oops", auth_token="t", public_base_url="https://x.io")
    with pytest.raises(ImproperlyConfigured, match="base URL only"):
        check_twilio_settings(
            account_sid="AC" + "0" * 32, auth_token="t", public_base_url="https://x.io/sms"
        )


def test_a_refusal_by_text_carries_one_related_link_when_it_fits():
    assert refusal_reply(related_url=URL) == f"{SORRY} This page may help: {URL}"
    assert refusal_reply() == SORRY
    assert refusal_reply(related_url="https://d.example/" + "x" * 300) == SORRY  # too long
    assert refusal_reply(related_url="javascript:alert(1)") == SORRY
