"""A door whose refusals a person reads (Slack, Discord) says when to ask again: the seconds
until the moving window the member is over has room, read from the same counters that refused
them; and a member is told at most once a minute, so a flood gets no flood of notes."""

from __future__ import annotations

import pytest

from assistant.ask import intake, ratelimits
from assistant.errors import IntakeError


def test_a_refused_member_is_told_the_seconds_until_their_window_has_room(settings):
    settings.ASKDOCS_RATE_SLACK_PER_USER = "2/m"
    for _ in range(2):
        intake.limit("slack", client="slack:T1", sender="slack:T1:U1", say_when=True)
    with pytest.raises(IntakeError) as refused:
        intake.limit("slack", client="slack:T1", sender="slack:T1:U1", say_when=True)
    error = refused.value
    assert error.status == 429 and error.retry_after is not None
    assert 55 <= error.retry_after <= 60
    assert error.message == (
        f"Too many questions at once: please ask again in {error.retry_after} seconds."
    )
    # Another member of the workspace is not over their own limit.
    intake.limit("slack", client="slack:T1", sender="slack:T1:U2", say_when=True)


def test_a_program_gets_the_same_refusal_as_before(settings):
    settings.ASKDOCS_RATE_SLACK_PER_USER = "1/m"
    intake.limit("slack", client="slack:T1", sender="slack:T1:U1")
    with pytest.raises(IntakeError) as refused:
        intake.limit("slack", client="slack:T1", sender="slack:T1:U1")
    assert (refused.value.message, refused.value.retry_after) == (
        ratelimits.SLACK_RATE_LIMITED, None,
    )  # fmt: skip


def test_a_long_wait_is_said_in_minutes():
    assert ratelimits.told_when("discord", 1) == (
        "Too many questions at once: please ask again in 1 second."
    )
    assert ratelimits.told_when("discord", 200).endswith("please ask again in 4 minutes.")


def test_a_member_is_told_once_a_minute():
    assert ratelimits.notice_due("slack", sender="slack:T1:U1")
    assert not ratelimits.notice_due("slack", sender="slack:T1:U1")
    assert ratelimits.notice_due("slack", sender="slack:T1:U2")
    assert ratelimits.notice_due("discord", sender="slack:T1:U1")
