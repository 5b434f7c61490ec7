"""Support answers from Discord and Intercom (their HTTP APIs faked on 127.0.0.1), scrubbed
of people before they are stored or embedded; un-approved answers leave the index."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingestion.models import Chunk, Source, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.conftest import retrieved
from tests.ingestion.fake_support_apis import (
    TOKEN,
    FakeApis,
    discord_message,
    intercom_conversation,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def apis() -> Iterator[FakeApis]:
    server = FakeApis()
    yield server
    server.stop()


def discord_source(project, apis, token: str = TOKEN) -> Source:  # noqa: ANN001
    return Source.objects.create(
        project=project,
        kind=Source.Kind.SUPPORT,
        name="discord",
        config={
            "provider": "discord",
            "token": token,
            "channel_id": "555",
            "approved_reaction": "✅",
            "api_base": f"{apis.url}/discord/api/v10",
        },
    )


def all_text(source: Source) -> str:
    chunks = Chunk.objects.filter(document__source=source)
    return "\n".join(f"{c.document.title}\n{c.heading_path}\n{c.text}" for c in chunks)


def test_discord_answers_marked_approved_are_indexed_without_people(apis, store, project) -> None:  # noqa: ANN001
    question = discord_message(
        100, "How do I export my timesheets to CSV? I'm Dana, dana@corp.example", author="dana_k"
    )
    apis.discord_messages = [
        discord_message(
            103,
            "@dana_k open Reports, pick the date range and press Export CSV. "
            "Call me on +1 (555) 123-4567 if it fails. Cheers, Chris",
            author="chris",
            replied_to=question,
            reactions=["✅"],
        ),
        discord_message(
            102, "I think it's in settings somewhere?", author="sam", replied_to=question
        ),
        question,
    ]
    source = discord_source(project, apis)
    run = source_sync(source=source)

    assert (run.status, run.added) == (SyncRun.Status.SUCCEEDED, 1)
    text = all_text(source)
    assert "press Export CSV" in text and "export my timesheets" in text
    for person in ("Dana", "dana", "Chris", "@", "555", "corp.example", "sam"):
        assert person not in text
    assert "settings somewhere" not in text  # not approved
    assert any("Export CSV" in t for t in retrieved(project, "export timesheets to csv"))

    # Un-approving (the reaction removed) takes the answer out of retrieval on the next sync.
    apis.discord_messages[0]["reactions"] = []
    run = source_sync(source=source)
    assert run.removed == 1
    assert not any("Export CSV" in t for t in retrieved(project, "export timesheets to csv"))


def test_discord_pages_through_long_channels(apis, store, project) -> None:  # noqa: ANN001
    apis.discord_messages = [
        discord_message(
            1000 - i, f"Approved answer number {i} about topic {i}.", author="x", reactions=["✅"]
        )
        for i in range(130)
    ]
    run = source_sync(source=discord_source(project, apis))
    assert run.added == 130
    assert sum("/messages" in r for r in apis.requests) == 2


def test_an_invalid_token_fails_the_run_clearly_and_others_keep_working(
    apis, store, project
) -> None:  # noqa: ANN001
    manual = Source.objects.create(
        project=project,
        kind=Source.Kind.MANUAL,
        name="notes",
        config={"title": "Office hours", "text": "Support answers calls from 9 to 5 on weekdays."},
    )
    bad = discord_source(project, apis, token="expired")  # noqa: S106
    run = source_sync(source=bad)
    bad.refresh_from_db()
    assert run.status == SyncRun.Status.FAILED
    assert "Discord rejected the token (HTTP 401)" in run.message
    assert bad.status == Source.Status.FAILED and "rejected the token" in bad.last_error
    assert source_sync(source=manual).status == SyncRun.Status.SUCCEEDED
    assert any("9 to 5" in t for t in retrieved(project, "When can I call support?"))


def test_intercom_tagged_conversations_become_answers(apis, store, project) -> None:  # noqa: ANN001
    apis.intercom_conversations = {
        "1": intercom_conversation(
            "1",
            question="Hi, this is Maria Lopez. Can two people share one licence?",
            customer="Maria Lopez",
            answers=[
                (
                    "Tom Baker",
                    "Hi Maria, each licence is for one named person; add a seat in Billing.",
                )
            ],
            tagged=True,
        ),
        "2": intercom_conversation(
            "2",
            question="Is there a dark mode?",
            customer="Kim",
            answers=[("Tom Baker", "Not yet.")],
            tagged=False,
        ),
    }
    source = Source.objects.create(
        project=project,
        kind=Source.Kind.SUPPORT,
        name="intercom",
        config={
            "provider": "intercom",
            "token": TOKEN,
            "tag": "approved",
            "api_base": f"{apis.url}/intercom",
        },
    )
    run = source_sync(source=source)
    assert (run.status, run.added) == (SyncRun.Status.SUCCEEDED, 1)
    text = all_text(source)
    assert "each licence is for one named person" in text
    for person in ("Maria", "Lopez", "Tom", "Baker"):
        assert person not in text

    apis.intercom_conversations["1"]["tags"]["tags"] = []  # un-tagged: no longer approved
    # The search now finds no answer where one is indexed: that could as well be a tag that
    # was renamed, so the sync removes nothing until someone confirms.
    held = source_sync(source=source)
    assert held.removals_held and held.removed == 0
    run = source_sync(source=source, confirm_removals=True)
    assert run.removed == 1
    assert not Chunk.objects.filter(document__source=source).exists()


def test_intercom_with_an_unknown_tag_fails_clearly(apis, store, project) -> None:  # noqa: ANN001
    source = Source.objects.create(
        project=project,
        kind=Source.Kind.SUPPORT,
        name="intercom",
        config={
            "provider": "intercom",
            "token": TOKEN,
            "tag": "gold",
            "api_base": f"{apis.url}/intercom",
        },
    )
    run = source_sync(source=source)
    assert run.status == SyncRun.Status.FAILED
    assert run.message == "Intercom has no tag named 'gold'"
